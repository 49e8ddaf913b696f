//! What only the consensus layer of chains 1329/1328 knows about a block, read from a node's
//! CometBFT RPC (`--consensus-rpc http://host:26657`):
//!
//! * the header time with nanoseconds (`/block?height=N`, `result.block.header.time`), which
//!   the chain hashes into PREVRANDAO (`eth_getBlock*` has whole seconds only);
//! * the `SeiSstoreSetGasEIP2200` parameter in force (`/abci_query` of the params module's
//!   gRPC `Query/Params` at height N-1, the state block N runs on; an unset parameter is 0,
//!   which the node reads as 20,000).
//!
//! Two GETs per block. The request and response are the params module's protobuf messages
//! (`QueryParamsRequest{subspace, key}`, `QueryParamsResponse{param: ParamChange{…, value}}`),
//! encoded here by hand: two strings in, one string out.

use std::time::Duration;

use base64::Engine;
use serde_json::Value;

use super::chain_data::ConsensusFacts;
use super::error::SourceError;
use crate::rpc::operator::{OperatorClient, OperatorError};

/// A node's CometBFT RPC read for consensus facts (the operator client the node tools use).
#[derive(Debug, Clone)]
pub struct ConsensusClient {
    client: OperatorClient,
}

fn bad(what: &str, reason: impl Into<String>) -> SourceError {
    SourceError::BadData {
        what: what.into(),
        reason: reason.into(),
    }
}

/// A protobuf length-delimited field.
fn field(tag: u8, bytes: &[u8], out: &mut Vec<u8>) {
    out.push(tag);
    let mut n = bytes.len();
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            break;
        }
        out.push(b | 0x80);
    }
    out.extend_from_slice(bytes);
}

/// The length-delimited field `number` of a protobuf message (the first one), skipping others.
fn read_field(mut msg: &[u8], number: u64) -> Option<&[u8]> {
    fn varint(b: &mut &[u8]) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let (&x, rest) = b.split_first()?;
            *b = rest;
            v |= u64::from(x & 0x7f) << shift;
            if x & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }
    while !msg.is_empty() {
        let key = varint(&mut msg)?;
        match key & 7 {
            0 => {
                varint(&mut msg)?;
            }
            1 => msg = msg.get(8..)?,
            5 => msg = msg.get(4..)?,
            2 => {
                let len = usize::try_from(varint(&mut msg)?).ok()?;
                let (body, rest) = (msg.get(..len)?, msg.get(len..)?);
                if key >> 3 == number {
                    return Some(body);
                }
                msg = rest;
            }
            _ => return None,
        }
    }
    None
}

impl ConsensusClient {
    /// A client for `url` (`http://host:26657`; `tcp://` as config.toml writes it is http).
    pub fn new(url: &str, timeout: Duration) -> Result<ConsensusClient, OperatorError> {
        let client = OperatorClient::new(url, timeout)?;
        Ok(ConsensusClient { client })
    }

    fn get(&self, path: &str, what: &str) -> Result<Value, SourceError> {
        self.client.get(path).map_err(|e| bad(what, e.to_string()))
    }

    /// The header time of block `height`: Unix seconds and nanoseconds.
    pub fn block_time(&self, height: u64) -> Result<(i64, u32), SourceError> {
        let what = "consensus block header";
        let v = self.get(&format!("/block?height={height}"), what)?;
        let header = &v["block"]["header"];
        let got = header.get("height").and_then(|h| {
            h.as_str()
                .and_then(|s| s.parse::<u64>().ok())
                .or_else(|| h.as_u64())
        });
        if got != Some(height) {
            return Err(bad(
                what,
                format!("asked for height {height}, got {}", header["height"]),
            ));
        }
        let time = header["time"]
            .as_str()
            .ok_or_else(|| bad(what, "no `time` in the header"))?;
        crate::geth::time::parse_rfc3339_utc(time)
            .ok_or_else(|| bad(what, format!("unreadable `time` {time:?}")))
    }

    /// `SeiSstoreSetGasEIP2200` in force for block `height` (the state after `height - 1`).
    pub fn sstore_set_gas(&self, height: u64) -> Result<u64, SourceError> {
        let what = "evm parameter SeiSstoreSetGasEIP2200";
        let mut req = Vec::new();
        field(0x0a, b"evm", &mut req);
        field(0x12, b"KeySeiSstoreSetGasEIP2200", &mut req);
        let hex: String = req.iter().map(|b| format!("{b:02x}")).collect();
        let path = format!(
            "/abci_query?path=%22/cosmos.params.v1beta1.Query/Params%22&data=0x{hex}&height={}",
            height.saturating_sub(1)
        );
        let v = self.get(&path, what)?;
        let resp = &v["response"];
        let code = resp.get("code").and_then(Value::as_u64).unwrap_or(0);
        if code != 0 {
            return Err(bad(
                what,
                format!("the node's query failed (code {code}): {}", resp["log"]),
            ));
        }
        let raw = resp["value"].as_str().unwrap_or("");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(raw)
            .map_err(|e| bad(what, format!("the answer's value is not base64: {e}")))?;
        let value = read_field(&bytes, 1)
            .and_then(|param| read_field(param, 3))
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .unwrap_or_default();
        // The raw parameter is its JSON (amino writes uint64 as a string); unset is empty.
        let text = value.trim().trim_matches('"');
        if text.is_empty() {
            return Ok(effective(0));
        }
        text.parse::<u64>()
            .map(effective)
            .map_err(|_| bad(what, format!("unreadable value {value:?}")))
    }

    /// Both facts for block `height`.
    pub fn facts(&self, height: u64) -> Result<ConsensusFacts, SourceError> {
        let (_, time_nanos) = self.block_time(height)?;
        Ok(ConsensusFacts {
            time_nanos,
            sstore_set_gas: self.sstore_set_gas(height)?,
        })
    }
}

/// x/evm `GetSstoreSetGasEIP2200`: 0 (unset, before v6.3.0) means the legacy 20,000.
fn effective(v: u64) -> u64 {
    if v == 0 {
        crate::chain::rules::DEFAULT_SSTORE_SET_GAS
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protobuf_fields_round_trip() {
        let mut change = Vec::new();
        field(0x0a, b"evm", &mut change);
        field(0x12, b"KeySeiSstoreSetGasEIP2200", &mut change);
        field(0x1a, b"\"25000\"", &mut change);
        let mut resp = Vec::new();
        field(0x0a, &change, &mut resp);
        let param = read_field(&resp, 1).unwrap();
        assert_eq!(read_field(param, 3), Some(&b"\"25000\""[..]));
        assert_eq!(
            read_field(param, 2),
            Some(&b"KeySeiSstoreSetGasEIP2200"[..])
        );
        assert_eq!(read_field(param, 4), None);
    }
}
