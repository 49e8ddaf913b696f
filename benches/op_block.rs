//! An OP-stack block against an Ethereum block of the same user transactions, on the same
//! pre-state, in process (issue 33: the OP block within 1.15× the Ethereum one's time).
//!
//! Two blocks of 150 signed EIP-1559 transactions from 10 senders
//! (`benches/support/workloads.rs`'s contracts):
//! - `light`: ERC-20-like transfers (68 bytes of calldata, a `Transfer` log), plain value
//!   transfers, and calls with 260 bytes of calldata into a contract that makes 5 token calls
//!   (~26k gas a transaction: the OP stack's fixed cost per transaction weighs most);
//! - `heavier`: every transaction such a call making 40 token calls (~104k gas a transaction,
//!   nearer an L2 block's average).
//!
//! - **OP** (chain 10, OP Mainnet, a block after its Isthmus time, so its schedule gives every
//!   fork through Isthmus): the L1 attributes deposit first, which writes the L1Block
//!   predeploy's slots 0–8 (a stand-in for the predeploy's code: one `CALLDATALOAD`/`SSTORE` per
//!   slot, the same slots the real `setL1BlockValuesIsthmus` writes), then each user
//!   transaction priced from those slots (Fjord's FastLZ L1 data fee of its encoding, Isthmus'
//!   operator fee), the fees taken and the BaseFeeVault, L1FeeVault and OperatorFeeVault
//!   credited, the OP precompile set (RIP-7212 `p256Verify`, Granite's pairing limit) in the
//!   EVM;
//! - **Ethereum** (the same chain id under `Ruleset::Ethereum`): the same user transactions, no
//!   deposit, no L1 fee, the base fee burned.
//!
//! Each side replays the whole block on a fresh view of the one pre-state, untraced (`apply`,
//! as a block's earlier transactions run) and under the callTracer (`trace`, as `block N`
//! runs), interleaved, RUNS runs: on the same transaction values, whose L1 cost data is worked
//! out once (`RollupCache`), and as a first pass on fresh copies each run. Run: `cargo bench
//! --bench op_block`. Prints medians and
//! minima and the ratios OP / Ethereum; asserts only that both replays succeed and the OP one
//! charged an L1 fee.

// Shared with the other benches, which use the parts this one does not.
#[allow(dead_code)]
#[path = "support/workloads.rs"]
mod workloads;

use std::time::{Duration, Instant};

use alloy_consensus::{SignableTransaction, TxEip1559, TxEnvelope};
use alloy_primitives::{address, Address, Bytes, TxKind, B256, U256};
use alloy_signer::SignerSync;
use alloy_signer_local::PrivateKeySigner;
use chaintrace::chain::op::{OpFork, L1_BLOCK, SEQUENCER_FEE_VAULT};
use chaintrace::chain::rules::Ruleset;
use chaintrace::replay::{apply, trace, BlockInfo, EvmEnv, ReplayTx};
use chaintrace::source::deposit::{Deposit, DepositTx};
use chaintrace::source::{AccountData, StateSnapshot};
use chaintrace::trace::{TracerKind, TracerSpec};
use workloads::{caller_runtime, median, token_runtime, CALLER, TOKEN};

const RUNS: usize = 31;
const TXS: usize = 150;
const SENDERS: usize = 10;
const CHAIN_ID: u64 = 10;
/// OP Mainnet's L1 attributes depositor (op-geth `L1InfoDepositerAddress`).
const DEPOSITOR: Address = address!("deaddeaddeaddeaddeaddeaddeaddeaddead0001");
/// After OP Mainnet's Isthmus time (1,746,806,401) and before its Jovian time.
const TIMESTAMP: u64 = 1_750_000_000;
const BASE_FEE: u64 = 1_000_000;

/// The stand-in for the L1Block predeploy: `sstore(i, calldataload(4 + 32·i))` for slots 0–8.
fn l1_block_runtime() -> Vec<u8> {
    let mut code = Vec::new();
    for slot in 0u8..9 {
        let off = 4 + 32 * u16::from(slot);
        code.extend([0x61, (off >> 8) as u8, off as u8, 0x35, 0x60, slot, 0x55]);
    }
    code.push(0x00);
    code
}

fn word(v: U256) -> [u8; 32] {
    v.to_be_bytes::<32>()
}

/// Slot 3: sequence number, then the Ecotone scalars at bytes [16, 20) and [20, 24); slot 8:
/// the operator fee scalar at [20, 24) and constant at [24, 32).
fn packed(at: &[(usize, &[u8])]) -> U256 {
    let mut w = [0u8; 32];
    for (i, b) in at {
        w[*i..*i + b.len()].copy_from_slice(b);
    }
    U256::from_be_bytes(w)
}

/// The L1 attributes deposit: the L1 origin's values for slots 0–8 (L1 base fee 0.5 gwei,
/// Base's scalars 2,269 and 1,055,762, blob base fee 1, operator fee scalar 2 and constant 1000).
fn l1_attributes() -> ReplayTx {
    let slots = [
        U256::from(22_000_000u64),
        U256::from(500_000_000u64),
        U256::from_be_bytes([0x11; 32]),
        packed(&[
            (16, &2269u32.to_be_bytes()),
            (20, &1_055_762u32.to_be_bytes()),
        ]),
        U256::from_be_bytes([0x22; 32]),
        U256::ZERO,
        U256::ZERO,
        U256::from(1u64),
        packed(&[(20, &2u32.to_be_bytes()), (24, &1000u64.to_be_bytes())]),
    ];
    let mut data = vec![0x09, 0x89, 0x99, 0xbe];
    for s in slots {
        data.extend(word(s));
    }
    let mut d = DepositTx {
        deposit: Deposit {
            source_hash: B256::repeat_byte(0xab),
            mint: None,
            is_system_tx: false,
        },
        from: DEPOSITOR,
        kind: TxKind::Call(L1_BLOCK),
        value: U256::ZERO,
        gas_limit: 1_000_000,
        data: data.into(),
        hash: B256::ZERO,
    };
    d.hash = alloy_primitives::keccak256(d.encode());
    ReplayTx::from_deposit(d)
}

/// The block's user transactions, signed, and the senders; `heavier`: all calls of CALLER.
fn user_txs(heavier: bool) -> (Vec<ReplayTx>, Vec<Address>) {
    let keys: Vec<PrivateKeySigner> = (1..=SENDERS as u8)
        .map(|i| PrivateKeySigner::from_bytes(&B256::repeat_byte(i)).unwrap())
        .collect();
    let mut nonces = [0u64; SENDERS];
    let txs = (0..TXS)
        .map(|i| {
            let s = i % SENDERS;
            let recipient = Address::repeat_byte(0x30 + (i % 7) as u8);
            let kind = if heavier { 2 } else { i % 3 };
            let (to, value, input, gas) = match kind {
                0 => {
                    let mut d = vec![0xa9, 0x05, 0x9c, 0xbb];
                    d.extend(word(U256::from_be_slice(recipient.as_slice())));
                    d.extend(word(U256::from(1_000 + i)));
                    (TOKEN, U256::ZERO, d, 60_000)
                }
                1 => (recipient, U256::from(10u64.pow(15)), Vec::new(), 21_000),
                _ => {
                    let mut d = vec![0x38, 0xed, 0x17, 0x39];
                    for k in 0..8u64 {
                        d.extend(word(U256::from(i as u64 * 1_000_003 + k * 77)));
                    }
                    (CALLER, U256::ZERO, d, 400_000)
                }
            };
            let tx = TxEip1559 {
                chain_id: CHAIN_ID,
                nonce: nonces[s],
                gas_limit: gas,
                max_fee_per_gas: 2 * u128::from(BASE_FEE),
                max_priority_fee_per_gas: 100_000,
                to: TxKind::Call(to),
                value,
                access_list: Default::default(),
                input: Bytes::from(input),
            };
            nonces[s] += 1;
            let sig = keys[s].sign_hash_sync(&tx.signature_hash()).unwrap();
            let envelope = TxEnvelope::from(tx.into_signed(sig));
            ReplayTx::from_envelope_with_sender(envelope, keys[s].address()).unwrap()
        })
        .collect();
    (txs, keys.iter().map(|k| k.address()).collect())
}

fn pre_state(senders: &[Address], calls: u32) -> StateSnapshot {
    let account = |code: Vec<u8>, balance: U256| AccountData {
        balance,
        nonce: 0,
        code: code.into(),
    };
    let mut snap = StateSnapshot::complete();
    for s in senders {
        snap.insert_account(*s, account(Vec::new(), U256::from(10u128.pow(20))));
    }
    snap.insert_account(CALLER, account(caller_runtime(calls), U256::ZERO));
    snap.insert_account(TOKEN, account(token_runtime(), U256::ZERO));
    snap.insert_account(L1_BLOCK, account(l1_block_runtime(), U256::ZERO));
    // The previous block's L1 values, which the deposit overwrites.
    for slot in 0..9u64 {
        snap.insert_slot(L1_BLOCK, U256::from(slot), U256::from(slot + 1));
    }
    snap
}

fn env(ruleset: Ruleset) -> EvmEnv {
    let info = BlockInfo {
        number: 136_000_000,
        timestamp: TIMESTAMP,
        coinbase: SEQUENCER_FEE_VAULT,
        gas_limit: 60_000_000,
        base_fee: Some(BASE_FEE),
        ruleset,
        ..Default::default()
    };
    EvmEnv::new(OpFork::Isthmus.eth_spec(), CHAIN_ID, &info)
}

/// One replay of `txs` on a fresh view of `snap`, untraced or under `spec`; the time and the
/// gas used. The OP side's user transactions must each have been charged an L1 fee.
fn block(
    snap: &StateSnapshot,
    env: &EvmEnv,
    txs: &[ReplayTx],
    spec: Option<&TracerSpec>,
) -> (Duration, u64) {
    let t = Instant::now();
    let mut db = snap.db();
    let mut gas = 0;
    for tx in txs {
        let outcome = match spec {
            None => apply(&mut db, env, tx).unwrap(),
            Some(spec) => {
                let r = trace(&mut db, env, tx, spec, 0).unwrap();
                std::hint::black_box(r.result);
                r.outcome
            }
        };
        assert!(outcome.success, "{}", tx.hash);
        if env.op.is_some() && tx.deposit.is_none() {
            assert!(outcome
                .op_fee
                .as_ref()
                .and_then(|f| f.l1)
                .is_some_and(|c| !c.fee.is_zero()));
        }
        gas += outcome.gas_used;
    }
    (t.elapsed(), gas)
}

/// Keeps the heap the process grew (glibc's trim and mmap thresholds at 1 GiB): otherwise
/// the memory a block's replay frees is given back to the system and faulted in again by a
/// later run now and then, and a side's times split into two modes 30–50 % apart whatever it
/// runs (seen on the Ethereum `heavier` block: 3.8 or 5.7 ms for the same work).
fn keep_the_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets glibc's tuning parameters, before any thread is started.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 30);
    }
}

fn main() {
    keep_the_heap();
    if let Ok(side) = std::env::var("OP_BLOCK_PROFILE") {
        return profile(&side);
    }
    println!(
        "{:<8} {:<24} {:>10} {:>10} {:>7} {:>10} {:>10} {:>7}",
        "block", "replay", "OP", "Ethereum", "ratio", "OP min", "Eth min", "ratio"
    );
    for (name, heavier, calls) in [("light", false, 5), ("heavier", true, 40)] {
        let (users, senders) = user_txs(heavier);
        let snap = pre_state(&senders, calls);
        compare(name, &snap, &users);
    }
}

/// Fresh copies of the transactions, their L1 cost data not yet worked out (`RollupCache`): a
/// replay's first pass over them. Later passes, and every run on the same copies here, find it
/// worked out, as op-geth's cached `RollupCostData`.
fn fresh(txs: &[ReplayTx]) -> Vec<ReplayTx> {
    txs.iter()
        .map(|t| ReplayTx {
            rollup: Default::default(),
            ..t.clone()
        })
        .collect()
}

/// Times the OP block (the deposit, then `users`) against the Ethereum block of `users` on
/// `snap`, untraced and under the callTracer.
fn compare(name: &str, snap: &StateSnapshot, users: &[ReplayTx]) {
    let op_env = env(Ruleset::Chain);
    let eth_env = env(Ruleset::Ethereum);
    assert!(op_env
        .op
        .is_some_and(|r| r.latest() == Some(OpFork::Isthmus)));
    assert!(eth_env.op.is_none());
    let op_txs: Vec<ReplayTx> = std::iter::once(l1_attributes())
        .chain(users.iter().cloned())
        .collect();
    let raw: usize = users.iter().map(|t| t.raw.len()).sum();
    let call = TracerSpec::new(TracerKind::Call, None).unwrap();
    let (_, op_gas) = block(snap, &op_env, &op_txs, None);
    let (_, eth_gas) = block(snap, &eth_env, users, None);
    println!(
        "# {name}: {} user transactions ({raw} bytes encoded), {eth_gas} gas; the OP block adds \
         its L1 attributes deposit ({} gas)",
        users.len(),
        op_gas - eth_gas
    );
    let rows = [
        ("untraced (apply)", None, false),
        ("untraced, first pass", None, true),
        ("callTracer", Some(&call), false),
        ("callTracer, first pass", Some(&call), true),
    ];
    for (label, spec, first) in rows {
        let (mut op, mut eth) = (Vec::new(), Vec::new());
        for _ in 0..RUNS {
            let (o, e) = if first {
                (fresh(&op_txs), fresh(users))
            } else {
                (op_txs.clone(), users.to_vec())
            };
            op.push(block(snap, &op_env, &o, spec).0);
            eth.push(block(snap, &eth_env, &e, spec).0);
        }
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let (op_min, eth_min) = (*op.iter().min().unwrap(), *eth.iter().min().unwrap());
        let (op, eth) = (median(op), median(eth));
        println!(
            "{:<8} {:<24} {:>8.2}ms {:>8.2}ms {:>6.3}x {:>8.2}ms {:>8.2}ms {:>6.3}x",
            name,
            label,
            ms(op),
            ms(eth),
            ms(op) / ms(eth),
            ms(op_min),
            ms(eth_min),
            ms(op_min) / ms(eth_min)
        );
    }
}

/// `OP_BLOCK_PROFILE=op|eth[,call][,first]`: only that side's `light` block, 5,000 times
/// (`OP_BLOCK_PROFILE_RUNS`; untraced, or under the callTracer with `,call`; on fresh copies of
/// the transactions each run with `,first`), for a profiler to compare the two sides.
fn profile(side: &str) {
    let (users, senders) = user_txs(false);
    if side == "fastlz" {
        // The FastLZ size of each encoding alone, what a first pass adds per transaction.
        let start = Instant::now();
        let mut sum = 0u64;
        for _ in 0..2_000 {
            for t in &users {
                sum += u64::from(chaintrace::chain::op::flz_compress_len(&t.raw));
            }
        }
        let per = start.elapsed().as_secs_f64() * 1e9 / (2_000.0 * users.len() as f64);
        println!("fastlz: {per:.0} ns a transaction (sizes {sum})");
        return;
    }
    let snap = pre_state(&senders, 5);
    let op = side.starts_with("op") || side.starts_with("deposit");
    let env = env(if op {
        Ruleset::Chain
    } else {
        Ruleset::Ethereum
    });
    let txs: Vec<ReplayTx> = if side.starts_with("deposit") {
        vec![l1_attributes()]
    } else if op {
        std::iter::once(l1_attributes()).chain(users).collect()
    } else {
        users
    };
    let call = TracerSpec::new(TracerKind::Call, None).unwrap();
    let spec = side.contains(",call").then_some(&call);
    // `,first`: fresh copies each run, as the first-pass rows (their L1 cost data not worked
    // out yet).
    let first = side.contains(",first");
    let runs: u32 = std::env::var("OP_BLOCK_PROFILE_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(5_000)
        .max(1);
    let mut total = Duration::ZERO;
    for _ in 0..runs {
        let copies;
        let txs = if first {
            copies = fresh(&txs);
            &copies
        } else {
            &txs
        };
        total += block(&snap, &env, txs, spec).0;
    }
    println!(
        "{side}: {:.3} ms a block",
        total.as_secs_f64() * 1e3 / f64::from(runs)
    );
}
