//! geth's `4byteTracer` (eth/tracers/native/4byte.go): how often each function selector was
//! called, keyed `0x<selector>-<size of the arguments>`.
//!
//! Every frame entered by CALL, CALLCODE, DELEGATECALL or STATICCALL counts, the transaction's
//! own call included, when its input has at least four bytes and its code address is not an
//! active precompile; creations never count. geth counts in `OnEnter`, before the depth and
//! balance checks, and so does revm's `call` hook.

use std::collections::BTreeMap;

use alloy_primitives::Address;
use revm::interpreter::{CallInputs, CallOutcome, CallScheme};
use revm::precompile::{PrecompileSpecId, Precompiles};
use revm::primitives::hardfork::SpecId;
use revm::{Database, Inspector};

use super::state::Ctx;

/// The 4byte tracer's counts for one transaction.
pub struct FourByteTracer {
    /// geth prints its Go map with sorted keys: a BTreeMap of the same strings.
    ids: BTreeMap<String, u64>,
    precompiles: &'static Precompiles,
    /// Precompiles of the chain's own (chains 1329/1328), which its node counts as precompiles.
    extra: Vec<Address>,
}

impl FourByteTracer {
    pub fn new(spec: SpecId) -> Self {
        FourByteTracer {
            ids: BTreeMap::new(),
            precompiles: Precompiles::new(PrecompileSpecId::from_spec_id(spec)),
            extra: Vec::new(),
        }
    }

    /// Adds the chain's own precompile addresses to the fork's.
    pub fn with_chain_precompiles(&mut self, addrs: impl IntoIterator<Item = Address>) {
        self.extra.extend(addrs);
    }

    /// Counts one entered frame (geth's `OnEnter` after its opcode filter).
    pub fn enter(&mut self, code_address: Address, input: &[u8]) {
        if input.len() < 4
            || self.precompiles.contains(&code_address)
            || self.extra.contains(&code_address)
        {
            return;
        }
        let key = format!(
            "{}-{}",
            alloy_primitives::hex::encode_prefixed(&input[..4]),
            input.len() - 4
        );
        *self.ids.entry(key).or_insert(0) += 1;
    }

    pub fn into_result(self) -> BTreeMap<String, u64> {
        self.ids
    }
}

impl<DB: Database> Inspector<Ctx<DB>> for FourByteTracer {
    fn call(&mut self, ctx: &mut Ctx<DB>, inputs: &mut CallInputs) -> Option<CallOutcome> {
        let code_address = match inputs.scheme {
            CallScheme::Call | CallScheme::StaticCall => inputs.target_address,
            CallScheme::CallCode | CallScheme::DelegateCall => inputs.bytecode_address,
        };
        let input = inputs.input.bytes(ctx);
        self.enter(code_address, &input);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::address;

    #[test]
    fn counts_selectors_with_their_argument_sizes_not_precompiles() {
        let mut t = FourByteTracer::new(SpecId::CANCUN);
        let to = address!("00000000000000000000000000000000000000aa");
        t.enter(to, &[0xa9, 0x05, 0x9c, 0xbb, 1, 2]);
        t.enter(to, &[0xa9, 0x05, 0x9c, 0xbb, 3, 4]);
        t.enter(to, &[0x12, 0x34, 0x56]);
        t.enter(
            address!("0000000000000000000000000000000000000002"),
            &[1, 2, 3, 4],
        );
        // 0x0a (point evaluation) is a precompile from Cancun on.
        t.enter(
            address!("000000000000000000000000000000000000000a"),
            &[1, 2, 3, 4],
        );
        t.enter(to, &[0x00, 0x00, 0x00, 0x01]);
        let r = t.into_result();
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"0x00000001-0":1,"0xa9059cbb-2":2}"#
        );
    }
}
