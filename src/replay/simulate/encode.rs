//! The simulated blocks' consensus encodings: transactions unsigned as geth's
//! `TransactionArgs.ToTransaction` leaves them, receipts, and the block's RLP size.

use alloy_consensus::Header;
use alloy_eips::eip4895::Withdrawal;
use alloy_primitives::{Log, TxKind, U256};
use alloy_rlp::Encodable;

use super::types::SimTx;

/// The RLP list of `parts`.
fn rlp_list(parts: &[&dyn Encodable]) -> Vec<u8> {
    let payload: usize = parts.iter().map(|p| p.length()).sum();
    let mut out = Vec::with_capacity(payload + 9);
    alloy_rlp::Header {
        list: true,
        payload_length: payload,
    }
    .encode(&mut out);
    for p in parts {
        p.encode(&mut out);
    }
    out
}

impl SimTx {
    /// The transaction's consensus encoding (EIP-2718), unsigned: `v`, `r` and `s` zero, as
    /// geth's `TransactionArgs.ToTransaction` leaves them.
    pub fn encoding(&self) -> Vec<u8> {
        let to = self.to.map_or(TxKind::Create, TxKind::Call);
        let zero = 0u8;
        let chain_id = U256::from(self.chain_id);
        let price = self.gas_price.unwrap_or_default();
        match self.kind {
            0 => rlp_list(&[
                &self.nonce,
                &price,
                &self.gas,
                &to,
                &self.value,
                &self.input,
                &zero,
                &zero,
                &zero,
            ]),
            1 => {
                let mut out = vec![1u8];
                out.extend(rlp_list(&[
                    &chain_id,
                    &self.nonce,
                    &price,
                    &self.gas,
                    &to,
                    &self.value,
                    &self.input,
                    &self.access_list,
                    &zero,
                    &zero,
                    &zero,
                ]));
                out
            }
            _ => {
                let mut out = vec![2u8];
                out.extend(rlp_list(&[
                    &chain_id,
                    &self.nonce,
                    &self.max_priority_fee_per_gas.unwrap_or_default(),
                    &self.max_fee_per_gas.unwrap_or_default(),
                    &self.gas,
                    &to,
                    &self.value,
                    &self.input,
                    &self.access_list,
                    &zero,
                    &zero,
                    &zero,
                ]));
                out
            }
        }
    }
}

/// A receipt's consensus encoding: status, cumulative gas, bloom and logs, typed as its
/// transaction.
pub(super) fn receipt_encoding(kind: u8, success: bool, cumulative: u64, logs: &[Log]) -> Vec<u8> {
    let bloom = alloy_primitives::logs_bloom(logs.iter());
    let logs = logs.to_vec();
    let status = u8::from(success);
    let body = rlp_list(&[&status, &cumulative, &bloom, &logs]);
    match kind {
        0 => body,
        k => {
            let mut out = vec![k];
            out.extend(body);
            out
        }
    }
}

/// geth's `Block.Size`: the RLP length of header, transactions, uncles and withdrawals.
pub(super) fn block_size(
    header: &Header,
    txs: &[(u8, Vec<u8>)],
    withdrawals: Option<&[Withdrawal]>,
) -> u64 {
    let list = |payload: usize| alloy_rlp::length_of_length(payload) + payload;
    let txs: usize = txs
        .iter()
        .map(|(kind, raw)| match kind {
            0 => raw.len(),
            _ => raw.as_slice().length(),
        })
        .sum();
    let withdrawals = withdrawals.map_or(0, |w| list(w.iter().map(Encodable::length).sum()));
    list(header.length() + list(txs) + list(0) + withdrawals) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_eips::eip2930::AccessList;
    use alloy_primitives::{keccak256, Address, Bytes, B256};

    /// The unsigned transactions of execution-apis' `ethSimulate-simple-validation-fulltx`:
    /// their hashes are geth's.
    #[test]
    fn transactions_hash_as_geths() {
        let tx = SimTx {
            kind: 2,
            hash: B256::ZERO,
            from: Address::repeat_byte(0),
            to: Some(
                "0xc100000000000000000000000000000000000000"
                    .parse()
                    .unwrap(),
            ),
            nonce: 0,
            gas: 0x2faf080,
            gas_price: None,
            max_fee_per_gas: Some(U256::from(0x10)),
            max_priority_fee_per_gas: Some(U256::ZERO),
            value: U256::from(0x2540be400u64),
            input: Bytes::new(),
            access_list: AccessList::default(),
            chain_id: 0xc72dd9d5e883e,
            effective_gas_price: U256::from(0xf),
        };
        assert_eq!(
            keccak256(tx.encoding()),
            "0xc2df7444d2b0604cdfaa20cad5855422b575d8d2ec02868ed9eb45eb20490f66"
                .parse::<B256>()
                .unwrap()
        );
    }
}
