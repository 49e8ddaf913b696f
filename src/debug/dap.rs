//! `chaintrace dap`: the Debug Adapter Protocol (microsoft/debug-adapter-protocol) over a
//! [`Session`] — the same replay, source maps, names and step model as the terminal debugger.
//!
//! Messages are framed by `Content-Length` headers, one request at a time, answered in order.
//! A replayed transaction is a recording: stepping back costs what stepping forward does (the
//! model moves an index; the machine at the new step is read by one replay up to it), so the
//! adapter announces `supportsStepBack`.
//!
//! One thread (the transaction), id 1. A stop's stack frames are the Solidity stack `tx`
//! prints, innermost first, internal functions and external frames alike; each frame's scopes
//! are its arguments (values where the compiler's layout makes them exact, as `tx` shows
//! them), the EVM at the step (pc, opcode, gas, stack, memory, return data) and the storage
//! the frame's account read and wrote so far. Sources not on disk (a fixture's build info)
//! are served by `sourceReference`.

use std::collections::BTreeMap;
use std::io::{self, BufRead, Read, Write};

use serde_json::{json, Value};

use super::model::Breakpoint;
use super::{variables, Session};
use crate::render::source::StackEntry;
use crate::trace::steps::StepView;

/// The largest message read (a launch configuration or a breakpoint list is far smaller).
const MAX_MESSAGE: usize = 16 << 20;
/// The longest header line read.
const MAX_HEADER: u64 = 8 << 10;
/// The one thread.
const THREAD: i64 = 1;

/// Opens a session for a `launch` request's arguments, or says why it cannot.
pub type Launcher<'a> = &'a mut dyn FnMut(&Value) -> Result<Session, String>;

/// One message read: a request, a malformed one (its text), or the end of input.
enum Incoming {
    Message(Value),
    Malformed(String),
    /// The framing itself is lost (a length past the limit, a cut body): nothing more can be
    /// read.
    Lost(String),
}

fn read_message(input: &mut impl BufRead) -> io::Result<Option<Incoming>> {
    let mut length: Option<usize> = None;
    let mut bad_header = None;
    let mut any = false;
    loop {
        let mut line = String::new();
        let n = input.by_ref().take(MAX_HEADER).read_line(&mut line)?;
        if n == 0 {
            return Ok(any.then(|| Incoming::Lost("the input ended inside a header".into())));
        }
        any = true;
        let text = line.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if length.is_some() || bad_header.is_some() {
                break;
            }
            any = false;
            continue;
        }
        match text.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("content-length") => {
                match value.trim().parse::<usize>() {
                    Ok(l) => length = Some(l),
                    Err(_) => bad_header = Some(format!("a bad Content-Length: {}", value.trim())),
                }
            }
            Some(_) => {}
            None => bad_header = Some(format!("a header line without ':': {text:?}")),
        }
    }
    let Some(length) = length else {
        return Ok(Some(Incoming::Lost(
            bad_header.unwrap_or_else(|| "a message without Content-Length".into()),
        )));
    };
    if length > MAX_MESSAGE {
        return Ok(Some(Incoming::Lost(format!(
            "a message of {length} bytes (at most {MAX_MESSAGE})"
        ))));
    }
    let mut body = vec![0u8; length];
    if input.read_exact(&mut body).is_err() {
        return Ok(Some(Incoming::Lost(
            "the input ended inside a message".into(),
        )));
    }
    Ok(Some(match serde_json::from_slice::<Value>(&body) {
        Ok(v) if v.is_object() => Incoming::Message(v),
        Ok(_) => Incoming::Malformed("a message that is not a JSON object".into()),
        Err(e) => Incoming::Malformed(format!("a message that is not JSON: {e}")),
    }))
}

/// A stack frame of the current stop: the open frame it belongs to and its entry.
struct Frame {
    open: usize,
    entry: Option<StackEntry>,
}

/// What a `variablesReference` names.
#[derive(Clone, Copy)]
enum Vars {
    Arguments(usize),
    Returned(usize),
    Evm,
    Stack,
    Memory,
    ReturnData,
    Storage(usize),
}

struct Adapter<'l, W: Write> {
    out: W,
    seq: i64,
    launch: Launcher<'l>,
    session: Option<Session>,
    /// The step the debugger is at, and the machine there.
    at: usize,
    view: Option<StepView>,
    frames: Vec<Frame>,
    vars: Vec<Vars>,
    /// Line breakpoints by the path the client gave, function breakpoints, the `revert` filter.
    lines: BTreeMap<String, Vec<usize>>,
    functions: Vec<String>,
    exceptions: bool,
    stop_on_entry: bool,
    /// Sources served by reference: (path, text); a reference is its index + 1.
    sources: Vec<(String, String)>,
    done: bool,
}

/// Serves one client on `input`/`output` until it disconnects or the input ends.
pub fn serve(input: impl BufRead, output: impl Write, launch: Launcher<'_>) -> io::Result<()> {
    let mut input = input;
    let mut a = Adapter {
        out: output,
        seq: 0,
        launch,
        session: None,
        at: 0,
        view: None,
        frames: Vec::new(),
        vars: Vec::new(),
        lines: BTreeMap::new(),
        functions: Vec::new(),
        exceptions: false,
        stop_on_entry: false,
        sources: Vec::new(),
        done: false,
    };
    while !a.done {
        match read_message(&mut input)? {
            None => break,
            Some(Incoming::Message(m)) => a.handle(&m)?,
            Some(Incoming::Malformed(why)) => a.output(&format!("ignored {why}"))?,
            Some(Incoming::Lost(why)) => {
                a.output(&format!("stopped reading: {why}"))?;
                break;
            }
        }
    }
    Ok(())
}

impl<W: Write> Adapter<'_, W> {
    fn send(&mut self, mut m: Value) -> io::Result<()> {
        self.seq += 1;
        m["seq"] = json!(self.seq);
        let body = serde_json::to_vec(&m)?;
        write!(self.out, "Content-Length: {}\r\n\r\n", body.len())?;
        self.out.write_all(&body)?;
        self.out.flush()
    }

    fn event(&mut self, event: &str, body: Value) -> io::Result<()> {
        self.send(json!({"type": "event", "event": event, "body": body}))
    }

    fn output(&mut self, text: &str) -> io::Result<()> {
        self.event(
            "output",
            json!({"category": "console", "output": format!("{text}\n")}),
        )
    }

    fn respond(&mut self, req: &Value, result: Result<Value, String>) -> io::Result<()> {
        let mut m = json!({
            "type": "response",
            "request_seq": req.get("seq").cloned().unwrap_or(json!(0)),
            "command": req.get("command").cloned().unwrap_or(json!("")),
            "success": result.is_ok(),
        });
        match result {
            Ok(body) if !body.is_null() => m["body"] = body,
            Ok(_) => {}
            Err(message) => {
                m["body"] = json!({"error": {"id": 1, "format": message}});
                m["message"] = json!(message);
            }
        }
        self.send(m)
    }

    fn handle(&mut self, req: &Value) -> io::Result<()> {
        let command = req.get("command").and_then(Value::as_str).unwrap_or("");
        let args = req.get("arguments").cloned().unwrap_or(json!({}));
        if req.get("type").and_then(Value::as_str) != Some("request") {
            return self.output(&format!(
                "ignored a message that is not a request: {command}"
            ));
        }
        let result = match command {
            "initialize" => Ok(capabilities()),
            "launch" => return self.launch(req, &args),
            "setBreakpoints" => self.set_breakpoints(&args),
            "setFunctionBreakpoints" => self.set_function_breakpoints(&args),
            "setExceptionBreakpoints" => {
                let filters = args.get("filters").and_then(Value::as_array);
                self.exceptions = filters.is_some_and(|f| f.iter().any(|x| x == "revert"));
                Ok(json!({"breakpoints": []}))
            }
            "configurationDone" => return self.configuration_done(req),
            "threads" => Ok(json!({"threads": [{"id": THREAD, "name": "transaction"}]})),
            "stackTrace" => self.stack_trace(),
            "scopes" => self.scopes(&args),
            "variables" => self.variables(&args),
            "evaluate" => self.evaluate(&args),
            "source" => self.source(&args),
            "continue" | "next" | "stepIn" | "stepOut" | "stepBack" | "reverseContinue" => {
                return self.go(req, command, &args);
            }
            "pause" => Ok(Value::Null),
            "disconnect" | "terminate" => {
                self.done = true;
                Ok(Value::Null)
            }
            other => Err(format!("unknown command: {other}")),
        };
        self.respond(req, result)
    }

    fn session(&self) -> Result<&Session, String> {
        self.session
            .as_ref()
            .ok_or_else(|| "no transaction is open: send launch first".to_string())
    }

    fn launch(&mut self, req: &Value, args: &Value) -> io::Result<()> {
        if self.session.is_some() {
            return self.respond(req, Err("a transaction is already open".into()));
        }
        match (self.launch)(args) {
            Ok(s) => {
                self.stop_on_entry = args
                    .get("stopOnEntry")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                let title = s.title.clone();
                let notes = s.notes.clone();
                self.session = Some(s);
                self.respond(req, Ok(Value::Null))?;
                self.output(&format!("chaintrace: {title}"))?;
                for n in notes {
                    self.output(&n)?;
                }
                // Configuration requests are accepted from now on.
                self.event("initialized", json!({}))
            }
            Err(e) => self.respond(req, Err(e)),
        }
    }

    /// The session's breakpoints from the client's lists (line paths matched as the model
    /// matches them: the build's path or its end).
    fn apply_breakpoints(&mut self) {
        let mut all: Vec<Breakpoint> = Vec::new();
        for (path, lines) in &self.lines {
            for &line in lines {
                all.push(Breakpoint::Line {
                    file: path.clone(),
                    line,
                });
            }
        }
        all.extend(self.functions.iter().cloned().map(Breakpoint::Function));
        if let Some(s) = &mut self.session {
            s.model.breakpoints = all;
        }
    }

    /// Whether a breakpoint can stop anywhere in the transaction.
    fn verified(&mut self, b: &Breakpoint) -> bool {
        self.session.as_mut().is_some_and(|s| s.model.reaches(b))
    }

    fn set_breakpoints(&mut self, args: &Value) -> Result<Value, String> {
        let source = args.get("source").cloned().unwrap_or(json!({}));
        let path = source
            .get("path")
            .or_else(|| source.get("name"))
            .and_then(Value::as_str)
            .ok_or("setBreakpoints: the source has no path")?
            .to_string();
        let lines: Vec<usize> = args
            .get("breakpoints")
            .and_then(Value::as_array)
            .map(|b| {
                b.iter()
                    .filter_map(|b| b.get("line").and_then(Value::as_u64))
                    .map(|l| l as usize)
                    .collect()
            })
            .unwrap_or_default();
        let mut out = Vec::new();
        for &line in &lines {
            let b = Breakpoint::Line {
                file: client_path(&path),
                line,
            };
            let ok = self.verified(&b);
            let mut r = json!({"verified": ok, "line": line, "source": source});
            if !ok {
                r["message"] = json!(format!(
                    "{}:{line} is not a line this transaction runs (or not in its build)",
                    client_path(&path)
                ));
            }
            out.push(r);
        }
        self.lines.insert(client_path(&path), lines);
        self.apply_breakpoints();
        Ok(json!({"breakpoints": out}))
    }

    fn set_function_breakpoints(&mut self, args: &Value) -> Result<Value, String> {
        let names: Vec<String> = args
            .get("breakpoints")
            .and_then(Value::as_array)
            .map(|b| {
                b.iter()
                    .filter_map(|b| b.get("name").and_then(Value::as_str))
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let mut out = Vec::new();
        for name in &names {
            let ok = self.verified(&Breakpoint::Function(name.clone()));
            let mut r = json!({"verified": ok});
            if !ok {
                r["message"] = json!(format!(
                    "{name}: no function of that name is entered in this transaction"
                ));
            }
            out.push(r);
        }
        self.functions = names;
        self.apply_breakpoints();
        Ok(json!({"breakpoints": out}))
    }

    fn configuration_done(&mut self, req: &Value) -> io::Result<()> {
        if self.session.is_none() {
            return self.respond(req, Err("no transaction is open: send launch first".into()));
        }
        self.respond(req, Ok(Value::Null))?;
        if self.stop_on_entry {
            self.stop(0, "entry", None)
        } else {
            self.run(true)
        }
    }

    /// Where the failure is, when the `revert` filter is on.
    fn exception_step(&self) -> Option<usize> {
        self.exceptions
            .then(|| self.session.as_ref()?.model.failure_step())
            .flatten()
    }

    /// Runs forwards (or backwards) to the next breakpoint or, with the `revert` filter, the
    /// failure; forwards past both the transaction ends, backwards it stops at its entry.
    fn run(&mut self, forward: bool) -> io::Result<()> {
        let Some(s) = &self.session else {
            return Ok(());
        };
        let at = self.at;
        let breakpoint = s.model.breakpoint(at, forward);
        let exception = self
            .exception_step()
            .filter(|&e| if forward { e > at } else { e < at });
        let next = match (breakpoint, exception) {
            (Some(b), Some(e)) if forward => Some(b.min(e)),
            (Some(b), Some(e)) => Some(b.max(e)),
            (b, e) => b.or(e),
        };
        match next {
            Some(j) if Some(j) == exception => {
                let text = self.failure_text();
                self.stop(j, "exception", text)
            }
            Some(j) => self.stop(j, "breakpoint", None),
            None if forward => {
                self.event("exited", json!({"exitCode": 0}))?;
                self.event("terminated", json!({}))
            }
            None => self.stop(0, "entry", None),
        }
    }

    /// What failed, as `tx` says it.
    fn failure_text(&self) -> Option<String> {
        self.session.as_ref()?.failure_text()
    }

    fn go(&mut self, req: &Value, command: &str, args: &Value) -> io::Result<()> {
        let Some(s) = &self.session else {
            return self.respond(req, Err("no transaction is open: send launch first".into()));
        };
        let at = self.at;
        // `granularity: instruction` (supportsSteppingGranularity): one EVM step.
        let instruction = args.get("granularity").and_then(Value::as_str) == Some("instruction");
        let last = s.model.len().saturating_sub(1);
        let step = match command {
            "next" | "stepIn" if instruction => Some((at + 1).min(last)),
            "stepBack" if instruction => Some(at.saturating_sub(1)),
            "next" => Some(s.model.step_over(at)),
            "stepIn" => Some(s.model.next_line(at)),
            "stepOut" => Some(s.model.step_out(at)),
            "stepBack" => Some(s.model.prev_line(at)),
            _ => None,
        };
        let body = match command {
            "continue" => json!({"allThreadsContinued": true}),
            _ => Value::Null,
        };
        self.respond(req, Ok(body))?;
        match (command, step) {
            ("continue", _) => self.run(true),
            ("reverseContinue", _) => self.run(false),
            (_, Some(j)) => self.stop(j, "step", None),
            _ => Ok(()),
        }
    }

    /// Stops at step `j`: the machine read there, the frames computed, `stopped` sent.
    fn stop(&mut self, j: usize, reason: &str, text: Option<String>) -> io::Result<()> {
        self.at = j;
        self.frames.clear();
        self.vars.clear();
        let Some(s) = &self.session else {
            return Ok(());
        };
        match s.view(j) {
            Ok(v) => {
                for (open, entries) in s.stack(&v) {
                    if entries.is_empty() {
                        self.frames.push(Frame { open, entry: None });
                    }
                    for e in entries {
                        self.frames.push(Frame {
                            open,
                            entry: Some(e),
                        });
                    }
                }
                self.view = Some(v);
            }
            Err(e) => {
                self.view = None;
                self.output(&format!("step {j}: {e}"))?;
            }
        }
        let mut body = json!({"reason": reason, "threadId": THREAD, "allThreadsStopped": true});
        if let Some(t) = text {
            body["description"] = json!(t);
            body["text"] = json!(t);
        }
        self.event("stopped", body)
    }

    /// A DAP source for a path of the build: on disk when it is there, else by reference.
    fn source_of(&mut self, path: &str) -> Value {
        let name = path.rsplit('/').next().unwrap_or(path);
        if let Ok(full) = std::fs::canonicalize(path) {
            return json!({"name": name, "path": full.display().to_string()});
        }
        let known = self.sources.iter().position(|(p, _)| p == path);
        let reference = match known {
            Some(i) => i + 1,
            None => {
                let text = self.text_of(path).unwrap_or_default();
                self.sources.push((path.to_string(), text));
                self.sources.len()
            }
        };
        json!({"name": name, "path": path, "sourceReference": reference})
    }

    /// The text of a build's source, from the maps of the transaction's frames.
    fn text_of(&self, path: &str) -> Option<String> {
        let s = self.session.as_ref()?;
        (0..s.model.log.frames.len() as u32)
            .filter_map(|f| s.model.map(f))
            .find_map(|m| m.file(path)?.text().map(str::to_string))
    }

    fn stack_trace(&mut self) -> Result<Value, String> {
        let s = self.session()?;
        let v = self.view.as_ref().ok_or("not stopped")?;
        let mut named = Vec::new();
        for f in &self.frames {
            let frame = &s.model.log.frames[v.open[f.open].frame as usize];
            named.push(match &f.entry {
                Some(e) => (
                    format!("{}.{}({})", e.contract, e.function, args_text(e)),
                    Some(e.location.clone()),
                ),
                None => (super::panes::frame_name(s, frame), None),
            });
        }
        let mut out = Vec::new();
        for (id, (name, loc)) in named.into_iter().enumerate() {
            let mut f = json!({"id": id + 1, "name": name, "line": 0, "column": 0});
            if let Some(l) = loc.filter(|l| !l.changed) {
                f["source"] = self.source_of(&l.file);
                f["line"] = json!(l.line);
                f["column"] = json!(l.column);
            } else {
                f["presentationHint"] = json!("subtle");
            }
            out.push(f);
        }
        let total = out.len();
        Ok(json!({"stackFrames": out, "totalFrames": total}))
    }

    fn frame_arg(&self, args: &Value) -> Result<usize, String> {
        let id = args.get("frameId").and_then(Value::as_u64).unwrap_or(1) as usize;
        (id >= 1 && id <= self.frames.len())
            .then_some(id - 1)
            .ok_or_else(|| format!("no frame {id} at this stop"))
    }

    fn reference(&mut self, v: Vars) -> usize {
        self.vars.push(v);
        self.vars.len()
    }

    fn scopes(&mut self, args: &Value) -> Result<Value, String> {
        self.session()?;
        let k = self.frame_arg(args)?;
        let open = self.frames[k].open;
        let mut scopes = Vec::new();
        for (name, v, hint) in [
            ("Arguments", Vars::Arguments(k), "arguments"),
            ("Return values", Vars::Returned(open), "returnValue"),
            ("Storage", Vars::Storage(open), "registers"),
            ("EVM", Vars::Evm, "registers"),
            ("Stack", Vars::Stack, "registers"),
            ("Memory", Vars::Memory, "registers"),
            ("Return data", Vars::ReturnData, "registers"),
        ] {
            let r = self.reference(v);
            scopes.push(json!({"name": name, "presentationHint": hint,
                "variablesReference": r, "expensive": false}));
        }
        Ok(json!({"scopes": scopes}))
    }

    fn variables(&mut self, args: &Value) -> Result<Value, String> {
        let s = self.session()?;
        let r = args
            .get("variablesReference")
            .and_then(Value::as_u64)
            .unwrap_or(0) as usize;
        let which = *self
            .vars
            .get(r.wrapping_sub(1))
            .ok_or_else(|| format!("no variables {r} at this stop"))?;
        let v = self.view.as_ref().ok_or("not stopped")?;
        let pairs: Vec<(String, String)> = match which {
            Vars::Arguments(k) => self.frames[k]
                .entry
                .iter()
                .flat_map(variables::arguments)
                .map(|a| (a.name, a.value))
                .collect(),
            Vars::Returned(open) => variables::returns(s, v, open)
                .into_iter()
                .map(|a| (a.name, a.value))
                .collect(),
            Vars::Evm => {
                let frame = &s.model.log.frames[v.open.last().map_or(0, |o| o.frame) as usize];
                vec![
                    ("step".into(), v.step.to_string()),
                    ("pc".into(), v.pc.to_string()),
                    (
                        "opcode".into(),
                        crate::geth::opcode::op_name(v.op).to_string(),
                    ),
                    ("gas".into(), v.gas.to_string()),
                    (
                        "cost".into(),
                        v.cost.map_or("(did not finish)".into(), |c| c.to_string()),
                    ),
                    ("refund".into(), v.refund.to_string()),
                    ("depth".into(), frame.depth.to_string()),
                    ("address".into(), frame.address.to_checksum(None)),
                ]
            }
            Vars::Stack => v
                .stack
                .iter()
                .rev()
                .enumerate()
                .map(|(i, w)| (format!("[{i}]"), format!("{w:#x}")))
                .collect(),
            Vars::Memory => v
                .memory
                .chunks(32)
                .enumerate()
                .map(|(i, c)| {
                    (
                        format!("{:#06x}", i * 32),
                        format!("0x{}", alloy_primitives::hex::encode(c)),
                    )
                })
                .collect(),
            Vars::ReturnData => vec![(
                format!("{} bytes", v.return_data.len()),
                format!("0x{}", alloy_primitives::hex::encode(&v.return_data)),
            )],
            Vars::Storage(open) => {
                let address = s.model.log.frames[v.open[open].frame as usize].address;
                s.storage_rows(v, address)
            }
        };
        let variables: Vec<Value> = pairs
            .into_iter()
            .map(|(name, value)| json!({"name": name, "value": value, "variablesReference": 0}))
            .collect();
        Ok(json!({ "variables": variables }))
    }

    fn evaluate(&mut self, args: &Value) -> Result<Value, String> {
        self.session()?;
        let expr = args
            .get("expression")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim()
            .to_string();
        let k = self.frame_arg(args)?;
        let found = self.frames[k]
            .entry
            .iter()
            .flat_map(|e| &e.args)
            .find(|a| a.name == expr);
        match found {
            Some(a) => Ok(json!({
                "result": a.value.clone().unwrap_or_else(|| "(not readable)".into()),
                "variablesReference": 0,
            })),
            None => Err(format!("{expr}: not an argument of this frame")),
        }
    }

    fn source(&mut self, args: &Value) -> Result<Value, String> {
        let r = args
            .get("sourceReference")
            .or_else(|| args.get("source").and_then(|s| s.get("sourceReference")))
            .and_then(Value::as_u64)
            .unwrap_or(0) as usize;
        let (_, text) = self
            .sources
            .get(r.wrapping_sub(1))
            .ok_or_else(|| format!("no source {r}"))?;
        Ok(json!({"content": text, "mimeType": "text/x-solidity"}))
    }
}

/// The adapter's capabilities (the `initialize` response's body).
fn capabilities() -> Value {
    json!({
        "supportsConfigurationDoneRequest": true,
        "supportsFunctionBreakpoints": true,
        "supportsStepBack": true,
        "supportsSteppingGranularity": true,
        "supportsEvaluateForHovers": true,
        "supportsTerminateRequest": true,
        "exceptionBreakpointFilters": [
            {"filter": "revert", "label": "Revert", "description":
                "Stop where the transaction failed: its REVERT, INVALID or out-of-gas step",
             "default": true}
        ],
    })
}

/// `code: 48879` for a frame's arguments, names alone where values are not readable.
fn args_text(e: &StackEntry) -> String {
    e.args
        .iter()
        .map(|a| match &a.value {
            Some(v) => format!("{}: {v}", a.name),
            None => a.name.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A path as the model matches it: a client's absolute path is matched by its end.
fn client_path(path: &str) -> String {
    path.replace('\\', "/")
}
