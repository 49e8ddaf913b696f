//! `bigInt`: the arbitrary-precision integers geth hands to tracers (stack words, balances,
//! values), with the method-call API of BigInteger.js that geth's scripts are written against.
//!
//! Written for chaintrace over JavaScript's native `BigInt`: a `BigInteger` object holds one
//! native value in `value`; every operation returns a new object. `toJSON` gives the decimal
//! string, `valueOf` a Number (so `ctx.gasPrice + '.'` reads as in geth). Rust builds these
//! objects directly from a U256 with the shared prototype, without going through JavaScript.
//!
//! Parsing the prelude is most of the cost of a fresh context (boa parses a few KB a
//! millisecond), and many scripts never use `bigInt`. So it runs on first use: the global
//! `bigInt` is an accessor that runs it on first read, and Rust runs it when it first hands a
//! value over.

use alloy_primitives::U256;
use boa_engine::builtins::object::OrdinaryObject;
use boa_engine::object::builtins::JsFunction;
use boa_engine::object::JsObject;
use boa_engine::property::PropertyDescriptor;
use boa_engine::{js_string, Context, JsBigInt, JsNativeError, JsResult, JsValue};
use boa_engine::{NativeFunction, Source};

/// The JavaScript half: returns the `bigInt` function (its `prototype` is the objects' one).
pub const PRELUDE: &str = r#"(function () {
  function BigInteger(v) { this.value = v; }
  function digits(s, b) {
    var r = 0n, B = BigInt(b);
    for (var i = 0; i < s.length; i++) {
      var d = parseInt(s[i], b);
      if (isNaN(d)) { throw new Error("Invalid integer: " + s); }
      r = r * B + BigInt(d);
    }
    return r;
  }
  function parse(v, base) {
    if (v instanceof BigInteger) { return v.value; }
    switch (typeof v) {
      case "bigint": return v;
      case "number":
        if (!isFinite(v)) { throw new Error("Invalid integer: " + v); }
        return BigInt(Math.trunc(v));
      case "string":
        var s = v.trim(), neg = false;
        if (s[0] === "-") { neg = true; s = s.slice(1); } else if (s[0] === "+") { s = s.slice(1); }
        var b = base === undefined ? 10 : Number(base), r;
        if (s.length === 0) { throw new Error("Invalid integer: " + v); }
        if (b === 16) { s = s.replace(/^0x/i, ""); }
        if (b === 10 && /^[0-9]+$/.test(s)) { r = BigInt(s); }
        else if (b === 10 && /^0x[0-9a-f]+$/i.test(s)) { r = BigInt(s); }
        else if (b === 16 && /^[0-9a-f]+$/i.test(s)) { r = BigInt("0x" + s); }
        else { r = digits(s.toLowerCase(), b); }
        return neg ? -r : r;
      case "undefined": return 0n;
    }
    throw new Error("Invalid integer: " + v);
  }
  function big(v) { return new BigInteger(v); }
  function bigInt(v, base) { return big(parse(v, base)); }
  function nonZero(d) { if (d === 0n) { throw new Error("Cannot divide by zero"); } return d; }
  var P = BigInteger.prototype;
  P.add = P.plus = function (o) { return big(this.value + parse(o)); };
  P.subtract = P.minus = function (o) { return big(this.value - parse(o)); };
  P.multiply = P.times = function (o) { return big(this.value * parse(o)); };
  P.divide = P.over = function (o) { return big(this.value / nonZero(parse(o))); };
  P.mod = P.remainder = function (o) { return big(this.value % nonZero(parse(o))); };
  P.divmod = function (o) {
    var d = nonZero(parse(o));
    return { quotient: big(this.value / d), remainder: big(this.value % d) };
  };
  // Results past a million bits (a memory and time bomb: bigInt(3).pow(5e7)) are refused.
  var MAX_BITS = 1048576n;
  function bits(v) { if (v < 0n) { v = -v; } return v < 2n ? 1n : BigInt(v.toString(16).length * 4); }
  function tooBig() { throw new RangeError("bigInt result would exceed " + MAX_BITS + " bits"); }
  P.pow = function (o) {
    var e = parse(o), v = this.value;
    if (e < 0n) { return big(v === 1n ? 1n : v === -1n ? (e % 2n === 0n ? 1n : -1n) : 0n); }
    if (v !== 0n && v !== 1n && v !== -1n && bits(v) * e > MAX_BITS) { tooBig(); }
    return big(v ** e);
  };
  P.modPow = function (e, m) {
    var E = parse(e), M = nonZero(parse(m)), r = 1n, b = this.value % M;
    if (b < 0n) { b += M; }
    while (E > 0n) { if (E & 1n) { r = (r * b) % M; } b = (b * b) % M; E >>= 1n; }
    return big(r);
  };
  P.square = function () { return big(this.value * this.value); };
  P.abs = function () { return big(this.value < 0n ? -this.value : this.value); };
  P.negate = function () { return big(-this.value); };
  P.next = function () { return big(this.value + 1n); };
  P.prev = function () { return big(this.value - 1n); };
  P.compare = P.compareTo = function (o) {
    var w = parse(o);
    return this.value === w ? 0 : this.value > w ? 1 : -1;
  };
  P.compareAbs = function (o) {
    var a = this.value < 0n ? -this.value : this.value, w = parse(o);
    if (w < 0n) { w = -w; }
    return a === w ? 0 : a > w ? 1 : -1;
  };
  P.equals = P.eq = function (o) { return this.value === parse(o); };
  P.notEquals = P.neq = function (o) { return this.value !== parse(o); };
  P.greater = P.gt = function (o) { return this.value > parse(o); };
  P.greaterOrEquals = P.geq = function (o) { return this.value >= parse(o); };
  P.lesser = P.lt = function (o) { return this.value < parse(o); };
  P.lesserOrEquals = P.leq = function (o) { return this.value <= parse(o); };
  P.isZero = function () { return this.value === 0n; };
  P.isPositive = function () { return this.value > 0n; };
  P.isNegative = function () { return this.value < 0n; };
  P.isEven = function () { return this.value % 2n === 0n; };
  P.isOdd = function () { return this.value % 2n !== 0n; };
  P.isUnit = function () { return this.value === 1n || this.value === -1n; };
  P.isDivisibleBy = function (o) { var d = parse(o); return d !== 0n && this.value % d === 0n; };
  P.shiftLeft = function (n) {
    var k = parse(n);
    if (this.value !== 0n && k > 0n && bits(this.value) + k > MAX_BITS) { tooBig(); }
    return big(this.value << k);
  };
  P.shiftRight = function (n) { return big(this.value >> parse(n)); };
  P.and = function (o) { return big(this.value & parse(o)); };
  P.or = function (o) { return big(this.value | parse(o)); };
  P.xor = function (o) { return big(this.value ^ parse(o)); };
  P.not = function () { return big(~this.value); };
  P.bitLength = function () {
    var v = this.value < 0n ? -this.value - 1n : this.value;
    return big(BigInt(v === 0n ? 0 : v.toString(2).length));
  };
  P.toString = function (radix) { return this.value.toString(radix === undefined ? 10 : radix); };
  P.toJSON = function () { return this.value.toString(); };
  P.valueOf = P.toJSNumber = function () { return Number(this.value); };
  bigInt.prototype = P;
  bigInt.zero = big(0n);
  bigInt.one = big(1n);
  bigInt.minusOne = big(-1n);
  bigInt.isInstance = function (x) { return x instanceof BigInteger; };
  bigInt.max = function (a, b) { a = bigInt(a); b = bigInt(b); return a.greater(b) ? a : b; };
  bigInt.min = function (a, b) { a = bigInt(a); b = bigInt(b); return a.lesser(b) ? a : b; };
  bigInt.gcd = function (a, b) {
    var x = bigInt(a).abs().value, y = bigInt(b).abs().value;
    while (y !== 0n) { var t = x % y; x = y; y = t; }
    return big(x);
  };
  bigInt.lcm = function (a, b) {
    var x = bigInt(a).abs(), y = bigInt(b).abs();
    return x.isZero() || y.isZero() ? big(0n) : x.multiply(y).divide(bigInt.gcd(x, y));
  };
  return bigInt;
})()"#;

/// The prelude's results, kept in the context's host data once it ran.
struct Installed {
    func: JsObject,
    proto: JsObject,
}

/// Defines the global `bigInt`: a getter that runs the prelude on first read. Like the data
/// property the prelude used to define, it cannot be written (no setter), enumerated or
/// reconfigured; only its descriptor shows the difference. It stays a getter: boa's inline
/// cache records the slot found before a getter runs under the shape seen after it, so a
/// getter that turned its own property into data would be called again on the data.
pub fn register(ctx: &mut Context) -> JsResult<()> {
    let get = NativeFunction::from_fn_ptr(|_, _, ctx| Ok(install(ctx)?.func.clone().into()))
        .to_js_function(ctx.realm());
    let desc = PropertyDescriptor::builder()
        .get(get)
        .set(JsValue::undefined())
        .enumerable(false)
        .configurable(false);
    ctx.global_object()
        .define_property_or_throw(js_string!("bigInt"), desc, ctx)?;
    Ok(())
}

/// Runs the prelude unless it ran.
/// Whether the prelude ran in `ctx` (its methods may since have been replaced).
pub fn installed(ctx: &Context) -> bool {
    ctx.has_data::<Installed>()
}

fn install(ctx: &mut Context) -> JsResult<&Installed> {
    if !ctx.has_data::<Installed>() {
        let func = ctx
            .eval(Source::from_bytes(PRELUDE))?
            .as_object()
            .ok_or_else(|| JsNativeError::error().with_message("bigInt prelude failed"))?;
        let proto = func
            .get(js_string!("prototype"), ctx)?
            .as_object()
            .ok_or_else(|| JsNativeError::error().with_message("bigInt prelude failed"))?;
        ctx.insert_data(Installed { func, proto });
    }
    ctx.get_data::<Installed>().ok_or_else(|| {
        JsNativeError::error()
            .with_message("bigInt is not initialised")
            .into()
    })
}

/// A native BigInt holding `v`.
pub fn native(v: U256) -> JsBigInt {
    if let Ok(small) = u128::try_from(v) {
        return JsBigInt::from(small);
    }
    let hi = JsBigInt::from(u128::try_from(v >> 128).unwrap_or(u128::MAX));
    let lo = JsBigInt::from(u128::try_from(v & U256::from(u128::MAX)).unwrap_or(0));
    let shifted = JsBigInt::mul(&hi, &JsBigInt::from(1u128 << 127));
    JsBigInt::add(&JsBigInt::mul(&shifted, &JsBigInt::from(2u8)), &lo)
}

/// A getter returning a `bigInt` holding `v`, made (and the prelude run) on the first read and
/// the same object on every later one. For `ctx.value` and `ctx.gasPrice`: most `result`
/// functions never read them, and the prelude costs more than the rest of `result`.
pub fn lazy(v: U256, ctx: &mut Context) -> JsFunction {
    // The cache lives in a plain object the collector traces, not in the closure.
    let holder = JsObject::with_null_proto();
    let captures = (holder, JsValue::from(native(v)));
    NativeFunction::from_copy_closure_with_captures(
        |_, _, (holder, raw), ctx| {
            let cached = holder.get(js_string!("v"), ctx)?;
            if !cached.is_undefined() {
                return Ok(cached);
            }
            let proto = install(ctx)?.proto.clone();
            let obj = JsObject::from_proto_and_data(proto, OrdinaryObject);
            obj.set(js_string!("value"), raw.clone(), false, ctx)?;
            holder.set(js_string!("v"), obj.clone(), false, ctx)?;
            Ok(obj.into())
        },
        captures,
    )
    .to_js_function(ctx.realm())
}

/// A `bigInt` object (BigInteger.prototype) holding `v`.
pub fn make(v: U256, ctx: &mut Context) -> JsResult<JsValue> {
    let proto = install(ctx)?.proto.clone();
    let obj = JsObject::from_proto_and_data(proto, OrdinaryObject);
    obj.set(js_string!("value"), JsValue::from(native(v)), false, ctx)?;
    Ok(obj.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(code: &str, ctx: &mut Context) -> String {
        match ctx.eval(Source::from_bytes(code)) {
            Ok(v) => v.to_string(ctx).unwrap().to_std_string_escaped(),
            Err(e) => format!("threw {e}"),
        }
    }

    /// A context as the prelude used to leave it: evaluated at once, defining the global.
    fn eager() -> Context {
        let mut ctx = Context::default();
        let code = PRELUDE.replace(
            "  return bigInt;",
            "  Object.defineProperty(globalThis, \"bigInt\", \
             { value: bigInt, writable: false, enumerable: false });\n  return bigInt;",
        );
        ctx.eval(Source::from_bytes(code.as_str())).unwrap();
        ctx
    }

    fn lazy() -> Context {
        let mut ctx = Context::default();
        register(&mut ctx).unwrap();
        ctx
    }

    #[test]
    fn the_lazy_global_behaves_as_the_eager_one() {
        let probes = [
            "typeof bigInt",
            "bigInt(5).add('0x10', 16).multiply(3).toString(16)",
            "bigInt('-12').pow(3).toJSON()",
            "'bigInt' in globalThis",
            "delete globalThis.bigInt",
            "bigInt = 3; typeof bigInt",
            "(function () { 'use strict'; try { bigInt = 3 } catch (e) { return e.message } })()",
            "(function () { try { Object.defineProperty(globalThis, 'bigInt', {value: 1}) } \
             catch (e) { return e.message } })()",
            "var d = Object.getOwnPropertyDescriptor(globalThis, 'bigInt'); \
             [d.enumerable, d.configurable].join()",
            // The same code reading `bigInt` again (boa's inline cache, see `register`).
            "var f = function (n) { return bigInt(n).toString() }; [f(1), f(2), f(3)].join()",
            "Object.getOwnPropertyNames(globalThis).indexOf('bigInt') \
             - Object.getOwnPropertyNames(globalThis).indexOf('globalThis')",
            "Object.keys(globalThis).join()",
            "bigInt.isInstance(bigInt.one) && bigInt.one instanceof bigInt",
            "Object.getOwnPropertyNames(bigInt.prototype).join()",
            "bigInt('zz')",
        ];
        // In one context after another, and each as the first touch of a fresh context.
        let (mut a, mut b) = (eager(), lazy());
        for p in probes {
            assert_eq!(eval(p, &mut a), eval(p, &mut b), "{p}");
        }
        for p in probes {
            assert_eq!(eval(p, &mut eager()), eval(p, &mut lazy()), "{p}");
        }
    }

    #[test]
    fn rust_values_install_the_prelude() {
        let mut ctx = lazy();
        let v = make(U256::from(42u8), &mut ctx).unwrap();
        ctx.register_global_property(js_string!("v"), v, boa_engine::property::Attribute::all())
            .unwrap();
        assert_eq!(
            eval(
                "[v.add(1).toString(), v instanceof bigInt, bigInt.isInstance(v), \
                 v.add(2) instanceof bigInt].join()",
                &mut ctx
            ),
            "43,true,true,true"
        );
        let big = U256::MAX - U256::from(1u8);
        let v = make(big, &mut ctx).unwrap();
        let s = v.to_string(&mut ctx).unwrap().to_std_string_escaped();
        assert_eq!(s, big.to_string());
    }
}
