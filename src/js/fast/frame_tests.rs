//! The native evaluator against boa for `enter`/`exit`: the frame tracers of the library,
//! `arr.pop()`, `toHex` of a frame's buffers and `slice` of them, inlined helper functions, and
//! generated hooks over the same synthetic frames (`JS_FAST_SEED`, `JS_FAST_ROUNDS`).

use super::tests::{drive, lib, same, same_n, stays_native, Gen};

#[test]
fn library_frame_tracers_run_natively_and_match_boa() {
    assert!(
        stays_native(&lib("call_tree.js")),
        "call_tree.js left the native path"
    );
}

#[test]
fn pop_and_to_hex_are_native_only_while_the_builtins_are_in_place() {
    let src = "{st: [], got: [], n: 0, enter: function(f) { this.st.push([toHex(f.getFrom()), toHex(f.getTo()), toHex(f.getInput(1))]); }, \
               exit: function(r) { var c = this.st.pop(); this.got.push(c, toHex(r.getOutput())); this.e = [].pop(); this.n++; }, \
               fault: function() {}, result: function() { return [this.st, this.got, this.e, this.n]; }}";
    assert!(stays_native(src));
    // A hole at the end is the prototype's to read; an own `pop` is the array's.
    let hole =
        "{a: [1, 2, , ], enter: function(f) { this.r = this.a.pop(); }, exit: function() {}, \
                fault: function() {}, result: function() { return [this.r, this.a.length]; }}";
    assert!(!same(hole));
    let own = "{a: [1], setup: function() { this.a.pop = function() { return 'own'; }; }, \
               enter: function(f) { this.r = this.a.pop(); }, exit: function() {}, fault: function() {}, result: function() { return this.r; }}";
    assert!(!same(own));
    // Replaced built-ins keep the script in boa.
    for setup in [
        "Array.prototype.pop = function() { return 'popped'; };",
        "toHex = function(b) { return 'hex' + b.length; };",
    ] {
        let src = format!(
            "{{a: [1, 2], setup: function() {{ {setup} }}, enter: function(f) {{ this.r = [this.a.pop(), toHex(f.getTo())]; }}, \
             exit: function() {{}}, fault: function() {{}}, result: function() {{ return this.r; }}}}"
        );
        assert!(!same(&src), "{setup}");
    }
}

#[test]
fn helpers_are_inlined_only_while_they_are_the_literal_s() {
    // Values returned, arguments missing or extra, a buffer passed on, nested helpers.
    let src = "{n: 0, out: [], \
               two: function(a, b) { if (a === undefined) { return 'none'; } var s = a + ':' + b; return s; }, \
               sel: function(input, k) { if (input.length < 4) { return; } return toHex(slice(input, 0, 4)) + this.two(k); }, \
               enter: function(f) { this.out.push(this.two(), this.two(1, 2, this.n++), this.sel(f.getInput(), f.getType()), toHex(slice(f.getTo(), 18, 20))); }, \
               exit: function(r) { this.out.push(this.sel(r.getOutput())); }, fault: function() {}, \
               result: function() { return [this.n, this.out]; }}";
    assert!(stays_native(src));
    // Replaced in `setup`, or by a hook: boa runs it (from that call on).
    let setup = "{h: function() { return 1; }, setup: function() { this.h = function() { return 2; }; }, \
                 enter: function(f) { this.r = this.h(); }, exit: function() {}, fault: function() {}, result: function() { return this.r; }}";
    assert!(!same(setup));
    let hook = "{h: function() { return 1; }, g: function() { return 3; }, r: [], \
                enter: function(f) { this.r.push(this.h()); this.h = this.g; }, exit: function() {}, fault: function() {}, result: function() { return this.r; }}";
    assert!(!same(hook));
    // Recursion is not inlined; a slice out of range is boa's error.
    let rec = "{h: function(n) { return n > 0 ? this.h(n - 1) : 0; }, enter: function(f) { this.r = this.h(3); }, \
               exit: function() {}, fault: function() {}, result: function() { return this.r; }}";
    assert!(!same(rec));
    let out_of_range = "{enter: function(f) { this.r = toHex(slice(f.getInput(), 2, 40)); }, \
                        exit: function() {}, fault: function() {}, result: function() { return this.r; }}";
    assert!(!same(out_of_range));
    let (r, _) = drive(out_of_range, true);
    assert!(r.is_err_and(|e| e.contains("out of bound")));
    // A replaced `slice` keeps the script in boa.
    let replaced = "{setup: function() { slice = function() { return [1]; }; }, enter: function(f) { this.r = toHex(slice(f.getTo(), 0, 2)); }, \
                    exit: function() {}, fault: function() {}, result: function() { return this.r; }}";
    assert!(!same(replaced));
}

impl Gen {
    /// An expression for `enter(f)`/`exit(r)` bodies.
    fn frame_expr(&mut self, enter: bool, depth: u32) -> String {
        if depth == 0 || self.next().is_multiple_of(3) {
            let leaves: &[&str] = if enter {
                &[
                    "toHex(f.getFrom())",
                    "toHex(f.getTo())",
                    "toHex(f.getInput())",
                    "f.getType()",
                    "f.getGas()",
                    "this.st.length",
                    "this.st.pop()",
                    "this.a",
                    "x",
                    "1",
                    "'0x'",
                    "(f.getValue() === undefined ? 'none' : f.getValue().toString(16))",
                    "this.hex(f.getGas())",
                    "this.odd(x)",
                ]
            } else {
                &[
                    "toHex(r.getOutput())",
                    "r.getGasUsed()",
                    "r.getError()",
                    "this.st.pop()",
                    "this.st.length",
                    "this.a",
                    "x",
                    "0",
                    "undefined",
                    "this.hex(r.getGasUsed())",
                    "toHex(r.getOutput()).slice(2, 6)",
                ]
            };
            return self.pick(leaves).to_string();
        }
        let d = depth - 1;
        match self.next() % 5 {
            0 | 1 => {
                let op = self.pick(&["+", "===", "!==", "<", "||", "&&", "??"]);
                format!(
                    "({} {op} {})",
                    self.frame_expr(enter, d),
                    self.frame_expr(enter, d)
                )
            }
            2 => format!(
                "{{k: {}, n: {}}}",
                self.frame_expr(enter, d),
                self.frame_expr(enter, d)
            ),
            3 => format!("({}).length", self.frame_expr(enter, d)),
            _ => format!(
                "({} ? {} : {})",
                self.frame_expr(enter, d),
                self.frame_expr(enter, d),
                self.frame_expr(enter, d)
            ),
        }
    }

    fn frame_stmt(&mut self, enter: bool) -> String {
        match self.next() % 10 {
            7 => format!(
                "var c = {{k: {}, n: 1}}; delete c.{}; this.st.push(c);",
                self.frame_expr(enter, 1),
                self.pick(&["k", "n", "z"])
            ),
            8 => format!(
                "for (var i = 0; i < this.st.length && i < 3; i++) {{ if ({}) {{ {} }} x = x + i; }}",
                self.frame_expr(enter, 1),
                self.pick(&["break;", "continue;"])
            ),
            9 => "var o = {}, ks = ['a', 'b']; for (var j = 0; j < ks.length; j++) { if (this[ks[j]] !== undefined) { o[ks[j]] = this[ks[j]]; } } this.m.o = o;".to_string(),
            0 => format!("x = {};", self.frame_expr(enter, 2)),
            1 => format!("this.a = {};", self.frame_expr(enter, 2)),
            2 | 3 => format!("this.st.push({});", self.frame_expr(enter, 2)),
            4 => format!(
                "this.m[{}] = {};",
                self.frame_expr(enter, 1),
                self.frame_expr(enter, 1)
            ),
            5 if enter => format!(
                "this.a = this.h({}, f.getInput());",
                self.frame_expr(enter, 1)
            ),
            _ => format!("if ({}) {{ return; }}", self.frame_expr(enter, 1)),
        }
    }
}

#[test]
fn generated_frame_hooks_agree_with_boa() {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(generated_frames)
        .unwrap()
        .join()
        .unwrap();
}

fn generated_frames() {
    let seed = std::env::var("JS_FAST_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x2545_F491_4F6C_DD1D);
    let mut g = Gen(seed);
    let rounds: usize = std::env::var("JS_FAST_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150);
    let mut native = 0;
    for _ in 0..rounds {
        let enter: Vec<String> = (0..3).map(|_| g.frame_stmt(true)).collect();
        let exit: Vec<String> = (0..3).map(|_| g.frame_stmt(false)).collect();
        let src = format!(
            "{{a: 0, st: [1, 'x'], m: {{}}, \
             h: function(a, b) {{ if (b.length < 2) {{ return a; }} this.m[toHex(slice(b, 0, 2))] = a; return b.length; }}, \
             hex: function(n) {{ return '0x' + bigInt(n).toString(16); }}, \
             odd: function(v) {{ try {{ return decodeURIComponent('%' + v); }} catch (e) {{ return 'bad'; }} }}, \
             enter: function(f) {{ var x = 2; {} }}, \
             exit: function(r) {{ var x = 'r'; {} }}, \
             fault: function(log) {{}}, \
             result: function() {{ return [this.a, this.st, this.m]; }}}}",
            enter.join(" "),
            exit.join(" ")
        );
        if same_n(&src, 1_000) {
            native += 1;
        }
    }
    // Some of `enter`'s leaves call `odd`, a helper outside the subset, which hands the hooks
    // to boa where it is reached; a deleted key, a `bigInt` or a fraction may too.
    assert!(
        native > rounds / 10 || !super::enabled(),
        "only {native} of {rounds} stayed native"
    );
}
