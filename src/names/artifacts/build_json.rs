//! A build's JSON read in one pass with its ASTs apart: `sources.<path>.ast` (standard-JSON
//! output, at the top or under a build info's `output`) and an artifact's own top-level `ast`
//! (Foundry's with `ast = true`, Truffle's) are read straight into their declarations only
//! ([`AstDecls`]; taken as text first when one is not solc's); every other member becomes a
//! `serde_json::Value` as before, but Foundry's `metadata` object, which repeats the
//! `rawMetadata` text before it.
//! solc's ASTs are most of a build output's bytes (207 KiB of the 291 KiB the naming bench
//! reads), and a tree of maps for them cost more than the rest of naming together (issue 44).
//!
//! Written by hand over serde's visitor API because no crate splits one member off a document
//! while building the rest as a `Value`.

use std::collections::HashMap;
use std::fmt;

use serde::de::value::SeqAccessDeserializer;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::names::sources::AstDecls;

/// Declarations of each source's AST by the path the build names it; `None` for an AST that is
/// not solc's compact JSON. An artifact's own AST is under its `absolutePath`.
pub type Asts = HashMap<String, Option<AstDecls>>;

/// What is left in the document of an artifact's own AST read apart: its path.
pub fn own_ast_left(path: String) -> Value {
    serde_json::json!({ "absolutePath": path })
}

/// `text` as a `Value` without the ASTs under `sources`, and those ASTs' declarations; with
/// `keep_abi`, an artifact's top-level `abi`, where it is an array, kept as text (in the value
/// it is `null`): a project's ABIs are read when first used ([`LazyAbi::json`]), most of them
/// never.
///
/// Read once with each AST read straight into its declarations; only when that fails (an AST
/// of another shape, or no JSON at all) read again with each AST taken as text first, so that
/// an AST solc did not write is read as none instead of failing the build.
///
/// [`LazyAbi::json`]: crate::render::abi::LazyAbi::json
pub fn parse(
    text: &str,
    keep_abi: bool,
) -> serde_json::Result<(Value, Asts, Option<Box<RawValue>>)> {
    parse_with(text, false, keep_abi).or_else(|_| parse_with(text, true, keep_abi))
}

fn parse_with(
    text: &str,
    careful: bool,
    keep_abi: bool,
) -> serde_json::Result<(Value, Asts, Option<Box<RawValue>>)> {
    let mut asts = Asts::new();
    let mut abi = None;
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Level {
        asts: &mut asts,
        top: true,
        abi: keep_abi.then_some(&mut abi),
        careful,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok((value, asts, abi))
}

/// The document (`top`) or a build info's `output`: its `sources` read apart.
struct Level<'a> {
    asts: &'a mut Asts,
    top: bool,
    /// Where the top's `abi`, an array, is kept as text, if it is.
    abi: Option<&'a mut Option<Box<RawValue>>>,
    careful: bool,
}

/// `sources`: each source's members, its `ast` read apart.
struct Sources<'a> {
    asts: &'a mut Asts,
    careful: bool,
}

/// One source's members.
struct Source<'a> {
    asts: &'a mut Asts,
    path: String,
    careful: bool,
}

/// The next value, an AST, read into its declarations: straight (an error when it is not
/// solc's compact AST), or (`careful`) taken as text first, the text itself when it is not.
fn read_ast<'de, A: MapAccess<'de>>(
    m: &mut A,
    careful: bool,
) -> Result<Result<AstDecls, &'de RawValue>, A::Error> {
    struct Seed;
    impl<'de> DeserializeSeed<'de> for Seed {
        type Value = AstDecls;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<AstDecls, D::Error> {
            AstDecls::deserialize(d)
        }
    }
    if !careful {
        return m.next_value_seed(Seed).map(Ok);
    }
    let raw = m.next_value::<&RawValue>()?;
    Ok(AstDecls::from_json(raw.get()).ok_or(raw))
}

/// A reader's visitor: any JSON value other than an object read as a `Value` (what a member of
/// an unexpected shape is read as); each reader adds its own `visit_map`.
macro_rules! any_value {
    () => {
        type Value = Value;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("JSON")
        }
        fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Value, E> {
            Ok(Value::Bool(v))
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
            Ok(Value::String(v.to_string()))
        }
        fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Value, E> {
            Ok(Value::String(v))
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Value, A::Error> {
            Value::deserialize(SeqAccessDeserializer::new(seq))
        }
    };
}

/// Each reader is its own seed: it reads whatever value comes.
macro_rules! seeded {
    ($t:ident) => {
        impl<'de> DeserializeSeed<'de> for $t<'_> {
            type Value = Value;
            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
                d.deserialize_any(self)
            }
        }
    };
}

seeded!(Level);

impl<'de> Visitor<'de> for Level<'_> {
    any_value!();
    fn visit_map<A: MapAccess<'de>>(mut self, mut m: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        let mut raw_metadata = false;
        let top = self.top;
        while let Some(key) = m.next_key::<String>()? {
            let v = match key.as_str() {
                "abi" if self.abi.is_some() => {
                    let raw = m.next_value::<&RawValue>()?;
                    if raw.get().starts_with('[') {
                        if let Some(kept) = self.abi.as_deref_mut() {
                            *kept = Some(raw.to_owned());
                        }
                        Value::Null
                    } else {
                        serde_json::from_str(raw.get()).map_err(serde::de::Error::custom)?
                    }
                }
                "rawMetadata" if top => {
                    let v = m.next_value::<Value>()?;
                    raw_metadata = v.is_string();
                    v
                }
                // Foundry's `metadata` object after its `rawMetadata`: the same, read from the
                // text (`artifacts::parse_metadata`), so not built.
                "metadata" if top && raw_metadata => {
                    m.next_value::<serde::de::IgnoredAny>()?;
                    continue;
                }
                "sources" => m.next_value_seed(Sources {
                    asts: &mut *self.asts,
                    careful: self.careful,
                })?,
                "output" if top => m.next_value_seed(Level {
                    asts: &mut *self.asts,
                    top: false,
                    abi: None,
                    careful: self.careful,
                })?,
                // An artifact's own AST: only its path is left in the value.
                "ast" if top => match read_ast(&mut m, self.careful)? {
                    Ok(decls) => {
                        let path = decls.path.clone().unwrap_or_default();
                        self.asts.insert(path.clone(), Some(decls));
                        own_ast_left(path)
                    }
                    // Not solc's shape: kept whole, as any other member.
                    Err(raw) => {
                        serde_json::from_str(raw.get()).map_err(serde::de::Error::custom)?
                    }
                },
                _ => m.next_value::<Value>()?,
            };
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

seeded!(Sources);

impl<'de> Visitor<'de> for Sources<'_> {
    any_value!();
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(path) = m.next_key::<String>()? {
            let v = m.next_value_seed(Source {
                asts: &mut *self.asts,
                path: path.clone(),
                careful: self.careful,
            })?;
            out.insert(path, v);
        }
        Ok(Value::Object(out))
    }
}

seeded!(Source);

impl<'de> Visitor<'de> for Source<'_> {
    any_value!();
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = m.next_key::<String>()? {
            if key == "ast" {
                let decls = read_ast(&mut m, self.careful)?.ok();
                self.asts.insert(self.path.clone(), decls);
            } else {
                out.insert(key, m.next_value::<Value>()?);
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asts_are_read_apart_and_the_rest_is_the_same_value() {
        let text = r#"{"contracts": {"A.sol": {"A": {"abi": []}}},
            "sources": {"A.sol": {"id": 0, "ast": {"nodeType": "SourceUnit", "src": "0:9:0",
                "nodes": [{"nodeType": "ContractDefinition", "id": 3, "name": "A", "src": "0:9:0",
                    "linearizedBaseContracts": [3], "nodes": [
                    {"nodeType": "FunctionDefinition", "kind": "function", "name": "f", "src": "1:5:0",
                     "parameters": {"parameters": [{"name": "x", "storageLocation": "default",
                        "typeDescriptions": {"typeString": "uint256"}}]},
                     "body": {"nodeType": "Block", "statements": [{"weird": [1, {"nodes": 7}]}]}}]}]}},
                "B.sol": {"id": 1, "ast": {"nodeType": "SourceUnit", "nodes": 5}}}}"#;
        let (v, asts, _) = parse(text, false).unwrap();
        let mut whole: Value = serde_json::from_str(text).unwrap();
        for s in ["A.sol", "B.sol"] {
            whole["sources"][s].as_object_mut().unwrap().remove("ast");
        }
        assert_eq!(v, whole);
        let a = asts["A.sol"].as_ref().unwrap();
        assert_eq!(a.functions.len(), 1);
        assert_eq!(a.functions[0].params.as_deref(), Some("uint256"));
        assert_eq!(a.storage.contracts[0].bases, vec![3]);
        // Not solc's shape: no declarations, not an error.
        assert!(asts["B.sol"].is_none());
        // Not an object at all: the value as it is.
        assert_eq!(
            parse("[1, \"x\"]", false).unwrap().0,
            serde_json::json!([1, "x"])
        );
        assert!(parse("{", false).is_err());
    }

    #[test]
    fn a_build_info_output_is_read_apart_but_not_its_input() {
        let text = r#"{"input": {"sources": {"A.sol": {"content": "x", "ast": 1}}},
            "output": {"sources": {"A.sol": {"id": 0, "ast": {"nodeType": "SourceUnit"}}}}}"#;
        let (v, asts, _) = parse(text, false).unwrap();
        assert_eq!(v["input"]["sources"]["A.sol"]["ast"], 1);
        assert!(v["output"]["sources"]["A.sol"].get("ast").is_none());
        assert!(asts["A.sol"].is_some());
    }

    #[test]
    fn foundrys_metadata_object_is_left_to_its_raw_text() {
        let text = r#"{"rawMetadata": "{\"x\":1}", "metadata": {"x": 1}, "abi": []}"#;
        let (v, ..) = parse(text, false).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"rawMetadata": "{\"x\":1}", "abi": []})
        );
        // Without the text before it, the object is kept.
        let text = r#"{"metadata": {"x": 1}, "rawMetadata": "{\"x\":1}"}"#;
        assert_eq!(
            parse(text, false).unwrap().0["metadata"],
            serde_json::json!({"x": 1})
        );
    }

    #[test]
    fn an_artifacts_own_ast_is_read_apart_by_its_path() {
        let text = r#"{"abi": [], "ast": {"nodeType": "SourceUnit", "absolutePath": "src/L.sol",
            "nodes": [{"nodeType": "ContractDefinition", "id": 4, "name": "L", "src": "0:9:0",
                "linearizedBaseContracts": [4], "nodes": []}]}, "id": 0}"#;
        let (v, asts, _) = parse(text, false).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"abi": [], "ast": {"absolutePath": "src/L.sol"}, "id": 0})
        );
        let l = asts["src/L.sol"].as_ref().unwrap();
        assert_eq!(l.storage.contracts[0].name, "L");
        // Not solc's shape: the member as it is, nothing read apart.
        let (v, asts, _) = parse(r#"{"ast": [1]}"#, false).unwrap();
        assert_eq!(v, serde_json::json!({"ast": [1]}));
        assert!(asts.is_empty());
    }
}
