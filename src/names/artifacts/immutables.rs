//! Immutables for `--code-override`: an artifact's runtime code holds zeros where each
//! `immutable` is read (its constructor writes the values into the deployed code, and a code
//! override runs no constructor). The values are in the code on chain: this finds them there.
//!
//! The code on chain was built from other sources (the fix is why the override is asked), so
//! offsets differ. Each read of an immutable is a PUSH32 in both codes; the one on chain is
//! found by the opcodes around it — the same instructions before and after the PUSH32 in both
//! codes, push data ignored — widening the window until one PUSH32 on chain fits. A value is
//! taken only when every read of that immutable found on chain holds the same one and no read
//! is ambiguous; otherwise the override is refused, naming the immutable: never a guess.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::names::sources::instructions;

const PUSH32: u8 = 0x7f;

/// Instructions compared on each side of a read, widest first.
const WINDOWS: [usize; 5] = [24, 16, 10, 6, 3];

/// One immutable variable of an artifact: its AST id (the key of `immutableReferences`) and
/// the byte ranges of the runtime code where its value goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Immutable {
    pub id: String,
    pub refs: Vec<(usize, usize)>,
}

/// The immutables an artifact's `immutableReferences` lists (`{"12": [{"start", "length"}]}`).
pub fn immutables_of(refs: Option<&Value>) -> Vec<Immutable> {
    refs.and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(id, list)| Immutable {
            id: id.clone(),
            refs: list
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| {
                    let start = r.get("start")?.as_u64()? as usize;
                    let len = r.get("length")?.as_u64()? as usize;
                    Some((start, len))
                })
                .collect(),
        })
        .filter(|i| !i.refs.is_empty())
        .collect()
}

/// Why an immutable's value could not be taken from the code on chain.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ImmutableError {
    #[error("immutable #{0} is not read by a PUSH32 at byte {1} of the artifact's code")]
    NotPush(String, usize),
    #[error("the account has no code on chain to copy immutable #{0} from")]
    NoCode(String),
    #[error(
        "immutable #{0}: no read of it was found in the code on chain (the layouts differ); give \
         the runtime code with it filled as 0xHEX"
    )]
    NotFound(String),
    #[error(
        "immutable #{0}: its reads in the code on chain hold different values (the layouts \
         differ); give the runtime code with it filled as 0xHEX"
    )]
    Differ(String),
}

/// The opcode sequence of a code (push data skipped) with each instruction's pc.
struct Ops {
    pcs: Vec<usize>,
    ops: Vec<u8>,
}

impl Ops {
    fn of(code: &[u8]) -> Ops {
        let (pcs, ops) = instructions(code).unzip();
        Ops { pcs, ops }
    }

    fn index_of_pc(&self, pc: usize) -> Option<usize> {
        self.pcs.binary_search(&pc).ok()
    }

    /// Whether instruction `i` of `self` and `j` of `other` have the same `w` opcodes before
    /// and after them (fewer where either code starts or ends sooner).
    fn same_around(&self, i: usize, other: &Ops, j: usize, w: usize) -> bool {
        let b = w.min(i).min(j);
        let a = w.min(self.ops.len() - i - 1).min(other.ops.len() - j - 1);
        self.ops[i - b..i] == other.ops[j - b..j]
            && self.ops[i + 1..i + 1 + a] == other.ops[j + 1..j + 1 + a]
    }
}

/// Whether every read of the immutables is a 32-byte PUSH32 of `code`, the only layout
/// [`fill_immutables`] can copy values into.
pub fn check_reads(code: &[u8], immutables: &[Immutable]) -> Result<(), ImmutableError> {
    let ops = Ops::of(code);
    for imm in immutables {
        for &(start, len) in &imm.refs {
            let push = start
                .checked_sub(1)
                .filter(|_| len == 32)
                .and_then(|pc| ops.index_of_pc(pc))
                .is_some_and(|i| ops.ops[i] == PUSH32);
            if !push {
                return Err(ImmutableError::NotPush(imm.id.clone(), start));
            }
        }
    }
    Ok(())
}

/// Fills `code`'s immutables with their values read from `chain` (the code on chain at the
/// address the override replaces); returns each immutable's id and value.
pub fn fill_immutables(
    code: &mut [u8],
    immutables: &[Immutable],
    chain: &[u8],
) -> Result<Vec<(String, [u8; 32])>, ImmutableError> {
    let mut out = Vec::new();
    if immutables.is_empty() {
        return Ok(out);
    }
    let first = immutables[0].id.clone();
    if chain.is_empty() {
        return Err(ImmutableError::NoCode(first));
    }
    check_reads(code, immutables)?;
    let new = Ops::of(code);
    let old = Ops::of(chain);
    let old_push32: Vec<usize> = (0..old.ops.len())
        .filter(|&j| old.ops[j] == PUSH32)
        .collect();
    for imm in immutables {
        let mut values: BTreeMap<[u8; 32], usize> = BTreeMap::new();
        for &(start, len) in &imm.refs {
            let i = start
                .checked_sub(1)
                .filter(|_| len == 32)
                .and_then(|pc| new.index_of_pc(pc))
                .ok_or_else(|| ImmutableError::NotPush(imm.id.clone(), start))?;
            if let Some(value) = found_on_chain(&new, i, &old, &old_push32, chain) {
                *values.entry(value).or_default() += 1;
            }
        }
        let value = match values.len() {
            0 => return Err(ImmutableError::NotFound(imm.id.clone())),
            1 => *values.keys().next().expect("one value"),
            _ => return Err(ImmutableError::Differ(imm.id.clone())),
        };
        for &(start, len) in &imm.refs {
            if let Some(slot) = code.get_mut(start..start + len) {
                slot.copy_from_slice(&value[..len.min(32)]);
            }
        }
        out.push((imm.id.clone(), value));
    }
    Ok(out)
}

/// The value of the PUSH32 on chain that sits among the same instructions as the artifact's
/// read `i`, found with the widest window that leaves exactly one value.
fn found_on_chain(
    new: &Ops,
    i: usize,
    old: &Ops,
    old_push32: &[usize],
    chain: &[u8],
) -> Option<[u8; 32]> {
    for w in WINDOWS {
        let fits: Vec<[u8; 32]> = old_push32
            .iter()
            .filter(|&&j| new.same_around(i, old, j, w))
            .filter_map(|&j| {
                let pc = old.pcs[j];
                chain.get(pc + 1..pc + 33)?.try_into().ok()
            })
            .collect();
        match fits.first() {
            None => continue,
            Some(v) if fits.iter().all(|f| f == v) => return Some(*v),
            // Several places on chain fit with different values: the narrower windows only
            // widen the choice.
            Some(_) => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PUSH1 1, PUSH32 <v>, SLOAD-ish filler…
    fn code(prefix: &[u8], value: [u8; 32], suffix: &[u8]) -> Vec<u8> {
        let mut c = prefix.to_vec();
        c.push(PUSH32);
        c.extend(value);
        c.extend(suffix);
        c
    }

    #[test]
    fn copies_a_value_whose_offset_moved() {
        let v = [7u8; 32];
        // On chain: two more instructions before; the read among the same neighbours.
        let chain = code(&[0x5b, 0x5b, 0x60, 0x01, 0x50], v, &[0x33, 0x14, 0x00]);
        let mut new = code(&[0x60, 0x01, 0x50], [0; 32], &[0x33, 0x14, 0x00]);
        let imm = [Immutable {
            id: "12".into(),
            refs: vec![(4, 32)],
        }];
        let got = fill_immutables(&mut new, &imm, &chain).unwrap();
        assert_eq!(got, vec![("12".to_string(), v)]);
        assert_eq!(&new[4..36], &v);
    }

    #[test]
    fn refuses_what_it_cannot_tell() {
        let imm = |start| {
            [Immutable {
                id: "3".into(),
                refs: vec![(start, 32)],
            }]
        };
        let mut new = code(&[0x60, 0x01, 0x50], [0; 32], &[0x33, 0x14]);
        // Not a PUSH32 there.
        assert_eq!(
            fill_immutables(&mut new.clone(), &imm(2), &new),
            Err(ImmutableError::NotPush("3".into(), 2))
        );
        // Two places on chain with different values and the same neighbours.
        let mut chain = code(&[0x60, 0x01, 0x50], [1; 32], &[0x33, 0x14]);
        chain.extend(code(&[0x60, 0x01, 0x50], [2; 32], &[0x33, 0x14]));
        assert_eq!(
            fill_immutables(&mut new, &imm(4), &chain),
            Err(ImmutableError::NotFound("3".into()))
        );
        // No code on chain.
        assert_eq!(
            fill_immutables(&mut new, &imm(4), &[]),
            Err(ImmutableError::NoCode("3".into()))
        );
    }
}
