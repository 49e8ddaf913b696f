//! The variables of a stop, one model for the terminal's Variables pane and the adapter's
//! Arguments and Return values scopes: a function's arguments with the values the compiler's
//! layout makes exact (as `tx`'s stack shows them), and what an external call returned, read
//! at its last step from its output by its function's declared outputs. Locals are not shown:
//! no compiler output this reads places them exactly.

use super::Session;
use crate::render::source::StackEntry;
use crate::trace::steps::StepView;

/// One variable: its name and its value as text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variable {
    pub name: String,
    pub value: String,
}

/// A value the stack did not leave readable (a reference type, code the optimizer reshaped).
pub const NOT_READABLE: &str = "(not readable)";

/// The arguments of a stack entry's function, in declaration order.
pub fn arguments(e: &StackEntry) -> Vec<Variable> {
    e.args
        .iter()
        .map(|a| Variable {
            name: a.name.clone(),
            value: a.value.clone().unwrap_or_else(|| NOT_READABLE.into()),
        })
        .collect()
}

/// What the external frame open at `v.open[open]` returned, at its last step only (before it,
/// nothing is returned yet): its output decoded by the called function's outputs. Empty when
/// the frame failed, returned nothing, or no ABI decodes it.
pub fn returns(s: &Session, v: &StepView, open: usize) -> Vec<Variable> {
    let Some(o) = v.open.get(open) else {
        return Vec::new();
    };
    let f = &s.model.log.frames[o.frame as usize];
    let last = f.end_step.checked_sub(1);
    if last != Some(v.step) || !f.success() || f.output.is_empty() || f.kind.is_create() {
        return Vec::new();
    }
    s.decoder
        .returns_at(Some(f.code_address), &f.input, &f.output)
        .unwrap_or_default()
        .into_iter()
        .map(|(name, value)| Variable { name, value })
        .collect()
}

/// The Variables pane: the innermost function's name, its arguments, and what its frame
/// returned when the step is the frame's last.
pub fn pane(s: &Session, v: &StepView) -> Vec<(String, Vec<Variable>)> {
    let mut out = Vec::new();
    let Some((open, entries)) = s.stack(v).into_iter().next() else {
        return out;
    };
    if let Some(e) = entries.first() {
        out.push((
            format!("{}.{} arguments", e.contract, e.function),
            arguments(e),
        ));
    }
    let returned = returns(s, v, open);
    if !returned.is_empty() {
        out.push(("returned".into(), returned));
    }
    out
}
