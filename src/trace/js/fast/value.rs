//! Values of the native evaluator, and JavaScript's rules for the operations it performs on
//! them. Where a rule needs more of JavaScript than is modelled here (a string turned into a
//! number, a fraction turned into a string, an object turned into a primitive), the operation
//! returns [`Deopt`] and the hook is run in boa instead.

use std::rc::Rc;

use boa_engine::JsValue;

/// A string: one pointer wide, so that a [`V`] is two words and travels in registers.
#[derive(Clone, Debug, Eq)]
pub struct Text(Rc<Box<str>>);

impl Text {
    #[inline]
    pub fn ptr_eq(a: &Text, b: &Text) -> bool {
        Rc::ptr_eq(&a.0, &b.0)
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Self {
        Text(Rc::new(Box::from(s)))
    }
}

impl From<String> for Text {
    fn from(s: String) -> Self {
        Text(Rc::new(s.into_boxed_str()))
    }
}

impl std::ops::Deref for Text {
    type Target = str;
    #[inline]
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for Text {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl PartialEq for Text {
    #[inline]
    fn eq(&self, other: &Text) -> bool {
        Text::ptr_eq(self, other) || *self.0 == *other.0
    }
}

impl std::hash::Hash for Text {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        (**self.0).hash(h)
    }
}

/// One `Rc` per distinct text among property names, string literals and opcode names, so
/// that name lookups mostly compare pointers.
#[derive(Default)]
pub struct Strings(std::collections::HashSet<Text>);

impl Strings {
    pub fn intern(&mut self, s: &str) -> Text {
        if let Some(r) = self.0.get(s) {
            return r.clone();
        }
        let r = Text::from(s);
        self.0.insert(r.clone());
        r
    }
}

/// The evaluator cannot decide this operation the way JavaScript would; boa must run the hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deopt;

pub type R<T> = Result<T, Deopt>;

#[derive(Debug)]
pub enum V {
    Undef,
    Null,
    Bool(bool),
    Num(f64),
    Str(Text),
    /// A plain object or array of the shadow heap.
    Obj(u32),
    /// A value held for boa (a function, a bigInt, a typed array…): it can be stored and moved,
    /// but any operation on it is left to boa.
    Opaque(JsValue),
}

impl Clone for V {
    #[inline]
    fn clone(&self) -> V {
        match self {
            V::Undef => V::Undef,
            V::Null => V::Null,
            V::Bool(b) => V::Bool(*b),
            V::Num(n) => V::Num(*n),
            V::Obj(id) => V::Obj(*id),
            V::Str(s) => V::Str(s.clone()),
            V::Opaque(v) => V::Opaque(v.clone()),
        }
    }
}

/// A property key: an array index (JavaScript's canonical numeric strings below 2^32 − 1) or a
/// name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    Idx(u32),
    Name(Text),
}

impl Key {
    #[inline]
    pub fn from_name(s: Text) -> Key {
        match canonical_index(&s) {
            Some(i) => Key::Idx(i),
            None => Key::Name(s),
        }
    }

    /// The key a number becomes (`ToString`), when its text is modelled.
    #[inline]
    pub fn from_num(n: f64) -> Option<Key> {
        if (0.0..4_294_967_295.0).contains(&n) && n.fract() == 0.0 {
            return Some(Key::Idx(n as u32));
        }
        num_to_string(n).map(|s| Key::Name(Text::from(s)))
    }

    #[inline]
    pub fn name(&self) -> Option<&str> {
        match self {
            Key::Name(s) => Some(s),
            Key::Idx(_) => None,
        }
    }
}

fn canonical_index(s: &str) -> Option<u32> {
    if s.is_empty() || s.len() > 10 || (s.len() > 1 && s.starts_with('0')) {
        return None;
    }
    if !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = s.parse().ok()?;
    (n < 4_294_967_295).then_some(n as u32)
}

/// JavaScript's `Number::toString` for the values whose text is plain: integers below 1e21 and
/// the specials. Fractions and large numbers (exponent notation) are left to boa.
pub fn num_to_string(n: f64) -> Option<String> {
    if n.is_nan() {
        return Some("NaN".into());
    }
    if n.is_infinite() {
        return Some(if n > 0.0 { "Infinity" } else { "-Infinity" }.into());
    }
    if n == 0.0 {
        return Some("0".into());
    }
    (n.fract() == 0.0 && n.abs() < 1e21).then(|| format!("{}", n as i128))
}

impl V {
    #[inline]
    pub fn truthy(&self) -> bool {
        match self {
            V::Undef | V::Null => false,
            V::Bool(b) => *b,
            V::Num(n) => *n != 0.0 && !n.is_nan(),
            V::Str(s) => !s.is_empty(),
            V::Obj(_) => true,
            V::Opaque(v) => v.to_boolean(),
        }
    }

    /// `ToNumber` for the primitives whose conversion is trivial.
    #[inline]
    pub fn to_num(&self) -> R<f64> {
        match self {
            V::Num(n) => Ok(*n),
            V::Undef => Ok(f64::NAN),
            V::Null => Ok(0.0),
            V::Bool(b) => Ok(f64::from(u8::from(*b))),
            _ => Err(Deopt),
        }
    }

    /// `ToString` for primitives.
    pub fn to_str(&self) -> R<Text> {
        Ok(match self {
            V::Str(s) => s.clone(),
            V::Undef => Text::from("undefined"),
            V::Null => Text::from("null"),
            V::Bool(b) => Text::from(if *b { "true" } else { "false" }),
            V::Num(n) => Text::from(num_to_string(*n).ok_or(Deopt)?),
            _ => return Err(Deopt),
        })
    }

    /// The property key this value becomes.
    #[inline]
    pub fn to_key(&self) -> R<Key> {
        match self {
            V::Num(n) => Key::from_num(*n).ok_or(Deopt),
            V::Str(s) => Ok(Key::from_name(s.clone())),
            V::Undef | V::Null | V::Bool(_) => Ok(Key::from_name(self.to_str()?)),
            _ => Err(Deopt),
        }
    }

    pub fn type_of(&self) -> &'static str {
        match self {
            V::Undef => "undefined",
            V::Null | V::Obj(_) => "object",
            V::Bool(_) => "boolean",
            V::Num(_) => "number",
            V::Str(_) => "string",
            V::Opaque(v) => v.type_of(),
        }
    }

    #[inline]
    pub fn strict_eq(&self, other: &V) -> bool {
        match (self, other) {
            (V::Undef, V::Undef) | (V::Null, V::Null) => true,
            (V::Bool(a), V::Bool(b)) => a == b,
            (V::Num(a), V::Num(b)) => a == b,
            (V::Str(a), V::Str(b)) => a == b,
            (V::Obj(a), V::Obj(b)) => a == b,
            (V::Opaque(a), V::Opaque(b)) => a.strict_equals(b),
            _ => false,
        }
    }

    /// `==`, where no conversion with effects or unmodelled text is involved.
    #[inline]
    pub fn loose_eq(&self, other: &V) -> R<bool> {
        let nullish = |v: &V| matches!(v, V::Undef | V::Null);
        match (self, other) {
            (V::Opaque(_), _) | (_, V::Opaque(_)) => Err(Deopt),
            (a, b) if nullish(a) || nullish(b) => Ok(nullish(a) && nullish(b)),
            (V::Num(_), V::Num(_))
            | (V::Str(_), V::Str(_))
            | (V::Bool(_), V::Bool(_))
            | (V::Obj(_), V::Obj(_)) => Ok(self.strict_eq(other)),
            _ => Err(Deopt),
        }
    }
}

/// `ToInt32`.
#[inline]
pub fn to_i32(n: f64) -> i32 {
    if !n.is_finite() {
        return 0;
    }
    let m = n.trunc().rem_euclid(4_294_967_296.0);
    m as u32 as i32
}

/// `<`-family comparison; `None` when undefined (a NaN is involved).
#[inline]
pub fn compare(a: &V, b: &V) -> R<Option<std::cmp::Ordering>> {
    if let (V::Str(x), V::Str(y)) = (a, b) {
        // Code-unit order equals byte order for ASCII; other text is left to boa.
        if !x.is_ascii() || !y.is_ascii() {
            return Err(Deopt);
        }
        return Ok(Some(x.as_bytes().cmp(y.as_bytes())));
    }
    let (x, y) = (a.to_num()?, b.to_num()?);
    Ok(x.partial_cmp(&y))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_numbers_follow_javascript() {
        assert_eq!(Key::from_name(Text::from("12")), Key::Idx(12));
        assert_eq!(
            Key::from_name(Text::from("012")),
            Key::Name(Text::from("012"))
        );
        assert_eq!(
            Key::from_name(Text::from("4294967295")),
            Key::Name(Text::from("4294967295"))
        );
        assert_eq!(Key::from_num(-1.0), Some(Key::Name(Text::from("-1"))));
        assert_eq!(Key::from_num(1.5), None);
        assert_eq!(num_to_string(1e20).unwrap(), "100000000000000000000");
        assert_eq!(num_to_string(1e21), None);
        assert_eq!(num_to_string(-0.0).unwrap(), "0");
        assert_eq!(to_i32(4_294_967_297.0), 1);
        assert_eq!(to_i32(-1.0), -1);
        assert_eq!(to_i32(2_147_483_648.0), i32::MIN);
    }
}
