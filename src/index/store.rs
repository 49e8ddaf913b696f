//! The address index on disk: one append-only file, `DIR/index.ndjson`.
//!
//! Its first line names the chain, `{"chaintraceIndex":1,"chainId":…,"genesis":"0x…"}`; every
//! other line is one block as it was indexed, `{"number":…,"hash":…,"parent":…,"txs":[[tx
//! hash,[address…]]…]}`, in the order blocks were indexed. Read back in that order through
//! [`AddressIndex::insert`], a line for a number already read replaces that block and all
//! after it, so a reorg is written as the new chain's blocks appended, and nothing is ever
//! rewritten in place. A last line cut short (a process killed mid-write) is left out with a
//! note, and cut off before the next append; any other unreadable line is an error naming it.
//! The file is held under an OS lock while open (one writer: `chaintrace index` or `serve
//! --index`).

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use alloy_primitives::{Address, B256};
use serde_json::{json, Value};

use super::{AddressIndex, IndexedBlock, IndexedTx};

/// The file's name in its directory.
pub const FILE: &str = "index.ndjson";

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("address index {path}: {err}")]
    Io { path: PathBuf, err: std::io::Error },
    #[error("address index {path}, line {line}: {reason}")]
    Corrupt {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error(
        "address index {path} is of chain {have} (genesis {have_genesis}), not the node's chain {want} (genesis {want_genesis})"
    )]
    OtherChain {
        path: PathBuf,
        have: u64,
        have_genesis: B256,
        want: u64,
        want_genesis: B256,
    },
    #[error("address index {0} is in use by another process (chaintrace index or serve --index)")]
    Locked(PathBuf),
    #[error("no address index in {0}: build one with `chaintrace index A..B --out DIR`")]
    Missing(PathBuf),
}

/// An open index file, held under its lock, appended to.
pub struct Store {
    file: File,
    path: PathBuf,
}

/// What [`open`] read.
pub struct Opened {
    pub store: Store,
    pub index: AddressIndex,
    pub chain_id: u64,
    pub genesis: B256,
    /// What the reading noticed (a torn last line).
    pub notes: Vec<String>,
}

/// Opens the index in `dir` for chain `(chain id, genesis hash)`: created (with `dir`) when
/// `create` and it does not exist; refused when it is another chain's.
pub fn open(dir: &Path, chain: (u64, B256), create: bool) -> Result<Opened, StoreError> {
    let path = dir.join(FILE);
    let io = |err| StoreError::Io {
        path: path.clone(),
        err,
    };
    if !path.exists() {
        if !create {
            return Err(StoreError::Missing(dir.to_path_buf()));
        }
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(create)
        .open(&path)
        .map_err(io)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Err(StoreError::Locked(path)),
        Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
    }
    let mut index = AddressIndex::default();
    let mut notes = Vec::new();
    let mut header: Option<(u64, B256)> = None;
    // Offset just past the last whole line read.
    let mut good = 0u64;
    {
        let mut reader = BufReader::new(&file);
        reader.seek(SeekFrom::Start(0)).map_err(io)?;
        let mut line = String::new();
        let mut n = 0usize;
        loop {
            line.clear();
            let read = reader.read_line(&mut line).map_err(io)?;
            if read == 0 {
                break;
            }
            n += 1;
            if !line.ends_with('\n') {
                notes.push(format!(
                    "address index {}: line {n} was cut short (a write that did not finish); it is left out",
                    path.display()
                ));
                break;
            }
            let corrupt = |reason: String| StoreError::Corrupt {
                path: path.clone(),
                line: n,
                reason,
            };
            let v: Value = serde_json::from_str(&line).map_err(|e| corrupt(e.to_string()))?;
            match header {
                None => {
                    header = Some(
                        parse_header(&v)
                            .ok_or_else(|| corrupt("not an address index header".into()))?,
                    )
                }
                Some(_) => index.insert(parse_block(&v).map_err(corrupt)?),
            }
            good += read as u64;
        }
    }
    let (chain_id, genesis) = match header {
        Some(h) => h,
        None => {
            // A new file: its header first.
            file.set_len(0).map_err(io)?;
            let line = json!({"chaintraceIndex": 1, "chainId": chain.0, "genesis": chain.1});
            writeln!(file, "{line}").map_err(io)?;
            file.sync_data().map_err(io)?;
            chain
        }
    };
    if (chain_id, genesis) != chain {
        return Err(StoreError::OtherChain {
            path,
            have: chain_id,
            have_genesis: genesis,
            want: chain.0,
            want_genesis: chain.1,
        });
    }
    if header.is_some() && good < file.metadata().map_err(io)?.len() {
        file.set_len(good).map_err(io)?;
    }
    Ok(Opened {
        store: Store { file, path },
        index,
        chain_id,
        genesis,
        notes,
    })
}

fn parse_header(v: &Value) -> Option<(u64, B256)> {
    if v.get("chaintraceIndex")?.as_u64()? != 1 {
        return None;
    }
    Some((
        v.get("chainId")?.as_u64()?,
        v.get("genesis")?.as_str()?.parse().ok()?,
    ))
}

fn parse_block(v: &Value) -> Result<IndexedBlock, String> {
    let hash = |k: &str| -> Result<B256, String> {
        v.get(k)
            .and_then(Value::as_str)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("no block {k}"))
    };
    let number = v
        .get("number")
        .and_then(Value::as_u64)
        .ok_or("no block number")?;
    let txs = v
        .get("txs")
        .and_then(Value::as_array)
        .ok_or("no txs")?
        .iter()
        .map(|t| {
            let hash: B256 = t
                .get(0)
                .and_then(Value::as_str)
                .and_then(|s| s.parse().ok())
                .ok_or("a transaction without its hash")?;
            let list = |i: usize| -> Result<Vec<Address>, &'static str> {
                let Some(v) = t.get(i) else {
                    return Ok(Vec::new());
                };
                v.as_array()
                    .ok_or("a transaction's addresses are not a list")?
                    .iter()
                    .map(|a| a.as_str().and_then(|s| s.parse::<Address>().ok()))
                    .collect::<Option<Vec<_>>>()
                    .ok_or("an address that is not one")
            };
            if t.get(1).is_none() {
                return Err("a transaction without its addresses");
            }
            Ok(IndexedTx {
                hash,
                addresses: list(1)?,
                refunds: list(2)?,
            })
        })
        .collect::<Result<Vec<_>, &str>>()?;
    Ok(IndexedBlock {
        number,
        hash: hash("hash")?,
        parent: hash("parent")?,
        txs,
    })
}

impl Store {
    /// Appends `block` (one line, written at once and flushed to the OS).
    pub fn append(&mut self, block: &IndexedBlock) -> Result<(), StoreError> {
        let txs: Vec<Value> = block
            .txs
            .iter()
            .map(|t| match t.refunds.is_empty() {
                true => json!([t.hash, t.addresses]),
                false => json!([t.hash, t.addresses, t.refunds]),
            })
            .collect();
        let line =
            json!({"number": block.number, "hash": block.hash, "parent": block.parent, "txs": txs});
        let mut text = line.to_string();
        text.push('\n');
        self.file
            .write_all(text.as_bytes())
            .map_err(|err| StoreError::Io {
                path: self.path.clone(),
                err,
            })
    }

    /// Makes what was appended durable.
    pub fn sync(&mut self) -> Result<(), StoreError> {
        self.file.sync_data().map_err(|err| StoreError::Io {
            path: self.path.clone(),
            err,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(number: u64, tag: u8, addr: u8) -> IndexedBlock {
        IndexedBlock {
            number,
            hash: B256::repeat_byte(tag),
            parent: B256::repeat_byte(tag.wrapping_sub(1)),
            txs: vec![IndexedTx {
                hash: B256::with_last_byte(tag),
                addresses: vec![Address::repeat_byte(addr)],
                refunds: vec![Address::repeat_byte(addr ^ 0xff)],
            }],
        }
    }

    #[test]
    fn a_reorg_is_appended_and_read_back_as_the_new_chain() {
        let dir = tempfile::tempdir().unwrap();
        let chain = (31337, B256::repeat_byte(0xee));
        {
            let mut o = open(dir.path(), chain, true).unwrap();
            for b in [
                block(1, 1, 0xa),
                block(2, 2, 0xb),
                block(3, 3, 0xc),
                block(2, 9, 0xd),
            ] {
                o.store.append(&b).unwrap();
            }
        }
        let o = open(dir.path(), chain, false).unwrap();
        assert_eq!(o.index.tip(), Some((2, B256::repeat_byte(9))));
        assert!(o
            .index
            .blocks_touching(&[Address::repeat_byte(0xc)], 0, 9)
            .is_empty());
        // Another chain's index is refused; a missing one too when not created.
        let other = open(dir.path(), (1, B256::ZERO), false);
        drop(o);
        assert!(matches!(
            open(dir.path(), (1, B256::ZERO), false),
            Err(StoreError::OtherChain { .. })
        ));
        drop(other);
        assert!(matches!(
            open(&dir.path().join("none"), chain, false),
            Err(StoreError::Missing(_))
        ));
    }

    #[test]
    fn a_cut_last_line_is_left_out_and_cut_off_a_bad_line_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let chain = (1, B256::repeat_byte(1));
        {
            let mut o = open(dir.path(), chain, true).unwrap();
            o.store.append(&block(5, 5, 0xa)).unwrap();
        }
        let path = dir.path().join(FILE);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"number\":6,\"ha").unwrap();
        drop(f);
        {
            let mut o = open(dir.path(), chain, false).unwrap();
            assert_eq!(o.notes.len(), 1, "{:?}", o.notes);
            assert_eq!(o.index.tip().map(|t| t.0), Some(5));
            o.store.append(&block(6, 6, 0xb)).unwrap();
        }
        let o = open(dir.path(), chain, false).unwrap();
        assert!(o.notes.is_empty());
        assert_eq!(o.index.tip().map(|t| t.0), Some(6));
        drop(o);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"not json\n").unwrap();
        drop(f);
        let err = open(dir.path(), chain, false).err().unwrap().to_string();
        assert!(err.contains("line 4"), "{err}");
    }
}
