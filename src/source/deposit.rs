//! OP-stack deposit transactions (EIP-2718 type `0x7e`): what L1 forces into an L2 block. No
//! signature, no fee fields, no nonce: `from` is given, `mint` is credited to it before the
//! transaction runs. Encoding (op-geth `core/types/deposit_tx.go`, the OP spec's "deposits"):
//! `0x7e || rlp([sourceHash, from, to, mint, value, gas, isSystemTx, data])`, where an empty
//! string stands for a contract creation (`to`) and for no mint (`mint`).

use alloy_primitives::{keccak256, Address, Bytes, TxKind, B256, U256};
use alloy_rlp::{Decodable, Header};
use serde_json::Value;

use super::error::TxError;
use crate::geth::hex::{parse_hex, parse_u256, parse_u64};

/// Whether a transaction or receipt object is an OP-stack deposit's (`type` `0x7e`; anvil
/// writes a receipt's as `0x7E`).
pub fn is_deposit_json(v: &Value) -> bool {
    v.get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| t.eq_ignore_ascii_case("0x7e"))
}

pub use crate::chain::op::DEPOSIT_TX_TYPE;

/// What a deposit carries beyond an ordinary message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deposit {
    /// Identifies where on L1 the deposit came from.
    pub source_hash: B256,
    /// Wei minted to `from` before execution (`None`: the field is empty; nothing minted).
    pub mint: Option<U256>,
    /// A system transaction (before Regolith: the L1 attributes deposit; no gas reported).
    pub is_system_tx: bool,
}

/// A decoded deposit transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DepositTx {
    pub deposit: Deposit,
    pub from: Address,
    pub kind: TxKind,
    pub value: U256,
    pub gas_limit: u64,
    pub data: Bytes,
    /// keccak256 of the whole encoding, type byte included.
    pub hash: B256,
}

fn parse<T: std::str::FromStr>(k: &str, s: &str) -> Result<T, TxError>
where
    T::Err: std::fmt::Display,
{
    s.parse().map_err(|e| bad(format!("{k}: {e}")))
}

fn bad(e: impl std::fmt::Display) -> TxError {
    TxError(format!("cannot decode deposit transaction: {e}"))
}

/// An RLP string that may be empty (`rlp:"nil"` in op-geth): `None` when it is.
fn optional<T: Decodable>(buf: &mut &[u8]) -> alloy_rlp::Result<Option<T>> {
    if buf.first() == Some(&alloy_rlp::EMPTY_STRING_CODE) {
        *buf = &buf[1..];
        return Ok(None);
    }
    T::decode(buf).map(Some)
}

impl DepositTx {
    /// Decodes `raw`, the type byte `0x7e` followed by the RLP list; bytes after the list are
    /// refused, as geth refuses them.
    pub fn decode(raw: &[u8]) -> Result<DepositTx, TxError> {
        let Some((&DEPOSIT_TX_TYPE, mut buf)) = raw.split_first() else {
            return Err(bad("not of type 0x7e"));
        };
        let header = Header::decode(&mut buf).map_err(bad)?;
        if !header.list {
            return Err(bad("the payload is not an RLP list"));
        }
        if buf.len() != header.payload_length {
            return Err(bad(format!(
                "the list holds {} bytes, {} follow its header",
                header.payload_length,
                buf.len()
            )));
        }
        let fields = (|| -> alloy_rlp::Result<_> {
            let source_hash = B256::decode(&mut buf)?;
            let from = Address::decode(&mut buf)?;
            let to = optional::<Address>(&mut buf)?;
            let mint = optional::<U256>(&mut buf)?;
            let value = U256::decode(&mut buf)?;
            let gas_limit = u64::decode(&mut buf)?;
            let is_system_tx = bool::decode(&mut buf)?;
            let data = Bytes::decode(&mut buf)?;
            Ok((
                source_hash,
                from,
                to,
                mint,
                value,
                gas_limit,
                is_system_tx,
                data,
            ))
        })()
        .map_err(bad)?;
        if !buf.is_empty() {
            return Err(bad(format!("{} bytes follow its eight fields", buf.len())));
        }
        let (source_hash, from, to, mint, value, gas_limit, is_system_tx, data) = fields;
        Ok(DepositTx {
            deposit: Deposit {
                source_hash,
                mint,
                is_system_tx,
            },
            from,
            kind: to.map_or(TxKind::Create, TxKind::Call),
            value,
            gas_limit,
            data,
            hash: keccak256(raw),
        })
    }

    /// Reads a deposit as an OP-stack node's transaction object gives it (`type` `0x7e`:
    /// `sourceHash`, `from`, `to`, `mint`, `value`, `gas`, `isSystemTx`, `input`, `hash`).
    pub fn from_json(v: &Value) -> Result<DepositTx, TxError> {
        let field = |k: &str| v.get(k).filter(|x| !x.is_null());
        let text = |k: &str| -> Result<&str, TxError> {
            field(k)
                .and_then(Value::as_str)
                .ok_or_else(|| bad(format!("{k} is missing")))
        };
        let quantity = |k: &str| parse_u256(field(k).unwrap_or(&Value::Null));
        Ok(DepositTx {
            deposit: Deposit {
                source_hash: parse("sourceHash", text("sourceHash")?)?,
                mint: field("mint")
                    .map(|m| parse_u256(m).map_err(|e| bad(format!("mint: {e}"))))
                    .transpose()?,
                is_system_tx: field("isSystemTx")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            },
            from: parse("from", text("from")?)?,
            kind: match field("to") {
                None => TxKind::Create,
                Some(_) => TxKind::Call(parse("to", text("to")?)?),
            },
            value: quantity("value").map_err(|e| bad(format!("value: {e}")))?,
            gas_limit: parse_u64(field("gas").unwrap_or(&Value::Null))
                .map_err(|e| bad(format!("gas: {e}")))?,
            data: parse_hex(text("input")?).map_err(|e| bad(format!("input: {e}")))?,
            hash: parse("hash", text("hash")?)?,
        })
    }

    /// The transaction's EIP-2718 encoding (for replay bundles): the type byte and the list.
    pub fn encode(&self) -> Bytes {
        use alloy_rlp::Encodable;
        let mut payload = Vec::new();
        self.deposit.source_hash.encode(&mut payload);
        self.from.encode(&mut payload);
        match self.kind {
            TxKind::Call(to) => to.encode(&mut payload),
            TxKind::Create => payload.push(alloy_rlp::EMPTY_STRING_CODE),
        }
        match self.deposit.mint {
            Some(m) => m.encode(&mut payload),
            None => payload.push(alloy_rlp::EMPTY_STRING_CODE),
        }
        self.value.encode(&mut payload);
        self.gas_limit.encode(&mut payload);
        self.deposit.is_system_tx.encode(&mut payload);
        self.data.encode(&mut payload);
        let mut out = vec![DEPOSIT_TX_TYPE];
        Header {
            list: true,
            payload_length: payload.len(),
        }
        .encode(&mut out);
        out.extend_from_slice(&payload);
        out.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::{address, b256, hex};

    /// The deposit of op-geth's tracer fixtures (`call_tracer/deposit.json`'s `input`), which
    /// op-geth decodes with `UnmarshalBinary`; its fields as op-geth's `DepositTx` holds them.
    const FIXTURE_INPUT: &str = "7ef85aa0b4f9f798a5fe956d1b79c3eff355febf9e1039a7440948845536982cb62aa03194bc339e628e6fe32c39e84392d087567b2743ea3594bc339e628e6fe32c39e84392d087567b2743ea3580871aa535d3d0c00083030d408000";

    #[test]
    fn decodes_op_geths_fixture_deposit() {
        let raw = hex::decode(FIXTURE_INPUT).unwrap();
        let tx = DepositTx::decode(&raw).unwrap();
        let who = address!("bc339e628e6fe32c39e84392d087567b2743ea35");
        assert_eq!(
            tx.deposit.source_hash,
            b256!("b4f9f798a5fe956d1b79c3eff355febf9e1039a7440948845536982cb62aa031")
        );
        assert_eq!(tx.from, who);
        assert_eq!(tx.kind, TxKind::Call(who));
        assert_eq!(tx.deposit.mint, None);
        assert_eq!(tx.value, U256::from(0x1aa535d3d0c000u64));
        assert_eq!(tx.gas_limit, 200_000);
        assert!(!tx.deposit.is_system_tx);
        assert_eq!(tx.data, Bytes::from(vec![0u8]));
        assert_eq!(tx.encode(), Bytes::from(raw));
    }

    #[test]
    fn refuses_trailing_bytes_and_other_types() {
        let mut raw = hex::decode(FIXTURE_INPUT).unwrap();
        raw.push(0);
        assert!(DepositTx::decode(&raw).is_err());
        raw.pop();
        raw[0] = 0x02;
        assert!(DepositTx::decode(&raw).is_err());
    }
}
