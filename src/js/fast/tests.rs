//! The native evaluator against boa: the same scripts over the same synthetic hook stream give
//! the same result text (key order included) or the same error, whether the hooks run natively,
//! deoptimise halfway, or run in boa only.

use std::time::Duration;

use alloy_primitives::{Address, Bytes, U256};
use revm::bytecode::opcode::{
    OpCode, ADD, CALL, DUP1, JUMP, JUMPDEST, MSTORE, PUSH1, REVERT, SLOAD, SSTORE, SWAP2,
};
use revm::primitives::hardfork::SpecId;

use crate::js::host::{Hook, Host as Boa, TxContext};
use crate::js::lazy::Host;
use crate::js::objects::Shared;

pub(super) const STEPS: u64 = 3_000;
/// The opcodes the synthetic steps cycle through; 0x0c is unassigned (`log.op` names it as
/// geth does an undefined opcode).
const OPS: [u8; 12] = [
    PUSH1, ADD, MSTORE, SLOAD, SSTORE, CALL, JUMPDEST, JUMP, DUP1, 0x0c, SWAP2, REVERT,
];

/// Runs `src` over a fixed stream of steps, faults and frames; returns the result's JSON text
/// (or the error) and whether the native path was still on at the end.
pub(super) fn drive(src: &str, fast: bool) -> (Result<String, String>, bool) {
    drive_n(src, fast, STEPS)
}

pub(super) fn drive_n(src: &str, fast: bool, steps: u64) -> (Result<String, String>, bool) {
    let (out, active, _) = drive_all(src, fast, steps, "{\"limit\": 7}");
    (out, active)
}

/// [`drive_n`], and also whether the tracer never needed boa (made without it, `result`
/// included).
pub(super) fn drive_all(
    src: &str,
    fast: bool,
    steps: u64,
    config: &str,
) -> (Result<String, String>, bool, bool) {
    let shared = Shared::new();
    // 5 s for the usual stream; a longer one gets 2 ms a step, so that boa's side of a long
    // comparison (10,000 steps of string padding: about 5 s in a debug build on 2 cores) is
    // not cut short by the deadline, which is not what such a test compares.
    let timeout = Duration::from_secs(5).max(Duration::from_millis(steps.saturating_mul(2)));
    let spec = SpecId::PRAGUE;
    // The reference is boa's host alone, never one adopted from a native tracer.
    let host = if fast {
        Host::new(src, config, spec, timeout, shared.clone())
    } else {
        Boa::new(src, config, spec, timeout, shared.clone()).map(|b| Host::Boa(Box::new(b)))
    };
    let mut host = match host {
        Ok(h) => h,
        Err(e) => return (Err(e.to_string()), false, false),
    };
    if !fast {
        host.disable_fast();
    }
    let mut reader = Synthetic;
    let out = crate::js::call_with(&shared.clone(), None, &mut reader, |_| {
        for i in 0..steps {
            {
                let mut s = shared.step.borrow_mut();
                s.op = OPS[(i * 7 % 12) as usize];
                s.pc = i * 3 % 1000;
                s.gas = 1_000_000 - i * 11;
                s.cost = [3, 2, 100, 2100, 20000, 0][(i % 6) as usize];
                s.depth = 1 + (i / 400) % 3;
                s.refund = i / 100;
                s.error = (i % 997 == 5).then(|| "out of gas".to_string());
                // Views: four stack items (the last one past 2^53 now and then), 64 bytes of
                // memory (all overlay: there is no interpreter), the contract.
                s.stack_len = 4;
                s.saved = (0..4u64)
                    .map(|k| U256::from(i * 1_000 + k) << (if i % 5 == 0 { 200 } else { 0 }))
                    .collect();
                s.mem_len = 64;
                s.overlay_at = 0;
                s.overlay = (0..64u64).map(|k| ((i + k) % 256) as u8).collect();
                s.address = Address::with_last_byte((i % 7) as u8);
            }
            // As the inspector asks: before the opcode (cost and error unknown), then after.
            if !host.guard_skips(true) && !host.guard_skips(false) {
                host.call(Hook::Step)?;
            }
            if i % 997 == 5 {
                host.call(Hook::Fault)?;
            }
            if host.has_frames() && i % 250 == 0 {
                {
                    let mut f = shared.frame.borrow_mut();
                    f.kind = [OpCode::CALL, OpCode::STATICCALL, OpCode::CREATE][(i % 3) as usize];
                    f.gas = 50_000 + i;
                    f.from = Address::with_last_byte((i % 256) as u8);
                    f.to = Address::repeat_byte((i * 7 % 256) as u8);
                    f.input = Bytes::from((0..(i % 9) as u8).collect::<Vec<u8>>());
                    f.value = (i % 500 != 0).then(|| U256::from(i) * U256::from(1_000_000_007u64));
                }
                host.call(Hook::Enter)?;
                {
                    let mut r = shared.frame_result.borrow_mut();
                    r.gas_used = i % 777;
                    r.error = (i % 500 == 0).then(|| "execution reverted".to_string());
                    r.output = Bytes::from(vec![0xab; (i % 5) as usize]);
                }
                host.call(Hook::Exit)?;
            }
        }
        Ok(())
    });
    let active = host.fast_active();
    let out = out.and_then(|()| host.result(&tx_context()));
    let without_boa = matches!(host, Host::Native(_));
    (
        out.map(|v| v.get().to_string()).map_err(|e| e.to_string()),
        active,
        without_boa,
    )
}

/// `result`'s `ctx`: a failed call of a mined transaction.
fn tx_context() -> TxContext {
    TxContext {
        from: Address::repeat_byte(0x11),
        to: Address::repeat_byte(0x22),
        input: Bytes::from(vec![0xa9, 0x05, 0x9c, 0xbb, 1, 2]),
        gas: 90_000,
        gas_price: U256::from(7u8),
        value: U256::from(1_000_000_007u64),
        block: 19_000_000,
        coinbase: Address::repeat_byte(0x33),
        output: Bytes::from(vec![0x08, 0xc3, 0x79, 0xa0]),
        error: Some("execution reverted".to_string()),
        gas_used: 45_678,
        tx_index: Some(3),
        ..TxContext::default()
    }
}

/// A state that answers every read from the address and the slot.
struct Synthetic;

impl crate::js::objects::Db for Synthetic {
    fn balance(&mut self, a: Address) -> U256 {
        U256::from(a.0[19]) * U256::from(1_000_000u64)
    }
    fn nonce(&mut self, a: Address) -> u64 {
        u64::from(a.0[19])
    }
    fn code(&mut self, _: Address) -> Bytes {
        Bytes::new()
    }
    fn storage(&mut self, a: Address, slot: U256) -> U256 {
        slot * U256::from(3u8) + U256::from(a.0[19])
    }
    fn exists(&mut self, _: Address) -> bool {
        true
    }
}

/// Asserts both paths agree and that the native path stayed on, unless it is turned off
/// (`CHAINTRACE_JS_FAST=0`: both paths are then boa, and only their agreement is checked).
pub(super) fn stays_native(src: &str) -> bool {
    same(src) || !super::enabled()
}

/// Asserts both paths agree; returns whether the native path stayed on.
pub(super) fn same(src: &str) -> bool {
    same_n(src, STEPS)
}

pub(super) fn same_n(src: &str, steps: u64) -> bool {
    let (fast, active) = drive_n(src, true, steps);
    let (boa, _) = drive_n(src, false, steps);
    assert_eq!(fast, boa, "native and boa differ for {src}");
    active
}

pub(super) fn lib(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tracers/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

#[test]
fn library_counters_run_natively_and_match_boa() {
    for name in ["opcode_count.js", "gas_by_opcode.js"] {
        assert!(stays_native(&lib(name)), "{name} left the native path");
    }
}

#[test]
fn every_modelled_operator_matches_boa() {
    let src = r#"{
      a: [], m: {}, s: "", n: 0, t: null, cfg: null,
      setup: function(c) { this.cfg = JSON.parse(c); },
      step: function(log) {
        var op = log.op.toNumber(), name = log.op.toString();
        let c = log.getCost(), g = log.getGas();
        this.n += c * 2 - 1;
        this.n %= 1000003;
        this.m[name] = (this.m[name] || 0) + 1;
        this.a[op % 7] = (this.a[op % 7] | 0) ^ (g >>> 3) << 1;
        if (log.getError() !== undefined) { this.s = this.s + "e" + log.getPC() + log.getError(); }
        else if (op < 0x60 && !(op >= 0x50)) { this.t = { k: name, d: log.getDepth(), p: [op, c, true, null] }; }
        this.last = typeof this.t + (this.t == null ? "-" : this.t.k) + typeof undefined;
        const z = log.op.isPush() ? -c : +c; this.z = (this.z ?? 0) + z;
        this.w ||= 1; this.w &&= this.w + 1; this.q ??= "q";
        this.neg = ~op, this.sh = (op >> 1) + (-g >> 3) + (g << 20);
        this.div = g / 7 > 100 ? g - g % 1 : 0;
        this.lim = this.cfg.limit * 2 - log.getRefund();
        var tmp = { pc: log.getPC(), d: [log.getDepth()] };
        this.sumpc = (this.sumpc | 0) + tmp.pc + tmp.d[0] + tmp.d.length;
        this.cmp = ("PUSH" < name) + "" + (name >= "M") + (c <= 3) + (NaN < 1) + (1 != 2) + (null == undefined) + (0 === -0);
        this["k" + (log.getPC() % 5)] = op;
        this.m[log.getPC() % 13] = c;
        this.m[-1 - (log.getPC() % 3)] = 1;
        if (this.n > 1e6) { return; }
        this.after = (this.after | 0) + 1;
      },
      fault: function(log) { this.faults = (this.faults | 0) + 1; this.ferr = log.getError(); },
      enter: function(f) { this.calls = this.calls || {}; this.calls[f.getType()] = (this.calls[f.getType()] | 0) + f.getGas(); },
      exit: function(r) { this.gu = (this.gu | 0) + r.getGasUsed(); if (r.getError()) { this.errs = (this.errs || 0) + 1; } },
      result: function() { return this; }
    }"#;
    assert!(
        stays_native(src),
        "the operator script left the native path"
    );
}

#[test]
fn a_deoptimisation_midway_hands_over_to_boa_with_the_state_so_far() {
    // A fraction turned into text is not modelled: boa takes over at step 500.
    let frac = "{n: 0, m: {}, step: function(log) { this.n++; this.m[log.op.toString()] = this.n; \
                if (this.n === 500) { this.f = this.n / 3 + ''; } }, \
                fault: function() {}, result: function() { return this; }}";
    assert!(!same(frac));
    // A read through undefined throws in boa, with boa's message.
    let throws = "{n: 0, step: function(log) { this.n++; if (this.n === 300) { this.u.v = 1; } }, \
                  fault: function() {}, result: function() { return this.n; }}";
    let (fast, _) = drive(throws, true);
    assert!(
        fast.as_ref()
            .is_err_and(|e| e.starts_with("TypeError")
                && e.ends_with("in server-side tracer function 'step'")),
        "{fast:?}"
    );
    assert!(!same(throws));
    // A key found on Object.prototype, a string used as a number.
    for src in [
        "{m: {}, step: function(log) { this.x = this.m.constructor === undefined; }, fault: function() {}, result: function() { return this.x; }}",
        "{s: '5', step: function(log) { this.y = this.s * 2; }, fault: function() {}, result: function() { return this.y; }}",
    ] {
        assert!(!same(src), "{src}");
    }
}

#[test]
fn arrays_holes_and_objects_created_in_hooks_match_boa() {
    let src = "{arr: [], objs: {}, step: function(log) { \
               this.arr[log.op.toNumber() % 40] = log.getPC(); \
               var t = {a: log.getGas(), b: [1, 2]}; this.g = (this.g | 0) + t.b.length; \
               if (this.objs[log.op.toString()] === undefined) { this.objs[log.op.toString()] = {first: log.getPC(), seen: [log.getDepth()]}; } \
               this.len = this.arr.length; }, \
               fault: function() {}, result: function() { return this; }}";
    assert!(stays_native(src));
}

#[test]
fn state_shared_with_a_closure_is_written_back_in_place() {
    // `result` reads the counts through a variable captured at load time, not through `this`.
    let src = "(function() { var counts = {}; return {counts: counts, \
               step: function(log) { var k = log.op.toString(); this.counts[k] = (this.counts[k] | 0) + 1; }, \
               fault: function() {}, result: function() { return counts; }}; })()";
    // Not an object literal: never compiled, still correct.
    same(src);
    let src = "{counts: {}, setup: function() { var c = this.counts; this.view = function() { return c; }; }, \
               step: function(log) { var k = log.op.toString(); this.counts[k] = (this.counts[k] | 0) + 1; }, \
               fault: function() {}, result: function() { return this.view(); }}";
    assert!(stays_native(src));
}

/// A small deterministic generator of scripts inside (and at the edges of) the subset.
pub(super) struct Gen(pub(super) u64);

impl Gen {
    pub(super) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub(super) fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.next() % xs.len() as u64) as usize]
    }

    fn expr(&mut self, depth: u32) -> String {
        let leaf = depth == 0 || self.next().is_multiple_of(3);
        if leaf {
            return self
                .pick(&[
                    "0",
                    "1",
                    "-1",
                    "2.5",
                    "7",
                    "255",
                    "1e3",
                    "'a'",
                    "'PUSH1'",
                    "''",
                    "'10'",
                    "true",
                    "false",
                    "null",
                    "undefined",
                    "NaN",
                    "x",
                    "y",
                    "this.a",
                    "this.b",
                    "log.getPC()",
                    "log.getGas()",
                    "log.getCost()",
                    "log.getDepth()",
                    "log.op.toNumber()",
                    "log.op.toString()",
                    "log.op.isPush()",
                    "log.getError()",
                    "this.m[log.op.toString()]",
                    "this.arr[log.getPC() % 5]",
                    "this.o.k",
                    "log.stack.peek(0).toString(16)",
                    "log.stack.peek(3).toString()",
                    "log.stack.peek(1).toJSNumber()",
                    "log.memory.getUint(log.getPC() % 40).toString(36)",
                    "bigInt(log.getGas()).toString(16)",
                    "toHex(log.contract.getAddress())",
                    "toHex(db.getState(log.contract.getAddress(), toWord('0x' + log.getPC())))",
                    "'0123456789abcdef'.slice(log.getPC() % 7, -log.op.toNumber() % 5)",
                ])
                .to_string();
        }
        let d = depth - 1;
        match self.next() % 9 {
            0..=2 => {
                let op = self.pick(&[
                    "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", ">>>", "==", "!=", "===",
                    "!==", "<", "<=", ">", ">=", "&&", "||", "??",
                ]);
                format!("({} {op} {})", self.expr(d), self.expr(d))
            }
            3 => format!(
                "{}{}",
                self.pick(&["-", "+", "!", "~", "typeof ", "void "]),
                self.expr(d)
            ),
            4 => format!("({} ? {} : {})", self.expr(d), self.expr(d), self.expr(d)),
            5 => format!("{{k: {}, n: {}}}", self.expr(d), self.expr(d)),
            6 => format!("[{}, {}]", self.expr(d), self.expr(d)),
            7 => match self.next() % 3 {
                0 => format!("({}).length", self.expr(d)),
                1 => {
                    let on = match self.pick(&["y", "this.b", "'abcdef'", ""]) {
                        "" => self.expr(d),
                        v => v.to_string(),
                    };
                    format!("({on}).slice({}, {})", self.expr(d), self.expr(d))
                }
                _ => {
                    let on = match self.pick(&["x", "log.getPC()", "log.stack.peek(2)", ""]) {
                        "" => self.expr(d),
                        v => v.to_string(),
                    };
                    let radix = self.pick(&["", "16", "2", "36", "10", "37"]);
                    format!("({on}).toString({radix})")
                }
            },
            _ => format!("this.m[{}]", self.expr(d)),
        }
    }

    fn stmt(&mut self, depth: u32) -> String {
        match self.next() % 15 {
            11 if depth > 0 => format!(
                "for ({} i{depth} = 0; i{depth} < {}; i{depth}++) {{ if ({}) {{ {} }} {} }}",
                self.pick(&["var", "let"]),
                self.pick(&["0", "1", "3"]),
                self.expr(1),
                self.pick(&["break;", "continue;", "return;"]),
                self.stmt(depth - 1)
            ),
            12 => {
                let v = self.pick(&["y", "x", "this.b"]);
                let n = self.pick(&["4", "9"]);
                format!("while (({v}).length < {n}) {{ {v} = '0' + {v}; }}")
            }
            13 => format!(
                "delete {};",
                self.pick(&["this.o.k", "this.o.missing", "this.o.k", "this.m.k0"])
            ),
            14 if depth > 0 => format!(
                "do {{ {} }} while ({});",
                self.stmt(depth - 1),
                self.pick(&[
                    "false",
                    "0",
                    &format!("(j{depth} = (j{depth} | 0) + 1) < 3")
                ])
            ),
            10 => format!("y = this.arr.push({}, {});", self.expr(1), self.expr(1)),
            0 => format!("x = {};", self.expr(2)),
            1 => format!("y = {};", self.expr(2)),
            2 => format!("this.{} = {};", self.pick(&["a", "b"]), self.expr(2)),
            3 => format!(
                "this.{} {} {};",
                self.pick(&["a", "b"]),
                self.pick(&["+=", "-=", "*=", "|=", "||=", "&&=", "??="]),
                self.expr(2)
            ),
            4 => format!(
                "this.{}{};",
                self.pick(&["a", "b"]),
                self.pick(&["++", "--"])
            ),
            5 => format!("this.m[{}] = {};", self.expr(1), self.expr(2)),
            6 => format!("this.arr[log.getPC() % 5] = {};", self.expr(2)),
            7 if depth > 0 => format!(
                "if ({}) {{ {} }} else {{ {} }}",
                self.expr(2),
                self.stmt(depth - 1),
                self.stmt(depth - 1)
            ),
            8 => format!("this.o = {{k: {}}};", self.expr(1)),
            _ => format!("if ({}) {{ return; }}", self.expr(1)),
        }
    }
}

#[test]
fn generated_scripts_agree_with_boa() {
    // boa's parser and compiler recurse deeply in debug builds.
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(generated)
        .unwrap()
        .join()
        .unwrap();
}

fn generated() {
    let seed = std::env::var("JS_FAST_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x9E37_79B9_7F4A_7C15);
    let mut g = Gen(seed);
    let mut native = 0;
    let rounds: usize = std::env::var("JS_FAST_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150);
    for _ in 0..rounds {
        let body: Vec<String> = (0..4).map(|_| g.stmt(2)).collect();
        let src = format!(
            "{{a: 0, b: 'b', m: {{}}, arr: [], o: {{k: 1}}, \
             step: function(log, db) {{ var x = 1, y = 'y', j1 = 0, j2 = 0; {} }}, \
             fault: function(log) {{ this.f = log.getError(); }}, \
             result: function() {{ return [this.a, this.b, this.m, this.arr, this.o, this.f]; }}}}",
            body.join(" ")
        );
        // Few steps: a generated `this.b += this.b` doubles a string on every one.
        if same_n(&src, 16) {
            native += 1;
        }
    }
    // Many generated scripts stay native; the rest deoptimise somewhere (a method called on a
    // value of another type, a `delete` on an imported object, a `bigInt` in arithmetic) and
    // must still agree.
    assert!(
        native > rounds / 8 || !super::enabled(),
        "only {native} of {rounds} stayed native"
    );
}

#[test]
fn strings_built_on_every_step_match_boa_and_stay_bounded() {
    // Temporary strings are dropped after each hook; kept ones are stored; a string that
    // grows on every step ends in boa once the string table passes its limit.
    let src = "{s: '', n: 0, step: function(log) { var t = 'op' + log.op.toNumber() + ':' + log.getPC(); \
               this.n += t.length; this.last = t; if (log.getPC() % 100 === 0) { this.s = this.s + t + ','; } }, \
               fault: function() {}, result: function() { return [this.n, this.last, this.s.length, this.s.slice(0, 40)]; }}";
    assert!(stays_native(src));
    let growing = "{s: '', step: function(log) { this.s = this.s + 'abcdefghijklmnopqrstuvwxyz0123456789'; }, \
                   fault: function() {}, result: function() { return this.s.length; }}";
    let (fast, _) = drive(growing, true);
    assert_eq!(fast, Ok((36 * STEPS).to_string()));
}

#[test]
fn push_is_native_only_while_the_builtin_is_in_place() {
    // geth's own example, natively; `push` returns the new length.
    let src = "{opcodes: [], n: 0, step: function(log) { this.n = this.opcodes.push(log.op.toString(), log.getPC()); }, \
               fault: function() {}, result: function() { return [this.n, this.opcodes.slice(0, 6)]; }}";
    assert!(stays_native(src));
    // A script that replaces `Array.prototype.push` stays in boa.
    let replaced = "{opcodes: [], setup: function() { Array.prototype.push = function(x) { this[this.length] = 'pushed ' + x; return 0; }; }, \
                    step: function(log) { this.opcodes.push(log.op.toString()); }, \
                    fault: function() {}, result: function() { return this.opcodes.slice(0, 3); }}";
    assert!(!same(replaced));
    let (out, _) = drive(replaced, true);
    assert_eq!(
        out,
        Ok(r#"["pushed PUSH1","pushed JUMP","pushed MSTORE"]"#.to_string())
    );
    // An array with its own `push` property hands over to boa.
    let own = "{a: [], setup: function() { this.a.push = function() { return 'own'; }; }, \
               step: function(log) { this.r = this.a.push(1); }, fault: function() {}, result: function() { return this.r; }}";
    assert!(!same(own));
}

impl Gen {
    /// An expression without effects: getters, constants, the guard's locals, operators.
    fn pure_expr(&mut self, depth: u32) -> String {
        if depth == 0 || self.next().is_multiple_of(3) {
            return self
                .pick(&[
                    "0",
                    "1",
                    "3",
                    "0x54",
                    "0x60",
                    "'PUSH1'",
                    "'MSTORE'",
                    "''",
                    "undefined",
                    "null",
                    "p",
                    "q",
                    "log.getPC()",
                    "log.getGas()",
                    "log.getCost()",
                    "log.getDepth()",
                    "log.getRefund()",
                    "log.op.toNumber()",
                    "log.op.toString()",
                    "log.op.isPush()",
                    "log.getError()",
                ])
                .to_string();
        }
        let d = depth - 1;
        match self.next() % 5 {
            0..=2 => {
                let op = self.pick(&[
                    "+", "-", "%", "&", "|", "==", "!=", "===", "!==", "<", ">=", "&&", "||", "??",
                ]);
                format!("({} {op} {})", self.pure_expr(d), self.pure_expr(d))
            }
            3 => format!("{}{}", self.pick(&["!", "-", "typeof "]), self.pure_expr(d)),
            _ => format!(
                "({} ? {} : {})",
                self.pure_expr(d),
                self.pure_expr(d),
                self.pure_expr(d)
            ),
        }
    }

    /// A statement a guard may hold.
    fn guard_stmt(&mut self) -> String {
        match self.next() % 5 {
            0 => format!("p = {};", self.pure_expr(2)),
            1 => format!("var q = {};", self.pure_expr(2)),
            2 => format!("if ({}) return;", self.pure_expr(2)),
            _ => format!("if ({}) {{ return; }}", self.pure_expr(2)),
        }
    }
}

#[test]
fn early_returns_decided_natively_agree_with_boa() {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(guarded)
        .unwrap()
        .join()
        .unwrap();
}

/// Scripts boa must run (a loop), whose `step` starts with early returns: with them decided
/// natively, and in boa only, the same steps are recorded.
fn guarded() {
    let seed = std::env::var("JS_FAST_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x2545_F491_4F6C_DD1D);
    let rounds: usize = std::env::var("JS_FAST_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(120);
    let mut g = Gen(seed);
    for _ in 0..rounds {
        let prefix: Vec<String> = (0..3).map(|_| g.guard_stmt()).collect();
        let src = format!(
            "{{n: 0, seen: {{}}, \
             step: function(log) {{ var p = 1; {} \
             for (var i = 0; i < 1; i++) {{ this.n++; }} \
             var k = log.op.toString() + ':' + log.getPC() % 7 + ':' + log.getError(); \
             this.seen[k] = (this.seen[k] || 0) + log.getCost(); }}, \
             fault: function(log) {{ this.f = (this.f || 0) + 1; }}, \
             result: function() {{ return [this.n, this.seen, this.f]; }}}}",
            prefix.join(" ")
        );
        same_n(&src, 400);
    }
    // A guard that returns for all but two opcodes, as the library's storage tracer has.
    let lib = "{n: 0, step: function(log) { if (log.getError() !== undefined) { return; } \
               var op = log.op.toNumber(); if (op !== 0x54 && op !== 0x55) { return; } \
               for (var i = 0; i < 1; i++) { this.n += op; } }, \
               fault: function() {}, result: function() { return this.n; }}";
    same(lib);
    // `setup` replaces `step`: as in geth, which reads the hooks before `setup` and calls
    // those, the literal's `step` still runs — natively (the first compiles whole) or in boa
    // behind its guard (the second) — and both return at once on every opcode.
    for step in [
        "function(log) { return; }",
        "function(log) { if (log.getPC() >= 0) return; for (;;) {} }",
    ] {
        let replaced = format!(
            "{{n: 0, setup: function() {{ this.step = function(log) {{ for (var i = 0; i < 1; i++) {{ this.n++; }} }}; }}, \
             step: {step}, fault: function() {{}}, result: function() {{ return this.n; }}}}"
        );
        let (out, _) = drive(&replaced, true);
        assert_eq!(out, Ok("0".to_string()), "{step}");
        same(&replaced);
    }
    // `setup` makes `step` an accessor: what runs is still the literal's `step`.
    let accessor = "{n: 0, setup: function() { var f = function(log) { for (var i = 0; i < 1; i++) { this.n++; } }; \
                    Object.defineProperty(this, 'step', {get: function() { return f; }}); }, \
                    step: function(log) { if (log.getPC() >= 0) return; for (;;) {} }, \
                    fault: function() {}, result: function() { return this.n; }}";
    let (out, _) = drive(accessor, true);
    assert_eq!(out, Ok("0".to_string()));
    same(accessor);
    // A hook replaces it halfway.
    let later = "{n: 0, step: function(log) { if (log.op.toNumber() !== 0x60) return; \
                 for (var i = 0; i < 1; i++) { this.n++; } if (this.n === 10) { this.step = function() { this.n += 1000; }; } }, \
                 fault: function() {}, result: function() { return this.n; }}";
    same(later);
}
