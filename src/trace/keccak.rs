//! geth's `keccak256PreimageTracer` (eth/tracers/native/keccak256_preimage.go): every
//! KECCAK256 input the transaction hashed, by its hash.
//!
//! geth records in `OnOpcode`, which runs before the opcode, so a KECCAK256 that then fails
//! (out of gas) is recorded too; revm's `step` is the same moment. The input is read as geth's
//! `GetMemoryCopyPadded` reads it: offset and length are the stack words' low 64 bits taken as
//! Go's `int64`, a negative one skips the opcode, and a slice past the end of memory is
//! zero-padded unless that needs more than 1 MiB of padding.

use std::collections::BTreeMap;

use alloy_primitives::{keccak256, Bytes, B256, U256};
use revm::bytecode::opcode::KECCAK256;
use revm::interpreter::interpreter_types::{Jumps, MemoryTr};
use revm::interpreter::Interpreter;
use revm::{Database, Inspector};

use super::state::Ctx;

/// geth's `memoryPadLimit` (eth/tracers/internal/util.go).
pub(super) const MEMORY_PAD_LIMIT: i64 = 1024 * 1024;

/// The preimages seen in one transaction; geth prints its map with sorted keys.
#[derive(Default)]
pub struct KeccakPreimageTracer {
    hashes: BTreeMap<B256, Bytes>,
}

impl KeccakPreimageTracer {
    /// geth's `OnOpcode` for a KECCAK256 with `stack` (bottom first) over `memory`.
    pub fn record(&mut self, stack: &[U256], memory: &[u8]) {
        let n = stack.len();
        if n < 2 {
            return;
        }
        let offset = stack[n - 1].as_limbs()[0] as i64;
        let size = stack[n - 2].as_limbs()[0] as i64;
        if let Some(preimage) = memory_copy_padded(memory, offset, size) {
            self.hashes.insert(keccak256(&preimage), preimage.into());
        }
    }

    pub fn into_result(self) -> BTreeMap<B256, Bytes> {
        self.hashes
    }
}

/// geth's `GetMemoryCopyPadded` (eth/tracers/internal/util.go) with its int64 arithmetic:
/// `None` where geth returns an error (and the preimage is skipped).
pub(crate) fn memory_copy_padded(m: &[u8], offset: i64, size: i64) -> Option<Vec<u8>> {
    if offset < 0 || size < 0 {
        return None;
    }
    let length = m.len() as i64;
    let end = offset.wrapping_add(size);
    if end < length {
        // memoryCopy: nil for size 0 or an offset past the end.
        if size == 0 || length <= offset {
            return Some(Vec::new());
        }
        if end < offset {
            // offset + size overflowed int64: geth would try to allocate `size` bytes.
            return None;
        }
        return Some(m[offset as usize..end as usize].to_vec());
    }
    let padding = end.wrapping_sub(length);
    if padding > MEMORY_PAD_LIMIT {
        return None;
    }
    let mut cpy = vec![0u8; size as usize];
    let overlap = length - offset;
    if overlap > 0 {
        let src = &m[offset as usize..];
        let n = src.len().min(cpy.len());
        cpy[..n].copy_from_slice(&src[..n]);
    }
    Some(cpy)
}

impl<DB: Database> Inspector<Ctx<DB>> for KeccakPreimageTracer {
    #[inline]
    fn step(&mut self, interp: &mut Interpreter, _ctx: &mut Ctx<DB>) {
        if interp.bytecode.opcode() != KECCAK256 {
            return;
        }
        let size = interp.memory.size();
        let mem = interp.memory.slice(0..size);
        self.record(interp.stack.data(), &mem);
    }
}

#[cfg(test)]
mod tests {
    //! geth's own unit tests (keccak256_preimage_test.go), case by case.
    use super::*;

    fn run(cases: &[(Vec<u8>, u64, u64)]) -> BTreeMap<B256, Bytes> {
        let mut t = KeccakPreimageTracer::default();
        for (memory, offset, length) in cases {
            t.record(&[U256::from(*length), U256::from(*offset)], memory);
        }
        t.into_result()
    }

    fn padded(data: &[u8], len: usize) -> Vec<u8> {
        let mut m = vec![0u8; len];
        m[..data.len()].copy_from_slice(data);
        m
    }

    #[test]
    fn initial_result_is_empty() {
        let t = KeccakPreimageTracer::default();
        assert_eq!(serde_json::to_string(&t.into_result()).unwrap(), "{}");
    }

    #[test]
    fn single_keccak() {
        let r = run(&[(padded(b"hello world", 32), 0, 11)]);
        assert_eq!(r.len(), 1);
        assert_eq!(
            r[&keccak256(b"hello world")],
            Bytes::from_static(b"hello world")
        );
    }

    #[test]
    fn multiple_keccak_including_empty() {
        let long: Vec<u8> = (0..100u32).map(|i| i as u8).collect();
        let datas: [&[u8]; 4] = [b"", b"hello", b"world", &long];
        let cases: Vec<_> = datas
            .iter()
            .map(|d| (padded(d, d.len().max(1)), 0, d.len() as u64))
            .collect();
        let r = run(&cases);
        assert_eq!(r.len(), 4);
        for d in datas {
            assert_eq!(r[&keccak256(d)], Bytes::copy_from_slice(d));
        }
        // The empty preimage prints as geth's hexutil.Bytes: "0x".
        let json = serde_json::to_string(&r).unwrap();
        assert!(
            json.contains(&format!("\"{}\":\"0x\"", keccak256(b""))),
            "{json}"
        );
    }

    #[test]
    fn memory_offset() {
        let mut m = b"prefix_data_target_data".to_vec();
        m.extend([0u8; 10]);
        let r = run(&[(m, 12, 11)]);
        assert_eq!(r.len(), 1);
        assert_eq!(
            r[&keccak256(b"target_data")],
            Bytes::from_static(b"target_data")
        );
    }

    #[test]
    fn memory_padding() {
        let r = run(&[(b"short".to_vec(), 0, 10)]);
        let want = padded(b"short", 10);
        assert_eq!(r[&keccak256(&want)], Bytes::from(want));
    }

    #[test]
    fn duplicates_overwrite() {
        let c = (b"duplicate_test".to_vec(), 0, 14);
        assert_eq!(run(&[c.clone(), c.clone(), c]).len(), 1);
    }

    #[test]
    fn insufficient_stack_and_huge_padding_are_skipped() {
        let mut t = KeccakPreimageTracer::default();
        t.record(&[U256::ZERO], b"test");
        // 2 MiB past the end of memory: more padding than geth allows.
        t.record(&[U256::from(2u64 << 20), U256::ZERO], b"test");
        // A negative int64 offset.
        t.record(&[U256::from(1), U256::from(u64::MAX)], b"test");
        // An offset inside memory and a size whose int64 sum wraps negative: geth would try to
        // allocate `size` bytes; nothing is recorded (this panicked in a slice before).
        t.record(&[U256::from(i64::MAX as u64), U256::from(2)], b"test");
        assert!(t.into_result().is_empty());
    }

    #[test]
    fn keccak_preimage_is_padded_like_geth() {
        let m = [1u8, 2, 3, 4];
        assert_eq!(memory_copy_padded(&m, 1, 2), Some(vec![2, 3]));
        assert_eq!(memory_copy_padded(&m, 2, 4), Some(vec![3, 4, 0, 0]));
        assert_eq!(memory_copy_padded(&m, 8, 2), Some(vec![0, 0]));
        assert_eq!(memory_copy_padded(&[], 0, 0), Some(vec![]));
        assert_eq!(memory_copy_padded(&m, -1, 2), None);
        assert_eq!(memory_copy_padded(&m, 0, MEMORY_PAD_LIMIT + 5), None);
    }

    #[test]
    fn large_data() {
        let d: Vec<u8> = (0..1024u32).map(|i| i as u8).collect();
        let r = run(&[(d.clone(), 0, 1024)]);
        assert_eq!(r[&keccak256(&d)], Bytes::from(d));
    }
}
