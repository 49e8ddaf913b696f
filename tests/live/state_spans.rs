//! Values that span slots and values that live only while a transaction runs, by variable:
//! `tests/contracts/oz/Spans.sol` built by solc-js 0.8.30 with `storageLayout` and
//! `transientStorageLayout`, deployed on anvil. A `string` and a `bytes` growing past one slot,
//! shrinking back, pushed to (a data word the transaction never touches read after it) and
//! given a length no data backs (read no further than the cap): each one change, whole,
//! checked against the getters through `cast call` and every slot it spans through
//! `cast storage`. Transient variables (a guard, a packed address, a value a failed inner call
//! wrote and lost): checked against the event the contract emits with their values as the
//! transaction ends, from anvil's receipt.

use crate::anvil::{calldata, hex0x, Anvil};
use crate::run;
use crate::state_changes::{block_of, cast, slot_hex};
use alloy_primitives::{keccak256, Address, U256};
use serde_json::{json, Value};

const OUT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/contracts/oz/solc-output-spans.json"
);

fn creation() -> String {
    let out: Value = serde_json::from_str(&std::fs::read_to_string(OUT).unwrap()).unwrap();
    out["contracts"]["Spans.sol"]["Spans"]["evm"]["bytecode"]["object"]
        .as_str()
        .unwrap()
        .to_string()
}

/// `tx HASH` with the build's artifact: `--json --decode`'s `stateChanges`, or the text.
fn tx(anvil: &Anvil, hash: &str, json: bool) -> (Value, String) {
    let mut args = vec![
        "tx",
        hash,
        "--rpc-url",
        anvil.url(),
        "--abi",
        OUT,
        "--no-project",
    ];
    if json {
        args.extend(["--json", "--decode"]);
    }
    let r = run::cmd(&args).no_cache().run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    match json {
        true => {
            let v: Value = serde_json::from_str(&r.stdout).unwrap();
            (v["stateChanges"].clone(), String::new())
        }
        false => (Value::Null, r.stdout),
    }
}

fn data_start(slot: u64) -> U256 {
    U256::from_be_bytes(keccak256(U256::from(slot).to_be_bytes::<32>()).0)
}

/// A getter's answer at `block`, as cast prints it.
fn getter(anvil: &Anvil, at: Address, sig: &str, block: u64) -> String {
    cast(&[
        "call",
        &at.to_checksum(None),
        sig,
        "--block",
        &block.to_string(),
        "--rpc-url",
        anvil.url(),
    ])
}

/// The words `cast storage` reads at `block` from each of `slots`.
fn words(anvil: &Anvil, at: Address, slots: &[Value], block: u64) -> Vec<U256> {
    slots
        .iter()
        .map(|s| {
            let w = cast(&[
                "storage",
                &at.to_checksum(None),
                s.as_str().unwrap(),
                "--block",
                &block.to_string(),
                "--rpc-url",
                anvil.url(),
            ]);
            U256::from_str_radix(w.trim_start_matches("0x"), 16).unwrap()
        })
        .collect()
}

/// The bytes a long `bytes`/`string` holds, joined by solc's rule from the words `cast
/// storage` read: its length slot (`2 * length + 1`) and its data words.
fn joined(words: &[U256]) -> Vec<u8> {
    let len = (words[0] >> 1usize).to::<usize>();
    let mut data: Vec<u8> = words[1..]
        .iter()
        .flat_map(|w| w.to_be_bytes::<32>())
        .collect();
    data.truncate(len);
    data
}

/// The one change `stateChanges` has for `variable`.
fn only<'a>(changes: &'a Value, variable: &str) -> &'a Value {
    let of: Vec<&Value> = changes
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["variable"] == variable)
        .collect();
    assert_eq!(of.len(), 1, "{variable}: {changes}");
    of[0]
}

#[test]
fn strings_and_bytes_across_slots_are_one_change_read_whole() {
    let anvil = Anvil::start();
    let spans = anvil.deploy(&creation());
    let send = |data: String| {
        let (h, r) = anvil.send_and_wait(json!({"to": spans, "data": data}));
        assert_eq!(r["status"], "0x1", "{r}");
        format!("{h:?}")
    };
    let long = "a much longer string that takes three slots of storage, 70 bytes long!";
    assert_eq!(long.len(), 70);
    let set_short = send(cast(&["calldata", "setName(string)", "short"]));
    let set_long = send(cast(&["calldata", "setName(string)", long]));

    // Short to short: in place, one slot, as before.
    let (got, _) = tx(&anvil, &set_short, true);
    assert_eq!(only(&got, "name")["before"], "\"\"");
    assert_eq!(only(&got, "name")["after"], "\"short\"");
    assert!(only(&got, "name").get("slots").is_none(), "{got}");

    // Short to long: one change, the whole string, its slots listed.
    let (got, _) = tx(&anvil, &set_long, true);
    let name = only(&got, "name");
    let start = data_start(0);
    let spanned: Vec<String> = std::iter::once(U256::ZERO)
        .chain((0..3).map(|i| start + U256::from(i)))
        .map(slot_hex)
        .collect();
    assert_eq!(
        *name,
        json!({
            "address": spans.to_checksum(None), "contract": "Spans", "variable": "name",
            "keyPath": [], "type": "string", "slot": slot_hex(U256::ZERO), "offset": 0,
            "before": "\"short\"", "after": format!("{long:?}"), "name": "name",
            "slots": spanned,
        })
    );
    assert_eq!(got.as_array().unwrap().len(), 1, "{got}");
    let block = block_of(&anvil, &set_long);
    let sig = "name()(string)";
    assert_eq!(name["before"], getter(&anvil, spans, sig, block - 1));
    assert_eq!(name["after"], getter(&anvil, spans, sig, block));
    let slots = name["slots"].as_array().unwrap();
    assert_eq!(joined(&words(&anvil, spans, slots, block)), long.as_bytes());
    // The text: the whole value, its length beside it.
    let (_, text) = tx(&anvil, &set_long, false);
    let line = format!("Spans.name: \"short\" → {long:?} [70 bytes]");
    assert!(text.contains(&line), "{text}");

    // Long to short: the old data words are cleared, the value is the new one.
    let set_tiny = send(cast(&["calldata", "setName(string)", "tiny"]));
    let (got, _) = tx(&anvil, &set_tiny, true);
    let name = only(&got, "name");
    let block = block_of(&anvil, &set_tiny);
    assert_eq!(name["before"], getter(&anvil, spans, sig, block - 1));
    assert_eq!(name["after"], getter(&anvil, spans, sig, block));
    assert_eq!(name["after"], "\"tiny\"");
    assert_eq!(name["slots"].as_array().unwrap().len(), 4, "{name}");
    let after = words(&anvil, spans, name["slots"].as_array().unwrap(), block);
    assert!(after[1..].iter().all(|w| w.is_zero()), "{after:?}");

    // bytes: 40 bytes set, then one pushed, which writes the length and the last data word
    // only: the first word, never touched, is read after the run.
    let forty: Vec<u8> = (1..=40).collect();
    let set_blob = send(cast(&["calldata", "setBlob(bytes)", &hex0x(&forty)]));
    let push = send(cast(&["calldata", "pushBlob(bytes1)", "0xab"]));
    let blob_sig = "blob()(bytes)";
    for (hash, len) in [(&set_blob, 40), (&push, 41)] {
        let (got, _) = tx(&anvil, hash, true);
        let blob = only(&got, "blob");
        let block = block_of(&anvil, hash);
        assert_eq!(blob["before"], getter(&anvil, spans, blob_sig, block - 1));
        assert_eq!(blob["after"], getter(&anvil, spans, blob_sig, block));
        let slots = blob["slots"].as_array().unwrap();
        assert_eq!(slots.len(), 3, "{blob}");
        let mut want = forty.clone();
        if len == 41 {
            want.push(0xab);
        }
        assert_eq!(joined(&words(&anvil, spans, slots, block)), want);
        assert_eq!(blob["after"], hex0x(&want));
    }
    let (_, text) = tx(&anvil, &push, false);
    let mut pushed = forty.clone();
    pushed.push(0xab);
    let line = format!(
        "Spans.blob: {} [40 bytes] → {} [41 bytes]",
        hex0x(&forty),
        hex0x(&pushed)
    );
    assert!(text.contains(&line), "{text}");

    // A length no data backs (2^40 bytes): read no further than the cap, and said.
    let huge = send(cast(&[
        "calldata",
        "setNameLength(uint256)",
        &(1u64 << 40).to_string(),
    ]));
    let (got, _) = tx(&anvil, &huge, true);
    let name = only(&got, "name");
    assert_eq!(name["before"], "\"tiny\"");
    let after = name["after"].as_str().unwrap();
    assert!(
        after.ends_with(" (truncated after 4096 of 1099511627776 bytes)"),
        "{after}"
    );
    assert_eq!(name["slots"].as_array().unwrap().len(), 1 + 4096 / 32);
    let block = block_of(&anvil, &huge);
    let length = words(&anvil, spans, &[json!(slot_hex(U256::ZERO))], block);
    assert_eq!(length[0], U256::from((1u64 << 41) + 1));
}

#[test]
fn transient_variables_are_named_from_zero_through_what_stood() {
    let anvil = Anvil::start();
    let me = anvil.sender();
    let spans = anvil.deploy(&creation());
    let data = calldata(
        "guarded(uint128,uint256)",
        &[U256::from(7).to_be_bytes(), U256::from(99).to_be_bytes()],
    );
    let (h, r) = anvil.send_and_wait(json!({"to": spans, "data": hex0x(&data)}));
    assert_eq!(r["status"], "0x1", "{r}");
    let hash = format!("{h:?}");
    let (got, _) = tx(&anvil, &hash, true);
    let me_s = me.to_checksum(None);
    let t = |slot: u64,
             variable: &str,
             ty: &str,
             offset: u64,
             before: &str,
             after: &str,
             writes: &[&str]| {
        json!({
            "address": spans.to_checksum(None), "contract": "Spans", "variable": variable,
            "keyPath": [], "type": ty, "slot": slot_hex(U256::from(slot)), "offset": offset,
            "before": before, "after": after, "name": variable, "transient": true,
            "writes": writes,
        })
    };
    let zero = Address::ZERO.to_checksum(None);
    // The persistent change first, then each transient variable written, in write order;
    // `scratch`'s 99, written by a call that reverted, never stood.
    assert_eq!(
        got,
        json!([
            {
                "address": spans.to_checksum(None), "contract": "Spans", "variable": "count",
                "keyPath": [], "type": "uint256", "slot": slot_hex(U256::from(2)), "offset": 0,
                "before": "0", "after": "1", "name": "count",
            },
            t(0, "locked", "bool", 0, "false", "false", &["true", "false"]),
            t(0, "entered", "address", 1, &zero, &me_s, &[&me_s]),
            t(1, "depth", "uint128", 0, "0", "7", &["7"]),
            t(2, "scratch", "uint256", 0, "0", "1", &["1"]),
        ])
    );
    // What the contract itself saw as it ended: `Seen(locked, entered, depth, scratch)` in
    // anvil's receipt, each the `after` above.
    let log = &r["logs"][0];
    assert_eq!(
        log["topics"][0],
        json!(format!(
            "{:?}",
            keccak256("Seen(bool,address,uint128,uint256)")
        ))
    );
    let decoded = cast(&[
        "abi-decode",
        "--input",
        "f(bool,address,uint128,uint256)",
        log["data"].as_str().unwrap(),
    ]);
    let seen: Vec<&str> = decoded.lines().map(str::trim).collect();
    let after = |v: &str| {
        got.as_array()
            .unwrap()
            .iter()
            .find(|c| c["variable"] == v)
            .unwrap()["after"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        seen,
        [
            after("locked"),
            after("entered"),
            after("depth"),
            after("scratch")
        ]
    );
    let block = block_of(&anvil, &hash);
    assert_eq!(getter(&anvil, spans, "count()(uint256)", block), "1");
    // The text: marked transient, each value that stood in order.
    let (_, text) = tx(&anvil, &hash, false);
    let section = text.split("state changes\n").nth(1).unwrap();
    let want = format!(
        "  {} (Spans)\n    \
         Spans.count: 0 → 1\n    \
         Spans.locked (transient): false → true → false\n    \
         Spans.entered (transient): {zero} → {me_s}\n    \
         Spans.depth (transient): 0 → 7\n    \
         Spans.scratch (transient): 0 → 1\n",
        spans.to_checksum(None)
    );
    assert!(section.starts_with(&want), "{section}");
}
