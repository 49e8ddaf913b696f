//! JSON output exactly as Go's `encoding/json` writes it.
//!
//! Go escapes `<`, `>` and `&` as `\u003c`, `\u003e`, `\u0026` and the line separators U+2028 and
//! U+2029 as `\u2028`, `\u2029`; serde_json does not. Error texts such as
//! `stack underflow (0 <=> 5)` show the difference, so every JSON byte on stdout goes through
//! [`GoFormatter`].

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter};

/// A compact serde_json formatter with Go's HTML-safe string escaping.
#[derive(Default)]
pub struct GoFormatter;

impl Formatter for GoFormatter {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            let esc: &[u8] = match c {
                '<' => b"\\u003c",
                '>' => b"\\u003e",
                '&' => b"\\u0026",
                '\u{2028}' => b"\\u2028",
                '\u{2029}' => b"\\u2029",
                _ => continue,
            };
            writer.write_all(&fragment.as_bytes()[start..i])?;
            writer.write_all(esc)?;
            start = i + c.len_utf8();
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }

    fn write_char_escape<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        char_escape: serde_json::ser::CharEscape,
    ) -> io::Result<()> {
        CompactFormatter.write_char_escape(writer, char_escape)
    }
}

/// Go's HTML-safe escaping applied to JSON text made elsewhere (a JavaScript tracer's
/// `JSON.stringify` output); the escaped characters only occur inside strings.
pub fn escape_html(json: &str) -> String {
    let mut out = Vec::with_capacity(json.len());
    GoFormatter
        .write_string_fragment(&mut out, json)
        .expect("writing to memory cannot fail");
    String::from_utf8(out).expect("escaping keeps UTF-8")
}

/// Writes `value` as compact Go-style JSON.
pub fn write_json<T: Serialize + ?Sized, W: Write>(out: &mut W, value: &T) -> io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(out, GoFormatter);
    value.serialize(&mut ser).map_err(io::Error::other)
}

/// Renders `value` as a compact Go-style JSON string.
pub fn to_json_string<T: Serialize + ?Sized>(value: &T) -> String {
    let mut buf = Vec::new();
    write_json(&mut buf, value).expect("writing JSON to memory cannot fail");
    String::from_utf8(buf).expect("serde_json writes UTF-8")
}

/// ECMAScript's QuoteJSONString, as `JSON.stringify` writes a string (a JavaScript tracer's
/// result, before [`escape_html`]) and RFC 8785 adopts it:
/// `"`, `\\` and the control characters escaped (the five with short forms by them), nothing
/// else.
pub fn write_js_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}
