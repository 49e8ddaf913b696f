//! A trace result as JSON on a writer: struct logs copied from their spool, everything else
//! through Go's encoding (`crate::geth::json`, re-exported here).

use std::io::{self, Write};

pub use crate::geth::json::{escape_html, to_json_string, write_json, GoFormatter};

/// Writes a tracer result as geth prints it. Struct logs stream from their spool rather than
/// going through one in-memory JSON value.
pub fn write_trace<W: Write>(out: &mut W, result: &crate::replay::TraceResult) -> io::Result<()> {
    match result {
        crate::replay::TraceResult::StructLog(r) => r.write_to(out),
        crate::replay::TraceResult::Gas(r) => write_json(
            out,
            &crate::render::gas::gas_json(r, &crate::render::decoder::Decoder::default()),
        ),
        other => write_json(out, other),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn html_characters_are_escaped_like_go() {
        let s = super::to_json_string(
            &serde_json::json!({"error": "stack underflow (0 <=> 5) & more"}),
        );
        assert_eq!(
            s,
            r#"{"error":"stack underflow (0 \u003c=\u003e 5) \u0026 more"}"#
        );
    }
}
