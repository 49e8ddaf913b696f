//! The benchmarks' offline workloads, shared by benches/js_tracers.rs and benches/tracers.rs:
//! a storage/arithmetic loop, and a loop of calls into a token-like contract that each emit an
//! ERC-20 `Transfer`, both on a complete in-memory state, with timing helpers.

use std::time::{Duration, Instant};

use alloy_primitives::{address, hex, Address, Bytes, TxKind, U256};
use chaintrace::replay::{BlockInfo, EvmEnv, ReplayTx};
use chaintrace::source::{AccountData, StateSnapshot};
use revm::context::TxEnv;
use revm::primitives::hardfork::SpecId;

pub const SENDER: Address = address!("00000000000000000000000000000000000000f0");
pub const LOOP: Address = address!("000000000000000000000000000000000000c0de");
pub const CALLER: Address = address!("000000000000000000000000000000000000ca11");
pub const TOKEN: Address = address!("0000000000000000000000000000000000007070");
/// keccak256("Transfer(address,address,uint256)")
const TRANSFER: &str = "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";

/// `for (i = n; i != 0; i--) slot0 += i;` in 22 bytes.
pub fn loop_runtime(n: u32) -> Vec<u8> {
    let n = n.to_be_bytes();
    let mut code = vec![0x62, n[1], n[2], n[3]];
    code.extend(hex::decode("5b60005481016000556001900380600457 00".replace(' ', "")).unwrap());
    code
}

/// `for (i = n; i != 0; i--) TOKEN.call(transfer(i, i))`: call data is the selector
/// 0xa9059cbb, then `to` and `amount` (both `i`).
pub fn caller_runtime(n: u32) -> Vec<u8> {
    let n = n.to_be_bytes();
    let mut code = vec![0x62, n[1], n[2], n[3]];
    let body = format!(
        "5b 63a9059cbb 60e0 1b 6000 52 80 6004 52 80 6024 52 \
         6000 6000 6044 6000 6000 73{} 5a f1 50 \
         6001 90 03 80 6004 57 00",
        hex::encode(TOKEN)
    );
    code.extend(hex::decode(body.replace(' ', "")).unwrap());
    code
}

/// The token: `emit Transfer(msg.sender, to, amount)` from its call data, then STOP.
pub fn token_runtime() -> Vec<u8> {
    let body = format!("6024 35 6000 52 6004 35 33 7f{TRANSFER} 6020 6000 a3 00");
    hex::decode(body.replace(' ', "")).unwrap()
}

pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

pub fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..runs {
        let t = Instant::now();
        let out = f();
        times.push(t.elapsed());
        last = Some(out);
    }
    (median(times), last.unwrap())
}

pub struct Setup {
    pub name: &'static str,
    pub snap: StateSnapshot,
    pub env: EvmEnv,
    pub tx: ReplayTx,
}

fn account(code: Vec<u8>, balance: U256) -> AccountData {
    AccountData {
        balance,
        nonce: 0,
        code: code.into(),
    }
}

/// The workload called `name`: a transaction to `to` (LOOP or CALLER) on a state where the loop
/// runs `iterations` times and the caller makes `calls` calls.
pub fn setup(name: &'static str, to: Address, iterations: u32, calls: u32) -> Setup {
    let mut snap = StateSnapshot::complete();
    snap.insert_account(SENDER, account(Vec::new(), U256::from(10u128.pow(20))));
    snap.insert_account(LOOP, account(loop_runtime(iterations), U256::ZERO));
    snap.insert_account(CALLER, account(caller_runtime(calls), U256::ZERO));
    snap.insert_account(TOKEN, account(token_runtime(), U256::ZERO));
    let info = BlockInfo {
        number: 1,
        timestamp: 1,
        gas_limit: 30_000_000,
        base_fee: Some(0),
        ..Default::default()
    };
    let env = EvmEnv::new(SpecId::PRAGUE, 1, &info);
    let tx = ReplayTx {
        hash: Default::default(),
        sender: SENDER,
        env: TxEnv {
            caller: SENDER,
            gas_limit: 10_000_000,
            gas_price: 1,
            kind: TxKind::Call(to),
            nonce: 0,
            chain_id: Some(1),
            ..Default::default()
        },
        authorities: Vec::new(),
        raw: Bytes::new(),
        deposit: None,
        rollup: Default::default(),
    };
    Setup {
        name,
        snap,
        env,
        tx,
    }
}
