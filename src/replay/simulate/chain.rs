//! The simulated chain's shape, as geth's `simulate.go` gives it: the request's bounds, block
//! numbers and times (`sanitizeChain`), and what a block takes of its parent (base fee, excess
//! blob gas).

use alloy_primitives::{Address, B256, U256};
use revm::primitives::hardfork::SpecId;

use super::types::{
    code, SimBlock, SimFault, MAX_BLOCKS, MAX_CALLS, MAX_CALLS_PER_BLOCK, TIMESTAMP_INCREMENT,
};

/// A block of the sanitised chain: its number and time, and the request's entry (`None`: an
/// empty block filling a gap in the numbers).
pub(super) struct Planned<'r> {
    pub number: u64,
    pub time: u64,
    pub entry: Option<&'r SimBlock>,
}

/// geth's `sanitizeChain`: numbers default to the parent's + 1 and must increase, times default
/// to the parent's + 12 and must increase, gaps are filled with empty blocks, and no block may
/// be more than [`MAX_BLOCKS`] past the base.
pub(super) fn sanitize(
    blocks: &[SimBlock],
    base_number: u64,
    base_time: u64,
) -> Result<Vec<Planned<'_>>, SimFault> {
    let mut out = Vec::new();
    let (mut prev_number, mut prev_time) = (base_number, base_time);
    for b in blocks {
        let number = b.block.number.unwrap_or(prev_number.saturating_add(1));
        if number <= prev_number {
            return Err(SimFault::new(
                code::BLOCK_NUMBER_ORDER,
                format!("block numbers must be in order: {number} <= {prev_number}"),
            ));
        }
        if number - base_number > MAX_BLOCKS {
            return Err(SimFault::new(code::CLIENT_LIMIT, "too many blocks"));
        }
        for n in prev_number + 1..number {
            prev_time += TIMESTAMP_INCREMENT;
            out.push(Planned {
                number: n,
                time: prev_time,
                entry: None,
            });
        }
        prev_number = number;
        let time = match b.block.time {
            None => prev_time + TIMESTAMP_INCREMENT,
            Some(t) if t <= prev_time => {
                return Err(SimFault::new(
                    code::BLOCK_TIMESTAMP_ORDER,
                    format!("block timestamps must be in order: {t} <= {prev_time}"),
                ))
            }
            Some(t) => t,
        };
        prev_time = time;
        out.push(Planned {
            number,
            time,
            entry: Some(b),
        });
    }
    Ok(out)
}

/// geth's checks of the request's size before anything is read.
pub fn check_limits(blocks: &[SimBlock]) -> Result<(), SimFault> {
    if blocks.is_empty() {
        return Err(SimFault::new(code::INVALID_PARAMS, "empty input"));
    }
    if blocks.len() as u64 > MAX_BLOCKS {
        return Err(SimFault::new(code::CLIENT_LIMIT, "too many blocks"));
    }
    let mut total = 0;
    for b in blocks {
        if b.calls.len() > MAX_CALLS_PER_BLOCK {
            return Err(SimFault::new(
                code::CLIENT_LIMIT,
                format!(
                    "too many calls in block: {} > {MAX_CALLS_PER_BLOCK}",
                    b.calls.len()
                ),
            ));
        }
        total += b.calls.len();
        if total > MAX_CALLS {
            return Err(SimFault::new(
                code::CLIENT_LIMIT,
                format!("too many calls: {total} > {MAX_CALLS}"),
            ));
        }
    }
    Ok(())
}

/// What a simulated block reads of its parent.
#[derive(Clone, Debug)]
pub(super) struct Parent {
    pub hash: B256,
    pub gas_limit: u64,
    pub gas_used: u64,
    pub base_fee: Option<u64>,
    pub excess_blob_gas: Option<u64>,
    pub blob_gas_used: Option<u64>,
    pub coinbase: Address,
    pub difficulty: U256,
    pub spec: SpecId,
}

/// EIP-1559's base fee after `parent` (geth's `eip1559.CalcBaseFee`): 1 gwei at London's first
/// block.
pub(super) fn next_base_fee(parent: &Parent) -> u64 {
    match (parent.spec >= SpecId::LONDON, parent.base_fee) {
        (true, Some(fee)) => alloy_eips::calc_next_block_base_fee(
            parent.gas_used,
            parent.gas_limit,
            fee,
            alloy_eips::eip1559::BaseFeeParams::ethereum(),
        ),
        _ => alloy_eips::eip1559::INITIAL_BASE_FEE,
    }
}

/// Blobs per block a fork targets and allows, and its base fee update fraction.
fn blob_schedule(spec: SpecId) -> (u64, u64, u64) {
    if spec >= SpecId::PRAGUE {
        (
            6,
            9,
            revm::primitives::eip4844::BLOB_BASE_FEE_UPDATE_FRACTION_PRAGUE,
        )
    } else {
        (
            3,
            6,
            revm::primitives::eip4844::BLOB_BASE_FEE_UPDATE_FRACTION_CANCUN,
        )
    }
}

/// EIP-4844's excess blob gas after `parent` (geth's `eip4844.CalcExcessBlobGas`, with
/// EIP-7918's reserve price from Osaka), for a block of fork `spec`.
pub(super) fn next_excess_blob_gas(parent: &Parent, spec: SpecId) -> u64 {
    if parent.spec < SpecId::CANCUN {
        return 0;
    }
    const PER_BLOB: u64 = 131_072;
    let (target, max, fraction) = blob_schedule(spec);
    let (excess, used) = (
        parent.excess_blob_gas.unwrap_or(0),
        parent.blob_gas_used.unwrap_or(0),
    );
    let total = excess + used;
    let target_gas = target * PER_BLOB;
    if total < target_gas {
        return 0;
    }
    if spec >= SpecId::OSAKA {
        let reserve = U256::from(8192u64) * U256::from(parent.base_fee.unwrap_or(0));
        let price = U256::from(crate::replay::env::blob_gas_price(excess, fraction));
        if reserve > price {
            return excess + used * (max - target) / max;
        }
    }
    total - target_gas
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::overrides::BlockOverrides;
    use crate::replay::simulate::types::{code, SimCall};

    fn block(number: Option<u64>, time: Option<u64>) -> SimBlock {
        SimBlock {
            block: BlockOverrides {
                number,
                time,
                ..BlockOverrides::default()
            },
            ..SimBlock::default()
        }
    }

    /// geth's `sanitizeChain` on execution-apis' cases (base block 0x36 at time 0x21c).
    #[test]
    fn chains_are_sanitised_as_geth_does() {
        let plan = |b: &[SimBlock]| {
            sanitize(b, 0x36, 0x21c).map(|p| {
                p.iter()
                    .map(|p| (p.number, p.time, p.entry.is_some()))
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(
            plan(&[block(None, None), block(Some(0x39), None)]).unwrap(),
            vec![
                (0x37, 0x228, true),
                (0x38, 0x234, false),
                (0x39, 0x240, true)
            ]
        );
        let e = plan(&[block(Some(0x9a), None), block(Some(0x90), None)]).unwrap_err();
        assert_eq!(e.code, code::BLOCK_NUMBER_ORDER);
        assert_eq!(e.message, "block numbers must be in order: 144 <= 154");
        let e = plan(&[block(None, Some(0x228)), block(None, Some(0x227))]).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                code::BLOCK_TIMESTAMP_ORDER,
                "block timestamps must be in order: 551 <= 552"
            )
        );
        // ethSimulate-block-timestamp-auto-increment: a block without a time is 12 s later.
        let e = plan(&[
            block(None, Some(0x227)),
            block(None, None),
            block(None, Some(0x228)),
        ])
        .unwrap_err();
        assert_eq!(e.message, "block timestamps must be in order: 552 <= 563");
        let e = plan(&[block(Some(0x36 + 257), None)]).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (code::CLIENT_LIMIT, "too many blocks")
        );
        assert!(plan(&[block(Some(0x36 + 256), None)]).is_ok());
    }

    #[test]
    fn limits_are_geths() {
        assert_eq!(check_limits(&[]).unwrap_err().code, code::INVALID_PARAMS);
        let many = vec![SimBlock::default(); 257];
        assert_eq!(
            check_limits(&many).unwrap_err(),
            SimFault::new(code::CLIENT_LIMIT, "too many blocks")
        );
        let big = SimBlock {
            calls: vec![SimCall::default(); MAX_CALLS_PER_BLOCK + 1],
            ..SimBlock::default()
        };
        assert_eq!(
            check_limits(&[big]).unwrap_err().message,
            "too many calls in block: 5001 > 5000"
        );
    }
}
