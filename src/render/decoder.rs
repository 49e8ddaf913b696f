//! [`Decoder`]: calldata, revert data and logs as text for people, from every source of names.
//!
//! Names are looked up in tiers, first match wins:
//! 1. the ABI known for the contract at that address (a matched artifact, a verified ABI);
//! 2. the user's `--abi` files, merged;
//! 3. the bundled signature table plus `--signatures` files, as one tier.
//!
//! Within a tier every candidate with the selector (or topic0) is tried; all that decode are
//! shown, joined by ` | ` (a selector collision, ERC-20 vs ERC-721 `Transfer`). When nothing in
//! any tier decodes, the first candidate's signature is shown bare.

use std::collections::HashMap;
use std::sync::Arc;

use alloy_primitives::{hex, Address, B256, U256};

use super::abi::{Abi, LazyAbi};
use super::revert::{abi_string, panic_reason, ERROR_SELECTOR, PANIC_SELECTOR};
use super::signatures;
use super::source::SourceNotes;
use super::values::{decode_log, decode_params, format_call, Shown};

/// Names calls, reverts and logs with the user's ABIs, per-contract ABIs and signature tables.
#[derive(Clone, Debug, Default)]
pub struct Decoder {
    abi: Option<Arc<LazyAbi>>,
    contracts: HashMap<Address, Arc<Abi>>,
    labels: HashMap<Address, String>,
    signatures: Option<Abi>,
    /// Where the trace failed in the source, when source maps matched.
    sources: Option<Arc<SourceNotes>>,
    /// Contracts being created, by the keccak256 of their init code: the artifact's name, the
    /// length of its creation code (constructor arguments follow) and its ABI.
    creations: HashMap<B256, (String, usize, Arc<Abi>)>,
}

/// One lookup's answer: what decoded, or failing that the first candidate's bare form.
struct Found {
    decoded: Vec<(String, String)>,
    bare: Option<(String, String)>,
}

impl Found {
    /// All decodings joined, else the bare signature.
    fn text(self) -> Option<String> {
        if !self.decoded.is_empty() {
            let texts: Vec<String> = self.decoded.into_iter().map(|(_, t)| t).collect();
            return Some(texts.join(" | "));
        }
        self.bare.map(|(_, t)| t)
    }

    fn name(self) -> Option<String> {
        if !self.decoded.is_empty() {
            let mut names: Vec<String> = self.decoded.into_iter().map(|(n, _)| n).collect();
            names.dedup();
            return Some(names.join("|"));
        }
        self.bare.map(|(n, _)| n)
    }
}

impl Decoder {
    pub fn new(abi: Option<Abi>) -> Self {
        Decoder::new_lazy(abi.map(LazyAbi::read))
    }

    /// [`Decoder::new`] of an ABI read when a lookup first reaches it.
    pub fn new_lazy(abi: Option<LazyAbi>) -> Self {
        Decoder {
            abi: abi.map(Arc::new),
            ..Decoder::default()
        }
    }

    /// The merged `--abi` files.
    pub fn abi(&self) -> Option<&Abi> {
        self.abi.as_deref().map(|a| &**a.get())
    }

    /// Adds `--signatures` entries, looked up together with the bundled table.
    pub fn add_signatures(&mut self, extra: Abi) {
        match &mut self.signatures {
            Some(s) => s.merge(extra),
            None => self.signatures = Some(extra),
        }
    }

    /// The ABI of the contract at `address` (first tier for calls to it, its reverts and logs).
    pub fn add_contract(&mut self, address: Address, abi: Arc<Abi>) {
        self.contracts.insert(address, abi);
    }

    /// Names the contract at `address` (its artifact's contract name).
    /// Names a CREATE whose init code is `init`: contract `name`, whose creation code is
    /// `code_len` bytes long (its constructor's arguments follow), with `abi`.
    pub fn add_creation(&mut self, init: &[u8], name: String, code_len: usize, abi: Arc<Abi>) {
        self.creations
            .insert(alloy_primitives::keccak256(init), (name, code_len, abi));
    }

    /// A CREATE's init code as text: `new Vault(asset_: 0x…)` when its artifact is known and
    /// the arguments decode, `new Vault` when only the artifact is; `None` otherwise.
    pub fn describe_creation(&self, init: &[u8]) -> Option<String> {
        let (name, len, abi) = self.creations.get(&alloy_primitives::keccak256(init))?;
        let shown = format!("new {name}");
        let args = init.get(*len..).unwrap_or_default();
        let Some(params) = abi.constructor() else {
            return Some(shown);
        };
        Some(match decode_params(params, args) {
            Some(values) => format_call(&shown, params.iter().map(|p| p.name.as_str()), &values),
            None => shown,
        })
    }

    pub fn add_label(&mut self, address: Address, label: String) {
        self.labels.insert(address, label);
    }

    /// Attaches the source locations of the trace this decoder names (nothing when empty).
    pub fn set_sources(&mut self, notes: SourceNotes) {
        self.sources = (!notes.is_empty()).then(|| Arc::new(notes));
    }

    /// The source locations of the trace, when any were found.
    pub fn sources(&self) -> Option<&SourceNotes> {
        self.sources.as_deref()
    }

    /// The contract name at `address`, when known.
    pub fn label(&self, address: &Address) -> Option<&str> {
        self.labels.get(address).map(String::as_str)
    }

    /// `0xAbCd…` plus ` Name` when the contract's name is known.
    pub fn with_label(&self, address: &Address, shown: String) -> String {
        match self.label(address) {
            Some(l) => format!("{shown} {l}"),
            None => shown,
        }
    }

    /// Whether a contract-specific ABI is known for `address`.
    pub fn has_contract(&self, address: &Address) -> bool {
        self.contracts.contains_key(address)
    }

    /// Whether any source names `selector` as a function (for a call to `at`).
    pub fn knows_function_at(&self, at: Option<Address>, selector: [u8; 4]) -> bool {
        self.tiers(at)
            .flatten()
            .any(|abi| !abi.functions(selector).is_empty())
    }

    /// Whether any source names `selector` as an error (raised by `at`). `Error(string)` and
    /// `Panic(uint256)` are always known.
    pub fn knows_error_at(&self, at: Option<Address>, selector: [u8; 4]) -> bool {
        selector == ERROR_SELECTOR
            || selector == PANIC_SELECTOR
            || self
                .tiers(at)
                .flatten()
                .any(|abi| !abi.errors(selector).is_empty())
    }

    /// Whether any source names the event with `topic0` (emitted by `at`).
    pub fn knows_event_at(&self, at: Option<Address>, topic0: &B256) -> bool {
        self.tiers(at)
            .flatten()
            .any(|abi| !abi.events(topic0).is_empty())
    }

    /// The ABIs to try, most specific first: the contract's own, `--abi`'s, then the signature
    /// tables. Lazily: the bundled table is parsed (about a millisecond) only when a lookup gets
    /// that far, which a fully named trace never does.
    fn tiers(&self, at: Option<Address>) -> impl Iterator<Item = Vec<&Abi>> {
        let own = at.and_then(|a| self.contracts.get(&a)).map(|c| vec![&**c]);
        // Read back (kept between runs) only when a lookup gets this far.
        let given =
            std::iter::once_with(move || self.abi.as_deref().map(|a| vec![&**a.get()])).flatten();
        let tables = std::iter::once_with(move || {
            let mut table: Vec<&Abi> = self.signatures.iter().collect();
            table.push(signatures::bundled());
            table
        });
        own.into_iter().chain(given).chain(tables)
    }

    /// Tries `candidates` of each tier; `decode` gives `(name, text)` when an item decodes,
    /// `bare` its undecoded form (`(name, signature)`); items of one
    /// tier with the same `key` are one candidate (the first source's names win).
    fn find<'s, T: 's>(
        &'s self,
        at: Option<Address>,
        candidates: impl Fn(&'s Abi) -> &'s [T],
        decode: impl Fn(&T) -> Option<(String, String)>,
        bare: impl Fn(&T) -> (String, String),
        key: impl Fn(&T) -> String,
    ) -> Found {
        let mut first = None;
        for tier in self.tiers(at) {
            let mut decoded: Vec<(String, String)> = Vec::new();
            let mut seen: Vec<String> = Vec::new();
            for item in tier.into_iter().flat_map(&candidates) {
                // The same signature from two sources of one tier is one candidate.
                let k = key(item);
                if seen.contains(&k) {
                    continue;
                }
                seen.push(k);
                if first.is_none() {
                    first = Some(bare(item));
                }
                if let Some(d) = decode(item) {
                    if !decoded.contains(&d) {
                        decoded.push(d);
                    }
                }
            }
            if !decoded.is_empty() {
                return Found {
                    decoded,
                    bare: first,
                };
            }
        }
        Found {
            decoded: Vec::new(),
            bare: first,
        }
    }

    fn function(&self, at: Option<Address>, input: &[u8]) -> Option<Found> {
        let sel: [u8; 4] = input.get(..4)?.try_into().ok()?;
        let args = &input[4..];
        Some(self.find(
            at,
            |abi| abi.functions(sel),
            |f| {
                let values = decode_params(&f.inputs, args)?;
                let names = f.inputs.iter().map(|p| p.name.as_str());
                Some((f.name.clone(), format_call(&f.name, names, &values)))
            },
            |f| (f.name.clone(), f.signature()),
            |f| f.signature(),
        ))
    }

    /// The function's name (`transfer`) from any source; candidates joined by `|`.
    pub fn function_name(&self, input: &[u8]) -> Option<String> {
        self.function_name_at(None, input)
    }

    /// [`function_name`](Self::function_name) for a call to `at`.
    pub fn function_name_at(&self, at: Option<Address>, input: &[u8]) -> Option<String> {
        self.function(at, input)?.name()
    }

    /// Calldata as text: `transfer(to: 0x…, amount: 1000)` when it decodes,
    /// `transfer(address,uint256)` when only the signature is known, `0x12345678` (the selector)
    /// otherwise, and `()` for empty input.
    pub fn describe_call(&self, input: &[u8]) -> String {
        self.describe_call_at(None, input, None)
    }

    /// Like [`describe_call`](Self::describe_call), but an empty input that moves value is
    /// `receive()`, which is what it runs on a contract.
    pub fn describe_call_with_value(&self, input: &[u8], value: Option<U256>) -> String {
        self.describe_call_at(None, input, value)
    }

    /// [`describe_call_with_value`](Self::describe_call_with_value) for a call to `at`.
    pub fn describe_call_at(
        &self,
        at: Option<Address>,
        input: &[u8],
        value: Option<U256>,
    ) -> String {
        if input.is_empty() {
            return if value.is_some_and(|v| !v.is_zero()) {
                "receive()".to_string()
            } else {
                "()".to_string()
            };
        }
        if input.len() < 4 {
            return format!("0x{}", hex::encode(input));
        }
        self.function(at, input)
            .and_then(Found::text)
            .unwrap_or_else(|| format!("0x{}", hex::encode(&input[..4])))
    }

    /// What a call to `at` with `input` returned (`output`), by its function's declared
    /// outputs: `(name, value)` each, `_0`, `_1`… where an output has no name. `None` unless
    /// exactly one function of the first tier that knows the selector decodes both the input
    /// and the output strictly.
    pub fn returns_at(
        &self,
        at: Option<Address>,
        input: &[u8],
        output: &[u8],
    ) -> Option<Vec<(String, String)>> {
        let sel: [u8; 4] = input.get(..4)?.try_into().ok()?;
        for tier in self.tiers(at) {
            let mut found: Vec<Vec<(String, String)>> = Vec::new();
            for f in tier.into_iter().flat_map(|abi| abi.functions(sel)) {
                if decode_params(&f.inputs, &input[4..]).is_none() {
                    continue;
                }
                let Some(values) = decode_params(&f.outputs, output) else {
                    continue;
                };
                let named: Vec<(String, String)> = f
                    .outputs
                    .iter()
                    .zip(&values)
                    .enumerate()
                    .map(|(i, (p, v))| {
                        let name = match p.name.as_str() {
                            "" => format!("_{i}"),
                            n => n.to_string(),
                        };
                        (name, Shown(v).to_string())
                    })
                    .collect();
                if !found.contains(&named) {
                    found.push(named);
                }
            }
            match found.len() {
                0 => continue,
                1 => return found.pop(),
                _ => return None,
            }
        }
        None
    }

    /// Revert data as text: `Error("text")`, `Panic(0x12: division or modulo by zero)`, a custom
    /// error with decoded arguments, or `custom error 0xdeadbeef (N bytes of data)`.
    /// `None` for empty data.
    pub fn describe_revert(&self, output: &[u8]) -> Option<String> {
        self.describe_revert_at(None, output)
    }

    /// [`describe_revert`](Self::describe_revert) for a frame of the contract at `at`.
    pub fn describe_revert_at(&self, at: Option<Address>, output: &[u8]) -> Option<String> {
        if output.is_empty() {
            return None;
        }
        let Some(sel) = output.get(..4).and_then(|s| <[u8; 4]>::try_from(s).ok()) else {
            return Some(format!("revert data 0x{}", hex::encode(output)));
        };
        let args = &output[4..];
        if sel == ERROR_SELECTOR {
            if let Some(s) = abi_string(args) {
                return Some(format!("Error({s:?})"));
            }
        } else if sel == PANIC_SELECTOR {
            if let Some(w) = args.get(..32) {
                let code = U256::from_be_slice(w);
                return Some(format!("Panic({code:#x}: {})", panic_reason(code)));
            }
        }
        let found = self.find(
            at,
            |abi| abi.errors(sel),
            |e| {
                let values = decode_params(&e.inputs, args)?;
                let names = e.inputs.iter().map(|p| p.name.as_str());
                Some((e.name.clone(), format_call(&e.name, names, &values)))
            },
            |e| (e.name.clone(), e.signature()),
            |e| e.signature(),
        );
        Some(found.text().unwrap_or_else(|| {
            format!(
                "custom error 0x{} ({} bytes of data)",
                hex::encode(sel),
                args.len()
            )
        }))
    }

    fn log(&self, at: Option<Address>, topics: &[B256], data: &[u8]) -> Option<Found> {
        let t0 = topics.first()?;
        Some(self.find(
            at,
            |abi| abi.events(t0),
            |e| {
                if e.anonymous {
                    return None;
                }
                let values = decode_log(e, topics, data)?;
                let names = e.inputs.iter().map(|p| p.name.as_str());
                Some((e.name.clone(), format_call(&e.name, names, &values)))
            },
            |e| (e.name.clone(), e.signature()),
            |e| {
                let indexed: String = e
                    .inputs
                    .iter()
                    .map(|p| if p.indexed { 'i' } else { '-' })
                    .collect();
                format!("{}{indexed}", e.signature())
            },
        ))
    }

    /// The event's name when its topic0 is known.
    pub fn event_name(&self, topics: &[B256]) -> Option<String> {
        self.log(None, topics, &[])?.bare.map(|(n, _)| n)
    }

    /// A log as text: `Transfer(from: 0x…, to: 0x…, value: 5)` when it decodes; the signature plus
    /// raw topics and data when only the name is known; raw topics and data otherwise.
    pub fn describe_log(&self, topics: &[B256], data: &[u8]) -> String {
        self.describe_log_at(None, topics, data)
    }

    /// [`describe_log`](Self::describe_log) for a log emitted by `at`.
    pub fn describe_log_at(&self, at: Option<Address>, topics: &[B256], data: &[u8]) -> String {
        let raw = || {
            let ts: Vec<String> = topics.iter().map(|t| t.to_string()).collect();
            format!("topics=[{}] data=0x{}", ts.join(", "), hex::encode(data))
        };
        let Some(found) = self.log(at, topics, data) else {
            return format!("anonymous log {}", raw());
        };
        if !found.decoded.is_empty() {
            return found.text().unwrap_or_default();
        }
        match found.bare {
            Some((_, sig)) => format!("{sig} {}", raw()),
            None => format!("log {}", raw()),
        }
    }
}

#[cfg(test)]
#[path = "decoder_tests.rs"]
mod tests;
