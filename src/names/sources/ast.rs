//! solc's compact AST, read for its declarations only: functions and modifiers (with their
//! spans and parameters), enums, structs, user-defined value types, and contracts with their
//! state variables. Those sit in a source unit's `nodes`
//! and a contract's `nodes`; everything below them (function bodies, expressions, Yul) is most
//! of an AST's bytes and is skipped by serde without being built, so a build's ASTs cost a scan
//! rather than a tree of maps (issue 44: they were 207 KiB of a 291 KiB build output, parsed
//! into `serde_json::Value`s and walked whole three times).
//!
//! An AST that does not have this shape (not solc's compact JSON, or a field of another type)
//! gives no declarations at all: the file is then read as one without an AST (functions from a
//! scan of its text, enums by number, no namespaces), never half-read.

use serde::Deserialize;
use serde_json::Value;

use super::spans::{abi_type, FnSpan};
use crate::names::ast_layout::{AstContract, AstMember, AstStorage, AstStruct};
use crate::names::namespaces::erc7201;

/// What the names read from one source file's AST.
#[derive(Clone, Debug, Default)]
pub struct AstDecls {
    /// Functions and modifiers, with their contract, in declaration order.
    pub functions: Vec<FnSpan>,
    /// Each enum's `canonicalName` (`Vault.Kind`) and its members' names in order.
    pub enums: Vec<(String, Vec<String>)>,
    /// Structs (ERC-7201 namespaces among them), contracts and enums' widths.
    pub storage: AstStorage,
    /// The source unit's `absolutePath`: the path the build names the file by.
    pub path: Option<String>,
}

/// One declaration-level node; the fields of every other kind are ignored.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Node {
    #[serde(default)]
    node_type: String,
    id: Option<i64>,
    #[serde(default)]
    name: String,
    src: Option<String>,
    kind: Option<String>,
    canonical_name: Option<String>,
    /// A source unit's.
    absolute_path: Option<String>,
    scope: Option<i64>,
    documentation: Option<Value>,
    linearized_base_contracts: Option<Vec<i64>>,
    #[serde(default)]
    nodes: Vec<Node>,
    members: Option<Vec<Member>>,
    parameters: Option<ParameterList>,
    /// A state variable's: `constant`, `immutable`, `mutable` (solc 0.6.5 and later).
    mutability: Option<String>,
    /// A state variable's, before `mutability`.
    constant: Option<bool>,
    /// `transient` for a transient state variable (solc 0.8.27 and later).
    storage_location: Option<String>,
    /// A state variable's type.
    type_name: Option<Value>,
    /// A user-defined value type's underlying type.
    underlying_type: Option<Value>,
}

/// A struct's member (a variable declaration) or an enum's value.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Member {
    id: Option<i64>,
    name: Option<String>,
    type_name: Option<Value>,
}

#[derive(Deserialize)]
struct ParameterList {
    #[serde(default)]
    parameters: Vec<Parameter>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Parameter {
    #[serde(default)]
    name: String,
    type_descriptions: Option<TypeDescriptions>,
    storage_location: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TypeDescriptions {
    type_string: Option<String>,
}

/// A Foundry artifact's own AST, which is most of the artifact's bytes, left in its file until
/// its declarations are first needed (issue 44: a run reads the ASTs of the few contracts it
/// touched, not the project's), and read from there once ([`RawAst::in_file`]). Clones share
/// one reading.
#[derive(Clone)]
pub struct RawAst(std::sync::Arc<Raw>);

struct Raw {
    at: InFile,
    /// Its text, read once when first needed; `None` when the file no longer holds it.
    text: std::sync::OnceLock<Option<String>>,
    /// Whether it mentions an ERC-7201 namespace's annotation, looked for while the file was
    /// in memory.
    namespaced: bool,
}

/// Where an AST left in its file is: `[start, end)` of the file as it was read — its length
/// and mtime, and what followed the AST to the end (the artifact's `,"id":N}`).
struct InFile {
    path: std::path::PathBuf,
    start: u64,
    end: u64,
    len: u64,
    mtime: Option<std::time::SystemTime>,
    after: Box<[u8]>,
}

impl InFile {
    /// The AST's text, when the file is still as it was read (its length, mtime and what
    /// follows the AST, and an object where the AST was): else `None`, and names from it go
    /// missing rather than wrong.
    fn read(&self) -> Option<String> {
        use std::io::{Read, Seek};
        let mut f = std::fs::File::open(&self.path).ok()?;
        let m = f.metadata().ok()?;
        if m.len() != self.len || m.modified().ok() != self.mtime {
            return None;
        }
        f.seek(std::io::SeekFrom::Start(self.start)).ok()?;
        let mut bytes = vec![0; usize::try_from(self.len - self.start).ok()?];
        f.read_exact(&mut bytes).ok()?;
        let ast_len = usize::try_from(self.end - self.start).ok()?;
        if bytes[ast_len..] != *self.after || bytes.first() != Some(&b'{') {
            return None;
        }
        bytes.truncate(ast_len);
        String::from_utf8(bytes).ok()
    }
}

impl std::fmt::Debug for RawAst {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let at = &self.0.at;
        write!(f, "RawAst({} bytes in its file)", at.end - at.start)
    }
}

/// The annotation of an ERC-7201 namespace as solc's AST carries it.
const NAMESPACE_ANNOTATION: &[u8] = b"@custom:storage-location";

impl RawAst {
    /// The AST at `[start, end)` of the file `path` as read — `whole`, its bytes, its length
    /// and `mtime` — left there and read again when first needed. Whether it mentions a
    /// namespace is looked for now, in `whole`.
    pub fn in_file(
        path: &std::path::Path,
        whole: &[u8],
        mtime: Option<std::time::SystemTime>,
        start: usize,
        end: usize,
    ) -> Option<RawAst> {
        let ast = whole.get(start..end)?;
        let at = InFile {
            path: path.to_path_buf(),
            start: start as u64,
            end: end as u64,
            len: whole.len() as u64,
            mtime,
            after: whole[end..].into(),
        };
        Some(RawAst(std::sync::Arc::new(Raw {
            at,
            text: std::sync::OnceLock::new(),
            namespaced: memchr::memmem::find(ast, NAMESPACE_ANNOTATION).is_some(),
        })))
    }

    /// Its text; `None` when its file no longer holds it.
    fn text(&self) -> Option<&str> {
        self.0.text.get_or_init(|| self.0.at.read()).as_deref()
    }

    /// Whether its text holds `needle` (no, when its text cannot be read).
    pub fn contains(&self, needle: &str) -> bool {
        self.text()
            .is_some_and(|t| memchr::memmem::find(t.as_bytes(), needle.as_bytes()).is_some())
    }

    /// Whether it mentions an ERC-7201 namespace's annotation (known without reading it).
    pub fn mentions_namespace(&self) -> bool {
        self.0.namespaced
    }

    /// Its declarations; `None` when it is not solc's compact AST, or not JSON, or cannot be
    /// read.
    pub fn decls(&self) -> Option<AstDecls> {
        AstDecls::from_json(self.text()?)
    }
}

impl AstDecls {
    /// From an AST's JSON text; `None` when it is not solc's compact AST.
    pub fn from_json(text: &str) -> Option<AstDecls> {
        serde_json::from_str::<Node>(text).ok().map(Self::of)
    }

    /// From an AST being read: the members it needs built, the rest skipped. An error when it
    /// is not solc's compact AST (the reader then reads it again as text, [`Self::from_json`]).
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<AstDecls, D::Error> {
        Node::deserialize(d).map(Self::of)
    }

    /// From an AST already parsed (a build read whole, a remote answer).
    pub fn from_value(ast: &Value) -> Option<AstDecls> {
        Node::deserialize(ast).ok().map(Self::of)
    }

    fn of(mut root: Node) -> AstDecls {
        let mut out = AstDecls {
            path: root.absolute_path.take(),
            ..AstDecls::default()
        };
        out.walk(root, "");
        out
    }

    fn walk(&mut self, mut node: Node, contract: &str) {
        let mut inner = contract;
        match node.node_type.as_str() {
            "ContractDefinition" => {
                inner = &node.name;
                if let Some(id) = node.id {
                    // Its state variables in declaration order; constants and immutables
                    // take no slot.
                    let vars = node
                        .nodes
                        .iter_mut()
                        .filter(|n| n.node_type == "VariableDeclaration")
                        .filter(|n| {
                            n.constant != Some(true)
                                && !matches!(
                                    n.mutability.as_deref(),
                                    Some("constant" | "immutable")
                                )
                        })
                        .filter_map(|n| {
                            Some(AstMember {
                                id: n.id?,
                                name: n.name.clone(),
                                // Taken: nothing below reads a declaration's type again.
                                type_name: n.type_name.take()?,
                                transient: n.storage_location.as_deref() == Some("transient"),
                            })
                        })
                        .collect();
                    self.storage.contracts.push(AstContract {
                        id,
                        name: node.name.clone(),
                        bases: node.linearized_base_contracts.clone().unwrap_or_default(),
                        vars,
                    });
                }
            }
            "FunctionDefinition" | "ModifierDefinition" => {
                if let Some(f) = function(&node, contract) {
                    self.functions.push(f);
                }
            }
            "EnumDefinition" => {
                let members = node.members.as_deref().unwrap_or_default();
                if let Some(id) = node.id {
                    self.storage.enums.push((id, members.len()));
                }
                let names: Option<Vec<String>> = node
                    .members
                    .as_ref()
                    .and_then(|ms| ms.iter().map(|m| m.name.clone()).collect());
                if let (Some(name), Some(names)) = (node.canonical_name.clone(), names) {
                    self.enums.push((name, names));
                }
                return;
            }
            "StructDefinition" => {
                if let Some(id) = node.id {
                    let canonical = node
                        .canonical_name
                        .clone()
                        .unwrap_or_else(|| node.name.clone());
                    let members = node
                        .members
                        .into_iter()
                        .flatten()
                        .filter_map(|m| {
                            Some(AstMember {
                                id: m.id?,
                                name: m.name?,
                                type_name: m.type_name?,
                                transient: false,
                            })
                        })
                        .collect();
                    self.storage.structs.push(AstStruct {
                        id,
                        canonical,
                        name: node.name,
                        scope: node.scope.unwrap_or(-1),
                        namespace: node.documentation.as_ref().and_then(erc7201),
                        members,
                    });
                }
                return;
            }
            "UserDefinedValueTypeDefinition" => {
                if let (Some(id), Some(t)) = (node.id, node.underlying_type) {
                    self.storage.value_types.push((id, t));
                }
                return;
            }
            _ => {}
        }
        if !node.nodes.is_empty() {
            let inner = inner.to_string();
            for child in node.nodes {
                self.walk(child, &inner);
            }
        }
    }
}

/// A function or modifier with a span: its shown name (`constructor`, `fallback` and
/// `receive` by their kind), parameters and their ABI types.
fn function(node: &Node, contract: &str) -> Option<FnSpan> {
    let mut it = node.src.as_deref()?.split(':');
    let start: usize = it.next()?.parse().ok()?;
    let len: usize = it.next()?.parse().ok()?;
    let shown = match node.kind.as_deref() {
        Some(k @ ("constructor" | "fallback" | "receive")) => k,
        _ => &node.name,
    };
    let list = node.parameters.as_ref().map(|p| &p.parameters);
    let inputs: Vec<(String, String)> = list
        .into_iter()
        .flatten()
        .map(|p| {
            let ty = p
                .type_descriptions
                .as_ref()
                .and_then(|t| t.type_string.as_deref())
                .unwrap_or("?");
            // Older solc leaves the data location out of the type string.
            let ty = match p.storage_location.as_deref() {
                Some(loc @ ("calldata" | "memory")) if !ty.ends_with(&format!(" {loc}")) => {
                    format!("{ty} {loc}")
                }
                Some("storage") if !ty.contains(" storage") => format!("{ty} storage ref"),
                _ => ty.to_string(),
            };
            (p.name.clone(), ty)
        })
        .collect();
    // The ABI type of each (`uint256`; a contract is an address), for selectors.
    let params = list.map(|_| {
        inputs
            .iter()
            .map(|(_, t)| abi_type(t))
            .collect::<Vec<_>>()
            .join(",")
    });
    Some(FnSpan {
        start,
        end: start + len,
        contract: contract.to_string(),
        name: shown.to_string(),
        modifier: node.node_type == "ModifierDefinition",
        params,
        inputs,
    })
}
