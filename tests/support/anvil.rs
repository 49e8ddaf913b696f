//! Live-node test support: a local anvil (pinned 1.7.1, installed by
//! `scripts/install-test-tools.sh` into `.tools/bin/anvil`), a tiny JSON-RPC
//! client, and `scenario()`, which deploys the contracts of
//! `tests/contracts/artifacts.json` and sends transactions exercising every
//! feature chaintrace's tracers must get right.
//!
//! Include from an integration test with
//! `#[path = "support/anvil.rs"] mod anvil;`.
//!
//! A live test that cannot start its node FAILS (panics); it never skips.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use alloy_primitives::{hex, keccak256, Address, B256, U256};
use serde_json::{json, Value};

/// How long anvil may take to answer `eth_chainId` after spawning.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(20);
/// How long we wait for a receipt after sending (automine is instant).
const RECEIPT_TIMEOUT: Duration = Duration::from_secs(20);
/// Per-request HTTP timeout.
const HTTP_TIMEOUT: Duration = Duration::from_secs(120);
/// Responses (e.g. struct-log traces) can be large.
const MAX_RESPONSE: u64 = 512 * 1024 * 1024;

/// Gas limit given explicitly to transactions that revert (so that
/// `eth_sendTransaction` does not fail during gas estimation) and to those
/// whose behaviour depends on the gas they get.
pub const EXPLICIT_GAS: u64 = 3_000_000;

/// Path of the anvil binary: `$CHAINTRACE_ANVIL`, else
/// `<CARGO_MANIFEST_DIR>/.tools/bin/anvil`. Panics if it does not exist.
pub fn anvil_path() -> PathBuf {
    let path = match std::env::var_os("CHAINTRACE_ANVIL") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/bin/anvil"),
    };
    if !path.is_file() {
        panic!(
            "anvil not found at {} — live tests need it and never skip.\n\
             Install the pinned version with:  bash scripts/install-test-tools.sh\n\
             (or point CHAINTRACE_ANVIL at an anvil 1.7.1 binary)",
            path.display()
        );
    }
    path
}

fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0 to find a free port");
    l.local_addr().expect("local_addr").port()
}

/// A running anvil node; killed on drop.
pub struct Anvil {
    child: Child,
    pub url: String,
    pub port: u16,
    log_path: PathBuf,
    next_id: AtomicU64,
}

impl Anvil {
    /// Start anvil with its defaults (latest hardfork, chain id 31337,
    /// 10 funded dev accounts from the default mnemonic).
    pub fn start() -> Anvil {
        Self::start_with_args(&[])
    }

    /// Start anvil with extra command-line arguments (e.g.
    /// `["--hardfork", "cancun"]`).
    pub fn start_with_args(extra: &[&str]) -> Anvil {
        let bin = anvil_path();
        let mut last_err = String::new();
        // The free port is picked by binding port 0 and releasing it; another
        // process may grab it in between, so retry a few times.
        for _attempt in 0..5 {
            match Self::try_start(&bin, extra) {
                Ok(a) => return a,
                Err(e) => last_err = e,
            }
        }
        panic!("could not start anvil ({}): {last_err}", bin.display());
    }

    fn try_start(bin: &Path, extra: &[&str]) -> Result<Anvil, String> {
        let port = free_port();
        let log_path = std::env::temp_dir().join(format!(
            "chaintrace-anvil-{}-{port}.log",
            std::process::id()
        ));
        let log = std::fs::File::create(&log_path)
            .map_err(|e| format!("create {}: {e}", log_path.display()))?;
        let log2 = log.try_clone().map_err(|e| e.to_string())?;
        let child = Command::new(bin)
            .args([
                "--host",
                "127.0.0.1",
                "--port",
                &port.to_string(),
                "--silent",
            ])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::from(log))
            .stderr(Stdio::from(log2))
            .spawn()
            .map_err(|e| format!("spawn {}: {e}", bin.display()))?;
        let mut anvil = Anvil {
            child,
            url: format!("http://127.0.0.1:{port}"),
            port,
            log_path,
            next_id: AtomicU64::new(1),
        };
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        loop {
            if let Ok(Some(status)) = anvil.child.try_wait() {
                let log = std::fs::read_to_string(&anvil.log_path).unwrap_or_default();
                return Err(format!("anvil exited early with {status}: {log}"));
            }
            if let Ok(Ok(v)) = anvil.try_rpc("eth_chainId", json!([])) {
                if v.is_string() {
                    return Ok(anvil);
                }
            }
            if Instant::now() > deadline {
                let log = std::fs::read_to_string(&anvil.log_path).unwrap_or_default();
                // Drop kills the child.
                return Err(format!(
                    "anvil did not answer eth_chainId within {STARTUP_TIMEOUT:?}: {log}"
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    // ------------------------------------------------------------------ RPC

    /// One JSON-RPC call. Outer `Err` = transport failure; inner `Err` = the
    /// JSON-RPC `error` object.
    pub fn try_rpc(&self, method: &str, params: Value) -> Result<Result<Value, Value>, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let req = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let (status, text) = chaintrace::rpc::transport::post_json(
            &self.url,
            &[],
            req.to_string(),
            HTTP_TIMEOUT,
            MAX_RESPONSE,
        )
        .map_err(|e| format!("{method}: HTTP error: {}", e.reason()))?;
        let bytes = text.into_bytes();
        let v: Value = serde_json::from_slice(&bytes).map_err(|e| {
            format!(
                "{method}: HTTP {status}, non-JSON body: {e}: {}",
                String::from_utf8_lossy(&bytes[..bytes.len().min(500)])
            )
        })?;
        if let Some(err) = v.get("error") {
            return Ok(Err(err.clone()));
        }
        match v.get("result") {
            Some(r) => Ok(Ok(r.clone())),
            None => Err(format!("{method}: HTTP {status}, no result/error: {v}")),
        }
    }

    /// JSON-RPC call; panics with the method and error on any failure.
    pub fn rpc(&self, method: &str, params: Value) -> Value {
        match self.try_rpc(method, params.clone()) {
            Ok(Ok(v)) => v,
            Ok(Err(e)) => panic!("JSON-RPC {method} {params} failed: {e}"),
            Err(e) => panic!("JSON-RPC {method} {params}: {e}"),
        }
    }

    // -------------------------------------------------------------- helpers

    pub fn chain_id(&self) -> u64 {
        parse_u64(&self.rpc("eth_chainId", json!([])))
    }

    pub fn block_number(&self) -> u64 {
        parse_u64(&self.rpc("eth_blockNumber", json!([])))
    }

    /// anvil's unlocked dev accounts (account 0 is
    /// 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266).
    pub fn accounts(&self) -> Vec<Address> {
        let v = self.rpc("eth_accounts", json!([]));
        v.as_array()
            .expect("eth_accounts: array")
            .iter()
            .map(|a| a.as_str().unwrap().parse().expect("address"))
            .collect()
    }

    /// The default sender: anvil's first dev account.
    pub fn sender(&self) -> Address {
        self.accounts()[0]
    }

    /// `eth_sendTransaction`. `from` defaults to account 0. Returns the hash.
    /// Does not wait for mining (see [`Anvil::receipt`]).
    pub fn send(&self, mut tx: Value) -> B256 {
        if tx.get("from").is_none() {
            tx["from"] = json!(self.sender());
        }
        let h = self.rpc("eth_sendTransaction", json!([tx]));
        h.as_str()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("eth_sendTransaction returned {h}"))
    }

    /// Waits (bounded) for the receipt of `hash`.
    pub fn receipt(&self, hash: B256) -> Value {
        let deadline = Instant::now() + RECEIPT_TIMEOUT;
        loop {
            let r = self.rpc("eth_getTransactionReceipt", json!([hash]));
            if !r.is_null() {
                return r;
            }
            if Instant::now() > deadline {
                panic!("no receipt for {hash} after {RECEIPT_TIMEOUT:?} (is automine off?)");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends and waits for the receipt; returns (hash, receipt).
    pub fn send_and_wait(&self, tx: Value) -> (B256, Value) {
        let h = self.send(tx);
        let r = self.receipt(h);
        (h, r)
    }

    /// Deploys `bytecode_hex` (creation code with constructor arguments
    /// already appended) from account 0; panics unless it succeeds.
    pub fn deploy(&self, bytecode_hex: &str) -> Address {
        self.deploy_with(bytecode_hex, 0).1
    }

    /// Deploy with `value` wei; returns (tx hash, contract address).
    pub fn deploy_with(&self, bytecode_hex: &str, value: u128) -> (B256, Address) {
        let data = if bytecode_hex.starts_with("0x") {
            bytecode_hex.to_string()
        } else {
            format!("0x{bytecode_hex}")
        };
        let (h, r) = self.send_and_wait(json!({"data": data, "value": qty(value)}));
        assert_eq!(r["status"], "0x1", "deployment {h} failed: {r}");
        let addr = r["contractAddress"]
            .as_str()
            .unwrap_or_else(|| panic!("no contractAddress in receipt {r}"));
        (h, addr.parse().unwrap())
    }

    /// `eth_call` against latest; returns the hex result.
    pub fn call(&self, to: Address, data: &[u8]) -> String {
        let v = self.rpc(
            "eth_call",
            json!([{"to": to, "data": hex0x(data)}, "latest"]),
        );
        v.as_str().unwrap().to_string()
    }

    pub fn set_automine(&self, on: bool) {
        self.rpc("evm_setAutomine", json!([on]));
    }

    /// Mines one block with everything pending.
    pub fn mine(&self) {
        self.rpc("evm_mine", json!([]));
    }

    /// A write and a read of it in one block: a contract at 0x…c0de stores 5 in slot 0 when
    /// called with calldata, and copies slot 0 to slot 1 without. Another sender than the
    /// default one makes the write (as a Cosmos transaction on chain 1329 does not use the EVM
    /// sender's nonce), the default sender the read. Returns [write, read], the read second in
    /// the block: a proxy that hides the write makes the read's replay from the block's start
    /// diverge from its receipt.
    pub fn write_then_read(&self) -> [B256; 2] {
        // With calldata: SSTORE(0, 5). Without: SSTORE(1, SLOAD(0)).
        let c = "0x000000000000000000000000000000000000c0de";
        self.rpc(
            "anvil_setCode",
            json!([c, "0x36600b57600054600155005b600560005500"]),
        );
        let other = self.accounts()[1];
        let hashes = self.send_in_one_block(vec![
            json!({"from": other, "to": c, "data": "0x01", "gas": "0x20000"}),
            json!({"to": c, "gas": "0x20000"}),
        ]);
        [hashes[0], hashes[1]]
    }

    /// Sends all `txs` with automine off, mines ONE block, turns automine back
    /// on, and checks they all landed in that block. Returns the hashes in
    /// send order (the in-block order is anvil's: by fee, then nonce).
    pub fn send_in_one_block(&self, txs: Vec<Value>) -> Vec<B256> {
        self.set_automine(false);
        let hashes: Vec<B256> = txs.into_iter().map(|tx| self.send(tx)).collect();
        self.mine();
        self.set_automine(true);
        let mut block = None;
        for h in &hashes {
            let r = self.receipt(*h);
            let bn = r["blockNumber"].clone();
            match &block {
                None => block = Some(bn),
                Some(b) => assert_eq!(b, &bn, "tx {h} not in the same block"),
            }
        }
        hashes
    }

    /// `debug_traceTransaction` with the given tracer config.
    pub fn trace(&self, hash: B256, config: Value) -> Value {
        self.rpc("debug_traceTransaction", json!([hash, config]))
    }
}

impl Drop for Anvil {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !std::thread::panicking() {
            let _ = std::fs::remove_file(&self.log_path);
        } else {
            eprintln!("anvil log kept at {}", self.log_path.display());
        }
    }
}

// ------------------------------------------------------------------- encoding

/// Hex quantity ("0x1a") as JSON-RPC wants it.
pub fn qty(v: u128) -> String {
    format!("{v:#x}")
}

pub fn hex0x(b: &[u8]) -> String {
    format!("0x{}", hex::encode(b))
}

pub fn parse_u64(v: &Value) -> u64 {
    let s = v
        .as_str()
        .unwrap_or_else(|| panic!("expected hex quantity, got {v}"));
    u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// 4-byte selector of a canonical signature, e.g. `"deep(uint256)"`.
pub fn selector(sig: &str) -> [u8; 4] {
    keccak256(sig.as_bytes())[..4].try_into().unwrap()
}

/// One ABI word.
pub type Word = [u8; 32];

pub fn w_u(v: u128) -> Word {
    U256::from(v).to_be_bytes()
}

pub fn w_addr(a: Address) -> Word {
    let mut w = [0u8; 32];
    w[12..].copy_from_slice(a.as_slice());
    w
}

pub fn w_b32(b: B256) -> Word {
    b.0
}

/// selector(sig) ++ words (static argument types only).
pub fn calldata(sig: &str, args: &[Word]) -> Vec<u8> {
    let mut out = selector(sig).to_vec();
    for a in args {
        out.extend_from_slice(a);
    }
    out
}

/// Creation bytecode ++ ABI-encoded (static) constructor arguments, as hex.
pub fn with_ctor_args(bytecode_hex: &str, args: &[Word]) -> String {
    let mut s = bytecode_hex.to_string();
    if !s.starts_with("0x") {
        s.insert_str(0, "0x");
    }
    for a in args {
        s.push_str(&hex::encode(a));
    }
    s
}

// ------------------------------------------------------------------ artifacts

const ARTIFACTS_JSON: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/contracts/artifacts.json"
));

/// Parsed `tests/contracts/artifacts.json`.
pub fn artifacts() -> Value {
    serde_json::from_str(ARTIFACTS_JSON).expect("tests/contracts/artifacts.json is valid JSON")
}

/// Creation bytecode (0x-hex) of contract `name`.
pub fn creation_code(name: &str) -> String {
    let a = artifacts();
    a["contracts"][name]["bytecode"]
        .as_str()
        .unwrap_or_else(|| panic!("no contract {name} in artifacts.json"))
        .to_string()
}

// ------------------------------------------------------------------- scenario

/// One transaction of the scenario.
#[derive(Clone, Debug)]
pub struct ScenarioTx {
    pub label: String,
    pub hash: B256,
    /// Expected receipt status (true = 0x1).
    pub expect_success: bool,
}

/// A node with the scenario's transactions mined.
pub struct Scenario {
    pub anvil: Anvil,
    pub url: String,
    /// In the order they were sent.
    pub txs: Vec<ScenarioTx>,
    /// Deployed contracts by name (Logger, DelegateTarget, Reverter, Burner,
    /// Sink, Doomed, Doomed2, Hub) and the accounts used ("sender", "alice",
    /// "bob", "carol").
    pub addresses: BTreeMap<String, Address>,
    /// Hashes of the transactions mined together in one block (3+ txs).
    pub multi_tx_block: Vec<B256>,
}

impl Scenario {
    pub fn tx(&self, label: &str) -> &ScenarioTx {
        self.txs
            .iter()
            .find(|t| t.label == label)
            .unwrap_or_else(|| panic!("no scenario tx labelled {label:?}"))
    }

    pub fn addr(&self, name: &str) -> Address {
        *self
            .addresses
            .get(name)
            .unwrap_or_else(|| panic!("no scenario address {name:?}"))
    }
}

const ETH: u128 = 1_000_000_000_000_000_000;

/// Starts anvil, deploys the test contracts and sends the scenario's
/// transactions (every one mined; receipts checked by the caller).
pub fn scenario() -> Scenario {
    scenario_with_args(&[])
}

/// [`scenario`] on an anvil started with extra arguments (e.g. `--steps-tracing`).
pub fn scenario_with_args(extra: &[&str]) -> Scenario {
    let anvil = Anvil::start_with_args(extra);
    let accts = anvil.accounts();
    let (sender, alice, bob, carol) = (accts[0], accts[1], accts[2], accts[3]);
    let mut txs: Vec<ScenarioTx> = Vec::new();
    let mut addrs: BTreeMap<String, Address> = BTreeMap::new();
    addrs.insert("sender".into(), sender);
    addrs.insert("alice".into(), alice);
    addrs.insert("bob".into(), bob);
    addrs.insert("carol".into(), carol);

    let push = |txs: &mut Vec<ScenarioTx>, label: &str, hash: B256, ok: bool| {
        txs.push(ScenarioTx {
            label: label.to_string(),
            hash,
            expect_success: ok,
        });
    };

    // ---- deployments (contract-creation transactions, automine) ----
    for name in ["Logger", "DelegateTarget", "Reverter", "Burner", "Sink"] {
        let (h, a) = anvil.deploy_with(&creation_code(name), 0);
        push(&mut txs, &format!("deploy {name}"), h, true);
        addrs.insert(name.into(), a);
    }
    // Two pre-existing contracts to self-destruct later, funded at creation.
    for name in ["Doomed", "Doomed2"] {
        let (h, a) = anvil.deploy_with(&creation_code("Doomed"), ETH / 10);
        push(&mut txs, &format!("deploy {name} (payable)"), h, true);
        addrs.insert(name.into(), a);
    }
    // Hub: constructor arguments + value.
    let hub_code = with_ctor_args(
        &creation_code("Hub"),
        &[
            w_addr(addrs["Logger"]),
            w_addr(addrs["DelegateTarget"]),
            w_addr(addrs["Reverter"]),
            w_addr(addrs["Burner"]),
        ],
    );
    let (h, hub) = anvil.deploy_with(&hub_code, ETH);
    push(&mut txs, "deploy Hub (ctor args, payable)", h, true);
    addrs.insert("Hub".into(), hub);

    let logger = addrs["Logger"];
    let reverter = addrs["Reverter"];
    let burner = addrs["Burner"];
    let sink = addrs["Sink"];
    let doomed = addrs["Doomed"];
    let doomed2 = addrs["Doomed2"];

    let call = |to: Address, data: Vec<u8>, value: u128, gas: Option<u64>| -> Value {
        let mut tx = json!({"to": to, "data": hex0x(&data), "value": qty(value)});
        if let Some(g) = gas {
            tx["gas"] = json!(qty(g as u128));
        }
        tx
    };

    // (label, tx, expect_success), each mined in its own block.
    let singles: Vec<(&str, Value, bool)> = vec![
        // ---- plain value transfers ----
        (
            "transfer EOA->EOA",
            json!({"to": alice, "value": qty(ETH)}),
            true,
        ),
        (
            "transfer EOA->EOA legacy (type 0)",
            json!({"to": bob, "value": qty(ETH / 2), "gasPrice": qty(3_000_000_000)}),
            true,
        ),
        (
            "transfer EOA->contract receive()",
            json!({"to": sink, "value": qty(ETH / 4)}),
            true,
        ),
        // ---- logs ----
        (
            "LOG0..LOG4",
            call(logger, calldata("logAll(uint256)", &[w_u(77)]), 0, None),
            true,
        ),
        (
            "LOG0..LOG4 with access list (type 1)",
            json!({
                "to": logger,
                "data": hex0x(&calldata("logAll(uint256)", &[w_u(78)])),
                "gasPrice": qty(3_000_000_000),
                "accessList": [{"address": logger, "storageKeys": [B256::ZERO]}],
            }),
            true,
        ),
        // ---- nesting / call kinds ----
        (
            "deep nesting (5 levels, value forwarded)",
            call(hub, calldata("deep(uint256)", &[w_u(4)]), ETH / 100, None),
            true,
        ),
        (
            "delegatecall",
            call(hub, calldata("delegate(uint256)", &[w_u(42)]), 0, None),
            true,
        ),
        (
            "staticcall (incl. write-protection failure)",
            call(
                hub,
                calldata("staticStuff(uint256)", &[w_u(5)]),
                0,
                Some(EXPLICIT_GAS),
            ),
            true,
        ),
        (
            "CREATE + CREATE2 (+ failed CREATE)",
            call(
                hub,
                calldata("spawn(bytes32)", &[w_b32(B256::repeat_byte(0x5a))]),
                ETH / 10,
                None,
            ),
            true,
        ),
        // ---- selfdestruct ----
        (
            "selfdestruct same-tx (CREATE2+destroy)",
            call(
                hub,
                calldata(
                    "createAndDestroy(bytes32,address)",
                    &[w_b32(B256::repeat_byte(0xd1)), w_addr(carol)],
                ),
                ETH / 20,
                None,
            ),
            true,
        ),
        (
            "selfdestruct same-tx again (same salt)",
            call(
                hub,
                calldata(
                    "createAndDestroy(bytes32,address)",
                    &[w_b32(B256::repeat_byte(0xd1)), w_addr(carol)],
                ),
                ETH / 20,
                None,
            ),
            true,
        ),
        (
            "selfdestruct pre-existing (via Hub)",
            call(
                hub,
                calldata(
                    "destroyExisting(address,address)",
                    &[w_addr(doomed), w_addr(bob)],
                ),
                0,
                None,
            ),
            true,
        ),
        (
            "selfdestruct pre-existing (direct)",
            call(
                doomed2,
                calldata("destroy(address)", &[w_addr(alice)]),
                0,
                None,
            ),
            true,
        ),
        (
            "value to self-destructed pre-existing contract",
            json!({"to": doomed, "value": qty(1_000)}),
            true,
        ),
        // ---- precompiles ----
        (
            "precompiles 0x01 0x02 0x03 0x04 0x05",
            call(hub, calldata("precompiles()", &[]), 0, None),
            true,
        ),
        // ---- value forwarding ----
        (
            "value fanout (transfer, call, forward)",
            call(
                hub,
                calldata("fanout(address,address)", &[w_addr(carol), w_addr(sink)]),
                ETH,
                None,
            ),
            true,
        ),
        // ---- caught failures inside successful txs ----
        (
            "caught reverts (Error, custom, Panic x2, empty)",
            call(hub, calldata("tryCatchAll()", &[]), 0, Some(EXPLICIT_GAS)),
            true,
        ),
        (
            "OOG subcall caught",
            call(hub, calldata("oogCaught()", &[]), 0, Some(EXPLICIT_GAS)),
            true,
        ),
        // ---- top-level failures (explicit gas: no estimation) ----
        (
            "revert Error(string)",
            call(
                reverter,
                calldata("failString()", &[]),
                0,
                Some(EXPLICIT_GAS),
            ),
            false,
        ),
        (
            "revert require(...) Error(string)",
            call(
                reverter,
                calldata("failRequire(uint256)", &[w_u(1)]),
                0,
                Some(EXPLICIT_GAS),
            ),
            false,
        ),
        (
            "revert custom error (nested, bubbled)",
            call(
                hub,
                calldata("failNested(uint256)", &[w_u(0xbeef)]),
                0,
                Some(EXPLICIT_GAS),
            ),
            false,
        ),
        (
            "revert custom error (direct)",
            call(
                reverter,
                calldata("failCustom(uint256)", &[w_u(9)]),
                0,
                Some(EXPLICIT_GAS),
            ),
            false,
        ),
        (
            "Panic division by zero",
            call(
                reverter,
                calldata("div(uint256,uint256)", &[w_u(1), w_u(0)]),
                0,
                Some(EXPLICIT_GAS),
            ),
            false,
        ),
        (
            "Panic assert",
            call(
                reverter,
                calldata("assertFail(uint256)", &[w_u(1)]),
                0,
                Some(EXPLICIT_GAS),
            ),
            false,
        ),
        (
            "revert empty data",
            call(
                reverter,
                calldata("failEmpty()", &[]),
                0,
                Some(EXPLICIT_GAS),
            ),
            false,
        ),
        (
            "top-level out of gas (SSTORE loop)",
            call(burner, calldata("burn()", &[]), 0, Some(100_000)),
            false,
        ),
        (
            "top-level out of gas (pure loop)",
            call(burner, calldata("spin()", &[]), 0, Some(60_000)),
            false,
        ),
        (
            "revert: value sent to non-payable function",
            call(
                hub,
                calldata("failNested(uint256)", &[w_u(1)]),
                ETH / 100,
                Some(EXPLICIT_GAS),
            ),
            false,
        ),
    ];
    for (label, tx, ok) in singles {
        let (h, _r) = anvil.send_and_wait(tx);
        push(&mut txs, label, h, ok);
    }

    // ---- several transactions in ONE block, with state dependencies ----
    // Two senders; the second delegate() reads what the first wrote.
    let block_txs: Vec<(&str, Value, bool)> = vec![
        (
            "block: transfer",
            json!({"to": carol, "value": qty(ETH / 3)}),
            true,
        ),
        (
            "block: delegatecall #1",
            call(
                hub,
                calldata("delegate(uint256)", &[w_u(5)]),
                0,
                Some(EXPLICIT_GAS),
            ),
            true,
        ),
        (
            "block: delegatecall #2 (reads #1)",
            call(
                hub,
                calldata("delegate(uint256)", &[w_u(6)]),
                0,
                Some(EXPLICIT_GAS),
            ),
            true,
        ),
        (
            "block: revert Error(string)",
            call(
                reverter,
                calldata("failString()", &[]),
                0,
                Some(EXPLICIT_GAS),
            ),
            false,
        ),
        (
            "block: LOG0..LOG4 from another sender",
            {
                let mut t = call(
                    logger,
                    calldata("logAll(uint256)", &[w_u(99)]),
                    0,
                    Some(EXPLICIT_GAS),
                );
                t["from"] = json!(alice);
                t
            },
            true,
        ),
        (
            "block: deep nesting",
            call(
                hub,
                calldata("deep(uint256)", &[w_u(3)]),
                1_000,
                Some(EXPLICIT_GAS),
            ),
            true,
        ),
    ];
    let labels: Vec<(&str, bool)> = block_txs.iter().map(|(l, _, ok)| (*l, *ok)).collect();
    let hashes = anvil.send_in_one_block(block_txs.into_iter().map(|(_, t, _)| t).collect());
    for ((label, ok), h) in labels.into_iter().zip(&hashes) {
        push(&mut txs, label, *h, ok);
    }

    let url = anvil.url.clone();
    Scenario {
        anvil,
        url,
        txs,
        addresses: addrs,
        multi_tx_block: hashes,
    }
}

/// Known anvil difference: it keeps accounts that were empty before the transaction (zero balance
/// and nonce, no code); geth v1.17 drops them unless `includeEmpty` is set.
pub fn drop_empty_accounts(v: &mut Value) {
    let Some(map) = v.as_object_mut() else { return };
    if let Some(pre) = map.get_mut("pre") {
        drop_empty_accounts(pre);
        return;
    }
    map.retain(|_, acc| {
        let zero_balance = acc
            .get("balance")
            .and_then(Value::as_str)
            .is_none_or(|b| b == "0x0");
        !(zero_balance && acc.get("nonce").is_none() && acc.get("code").is_none())
    });
}

/// Known anvil difference: its prestateTracer has no `codeHash` (geth v1.17 prints it whenever
/// code is non-empty). Ours is checked against the code, then removed for the comparison.
pub fn strip_code_hash(v: &mut Value, label: &str, failures: &mut Vec<String>) {
    let Some(map) = v.as_object_mut() else { return };
    if map.contains_key("pre") || map.contains_key("post") {
        for k in ["pre", "post"] {
            if let Some(m) = map.get_mut(k) {
                strip_code_hash(m, label, failures);
            }
        }
        return;
    }
    for (addr, acc) in map.iter_mut() {
        let Some(acc) = acc.as_object_mut() else {
            continue;
        };
        let hash = acc.remove("codeHash");
        if let (Some(h), Some(code)) = (&hash, acc.get("code").and_then(Value::as_str)) {
            let bytes = alloy_primitives::hex::decode(code.trim_start_matches("0x")).unwrap();
            let want = format!("{:?}", alloy_primitives::keccak256(&bytes));
            if h.as_str() != Some(&want) {
                failures.push(format!(
                    "{label}: {addr} codeHash {h} is not keccak(code) {want}"
                ));
            }
        }
    }
}
