//! BigInteger.js's API as native functions over JavaScript's `BigInt` (see the module docs):
//! each is the prelude it replaces, line for line, so that a script sees the same values,
//! errors and property names. A `BigInteger` is an ordinary object with the shared prototype
//! and its native value in `value`.

use boa_engine::builtins::object::OrdinaryObject;
use boa_engine::object::{FunctionObjectBuilder, JsObject};
use boa_engine::property::PropertyDescriptor;
use boa_engine::{
    js_string, Context, JsBigInt, JsError, JsNativeError, JsResult, JsString, JsValue,
    NativeFunction,
};

/// Results past a million bits (a memory and time bomb: `bigInt(3).pow(5e7)`) are refused.
const MAX_BITS: u64 = 1_048_576;

type Native = fn(&JsValue, &[JsValue], &mut Context) -> JsResult<JsValue>;

fn arg(args: &[JsValue], i: usize) -> JsValue {
    args.get(i).cloned().unwrap_or_default()
}

fn error(msg: String) -> JsError {
    JsNativeError::error().with_message(msg).into()
}

/// `"Invalid integer: " + v`.
fn invalid(v: &JsValue, ctx: &mut Context) -> JsError {
    match v.to_string(ctx) {
        Ok(s) => error(format!("Invalid integer: {}", s.to_std_string_escaped())),
        Err(e) => e,
    }
}

fn too_big() -> JsError {
    JsNativeError::range()
        .with_message(format!("bigInt result would exceed {MAX_BITS} bits"))
        .into()
}

/// The prototype, from the context's data (set before any method can run).
fn proto(ctx: &Context) -> JsResult<JsObject> {
    super::proto(ctx).ok_or_else(|| {
        JsNativeError::error()
            .with_message("bigInt is not initialised")
            .into()
    })
}

/// `new BigInteger(v)`.
pub(super) fn big(v: JsBigInt, ctx: &mut Context) -> JsResult<JsValue> {
    let obj = JsObject::from_proto_and_data(proto(ctx)?, OrdinaryObject);
    obj.create_data_property_or_throw(js_string!("value"), v, ctx)?;
    Ok(obj.into())
}

/// `v instanceof BigInteger`: the prototype on `v`'s chain.
pub(super) fn is_instance(v: &JsValue, ctx: &mut Context) -> JsResult<bool> {
    let Some(obj) = v.as_object() else {
        return Ok(false);
    };
    let p = proto(ctx)?;
    let mut at = obj.prototype();
    while let Some(o) = at {
        if JsObject::equals(&o, &p) {
            return Ok(true);
        }
        at = o.prototype();
    }
    Ok(false)
}

/// `parse(v, base)`.
fn parse(v: &JsValue, base: &JsValue, ctx: &mut Context) -> JsResult<JsBigInt> {
    if is_instance(v, ctx)? {
        let value = v
            .as_object()
            .map(|o| o.get(js_string!("value"), ctx))
            .transpose()?
            .unwrap_or_default();
        return value.as_bigint().ok_or_else(mixed);
    }
    if let Some(b) = v.as_bigint() {
        return Ok(b);
    }
    if let Some(n) = v.as_number() {
        if !n.is_finite() {
            return Err(invalid(v, ctx));
        }
        return Ok(JsBigInt::try_from(n.trunc()).unwrap_or_else(|_| JsBigInt::zero()));
    }
    if let Some(s) = v.as_string() {
        return parse_string(v, &s, base, ctx);
    }
    if v.is_undefined() {
        return Ok(JsBigInt::zero());
    }
    Err(invalid(v, ctx))
}

/// JavaScript's TypeError for arithmetic on a BigInt and another type.
fn mixed() -> JsError {
    JsNativeError::typ()
        .with_message("cannot mix BigInt and other types, use explicit conversions")
        .into()
}

fn parse_string(
    v: &JsValue,
    s: &JsString,
    base: &JsValue,
    ctx: &mut Context,
) -> JsResult<JsBigInt> {
    let mut s = s.trim().to_std_string_escaped();
    let neg = s.starts_with('-');
    if neg || s.starts_with('+') {
        s.remove(0);
    }
    let b = if base.is_undefined() {
        10.0
    } else {
        base.to_number(ctx)?
    };
    if s.is_empty() {
        return Err(invalid(v, ctx));
    }
    if b == 16.0 && (s.starts_with("0x") || s.starts_with("0X")) {
        s.drain(..2);
    }
    let dec = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    let hex = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_hexdigit());
    let prefixed = s.len() > 2 && (s.starts_with("0x") || s.starts_with("0X")) && hex(&s[2..]);
    let r = if b == 10.0 && dec(&s) {
        JsBigInt::from_string(&s)
    } else if b == 10.0 && prefixed {
        JsBigInt::from_string_radix(&s[2..], 16)
    } else if b == 16.0 && hex(&s) {
        JsBigInt::from_string_radix(&s, 16)
    } else {
        Some(digits(&s.to_lowercase(), b)?)
    };
    let r = r.ok_or_else(|| invalid(v, ctx))?;
    Ok(if neg { JsBigInt::neg(&r) } else { r })
}

/// `digits(s, b)`: `BigInt(b)` (a RangeError for a base that is not an integer), then each
/// UTF-16 unit's `parseInt(c, b)` (radix 0 reads as 10; outside 2–36, or not a digit: NaN).
fn digits(s: &str, b: f64) -> JsResult<JsBigInt> {
    let big_b = JsBigInt::try_from(b).map_err(|_| {
        JsError::from(JsNativeError::range().with_message(format!(
            "cannot convert {} to a BigInt",
            JsValue::from(b).display()
        )))
    })?;
    let radix = match to_int32(b) {
        0 => 10,
        r => r,
    };
    let mut r = JsBigInt::zero();
    for unit in s.encode_utf16() {
        let d = char::from_u32(u32::from(unit))
            .filter(|_| (2..=36).contains(&radix))
            .and_then(|c| c.to_digit(radix as u32));
        let Some(d) = d else {
            return Err(error(format!("Invalid integer: {s}")));
        };
        r = JsBigInt::add(&JsBigInt::mul(&r, &big_b), &JsBigInt::from(d));
    }
    Ok(r)
}

/// ECMAScript's ToInt32 of a Number.
fn to_int32(n: f64) -> i32 {
    if !n.is_finite() {
        return 0;
    }
    let m = n.trunc().rem_euclid(4_294_967_296.0);
    (if m >= 2_147_483_648.0 {
        m - 4_294_967_296.0
    } else {
        m
    }) as i32
}

/// `this.value`, a BigInt (`this` read as a sloppy-mode function reads it).
fn value(this: &JsValue, ctx: &mut Context) -> JsResult<JsBigInt> {
    let obj = match this {
        v if v.is_null_or_undefined() => ctx.global_object(),
        v => v.to_object(ctx)?,
    };
    obj.get(js_string!("value"), ctx)?
        .as_bigint()
        .ok_or_else(mixed)
}

fn other(args: &[JsValue], i: usize, ctx: &mut Context) -> JsResult<JsBigInt> {
    parse(&arg(args, i), &JsValue::undefined(), ctx)
}

fn non_zero(d: JsBigInt) -> JsResult<JsBigInt> {
    if d.is_zero() {
        return Err(error("Cannot divide by zero".into()));
    }
    Ok(d)
}

/// `v < 0n ? -v : v`.
fn magnitude(v: JsBigInt) -> JsBigInt {
    if v < JsBigInt::zero() {
        JsBigInt::neg(&v)
    } else {
        v
    }
}

/// `bits(v)`: 1 below 2, else four bits a hex digit.
fn bits(v: &JsBigInt) -> u64 {
    let a = magnitude(v.clone());
    if a.is_zero() || a.is_one() {
        1
    } else {
        a.to_string_radix(16).len() as u64 * 4
    }
}

macro_rules! binary {
    ($name:ident, |$a:ident, $b:ident| $e:expr) => {
        fn $name(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
            let $b = other(args, 0, ctx)?;
            let $a = value(this, ctx)?;
            big($e, ctx)
        }
    };
}

macro_rules! unary {
    ($name:ident, |$a:ident| $e:expr) => {
        fn $name(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
            let $a = value(this, ctx)?;
            big($e, ctx)
        }
    };
}

macro_rules! test {
    ($name:ident, |$a:ident, $b:ident| $e:expr) => {
        fn $name(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
            let $b = other(args, 0, ctx)?;
            let $a = value(this, ctx)?;
            Ok(JsValue::from($e))
        }
    };
    ($name:ident, |$a:ident| $e:expr) => {
        fn $name(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
            let $a = value(this, ctx)?;
            Ok(JsValue::from($e))
        }
    };
}

binary!(add, |a, b| JsBigInt::add(&a, &b));
binary!(subtract, |a, b| JsBigInt::sub(&a, &b));
binary!(multiply, |a, b| JsBigInt::mul(&a, &b));
binary!(and, |a, b| JsBigInt::bitand(&a, &b));
binary!(or, |a, b| JsBigInt::bitor(&a, &b));
binary!(xor, |a, b| JsBigInt::bitxor(&a, &b));
unary!(square, |a| JsBigInt::mul(&a, &a));
unary!(abs, |a| magnitude(a));
unary!(negate, |a| JsBigInt::neg(&a));
unary!(next, |a| JsBigInt::add(&a, &JsBigInt::one()));
unary!(prev, |a| JsBigInt::sub(&a, &JsBigInt::one()));
unary!(not, |a| JsBigInt::not(&a));
test!(equals, |a, b| a == b);
test!(not_equals, |a, b| a != b);
test!(greater, |a, b| a > b);
test!(greater_or_equals, |a, b| a >= b);
test!(lesser, |a, b| a < b);
test!(lesser_or_equals, |a, b| a <= b);
test!(is_zero, |a| a.is_zero());
test!(is_positive, |a| a > JsBigInt::zero());
test!(is_negative, |a| a < JsBigInt::zero());
test!(is_even, |a| JsBigInt::rem(&a, &JsBigInt::from(2)).is_zero());
test!(is_odd, |a| !JsBigInt::rem(&a, &JsBigInt::from(2)).is_zero());
test!(is_unit, |a| a == JsBigInt::one() || a == -1);

fn divide(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let d = non_zero(other(args, 0, ctx)?)?;
    big(JsBigInt::div(&value(this, ctx)?, &d), ctx)
}

fn modulo(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let d = non_zero(other(args, 0, ctx)?)?;
    big(JsBigInt::rem(&value(this, ctx)?, &d), ctx)
}

fn divmod(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let d = non_zero(other(args, 0, ctx)?)?;
    let v = value(this, ctx)?;
    let out = JsObject::with_object_proto(ctx.intrinsics());
    let q = big(JsBigInt::div(&v, &d), ctx)?;
    out.create_data_property_or_throw(js_string!("quotient"), q, ctx)?;
    let r = big(JsBigInt::rem(&v, &d), ctx)?;
    out.create_data_property_or_throw(js_string!("remainder"), r, ctx)?;
    Ok(out.into())
}

fn pow(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let e = other(args, 0, ctx)?;
    let v = value(this, ctx)?;
    let (one, minus_one) = (JsBigInt::one(), JsBigInt::from(-1));
    if e < JsBigInt::zero() {
        let r = if v == one {
            one
        } else if v == minus_one {
            if JsBigInt::rem(&e, &JsBigInt::from(2)).is_zero() {
                one
            } else {
                minus_one
            }
        } else {
            JsBigInt::zero()
        };
        return big(r, ctx);
    }
    if !v.is_zero() && v != one && v != minus_one {
        let limit = JsBigInt::from(MAX_BITS);
        if JsBigInt::mul(&JsBigInt::from(bits(&v)), &e) > limit {
            return Err(too_big());
        }
    }
    big(JsBigInt::pow(&v, &e)?, ctx)
}

fn mod_pow(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let mut e = other(args, 0, ctx)?;
    let m = non_zero(other(args, 1, ctx)?)?;
    let mut r = JsBigInt::one();
    let mut b = JsBigInt::rem(&value(this, ctx)?, &m);
    if b < JsBigInt::zero() {
        b = JsBigInt::add(&b, &m);
    }
    while e > JsBigInt::zero() {
        if !JsBigInt::bitand(&e, &JsBigInt::one()).is_zero() {
            r = JsBigInt::rem(&JsBigInt::mul(&r, &b), &m);
        }
        b = JsBigInt::rem(&JsBigInt::mul(&b, &b), &m);
        e = JsBigInt::shift_right(&e, &JsBigInt::one())?;
    }
    big(r, ctx)
}

fn order(a: &JsBigInt, b: &JsBigInt) -> JsValue {
    JsValue::from(match a.cmp(b) {
        std::cmp::Ordering::Equal => 0,
        std::cmp::Ordering::Greater => 1,
        std::cmp::Ordering::Less => -1,
    })
}

fn compare(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let w = other(args, 0, ctx)?;
    Ok(order(&value(this, ctx)?, &w))
}

fn compare_abs(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let a = magnitude(value(this, ctx)?);
    let w = magnitude(other(args, 0, ctx)?);
    Ok(order(&a, &w))
}

fn is_divisible_by(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let d = other(args, 0, ctx)?;
    let v = value(this, ctx)?;
    Ok(JsValue::from(
        !d.is_zero() && JsBigInt::rem(&v, &d).is_zero(),
    ))
}

fn shift_left(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let k = other(args, 0, ctx)?;
    let v = value(this, ctx)?;
    if !v.is_zero()
        && k > JsBigInt::zero()
        && JsBigInt::add(&JsBigInt::from(bits(&v)), &k) > JsBigInt::from(MAX_BITS)
    {
        return Err(too_big());
    }
    big(JsBigInt::shift_left(&v, &k)?, ctx)
}

fn shift_right(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let k = other(args, 0, ctx)?;
    let v = value(this, ctx)?;
    big(JsBigInt::shift_right(&v, &k)?, ctx)
}

fn bit_length(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let v = value(this, ctx)?;
    let v = if v < JsBigInt::zero() {
        JsBigInt::sub(&JsBigInt::neg(&v), &JsBigInt::one())
    } else {
        v
    };
    let n = if v.is_zero() {
        0
    } else {
        v.to_string_radix(2).len()
    };
    big(JsBigInt::from(n), ctx)
}

/// `this.value.toString(radix === undefined ? 10 : radix)`: BigInt's own `toString`.
fn to_string(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let v = value(this, ctx)?;
    let radix = match arg(args, 0) {
        r if r.is_undefined() => JsValue::from(10),
        r => r,
    };
    let f = ctx
        .intrinsics()
        .constructors()
        .bigint()
        .prototype()
        .get(js_string!("toString"), ctx)?;
    let f = f.as_callable().ok_or_else(mixed)?;
    f.call(&JsValue::from(v), &[radix], ctx)
}

fn to_json(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    Ok(JsValue::from(js_string!(
        value(this, ctx)?.to_string_radix(10)
    )))
}

fn to_number(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    Ok(JsValue::from(value(this, ctx)?.to_f64()))
}

/// `bigInt(v, base)`.
pub(super) fn big_int(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let v = parse(&arg(args, 0), &arg(args, 1), ctx)?;
    big(v, ctx)
}

fn is_instance_fn(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    Ok(JsValue::from(is_instance(&arg(args, 0), ctx)?))
}

/// `bigInt(a)` and `bigInt(b)`, their values.
fn pair(args: &[JsValue], ctx: &mut Context) -> JsResult<(JsValue, JsBigInt, JsValue, JsBigInt)> {
    let a = big_int(&JsValue::undefined(), &[arg(args, 0)], ctx)?;
    let b = big_int(&JsValue::undefined(), &[arg(args, 1)], ctx)?;
    let (va, vb) = (value(&a, ctx)?, value(&b, ctx)?);
    Ok((a, va, b, vb))
}

fn max(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (a, va, b, vb) = pair(args, ctx)?;
    Ok(if va > vb { a } else { b })
}

fn min(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (a, va, b, vb) = pair(args, ctx)?;
    Ok(if va < vb { a } else { b })
}

fn gcd_of(x: JsBigInt, y: JsBigInt) -> JsBigInt {
    let (mut x, mut y) = (magnitude(x), magnitude(y));
    while !y.is_zero() {
        let t = JsBigInt::rem(&x, &y);
        x = y;
        y = t;
    }
    x
}

fn gcd(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (_, a, _, b) = pair(args, ctx)?;
    big(gcd_of(a, b), ctx)
}

fn lcm(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (_, a, _, b) = pair(args, ctx)?;
    if a.is_zero() || b.is_zero() {
        return big(JsBigInt::zero(), ctx);
    }
    let g = gcd_of(a.clone(), b.clone());
    big(
        JsBigInt::div(&JsBigInt::mul(&magnitude(a), &magnitude(b)), &g),
        ctx,
    )
}

/// The prototype's methods in the prelude's order of definition (`P.add = P.plus = f` defines
/// `plus` first), each name with its function's length; aliases share one function object.
const METHODS: &[(&[&str], usize, Native)] = &[
    (&["plus", "add"], 1, add),
    (&["minus", "subtract"], 1, subtract),
    (&["times", "multiply"], 1, multiply),
    (&["over", "divide"], 1, divide),
    (&["remainder", "mod"], 1, modulo),
    (&["divmod"], 1, divmod),
    (&["pow"], 1, pow),
    (&["modPow"], 2, mod_pow),
    (&["square"], 0, square),
    (&["abs"], 0, abs),
    (&["negate"], 0, negate),
    (&["next"], 0, next),
    (&["prev"], 0, prev),
    (&["compareTo", "compare"], 1, compare),
    (&["compareAbs"], 1, compare_abs),
    (&["eq", "equals"], 1, equals),
    (&["neq", "notEquals"], 1, not_equals),
    (&["gt", "greater"], 1, greater),
    (&["geq", "greaterOrEquals"], 1, greater_or_equals),
    (&["lt", "lesser"], 1, lesser),
    (&["leq", "lesserOrEquals"], 1, lesser_or_equals),
    (&["isZero"], 0, is_zero),
    (&["isPositive"], 0, is_positive),
    (&["isNegative"], 0, is_negative),
    (&["isEven"], 0, is_even),
    (&["isOdd"], 0, is_odd),
    (&["isUnit"], 0, is_unit),
    (&["isDivisibleBy"], 1, is_divisible_by),
    (&["shiftLeft"], 1, shift_left),
    (&["shiftRight"], 1, shift_right),
    (&["and"], 1, and),
    (&["or"], 1, or),
    (&["xor"], 1, xor),
    (&["not"], 0, not),
    (&["bitLength"], 0, bit_length),
    (&["toString"], 1, to_string),
    (&["toJSON"], 0, to_json),
    (&["toJSNumber", "valueOf"], 0, to_number),
];

/// `bigInt`'s own functions after `prototype`, in the prelude's order.
const STATICS: &[(&str, usize, Native)] = &[
    ("isInstance", 1, is_instance_fn),
    ("max", 2, max),
    ("min", 2, min),
    ("gcd", 2, gcd),
    ("lcm", 2, lcm),
];

fn function(f: Native, name: &str, length: usize, ctor: bool, ctx: &Context) -> JsObject {
    FunctionObjectBuilder::new(ctx.realm(), NativeFunction::from_fn_ptr(f))
        .name(JsString::from(name))
        .length(length)
        .constructor(ctor)
        .build()
        .into()
}

/// A writable, configurable, enumerable data property, as an assignment makes one.
fn assign(o: &JsObject, key: &str, v: JsValue, ctx: &mut Context) -> JsResult<()> {
    o.define_property_or_throw(
        JsString::from(key),
        PropertyDescriptor::builder()
            .value(v)
            .writable(true)
            .enumerable(true)
            .configurable(true),
        ctx,
    )?;
    Ok(())
}

/// Builds `BigInteger.prototype` (with its `constructor`) and `bigInt`, returned in that order.
/// `keep` stores the prototype where [`big`] finds it before `bigInt.zero` and the like are made.
pub(super) fn build(
    ctx: &mut Context,
    keep: impl FnOnce(&mut Context, JsObject),
) -> JsResult<(JsObject, JsObject)> {
    let p = JsObject::with_object_proto(ctx.intrinsics());
    // `function BigInteger(v)`: its prototype's `constructor` (not enumerable).
    let ctor = function(construct_big_integer, "BigInteger", 1, true, ctx);
    ctor.define_property_or_throw(
        js_string!("prototype"),
        PropertyDescriptor::builder()
            .value(p.clone())
            .writable(true)
            .enumerable(false)
            .configurable(false),
        ctx,
    )?;
    p.define_property_or_throw(
        js_string!("constructor"),
        PropertyDescriptor::builder()
            .value(ctor)
            .writable(true)
            .enumerable(false)
            .configurable(true),
        ctx,
    )?;
    for (names, length, f) in METHODS {
        // The prelude's functions are anonymous: their `name` is "".
        let func = function(*f, "", *length, false, ctx);
        for n in *names {
            assign(&p, n, func.clone().into(), ctx)?;
        }
    }
    keep(ctx, p.clone());
    let f = function(big_int, "bigInt", 2, true, ctx);
    // A function's `prototype` (writable, not enumerable), replaced by the prototype.
    f.define_property_or_throw(
        js_string!("prototype"),
        PropertyDescriptor::builder()
            .value(p.clone())
            .writable(true)
            .enumerable(false)
            .configurable(false),
        ctx,
    )?;
    for (name, v) in [("zero", 0), ("one", 1), ("minusOne", -1)] {
        let b = big(JsBigInt::from(v), ctx)?;
        assign(&f, name, b, ctx)?;
    }
    for (name, length, g) in STATICS {
        let func = function(*g, "", *length, false, ctx);
        assign(&f, name, func.into(), ctx)?;
    }
    Ok((p, f))
}

/// `new BigInteger(v)` sets `value` on the new object; a call sets it on `this`.
fn construct_big_integer(this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let obj = match this.as_object() {
        Some(o) => o.clone(),
        None => {
            let o = JsObject::from_proto_and_data(proto(ctx)?, OrdinaryObject);
            o.create_data_property_or_throw(js_string!("value"), arg(args, 0), ctx)?;
            return Ok(o.into());
        }
    };
    obj.set(js_string!("value"), arg(args, 0), false, ctx)?;
    Ok(JsValue::undefined())
}
