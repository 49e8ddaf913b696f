//! An artifact read from one JSON file: a bare ABI, a Foundry or Hardhat artifact (a Foundry
//! artifact's own AST kept as text, [`split_own_ast`]), solc's combined JSON or a standard-JSON
//! output; its runtime code with what to ignore when matching it, its source maps and solc
//! metadata waiting for the compilation the tree gives it ([`Pending`]).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use revm::bytecode::opcode::{ADDRESS, EQ, PUSH20};
use serde_json::value::RawValue;
use serde_json::Value;

use super::{build_json, decode_code, strip_metadata, Artifact, Parts, Pending, Ranges, Rest};
use crate::names::sources;
use crate::names::NamesError;
use crate::render::abi::{Abi, LazyAbi};

/// Runtime code of an artifact object: Foundry `deployedBytecode.object` with
/// `immutableReferences`, Hardhat `deployedBytecode` (a string), solc's `bin-runtime`; a
/// top-level `immutableReferences` beside a string is used too.
fn runtime_code(v: &Value) -> (Option<Vec<u8>>, Option<Ranges>) {
    // Standard-JSON output keeps the code under `evm`.
    let v = v.get("evm").unwrap_or(v);
    let (text, immutables) = match v.get("deployedBytecode").or_else(|| v.get("bin-runtime")) {
        // Combined outputs keep the references beside the code.
        Some(Value::String(s)) => (s.as_str(), v.get("immutableReferences")),
        Some(Value::Object(o)) => (
            o.get("object").and_then(Value::as_str).unwrap_or_default(),
            o.get("immutableReferences"),
        ),
        _ => return (None, None),
    };
    let Some((code, mut mask)) = decode_code(text) else {
        return (None, None);
    };
    if code.is_empty() {
        return (None, None);
    }
    let known = immutables.is_some();
    // A library's call protection, `PUSH20 <its own address> ADDRESS EQ`: zeros when compiled,
    // the address once deployed.
    if code.len() > 23
        && code[0] == PUSH20
        && code[1..21].iter().all(|b| *b == 0)
        && code[21..23] == [ADDRESS, EQ]
    {
        mask.push((1, 20));
    }
    for refs in immutables
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|o| o.values())
        .filter_map(Value::as_array)
        .flatten()
    {
        let start = refs.get("start").and_then(Value::as_u64);
        let len = refs.get("length").and_then(Value::as_u64);
        if let (Some(s), Some(l)) = (start, len) {
            mask.push((s as usize, l as usize));
        }
    }
    let stripped = strip_metadata(&code).to_vec();
    let mut code = stripped;
    for (s, l) in &mask {
        if let Some(r) = code.get_mut(*s..s + l) {
            r.fill(0);
        }
    }
    // Without immutable references (Hardhat) any zero byte may be an immutable's placeholder.
    (Some(code), known.then_some(mask))
}

/// The source maps of an artifact object (Foundry's and standard JSON's `bytecode.sourceMap` /
/// `deployedBytecode.sourceMap`, combined JSON's `srcmap` / `srcmap-runtime`) and its creation
/// code.
fn pending_sources(v: &Value, metadata: Option<Arc<sources::Metadata>>) -> Pending {
    let outer = v;
    let v = v.get("evm").unwrap_or(v);
    let map = |key: &str, flat: &str| {
        v.get(key)
            .and_then(|b| b.get("sourceMap"))
            .or_else(|| v.get(flat))
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
            .map(str::to_string)
    };
    let creation_text = match v.get("bytecode").or_else(|| v.get("bin")) {
        Some(Value::String(s)) => Some(s.as_str()),
        Some(Value::Object(o)) => o.get("object").and_then(Value::as_str),
        _ => None,
    };
    let creation = creation_text
        .and_then(decode_code)
        .filter(|(c, _)| !c.is_empty())
        .map(|(code, mut mask)| {
            // The runtime code inside ends the creation code: its metadata may differ from a
            // rebuild's.
            let meta = code.len() - strip_metadata(&code).len();
            if meta > 0 {
                mask.push((code.len() - meta, meta));
            }
            (code, mask)
        });
    Pending {
        runtime_map: map("deployedBytecode", "srcmap-runtime"),
        creation,
        creation_map: map("bytecode", "srcmap"),
        source_id: outer.get("id").and_then(Value::as_i64),
        source_path: outer
            .pointer("/metadata/settings/compilationTarget")
            .and_then(Value::as_object)
            .and_then(|o| o.keys().next().cloned())
            .or_else(|| metadata.as_deref()?.target().map(str::to_string))
            .or_else(|| {
                outer
                    .pointer("/ast/absolutePath")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            }),
        source_hashes: metadata
            .as_deref()
            .map(|m| m.source_hashes().clone())
            .unwrap_or_default(),
        metadata,
        ast: None,
    }
}

/// solc's metadata of an artifact object (a JSON string in solc's outputs, an object in
/// Foundry's), read once.
fn parse_metadata(v: &Value) -> Option<Arc<sources::Metadata>> {
    // Foundry's `rawMetadata` is the text solc wrote: read lazily, hashed as written.
    v.get("rawMetadata")
        .filter(|m| m.is_string())
        .or_else(|| v.get("metadata"))
        .and_then(sources::Metadata::of)
        .map(Arc::new)
}

pub(super) fn artifact(name: &str, v: &Value) -> Result<Artifact, NamesError> {
    artifact_with_metadata(name, v, parse_metadata(v), None)
}

/// [`artifact`] with its metadata read already ([`parse_metadata`]), and its ABI where it was
/// kept as text (the value's `abi` is then `null`): read when first used.
fn artifact_with_metadata(
    name: &str,
    v: &Value,
    metadata: Option<Arc<sources::Metadata>>,
    abi_text: Option<Box<RawValue>>,
) -> Result<Artifact, NamesError> {
    let abi = match abi_text {
        Some(text) => LazyAbi::json(text),
        None => LazyAbi::read(
            Abi::from_value(v).map_err(|e| NamesError::Abi(name.to_string(), e.to_string()))?,
        ),
    };
    let (code, mask) = runtime_code(v);
    let pending = pending_sources(v, metadata);
    Ok(Artifact {
        name: name.to_string(),
        abi,
        code,
        mask,
        rest: Rest::Read(Parts {
            storage_layout: v.get("storageLayout").filter(|s| s.is_object()).cloned(),
            transient_layout: v
                .get("transientStorageLayout")
                .filter(|s| s.is_object())
                .cloned(),
            sources: None,
            declared: Default::default(),
        }),
        // Kept without maps too when the artifact carries its file's AST (an abstract contract,
        // an interface, a library's file): the tree gives it to the file's compilation.
        pending: (pending.has_maps() || v.get("ast").is_some()).then_some(pending),
    })
}

/// The artifacts of a standard-JSON output (`contracts: {file: {name: {abi, evm}}}`), their
/// source maps pointing into the output's `sources`; texts from `input_sources` when given (a
/// build info), else from disk around `file` — or, for a remote answer (`file` `None`), only
/// from `input_sources`.
pub(super) fn standard_json(
    file: Option<&Path>,
    output: &Value,
    input_sources: Option<&Value>,
    asts: Option<&mut build_json::Asts>,
) -> Result<Vec<Artifact>, NamesError> {
    let shown = file.map_or_else(
        || "a remote answer".to_string(),
        |f| f.display().to_string(),
    );
    let roots = file.map(sources::roots_for);
    let mut hashes = sources::SourceHashes::default();
    // Each contract's metadata, read once: for the hashes here and its artifact below.
    let mut metadata = std::collections::HashMap::new();
    for per_file in output
        .get("contracts")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        for c in per_file.1.as_object().into_iter().flatten() {
            let parsed = parse_metadata(c.1);
            if let Some(m) = parsed.as_deref() {
                hashes.extend(m.source_hashes().iter().map(|(k, v)| (k.clone(), *v)));
            }
            metadata.insert((per_file.0.as_str(), c.0.as_str()), parsed);
        }
    }
    let unit = Arc::new(sources::unit_from_standard_json(
        output,
        input_sources,
        roots.as_deref(),
        &hashes,
        asts,
    ));
    let mut out = Vec::new();
    let contracts = output.get("contracts").and_then(Value::as_object);
    for (file, per_file) in contracts.into_iter().flatten() {
        for (name, c) in per_file.as_object().into_iter().flatten() {
            if c.get("abi").is_none() {
                continue;
            }
            let parsed = metadata.remove(&(file.as_str(), name.as_str())).flatten();
            let mut a = artifact_with_metadata(name, c, parsed, None)
                .map_err(|e| NamesError::Abi(shown.clone(), e.to_string()))?;
            if let Some(p) = a.pending.take() {
                a.set_sources(p.into_sources(unit.clone()));
            }
            out.push(a);
        }
    }
    Ok(out)
}

/// Whether `contracts` is standard-JSON output's (file → name → contract) rather than combined
/// JSON's (`file:name` → contract).
fn is_standard_json(contracts: &serde_json::Map<String, Value>) -> bool {
    contracts.values().any(|per_file| {
        per_file.as_object().is_some_and(|o| {
            o.values()
                .any(|c| c.get("abi").is_some() || c.get("evm").is_some())
        })
    })
}

pub(super) fn read_json(path: &Path) -> Result<Value, NamesError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| NamesError::Read(shown.clone(), e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| NamesError::Abi(shown, format!("invalid JSON: {e}")))
}

/// A JSON file as [`read_build`] reads it.
pub(super) struct Build {
    /// The document, without the ASTs read apart (and the top's `abi` where it is kept).
    pub value: Value,
    pub asts: build_json::Asts,
    /// A Foundry artifact's own AST kept as text ([`split_own_ast`]).
    pub own_ast: Option<sources::RawAst>,
    /// The top's `abi`, an array, kept as text where `abi_text` was asked for
    /// ([`build_json::parse`]).
    pub abi: Option<Box<RawValue>>,
}

/// A build's JSON with the ASTs under its `sources` read apart ([`build_json`]); and a Foundry
/// artifact's own AST, where it is the last member but `id` as forge writes it, left in the
/// file until its declarations are needed ([`split_own_ast`], [`sources::RawAst::in_file`]).
/// With `abi_text`, the top's `abi` kept as text.
///
/// The file is read into this thread's buffer, used again for the next file (up to
/// [`KEEP_BUFFER`]): a tree's artifacts are megabytes, most of them ASTs, and reading them
/// into fresh memory cost as much again in page faults as the copy itself (issue 44).
pub(super) fn read_build(path: &Path, abi_text: bool) -> Result<Build, NamesError> {
    thread_local! {
        static BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
    }
    BUFFER.with(|cell| {
        let mut buffer = cell.take();
        buffer.clear();
        let read = read_build_into(path, abi_text, &mut buffer);
        if buffer.capacity() <= KEEP_BUFFER {
            buffer.clear();
            cell.set(buffer);
        }
        read
    })
}

/// The largest buffer a reading thread keeps for its next file: a forge artifact's size (the
/// largest of the forge project's 42 is 397 KiB). A tree's reading threads end with its
/// reading; a thread that goes on (the main thread, a `serve` worker reading a build info)
/// keeps at most this.
const KEEP_BUFFER: usize = 1 << 20;

fn read_build_into(path: &Path, abi_text: bool, bytes: &mut Vec<u8>) -> Result<Build, NamesError> {
    use std::io::Read;
    let shown = path.display().to_string();
    let failed = |e: std::io::Error| NamesError::Read(shown.clone(), e.to_string());
    let mut file = std::fs::File::open(path).map_err(failed)?;
    let mtime = file.metadata().ok().and_then(|m| m.modified().ok());
    file.read_to_end(bytes).map_err(failed)?;
    if let Some((value, asts, abi, start, end)) = split_own_ast(bytes, abi_text) {
        let own_ast = sources::RawAst::in_file(path, bytes, mtime, start, end);
        return Ok(Build {
            value,
            asts,
            own_ast,
            abi,
        });
    }
    let text = std::str::from_utf8(bytes).map_err(|_| {
        NamesError::Read(shown.clone(), "stream did not contain valid UTF-8".into())
    })?;
    let (value, asts, abi) = build_json::parse(text, abi_text)
        .map_err(|e| NamesError::Abi(shown, format!("invalid JSON: {e}")))?;
    Ok(Build {
        value,
        asts,
        own_ast: None,
        abi,
    })
}

/// A Foundry artifact (`{"abi": …, …, "ast": {"absolutePath": …}, "id": N}`, compact: forge
/// writes its artifact struct's fields in declaration order, `ast` and `id` the last two —
/// foundry-compilers' `ConfigurableContractArtifact`) read without its AST, which is most of
/// its bytes and is read only when its declarations are needed ([`sources::RawAst`]):
/// everything before `,"ast":{"absolutePath":"` is read as the document (it must be a whole
/// object there, so that member is the top level's), the `id` from the end; the AST is
/// `[start, end)`. `None` where the text is not laid out so: it is then read whole. The AST
/// itself is checked only when read; one that is not solc's compact JSON then counts as none,
/// as it does when read with the artifact.
#[allow(clippy::type_complexity)]
fn split_own_ast(
    text: &[u8],
    abi_text: bool,
) -> Option<(Value, build_json::Asts, Option<Box<RawValue>>, usize, usize)> {
    const AST: &[u8] = b",\"ast\":{\"absolutePath\":";
    let at = memchr::memmem::find(text, AST)?;
    // The end: `,"id":N}` and nothing but white space after it.
    let body = text.trim_ascii_end();
    let inner = body.strip_suffix(b"}")?;
    let digits = inner
        .iter()
        .rev()
        .take_while(|c| c.is_ascii_digit())
        .count();
    let before_id = inner[..inner.len() - digits].strip_suffix(b",\"id\":")?;
    let id: i64 = std::str::from_utf8(&inner[inner.len() - digits..])
        .ok()?
        .parse()
        .ok()?;
    let (ast_start, ast_end) = (
        at + AST.len() - b"{\"absolutePath\":".len(),
        before_id.len(),
    );
    // The AST, an object, ends right before `,"id"`.
    if ast_end <= ast_start || !before_id.ends_with(b"}") {
        return None;
    }
    let path: String = {
        let from = at + AST.len();
        let mut de = serde_json::Deserializer::from_slice(&text[from..ast_end]);
        serde::Deserialize::deserialize(&mut de).ok()?
    };
    let mut head = String::with_capacity(at + 1);
    head.push_str(std::str::from_utf8(&text[..at]).ok()?);
    head.push('}');
    let (mut v, asts, abi) = build_json::parse(&head, abi_text).ok()?;
    let obj = v.as_object_mut()?;
    if obj.contains_key("ast") || obj.contains_key("id") {
        return None;
    }
    obj.insert("ast".into(), build_json::own_ast_left(path));
    obj.insert("id".into(), Value::from(id));
    Some((v, asts, abi, ast_start, ast_end))
}

/// The artifacts of one JSON file: a bare ABI, an artifact with `abi`, or a combined JSON
/// (`{"contracts": {name: artifact}}`); an ABI that does not read is an error.
pub fn load_file(path: &Path) -> Result<Vec<Artifact>, NamesError> {
    let found = load_file_lazily(path)?;
    for a in &found {
        a.abi
            .check()
            .map_err(|e| NamesError::Abi(path.display().to_string(), e.to_string()))?;
    }
    Ok(found)
}

/// [`load_file`], an artifact's ABI kept as text and read when first used (one of a tree's:
/// most are never used); one that does not read is then empty.
pub(super) fn load_file_lazily(path: &Path) -> Result<Vec<Artifact>, NamesError> {
    let shown = path.display().to_string();
    let Build {
        value: v,
        mut asts,
        own_ast,
        abi,
    } = read_build(path, true)?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_string();
    if let (Some(output), None) = (v.get("output"), v.get("abi")) {
        // A build info: the compiler's input and output together.
        if output.get("contracts").is_some() {
            let input = v.pointer("/input/sources");
            return standard_json(Some(path), output, input, Some(&mut asts));
        }
    }
    if let Some(contracts) = v.get("contracts").and_then(Value::as_object) {
        if v.get("abi").is_none() && is_standard_json(contracts) {
            return standard_json(Some(path), &v, None, Some(&mut asts));
        }
        if v.get("abi").is_none() {
            // solc --combined-json: `sourceList` gives the source ids, in order.
            let list: Vec<(i32, String)> = v
                .get("sourceList")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
                .filter_map(|(i, p)| Some((i as i32, p.as_str()?.to_string())))
                .collect();
            let unit = Arc::new(sources::unit_from_paths(
                &list,
                &sources::roots_for(path),
                &sources::SourceHashes::default(),
                HashMap::new(),
            ));
            return contracts
                .iter()
                .map(|(name, a)| {
                    let short = name.rsplit(':').next().unwrap_or(name);
                    let mut art = artifact(short, a)
                        .map_err(|e| NamesError::Abi(shown.clone(), e.to_string()))?;
                    if let Some(p) = art.pending.take().filter(|_| !list.is_empty()) {
                        art.set_sources(p.into_sources(unit.clone()));
                    }
                    Ok(art)
                })
                .collect();
        }
    }
    let metadata = parse_metadata(&v);
    // An ABI that does not read: the file named, with why (read once).
    let mut art = artifact_with_metadata(&stem, &v, metadata, abi).map_err(|e| match e {
        NamesError::Abi(_, why) => NamesError::Abi(shown, why),
        other => other,
    })?;
    if let (Some(p), Some(path)) = (
        art.pending.as_mut(),
        v.pointer("/ast/absolutePath").and_then(Value::as_str),
    ) {
        p.ast = match own_ast {
            Some(raw) => Some(sources::GivenAst::Text(raw)),
            None => asts.remove(path).flatten().map(sources::GivenAst::Read),
        };
    }
    Ok(vec![art])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_foundry_artifacts_own_ast_is_kept_as_text_and_reads_as_when_read_with_it() {
        let ast = r#"{"absolutePath":"src/V.sol","id":9,"nodeType":"SourceUnit","nodes":[{"id":8,"nodeType":"ContractDefinition","name":"V","linearizedBaseContracts":[8],"nodes":[{"id":3,"nodeType":"EnumDefinition","name":"Kind","canonicalName":"V.Kind","members":[{"id":1,"name":"A","nodeType":"EnumValue"},{"id":2,"name":"B","nodeType":"EnumValue"}],"src":"20:16:0"}],"src":"0:60:0"}],"src":"0:60:0"}"#;
        let text = format!(
            r#"{{"abi":[],"rawMetadata":"{{\"x\":1}}","storageLayout":{{"storage":[],"types":{{}}}},"ast":{ast},"id":4}}"#
        );
        let (v, asts, abi, start, end) = split_own_ast(text.as_bytes(), false).unwrap();
        let (whole, mut eager, _) = build_json::parse(&text, false).unwrap();
        assert_eq!(v, whole);
        assert!(abi.is_none());
        // With the ABI kept as text: `null` in the document, the text apart.
        let (lazy, _, abi, ..) = split_own_ast(text.as_bytes(), true).unwrap();
        assert_eq!(abi.unwrap().get(), "[]");
        let mut without = whole.clone();
        without["abi"] = Value::Null;
        assert_eq!(lazy, without);
        assert!(asts.is_empty());
        assert_eq!(&text[start..end], ast);
        let dir = std::env::temp_dir().join(format!("chaintrace-own-ast-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("V.json");
        std::fs::write(&path, &text).unwrap();
        let mtime = std::fs::metadata(&path).unwrap().modified().ok();
        let raw = sources::RawAst::in_file(&path, text.as_bytes(), mtime, start, end).unwrap();
        let read = eager.remove("src/V.sol").flatten().unwrap();
        assert_eq!(format!("{:?}", raw.decls().unwrap()), format!("{read:?}"));
        assert!(raw.contains("\"canonicalName\":\"V.Kind\"") && !raw.contains("erc7201"));
        assert!(!raw.mentions_namespace());
        let _ = std::fs::remove_dir_all(&dir);
        // Laid out otherwise: read whole.
        for other in [
            format!(r#"{{"abi":[],"ast":{ast},"id":4,"x":1}}"#),
            format!(r#"{{"abi":[],"ast":{ast},"x":1,"id":4}}"#),
            format!(r#"{{"abi":[],"x":{{"ast":{ast},"id":4}}}}"#),
            format!(r#"{{"abi": [], "ast": {ast}, "id": 4}}"#),
        ] {
            assert!(split_own_ast(other.as_bytes(), false).is_none(), "{other}");
        }
    }

    #[test]
    fn a_foundry_artifacts_own_ast_is_left_in_its_file_and_read_only_while_the_file_holds_it() {
        let ast = r#"{"absolutePath":"src/V.sol","id":9,"nodeType":"SourceUnit","nodes":[{"id":8,"nodeType":"ContractDefinition","name":"V","linearizedBaseContracts":[8],"nodes":[{"id":3,"nodeType":"StructDefinition","name":"S","canonicalName":"V.S","members":[],"documentation":{"id":2,"nodeType":"StructuredDocumentation","src":"0:9:0","text":"@custom:storage-location erc7201:v.main"},"src":"20:16:0","visibility":"public"}],"src":"0:60:0"}],"src":"0:60:0"}"#;
        let text = format!(r#"{{"abi":[],"ast":{ast},"id":4}}"#);
        let dir =
            std::env::temp_dir().join(format!("chaintrace-ast-in-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("V.json");
        std::fs::write(&path, &text).unwrap();
        let read = |p: &Path| read_build(p, true).unwrap().own_ast.unwrap();
        let raw = read(&path);
        let (_, mut eager, _) = build_json::parse(&text, false).unwrap();
        let want = format!("{:?}", eager.remove("src/V.sol").flatten().unwrap());
        assert!(raw.mentions_namespace() && raw.contains("\"name\":\"V\""));
        assert_eq!(format!("{:?}", raw.decls().unwrap()), want);
        // Rewritten since it was read (here the same length and mtime, another `id` after the
        // AST): its AST is not read, so nothing is named from another file's.
        let raw = read(&path);
        let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
        std::fs::write(&path, text.replace(r#""id":4}"#, r#""id":5}"#)).unwrap();
        let f = std::fs::File::options().write(true).open(&path).unwrap();
        f.set_modified(mtime).unwrap();
        assert!(raw.decls().is_none() && !raw.contains("\"name\":\"V\""));
        // What was looked for while it was read still holds.
        assert!(raw.mentions_namespace());
        // Grown or shrunk: the same.
        let raw = read(&path);
        std::fs::write(&path, format!("{text} ")).unwrap();
        assert!(raw.decls().is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn library_call_protection_is_the_deployed_address() {
        let compiled = format!("0x73{}30146080", "00".repeat(20));
        let v = serde_json::json!({"abi": [], "deployedBytecode": {"object": compiled,
            "immutableReferences": {}}});
        let a = artifact("L", &v).unwrap();
        let mut deployed = vec![0x73];
        deployed.extend([0xab; 20]);
        deployed.extend([0x30, 0x14, 0x60, 0x80]);
        assert!(a.matches(&deployed));
        deployed[22] = 0x15;
        assert!(!a.matches(&deployed));
    }

    #[test]
    fn matches_ignoring_immutables() {
        let v = serde_json::json!({"abi": [], "deployedBytecode": {"object": "0x6000600000",
            "immutableReferences": {"7": [{"start": 1, "length": 1}]}}});
        let a = artifact("A", &v).unwrap();
        assert!(a.matches(&[0x60, 0x42, 0x60, 0x00, 0x00]));
        assert!(!a.matches(&[0x60, 0x00, 0x60, 0x01, 0x00]));
        assert!(!a.matches(&[0x60, 0x00, 0x60, 0x00]));
        let hardhat = serde_json::json!({"abi": [], "deployedBytecode": "0x6000600000"});
        let h = artifact("H", &hardhat).unwrap();
        assert!(h.matches(&[0x60, 0x42, 0x60, 0x07, 0x00]));
        assert!(!h.matches(&[0x61, 0x00, 0x60, 0x00, 0x00]));
    }
}
