//! The objects a tracer function receives: `log` (with `op`, `stack`, `memory`, `contract`),
//! `db`, `frame` and `frameResult`.
//!
//! They are built once per tracer and reused for every call, as geth does; their methods read
//! [`Shared`], which the inspector refreshes before each call. Stack and memory are not copied
//! per step: the methods read the interpreter through a pointer that is set only while a tracer
//! function runs. Because `step` is delivered after the opcode ran (its cost is known only
//! then), the views present the state *before* the opcode: the stack's top items the opcode
//! consumed and the memory bytes it overwrote were saved in the `step` hook.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use alloy_primitives::{Address, Bytes, B256, U256};
use boa_engine::object::{JsObject, ObjectInitializer};
use boa_engine::property::Attribute;
use boa_engine::{
    js_string, Context, JsError, JsNativeError, JsResult, JsString, JsValue, NativeFunction,
};
use revm::bytecode::opcode::OpCode;
use revm::interpreter::interpreter_types::MemoryTr;
use revm::interpreter::Interpreter;

use super::bigint;
use super::buffers::{bytes_to_address, from_buf, int, to_buf};
use crate::geth::opcode::op_name;

/// geth refuses to zero-pad a memory slice by more than this (`memoryPadLimit`).
pub const MEMORY_PAD_LIMIT: i64 = 1024 * 1024;

/// The pre-opcode view of one step.
#[derive(Default)]
pub struct StepData {
    pub pc: u64,
    pub op: u8,
    pub gas: u64,
    pub cost: u64,
    pub depth: u64,
    pub refund: u64,
    pub error: Option<String>,
    /// Stack height before the opcode.
    pub stack_len: usize,
    /// The top stack items before the opcode (bottom → top), as many as it consumes.
    pub saved: Vec<U256>,
    /// Memory size before the opcode.
    pub mem_len: usize,
    /// Bytes the opcode overwrote, as they were, starting at `overlay_at`.
    pub overlay_at: usize,
    pub overlay: Vec<u8>,
    /// The current frame's call data, address, caller and value.
    pub input: Bytes,
    pub address: Address,
    pub caller: Address,
    pub value: U256,
}

/// A sub-call as `enter` sees it.
pub struct FrameData {
    /// What `getType()` names: the opcode that made the frame.
    pub kind: OpCode,
    pub from: Address,
    pub to: Address,
    pub input: Bytes,
    pub gas: u64,
    pub value: Option<U256>,
}

impl Default for FrameData {
    fn default() -> Self {
        FrameData {
            kind: OpCode::CALL,
            from: Address::ZERO,
            to: Address::ZERO,
            input: Bytes::new(),
            gas: 0,
            value: None,
        }
    }
}

/// A finished sub-call as `exit` sees it.
#[derive(Default)]
pub struct FrameResultData {
    pub gas_used: u64,
    pub output: Bytes,
    pub error: Option<String>,
}

/// What `db` can ask: the state the tracer points it at for one call ([`call_with`]).
///
/// [`call_with`]: super::call_with
pub trait Db {
    fn balance(&mut self, a: Address) -> U256;
    fn nonce(&mut self, a: Address) -> u64;
    fn code(&mut self, a: Address) -> Bytes;
    fn storage(&mut self, a: Address, slot: U256) -> U256;
    fn exists(&mut self, a: Address) -> bool;
}

/// What the host objects read; written by the inspector before each tracer call.
pub struct Shared {
    pub step: RefCell<StepData>,
    pub frame: RefCell<FrameData>,
    pub frame_result: RefCell<FrameResultData>,
    /// The interpreter of the current step; null outside `step`/`fault`.
    pub interp: Cell<*const Interpreter>,
    /// State access for `db`; null outside a tracer call.
    pub reader: Cell<Option<*mut (dyn Db + 'static)>>,
    /// An error JavaScript cannot catch (geth interrupts the VM for these).
    pub fatal: RefCell<Option<String>>,
    /// `result`'s `ctx`, while a natively evaluated `result` runs.
    pub tx: RefCell<Option<TxContext>>,
}

impl Shared {
    pub fn new() -> Rc<Self> {
        Rc::new(Shared {
            step: RefCell::default(),
            frame: RefCell::default(),
            frame_result: RefCell::default(),
            interp: Cell::new(std::ptr::null()),
            reader: Cell::new(None),
            fatal: RefCell::new(None),
            tx: RefCell::new(None),
        })
    }

    fn interp(&self) -> Option<&Interpreter> {
        // SAFETY: the pointer is set from a live `&mut Interpreter` only for the duration of a
        // tracer call made inside an inspector hook, and reset to null before the hook returns;
        // the hook does not touch the interpreter while JavaScript runs.
        unsafe { self.interp.get().as_ref() }
    }

    pub(crate) fn with_reader<T>(&self, f: impl FnOnce(&mut dyn Db) -> T) -> Option<T> {
        // SAFETY: as for `interp`: valid only during the tracer call that set it.
        self.reader.get().map(|p| f(unsafe { &mut *p }))
    }

    /// Stack item `i` from the top, as it was before the opcode.
    pub(crate) fn peek(&self, i: usize) -> Option<U256> {
        let s = self.step.borrow();
        if i >= s.stack_len {
            return None;
        }
        let k = s.saved.len();
        if i < k {
            return Some(s.saved[k - 1 - i]);
        }
        self.interp()
            .and_then(|it| it.stack.data().get(s.stack_len - 1 - i).copied())
    }

    /// `len` bytes at `off` of the pre-opcode memory, zero beyond its end.
    pub(crate) fn memory(&self, off: usize, len: usize) -> Vec<u8> {
        let s = self.step.borrow();
        let mut out = vec![0u8; len];
        let end = off.saturating_add(len).min(s.mem_len);
        if off < end {
            if let Some(it) = self.interp() {
                let mem = it.memory.slice(off..end);
                out[..end - off].copy_from_slice(&mem);
            }
            let (oa, ob) = (s.overlay_at, s.overlay_at + s.overlay.len());
            let (a, b) = (off.max(oa), end.min(ob));
            if a < b {
                out[a - off..b - off].copy_from_slice(&s.overlay[a - oa..b - oa]);
            }
        }
        out
    }
}

/// Records an error JavaScript cannot catch and returns it as a thrown error.
pub fn fail(shared: &Shared, msg: String) -> JsError {
    *shared.fatal.borrow_mut() = Some(msg.clone());
    JsNativeError::error().with_message(msg).into()
}

/// A native function from a closure over Rust data.
pub fn native<F>(f: F) -> NativeFunction
where
    F: Fn(&JsValue, &[JsValue], &mut Context) -> JsResult<JsValue> + 'static,
{
    // SAFETY: the closures capture only Rust values (`Rc<Shared>`, addresses); no GC-managed
    // value is hidden from the collector.
    unsafe { NativeFunction::from_closure(f) }
}

fn big(v: U256, ctx: &mut Context) -> JsResult<JsValue> {
    bigint::make(v, ctx)
}

fn opt_str(s: &Option<String>) -> JsValue {
    match s {
        Some(e) => js_string!(e.as_str()).into(),
        None => JsValue::undefined(),
    }
}

macro_rules! method {
    ($init:expr, $name:literal, $len:expr, $sh:ident, |$args:ident, $ctx:ident| $body:expr) => {{
        let $sh = $sh.clone();
        $init.function(
            native(move |_, $args, $ctx| {
                let _ = &$args;
                $body
            }),
            js_string!($name),
            $len,
        );
    }};
}

/// Builds `log` with its `op`, `stack`, `memory` and `contract` members.
pub fn make_log(sh: &Rc<Shared>, ctx: &mut Context) -> JsResult<JsObject> {
    let mut o = ObjectInitializer::new(ctx);
    method!(o, "toNumber", 0, sh, |a, _c| Ok(sh.step.borrow().op.into()));
    // Names are made once a thread: `op.toString()` runs on nearly every step of many scripts,
    // and every tracer has a `log`.
    thread_local! {
        static NAMES: Rc<[JsString]> = (0..=255u8).map(|op| js_string!(op_name(op))).collect();
    }
    let names = NAMES.with(Rc::clone);
    {
        let sh = sh.clone();
        o.function(
            native(move |_, _, _| Ok(names[sh.step.borrow().op as usize].clone().into())),
            js_string!("toString"),
            0,
        );
    }
    method!(o, "isPush", 0, sh, |a, _c| {
        let op = sh.step.borrow().op;
        Ok(OpCode::new(op).is_some_and(|c| c.is_push()).into())
    });
    let op = o.build();

    let mut o = ObjectInitializer::new(ctx);
    method!(o, "length", 0, sh, |a, _c| Ok(sh
        .step
        .borrow()
        .stack_len
        .into()));
    method!(o, "peek", 1, sh, |a, c| {
        let i = int(a, 0, c)?;
        let len = sh.step.borrow().stack_len;
        match (i >= 0).then(|| sh.peek(i as usize)).flatten() {
            Some(v) => big(v, c),
            None => Err(fail(
                &sh,
                format!("tracer accessed out of bound stack: size {len}, index {i}"),
            )),
        }
    });
    let stack = o.build();

    let mut o = ObjectInitializer::new(ctx);
    method!(o, "length", 0, sh, |a, _c| Ok(sh
        .step
        .borrow()
        .mem_len
        .into()));
    method!(o, "slice", 2, sh, |a, c| {
        let (begin, end) = (int(a, 0, c)?, int(a, 1, c)?);
        if begin == end {
            return to_buf(&[], c);
        }
        if end < begin || begin < 0 {
            return Err(fail(
                &sh,
                format!("tracer accessed out of bound memory: offset {begin}, end {end}"),
            ));
        }
        let len = sh.step.borrow().mem_len as i64;
        let padding = end - len;
        if padding > MEMORY_PAD_LIMIT {
            return Err(fail(
                &sh,
                format!("reached limit for padding memory slice: {padding}"),
            ));
        }
        to_buf(&sh.memory(begin as usize, (end - begin) as usize), c)
    });
    method!(o, "getUint", 1, sh, |a, c| {
        let off = int(a, 0, c)?;
        let len = sh.step.borrow().mem_len;
        if off < 0 || (len as i64) < off + 32 {
            return Err(fail(
                &sh,
                format!(
                    "tracer accessed out of bound memory: available {len}, offset {off}, size 32"
                ),
            ));
        }
        let w = sh.memory(off as usize, 32);
        big(U256::from_be_slice(&w), c)
    });
    let memory = o.build();

    let mut o = ObjectInitializer::new(ctx);
    method!(o, "getCaller", 0, sh, |a, c| to_buf(
        sh.step.borrow().caller.as_slice(),
        c
    ));
    method!(o, "getAddress", 0, sh, |a, c| to_buf(
        sh.step.borrow().address.as_slice(),
        c
    ));
    method!(o, "getValue", 0, sh, |a, c| {
        let v = sh.step.borrow().value;
        big(v, c)
    });
    method!(o, "getInput", 0, sh, |a, c| {
        let input = sh.step.borrow().input.clone();
        to_buf(&input, c)
    });
    let contract = o.build();

    let mut o = ObjectInitializer::new(ctx);
    let ro = Attribute::READONLY | Attribute::NON_ENUMERABLE | Attribute::PERMANENT;
    o.property(js_string!("op"), op, ro)
        .property(js_string!("stack"), stack, ro)
        .property(js_string!("memory"), memory, ro)
        .property(js_string!("contract"), contract, ro);
    method!(o, "getPC", 0, sh, |a, _c| Ok(
        (sh.step.borrow().pc as f64).into()
    ));
    method!(o, "getGas", 0, sh, |a, _c| Ok((sh.step.borrow().gas
        as f64)
        .into()));
    method!(o, "getCost", 0, sh, |a, _c| Ok((sh.step.borrow().cost
        as f64)
        .into()));
    method!(o, "getDepth", 0, sh, |a, _c| Ok((sh.step.borrow().depth
        as f64)
        .into()));
    method!(o, "getRefund", 0, sh, |a, _c| Ok((sh.step.borrow().refund
        as f64)
        .into()));
    method!(o, "getError", 0, sh, |a, _c| Ok(opt_str(
        &sh.step.borrow().error
    )));
    Ok(o.build())
}

fn addr_arg(args: &[JsValue], ctx: &mut Context) -> JsResult<Address> {
    let b = from_buf(&args.first().cloned().unwrap_or_default(), false, ctx)?;
    Ok(bytes_to_address(&b))
}

fn no_db() -> JsError {
    JsNativeError::error()
        .with_message("db is only available inside a tracer call")
        .into()
}

/// Builds `db`: reads of the state as the transaction has left it so far.
pub fn make_db(sh: &Rc<Shared>, ctx: &mut Context) -> JsResult<JsObject> {
    let mut o = ObjectInitializer::new(ctx);
    method!(o, "getBalance", 1, sh, |a, c| {
        let addr = addr_arg(a, c)?;
        let v = sh.with_reader(|r| r.balance(addr)).ok_or_else(no_db)?;
        big(v, c)
    });
    method!(o, "getNonce", 1, sh, |a, c| {
        let addr = addr_arg(a, c)?;
        let n = sh.with_reader(|r| r.nonce(addr)).ok_or_else(no_db)?;
        Ok((n as f64).into())
    });
    method!(o, "getCode", 1, sh, |a, c| {
        let addr = addr_arg(a, c)?;
        let code = sh.with_reader(|r| r.code(addr)).ok_or_else(no_db)?;
        to_buf(&code, c)
    });
    method!(o, "getState", 2, sh, |a, c| {
        let addr = addr_arg(a, c)?;
        let slot = from_buf(&a.get(1).cloned().unwrap_or_default(), false, c)?;
        let slot = U256::from_be_bytes(super::buffers::bytes_to_word(&slot).0);
        let v = sh
            .with_reader(|r| r.storage(addr, slot))
            .ok_or_else(no_db)?;
        to_buf(&v.to_be_bytes::<32>(), c)
    });
    method!(o, "exists", 1, sh, |a, c| {
        let addr = addr_arg(a, c)?;
        Ok(sh.with_reader(|r| r.exists(addr)).ok_or_else(no_db)?.into())
    });
    Ok(o.build())
}

/// Builds `frame` (for `enter`) and `frameResult` (for `exit`).
pub fn make_frames(sh: &Rc<Shared>, ctx: &mut Context) -> JsResult<(JsObject, JsObject)> {
    let mut o = ObjectInitializer::new(ctx);
    method!(o, "getType", 0, sh, |a, _c| Ok(js_string!(sh
        .frame
        .borrow()
        .kind
        .as_str())
    .into()));
    method!(o, "getFrom", 0, sh, |a, c| to_buf(
        sh.frame.borrow().from.as_slice(),
        c
    ));
    method!(o, "getTo", 0, sh, |a, c| to_buf(
        sh.frame.borrow().to.as_slice(),
        c
    ));
    method!(o, "getInput", 0, sh, |a, c| {
        let input = sh.frame.borrow().input.clone();
        to_buf(&input, c)
    });
    method!(o, "getGas", 0, sh, |a, _c| Ok((sh.frame.borrow().gas
        as f64)
        .into()));
    method!(o, "getValue", 0, sh, |a, c| {
        let v = sh.frame.borrow().value;
        match v {
            Some(v) => big(v, c),
            None => Ok(JsValue::undefined()),
        }
    });
    let frame = o.build();

    let mut o = ObjectInitializer::new(ctx);
    method!(o, "getGasUsed", 0, sh, |a, _c| Ok(
        (sh.frame_result.borrow().gas_used as f64).into()
    ));
    method!(o, "getOutput", 0, sh, |a, c| {
        let out = sh.frame_result.borrow().output.clone();
        to_buf(&out, c)
    });
    method!(o, "getError", 0, sh, |a, _c| Ok(opt_str(
        &sh.frame_result.borrow().error
    )));
    Ok((frame, o.build()))
}

/// A `bigInt` for values the inspector hands over (ctx.value, ctx.gasPrice).
pub fn big_value(v: U256, ctx: &mut Context) -> JsResult<JsValue> {
    big(v, ctx)
}

/// What `ctx` holds in `result(ctx, db)`.
#[derive(Clone, Debug, Default)]
pub struct TxContext {
    pub create: bool,
    pub from: Address,
    pub to: Address,
    pub input: Bytes,
    pub gas: u64,
    pub gas_price: U256,
    pub value: U256,
    pub block: u64,
    pub coinbase: Address,
    pub output: Bytes,
    pub error: Option<String>,
    pub gas_used: u64,
    pub tx_hash: Option<B256>,
    pub block_hash: Option<B256>,
    pub tx_index: Option<u64>,
}

impl TxContext {
    /// geth's `ctx.type`: CREATE for a deployment (CREATE2 never starts a transaction).
    pub fn kind(&self) -> OpCode {
        if self.create {
            OpCode::CREATE
        } else {
            OpCode::CALL
        }
    }
}
