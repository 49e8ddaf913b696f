//! Immutables for `--code-override`: an artifact's runtime code holds zeros where each
//! `immutable` is read (its constructor writes the values into the deployed code, and a code
//! override runs no constructor). The values are in the code on chain: this finds them there.
//!
//! The code on chain was built from other sources (the fix is why the override is asked), so
//! offsets differ. Each read of an immutable is a PUSH32 in both codes; the one on chain is
//! found by the opcodes around it — the same instructions before and after the PUSH32 in both
//! codes, push data ignored (jump targets move with the layout) — narrowing the window from 24
//! instructions a side to no fewer than 6 until one PUSH32 on chain fits. A PUSH32 on chain
//! whose value is one of the artifact's own constants (a PUSH32 that is no immutable's read)
//! is never a candidate, and one PUSH32 on chain is never given to two immutables: two
//! same-shaped getters of two immutables cannot swap or share a value. A value is taken only
//! when every read of that immutable found on chain holds the same one and no read is
//! ambiguous; otherwise the override is refused, naming the immutable: never a guess.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::names::sources::instructions;

const PUSH32: u8 = 0x7f;

/// Instructions compared on each side of a read, widest first; never fewer than 6 (3 matched
/// a same-shaped read of another value).
const WINDOWS: [usize; 4] = [24, 16, 10, 6];

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
    #[error(
        "immutables #{0} and #{1} both match the same PUSH32 at byte {2} of the code on chain \
         (same-shaped reads): which one it holds cannot be told; give the runtime code with \
         them filled as 0xHEX"
    )]
    Shared(String, String, usize),
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
    // The artifact's own 32-byte constants: every PUSH32 of its code that no immutable reads.
    let reads: std::collections::BTreeSet<usize> = immutables
        .iter()
        .flat_map(|i| i.refs.iter().map(|&(start, _)| start))
        .collect();
    let constants: std::collections::BTreeSet<&[u8]> = (0..new.ops.len())
        .filter(|&i| new.ops[i] == PUSH32 && !reads.contains(&(new.pcs[i] + 1)))
        .filter_map(|i| code.get(new.pcs[i] + 1..new.pcs[i] + 33))
        .collect();
    let push_data = |j: usize| chain.get(old.pcs[j] + 1..old.pcs[j] + 33);
    let old_push32: Vec<usize> = (0..old.ops.len())
        .filter(|&j| old.ops[j] == PUSH32)
        .filter(|&j| push_data(j).is_some_and(|d| !constants.contains(d)))
        .collect();
    // Which immutable each PUSH32 on chain was matched to.
    let mut taken: BTreeMap<usize, &str> = BTreeMap::new();
    let mut values_of = Vec::new();
    for imm in immutables {
        let mut values: BTreeMap<[u8; 32], usize> = BTreeMap::new();
        for &(start, len) in &imm.refs {
            let i = start
                .checked_sub(1)
                .filter(|_| len == 32)
                .and_then(|pc| new.index_of_pc(pc))
                .ok_or_else(|| ImmutableError::NotPush(imm.id.clone(), start))?;
            let Some((value, at)) = found_on_chain(&new, i, &old, &old_push32, chain) else {
                continue;
            };
            for j in at {
                match taken.insert(j, &imm.id) {
                    Some(other) if other != imm.id => {
                        return Err(ImmutableError::Shared(
                            other.to_string(),
                            imm.id.clone(),
                            old.pcs[j],
                        ))
                    }
                    _ => {}
                }
            }
            *values.entry(value).or_default() += 1;
        }
        values_of.push(values);
    }
    for (imm, values) in immutables.iter().zip(values_of) {
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
/// read `i`, found with the widest window that leaves exactly one value, and the instructions
/// on chain that hold it there.
fn found_on_chain(
    new: &Ops,
    i: usize,
    old: &Ops,
    old_push32: &[usize],
    chain: &[u8],
) -> Option<([u8; 32], Vec<usize>)> {
    for w in WINDOWS {
        let fits: Vec<(usize, [u8; 32])> = old_push32
            .iter()
            .filter(|&&j| new.same_around(i, old, j, w))
            .filter_map(|&j| {
                let pc = old.pcs[j];
                Some((j, chain.get(pc + 1..pc + 33)?.try_into().ok()?))
            })
            .collect();
        match fits.first() {
            None => continue,
            Some((_, v)) if fits.iter().all(|(_, f)| f == v) => {
                return Some((*v, fits.iter().map(|(j, _)| *j).collect()))
            }
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

    /// `n` instructions of filler, each `op` (no push data).
    fn filler(op: u8, n: usize) -> Vec<u8> {
        vec![op; n]
    }

    /// Two same-shaped getters: the reads of immutables #1 and #2 have the same 6 instructions
    /// on each side and differ only further out. On chain the layout of #1's getter changed, so
    /// only #2's getter matches at 6 — which the old 3-or-more matching gave both immutables.
    #[test]
    fn two_same_shaped_getters_never_share_a_value() {
        let tail = [0x60, 0x00, 0x52, 0x60, 0x20, 0x60, 0x00, 0xf3]; // MSTORE(0, v) RETURN(0, 32)
        let getter = |lead: u8, v: [u8; 32]| {
            let mut c = filler(lead, 12);
            c.extend(filler(0x5b, 6));
            c.push(PUSH32);
            c.extend(v);
            c.extend(tail);
            c
        };
        let mut new = getter(0x30, [0; 32]);
        let b_at = new.len() + 12 + 6 + 1;
        new.extend(getter(0x32, [0; 32]));
        let imm = [
            Immutable {
                id: "1".into(),
                refs: vec![(12 + 6 + 1, 32)],
            },
            Immutable {
                id: "2".into(),
                refs: vec![(b_at, 32)],
            },
        ];
        // On chain: #1's getter is now led by other instructions, #2's as in the artifact.
        let mut chain = getter(0x33, [0xaa; 32]);
        chain[12..18].copy_from_slice(&[0x34; 6]);
        chain.extend(getter(0x32, [0xbb; 32]));
        assert_eq!(
            fill_immutables(&mut new.clone(), &imm, &chain),
            Err(ImmutableError::Shared(
                "1".into(),
                "2".into(),
                chain.len() - 41
            ))
        );
        // Both getters as in the artifact: each immutable its own value.
        let mut chain = getter(0x30, [0xaa; 32]);
        chain.extend(getter(0x32, [0xbb; 32]));
        let got = fill_immutables(&mut new, &imm, &chain).unwrap();
        assert_eq!(
            got,
            vec![("1".to_string(), [0xaa; 32]), ("2".to_string(), [0xbb; 32])]
        );
    }

    /// A PUSH32 on chain holding one of the artifact's own constants is never an immutable's
    /// value, and 3 instructions of context no longer decide.
    #[test]
    fn a_constant_or_a_short_context_is_never_taken() {
        let k = [0x11; 32];
        // The artifact: the immutable read among ADDRESS-led filler, then a constant K among
        // CALLER-led filler; the 3 instructions before each read are the same JUMPDESTs.
        let read = |lead: u8, v: [u8; 32]| {
            let mut c = filler(lead, 8);
            c.extend(filler(0x5b, 3));
            c.push(PUSH32);
            c.extend(v);
            c.extend([0x50, 0x50, 0x50]);
            c.extend(filler(lead, 8));
            c
        };
        let mut new = read(0x30, [0; 32]);
        new.extend(read(0x33, k));
        let imm = [Immutable {
            id: "9".into(),
            refs: vec![(8 + 3 + 1, 32)],
        }];
        // On chain the immutable's read is gone (its getter rewritten); only the constant's
        // PUSH32 still has the read's 3 nearest instructions around it.
        let mut chain = filler(0x34, 20);
        chain.extend(read(0x33, k));
        assert_eq!(
            fill_immutables(&mut new.clone(), &imm, &chain),
            Err(ImmutableError::NotFound("9".into()))
        );
        // Nor a PUSH32 of another value that only the 3 nearest instructions match.
        let mut chain = filler(0x34, 20);
        chain.extend(read(0x33, [0x33; 32]));
        assert_eq!(
            fill_immutables(&mut new, &imm, &chain),
            Err(ImmutableError::NotFound("9".into()))
        );
    }
}
