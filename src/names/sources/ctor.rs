//! Constructors as frames of the Solidity stack trace.
//!
//! A creation map's code before any function is jumped into is the deployment itself: the
//! contract's own constructor with, inlined before its body, the constructors of its bases and
//! the modifiers of each (and state variables' initial values). No JUMP enters them, so the
//! internal stack has no level for them; what runs there is read from the span itself: a
//! modifier, a base's constructor or the contract's own. As EDR's (Hardhat's) stack traces
//! show a deployment, a base's constructor is the contract's constructor: where the failure is
//! in a base's constructor body, the entry is the contract's constructor there; otherwise the
//! contract's own constructor at the place that invokes the bases (`Base(x)` in its declaration
//! or in the contract's `is` list); modifiers are entries of their own.

use std::sync::Arc;

use super::{CodeMap, FnSpan, SourceFile, SrcEntry};
use crate::render::source::{Location, StackEntry};

/// At most this many base constructors are followed up from the one that failed.
const MAX_BASES: usize = 32;

impl CodeMap {
    /// The entries of the constructor code at `span` (the outermost level of a creation map),
    /// innermost first, as EDR's (Hardhat's) stack traces show a deployment: its bases'
    /// constructors are not frames of their own but the contract's constructor — a base's
    /// constructor where the failure is in its body is `C.constructor` there, one the failure
    /// only passed through is left out —, and bases' modifiers are named by the contract.
    pub(super) fn constructor_entries(
        &self,
        span: Option<(&Arc<SourceFile>, SrcEntry)>,
    ) -> Vec<StackEntry> {
        let mut out = Vec::new();
        for (i, mut e) in self.constructor_frames(span).into_iter().enumerate() {
            let base = e.function == "constructor" && e.contract != self.contract;
            if base && i > 0 {
                continue;
            }
            if e.function == "constructor"
                && out.iter().any(|o: &StackEntry| o.function == "constructor")
            {
                continue;
            }
            e.contract = match base {
                true => self.contract.clone(),
                false => self.shown_contract(&e.contract),
            };
            out.push(e);
        }
        out
    }

    /// The constructor code at `span` as the source nests it: a modifier, each base's
    /// constructor up to the one invoking it, the contract's own constructor last.
    fn constructor_frames(&self, span: Option<(&Arc<SourceFile>, SrcEntry)>) -> Vec<StackEntry> {
        let mut out = Vec::new();
        let Some((file, e)) = span else {
            return out;
        };
        let Some(at) = file.locate(e.start as usize, e.len as usize) else {
            return out;
        };
        let entry = |contract: &str, function: &str, location: Location| StackEntry {
            contract: contract.to_string(),
            function: function.to_string(),
            location,
            reached_by: None,
            args: Vec::new(),
            undecided: Vec::new(),
        };
        // The contract whose constructor code this is, and where it is invoked from.
        let mut from = match file.function_at(e.start as usize) {
            Some(m) if m.modifier => {
                out.push(entry(&m.contract, &m.name, at));
                // The constructor the modifier modifies, at its declaration's invocation.
                match self.constructor_invoking(&m.name) {
                    Some((cfile, c, offset)) => {
                        let len = m.name.len();
                        let Some(loc) = cfile.locate(offset, len) else {
                            return out;
                        };
                        out.push(entry(&c.contract, "constructor", loc));
                        c.contract.clone()
                    }
                    None => return out,
                }
            }
            Some(c) if c.name == "constructor" => {
                out.push(entry(&c.contract, "constructor", at));
                c.contract.clone()
            }
            // A function the optimizer inlined into the constructor: it, then the constructor.
            Some(f) => {
                out.push(entry(&f.contract, &f.name, at));
                if let Some(loc) = self
                    .own_constructor()
                    .and_then(|(file, c)| signature(file, c))
                {
                    out.push(entry(&self.contract, "constructor", loc));
                }
                return out;
            }
            // A state variable's initial value: the deployment of the contract it is in.
            None => {
                out.push(entry(&self.contract, "constructor", at));
                return out;
            }
        };
        // Up the bases: whoever invokes `from`'s constructor, until the contract's own.
        for _ in 0..MAX_BASES {
            if from == self.contract {
                return out;
            }
            match self.base_invocation(&from) {
                Some((contract, loc)) => {
                    out.push(entry(&contract, "constructor", loc));
                    from = contract;
                }
                None => break,
            }
        }
        // Invoked implicitly (a base without arguments): the contract's own constructor at its
        // declaration, else the contract's.
        if let Some(loc) = self
            .own_constructor()
            .and_then(|(file, c)| signature(file, c))
            .or_else(|| self.contract_header(&self.contract).map(|(_, loc)| loc))
        {
            out.push(entry(&self.contract, "constructor", loc));
        }
        out
    }

    /// The contract's own constructor, if it declares one.
    fn own_constructor(&self) -> Option<(&Arc<SourceFile>, &FnSpan)> {
        self.unit
            .files
            .values()
            .flat_map(|file| file.functions().iter().map(move |f| (file, f)))
            .find(|(_, f)| !f.modifier && f.name == "constructor" && f.contract == self.contract)
    }

    /// A constructor whose declaration invokes `name` (a modifier or a base), this contract's
    /// first: the file, the constructor and the byte offset of the invocation.
    fn constructor_invoking(&self, name: &str) -> Option<(&Arc<SourceFile>, &FnSpan, usize)> {
        self.unit
            .files
            .values()
            .flat_map(|file| file.functions().iter().map(move |f| (file, f)))
            .filter(|(_, f)| !f.modifier && f.name == "constructor")
            .filter_map(|(file, f)| Some((file, f, f.start + invoked_in(header(file, f)?, name)?)))
            .min_by_key(|(file, f, _)| (f.contract != self.contract, file.path.as_str(), f.start))
    }

    /// Where `base`'s constructor is invoked with arguments: in a constructor's declaration
    /// (`constructor() Base(1)`) or a contract's `is` list (`contract C is Base(1)`), this
    /// contract's first; the invoking contract and the location of the invocation.
    fn base_invocation(&self, base: &str) -> Option<(String, Location)> {
        if let Some((file, c, offset)) = self
            .constructor_invoking(base)
            .filter(|(_, c, _)| c.contract != base)
        {
            return Some((c.contract.clone(), file.locate(offset, base.len())?));
        }
        let mut names: Vec<String> = self
            .unit
            .files
            .values()
            .flat_map(|f| f.functions().iter().map(|s| s.contract.clone()))
            .filter(|c| c != base)
            .collect();
        names.sort();
        names.dedup();
        // This contract first.
        names.sort_by_key(|c| *c != self.contract);
        names.into_iter().find_map(|c| {
            let (file, head) = self.contract_header_text(&c)?;
            let at = invoked_in(head.1, base)? + head.0;
            let loc = file.locate(at, base.len())?;
            Some((c, loc))
        })
    }

    /// This contract and the contracts it inherits from, read from the `is` lists of their
    /// declarations (the AST's linearization is not kept): this contract first.
    pub(super) fn lineage(&self) -> Vec<String> {
        let mut out = vec![self.contract.clone()];
        let mut k = 0;
        while k < out.len() && out.len() < 64 {
            if let Some((_, (_, head))) = self.contract_header_text(&out[k].clone()) {
                for base in bases_in(head) {
                    if !out.contains(&base) {
                        out.push(base);
                    }
                }
            }
            k += 1;
        }
        out
    }

    /// Whether a contract of this map's lineage declares a public state variable `name`
    /// holding an array (`uint256[] public items;`, `mapping(address => uint[]) public m;`).
    pub fn public_array(&self, name: &str) -> bool {
        self.public_variable(name)
            .is_some_and(|(_, file, start, len)| {
                file.text()
                    .and_then(|t| t.get(start..start + len))
                    .is_some_and(|decl| decl.contains('['))
            })
    }

    /// The public state variable `name` a contract of this map's lineage declares (its getter
    /// is the function of that name): the contract declaring it, and its declaration with the
    /// file, from the type to the name (`mapping(uint => uint) public a`, as solc spans it).
    pub fn public_variable_location(&self, name: &str) -> Option<(String, Location)> {
        let (contract, file, start, len) = self.public_variable(name)?;
        Some((contract, file.locate(start, len)?))
    }

    /// [`Self::public_variable_location`]'s declaration: contract, file, start and length.
    fn public_variable(&self, name: &str) -> Option<(String, &Arc<SourceFile>, usize, usize)> {
        let lineage = self.lineage();
        self.unit.files.values().find_map(|file| {
            let text = file.text()?;
            let mut from = 0;
            while let Some(i) = text[from..].find(name) {
                let at = from + i;
                from = at + name.len();
                let bytes = text.as_bytes();
                if at > 0 && is_ident(bytes[at - 1])
                    || bytes.get(from).is_some_and(|&b| is_ident(b))
                {
                    continue;
                }
                let after = text[from..].trim_start();
                if !(after.starts_with(';') || after.starts_with('=')) {
                    continue;
                }
                let line_start = text[..at].rfind(['\n', ';', '{', '}']).map_or(0, |k| k + 1);
                let decl = &text[line_start..at];
                let words: Vec<&str> = decl.split_whitespace().collect();
                if !words.contains(&"public")
                    || file.functions().iter().any(|f| f.start <= at && at < f.end)
                {
                    continue;
                }
                // The contract whose body holds it: the last of the lineage declared before it.
                let Some(contract) = lineage
                    .iter()
                    .filter_map(|c| {
                        let (f, (start, _)) = self.contract_header_text(c)?;
                        (Arc::ptr_eq(f, file) && start < at).then_some((start, c))
                    })
                    .max()
                    .map(|(_, c)| c.clone())
                else {
                    continue;
                };
                let start = line_start + (decl.len() - decl.trim_start().len());
                return Some((contract, file, start, from - start));
            }
            None
        })
    }

    /// The declaration of contract `name` up to its body, and its location.
    fn contract_header(&self, name: &str) -> Option<(&Arc<SourceFile>, Location)> {
        let (file, (start, head)) = self.contract_header_text(name)?;
        let loc = file.locate(start, head.trim_end().len())?;
        Some((file, loc))
    }

    /// The file declaring contract `name`, and the offset and text of its declaration up to the
    /// body's brace.
    fn contract_header_text(&self, name: &str) -> Option<(&Arc<SourceFile>, (usize, &str))> {
        self.unit.files.values().find_map(|file| {
            let text = file.text()?;
            let start = declaration(text, "contract", name)?;
            let end = text[start..].find('{').map_or(text.len(), |n| start + n);
            Some((file, (start, &text[start..end])))
        })
    }
}

/// The base contracts a contract declaration names after `is` (arguments skipped).
fn bases_in(head: &str) -> Vec<String> {
    let Some(at) = invoked_in(head, "is") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut depth = 0;
    let mut word = String::new();
    for c in head[at + 2..].chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ if depth == 0 && (c.is_alphanumeric() || c == '_' || c == '$' || c == '.') => {
                word.push(c)
            }
            // `Lib.Base`: the contract's own name.
            _ if depth == 0 && !word.is_empty() => {
                out.push(word.rsplit('.').next().unwrap_or(&word).to_string());
                word.clear();
            }
            _ => {}
        }
    }
    if !word.is_empty() {
        out.push(word.rsplit('.').next().unwrap_or(&word).to_string());
    }
    out
}

/// A function's declaration up to its body's brace (parameters, modifiers, base invocations).
pub(super) fn header<'a>(file: &'a SourceFile, f: &FnSpan) -> Option<&'a str> {
    let text = file.text()?.get(f.start..f.end)?;
    Some(&text[..text.find('{').unwrap_or(text.len())])
}

/// The offset in `head` of `name` invoked there: the word, not part of a longer one.
pub(super) fn invoked_in(head: &str, name: &str) -> Option<usize> {
    let bytes = head.as_bytes();
    let mut from = 0;
    while let Some(i) = head[from..].find(name) {
        let at = from + i;
        let end = at + name.len();
        let before = at == 0 || !is_ident(bytes[at - 1]);
        let after = bytes.get(end).is_none_or(|&b| !is_ident(b));
        if before && after {
            return Some(at);
        }
        from = end;
    }
    None
}

/// Whether `file` declares `name` as a library.
pub(super) fn is_library(file: &SourceFile, name: &str) -> bool {
    file.text()
        .is_some_and(|text| declaration(text, "library", name).is_some())
}

/// The offset in `text` of the declaration `keyword name` (`contract Vault`, `library L`): both
/// whole words.
fn declaration(text: &str, keyword: &str, name: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = text[from..].find(keyword) {
        let start = from + i;
        from = start + keyword.len();
        let word_before = start > 0 && is_ident(text.as_bytes()[start - 1]);
        let rest = &text[from..];
        if word_before || !rest.starts_with(char::is_whitespace) {
            continue;
        }
        let named = rest
            .trim_start()
            .strip_prefix(name)
            .is_some_and(|r| r.as_bytes().first().is_none_or(|&b| !is_ident(b)));
        if named {
            return Some(start);
        }
    }
    None
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

/// A function's declaration up to its body, as a location.
fn signature(file: &SourceFile, f: &FnSpan) -> Option<Location> {
    let head = header(file, f)?;
    file.locate(f.start, head.trim_end().len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_invocations_as_whole_words() {
        assert_eq!(
            invoked_in("constructor(uint x) Base(x) only", "Base"),
            Some(20)
        );
        assert_eq!(invoked_in("constructor() BaseTwo(1) only", "Base"), None);
        assert_eq!(invoked_in("constructor() onlyOwner", "only"), None);
        assert_eq!(invoked_in("constructor() x only", "only"), Some(16));
    }

    #[test]
    fn reads_base_contracts() {
        assert_eq!(
            bases_in("contract Guarded is Origin(1, f(2)), Lib.Other ,Third "),
            vec!["Origin", "Other", "Third"]
        );
        assert!(bases_in("contract Island ").is_empty());
    }
}
