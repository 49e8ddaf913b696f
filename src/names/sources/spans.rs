//! Functions and modifiers of a source file, with their byte spans and contracts: from solc's
//! AST when the build has one, else from a scan of the source text.

/// A function (or modifier) in a source file: its byte span and names.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FnSpan {
    pub start: usize,
    pub end: usize,
    pub contract: String,
    pub name: String,
    /// A modifier: its code is inlined into the functions it modifies.
    pub modifier: bool,
    /// Its parameter types (`address,uint256`), from the AST; `None` from a text scan.
    pub params: Option<String>,
    /// Its parameters (name, solc's type string: `uint256`, `bytes calldata`, `struct S
    /// memory`), from the AST; empty from a text scan.
    pub inputs: Vec<(String, String)>,
}

impl FnSpan {
    /// Its selector, where its parameter types are known.
    pub fn selector(&self) -> Option<[u8; 4]> {
        let sig = format!("{}({})", self.name, self.params.as_ref()?);
        alloy_primitives::keccak256(sig.as_bytes())[..4]
            .try_into()
            .ok()
    }
}

/// The ABI type of a solc type string: data location dropped, a contract is an address, an
/// enum a uint8 (what a selector is computed from).
pub(super) fn abi_type(type_string: &str) -> String {
    let t = type_string
        .trim_end_matches(" calldata")
        .trim_end_matches(" memory")
        .trim_end_matches(" storage ref")
        .trim_end_matches(" storage pointer");
    if t.starts_with("contract ") || t == "address payable" {
        "address".to_string()
    } else if t.starts_with("enum ") {
        "uint8".to_string()
    } else {
        t.to_string()
    }
}

/// Functions and modifiers of Solidity source text, when no AST is at hand: declarations
/// (`function f`, `modifier m`, `constructor`, `fallback`, `receive`) and the braces of their
/// bodies, inside `contract`/`library`/`interface` bodies; comments and strings skipped.
pub fn scan_functions(text: &str) -> Vec<FnSpan> {
    #[derive(Clone)]
    enum Open {
        Container(String),
        Function(String, usize, bool),
        Block,
    }
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    let mut pending: Option<Open> = None;
    let mut want_name: Option<(&str, usize)> = None;
    // The parameters of each declaration, by its start: read at its first `(`.
    let mut inputs_at: std::collections::HashMap<usize, Vec<(String, String)>> =
        std::collections::HashMap::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
            i = text[i..].find('\n').map_or(bytes.len(), |n| i + n);
            continue;
        }
        if c == b'/' && bytes.get(i + 1) == Some(&b'*') {
            i = text[i + 2..]
                .find("*/")
                .map_or(bytes.len(), |n| i + 2 + n + 2);
            continue;
        }
        if c == b'"' || c == b'\'' {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != c {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            i = j + 1;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' || c == b'$' {
            let start = i;
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'$')
            {
                i += 1;
            }
            let word = &text[start..i];
            if let Some((kw, at)) = want_name.take() {
                pending = Some(if kw == "function" || kw == "modifier" {
                    Open::Function(word.to_string(), at, kw == "modifier")
                } else {
                    Open::Container(word.to_string())
                });
                continue;
            }
            match word {
                "contract" | "library" | "interface" | "function" | "modifier" => {
                    want_name = Some((word, start))
                }
                "constructor" | "fallback" | "receive" => {
                    pending = Some(Open::Function(word.to_string(), start, false))
                }
                _ => {}
            }
            continue;
        }
        if !c.is_ascii_whitespace() {
            want_name = None;
        }
        match c {
            b'(' => {
                if let Some(Open::Function(_, start, _)) = &pending {
                    if !inputs_at.contains_key(start) {
                        inputs_at.insert(*start, parameters(text, i));
                    }
                }
            }
            b'{' => stack.push(pending.take().unwrap_or(Open::Block)),
            b';' => {
                if matches!(pending, Some(Open::Function(..))) {
                    pending = None;
                }
            }
            b'}' => {
                if let Some(Open::Function(name, start, modifier)) = stack.pop() {
                    let contract = stack
                        .iter()
                        .rev()
                        .find_map(|o| match o {
                            Open::Container(n) => Some(n.clone()),
                            _ => None,
                        })
                        .unwrap_or_default();
                    let inputs = inputs_at.remove(&start).unwrap_or_default();
                    // Selector types only where every type is one the text names for certain.
                    let params = inputs
                        .iter()
                        .map(|(_, t)| {
                            alloy_dyn_abi::DynSolType::parse(&abi_type(t))
                                .ok()
                                .map(|t| t.sol_type_name().into_owned())
                        })
                        .collect::<Option<Vec<_>>>()
                        .map(|v| v.join(","));
                    out.push(FnSpan {
                        start,
                        end: i + 1,
                        contract,
                        name,
                        modifier,
                        params,
                        inputs,
                    });
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The parameters of the list opening at byte `open` (a `(`) of `text`: (name, type as solc's
/// type strings write it — `uint256`, `bytes calldata`, `address payable`), split at the
/// list's own commas. A type the text cannot name for certain (a struct, a contract, a
/// user-defined value type) stays as written; its value is then not read.
fn parameters(text: &str, open: usize) -> Vec<(String, String)> {
    let mut depth = 0usize;
    let mut end = None;
    for (k, b) in text.as_bytes().iter().enumerate().skip(open) {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    end = Some(k);
                    break;
                }
            }
            _ => {}
        }
    }
    let Some(end) = end else {
        return Vec::new();
    };
    let list = &text[open + 1..end];
    let mut parts = Vec::new();
    let (mut depth, mut from) = (0i32, 0);
    for (k, c) in list.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&list[from..k]);
                from = k + 1;
            }
            _ => {}
        }
    }
    parts.push(&list[from..]);
    parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            let words: Vec<&str> = p.split_whitespace().collect();
            let location = words
                .iter()
                .find(|w| matches!(**w, "memory" | "calldata" | "storage"))
                .copied();
            let mut kept: Vec<&str> = words
                .iter()
                .copied()
                .filter(|w| !matches!(*w, "memory" | "calldata" | "storage" | "indexed"))
                .collect();
            // The last word is the name unless the type is all there is (`payable` ends a type).
            let name = match kept.as_slice() {
                [_, .., last] if *last != "payable" => kept.pop().unwrap_or_default(),
                _ => "",
            };
            let mut ty = kept.join(" ");
            match location {
                Some("storage") => ty.push_str(" storage ref"),
                Some(loc) => {
                    ty.push(' ');
                    ty.push_str(loc);
                }
                None => {}
            }
            (name.to_string(), ty)
        })
        .collect()
}
