//! Where a trace failed in the source, as plain data for the renderers: a location per failed
//! frame (file, line, column, the source line and the failing span in it) and the Solidity
//! stack trace of the transaction's failure. `names` finds them (source maps of matched
//! artifacts); the tree and `--decode` only print them, and print nothing when none was found.

use std::collections::HashMap;

use serde::Serialize;

use super::gas_source::SourceGas;
use crate::trace::call::CallKind;

/// A point in a source file: `file:line:column`, 1-based, columns in characters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Location {
    pub file: String,
    pub line: usize,
    pub column: usize,
    /// The whole source line (without its line break).
    #[serde(skip)]
    pub text: String,
    /// The failing span on that line, in characters from the line's start: `[from, to)`.
    /// A span that goes on past the line is cut at its end.
    #[serde(skip)]
    pub span: (usize, usize),
    /// The file was edited since the build: no line of it is quoted (`line` and `column` 0).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub changed: bool,
}

impl Location {
    /// A place in `file`, which changed since the build: nothing in it is shown.
    pub fn changed(file: &str) -> Location {
        Location {
            file: file.to_string(),
            line: 0,
            column: 0,
            text: String::new(),
            span: (0, 0),
            changed: true,
        }
    }

    /// `src/Leaf.sol:12:9`, or `src/Leaf.sol (changed since the build: location not shown)`.
    pub fn at(&self) -> String {
        if self.changed {
            return format!(
                "{} (changed since the build: location not shown)",
                self.file
            );
        }
        format!("{}:{}:{}", self.file, self.line, self.column)
    }

    /// The source line with its leading whitespace removed, and the span shifted to match.
    pub fn excerpt(&self) -> (String, (usize, usize)) {
        let indent = self.text.chars().take_while(|c| c.is_whitespace()).count();
        let text: String = self.text.chars().skip(indent).collect();
        let text = text.trim_end().to_string();
        let n = text.chars().count();
        let from = self.span.0.saturating_sub(indent).min(n);
        let to = self.span.1.saturating_sub(indent).clamp(from, n);
        (text, (from, to.max((from + 1).min(n))))
    }
}

/// One line of the Solidity stack trace: the function running and where in it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StackEntry {
    pub contract: String,
    pub function: String,
    #[serde(flatten)]
    pub location: Location,
    /// How the frame this function ran in was entered, on the outermost function of every
    /// frame but the top one (`reached by STATICCALL`).
    #[serde(skip)]
    pub reached_by: Option<CallKind>,
    /// The function's parameters with the values it was called with, where the compiler's
    /// layout makes them reliable (value types, legacy code generation); a name alone
    /// otherwise. Empty for a function without parameters or not entered by a jump.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<Arg>,
    /// The lines of the calls this function makes to the next one when the source map cannot
    /// tell which of them ran (the location is then the function's declaration).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub undecided: Vec<usize>,
}

/// One parameter of a function in the stack trace: its name, and its value when it can be read.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Arg {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

impl StackEntry {
    /// `Leaf._check (src/Leaf.sol:20:9)`; a function in a file edited since the build is not
    /// named: `src/Leaf.sol (changed since the build: location not shown)`.
    pub fn text(&self) -> String {
        let mut s = if self.function.is_empty() && !self.contract.is_empty() {
            // The contract itself, no function of it (its dispatcher): `C (src/C.sol:3:1)`.
            format!("{} ({})", self.contract, self.location.at())
        } else if self.function.is_empty() {
            self.location.at()
        } else {
            let args = if self.args.is_empty() {
                String::new()
            } else {
                let shown: Vec<String> = self
                    .args
                    .iter()
                    .map(|a| match &a.value {
                        Some(v) => format!("{}: {v}", a.name),
                        None => a.name.clone(),
                    })
                    .collect();
                format!("({})", shown.join(", "))
            };
            let undecided = match self.undecided.as_slice() {
                [] => String::new(),
                lines => {
                    let lines: Vec<String> = lines.iter().map(usize::to_string).collect();
                    format!(
                        "; one of its calls at lines {}: the source map cannot tell which",
                        lines.join(", ")
                    )
                }
            };
            format!(
                "{}.{}{args} ({}{undecided})",
                self.contract,
                self.function,
                self.location.at()
            )
        };
        if let Some(k) = self.reached_by {
            s.push_str(", reached by ");
            s.push_str(k.as_str());
        }
        s
    }
}

/// Source locations of one trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceNotes {
    /// Failed frames by their path of child indices from the root (`[]` is the root).
    pub frames: HashMap<Vec<usize>, Location>,
    /// The Solidity stack trace of the top frame's failure, innermost function first.
    pub stack: Vec<StackEntry>,
    /// Why a frame reverted without a reason, inferred as Hardhat does (a non-payable
    /// function sent value, no function matching the selector, a call to an account without
    /// code), by the frame's path.
    pub inferred: HashMap<Vec<usize>, String>,
    /// Gas by line and function, for a gas report that kept its calling contexts.
    pub gas: Option<SourceGas>,
}

impl SourceNotes {
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
            && self.stack.is_empty()
            && self.gas.is_none()
            && self.inferred.is_empty()
    }
}

/// The line under an excerpt: `^` under the span's characters.
pub fn carets(span: (usize, usize)) -> String {
    let mut s = " ".repeat(span.0);
    s.push_str(&"^".repeat(span.1.saturating_sub(span.0).max(1)));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_drops_indent_and_keeps_the_span() {
        let l = Location {
            file: "src/A.sol".into(),
            line: 3,
            column: 9,
            text: "        require(x > 1, \"no\");  ".into(),
            span: (8, 29),
            changed: false,
        };
        assert_eq!(l.at(), "src/A.sol:3:9");
        let (text, span) = l.excerpt();
        assert_eq!(text, "require(x > 1, \"no\");");
        assert_eq!(span, (0, 21));
        assert_eq!(carets(span), "^".repeat(21));
        assert_eq!(carets((2, 4)), "  ^^");
    }
}
