//! `bigInt`: the arbitrary-precision integers geth hands to tracers (stack words, balances,
//! values), with the method-call API of BigInteger.js that geth's scripts are written against.
//!
//! Written for chaintrace over JavaScript's native `BigInt`: a `BigInteger` object holds one
//! native value in `value`; every operation returns a new object. `toJSON` gives the decimal
//! string, `valueOf` a Number (so `ctx.gasPrice + '.'` reads as in geth). The prototype's
//! methods are native functions (`methods.rs`), each the JavaScript prelude it replaced, which
//! the tests keep as the reference: parsing and running that prelude cost ~10.7M instructions
//! (~1.9 ms) in every transaction whose script used `bigInt`.
//!
//! The prototype is built on first use: the global `bigInt` is an accessor that builds it on
//! first read, and Rust builds it when it first hands a value over.

mod methods;

use alloy_primitives::U256;
use boa_engine::builtins::object::OrdinaryObject;
use boa_engine::object::builtins::JsFunction;
use boa_engine::object::JsObject;
use boa_engine::property::PropertyDescriptor;
use boa_engine::NativeFunction;
use boa_engine::{js_string, Context, JsBigInt, JsNativeError, JsResult, JsValue};

/// The JavaScript prelude the native methods replaced: the reference the tests compare them
/// with. It returns the `bigInt` function (its `prototype` is the objects' one).
#[cfg(test)]
const PRELUDE: &str = r#"(function () {
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

/// The prototype and `bigInt`, kept in the context's host data once built.
struct Installed {
    func: JsObject,
    proto: JsObject,
}

/// The prototype alone, kept first: `bigInt.zero` and the like are made while it is built.
struct Proto(JsObject);

/// The prototype, once built.
fn proto(ctx: &Context) -> Option<JsObject> {
    ctx.get_data::<Proto>().map(|p| p.0.clone())
}

/// Defines the global `bigInt`: a getter that builds it on first read. Like the data property
/// the prelude used to define, it cannot be written (no setter), enumerated or reconfigured;
/// only its descriptor shows the difference. It stays a getter: boa's inline cache records the
/// slot found before a getter runs under the shape seen after it, so a getter that turned its
/// own property into data would be called again on the data.
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

/// Whether `bigInt` was built in `ctx` (its methods may since have been replaced).
pub fn installed(ctx: &Context) -> bool {
    ctx.has_data::<Installed>()
}

fn install(ctx: &mut Context) -> JsResult<&Installed> {
    if !ctx.has_data::<Installed>() {
        let (proto, func) = methods::build(ctx, |ctx, p| {
            ctx.insert_data(Proto(p));
        })?;
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
    install(ctx)?;
    methods::big(native(v), ctx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use boa_engine::Source;

    /// The value as text, or what a user is shown of the error (`host::js_message`: kind
    /// and message, without where boa's stack was).
    fn eval(code: &str, ctx: &mut Context) -> String {
        match ctx.eval(Source::from_bytes(code)) {
            Ok(v) => match v.to_string(ctx) {
                Ok(s) => s.to_std_string_escaped(),
                Err(e) => format!("threw on display {e}"),
            },
            Err(e) => match e.try_native(ctx) {
                Ok(n) => format!("threw {}: {}", n.kind(), n.message().trim()),
                Err(_) => format!("threw {}", e.to_string().lines().next().unwrap_or("")),
            },
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

    /// Every method and static of the native `bigInt` against the JavaScript prelude it
    /// replaced: the same values, and the same errors as a user is shown them.
    #[test]
    fn the_native_methods_are_the_prelude() {
        let values = [
            "0",
            "1",
            "-1",
            "7",
            "-7",
            "255",
            "'0xff'",
            "'-12'",
            "'  42 '",
            "'+9'",
            "'0x1F'",
            "'ff', 16",
            "'0xff', 16",
            "'101', 2",
            "'z', 36",
            "'12', 0",
            "'12', 37",
            "'12', 2.5",
            "'12', 'x'",
            "'', 10",
            "'0x', 16",
            "12.9",
            "-12.9",
            "2e30",
            "12n",
            "-0",
            "undefined",
            "'1e3'",
            "'0b11'",
            "'12a'",
            "'ZZ', 36",
            "'é'",
            "'Ⅻ', 36",
            "NaN",
            "Infinity",
            "null",
            "true",
            "({})",
            "[1]",
            "bigInt.one",
            "'٣'",
            "'115792089237316195423570985008687907853269984665640564039457584007913129639935'",
        ];
        let methods = [
            "add(5)",
            "plus('0x10')",
            "subtract(-3)",
            "minus(bigInt(2))",
            "multiply(3)",
            "times('-2')",
            "divide(2)",
            "over(-3)",
            "divide(0)",
            "mod(3)",
            "remainder(-4)",
            "mod(0)",
            "divmod(3).quotient.toString() + '/' + x.divmod(3).remainder",
            "divmod(0)",
            "pow(3)",
            "pow(-1)",
            "pow(-2)",
            "pow(0)",
            "pow(2000000)",
            "modPow(3, 7)",
            "modPow(-1, 7)",
            "modPow(5, 0)",
            "modPow(2, -7)",
            "square()",
            "abs()",
            "negate()",
            "next()",
            "prev()",
            "compare(3)",
            "compareTo(-300)",
            "compareAbs(-7)",
            "equals(7)",
            "eq('7')",
            "notEquals(7)",
            "neq(1)",
            "greater(1)",
            "gt(-1)",
            "greaterOrEquals(7)",
            "geq(8)",
            "lesser(0)",
            "lt(2)",
            "lesserOrEquals(1)",
            "leq(-8)",
            "isZero()",
            "isPositive()",
            "isNegative()",
            "isEven()",
            "isOdd()",
            "isUnit()",
            "isDivisibleBy(7)",
            "isDivisibleBy(0)",
            "shiftLeft(3)",
            "shiftLeft(-2)",
            "shiftLeft(2000000)",
            "shiftRight(2)",
            "shiftRight(-3)",
            "and(12)",
            "or(-5)",
            "xor(255)",
            "not()",
            "bitLength()",
            "toString()",
            "toString(16)",
            "toString(2)",
            "toString(1)",
            "toString(37)",
            "toString('16')",
            "toJSON()",
            "toJSNumber()",
            "valueOf()",
            "add({})",
            "add(null)",
            "add(NaN)",
            "add(Symbol())",
            "equals('x')",
        ];
        let statics = [
            "bigInt.zero",
            "bigInt.one",
            "bigInt.minusOne",
            "bigInt.isInstance(bigInt(1))",
            "bigInt.isInstance(1)",
            "bigInt.isInstance({value: 1n})",
            "bigInt.max(3, '7')",
            "bigInt.max(-3, -7)",
            "bigInt.min(3, 7)",
            "bigInt.min('x', 1)",
            "bigInt.gcd(12, -18)",
            "bigInt.gcd(0, 5)",
            "bigInt.lcm(4, -6)",
            "bigInt.lcm(0, 6)",
            "bigInt(5) + 1",
            "bigInt(5) * 2",
            "JSON.stringify({a: bigInt(5)})",
            "bigInt(5) == 5",
            "bigInt(5) instanceof bigInt",
            "new bigInt(5).toString()",
            "bigInt.prototype.add.length",
            "bigInt.prototype.modPow.length",
            "bigInt.prototype.add === bigInt.prototype.plus",
            "bigInt.one.constructor.name",
            "Object.keys(bigInt.one).join()",
            "Object.keys(bigInt(1).divmod(1)).join()",
            "bigInt.length",
            "bigInt.name",
            "typeof bigInt.prototype.constructor",
            "Object.getOwnPropertyNames(bigInt.prototype).join()",
            "Object.keys(bigInt).join()",
            "bigInt.prototype.add.call({value: 2n}, 3)",
            "bigInt.prototype.toString.call({value: 10n}, 16)",
            "bigInt(5).add(1, 2).toString()",
            "bigInt()",
            "bigInt('12', 16)",
        ];
        // A group of probes a pair of fresh contexts (boa's stack does not always unwind
        // after a thrown error in a reused one).
        let mut groups: Vec<Vec<String>> = vec![statics.iter().map(|s| s.to_string()).collect()];
        for v in values {
            let mut g = vec![format!("var x = bigInt({v}); x.toString()")];
            for m in methods {
                g.push(format!("var x = bigInt({v}); String(x.{m})"));
            }
            groups.push(g);
        }
        let (mut differ, mut n) = (Vec::new(), 0);
        for g in &groups {
            let (mut a, mut b) = (eager(), lazy());
            for p in g {
                n += 1;
                let (want, got) = (eval(p, &mut a), eval(p, &mut b));
                if want != got {
                    differ.push(format!("{p}\n  prelude {want}\n  native  {got}"));
                }
            }
        }
        assert!(
            differ.is_empty(),
            "{} of {n} probes differ:\n{}",
            differ.len(),
            differ.join("\n")
        );
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
