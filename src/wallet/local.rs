//! Self-custodial sending: a request's `params.transaction` signed locally with alloy's signer
//! and broadcast with `eth_sendRawTransaction`.
//!
//! What the request leaves out is asked of the node in one batch: the nonce (`pending`), the gas
//! (`eth_estimateGas`), the latest base fee and the suggested tip. The transaction is EIP-1559
//! unless the request gives a legacy `gas_price`; alloy's `TransactionRequest` builds it. The
//! private key is only ever held by the signer; no message names it.

use alloy_consensus::{SignableTransaction, TxEnvelope};
use alloy_eips::eip2718::Encodable2718;
use alloy_primitives::{Address, Bytes, B256, U256};
use alloy_rpc_types_eth::{TransactionInput, TransactionRequest};
use alloy_signer::SignerSync;
use alloy_signer_local::PrivateKeySigner;
use serde_json::{json, Map, Value};

use crate::policy::request::{address, quantity};
use crate::redact::elide_hex;
use crate::rpc::{RpcClient, RpcError};

/// Why a transaction or message was not signed locally. No message quotes the key.
#[derive(Debug, thiserror::Error)]
pub enum SignError {
    #[error("PRIVATE_KEY is not a 32-byte hex private key")]
    KeyNotHex,
    #[error("PRIVATE_KEY is not a valid secp256k1 private key")]
    KeyInvalid,
    #[error("signing failed: {0}")]
    Signing(#[from] alloy_signer::Error),
    #[error("`from` {} is not an address", elide_hex(&.0.to_string()))]
    From(Value),
    /// The request names another sender than the key's.
    #[error("`from` is {given} but PRIVATE_KEY is the key of {key}: refusing to sign")]
    OtherSender { given: Address, key: Address },
    #[error("`to` {} is not an address", elide_hex(&.0.to_string()))]
    To(Value),
    #[error("`data` {} is not hex", elide_hex(&.0.to_string()))]
    Data(Value),
    /// A request field that is not a quantity (named as the request's first spelling).
    #[error("`{field}` {} is not a quantity", elide_hex(&.value.to_string()))]
    NotQuantity { field: &'static str, value: Value },
    /// A nonce or gas amount past 64 bits.
    #[error("{what} {} does not fit in 64 bits", elide_hex(&.value.to_string()))]
    TooLarge { what: &'static str, value: U256 },
    /// A fee past 128 bits.
    #[error("{what} {} is too large", elide_hex(&.value.to_string()))]
    FeeTooLarge { what: &'static str, value: U256 },
    /// The batch asking the node for what the request leaves out failed.
    #[error(transparent)]
    Node(#[from] RpcError),
    #[error("no answer for {0}")]
    NoAnswer(&'static str),
    #[error("the node's nonce is not a quantity")]
    NodeNonce,
    #[error("the node's gas estimate is not a quantity")]
    NodeGasEstimate,
    /// The transaction request lacks what its type needs (never, as every field is filled).
    #[error("the transaction cannot be built: it lacks {}", .0.join(", "))]
    Incomplete(Vec<&'static str>),
}

/// A key read from the environment. `Debug` shows only the address.
pub struct LocalKey(PrivateKeySigner);

impl std::fmt::Debug for LocalKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LocalKey({})", self.0.address())
    }
}

impl LocalKey {
    /// Parses a 32-byte hex private key (with or without `0x`); the error never quotes it.
    pub fn parse(text: &str) -> Result<LocalKey, SignError> {
        let t = text.trim();
        let t = t.strip_prefix("0x").unwrap_or(t);
        let bytes = alloy_primitives::hex::decode(t)
            .ok()
            .filter(|b| b.len() == 32)
            .ok_or(SignError::KeyNotHex)?;
        PrivateKeySigner::from_slice(&bytes)
            .map(LocalKey)
            .map_err(|_| SignError::KeyInvalid)
    }

    pub fn address(&self) -> Address {
        self.0.address()
    }
}

/// Signs `message` as `personal_sign` does (EIP-191: keccak256 of
/// `"\x19Ethereum Signed Message:\n" + len + message`); the 65-byte signature `r ‖ s ‖ v`
/// with `v` 27 or 28.
pub fn sign_message(key: &LocalKey, message: &[u8]) -> Result<Bytes, SignError> {
    let sig = key.0.sign_message_sync(message)?;
    Ok(Bytes::from(sig.as_bytes().to_vec()))
}

/// A signed transaction ready to broadcast.
pub struct Signed {
    pub raw: Bytes,
    pub hash: B256,
    pub nonce: u64,
    pub gas_limit: u64,
}

fn field<'a>(tx: &'a Map<String, Value>, names: &[&str]) -> Option<&'a Value> {
    names
        .iter()
        .find_map(|n| tx.get(*n))
        .filter(|v| !v.is_null())
}

fn num(tx: &Map<String, Value>, names: &[&'static str]) -> Result<Option<U256>, SignError> {
    field(tx, names)
        .map(|v| {
            quantity(v).ok_or_else(|| SignError::NotQuantity {
                field: names[0],
                value: v.clone(),
            })
        })
        .transpose()
}

fn small(value: U256, what: &'static str) -> Result<u64, SignError> {
    u64::try_from(value).map_err(|_| SignError::TooLarge { what, value })
}

fn fee(value: U256, what: &'static str) -> Result<u128, SignError> {
    u128::try_from(value).map_err(|_| SignError::FeeTooLarge { what, value })
}

/// Builds and signs `tx` (a request's `params.transaction`) for `chain_id`, asking `node` for
/// what it leaves out (one batch).
pub fn sign(
    tx: &Map<String, Value>,
    key: &LocalKey,
    chain_id: u64,
    node: &RpcClient,
) -> Result<Signed, SignError> {
    let from = key.address();
    if let Some(f) = field(tx, &["from"]) {
        let given = address(f).ok_or_else(|| SignError::From(f.clone()))?;
        if given != from {
            return Err(SignError::OtherSender { given, key: from });
        }
    }
    let to = field(tx, &["to"])
        .map(|v| address(v).ok_or_else(|| SignError::To(v.clone())))
        .transpose()?;
    let value = num(tx, &["value"])?.unwrap_or_default();
    let input: Bytes = match field(tx, &["data", "input"]) {
        Some(v) => v
            .as_str()
            .and_then(|s| crate::geth::hex::parse_hex(s).ok())
            .ok_or_else(|| SignError::Data(v.clone()))?,
        None => Bytes::new(),
    };
    let nonce = num(tx, &["nonce"])?;
    let gas = num(tx, &["gas_limit", "gasLimit", "gas"])?;
    let gas_price = num(tx, &["gas_price", "gasPrice"])?;
    let max_fee = num(tx, &["max_fee_per_gas", "maxFeePerGas"])?;
    let max_tip = num(tx, &["max_priority_fee_per_gas", "maxPriorityFeePerGas"])?;

    // One batch for everything the request leaves out.
    let mut calls: Vec<(String, Value)> = Vec::new();
    let mut call = json!({"from": from, "value": value, "data": input});
    if let Some(to) = to {
        call["to"] = json!(to);
    }
    if nonce.is_none() {
        calls.push(("eth_getTransactionCount".into(), json!([from, "pending"])));
    }
    if gas.is_none() {
        calls.push(("eth_estimateGas".into(), json!([call])));
    }
    let need_fees = gas_price.is_none() && (max_fee.is_none() || max_tip.is_none());
    if need_fees {
        calls.push(("eth_getBlockByNumber".into(), json!(["latest", false])));
        calls.push(("eth_maxPriorityFeePerGas".into(), json!([])));
    }
    let mut answers = if calls.is_empty() {
        Vec::new().into_iter()
    } else {
        node.batch(&calls)?.into_iter()
    };
    let mut next = |what: &'static str| -> Result<Value, SignError> {
        Ok(answers.next().ok_or(SignError::NoAnswer(what))??)
    };
    let nonce = match nonce {
        Some(n) => small(n, "nonce")?,
        None => small(
            quantity(&next("the nonce")?).ok_or(SignError::NodeNonce)?,
            "nonce",
        )?,
    };
    let gas_limit = match gas {
        Some(g) => small(g, "gas_limit")?,
        None => {
            let estimate = small(
                quantity(&next("the gas estimate")?).ok_or(SignError::NodeGasEstimate)?,
                "gas estimate",
            )?;
            // A margin for state that moves between the estimate and inclusion.
            estimate.saturating_add(estimate / 5)
        }
    };
    let (base, tip) = if need_fees {
        let block = next("the latest block")?;
        let base = block
            .get("baseFeePerGas")
            .and_then(quantity)
            .unwrap_or_default();
        // Nodes without the method answer an error: no tip then.
        let tip = next("the suggested tip")
            .ok()
            .and_then(|v| quantity(&v))
            .unwrap_or_default();
        (base, tip)
    } else {
        (U256::ZERO, U256::ZERO)
    };
    // alloy's request builder makes the typed transaction: legacy (EIP-155) when the request
    // gives a gas price, EIP-1559 otherwise.
    let mut request = TransactionRequest::default()
        .from(from)
        .value(value)
        .input(TransactionInput::new(input))
        .nonce(nonce)
        .gas_limit(gas_limit);
    request.chain_id = Some(chain_id);
    request = match to {
        Some(a) => request.to(a),
        None => request.create(),
    };
    request = if let Some(price) = gas_price {
        request.gas_price(fee(price, "gas_price")?)
    } else {
        let max_priority_fee_per_gas = fee(max_tip.unwrap_or(tip), "max_priority_fee_per_gas")?;
        let max_fee_per_gas = match max_fee {
            Some(f) => fee(f, "max_fee_per_gas")?,
            None => fee(base, "base fee")?
                .saturating_mul(2)
                .saturating_add(max_priority_fee_per_gas),
        };
        request
            .max_fee_per_gas(max_fee_per_gas)
            .max_priority_fee_per_gas(max_priority_fee_per_gas)
    };
    let tx = request.build_typed_tx().map_err(|r| {
        SignError::Incomplete(r.missing_keys().err().map(|(_, m)| m).unwrap_or_default())
    })?;
    let sig = key.0.sign_hash_sync(&tx.signature_hash())?;
    let envelope: TxEnvelope = tx.into_envelope(sig);
    Ok(Signed {
        raw: envelope.encoded_2718().into(),
        hash: *envelope.tx_hash(),
        nonce,
        gas_limit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_never_appear_in_errors_or_debug() {
        let secret = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
        let k = LocalKey::parse(&format!("0x{secret}")).unwrap();
        assert_eq!(
            format!("{:?}", k.address()),
            "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266"
        );
        assert!(!format!("{k:?}").contains(secret));
        let e = LocalKey::parse(&secret[..60]).unwrap_err();
        assert!(!e.to_string().contains(&secret[..60]));
    }

    /// A request with a gas price is signed as a legacy EIP-155 transaction: EIP-155's own
    /// example (key 0x4646…46, nonce 9, 20 gwei, 21000 gas, 1 ether to 0x3535…35, chain 1)
    /// comes out byte for byte as the EIP prints it. Every field is given, so the node (an
    /// address where nothing listens) is never asked.
    #[test]
    fn a_gas_price_signs_the_eip155_example() {
        let key = LocalKey::parse(&"46".repeat(32)).unwrap();
        let tx = json!({"to": format!("0x{}", "35".repeat(20)), "value": "0xde0b6b3a7640000",
            "nonce": "0x9", "gas_limit": "0x5208", "gas_price": "0x4a817c800"});
        let node = RpcClient::new("http://127.0.0.1:9", std::time::Duration::from_secs(1)).unwrap();
        let signed = sign(tx.as_object().unwrap(), &key, 1, &node).unwrap();
        assert_eq!(
            signed.raw.to_string(),
            "0xf86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a76400\
             008025a028ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d89\
             97f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83"
        );
        assert_eq!((signed.nonce, signed.gas_limit), (9, 21000));
    }
}
