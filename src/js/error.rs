//! Why a JavaScript tracer failed, as a type; its `Display` is the text users see, which for a
//! failure inside a tracer function is geth's (`… in server-side tracer function 'step'`).

use super::hook::Hook;

/// A JavaScript tracer that could not be built, or that failed while tracing.
#[derive(Debug, thiserror::Error)]
pub enum JsTracerError {
    /// The source nests brackets deeper than the parser is allowed to recurse.
    #[error("the script nests brackets {depth} deep; at most {max} are accepted")]
    TooDeep { depth: usize, max: usize },
    /// The source does not parse; boa's message, without its position text.
    #[error("{0}")]
    Syntax(String),
    /// Evaluating the tracer's object literal failed (threw, ran out of time or memory).
    #[error("{0}")]
    Evaluating(Failure),
    /// The source evaluates to something other than an object.
    #[error("the tracer must be an object literal, e.g. {{step: …, fault: …, result: …}}")]
    NotAnObject,
    /// A function geth requires (`result` or `fault`) is missing.
    #[error("trace object must expose a function {0}()")]
    Missing(&'static str),
    /// Only one of `enter` and `exit` is defined.
    #[error("trace object must expose either both or none of enter() and exit()")]
    UnpairedEnterExit,
    /// boa refused to set up the tracer's globals or arguments; its message.
    #[error("{0}")]
    Engine(String),
    /// A tracer function failed: geth's wording.
    #[error("{failure}    in server-side tracer function '{}'", hook.name())]
    InHook { hook: Hook, failure: Failure },
    /// `result` returned a value whose JSON text does not parse back.
    #[error("tracer result is not JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    /// The tracer was never built for this transaction (its failure is reported instead).
    #[error("the JavaScript tracer was not initialised")]
    NotInitialised,
}

/// What went wrong while running tracer code.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// Past the tracer's time limit (or boa's loop-iteration backstop).
    #[error("execution timeout")]
    Timeout,
    /// Past the tracer's memory limit (`timeout::MEMORY_LIMIT`, 1 GiB).
    #[error(
        "out of memory: the tracer holds more than 1 GiB (strings or arrays growing without bound?)"
    )]
    OutOfMemory,
    /// An exception the script threw or let through; its message.
    #[error("{0}")]
    Thrown(String),
    /// An error the script cannot catch, raised by a host object (geth interrupts the VM for
    /// these: a stack or memory read out of bounds, …).
    #[error("{0}")]
    Fatal(String),
    /// The native evaluator's state could not be written back into boa; boa's message.
    #[error("writing tracer state back: {0}")]
    WriteBack(String),
}

impl JsTracerError {
    /// `failure` inside `hook`.
    pub fn in_hook(hook: Hook, failure: Failure) -> Self {
        JsTracerError::InHook { hook, failure }
    }

    /// Whether the tracer ran out of time (a re-run of the same replay would too).
    pub fn timed_out(&self) -> bool {
        matches!(
            self,
            JsTracerError::Evaluating(Failure::Timeout)
                | JsTracerError::InHook {
                    failure: Failure::Timeout,
                    ..
                }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The texts geth's JS tracer host gives (eth/tracers/js/goja.go), and chaintrace's own
    /// limits, as users see them.
    #[test]
    fn display_is_the_users_text() {
        let cases: [(JsTracerError, &str); 7] = [
            (
                JsTracerError::in_hook(Hook::Step, Failure::Thrown("Error: boom".into())),
                "Error: boom    in server-side tracer function 'step'",
            ),
            (
                JsTracerError::in_hook(Hook::Result, Failure::Timeout),
                "execution timeout    in server-side tracer function 'result'",
            ),
            (
                JsTracerError::in_hook(Hook::Setup, Failure::OutOfMemory),
                "out of memory: the tracer holds more than 1 GiB (strings or arrays growing without bound?)    in server-side tracer function 'setup'",
            ),
            (
                JsTracerError::Missing("result"),
                "trace object must expose a function result()",
            ),
            (
                JsTracerError::UnpairedEnterExit,
                "trace object must expose either both or none of enter() and exit()",
            ),
            (
                JsTracerError::NotAnObject,
                "the tracer must be an object literal, e.g. {step: …, fault: …, result: …}",
            ),
            (
                JsTracerError::TooDeep { depth: 500, max: 64 },
                "the script nests brackets 500 deep; at most 64 are accepted",
            ),
        ];
        for (e, text) in cases {
            assert_eq!(e.to_string(), text);
        }
        assert!(JsTracerError::in_hook(Hook::Exit, Failure::Timeout).timed_out());
        assert!(JsTracerError::Evaluating(Failure::Timeout).timed_out());
        // An exception whose text merely reads like one is not a timeout.
        assert!(
            !JsTracerError::in_hook(Hook::Step, Failure::Thrown("execution timeout".into()))
                .timed_out()
        );
    }
}
