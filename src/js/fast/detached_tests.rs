//! Tracers made without boa ([`super::Fast::detached`]) against boa's host alone: the same
//! result text or error, and boa built only where something leaves the subset.

use super::tests::{drive_all, lib, STEPS};

fn limits() -> (std::time::Instant, i64) {
    (
        std::time::Instant::now() + std::time::Duration::from_secs(5),
        crate::alloc::thread_live(),
    )
}

const CONFIG: &str = "{\"limit\": 7}";

/// Asserts the native host and boa's agree; returns whether the tracer never needed boa.
fn agrees(src: &str) -> bool {
    agrees_with(src, CONFIG)
}

fn agrees_with(src: &str, config: &str) -> bool {
    let (native, _, without_boa) = drive_all(src, true, STEPS, config);
    let (boa, _, _) = drive_all(src, false, STEPS, config);
    assert_eq!(
        native, boa,
        "the native host and boa differ for {src} with {config}"
    );
    without_boa
}

/// Asserts agreement, and that boa was never built (unless the native path is off).
fn without_boa(src: &str) {
    assert!(agrees(src) || !super::enabled(), "boa was built for {src}");
}

#[test]
fn library_frame_tracers_need_no_boa() {
    for name in ["call_tree.js", "selector_counts.js"] {
        without_boa(&lib(name));
    }
    // call_tracer.js is made without boa, `setup` parsing the configuration natively; the
    // synthetic frames' reverts have a reason to decode, which its helper leaves to boa.
    let src = lib("call_tracer.js");
    for config in [
        CONFIG,
        "{\"onlyTopCall\": true}",
        "{\"onlyTopCall\": 0, \"x\": [1, {\"y\": null}]}",
    ] {
        assert!(
            super::Fast::detached(&src, config, &crate::js::objects::Shared::new(), limits())
                .is_some()
                || !super::enabled(),
            "{config}"
        );
        assert!(!agrees_with(&src, config), "{config}");
    }
    // Without reverts it never needs boa.
    let ok = src.replace("if (output.length >= 10)", "if (false)");
    assert!(agrees(&ok) || !super::enabled());
}

#[test]
fn setup_runs_natively_on_the_parsed_configuration() {
    let src =
        "{n: 0, setup: function(c) { var o = JSON.parse(c); this.n = o.limit; this.o = o; }, \
               enter: function(f) { this.n++; }, exit: function(r) {}, fault: function(log) {}, \
               result: function(ctx) { return [this.n, this.o]; }}";
    for config in [
        "{}",
        CONFIG,
        "{\"a\": [1, -3, \"s\\u00e9<\", true, null, {}], \"0\": \"zero\", \"b\": {\"c\": {}}}",
    ] {
        assert!(agrees_with(src, config) || !super::enabled(), "{config}");
    }
    // A fraction parsed natively, written by boa (whose number text it is).
    assert!(!agrees_with(src, "{\"a\": [2.5, -3e300, 1e-7]}"));
    // What is left to boa: a second parse, a `__proto__` key, any other global.
    for setup in [
        "this.a = JSON.parse(c); this.b = JSON.parse(c); this.b.limit = 1; this.n = this.a.limit;",
        "this.n = Object.keys(JSON.parse(c)).length;",
    ] {
        let src = format!(
            "{{n: 0, setup: function(c) {{ {setup} }}, enter: function(f) {{ this.n++; }}, exit: function(r) {{}}, \
             fault: function(log) {{}}, result: function(ctx) {{ return this.n; }}}}"
        );
        assert!(!agrees(&src), "{setup}");
    }
    assert!(!agrees_with(src, "{\"__proto__\": {\"limit\": 3}}"));
}

#[test]
fn ctx_fields_concat_and_json_forms_match_boa() {
    let src = r#"{
      frames: [], n: 0, big: 1e20, neg: -0, s: "<a href='x'>&\u2028\u00e9</a>\n\t\"q\"",
      nested: {deep: {deeper: [1, [2, [3]]], "7": "seven", "2": "two", z: undefined}},
      helper: function(x) { return x + 1; },
      enter: function(f) { this.n++; if (this.n % 3 === 0) { this.frames.push([this.n, f.getType()]); } },
      exit: function(r) {},
      fault: function(log) {},
      result: function(ctx, db) {
        var top = { type: ctx.type, from: toHex(ctx.from), to: toHex(ctx.to), input: toHex(ctx.input),
                    len: ctx.input.length, sel: toHex(slice(ctx.input, 0, 4)), out: toHex(ctx.output),
                    cb: toHex(ctx.coinbase), gas: ctx.gas, used: ctx.gasUsed, block: ctx.block,
                    error: ctx.error, index: ctx.txIndex, h: this.helper(1), f: this.helper,
                    u: undefined, nul: null, t: true, fl: false };
        var holes = [1, 3];
        holes[5] = 6;
        return [top, this.helper].concat(this.frames, holes, [[]], 4, "five", this.nested, this);
      }
    }"#;
    without_boa(src);
}

#[test]
fn integers_past_2_53_are_written_as_javascript_writes_them() {
    // As values, as text, as keys: the fewest digits that read back, then zeros.
    let src = "{n: 0, enter: function(f) { this.n++; }, exit: function(r) {}, fault: function(log) {}, \
               result: function(ctx) { var x = 1152921504606846976, o = {}; o[x] = 1; o[-x * 4] = 2; \
               return [x, x + '', -x, 9007199254740993, 123456789012345680000, 1e20 + 1, o]; }}";
    without_boa(src);
    // From 1e21 on the text has an exponent, which boa writes.
    assert!(!agrees(
        &src.replace("1e20 + 1, o]", "1e20 + 1, o, x * 1000]")
    ));
}

#[test]
fn what_json_cannot_write_natively_goes_to_boa() {
    for result in [
        // A fraction's text, a cycle (boa's TypeError), an own `toJSON`, a bigInt, `setup`.
        "return [this.n / 7];",
        "this.self = this; return this;",
        "return {toJSON: 5, a: 1};",
        "return ctx.value;",
        "return [ctx.gasPrice, this.n];",
    ] {
        let src = format!(
            "{{n: 0, enter: function(f) {{ this.n++; }}, exit: function(r) {{}}, fault: function(log) {{}}, \
             result: function(ctx, db) {{ {result} }}}}"
        );
        assert!(!agrees(&src), "{result}");
    }
}

#[test]
fn a_hook_leaving_the_subset_builds_boa_with_the_state_so_far() {
    for hook in [
        // A fraction's text at the fifth frame, a delete on the tracer object, a throw.
        "this.n++; this.calls.push(f.getType()); if (this.n === 5) { this.f = this.n / 3 + ''; }",
        "this.n++; this.tmp = 1; if (this.n === 7) { delete this.tmp; } this.calls.push(this.n);",
        "this.n++; if (this.n === 9) { this.u.v = 1; }",
    ] {
        let src = format!(
            "{{n: 0, calls: [], tmp: 0, enter: function(f) {{ {hook} }}, exit: function(r) {{ this.calls.push(r.getGasUsed()); }}, \
             fault: function(log) {{}}, result: function(ctx) {{ return [this.n, this.calls.length, this.tmp, this.f, this.calls.slice(0, 4)]; }}}}"
        );
        assert!(!agrees(&src), "{hook}");
    }
}

#[test]
fn literals_with_more_than_constants_are_boa_s() {
    for literal in [
        "n: 1 + 2",
        "n: Math.max(1, 2)",
        "n: this",
        "n: (function() { return 4; })()",
    ] {
        let src = format!(
            "{{{literal}, enter: function(f) {{}}, exit: function(r) {{}}, fault: function(log) {{}}, \
             result: function(ctx) {{ return this.n; }}}}"
        );
        assert!(!agrees(&src), "{literal}");
    }
    // geth's errors still come from boa: no `fault`, `enter` without `exit`.
    let (r, _, _) = drive_all("{result: function() { return 1; }}", true, 10, CONFIG);
    assert!(r.is_err_and(|e| e.contains("fault")));
    let (r, _, _) = drive_all(
        "{enter: function() {}, fault: function() {}, result: function() { return 1; }}",
        true,
        10,
        CONFIG,
    );
    assert!(r.is_err());
}
