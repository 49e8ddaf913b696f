//! erc7562Tracer on a hand-written program that walks through each of geth's per-opcode rules
//! (eth/tracers/native/erc7562.go), expectations derived by hand from that source, not from a
//! run: GAS counted only when no CALL* follows, EXTCODESIZE+ISZERO not recorded, the previous
//! opcode being tracer-wide (a callee's last EXTCODESIZE recorded in its caller), the first
//! opcode naming an address fixing its code size, SLOAD reads only of slots not written before
//! in the frame (the current value, through a DELEGATECALL's storage), transient slots, the
//! transaction's KECCAK256 preimages (zero-padded past memory) sorted in the top frame, logs with
//! `withLog`, `outOfGas`, the SELFDESTRUCT frame, and the configuration.

use crate::offline;
use alloy_primitives::{address, Address, TxKind};
use chaintrace::replay::trace;
use chaintrace::replay::EvmEnv;
use chaintrace::source::StateSnapshot;
use chaintrace::trace::{TracerKind, TracerSpec};
use offline::{account, block, tx};
use revm::primitives::hardfork::SpecId;
use serde_json::{json, Value};

const SENDER: Address = address!("00000000000000000000000000000000000000f0");
const TOP: Address = address!("00000000000000000000000000000000000000aa");
const LIB: Address = address!("00000000000000000000000000000000000000bb");
const STARVED: Address = address!("00000000000000000000000000000000000000dd");
const DESTRUCT: Address = address!("00000000000000000000000000000000000000ee");

const TOP_CODE: &str = concat!(
    "5a 50",                                    // GAS POP: GAS counted
    "60bb 3b 15 50",                            // EXTCODESIZE(bb) ISZERO: size kept, access not
    "60bb 3f 50",                               // EXTCODEHASH(bb) POP: access [bb]
    "6009 6004 55",                             // SSTORE(4, 9)
    "6004 54 50",                               // SLOAD(4): written before, no read
    "6003 54 50",                               // SLOAD(3): read, value 0
    "6007 6008 5d",                             // TSTORE(8, 7)
    "6008 5c 50",                               // TLOAD(8)
    "6020 6000 20 50",                          // KECCAK256(0, 0x20) of empty memory: 32 zero bytes
    "6000 6000 6000 6000 60cc 5a fa 50",        // GAS STATICCALL(cc, an account without code)
    "6000 6000 6000 6000 60bb 5a f4 50",        // GAS DELEGATECALL(bb)
    "6000 6000 6000 6000 6000 60dd 6064 f1 50", // CALL(dd) with 100 gas; POP sees dd's last op
    "6000 6000 6000 6000 6000 60ee 5a f1",      // CALL(ee)
    "00"
);
/// Run by DELEGATECALL: reads slot 4 of the top contract (9, written by it), hashes one byte
/// of memory, emits LOG0 as the top contract.
const LIB_CODE: &str = "6004 54 50 6042 6000 52 6001 601f 20 50 6000 6000 a0 00";
/// Out of gas at its EXTCODESIZE (100 gas: 3 for PUSH1, then 97 < 100 for the warm account).
const STARVED_CODE: &str = "60cc 3b";
const DESTRUCT_CODE: &str = "60f0 ff";

fn code_len(code: &str) -> usize {
    code.replace(' ', "").len() / 2
}

fn run(config: Option<Value>) -> Value {
    serde_json::from_str(&run_text(config)).unwrap()
}

/// The result as printed (geth's key order).
fn run_text(config: Option<Value>) -> String {
    let mut snap = StateSnapshot::complete();
    snap.insert_account(SENDER, account(10u128.pow(18), 0, ""));
    snap.insert_account(TOP, account(0, 1, TOP_CODE));
    snap.insert_account(LIB, account(0, 1, LIB_CODE));
    snap.insert_account(STARVED, account(0, 1, STARVED_CODE));
    snap.insert_account(DESTRUCT, account(0, 1, DESTRUCT_CODE));
    let env = EvmEnv::new(SpecId::CANCUN, 1, &block(1, Some(0)));
    let spec = TracerSpec::new(TracerKind::Erc7562, config.as_ref()).unwrap();
    let mut db = snap.db();
    let t = trace(&mut db, &env, &tx(SENDER, TxKind::Call(TOP)), &spec, 0).unwrap();
    let mut out = Vec::new();
    chaintrace::render::json::write_trace(&mut out, &t.result).unwrap();
    String::from_utf8(out).unwrap()
}

fn word(n: u8) -> String {
    format!("0x{}{:02x}", "0".repeat(62), n)
}

const EMPTY_SLOTS: &str = r#"{"reads":{},"writes":{},"transientReads":{},"transientWrites":{}}"#;

#[test]
fn erc7562_rules_per_frame() {
    let v = run(Some(json!({"withLog": true})));
    assert!(v.get("error").is_none(), "{v}");
    assert_eq!(v["type"], "CALL");
    assert_eq!(v["gas"], "0x186a0");
    assert_eq!(v["outOfGas"], false);
    assert_eq!(
        v["usedOpcodes"],
        json!({"0x0": 1, "0x20": 1, "0x3b": 1, "0x3f": 1, "0x54": 2, "0x55": 1, "0x5a": 1,
               "0x5c": 1, "0x5d": 1, "0xf1": 2, "0xf4": 1, "0xfa": 1})
    );
    assert_eq!(
        v["accessedSlots"],
        json!({"reads": {word(3): [word(0)]}, "writes": {word(4): 1},
               "transientReads": {word(8): 1}, "transientWrites": {word(8): 1}})
    );
    // EXTCODEHASH(bb), then dd's EXTCODESIZE(cc) seen by the POP after the CALL.
    assert_eq!(
        v["extCodeAccessInfo"],
        json!([
            "0x00000000000000000000000000000000000000bb",
            "0x00000000000000000000000000000000000000cc"
        ])
    );
    assert_eq!(
        v["contractSize"],
        json!({
            "0x00000000000000000000000000000000000000bb": {"contractSize": code_len(LIB_CODE), "opcode": 0x3b},
            "0x00000000000000000000000000000000000000cc": {"contractSize": 0, "opcode": 0xfa},
            "0x00000000000000000000000000000000000000dd": {"contractSize": code_len(STARVED_CODE), "opcode": 0xf1},
            "0x00000000000000000000000000000000000000ee": {"contractSize": code_len(DESTRUCT_CODE), "opcode": 0xf1}
        })
    );
    // Sorted bytewise: the 32 zero bytes before 0x42.
    assert_eq!(
        v["keccak"],
        json!([format!("0x{}", "0".repeat(64)), "0x42"])
    );

    let calls = v["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 4, "{v}");
    let empty: Value = serde_json::from_str(EMPTY_SLOTS).unwrap();

    let st = &calls[0];
    assert_eq!(st["type"], "STATICCALL");
    assert!(st.get("value").is_none());
    assert_eq!(st["accessedSlots"], empty);
    assert_eq!(st["usedOpcodes"], json!({}));
    assert_eq!(st["extCodeAccessInfo"], json!([]));
    assert_eq!(st["contractSize"], json!({}));

    let dc = &calls[1];
    assert_eq!(dc["type"], "DELEGATECALL");
    assert_eq!(dc["value"], "0x0");
    assert_eq!(
        dc["accessedSlots"],
        json!({"reads": {word(4): [word(9)]}, "writes": {}, "transientReads": {}, "transientWrites": {}})
    );
    assert_eq!(
        dc["usedOpcodes"],
        json!({"0x0": 1, "0x20": 1, "0x52": 1, "0x54": 1, "0xa0": 1})
    );
    assert_eq!(
        dc["logs"],
        json!([{"address": "0x00000000000000000000000000000000000000aa", "topics": [],
                "data": "0x", "index": "0x0", "position": "0x0"}])
    );
    assert!(dc.get("keccak").is_none());

    let oog = &calls[2];
    assert_eq!(oog["error"], "out of gas");
    assert_eq!(oog["outOfGas"], true);
    assert_eq!(oog["gas"], "0x64");
    assert_eq!(oog["gasUsed"], "0x64");
    assert_eq!(oog["usedOpcodes"], json!({"0x3b": 1}));
    assert_eq!(oog["extCodeAccessInfo"], json!([]));
    assert_eq!(
        oog["contractSize"],
        json!({"0x00000000000000000000000000000000000000cc": {"contractSize": 0, "opcode": 0x3b}})
    );

    let sd = &calls[3];
    assert_eq!(sd["type"], "CALL");
    assert_eq!(sd["usedOpcodes"], json!({"0xff": 1}));
    assert_eq!(
        sd["calls"],
        json!([{
            "from": "0x00000000000000000000000000000000000000ee", "gas": "0x0", "gasUsed": "0x0",
            "to": "0x00000000000000000000000000000000000000f0", "input": "0x", "value": "0x0",
            "accessedSlots": empty, "extCodeAccessInfo": [], "usedOpcodes": {},
            "contractSize": {}, "outOfGas": false, "type": "SELFDESTRUCT"
        }])
    );

    // Key order of geth's generated marshaller.
    let text = run_text(Some(json!({"withLog": true})));
    assert!(
        text.contains(r#"{"from":"0x00000000000000000000000000000000000000ee","gas":"0x0","gasUsed":"0x0","to":"0x00000000000000000000000000000000000000f0","input":"0x","value":"0x0","accessedSlots":{"reads":{},"writes":{},"transientReads":{},"transientWrites":{}},"extCodeAccessInfo":[],"usedOpcodes":{},"contractSize":{},"outOfGas":false,"type":"SELFDESTRUCT"}"#),
        "{text}"
    );
}

#[test]
fn erc7562_config() {
    // Without withLog no logs; with ignoredOpcodes [] every opcode counts (PUSH1 0x60, POP
    // 0x50, ISZERO 0x15 included), and the listed ones are left out.
    let v = run(None);
    assert!(v["calls"][1].get("logs").is_none(), "{v}");
    let v = run(Some(json!({"ignoredOpcodes": []})));
    let used = &v["calls"][3]["usedOpcodes"];
    assert_eq!(used, &json!({"0x60": 1, "0xff": 1}));
    assert_eq!(v["usedOpcodes"]["0x15"], 1);
    let v = run(Some(json!({"ignoredOpcodes": ["0xff", "0x160"]})));
    // 0x160 is taken as its low byte, 0x60: PUSH1 is left out too.
    assert_eq!(v["calls"][3]["usedOpcodes"], json!({}));
    for bad in [
        json!({"stackTopItemsSize": -1}),
        json!({"ignoredOpcodes": ["5b"]}),
        json!({"ignoredOpcodes": [91]}),
        json!({"ignoredOpcodes": ["0x05b"]}),
    ] {
        assert!(
            TracerSpec::new(TracerKind::Erc7562, Some(&bad)).is_err(),
            "{bad}"
        );
    }
    assert!(TracerSpec::new(TracerKind::Erc7562, Some(&json!({"stackTopItemsSize": 1}))).is_ok());
}

#[test]
fn erc7562_create_without_init_code_runs_no_opcode() {
    // geth's interpreter returns before its loop for empty code (core/vm/interpreter.go), so
    // neither the top CREATE nor a CREATE of empty code inside it has a used opcode; revm runs
    // the padding's STOP, which must not show.
    let mut snap = StateSnapshot::complete();
    snap.insert_account(SENDER, account(10u128.pow(18), 0, ""));
    let env = EvmEnv::new(SpecId::CANCUN, 1, &block(1, Some(0)));
    let spec = TracerSpec::new(TracerKind::Erc7562, None).unwrap();
    let mut db = snap.db();
    let t = trace(&mut db, &env, &tx(SENDER, TxKind::Create), &spec, 0).unwrap();
    let mut out = Vec::new();
    chaintrace::render::json::write_trace(&mut out, &t.result).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["type"], "CREATE");
    assert_eq!(v["usedOpcodes"], json!({}), "{v}");

    // CREATE(0, 0, 0) then STOP: the inner frame has no opcode, the outer CREATE and STOP.
    let mut snap = StateSnapshot::complete();
    snap.insert_account(SENDER, account(10u128.pow(18), 0, ""));
    snap.insert_account(TOP, account(0, 1, "6000 6000 6000 f0 00"));
    let mut db = snap.db();
    let t = trace(&mut db, &env, &tx(SENDER, TxKind::Call(TOP)), &spec, 0).unwrap();
    let mut out = Vec::new();
    chaintrace::render::json::write_trace(&mut out, &t.result).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["usedOpcodes"], json!({"0x0": 1, "0xf0": 1}), "{v}");
    assert_eq!(v["calls"][0]["type"], "CREATE");
    assert_eq!(v["calls"][0]["usedOpcodes"], json!({}), "{v}");
}
