//! Values of the native evaluator, and JavaScript's rules for the operations it performs on
//! them. Where a rule needs more of JavaScript than is modelled here (a string turned into a
//! number, a fraction turned into a string, an object turned into a primitive), the operation
//! returns [`Deopt`] and the hook is run in boa instead.

use std::rc::Rc;

use alloy_primitives::U256;
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

/// Strings and boa values that [`V`] refers to by number, so that a `V` is a plain two-word
/// value (tag and payload) that functions return in registers.
///
/// Strings are interned (one `Text` per distinct text among names, literals and opcode names,
/// so name lookups mostly compare pointers); strings a hook makes (concatenation, number
/// text) are appended and dropped again when the hook stored none of them.
#[derive(Clone, Default, Debug)]
pub struct Tables {
    strs: Vec<Text>,
    /// Whether each string is in `index` (names, literals, opcode names and the few texts
    /// getters give are; strings a hook builds are not, which spares hashing every one).
    indexed: Vec<bool>,
    index: rustc_hash::FxHashMap<Text, u64>,
    /// Bytes held by `strs`.
    bytes: usize,
    opaque: Vec<Held>,
    /// The `bigInt` values (stack words, call values) the running hook holds: never stored in
    /// an object, so they are dropped when the hook ends.
    bigs: Vec<U256>,
    /// The byte buffers (`Uint8Array`s: an address, a storage word) the running hook holds,
    /// like `bigs` never stored.
    bufs: Vec<Vec<u8>>,
}

/// What a [`V::Opaque`] stands for.
#[derive(Clone, Debug)]
pub enum Held {
    Js(JsValue),
    /// The object literal's function-valued property number `n` (in literal order), before
    /// boa made the function: a tracer evaluated without boa ([`super::Fast::detached`]).
    Literal(u16),
}

/// Strings beyond this many, or this many bytes, are left to boa, whose collector frees the
/// ones no longer reachable (`this.s += x` on every step would otherwise keep every prefix).
const STR_MAX: usize = 1 << 20;
const STR_BYTES_MAX: usize = 64 << 20;

impl Tables {
    /// The shared `Text` for `s`.
    pub fn intern(&mut self, s: &str) -> Text {
        let id = self.intern_id(s);
        self.strs[id as usize].clone()
    }

    pub fn intern_id(&mut self, s: &str) -> u64 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let t = Text::from(s);
        self.bytes += t.len();
        self.strs.push(t.clone());
        self.indexed.push(true);
        let i = (self.strs.len() - 1) as u64;
        self.index.insert(t, i);
        i
    }

    /// A string value for `t`, a string a hook built (not interned: equality compares text).
    #[inline]
    pub fn str_value(&mut self, t: &Text) -> R<V> {
        if self.strs.len() >= STR_MAX || self.bytes + t.len() > STR_BYTES_MAX {
            return Err(Deopt);
        }
        self.bytes += t.len();
        self.strs.push(t.clone());
        self.indexed.push(false);
        Ok(V::Str((self.strs.len() - 1) as u64))
    }

    #[inline]
    pub fn text(&self, id: u64) -> &Text {
        &self.strs[id as usize]
    }

    pub fn opaque(&mut self, v: JsValue) -> V {
        self.held(Held::Js(v))
    }

    pub fn held(&mut self, h: Held) -> V {
        self.opaque.push(h);
        V::Opaque((self.opaque.len() - 1) as u64)
    }

    pub fn js(&self, id: u64) -> &Held {
        &self.opaque[id as usize]
    }

    /// Gives each literal function its boa function (once boa evaluated the literal).
    pub fn bind_literals(&mut self, f: impl Fn(u16) -> Option<JsValue>) -> Option<()> {
        for h in &mut self.opaque {
            if let Held::Literal(n) = h {
                *h = Held::Js(f(*n)?);
            }
        }
        Some(())
    }

    /// A new `bigInt` object holding `v`.
    pub fn big(&mut self, v: U256) -> V {
        self.bigs.push(v);
        V::Big((self.bigs.len() - 1) as u64)
    }

    #[inline]
    pub fn big_value(&self, id: u64) -> U256 {
        self.bigs[id as usize]
    }

    /// A new buffer holding `bytes`.
    pub fn buf(&mut self, bytes: Vec<u8>) -> V {
        self.bufs.push(bytes);
        V::Buf((self.bufs.len() - 1) as u64)
    }

    #[inline]
    pub fn buf_bytes(&self, id: u64) -> &[u8] {
        &self.bufs[id as usize]
    }

    /// Drops the running hook's `bigInt` values and buffers.
    #[inline]
    pub fn clear_hook_values(&mut self) {
        self.bigs.clear();
        self.bufs.clear();
    }

    pub fn strs_len(&self) -> usize {
        self.strs.len()
    }

    /// Drops the strings from `mark` on.
    /// Keeps, of the strings from `base` on, those `live` marks, in order (renumbered from
    /// `base`: the caller rewrote its references).
    pub fn keep(&mut self, base: usize, live: &[bool]) {
        let mut to = base;
        for (k, &l) in live.iter().enumerate() {
            let from = base + k;
            if l {
                if to != from {
                    self.strs.swap(to, from);
                    self.indexed.swap(to, from);
                    if self.indexed[to] {
                        self.index.insert(self.strs[to].clone(), to as u64);
                    }
                }
                to += 1;
            }
        }
        self.truncate(to);
    }

    pub fn truncate(&mut self, mark: usize) {
        for (t, indexed) in self.strs.drain(mark..).zip(self.indexed.drain(mark..)) {
            self.bytes -= t.len();
            if indexed {
                self.index.remove(&*t);
            }
        }
    }

    #[inline]
    pub fn truthy(&self, v: V) -> bool {
        match v {
            V::Undef | V::Null | V::False => false,
            V::True | V::Obj(_) | V::Big(_) | V::Buf(_) => true,
            V::Num(b) => {
                let n = f64::from_bits(b);
                n != 0.0 && !n.is_nan()
            }
            V::Str(s) => !self.text(s).is_empty(),
            V::Opaque(o) => match self.js(o) {
                Held::Js(v) => v.to_boolean(),
                Held::Literal(_) => true,
            },
        }
    }

    /// `ToString` for primitives.
    pub fn to_str(&self, v: V) -> R<Text> {
        Ok(match v {
            V::Str(s) => self.text(s).clone(),
            V::Undef => Text::from("undefined"),
            V::Null => Text::from("null"),
            V::True => Text::from("true"),
            V::False => Text::from("false"),
            V::Num(n) => Text::from(num_to_string(f64::from_bits(n)).ok_or(Deopt)?),
            _ => return Err(Deopt),
        })
    }

    /// The property key this value becomes.
    #[inline]
    pub fn to_key(&self, v: V) -> R<Key> {
        match v {
            V::Num(n) => Key::from_num(f64::from_bits(n)).ok_or(Deopt),
            V::Str(s) => Ok(Key::from_name(self.text(s).clone())),
            V::Undef | V::Null | V::True | V::False => Ok(Key::from_name(self.to_str(v)?)),
            _ => Err(Deopt),
        }
    }

    pub fn type_of(&self, v: V) -> &'static str {
        match v {
            V::Undef => "undefined",
            V::Null | V::Obj(_) | V::Big(_) | V::Buf(_) => "object",
            V::True | V::False => "boolean",
            V::Num(_) => "number",
            V::Str(_) => "string",
            V::Opaque(o) => match self.js(o) {
                Held::Js(v) => v.type_of(),
                Held::Literal(_) => "function",
            },
        }
    }

    #[inline]
    pub fn strict_eq(&self, a: V, b: V) -> bool {
        match (a, b) {
            (V::Num(x), V::Num(y)) => f64::from_bits(x) == f64::from_bits(y),
            (V::Str(x), V::Str(y)) => x == y || self.text(x) == self.text(y),
            (V::Opaque(x), V::Opaque(y)) => match (self.js(x), self.js(y)) {
                (Held::Js(a), Held::Js(b)) => a.strict_equals(b),
                (Held::Literal(a), Held::Literal(b)) => a == b,
                _ => false,
            },
            (a, b) => a == b,
        }
    }

    /// `==`, where no conversion with effects or unmodelled text is involved.
    #[inline]
    pub fn loose_eq(&self, a: V, b: V) -> R<bool> {
        let nullish = |v: V| matches!(v, V::Undef | V::Null);
        let boolean = |v: V| matches!(v, V::True | V::False);
        match (a, b) {
            (V::Opaque(_), _) | (_, V::Opaque(_)) => Err(Deopt),
            (a, b) if nullish(a) || nullish(b) => Ok(nullish(a) && nullish(b)),
            // Two objects are equal when they are the same one; an object against a primitive
            // converts it (`valueOf`), which is left to boa.
            (V::Big(x), V::Big(y)) => Ok(x == y),
            (V::Buf(x), V::Buf(y)) => Ok(x == y),
            (V::Big(_) | V::Buf(_), V::Obj(_) | V::Big(_) | V::Buf(_))
            | (V::Obj(_), V::Big(_) | V::Buf(_)) => Ok(false),
            (V::Big(_) | V::Buf(_), _) | (_, V::Big(_) | V::Buf(_)) => Err(Deopt),
            (V::Num(_), V::Num(_)) | (V::Str(_), V::Str(_)) | (V::Obj(_), V::Obj(_)) => {
                Ok(self.strict_eq(a, b))
            }
            (a, b) if boolean(a) && boolean(b) => Ok(a == b),
            _ => Err(Deopt),
        }
    }

    /// `<`-family comparison; `None` when undefined (a NaN is involved).
    #[inline]
    pub fn compare(&self, a: V, b: V) -> R<Option<std::cmp::Ordering>> {
        if let (V::Str(x), V::Str(y)) = (a, b) {
            let (x, y) = (self.text(x), self.text(y));
            // Code-unit order equals byte order for ASCII; other text is left to boa.
            if !x.is_ascii() || !y.is_ascii() {
                return Err(Deopt);
            }
            return Ok(Some(x.as_bytes().cmp(y.as_bytes())));
        }
        let (x, y) = (a.to_num()?, b.to_num()?);
        Ok(x.partial_cmp(&y))
    }
}

/// The evaluator cannot decide this operation the way JavaScript would; boa must run the hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deopt;

pub type R<T> = Result<T, Deopt>;

/// A JavaScript value: numbers as their bits, strings and boa values as numbers into
/// [`Tables`], objects as numbers into the shadow heap. Two words, `Copy`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum V {
    Undef,
    Null,
    False,
    True,
    Num(u64),
    Str(u64),
    /// A plain object or array of the shadow heap.
    Obj(u64),
    /// A value held for boa (a function, a bigInt, a typed array…): it can be stored and moved,
    /// but any operation on it is left to boa.
    Opaque(u64),
    /// A `bigInt` object the running hook made (`log.stack.peek(0)`, `frame.getValue()`,
    /// `bigInt(n)`), by number into [`Tables`]; storing one into an object is left to boa.
    Big(u64),
    /// A byte buffer the running hook made (`log.contract.getAddress()`, `toWord(…)`,
    /// `db.getState(…)`), by number into [`Tables`]; storing one is left to boa.
    Buf(u64),
}

impl V {
    #[inline]
    pub fn num(n: f64) -> V {
        V::Num(n.to_bits())
    }

    #[inline]
    pub fn bool(b: bool) -> V {
        if b {
            V::True
        } else {
            V::False
        }
    }

    /// `ToNumber` for the primitives whose conversion is trivial.
    #[inline]
    pub fn to_num(self) -> R<f64> {
        match self {
            V::Num(n) => Ok(f64::from_bits(n)),
            V::Undef => Ok(f64::NAN),
            V::Null | V::False => Ok(0.0),
            V::True => Ok(1.0),
            _ => Err(Deopt),
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
///
/// Past 2^53 an integer's text is not its exact value: JavaScript writes the fewest digits that
/// read back as the same number, then zeros (`2 ** 60` is `"1152921504606847000"`), which is
/// what Rust's `Display` for `f64` writes too.
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
    (n.fract() == 0.0 && n.abs() < 1e21).then(|| format!("{n}"))
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
        // The fewest digits that read back, as JavaScript writes them (boa agrees: see
        // detached_tests).
        assert_eq!(num_to_string(2f64.powi(60)).unwrap(), "1152921504606847000");
        assert_eq!(
            num_to_string(-(2f64.powi(60))).unwrap(),
            "-1152921504606847000"
        );
        assert_eq!(
            num_to_string(123_456_789_012_345_680_000.0).unwrap(),
            "123456789012345680000"
        );
        assert_eq!(
            num_to_string(9_007_199_254_740_993.0).unwrap(),
            "9007199254740992"
        );
        assert_eq!(num_to_string(-42.0).unwrap(), "-42");
        assert_eq!(num_to_string(1e21), None);
        assert_eq!(num_to_string(-0.0).unwrap(), "0");
        assert_eq!(to_i32(4_294_967_297.0), 1);
        assert_eq!(to_i32(-1.0), -1);
        assert_eq!(to_i32(2_147_483_648.0), i32::MIN);
    }
}
