//! The JavaScript tracer host against geth's semantics: geth's own JS tracer examples (with
//! geth's answers), ctx fields, db reads after in-tx writes, memory padding, hook order, errors
//! and the timeout. Each test runs a tiny contract offline through the real executor.
#![cfg(feature = "js")]

use std::time::{Duration, Instant};

use alloy_primitives::{address, hex, Address, Bytes, TxKind, U256};
use chaintrace::replay::{trace, BlockInfo, EvmEnv, ReplayTx, TraceResult, TracedTx};
use chaintrace::source::{AccountData, StateSnapshot};
use chaintrace::trace::TracerSpec;
use revm::context::TxEnv;
use revm::primitives::hardfork::SpecId;
use serde_json::{json, Value};

const SENDER: Address = address!("00000000000000000000000000000000000000f0");
const CONTRACT: Address = address!("00000000000000000000000000000000000000aa");
const CALLEE: Address = address!("00000000000000000000000000000000000000bb");

struct Run {
    code: Vec<u8>,
    callee: Vec<u8>,
    value: u64,
    gas_price: u128,
    priority: Option<u128>,
    base_fee: u64,
    timeout: Duration,
    config: Option<Value>,
    data: Vec<u8>,
}

impl Default for Run {
    fn default() -> Self {
        Run {
            code: hex!("6001600100").to_vec(),
            callee: Vec::new(),
            value: 0,
            gas_price: 100_000,
            priority: None,
            base_fee: 0,
            timeout: Duration::from_secs(5),
            config: None,
            data: Vec::new(),
        }
    }
}

impl Run {
    fn code(code: &str) -> Self {
        Run {
            code: hex::decode(code).unwrap(),
            ..Default::default()
        }
    }

    fn traced(&self, script: &str) -> Result<TracedTx, String> {
        let spec = TracerSpec::js(script, self.config.as_ref(), self.timeout)
            .map_err(|e| e.to_string())?;
        let mut snap = StateSnapshot::complete();
        let acct = |balance: u64, code: &[u8]| AccountData {
            balance: U256::from(balance),
            nonce: 0,
            code: Bytes::copy_from_slice(code),
        };
        snap.insert_account(SENDER, acct(10_000_000_000_000_000, &[]));
        snap.insert_account(CONTRACT, acct(7, &self.code));
        snap.insert_account(CALLEE, acct(0, &self.callee));
        let info = BlockInfo {
            number: 1,
            timestamp: 1,
            gas_limit: 30_000_000,
            base_fee: Some(self.base_fee),
            ..Default::default()
        };
        let env = EvmEnv::new(SpecId::CANCUN, 1, &info);
        let tx = ReplayTx {
            hash: Default::default(),
            sender: SENDER,
            env: TxEnv {
                tx_type: if self.priority.is_some() { 2 } else { 0 },
                caller: SENDER,
                gas_limit: 100_000,
                gas_price: self.gas_price,
                gas_priority_fee: self.priority,
                kind: TxKind::Call(CONTRACT),
                value: U256::from(self.value),
                data: Bytes::from(self.data.clone()),
                nonce: 0,
                chain_id: Some(1),
                ..Default::default()
            },
            authorities: Vec::new(),
            raw: Bytes::new(),
            deposit: None,
            rollup: Default::default(),
        };
        let mut db = snap.db();
        trace(&mut db, &env, &tx, &spec, 0).map_err(|e| e.to_string())
    }

    fn run(&self, script: &str) -> Result<Value, String> {
        match self.traced(script)?.result {
            TraceResult::Js(v) => Ok(serde_json::from_str(v.get()).unwrap()),
            _ => panic!("not a JS result"),
        }
    }
}

fn ok(script: &str) -> Value {
    Run::default().run(script).unwrap()
}

fn word(bytes: &[u8]) -> Value {
    let mut m = serde_json::Map::new();
    for (i, b) in bytes.iter().enumerate() {
        m.insert(i.to_string(), json!(b));
    }
    Value::Object(m)
}

// ---- geth's own examples (eth/tracers/js/tracer_test.go) ----

#[test]
fn geth_step_counter_counts_three() {
    let v = ok("{count: 0, step: function() { this.count += 1; }, fault: function() {}, result: function() { return this.count; }}");
    assert_eq!(v, json!(3));
}

#[test]
fn geth_opcode_names() {
    let v = ok("{opcodes: [], step: function(log) { this.opcodes.push(log.op.toString()); }, fault: function() {}, result: function() { return this.opcodes; }}");
    assert_eq!(v, json!(["PUSH1", "PUSH1", "STOP"]));
}

#[test]
fn geth_stack_lengths() {
    let v = ok("{depths: [], step: function(log) { this.depths.push(log.stack.length()); }, fault: function() {}, result: function() { return this.depths; }}");
    assert_eq!(v, json!([0, 1, 2]));
}

#[test]
fn geth_to_word_pads_left() {
    let v = ok("{res: null, step: function(log) {}, fault: function() {}, result: function() { return toWord('0xffaa') }}");
    let mut w = [0u8; 32];
    w[30] = 255;
    w[31] = 170;
    assert_eq!(v, word(&w));
}

#[test]
fn geth_gas_price_and_gas_used() {
    let v = ok("{depths: [], step: function() {}, fault: function() {}, result: function(ctx) { return ctx.gasPrice+'.'+ctx.gasUsed; }}");
    assert_eq!(v, json!("100000.21006"));
}

#[test]
fn geth_buffers_round_trip_through_to_address() {
    let want = word(CONTRACT.as_slice());
    for script in [
        "{res: null, step: function(log) { var address = log.contract.getAddress(); this.res = toAddress(address); }, fault: function() {}, result: function() { return this.res }}",
        "{res: null, step: function(log) { var address = Array.prototype.slice.call(log.contract.getAddress()); this.res = toAddress(address); }, fault: function() {}, result: function() { return this.res }}",
        "{res: null, step: function(log) { this.res = toAddress('0x00000000000000000000000000000000000000aa'); }, fault: function() {}, result: function() { return this.res }}",
    ] {
        assert_eq!(ok(script), want, "{script}");
    }
}

fn fails(run: &Run, script: &str) -> String {
    run.run(script).expect_err("the trace must fail")
}

#[test]
fn geth_memory_slice_bad_bounds() {
    let e = fails(&Run::default(), "{depths: [], step: function(log) { this.depths.push(log.memory.slice(-1,-2)); }, fault: function() {}, result: function() { return this.depths; }}");
    assert_eq!(
        e,
        "tracer accessed out of bound memory: offset -1, end -2    in server-side tracer function 'step'"
    );
}

#[test]
fn geth_stack_peek_bad_index() {
    let e = fails(&Run::default(), "{depths: [], step: function(log) { this.depths.push(log.stack.peek(-1)); }, fault: function() {}, result: function() { return this.depths; }}");
    assert_eq!(
        e,
        "tracer accessed out of bound stack: size 0, index -1    in server-side tracer function 'step'"
    );
}

#[test]
fn geth_memory_get_uint_bad_offset() {
    let e = fails(&Run::default(), "{ depths: [], step: function(log, db) { this.depths.push(log.memory.getUint(-64));}, fault: function() {}, result: function() { return this.depths; }}");
    assert_eq!(
        e,
        "tracer accessed out of bound memory: available 0, offset -64, size 32    in server-side tracer function 'step'"
    );
}

#[test]
fn geth_enter_exit_counts_and_gas() {
    // CALL(gas 1000) into a callee of 400 JUMPDESTs: geth's TestEnterExit numbers.
    let run = Run {
        code: hex::decode(
            "60006000600060006000 73 00000000000000000000000000000000000000bb 6103e8 f1 00"
                .replace(' ', ""),
        )
        .unwrap(),
        callee: [vec![0x5b; 400], vec![0x00]].concat(),
        ..Default::default()
    };
    let v = run.run("{enters: 0, exits: 0, enterGas: 0, gasUsed: 0, step: function() {}, fault: function() {}, result: function() { return {enters: this.enters, exits: this.exits, enterGas: this.enterGas, gasUsed: this.gasUsed} }, enter: function(frame) { this.enters++; this.enterGas = frame.getGas(); }, exit: function(res) { this.exits++; this.gasUsed = res.getGasUsed(); }}").unwrap();
    assert_eq!(
        v,
        json!({"enters": 1, "exits": 1, "enterGas": 1000, "gasUsed": 400})
    );
}

// ---- bad scripts fail before replay ----

#[test]
fn bad_scripts_fail_before_replay() {
    let cases = [
        ("{step: function() {", "SyntaxError"),
        ("{step: function() {}, fault: function() {}}", "trace object must expose a function result()"),
        ("{step: function() {}, result: function() {}}", "trace object must expose a function fault()"),
        (
            "{fault: function() {}, result: function() {}, enter: function() {}}",
            "trace object must expose either both or none of enter() and exit()",
        ),
        (
            "{fault: function() {}, result: function() {}, exit: function() {}}",
            "trace object must expose either both or none of enter() and exit()",
        ),
        (
            "{setup: function() { throw new Error('no config') }, fault: function() {}, result: function() {}}",
            "Error: no config    in server-side tracer function 'setup'",
        ),
    ];
    for (script, want) in cases {
        let e = TracerSpec::js(script, None, Duration::from_secs(5))
            .err()
            .unwrap_or_else(|| panic!("{script} was accepted"))
            .to_string();
        assert!(e.contains(want), "{script}: {e}");
    }
}

#[test]
fn setup_receives_the_config_as_a_json_string() {
    let run = Run {
        config: Some(json!({"x": 1})),
        ..Default::default()
    };
    let v = run.run("{setup: function(c) { this.t = typeof c; this.x = JSON.parse(c).x; }, fault: function() {}, result: function() { return [this.t, this.x]; }}").unwrap();
    assert_eq!(v, json!(["string", 1]));
    let v = ok("{setup: function(c) { this.c = c; }, fault: function() {}, result: function() { return this.c; }}");
    assert_eq!(v, json!("{}"));
}

// ---- exceptions ----

#[test]
fn an_exception_fails_the_trace_and_names_the_function() {
    for hook in ["step", "fault", "result"] {
        // REVERT at once, so fault runs too.
        let run = Run::code("60006000fd");
        let body = "function() { throw new Error('boom'); }";
        let noop = "function() {}";
        let script = format!(
            "{{step: {}, fault: {}, result: {}}}",
            if hook == "step" { body } else { noop },
            if hook == "fault" { body } else { noop },
            if hook == "result" {
                body
            } else {
                "function() { return 1; }"
            },
        );
        let e = fails(&run, &script);
        assert_eq!(
            e,
            format!("Error: boom    in server-side tracer function '{hook}'")
        );
    }
}

#[test]
fn host_errors_cannot_be_caught_by_the_script() {
    // geth interrupts the VM for these: try/catch does not help.
    let e = fails(&Run::default(), "{step: function(log) { try { log.stack.peek(5); } catch (e) {} }, fault: function() {}, result: function() { return 1; }}");
    assert!(
        e.starts_with("tracer accessed out of bound stack: size 0, index 5"),
        "{e}"
    );
}

#[test]
fn an_exception_never_changes_execution() {
    let run = Run::code("602a60015500"); // SSTORE(1, 42)
    let plain = run
        .traced("{fault: function() {}, result: function() { return 0; }}")
        .unwrap();
    assert!(plain.outcome.success);
    let e = fails(
        &run,
        "{step: function() { throw 'x'; }, fault: function() {}, result: function() { return 0; }}",
    );
    assert_eq!(e, "x    in server-side tracer function 'step'");
}

// ---- timeout ----

fn times_out(script: &str) {
    let run = Run {
        timeout: Duration::from_millis(500),
        ..Default::default()
    };
    let t = Instant::now();
    let e = fails(&run, script);
    let took = t.elapsed();
    assert!(e.contains("execution timeout"), "{e}");
    // Bounded, with room for a loaded machine: without the limit these run for minutes.
    assert!(took < Duration::from_secs(10), "took {took:?}");
}

#[test]
fn timeout_stops_an_endless_step() {
    times_out("{step: function() { while(1) {} }, fault: function() {}, result: function() { return 1; }}");
}

#[test]
fn timeout_stops_an_endless_result() {
    times_out("{fault: function() {}, result: function() { for (;;) {} }}");
}

#[test]
fn timeout_stops_an_endless_enter() {
    let run = Run {
        code: hex::decode("600060006000600060006000355af100").unwrap(),
        timeout: Duration::from_millis(500),
        ..Default::default()
    };
    let t = Instant::now();
    let e = fails(&run, "{enter: function() { var i = 0; do { i++; } while (true); }, exit: function() {}, fault: function() {}, result: function() { return 1; }}");
    assert!(e.contains("execution timeout"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(10));
}

#[test]
fn timeout_stops_a_helper_of_enter_the_native_path_cannot_inline() {
    // `this.name(…)` is inlined natively only without loops and recursion; these run in boa
    // under the budget, an endless loop and an exponential recursion alike.
    for script in [
        "{spin: function() { while (true) {} }, enter: function(f) { this.spin(); }, exit: function() {}, fault: function() {}, result: function() { return 1; }}",
        "{fib: function(n) { return n < 2 ? n : this.fib(n - 1) + this.fib(n - 2); }, enter: function(f) { this.r = this.fib(60); }, exit: function() {}, fault: function() {}, result: function() { return 1; }}",
    ] {
        let run = Run {
            code: hex::decode("600060006000600060006000355af100").unwrap(),
            timeout: Duration::from_millis(500),
            ..Default::default()
        };
        let t = Instant::now();
        let e = fails(&run, script);
        assert!(e.contains("execution timeout"), "{e}");
        assert!(t.elapsed() < Duration::from_secs(10));
    }
}

#[test]
fn timeout_stops_a_loop_inside_a_builtin_callback() {
    times_out("{step: function() { [1].forEach(function() { while(true) {} }); }, fault: function() {}, result: function() { return 1; }}");
}

#[test]
fn timeout_stops_endless_setup_before_replay() {
    let e = TracerSpec::js(
        "{setup: function() { while(1) {} }, fault: function() {}, result: function() {}}",
        None,
        Duration::from_millis(300),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("execution timeout"), "{e}");
}

// ---- ctx ----

#[test]
fn ctx_fields_follow_geth() {
    // EIP-1559: maxFee 100, tip cap 10, base fee 95 → effective tip 5.
    let run = Run {
        code: hex::decode("602a60005260206000f3").unwrap(), // return word 42
        value: 3,
        gas_price: 100,
        priority: Some(10),
        base_fee: 95,
        data: vec![0xde, 0xad],
        ..Default::default()
    };
    let v = run.run("{fault: function() {}, result: function(ctx) { return {type: ctx.type, from: toHex(ctx.from), to: toHex(ctx.to), input: toHex(ctx.input), value: ctx.value, gas: ctx.gas, gasPrice: ctx.gasPrice, gasUsed: ctx.gasUsed, block: ctx.block, coinbase: toHex(ctx.coinbase), output: toHex(ctx.output), error: ctx.error, hasError: 'error' in ctx}; }}").unwrap();
    assert_eq!(
        v,
        json!({
            "type": "CALL",
            "from": "0x00000000000000000000000000000000000000f0",
            "to": "0x00000000000000000000000000000000000000aa",
            "input": "0xdead",
            "value": "3",
            "gas": 100000,
            "gasPrice": "5",
            "gasUsed": 21000 + 16 * 2 + 3 + 3 + 6 + 3 + 3,
            "block": 1,
            "coinbase": "0x0000000000000000000000000000000000000000",
            "output": format!("0x{}{:02x}", "00".repeat(31), 42),
            "hasError": false
        })
    );
}

#[test]
fn ctx_error_and_output_on_revert() {
    let run = Run::code("60ff60005360016000fd"); // revert with one byte 0xff
    let v = run.run("{fault: function() {}, result: function(ctx) { return [ctx.error, toHex(ctx.output)]; }}").unwrap();
    assert_eq!(v, json!(["execution reverted", "0xff"]));
}

#[test]
fn ctx_gas_used_includes_the_refund() {
    // SSTORE(1, 0) on a slot that holds 1 is not possible without pre-state; set then clear it:
    // the refund of the clear is in the receipt's gasUsed, as ctx.gasUsed must be.
    let run = Run::code("600160015560006001550000");
    let traced = run
        .traced("{fault: function() {}, result: function(ctx) { return ctx.gasUsed; }}")
        .unwrap();
    let TraceResult::Js(v) = &traced.result else {
        panic!()
    };
    assert_eq!(v.get(), traced.outcome.gas_used.to_string());
}

// ---- db ----

#[test]
fn db_reads_reflect_writes_made_earlier_in_the_tx() {
    // SSTORE(1, 42) then JUMPDEST; db.getState at the JUMPDEST sees 42; the balance includes the
    // tx's value; the result's db sees the post-transaction state.
    let run = Run {
        code: hex::decode("602a600155 5b 00".replace(' ', "")).unwrap(),
        value: 5,
        ..Default::default()
    };
    let v = run.run("{seen: null, step: function(log, db) { if (log.op.toString() == 'JUMPDEST') { var a = log.contract.getAddress(); this.seen = [toHex(db.getState(a, toWord('0x01'))), db.getBalance(a), db.getNonce(a), db.exists(a), toHex(db.getCode(a)).length]; } }, fault: function() {}, result: function(ctx, db) { return {step: this.seen, after: toHex(db.getState(ctx.to, toWord('0x01')))}; }}").unwrap();
    let w42 = format!("0x{}2a", "00".repeat(31));
    assert_eq!(
        v,
        json!({"step": [w42, "12", 0, true, 2 + 2 * 7], "after": w42})
    );
}

#[test]
fn fault_reads_db_alike_with_and_without_step() {
    // SSTORE(1, 42), then JUMP to 0 (no JUMPDEST): `fault` reads the slot through `db`. Without
    // `step` the frame runs with no per-opcode hook; what `fault` sees must not change.
    let run = Run::code("602a600155600056");
    let fault = "fault: function(log, db) { this.r = [log.getError(), log.op.toString(), \
                 toHex(db.getState(log.contract.getAddress(), toWord('0x01')))]; }, \
                 result: function() { return this.r; }";
    let plain = run.run(&format!("{{r: null, {fault}}}")).unwrap();
    let stepped = run
        .run(&format!("{{r: null, step: function() {{}}, {fault}}}"))
        .unwrap();
    let w42 = format!("0x{}2a", "00".repeat(31));
    assert_eq!(plain, json!(["invalid jump destination", "JUMP", w42]));
    assert_eq!(plain, stepped);
}

#[test]
fn db_rejects_strings() {
    let e = fails(&Run::default(), "{step: function(log, db) { db.getBalance('0x00000000000000000000000000000000000000aa'); }, fault: function() {}, result: function() { return 1; }}");
    assert!(e.starts_with("Error: invalid buffer type"), "{e}");
}

// ---- memory and stack views ----

#[test]
fn memory_slice_zero_pads_up_to_one_mebibyte() {
    // MSTORE(0, 0xff) then JUMPDEST (memory is 32 bytes there).
    let run = Run::code("60ff6000525b00");
    let v = run.run("{r: null, step: function(log) { if (log.op.toNumber() == 0x5b) { var s = log.memory.slice(16, 48); this.r = [log.memory.length(), s.length, s[15], s[16], log.memory.getUint(0), log.memory.slice(0, 32 + 1024 * 1024).length]; } }, fault: function() {}, result: function() { return this.r; }}").unwrap();
    assert_eq!(v, json!([32, 32, 255, 0, "255", 32 + 1024 * 1024]));
    let e = fails(&run, "{step: function(log) { if (log.op.toNumber() == 0x5b) { log.memory.slice(0, 33 + 1024 * 1024); } }, fault: function() {}, result: function() { return 1; }}");
    assert_eq!(
        e,
        "reached limit for padding memory slice: 1048577    in server-side tracer function 'step'"
    );
}

#[test]
fn step_sees_the_state_before_the_opcode() {
    // PUSH1 2 PUSH1 3 ADD MSTORE(0) ... : at ADD the stack is [2, 3]; at MSTORE memory is empty.
    let run = Run::code("600260030160005200");
    let v = run.run("{r: [], step: function(log) { var s = []; for (var i = 0; i < log.stack.length(); i++) s.push(log.stack.peek(i)); this.r.push([log.op.toString(), log.getPC(), log.getCost(), log.getDepth(), s, log.memory.length()]); }, fault: function() {}, result: function() { return this.r; }}").unwrap();
    assert_eq!(
        v,
        json!([
            ["PUSH1", 0, 3, 1, [], 0],
            ["PUSH1", 2, 3, 1, ["2"], 0],
            ["ADD", 4, 3, 1, ["3", "2"], 0],
            ["PUSH1", 5, 3, 1, ["5"], 0],
            ["MSTORE", 7, 6, 1, ["0", "5"], 0],
            ["STOP", 8, 0, 1, [], 32]
        ])
    );
}

#[test]
fn mstore_over_existing_memory_shows_the_old_bytes() {
    // MSTORE(0, 1) then MSTORE(0, 2): the second step still sees 1.
    let run = Run::code("6001600052600260005200");
    let v = run.run("{r: [], step: function(log) { if (log.op.toString() == 'MSTORE') this.r.push(log.memory.slice(0, 32)[31]); }, fault: function() {}, result: function() { return this.r; }}").unwrap();
    assert_eq!(v, json!([0, 1]));
}

#[test]
fn sstore_cost_and_refund_follow_geth() {
    // SSTORE(1, 1) cold from zero: 22100; then SSTORE(1, 0): 100 and a 19900 refund.
    let run = Run::code("6001600155600060015500");
    let v = run.run("{r: [], step: function(log) { this.r.push([log.op.toString(), log.getCost(), log.getRefund()]); }, fault: function() {}, result: function() { return this.r; }}").unwrap();
    assert_eq!(
        v,
        json!([
            ["PUSH1", 3, 0],
            ["PUSH1", 3, 0],
            ["SSTORE", 22100, 0],
            ["PUSH1", 3, 0],
            ["PUSH1", 3, 0],
            ["SSTORE", 100, 0],
            ["STOP", 0, 19900]
        ])
    );
}

// ---- step / fault order ----

#[test]
fn revert_gets_step_then_fault() {
    let run = Run::code("60006000fd");
    let v = run.run("{r: [], step: function(log) { this.r.push('step ' + log.op.toString() + ' ' + log.getError()); }, fault: function(log) { this.r.push('fault ' + log.op.toString() + ' ' + log.getError()); }, result: function() { return this.r; }}").unwrap();
    assert_eq!(
        v,
        json!([
            "step PUSH1 undefined",
            "step PUSH1 undefined",
            "step REVERT undefined",
            "fault REVERT execution reverted"
        ])
    );
}

#[test]
fn a_stack_underflow_is_a_step_with_an_error_and_no_fault() {
    let run = Run::code("01");
    let v = run.run("{r: [], step: function(log) { this.r.push('step ' + log.op.toString() + ' ' + log.getError()); }, fault: function(log) { this.r.push('fault'); }, result: function() { return this.r; }}").unwrap();
    assert_eq!(v, json!(["step ADD stack underflow (0 <=> 2)"]));
}

#[test]
fn fault_runs_without_a_step_function() {
    let run = Run::code("fe");
    let v = run.run("{r: [], fault: function(log) { this.r.push(log.op.toString() + ': ' + log.getError()); }, result: function() { return this.r; }}").unwrap();
    assert_eq!(v, json!(["INVALID: invalid opcode: INVALID"]));
}

// ---- globals and bigInt ----

#[test]
fn globals_follow_geth() {
    let v = ok("{fault: function() {}, result: function() { return [isPrecompiled(toAddress('0x01')), isPrecompiled(toAddress('0x0a')), isPrecompiled(toAddress('0x0b')), toHex(toContract(toAddress('0x6ac7ea33f8831ea9dcc53393aaa88b25a785dbf0'), 1)), toHex(toContract2(toAddress('0x0000000000000000000000000000000000000000'), '0x00', new Uint8Array([0x00]))), toHex(slice(new Uint8Array([1,2,3,4]), 1, 3))]; }}");
    assert_eq!(
        v,
        json!([
            true,
            true,
            false,
            "0x343c43a37d37dff08ae8c4a11544c718abb4fcf8",
            "0x4d1a2e2bb4f88f0250f26ffff098b0b30b26bf38",
            "0x0203"
        ])
    );
}

#[test]
fn big_int_has_big_integer_js_semantics() {
    let v = ok("{fault: function() {}, result: function() { var a = bigInt('115792089237316195423570985008687907853269984665640564039457584007913129639935'); return [a.add(1).toString(16), bigInt(7).multiply(6), bigInt(-7).divide(2), bigInt(-7).mod(2), bigInt(5).compare(9), bigInt(9).compare('9'), bigInt('ff', 16).equals(255), bigInt(10).subtract(bigInt(3)).isZero(), bigInt(0).isZero(), bigInt(255).toString(2), bigInt(3).pow(4), bigInt(1).shiftLeft(70), bigInt(12) + 1, JSON.stringify({v: bigInt(12)})]; }}");
    assert_eq!(
        v,
        json!([
            format!("1{}", "0".repeat(64)),
            "42",
            "-3",
            "-1",
            -1,
            0,
            true,
            false,
            true,
            "11111111",
            "81",
            "1180591620717411303424",
            13,
            "{\"v\":\"12\"}"
        ])
    );
}

// ---- the result's text ----

#[test]
fn result_text_keeps_javascript_key_order_number_forms_and_go_escaping() {
    // geth prints JSON.stringify's text: integer keys ascending, then names in insertion order;
    // numbers in JavaScript's form; `<`, `>`, `&` escaped as Go's encoder does.
    let t = Run::default()
        .traced(
            "{counts: {}, step: function(log) { var k = log.op.toString(); this.counts[k] = (this.counts[k] || 0) + 1; }, \
             fault: function() {}, \
             result: function() { return {z: 1, a: 2, 10: 3, 2: 4, big: 1e21, frac: 0.1, s: '<a&b>', counts: this.counts}; }}",
        )
        .unwrap();
    let TraceResult::Js(v) = &t.result else {
        panic!("not a JS result")
    };
    assert_eq!(
        v.get(),
        r#"{"2":4,"10":3,"z":1,"a":2,"big":1e+21,"frac":0.1,"s":"\u003ca\u0026b\u003e","counts":{"PUSH1":2,"STOP":1}}"#
    );
}

// ---- db in `step` sees the state before the opcode (geth calls OnOpcode before executing) ----

/// Runs `code` with a tracer that, at each step of `op` and in `enter`/`exit`, records what
/// `probe` (a JS expression over `db`, `a` = the contract's address) returns.
fn probe_at(code: &str, op: &str, probe: &str) -> Value {
    let run = Run {
        code: hex::decode(code.replace(' ', "")).unwrap(),
        value: 5,
        ..Default::default()
    };
    let script = format!(
        "{{seen: [], \
          step: function(log, db) {{ if (log.op.toString() == '{op}') {{ var a = log.contract.getAddress(); this.seen.push(['step', {probe}]); }} }}, \
          enter: function(f) {{ this.seen.push(['enter']); }}, \
          exit: function(r) {{ this.seen.push(['exit']); }}, \
          fault: function() {{}}, \
          result: function(ctx, db) {{ var a = toAddress('{CONTRACT}'); this.seen.push(['result', {probe}]); return this.seen; }}}}"
    );
    run.run(&script).unwrap()
}

#[test]
fn db_at_sstore_shows_the_slot_before_the_write() {
    // SSTORE(1, 42); SSTORE(1, 43): the first step sees 0, the second 42, `result` 43.
    let v = probe_at(
        "602a600155 602b600155 00",
        "SSTORE",
        "toHex(db.getState(a, toWord('0x01')))",
    );
    let w = |b: &str| format!("0x{}{b}", "00".repeat(31));
    assert_eq!(
        v,
        json!([["step", w("00")], ["step", w("2a")], ["result", w("2b")]])
    );
}

#[test]
fn db_at_selfdestruct_shows_balances_before_the_transfer() {
    // SELFDESTRUCT to 0xcc (absent): at the step the contract still holds 7 + 5 and 0xcc does
    // not exist; afterwards (Cancun, not created in this tx) the balance has moved.
    let probe = "[db.getBalance(a).toString(), db.getBalance(toAddress('0x00000000000000000000000000000000000000cc')).toString(), db.exists(toAddress('0x00000000000000000000000000000000000000cc'))]";
    let v = probe_at("60cc ff", "SELFDESTRUCT", probe);
    assert_eq!(
        v,
        json!([
            ["step", ["12", "0", false]],
            ["enter"],
            ["exit"],
            ["result", ["0", "12", true]]
        ])
    );
}

#[test]
fn db_at_call_with_value_shows_balances_before_the_transfer() {
    // CALL(gas, 0xbb, 3, 0, 0, 0, 0): the step and `enter` come before the transfer (geth's
    // captureBegin precedes Transfer), `exit` and `result` after it.
    let code = "6000 6000 6000 6000 6003 60bb 5a f1 00";
    let probe = "[db.getBalance(a).toString(), db.getBalance(toAddress('0x00000000000000000000000000000000000000bb')).toString()]";
    let run = Run {
        code: hex::decode(code.replace(' ', "")).unwrap(),
        value: 5,
        ..Default::default()
    };
    let script = format!(
        "{{seen: [], a: toAddress('{CONTRACT}'), \
          step: function(log, db) {{ var a = this.a; if (log.op.toString() == 'CALL') this.seen.push(['step', {probe}]); }}, \
          enter: function(f) {{ }}, exit: function(r) {{ }}, \
          fault: function() {{}}, \
          result: function(ctx, db) {{ var a = this.a; this.seen.push(['result', {probe}]); return this.seen; }}}}"
    );
    let v = run.run(&script).unwrap();
    assert_eq!(v, json!([["step", ["12", "0"]], ["result", ["9", "3"]]]));
}

#[test]
fn db_in_enter_and_exit_keeps_geths_timing() {
    // geth: OnEnter before the value transfer and before a creator's nonce bump, OnExit after.
    // `enter`/`exit` get no `db`; geth's is one object for the whole trace, kept from `step`.
    let probe = "[db.getBalance(a).toString(), db.getNonce(a)]";
    let run = Run {
        code: hex::decode(
            "6000 6000 6000 6000 6003 60bb 5a f1 50 6000 6000 6000 f0 00".replace(' ', ""),
        )
        .unwrap(),
        value: 5,
        ..Default::default()
    };
    let script = format!(
        "{{seen: [], a: toAddress('{CONTRACT}'), \
          step: function(log, db) {{ this.db = db; var a = this.a; var o = log.op.toString(); if (o == 'CALL' || o == 'CREATE') this.seen.push([o, {probe}]); }}, \
          enter: function(f) {{ var a = this.a, db = this.db; this.seen.push(['enter ' + f.getType(), {probe}]); }}, \
          exit: function(r) {{ var a = this.a, db = this.db; this.seen.push(['exit', {probe}]); }}, \
          fault: function() {{}}, \
          result: function(ctx, db) {{ return this.seen; }}}}"
    );
    let v = run.run(&script).unwrap();
    assert_eq!(
        v,
        json!([
            ["CALL", ["12", 0]],
            ["enter CALL", ["12", 0]],
            ["exit", ["9", 0]],
            ["CREATE", ["9", 0]],
            ["enter CREATE", ["9", 0]],
            ["exit", ["9", 1]]
        ])
    );
}

#[test]
fn a_failed_precompile_frame_carries_gethes_own_reason() {
    // CALL blake2f (0x09) with 10 bytes of input: geth's blake2F.Run returns
    // errBlake2FInvalidInputLength ("invalid input length"), not a generic precompile error.
    let run = Run::code(
        "6000 6000 600a 6000 6000 6009 5a f1 00"
            .replace(' ', "")
            .as_str(),
    );
    let v = run
        .run("{e: [], enter: function(f) {}, exit: function(r) { this.e.push(r.getError()); }, fault: function() {}, result: function() { return this.e; }}")
        .unwrap();
    assert_eq!(v, json!(["invalid input length"]));
}

#[test]
fn timeout_stops_exponential_recursion_inside_step() {
    // Without a loop statement; each step call would run for minutes.
    times_out("{fib: function(n) { return n < 2 ? n : this.fib(n - 1) + this.fib(n - 2); }, step: function() { this.x = this.fib(40); }, fault: function() {}, result: function() { return 1; }}");
}

#[test]
fn timeout_stops_recursion_between_hooks() {
    times_out("{step: function(log) { this.fault(40); }, fault: function(n) { if (n > 0) { this.fault(n - 1); this.fault(n - 1); } }, result: function() { return 1; }}");
}

// ---- hostile scripts end the trace with an error, never the process ----

#[test]
fn deeply_nested_source_is_refused_before_parsing() {
    let deep = format!(
        "{{fault: function() {{}}, result: function() {{ return {}1{}; }}}}",
        "[".repeat(300),
        "]".repeat(300)
    );
    let e = fails(&Run::default(), &deep);
    assert!(e.contains("nests brackets 302 deep; at most 64"), "{e}");
    // Brackets inside strings and comments do not count.
    let quoted = format!(
        "{{fault: function() {{}}, result: function() {{ /* {} */ return '{}'.length; }}}}",
        "(".repeat(300),
        "[".repeat(300)
    );
    assert_eq!(Run::default().run(&quoted).unwrap(), json!(300));
}

#[test]
fn a_result_nested_too_deep_is_an_error() {
    let e = fails(
        &Run::default(),
        "{fault: function() {}, result: function() { var a = [], x = a; for (var i = 0; i < 20000; i++) { var b = []; x.push(b); x = b; } return a; }}",
    );
    assert_eq!(
        e,
        "RangeError: tracer result nests more than 512 levels    in server-side tracer function 'result'"
    );
    // Shared and cyclic structure is walked once: a cycle is still JSON.stringify's own error.
    let e = fails(
        &Run::default(),
        "{fault: function() {}, result: function() { var a = {}; a.self = a; return a; }}",
    );
    assert!(e.contains("TypeError"), "{e}");
}

#[test]
fn builtins_that_would_allocate_gigabytes_fail_the_trace() {
    for (script, says) in [
        (
            "'x'.repeat(2**31-1).length",
            "RangeError: string longer than 67108864 characters",
        ),
        (
            "'x'.padStart(2**31).length",
            "RangeError: string longer than 67108864 characters",
        ),
        (
            "new Array(2e8).join().length",
            "RangeError: string longer than 67108864 characters",
        ),
        (
            "bigInt(3).pow(5e7).toString().length",
            "RangeError: bigInt result would exceed 1048576 bits",
        ),
        (
            "bigInt(1).shiftLeft(1e9).toString().length",
            "RangeError: bigInt result would exceed 1048576 bits",
        ),
    ] {
        let src = format!("{{fault: function() {{}}, result: function() {{ return {script}; }}}}");
        let e = fails(&Run::default(), &src);
        assert!(e.starts_with(says), "{script}: {e}");
        assert!(
            e.ends_with("in server-side tracer function 'result'"),
            "{e}"
        );
    }
    // Ordinary use is unchanged.
    let v = ok("{fault: function() {}, result: function() { return ['a','b'].join('-') + 'ab'.repeat(3) + 'x'.padStart(3) + bigInt(2).pow(10) + bigInt(1).shiftLeft(8) + String.prototype.repeat.name; }}");
    assert_eq!(v, json!("a-bababab  x1024256repeat"));
}

// ---- a step that fails before executing: geth's cost and error (core/vm/interpreter.go) ----

#[test]
fn an_out_of_gas_step_costs_the_constant_and_the_dynamic_gas_geth_computed() {
    // MSTORE at 1 MiB: 32,769 words of new memory (3 per word + words²/512) plus the constant 3
    // exceed the gas left; geth reports that price on the step, with `out of gas` and no fault.
    let run = Run::code("6001 62100000 52 00".replace(' ', "").as_str());
    let v = run.run("{r: [], step: function(log) { this.r.push([log.op.toString(), log.getCost(), log.getError() || null]); }, fault: function(log) { this.r.push('fault'); }, result: function() { return this.r; }}").unwrap();
    assert_eq!(
        v,
        json!([
            ["PUSH1", 3, null],
            ["PUSH3", 3, null],
            ["MSTORE", 2195590, "out of gas"]
        ])
    );
}

#[test]
fn sstore_in_a_static_frame_is_refused_by_its_gas_function() {
    // geth v1.17: gasSStore returns ErrWriteProtection, so the step fails before executing
    // (`out of gas: write protection`, constant cost 0, no fault) and so does the frame.
    let run = Run {
        code: hex::decode("6000600060006000 60bb 5a fa 00".replace(' ', "")).unwrap(),
        callee: hex::decode("6001600055 00".replace(' ', "")).unwrap(),
        ..Default::default()
    };
    let v = run.run("{r: [], step: function(log) { if (log.getDepth() == 2 && log.op.toString() == 'SSTORE') this.r.push([log.getCost(), log.getError()]); }, fault: function(log) { this.r.push('fault'); }, enter: function() {}, exit: function(res) { this.r.push(res.getError()); }, result: function() { return this.r; }}").unwrap();
    assert_eq!(
        v,
        json!([
            [0, "out of gas: write protection"],
            "out of gas: write protection"
        ])
    );
}

/// geth reads `result`, `fault`, `step`, `enter` and `exit` once, before `setup`, and calls
/// those from then on (`eth/tracers/js/goja.go`, `newJsTracer`): other functions assigned to
/// those names, in `setup` or in a hook, change nothing of what runs — whether the hooks run
/// natively, as direct calls, or budgeted in boa (a loop and `Math` keep them there).
#[test]
fn hooks_are_the_functions_the_tracer_held_before_setup() {
    // Ten opcodes and one call (to an account without code: no steps of its own).
    let run = Run::code("600060006000600060006000355af100");
    let replaced_result = |body: &str| {
        format!(
            "{{setup: function() {{ this.result = function() {{ return 'replaced'; }}; }}, \
             fault: function() {{}}, result: function() {{ {body} }}}}"
        )
    };
    for body in [
        "return 'original';",
        "var s = ''; for (var i = 0; i < 2; i++) { s += 'o'; } return s + Math.max(1, 2);",
    ] {
        let want = if body.contains("for") {
            "oo2"
        } else {
            "original"
        };
        assert_eq!(
            run.run(&replaced_result(body)).unwrap(),
            json!(want),
            "{body}"
        );
    }
    for (step, enter) in [
        ("this.n++;", "this.e++; this.enter = this.other;"),
        (
            "for (var i = 0; i < 1; i++) { this.n += Math.max(1, 0); }",
            "for (var i = 0; i < 1; i++) { this.e += Math.max(1, 0); } this.enter = this.other;",
        ),
    ] {
        let script = format!(
            "{{n: 0, m: 0, e: 0, other: function(f) {{ this.m++; }}, \
             setup: function() {{ this.step = function() {{ this.n += 100; }}; }}, \
             step: function(log) {{ {step} }}, enter: function(f) {{ {enter} }}, exit: function(r) {{}}, \
             fault: function() {{}}, result: function() {{ return [this.n, this.m, this.e, typeof this.step]; }}}}"
        );
        assert_eq!(
            run.run(&script).unwrap(),
            json!([10, 0, 1, "function"]),
            "{step}"
        );
    }
}

/// geth reads each hook once when it makes the tracer: a getter runs once, and what it
/// returned is what is called.
#[test]
fn each_hook_is_read_once() {
    let getter = "{n: 0, get result() { this.n++; var self = this; return function() { return [self.n, this === self]; }; }, \
                  get fault() { this.n += 10; return function() {}; }}";
    assert_eq!(ok(getter), json!([11, true]));
}
