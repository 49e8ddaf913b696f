//! RFC 8785 JSON Canonicalization Scheme (JCS).
//!
//! Wallet providers sign the canonical form of a request body, so what matters is exactly the
//! bytes JCS produces: object members sorted by the UTF-16 code units of their names, no
//! whitespace, strings with the minimal escaping of ECMAScript's `JSON.stringify`, and numbers
//! as ECMAScript's `Number.prototype.toString` prints an IEEE-754 double. The last rule is why a
//! quantity sent as a JSON number is unsafe: `123456789012345678901` canonicalises to
//! `123456789012345680000`.

use serde_json::{Number, Value};

use crate::geth::json::write_js_string;

/// Parses JSON text as a wallet provider must read a body it will sign: numbers correctly
/// rounded as an ECMAScript parser reads them (serde_json's `float_roundtrip`; integers beyond
/// 64 bits become doubles, as in ECMAScript), and a member name repeated in one object refused
/// (RFC 8785 forbids it; a last-wins reader would sign what a first-wins reader never saw). One
/// pass: serde_json's nesting limit (128) holds and the time is linear in the text.
pub fn parse_exact(text: &str) -> Result<Value, serde_json::Error> {
    serde_json::from_str::<Strict>(text).map(|s| s.0)
}

/// A JSON value read with duplicate member names refused.
struct Strict(Value);

impl<'de> serde::Deserialize<'de> for Strict {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor)
    }
}

struct StrictVisitor;

impl<'de> serde::de::Visitor<'de> for StrictVisitor {
    type Value = Strict;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Strict, E> {
        Ok(Strict(Value::Bool(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Strict, E> {
        Ok(Strict(Value::from(v)))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Strict, E> {
        Ok(Strict(Value::from(v)))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Strict, E> {
        Ok(Strict(
            Number::from_f64(v).map_or(Value::Null, Value::Number),
        ))
    }

    fn visit_str<E>(self, v: &str) -> Result<Strict, E> {
        Ok(Strict(Value::String(v.to_string())))
    }

    fn visit_string<E>(self, v: String) -> Result<Strict, E> {
        Ok(Strict(Value::String(v)))
    }

    fn visit_unit<E>(self) -> Result<Strict, E> {
        Ok(Strict(Value::Null))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Strict, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Strict(Value::Array(items)))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Strict, A::Error> {
        let mut m = serde_json::Map::new();
        while let Some(k) = map.next_key::<String>()? {
            if m.contains_key(&k) {
                return Err(serde::de::Error::custom(format!(
                    "duplicate member name {k:?} (RFC 8785 forbids repeating a name in one object)"
                )));
            }
            let Strict(v) = map.next_value()?;
            m.insert(k, v);
        }
        Ok(Strict(Value::Object(m)))
    }
}

/// The canonical JCS serialisation of `v`.
pub fn canonicalize(v: &Value) -> String {
    let mut out = String::new();
    write_value(v, &mut out);
    out
}

fn write_value(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number(n)),
        Value::String(s) => write_js_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            // UTF-16 order differs from code-point order above the BMP: U+1F600 (D83D DE00)
            // sorts before U+FB33.
            members.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            out.push('{');
            for (i, (k, item)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_js_string(k, out);
                out.push(':');
                write_value(item, out);
            }
            out.push('}');
        }
    }
}

/// A JSON number as the IEEE-754 double JCS sees: integers beyond 2^53 lose precision here,
/// exactly as they do in the provider's canonicaliser.
fn number(n: &Number) -> String {
    let f = if let Some(u) = n.as_u64() {
        u as f64
    } else if let Some(i) = n.as_i64() {
        i as f64
    } else {
        n.as_f64().unwrap_or(f64::NAN)
    };
    es6_number(f)
}

/// ECMAScript `Number.prototype.toString` for a finite double (ECMA-262 Number::toString),
/// which RFC 8785 prescribes: `ryu-js`, the shortest round-trip digits in ECMAScript's layout.
pub fn es6_number(f: f64) -> String {
    if !f.is_finite() {
        // JSON cannot carry these; JCS says to fail, and serde_json never produces them.
        return "null".into();
    }
    ryu_js::Buffer::new().format_finite(f).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(text: &str) -> String {
        canonicalize(&parse_exact(text).unwrap())
    }

    #[test]
    fn rfc8785_section_3_2_2_example() {
        let input = r#"{
          "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
          "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
          "literals": [null, true, false]
        }"#;
        assert_eq!(
            canon(input),
            r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
        );
    }

    #[test]
    fn rfc8785_section_3_2_3_sorts_by_utf16_code_units() {
        let input = r#"{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}"#;
        let out = canon(input);
        let keys: Vec<&str> = [
            "\\r",
            "1",
            "\u{80}",
            "\u{f6}",
            "\u{20ac}",
            "\u{1f600}",
            "\u{fb33}",
        ]
        .to_vec();
        let mut pos = 0;
        for k in keys {
            let at = out[pos..]
                .find(&format!("\"{k}\":"))
                .unwrap_or_else(|| panic!("{k} out of order in {out}"));
            pos += at + 1;
        }
    }

    #[test]
    fn es6_number_formatting_matches_ecmascript() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (-1.5, "-1.5"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (123456789012345678901.0, "123456789012345680000"),
            (0.000001, "0.000001"),
            (0.0000001, "1e-7"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (9007199254740993.0, "9007199254740992"),
            (295147905179352830000.0, "295147905179352830000"),
        ];
        for (f, want) in cases {
            assert_eq!(es6_number(*f), *want, "{f:e}");
        }
    }

    #[test]
    fn big_integers_are_canonicalised_as_doubles() {
        assert_eq!(canon("[123456789012345678901]"), "[123456789012345680000]");
        assert_eq!(canon("[18446744073709551615]"), "[18446744073709552000]");
        assert_eq!(canon("[-9007199254740993]"), "[-9007199254740992]");
    }

    #[test]
    fn control_characters_use_short_or_lowercase_unicode_escapes() {
        assert_eq!(
            canon(r#"["\u0001\b\t\n\f\r\u001F\u2028é"]"#),
            "[\"\\u0001\\b\\t\\n\\f\\r\\u001f\u{2028}é\"]"
        );
    }
}
