//! Limits on what could make one step allocate gigabytes, run unbounded or recurse past the
//! stack, which no timeout can interrupt: the depth of a `result` value before it is
//! stringified ([`stringify_result`]), and `String.prototype.repeat`/`padStart`/`padEnd` and
//! `Array.prototype.join` refuse to build a string past [`MAX_BUILT_STRING`] characters, and
//! `RegExp.prototype.exec` (which `test`, `match`, `replace`, `split` and `search` call)
//! refuses a pattern that repeats a group that itself repeats on a string longer than 32
//! characters (catastrophic backtracking).
//!
//! Each built-in is replaced by a native wrapper that checks, then calls the original with the
//! same `this` and arguments; the wrapper has the built-in's name and the attributes of a
//! built-in method (writable, configurable, not enumerable). Installed natively, without
//! parsing any JavaScript, so a tracer's context costs less to build.

use boa_engine::object::{FunctionObjectBuilder, JsObject};
use boa_engine::property::PropertyDescriptor;
use boa_engine::value::PreferredType;
use boa_engine::{
    js_string, Context, JsError, JsNativeError, JsResult, JsString, JsValue, NativeFunction,
};

/// The longest string the built-ins that build one from a count may make (64 Mi characters):
/// `'x'.repeat(2**31-1)`, `padStart`/`padEnd` and `join` over a huge array would otherwise
/// allocate gigabytes in one step, which no timeout can interrupt and an allocation failure
/// turns into a process abort.
pub const MAX_BUILT_STRING: usize = 1 << 26;

/// Longest subject a regular expression with nested repetition may run on.
const MAX_NESTED_SUBJECT: usize = 32;

/// What a wrapper checks before the original runs.
#[derive(Clone, Copy)]
enum Check {
    Repeat,
    Pad,
    Join,
    Exec,
}

fn too_long() -> JsError {
    JsNativeError::range()
        .with_message(format!(
            "string longer than {MAX_BUILT_STRING} characters (tracer memory limit)"
        ))
        .into()
}

/// JavaScript's `String(v)`: like ToString, except that a symbol gives its description.
fn string_of(v: &JsValue, ctx: &mut Context) -> JsResult<JsString> {
    match v.as_symbol() {
        Some(s) => Ok(s.descriptive_string()),
        None => v.to_string(ctx),
    }
}

/// JavaScript's `Number(v)`: like ToNumber, except that a bigint converts.
fn number_of(v: &JsValue, ctx: &mut Context) -> JsResult<f64> {
    v.to_numeric_number(ctx)
}

fn arg(args: &[JsValue], i: usize) -> JsValue {
    args.get(i).cloned().unwrap_or_default()
}

/// Whether a pattern's source repeats a group that itself repeats (`(a+)+`, `([a-z]*)*`,
/// `(x{2,})+`), read over UTF-16 units as `String.prototype.charAt` gives them.
pub fn nested_repetition(src: &[u16]) -> bool {
    let at = |j: usize| src.get(j).copied();
    let is = |j: usize, c: char| at(j) == Some(c as u16);
    // A quantifier that repeats without bound starts at `j`: `*`, `+`, `{n,` or `{n}`.
    let rep = |j: usize| -> bool {
        if is(j, '*') || is(j, '+') {
            return true;
        }
        if !is(j, '{') {
            return false;
        }
        let mut k = j + 1;
        let mut digits = false;
        while at(k).is_some_and(|c| (b'0' as u16..=b'9' as u16).contains(&c)) {
            k += 1;
            digits = true;
        }
        digits && (is(k, ',') || is(k, '}'))
    };
    let mut stack: Vec<bool> = Vec::new();
    let (mut esc, mut class) = (false, false);
    let mark = |stack: &mut Vec<bool>| {
        if let Some(top) = stack.last_mut() {
            *top = true;
        }
    };
    for (i, &c) in src.iter().enumerate() {
        if esc {
            esc = false;
            if rep(i + 1) {
                mark(&mut stack);
            }
            continue;
        }
        if c == b'\\' as u16 {
            esc = true;
            continue;
        }
        if class {
            if c == b']' as u16 {
                class = false;
                if rep(i + 1) {
                    mark(&mut stack);
                }
            }
            continue;
        }
        if c == b'[' as u16 {
            class = true;
            continue;
        }
        if c == b'(' as u16 {
            stack.push(false);
            continue;
        }
        if c == b')' as u16 {
            let inner = stack.pop().unwrap_or(false);
            if inner && rep(i + 1) {
                return true;
            }
            if inner || rep(i + 1) {
                mark(&mut stack);
            }
            continue;
        }
        if rep(i + 1) {
            mark(&mut stack);
        }
    }
    false
}

fn check(kind: Check, this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<()> {
    let max = MAX_BUILT_STRING as f64;
    match kind {
        Check::Repeat => {
            let len = string_of(this, ctx)?.len() as f64;
            if len * number_of(&arg(args, 0), ctx)? > max {
                return Err(too_long());
            }
        }
        Check::Pad => {
            if number_of(&arg(args, 0), ctx)? > max {
                return Err(too_long());
            }
        }
        Check::Join => {
            let o = this.to_object(ctx)?;
            let n = o.get(js_string!("length"), ctx)?.to_u32(ctx)?;
            let sep = arg(args, 0);
            let s = if sep.is_undefined() {
                1
            } else {
                string_of(&sep, ctx)?.len()
            };
            let (n_f, s_f) = (f64::from(n), s as f64);
            if n_f > max || n_f * s_f > max {
                return Err(too_long());
            }
            let mut total = 0f64;
            for i in 0..n {
                if let Some(e) = o.get(i, ctx)?.as_string() {
                    total += (e.len() + s) as f64;
                    if total > max {
                        return Err(too_long());
                    }
                }
            }
        }
        Check::Exec => {
            let source = match this.as_object() {
                Some(o) => o.get(js_string!("source"), ctx)?,
                None => this.to_object(ctx)?.get(js_string!("source"), ctx)?,
            };
            let source = string_of(&source, ctx)?;
            if !nested_repetition(&source.iter().collect::<Vec<u16>>()) {
                return Ok(());
            }
            let subject = string_of(&arg(args, 0), ctx)?.len();
            if subject > MAX_NESTED_SUBJECT {
                let shown = this.to_primitive(ctx, PreferredType::Default)?;
                let shown = string_of(&shown, ctx)?.to_std_string_escaped();
                return Err(JsNativeError::range()
                    .with_message(format!(
                        "regular expression {shown} repeats a group that itself repeats: on a \
                         string of {subject} characters its backtracking could run unbounded, \
                         which the tracer timeout cannot interrupt (limit: \
                         {MAX_NESTED_SUBJECT} characters)"
                    ))
                    .into());
            }
        }
    }
    Ok(())
}

/// Replaces `o[name]` by a wrapper that runs `kind`'s check, then the original.
fn wrap(o: &JsObject, name: &'static str, kind: Check, ctx: &mut Context) -> JsResult<()> {
    let original = o
        .get(js_string!(name), ctx)?
        .as_callable()
        .ok_or_else(|| JsNativeError::typ().with_message(format!("{name} is not a function")))?;
    let f = NativeFunction::from_copy_closure_with_captures(
        move |this, args, original: &JsObject, ctx| {
            check(kind, this, args, ctx)?;
            original.call(this, args, ctx)
        },
        original,
    );
    let wrapper = FunctionObjectBuilder::new(ctx.realm(), f)
        .name(js_string!(name))
        .length(0)
        .build();
    o.define_property_or_throw(
        js_string!(name),
        PropertyDescriptor::builder()
            .value(wrapper)
            .writable(true)
            .enumerable(false)
            .configurable(true),
        ctx,
    )?;
    Ok(())
}

/// Installs the wrappers in `ctx`'s realm.
pub fn install(ctx: &mut Context) -> JsResult<()> {
    let string = ctx.intrinsics().constructors().string().prototype();
    let array = ctx.intrinsics().constructors().array().prototype();
    let regexp = ctx.intrinsics().constructors().regexp().prototype();
    wrap(&string, "repeat", Check::Repeat, ctx)?;
    wrap(&string, "padStart", Check::Pad, ctx)?;
    wrap(&string, "padEnd", Check::Pad, ctx)?;
    wrap(&array, "join", Check::Join, ctx)?;
    wrap(&regexp, "exec", Check::Exec, ctx)?;
    Ok(())
}

/// The deepest `result` value that is serialised: `JSON.stringify` recurses once per level.
pub const MAX_RESULT_DEPTH: usize = 512;

/// `JSON.stringify(v)` of a tracer's `result`, after an iterative walk (an explicit stack, each
/// object once) has checked that it nests at most [`MAX_RESULT_DEPTH`] levels, since
/// `JSON.stringify` recurses once per level. The walk reads what `JSON.stringify` will read,
/// in the same way: `Object.keys` of each object that is not a function, each value got.
pub fn stringify_result(v: &JsValue, ctx: &mut Context) -> JsResult<JsValue> {
    let object = ctx.intrinsics().constructors().object().constructor();
    let keys = object.get(js_string!("keys"), ctx)?;
    let keys = keys
        .as_callable()
        .ok_or_else(|| JsNativeError::typ().with_message("Object.keys is not a function"))?;
    let mut stack = vec![(v.clone(), 1usize)];
    let mut seen = std::collections::HashSet::new();
    while let Some((x, depth)) = stack.pop() {
        let Some(o) = x.as_object() else {
            continue;
        };
        if o.is_callable() || !seen.insert(o.clone()) {
            continue;
        }
        if depth > MAX_RESULT_DEPTH {
            return Err(JsNativeError::range()
                .with_message(format!(
                    "tracer result nests more than {MAX_RESULT_DEPTH} levels"
                ))
                .into());
        }
        let names = keys.call(&JsValue::undefined(), std::slice::from_ref(&x), ctx)?;
        let names = names
            .as_object()
            .ok_or_else(|| JsNativeError::typ().with_message("Object.keys gave no array"))?;
        let n = names.get(js_string!("length"), ctx)?.to_length(ctx)?;
        for i in 0..n {
            let key = names.get(i, ctx)?.to_property_key(ctx)?;
            stack.push((o.get(key, ctx)?, depth + 1));
        }
    }
    let json = ctx.global_object().get(js_string!("JSON"), ctx)?;
    let stringify = json
        .as_object()
        .map(|j| j.get(js_string!("stringify"), ctx))
        .transpose()?
        .and_then(|f| f.as_callable())
        .ok_or_else(|| JsNativeError::typ().with_message("JSON.stringify is not a function"))?;
    stringify.call(&json, std::slice::from_ref(v), ctx)
}

#[cfg(test)]
mod tests {
    use super::nested_repetition;

    fn nested(s: &str) -> bool {
        nested_repetition(&s.encode_utf16().collect::<Vec<u16>>())
    }

    #[test]
    fn nested_repetition_is_found_as_the_script_version_found_it() {
        // `{n}` counts as repeating, as it did there.
        for risky in [
            "(a+)+$",
            "([a-z]*)*$",
            "(x{2,})+",
            "((ab)+c)*",
            "(\\d+)*",
            "([ab]+)+",
            "(a{2})+",
        ] {
            assert!(nested(risky), "{risky}");
        }
        for plain in ["a+b*", "(ab)+", "(a|b)*c", "[(a+)]+", "\\(a+\\)+", "(a)?"] {
            assert!(!nested(plain), "{plain}");
        }
    }
}
