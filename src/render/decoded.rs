//! The opt-in `--decode` JSON extension: geth's result untouched, plus the names for it.
//!
//! `{"result": <geth's result, byte for byte>, "decoded": [frame, …]}` where each frame of the
//! call tree, depth first, is `{"frame": [0, 2], "address", "call", "revert"?, "logs"?, "at"?, "inferred"?}`: the
//! frame's path of child indices from the root, and the same texts the human tree prints.
//! When source maps matched, a failed frame also has `"at": {"file", "line", "column"}` and the
//! object ends with `"stack": [{"contract", "function", "file", "line", "column"}, …]`, the
//! Solidity stack trace of the top frame's failure, innermost first. With asset changes
//! computed, `"assetChanges"` follows ([`super::assets::AssetJson`]), and with storage changes
//! worked out, `"stateChanges"` comes last (the CLI's, by variable).

use std::io::{self, Write};

use serde::Serialize;

use super::assets::AssetJson;
use super::decoder::Decoder;
use super::json::{write_json, write_trace};
use super::source::Location;
use crate::replay::TraceResult;
use crate::trace::call::{CallFrame, CallKind};

#[derive(Serialize)]
struct Decoded {
    frame: Vec<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    address: Option<String>,
    call: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    revert: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    logs: Vec<String>,
    /// Where a failed frame failed in the source, when a source map matched its code.
    #[serde(skip_serializing_if = "Option::is_none")]
    at: Option<Location>,
    /// Why it reverted with no data, where the sources tell (Hardhat's inferences).
    #[serde(skip_serializing_if = "Option::is_none")]
    inferred: Option<String>,
}

fn walk(f: &CallFrame, d: &Decoder, path: &mut Vec<usize>, out: &mut Vec<Decoded>) {
    let call = match f.kind {
        CallKind::Create | CallKind::Create2 => "constructor".to_string(),
        CallKind::Selfdestruct => "selfdestruct".to_string(),
        _ => d.describe_call_at(f.to, &f.input, f.value),
    };
    let revert = f
        .error
        .as_ref()
        .and(f.output.as_deref())
        .and_then(|o| d.describe_revert_at(f.to, o));
    let logs = f
        .logs
        .iter()
        .map(|l| d.describe_log_at(Some(l.address), &l.topics, &l.data))
        .collect();
    out.push(Decoded {
        frame: path.clone(),
        address: f.to.map(|a| a.to_checksum(None)),
        call,
        revert,
        logs,
        at: f
            .error
            .as_ref()
            .and_then(|_| d.sources())
            .and_then(|n| n.frames.get(path.as_slice()))
            .cloned(),
        inferred: f
            .error
            .as_ref()
            .and_then(|_| d.sources())
            .and_then(|n| n.inferred.get(path.as_slice()))
            .cloned(),
    });
    for (i, c) in f.calls.iter().enumerate() {
        path.push(i);
        walk(c, d, path, out);
        path.pop();
    }
}

/// Writes `{"result": …, "decoded": […]}` for a call tree; other results are written as geth's
/// JSON alone (they carry no selectors to name).
pub fn write_decoded<W: Write>(
    out: &mut W,
    result: &TraceResult,
    d: &Decoder,
    assets: Option<&AssetJson>,
    state_changes: Option<&serde_json::Value>,
) -> io::Result<()> {
    let TraceResult::Call(root) = result else {
        return write_trace(out, result);
    };
    let mut frames = Vec::new();
    walk(root, d, &mut Vec::new(), &mut frames);
    out.write_all(b"{\"result\":")?;
    write_trace(out, result)?;
    out.write_all(b",\"decoded\":")?;
    write_json(out, &frames)?;
    if let Some(notes) = d.sources().filter(|n| !n.stack.is_empty()) {
        out.write_all(b",\"stack\":")?;
        write_json(out, &notes.stack)?;
    }
    if let Some(a) = assets {
        out.write_all(b",\"assetChanges\":")?;
        write_json(out, a)?;
    }
    if let Some(s) = state_changes {
        out.write_all(b",\"stateChanges\":")?;
        write_json(out, s)?;
    }
    out.write_all(b"}")
}
