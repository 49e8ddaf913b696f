//! geth's `debug_traceCall` overrides: `stateOverrides` (per account `balance`, `nonce`, `code`,
//! `state`, `stateDiff`) and `blockOverrides` (`number`, `difficulty`, `time`, `gasLimit`,
//! `feeRecipient`, `prevRandao`, `baseFeePerGas`, `blobBaseFee`), read and applied as
//! go-ethereum v1.17's `internal/ethapi/override` does.
//!
//! Values use geth's encodings (hex quantities without leading zeros, 32-byte hex keys and
//! values), so the same JSON can be sent to a node with `--remote`. Field names match
//! case-insensitively, as Go's JSON decoder matches them; unknown fields are refused with their
//! name rather than silently ignored. `state` replaces an account's whole storage (every other
//! slot reads zero); `stateDiff` sets only the given slots. `movePrecompileToAddress`,
//! `beaconRoot` and `withdrawals` are refused, as geth refuses the last two for this method.

use std::collections::BTreeMap;

use alloy_primitives::{keccak256, Address, Bytes, B256, U256};
use revm::context::BlockEnv;
use revm::context_interface::block::BlobExcessGasAndPrice;
use revm::primitives::KECCAK_EMPTY;
use revm::state::AccountInfo;
use serde_json::{Map, Value};

use super::env::BlockInfo;
use crate::source::{to_bytecode, ReplayDb};

/// A malformed override.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct OverrideError(String);

fn err(msg: impl Into<String>) -> OverrideError {
    OverrideError(msg.into())
}

/// Overrides of one account.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AccountOverride {
    pub nonce: Option<u64>,
    pub code: Option<Bytes>,
    pub balance: Option<U256>,
    pub state: Option<BTreeMap<B256, B256>>,
    pub state_diff: Option<BTreeMap<B256, B256>>,
    /// `movePrecompileToAddress` (`eth_simulateV1` only): the precompile at this address moved
    /// there before any `code` is set here.
    pub move_precompile_to: Option<Address>,
}

/// `stateOverrides`: accounts in address order (geth applies them sorted).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StateOverride(pub BTreeMap<Address, AccountOverride>);

/// `blockOverrides`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BlockOverrides {
    pub number: Option<u64>,
    pub difficulty: Option<U256>,
    pub time: Option<u64>,
    pub gas_limit: Option<u64>,
    pub fee_recipient: Option<Address>,
    pub prev_randao: Option<B256>,
    pub base_fee_per_gas: Option<U256>,
    pub blob_base_fee: Option<U256>,
    /// `beaconRoot` (`eth_simulateV1` only; geth refuses it for `debug_traceCall`).
    pub beacon_root: Option<B256>,
    /// `withdrawals` (`eth_simulateV1` only), credited after the block's calls.
    pub withdrawals: Option<Vec<alloy_eips::eip4895::Withdrawal>>,
}

/// geth's `hexutil.Big`: `0x` and hex digits, no leading zeros, at most 256 bits.
pub(crate) fn quantity(v: &Value, what: &str) -> Result<U256, OverrideError> {
    let s = v
        .as_str()
        .ok_or_else(|| err(format!("{what}: expected a 0x hex string, got {v}")))?;
    let digits = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .ok_or_else(|| err(format!("{what}: {s:?} lacks the 0x prefix")))?;
    if digits.is_empty() {
        return Err(err(format!("{what}: {s:?} has no digits")));
    }
    if digits.len() > 1 && digits.starts_with('0') {
        return Err(err(format!("{what}: {s:?} has leading zero digits")));
    }
    U256::from_str_radix(digits, 16)
        .map_err(|_| err(format!("{what}: {s:?} is not a 256-bit hex number")))
}

pub(crate) fn quantity_u64(v: &Value, what: &str) -> Result<u64, OverrideError> {
    u64::try_from(quantity(v, what)?).map_err(|_| err(format!("{what}: {v} exceeds 64 bits")))
}

pub(crate) fn hash(s: &str, what: &str) -> Result<B256, OverrideError> {
    let ok = s.len() == 66 && s.starts_with("0x");
    ok.then(|| s.parse::<B256>().ok())
        .flatten()
        .ok_or_else(|| err(format!("{what}: {s:?} is not 0x followed by 64 hex digits")))
}

fn slots(v: &Value, what: &str) -> Result<BTreeMap<B256, B256>, OverrideError> {
    let o = v
        .as_object()
        .ok_or_else(|| err(format!("{what}: expected an object of slot → value")))?;
    let mut out = BTreeMap::new();
    for (k, val) in o {
        let key = hash(k, &format!("{what} key"))?;
        let s = val
            .as_str()
            .ok_or_else(|| err(format!("{what}[{k}]: expected a hex string")))?;
        out.insert(key, hash(s, &format!("{what}[{k}]"))?);
    }
    Ok(out)
}

/// geth's `types.Withdrawals`: `[{"index", "validatorIndex", "address", "amount"}]`, the
/// amount in gwei.
fn withdrawals(
    v: &Value,
    what: &str,
) -> Result<Vec<alloy_eips::eip4895::Withdrawal>, OverrideError> {
    let list = v
        .as_array()
        .ok_or_else(|| err(format!("{what}: expected an array")))?;
    list.iter()
        .enumerate()
        .map(|(i, w)| {
            let o = object(w, &format!("{what}[{i}]"))?;
            let field = |k: &str| {
                o.iter()
                    .find(|(name, _)| name.eq_ignore_ascii_case(k))
                    .map(|(_, v)| v)
                    .ok_or_else(|| err(format!("{what}[{i}]: missing {k}")))
            };
            let address = field("address")?
                .as_str()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| err(format!("{what}[{i}].address: not an address")))?;
            Ok(alloy_eips::eip4895::Withdrawal {
                index: quantity_u64(field("index")?, &format!("{what}[{i}].index"))?,
                validator_index: quantity_u64(
                    field("validatorIndex")?,
                    &format!("{what}[{i}].validatorIndex"),
                )?,
                address,
                amount: quantity_u64(field("amount")?, &format!("{what}[{i}].amount"))?,
            })
        })
        .collect()
}

fn object<'a>(v: &'a Value, what: &str) -> Result<&'a Map<String, Value>, OverrideError> {
    v.as_object()
        .ok_or_else(|| err(format!("{what}: expected a JSON object")))
}

impl StateOverride {
    /// Parses geth's `stateOverrides` object: `{"0xaddr": {"balance": "0x…", …}}`.
    pub fn from_json(v: &Value) -> Result<Self, OverrideError> {
        Self::parse(v, false)
    }

    /// [`from_json`](Self::from_json) as `eth_simulateV1` reads it: `movePrecompileToAddress`
    /// allowed.
    pub fn from_json_simulate(v: &Value) -> Result<Self, OverrideError> {
        Self::parse(v, true)
    }

    fn parse(v: &Value, simulate: bool) -> Result<Self, OverrideError> {
        let mut out = BTreeMap::new();
        for (addr, acc) in object(v, "state override")? {
            let address: Address = addr
                .parse()
                .map_err(|_| err(format!("state override: {addr:?} is not an address")))?;
            let what = |f: &str| format!("state override {addr}.{f}");
            let mut a = AccountOverride::default();
            for (k, val) in object(acc, &format!("state override {addr}"))? {
                if val.is_null() {
                    continue;
                }
                match k.to_ascii_lowercase().as_str() {
                    "nonce" => a.nonce = Some(quantity_u64(val, &what(k))?),
                    "balance" => a.balance = Some(quantity(val, &what(k))?),
                    "code" => {
                        let s = val
                            .as_str()
                            .ok_or_else(|| err(format!("{}: expected hex", what(k))))?;
                        let bytes = s
                            .strip_prefix("0x")
                            .and_then(|h| alloy_primitives::hex::decode(h).ok())
                            .ok_or_else(|| {
                                err(format!("{}: {s:?} is not 0x hex bytes", what(k)))
                            })?;
                        a.code = Some(bytes.into());
                    }
                    "state" => a.state = Some(slots(val, &what(k))?),
                    "statediff" => a.state_diff = Some(slots(val, &what(k))?),
                    "moveprecompiletoaddress" if simulate => {
                        let to = val
                            .as_str()
                            .and_then(|s| s.parse().ok())
                            .ok_or_else(|| err(format!("{}: {val} is not an address", what(k))))?;
                        a.move_precompile_to = Some(to);
                    }
                    "moveprecompiletoaddress" => {
                        return Err(err(format!(
                            "{}: moving precompiles is not supported",
                            what(k)
                        )))
                    }
                    _ => return Err(err(format!("state override {addr}: unknown field {k:?}"))),
                }
            }
            if a.state.is_some() && a.state_diff.is_some() {
                return Err(err(format!(
                    "account {} has both 'state' and 'stateDiff'",
                    address.to_checksum(None)
                )));
            }
            out.insert(address, a);
        }
        Ok(StateOverride(out))
    }

    /// Applies the overrides to the replay's database, before the call runs. Reads of the base
    /// account go through the snapshot, so a missing account is fetched like any other miss.
    pub fn apply(&self, db: &mut ReplayDb<'_>) {
        for (addr, a) in &self.0 {
            let mut info = match db.load_account(*addr) {
                Ok(acc) => acc.info.clone(),
                Err(_) => AccountInfo::default(),
            };
            if let Some(n) = a.nonce {
                info.nonce = n;
            }
            if let Some(code) = &a.code {
                info.code_hash = if code.is_empty() {
                    KECCAK_EMPTY
                } else {
                    keccak256(code)
                };
                info.code = Some(to_bytecode(code));
            }
            if let Some(b) = a.balance {
                info.balance = b;
            }
            db.insert_account_info(*addr, info);
            if let Some(state) = &a.state {
                let map = state
                    .iter()
                    .map(|(k, v)| (U256::from_be_bytes(k.0), U256::from_be_bytes(v.0)))
                    .collect();
                let _ = db.replace_account_storage(*addr, map);
            }
            for (k, v) in a.state_diff.iter().flatten() {
                let _ = db.insert_account_storage(
                    *addr,
                    U256::from_be_bytes(k.0),
                    U256::from_be_bytes(v.0),
                );
            }
        }
    }
}

impl BlockOverrides {
    /// Parses geth's `blockOverrides` object.
    pub fn from_json(v: &Value) -> Result<Self, OverrideError> {
        Self::parse(v, false)
    }

    /// [`from_json`](Self::from_json) as `eth_simulateV1` reads it: `beaconRoot` and
    /// `withdrawals` allowed.
    pub fn from_json_simulate(v: &Value) -> Result<Self, OverrideError> {
        Self::parse(v, true)
    }

    fn parse(v: &Value, simulate: bool) -> Result<Self, OverrideError> {
        let mut o = BlockOverrides::default();
        for (k, val) in object(v, "block override")? {
            if val.is_null() {
                continue;
            }
            let what = format!("block override {k}");
            match k.to_ascii_lowercase().as_str() {
                "number" => o.number = Some(quantity_u64(val, &what)?),
                "difficulty" => o.difficulty = Some(quantity(val, &what)?),
                "time" => o.time = Some(quantity_u64(val, &what)?),
                "gaslimit" => o.gas_limit = Some(quantity_u64(val, &what)?),
                "feerecipient" => {
                    let s = val.as_str().unwrap_or_default();
                    o.fee_recipient = Some(
                        s.parse()
                            .map_err(|_| err(format!("{what}: {val} is not an address")))?,
                    );
                }
                "prevrandao" => {
                    o.prev_randao = Some(hash(val.as_str().unwrap_or_default(), &what)?)
                }
                "basefeepergas" => o.base_fee_per_gas = Some(quantity(val, &what)?),
                "blobbasefee" => o.blob_base_fee = Some(quantity(val, &what)?),
                "beaconroot" if simulate => {
                    o.beacon_root = Some(hash(val.as_str().unwrap_or_default(), &what)?)
                }
                "withdrawals" if simulate => o.withdrawals = Some(withdrawals(val, &what)?),
                "beaconroot" | "withdrawals" => {
                    return Err(err(format!(
                        "block override {k:?} is not supported for this RPC method"
                    )))
                }
                _ => return Err(err(format!("block override: unknown field {k:?}"))),
            }
        }
        Ok(o)
    }

    /// Applies the header fields that decide the fork and the defaults (number, time, gas
    /// limit, coinbase, difficulty, randao, base fee) to the block the call runs in.
    pub fn apply_info(&self, info: &mut BlockInfo) -> Result<(), OverrideError> {
        if let Some(n) = self.number {
            info.number = n;
        }
        if let Some(t) = self.time {
            info.timestamp = t;
        }
        if let Some(g) = self.gas_limit {
            info.gas_limit = g;
        }
        if let Some(c) = self.fee_recipient {
            info.coinbase = c;
        }
        if let Some(d) = self.difficulty {
            info.difficulty = d;
        }
        if let Some(r) = self.prev_randao {
            info.mix_hash = r;
        }
        if let Some(b) = self.base_fee_per_gas {
            info.base_fee =
                Some(u64::try_from(b).map_err(|_| err("baseFeePerGas exceeds 64 bits"))?);
        }
        Ok(())
    }

    /// Applies what only the block environment holds (the blob base fee).
    pub fn apply_env(&self, block: &mut BlockEnv) -> Result<(), OverrideError> {
        if let Some(fee) = self.blob_base_fee {
            let fee = u128::try_from(fee).map_err(|_| err("blobBaseFee exceeds 128 bits"))?;
            let excess = block
                .blob_excess_gas_and_price
                .map_or(0, |b| b.excess_blob_gas);
            block.blob_excess_gas_and_price = Some(BlobExcessGasAndPrice {
                excess_blob_gas: excess,
                blob_gasprice: fee,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_geth_forms_and_refuses_bad_ones() {
        let a = "0x00000000000000000000000000000000000000aa";
        let slot = format!("0x{:064x}", 1);
        let o = StateOverride::from_json(&json!({a: {"Balance": "0xde0b6b3a7640000",
            "nonce": "0x5", "code": "0x6000", "stateDiff": {slot.clone(): slot.clone()}}}))
        .unwrap();
        let acc = &o.0[&a.parse::<Address>().unwrap()];
        assert_eq!(acc.balance, Some(U256::from(10u64.pow(18))));
        assert_eq!(acc.nonce, Some(5));
        assert_eq!(acc.code.as_ref().map(|c| c.to_vec()), Some(vec![0x60, 0]));
        assert_eq!(acc.state_diff.as_ref().unwrap().len(), 1);
        for (bad, needle) in [
            (json!({a: {"balance": "0x01"}}), "leading zero"),
            (json!({a: {"balance": 1}}), "expected a 0x hex string"),
            (
                json!({a: {"nonce": "0x1ffffffffffffffff"}}),
                "exceeds 64 bits",
            ),
            (
                json!({a: {"state": {}, "stateDiff": {}}}),
                "both 'state' and 'stateDiff'",
            ),
            (json!({a: {"state": {"0x01": slot}}}), "64 hex digits"),
            (json!({a: {"balanse": "0x1"}}), "unknown field \"balanse\""),
            (json!({"0x12": {}}), "is not an address"),
            (json!([1]), "expected a JSON object"),
        ] {
            let e = StateOverride::from_json(&bad).unwrap_err().to_string();
            assert!(e.contains(needle), "{bad}: {e}");
        }
        let b = BlockOverrides::from_json(&json!({"number": "0x10", "time": "0x20",
            "baseFeePerGas": "0x7", "feeRecipient": a}))
        .unwrap();
        assert_eq!((b.number, b.time), (Some(16), Some(32)));
        let e = BlockOverrides::from_json(&json!({"beaconRoot": slot})).unwrap_err();
        assert!(e.to_string().contains("not supported"), "{e}");
    }
}
