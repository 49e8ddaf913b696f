use alloy_primitives::{keccak256, U256};

use super::tokens::{DEPOSIT, TRANSFER, TRANSFER_BATCH, TRANSFER_SINGLE, WITHDRAWAL};
use super::{format_units, Flow};

#[test]
fn event_topics_are_the_hashes_of_their_signatures() {
    for (topic, sig) in [
        (TRANSFER, "Transfer(address,address,uint256)"),
        (
            TRANSFER_SINGLE,
            "TransferSingle(address,address,address,uint256,uint256)",
        ),
        (
            TRANSFER_BATCH,
            "TransferBatch(address,address,address,uint256[],uint256[])",
        ),
        (DEPOSIT, "Deposit(address,uint256)"),
        (WITHDRAWAL, "Withdrawal(address,uint256)"),
    ] {
        assert_eq!(topic, keccak256(sig), "{sig}");
    }
}

#[test]
fn units_are_exact() {
    let wei = |s: &str| s.parse::<U256>().unwrap();
    assert_eq!(format_units(wei("1500000000000000000"), 18), "1.5");
    assert_eq!(format_units(wei("21000000000000"), 18), "0.000021");
    assert_eq!(format_units(wei("1"), 18), "0.000000000000000001");
    assert_eq!(format_units(wei("0"), 18), "0");
    assert_eq!(format_units(wei("12"), 0), "12");
    assert_eq!(format_units(wei("1234567"), 6), "1.234567");
    assert_eq!(format_units(wei("1000000"), 6), "1");
}

#[test]
fn flows_net_without_overflow() {
    let f = Flow {
        credit: U256::from(3),
        debit: U256::MAX,
    };
    assert_eq!(f.net(), (true, U256::MAX - U256::from(3)));
    assert_eq!(f.decimal(), format!("-{}", U256::MAX - U256::from(3)));
    assert!(Flow::default().is_zero());
}
