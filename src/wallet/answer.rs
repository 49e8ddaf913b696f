//! What a signer answered, read per method, and the checks that answer can be held to.
//!
//! The provider answers `/rpc` with `{"method": …, "data": {…}}`: `data.hash` for
//! `eth_sendTransaction`, `data.signed_transaction` for `eth_signTransaction`, `data.signature`
//! (and `data.encoding`) for `personal_sign`. A 2xx answer means the provider may have acted, so
//! an answer that does not hold what its method promises is an error that says so, never a
//! reason to ask again.

use alloy_consensus::transaction::SignerRecoverable;
use alloy_consensus::{Transaction, TxEnvelope};
use alloy_eips::eip2718::Decodable2718;
use alloy_primitives::{Address, Bytes, Signature, B256, U256};
use serde_json::{Map, Value};

use crate::policy::engine::Method;
use crate::policy::request::{address, quantity};

/// What a 2xx answer lacks or gets wrong; the caller adds that the provider may have acted.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    #[error("the answer is not JSON")]
    NotJson,
    #[error("it answers for method {got}, but the request was {asked}")]
    OtherMethod { got: Value, asked: Method },
    #[error("it has no data.hash (the transaction hash)")]
    NoHash,
    #[error("data.hash {0} is not a 32-byte 0x hash")]
    BadHash(Value),
    #[error("it has no data.signed_transaction")]
    NoSignedTransaction,
    #[error("data.signed_transaction {0} is not 0x hex")]
    BadSignedTransaction(Value),
    #[error("it has no data.signature")]
    NoSignature,
    #[error("data.encoding is {0}: only a hex signature can be read")]
    NotHexEncoding(Value),
    #[error("data.signature {0} is not a 65-byte 0x hex signature")]
    BadSignature(Value),
    #[error("the signed transaction does not decode: {0}")]
    Undecodable(alloy_eips::eip2718::Eip2718Error),
    #[error("{0} bytes follow the signed transaction's encoding")]
    TrailingBytes(usize),
    #[error("the signed transaction's signer cannot be recovered: {0}")]
    Unrecoverable(alloy_consensus::crypto::RecoveryError),
    /// Each field where the signed transaction departs from the request, in words.
    #[error("the signed transaction is not the one requested: {}", .0.join("; "))]
    NotRequested(Vec<String>),
    #[error("the signature is not a valid secp256k1 signature: {0}")]
    InvalidSignature(alloy_primitives::SignatureError),
    #[error("no signer can be recovered from the signature: {0}")]
    NoSigner(alloy_primitives::SignatureError),
    /// The signature is valid, by another key than the `--from` given.
    #[error("the signature is by {signer}, not by --from {want}")]
    OtherSigner { signer: Address, want: Address },
}

/// What the signer did, as its answer says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RpcAnswer {
    /// `eth_sendTransaction`: the hash of the broadcast transaction.
    Sent(B256),
    /// `eth_signTransaction`: the signed transaction (EIP-2718 bytes), not broadcast.
    SignedTransaction(Bytes),
    /// `personal_sign`: the 65-byte signature.
    Signature(Bytes),
}

impl RpcAnswer {
    /// The answer as printed: `0x` hex.
    pub fn text(&self) -> String {
        match self {
            RpcAnswer::Sent(h) => format!("{h:?}"),
            RpcAnswer::SignedTransaction(b) | RpcAnswer::Signature(b) => b.to_string(),
        }
    }
}

fn hex_bytes(v: &Value) -> Option<Bytes> {
    let s = v.as_str()?;
    let digits = s.strip_prefix("0x")?;
    alloy_primitives::hex::decode(digits).ok().map(Bytes::from)
}

/// Reads a provider's `/rpc` answer for a request made with `method`. The error says what is
/// missing or wrong (the caller adds that the provider may have acted).
pub fn read_answer(method: Method, answer: &Value) -> Result<RpcAnswer, AnswerError> {
    if let Some(m) = answer.get("method") {
        if m.as_str() != Some(method.as_str()) {
            return Err(AnswerError::OtherMethod {
                got: m.clone(),
                asked: method,
            });
        }
    }
    // The documented place is `data`; a bare member at the top is accepted too.
    let find = |names: &[&str]| {
        names.iter().find_map(|n| {
            answer
                .get("data")
                .and_then(|d| d.get(*n))
                .or_else(|| answer.get(*n))
        })
    };
    match method {
        Method::SendTransaction => {
            let v = find(&["hash"]).ok_or(AnswerError::NoHash)?;
            v.as_str()
                .filter(|s| s.len() == 66 && s.starts_with("0x"))
                .and_then(|s| s.parse::<B256>().ok())
                .map(RpcAnswer::Sent)
                .ok_or_else(|| AnswerError::BadHash(v.clone()))
        }
        Method::SignTransaction => {
            let v = find(&["signed_transaction", "signedTransaction"])
                .ok_or(AnswerError::NoSignedTransaction)?;
            hex_bytes(v)
                .filter(|b| !b.is_empty())
                .map(RpcAnswer::SignedTransaction)
                .ok_or_else(|| AnswerError::BadSignedTransaction(v.clone()))
        }
        Method::PersonalSign => {
            let v = find(&["signature"]).ok_or(AnswerError::NoSignature)?;
            if let Some(e) = find(&["encoding"]) {
                if e.as_str() != Some("hex") {
                    return Err(AnswerError::NotHexEncoding(e.clone()));
                }
            }
            hex_bytes(v)
                .filter(|b| b.len() == 65)
                .map(RpcAnswer::Signature)
                .ok_or_else(|| AnswerError::BadSignature(v.clone()))
        }
    }
}

/// Decodes a signed transaction and checks it against the request's `params.transaction`: the
/// recipient, value, calldata, and every chain id, nonce, gas and fee field the request gives,
/// and the signer when `from` is known. Returns the recovered signer.
pub fn check_signed_transaction(
    raw: &[u8],
    request: &Map<String, Value>,
    chain_id: Option<u64>,
    from: Option<Address>,
) -> Result<Address, AnswerError> {
    let mut rest = raw;
    let tx = TxEnvelope::decode_2718(&mut rest).map_err(AnswerError::Undecodable)?;
    if !rest.is_empty() {
        return Err(AnswerError::TrailingBytes(rest.len()));
    }
    let signer = tx.recover_signer().map_err(AnswerError::Unrecoverable)?;
    let mut differ = Vec::new();
    let field = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| request.get(*n))
            .filter(|v| !v.is_null())
    };
    let num = |names: &[&str]| field(names).and_then(quantity);
    if let Some(want) = from {
        if signer != want {
            differ.push(format!("signed by {signer}, not {want}"));
        }
    }
    let to = field(&["to"]).and_then(address);
    if tx.to() != to {
        differ.push(format!("to is {:?}, the request's {:?}", tx.to(), to));
    }
    let value = num(&["value"]).unwrap_or_default();
    if tx.value() != value {
        differ.push(format!("value is {}, the request's {value}", tx.value()));
    }
    let input = field(&["data", "input"])
        .and_then(hex_bytes)
        .unwrap_or_default();
    if *tx.input() != input {
        differ.push(format!(
            "the calldata is {}, the request's {input}",
            tx.input()
        ));
    }
    let want_chain = num(&["chain_id", "chainId"])
        .and_then(|c| u64::try_from(c).ok())
        .or(chain_id);
    if let Some(want) = want_chain {
        if tx.chain_id() != Some(want) {
            differ.push(format!("chain id is {:?}, not {want}", tx.chain_id()));
        }
    }
    let checks: [(&[&str], U256); 3] = [
        (&["nonce"], U256::from(tx.nonce())),
        (
            &["gas_limit", "gasLimit", "gas"],
            U256::from(tx.gas_limit()),
        ),
        (
            &["max_fee_per_gas", "maxFeePerGas", "gas_price", "gasPrice"],
            U256::from(tx.max_fee_per_gas()),
        ),
    ];
    for (names, got) in checks {
        if let Some(want) = num(names) {
            if got != want {
                differ.push(format!("{} is {got}, the request's {want}", names[0]));
            }
        }
    }
    if differ.is_empty() {
        Ok(signer)
    } else {
        Err(AnswerError::NotRequested(differ))
    }
}

/// The address whose key made `signature` (65 bytes) over `message` (EIP-191).
pub fn message_signer(signature: &[u8], message: &[u8]) -> Result<Address, AnswerError> {
    Signature::from_raw(signature)
        .map_err(AnswerError::InvalidSignature)?
        .recover_address_from_msg(message)
        .map_err(AnswerError::NoSigner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_method_has_its_own_answer() {
        let hash = format!("0x{}", "ab".repeat(32));
        assert_eq!(
            read_answer(
                Method::SendTransaction,
                &json!({"method": "eth_sendTransaction", "data": {"hash": hash, "caip2": "eip155:1"}})
            )
            .unwrap(),
            RpcAnswer::Sent(hash.parse().unwrap())
        );
        assert_eq!(
            read_answer(
                Method::SignTransaction,
                &json!({"method": "eth_signTransaction", "data": {"signed_transaction": "0x02f8"}})
            )
            .unwrap(),
            RpcAnswer::SignedTransaction(Bytes::from(vec![0x02, 0xf8]))
        );
        let sig = format!("0x{}", "11".repeat(65));
        assert_eq!(
            read_answer(
                Method::PersonalSign,
                &json!({"method": "personal_sign", "data": {"signature": sig, "encoding": "hex"}})
            )
            .unwrap()
            .text(),
            sig
        );
        // A send answer to a sign request, a short signature, a different method: refused.
        let sent = json!({"method": "eth_sendTransaction", "data": {"hash": hash}});
        assert!(read_answer(Method::SignTransaction, &sent)
            .unwrap_err()
            .to_string()
            .contains("answers for method"));
        assert!(
            read_answer(Method::SignTransaction, &json!({"data": {"hash": hash}}))
                .unwrap_err()
                .to_string()
                .contains("no data.signed_transaction")
        );
        assert!(read_answer(
            Method::PersonalSign,
            &json!({"data": {"signature": "0x1234"}})
        )
        .unwrap_err()
        .to_string()
        .contains("65-byte"));
    }
}
