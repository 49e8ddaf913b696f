//! The hook functions geth calls: those the tracer object held when it was made.
//!
//! geth's `newJsTracer` reads `result`, `fault`, `step`, `enter` and `exit` once, then runs
//! `setup`, and from then on calls the functions it read (`eth/tracers/js/goja.go`, lines
//! 190–221 and 352–442 in v1.17): a script that assigns `this.step = …` — in `setup` or in a
//! hook — changes nothing of what geth calls, and here neither.
//!
//! A hook runs in boa through a small script (the budgeted evaluation of `timeout.rs`), and a
//! script can call a function with the tracer as `this` only as a method of the tracer. So each
//! function read is kept on `Object.prototype` under a symbol only the host holds
//! (non-enumerable, non-writable: invisible to `for…in`, `Object.keys` and `JSON.stringify`),
//! and the script calls `__tracer[symbol](…)`: the tracer inherits it, and no name a script
//! assigns shadows it. Where that cannot be done (the tracer does not inherit from
//! `Object.prototype`), the hooks are called by name, as before.

use boa_engine::object::JsObject;
use boa_engine::property::{Attribute, PropertyDescriptor};
use boa_engine::{js_string, Context, JsString, JsSymbol, JsValue};

use super::error::JsTracerError;

/// The scripts that call the hooks.
pub struct Calls {
    pub step: &'static str,
    pub fault: &'static str,
    pub enter: &'static str,
    pub exit: &'static str,
    pub result: &'static str,
    pub setup: &'static str,
    /// Whether they call the functions read when the tracer was made (not by name).
    pub pinned: bool,
}

const PINNED: Calls = Calls {
    step: "__tracer[__hook_step](__log, __db)",
    fault: "__tracer[__hook_fault](__log, __db)",
    enter: "__tracer[__hook_enter](__frame)",
    exit: "__tracer[__hook_exit](__frameResult)",
    result: "__tracer[__hook_result](__ctx, __db)",
    setup: "__tracer[__hook_setup](__config)",
    pinned: true,
};

const BY_NAME: Calls = Calls {
    step: "__tracer.step(__log, __db)",
    fault: "__tracer.fault(__log, __db)",
    enter: "__tracer.enter(__frame)",
    exit: "__tracer.exit(__frameResult)",
    result: "__tracer.result(__ctx, __db)",
    setup: "__tracer.setup(__config)",
    pinned: false,
};

/// The tracer's functions as geth reads them when it makes the tracer: each once, in its
/// order — `result`, `fault`, `step`, `enter`, `exit`, then `setup` — so a getter runs once.
pub struct Read {
    pub result: Option<JsObject>,
    pub fault: Option<JsObject>,
    pub step: Option<JsObject>,
    pub enter: Option<JsObject>,
    pub exit: Option<JsObject>,
    pub setup: Option<JsObject>,
}

impl Read {
    pub fn of(tracer: &JsObject, ctx: &mut Context) -> Read {
        let mut get = |name: &str| {
            tracer
                .get(JsString::from(name), ctx)
                .ok()
                .and_then(|v| v.as_callable())
        };
        Read {
            result: get("result"),
            fault: get("fault"),
            step: get("step"),
            enter: get("enter"),
            exit: get("exit"),
            setup: get("setup"),
        }
    }
}

/// Keeps the functions `read` from `tracer` (before `setup`) for the scripts that call them.
pub fn pin(
    tracer: &JsObject,
    read: &Read,
    ctx: &mut Context,
) -> Result<&'static Calls, JsTracerError> {
    let proto = ctx.intrinsics().constructors().object().prototype();
    let hooks = [
        ("step", &read.step),
        ("fault", &read.fault),
        ("enter", &read.enter),
        ("exit", &read.exit),
        ("result", &read.result),
        ("setup", &read.setup),
    ];
    for (name, f) in hooks {
        // An absent hook is never called.
        let Some(f) = f.clone() else {
            continue;
        };
        let Some(symbol) = JsSymbol::new(Some(js_string!("chaintrace hook"))) else {
            return Ok(&BY_NAME);
        };
        let desc = PropertyDescriptor::builder()
            .value(f.clone())
            .writable(false)
            .enumerable(false)
            .configurable(false);
        if !matches!(
            proto.define_property_or_throw(symbol.clone(), desc, ctx),
            Ok(true)
        ) {
            return Ok(&BY_NAME);
        }
        let inherited = tracer
            .get(symbol.clone(), ctx)
            .ok()
            .and_then(|v| v.as_object());
        if inherited.as_ref() != Some(&f) {
            return Ok(&BY_NAME);
        }
        hidden(ctx, &format!("__hook_{name}"), symbol)?;
    }
    Ok(&PINNED)
}

/// Registers the global `name` the host's scripts use (not enumerable: a script's `for…in` over
/// the global object does not see it).
pub fn hidden(ctx: &mut Context, name: &str, v: impl Into<JsValue>) -> Result<(), JsTracerError> {
    ctx.register_global_property(
        JsString::from(name),
        v,
        Attribute::WRITABLE | Attribute::NON_ENUMERABLE | Attribute::CONFIGURABLE,
    )
    .map_err(|e| JsTracerError::Engine(e.to_string()))
}
