//! The tracer functions chaintrace calls (shared by the boa host and the native evaluator).

/// The tracer functions chaintrace calls, by geth's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hook {
    Setup,
    Step,
    Fault,
    Enter,
    Exit,
    Result,
}

impl Hook {
    pub fn name(self) -> &'static str {
        match self {
            Hook::Setup => "setup",
            Hook::Step => "step",
            Hook::Fault => "fault",
            Hook::Enter => "enter",
            Hook::Exit => "exit",
            Hook::Result => "result",
        }
    }
}
