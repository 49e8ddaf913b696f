//! Calls inside hooks: the argument getters (`log.op.toNumber()`, `frame.getType()`, …), the
//! views (`log.stack.peek(i)`, `log.memory.getUint(o)`, `toHex(log.contract.getAddress())`),
//! `toHex` of a frame's buffers, `bigInt(…)`, the methods of strings and `bigInt`s, `push` and
//! `pop`, and the literal's helper functions, inlined.

use boa_engine::ast::declaration::Binding;
use boa_engine::ast::expression::access::PropertyAccess;
use boa_engine::ast::function::{FormalParameterList, FunctionBody};
use boa_engine::ast::Expression;
use boa_engine::interner::Sym;

use super::super::ir::{Buf, Expr, Getter, Inline, Method};
use super::super::value::Key;
use super::{strip, Bind, Compiler, Param, MAX_INLINE};

impl Compiler<'_> {
    pub(super) fn call(&mut self, callee: &Expression, args: &[Expression]) -> Option<Expr> {
        if let Expression::Identifier(id) = strip(callee) {
            if self.global(id.sym(), "bigInt") {
                // `bigInt` is a non-writable, non-configurable global: always the built-in.
                let [arg] = args else {
                    return None;
                };
                self.uses.string_bigint_builtins = true;
                return Some(Expr::BigOf(Box::new(self.expr(arg)?)));
            }
            if self.global(id.sym(), "toWord") {
                let [arg] = args else {
                    return None;
                };
                self.uses.state_fns = true;
                return Some(Expr::ToWord(Box::new(self.expr(arg)?)));
            }
            return self.hex_of_buffer(id.sym(), args);
        }
        let Expression::PropertyAccess(PropertyAccess::Simple(m)) = strip(callee) else {
            return None;
        };
        let method = self.field_name(m.field())?;
        if let Some(e) = self.parse_config(m.target(), &method, args) {
            return e;
        }
        if let Some(e) = self.view_call(m.target(), &method, args) {
            return e;
        }
        if matches!(strip(m.target()), Expression::This(_)) {
            let found = self
                .helpers
                .iter()
                .find(|(n, _, _)| *n == method)
                .map(|(n, p, b)| (n.clone(), *p, *b));
            if let Some((name, Some(formal), Some(body))) = found {
                // A helper outside the subset runs in boa when a hook reaches it.
                return Some(self.inline(name, formal, body, args).unwrap_or_else(|| {
                    self.uses.may_deopt = true;
                    Expr::Deopt
                }));
            }
        }
        let args_ir = self.exprs(args)?;
        // `log.op.toString()` and friends.
        if let Expression::PropertyAccess(PropertyAccess::Simple(inner)) = strip(m.target()) {
            if self.param(inner.target()) == Some(Param::Log)
                && self.field_name(inner.field()).as_deref() == Some("op")
            {
                let g = match method.as_str() {
                    "toNumber" => Getter::OpNumber,
                    "toString" => Getter::OpName,
                    "isPush" => Getter::OpIsPush,
                    _ => return None,
                };
                self.uses.reads_step = true;
                return Some(Expr::Get(g, args_ir));
            }
        }
        if let Some(p) = self.param(m.target()) {
            let g = match (p, method.as_str()) {
                (Param::Log, "getPC") => Getter::Pc,
                (Param::Log, "getGas") => Getter::Gas,
                (Param::Log, "getCost") => Getter::Cost,
                (Param::Log, "getDepth") => Getter::Depth,
                (Param::Log, "getRefund") => Getter::Refund,
                (Param::Log, "getError") => Getter::StepError,
                (Param::Frame, "getType") => Getter::FrameType,
                (Param::Frame, "getGas") => Getter::FrameGas,
                (Param::FrameResult, "getGasUsed") => Getter::ResultGasUsed,
                (Param::FrameResult, "getError") => Getter::ResultError,
                _ => return None,
            };
            self.uses.reads_step |= p == Param::Log;
            return Some(Expr::Get(g, args_ir));
        }
        if method == "push" {
            self.uses.push = true;
            let target = self.expr(m.target())?;
            return Some(Expr::Push(Box::new(target), args_ir));
        }
        if method == "concat" && self.in_result {
            let target = self.expr(m.target())?;
            return Some(Expr::Concat(Box::new(target), args_ir));
        }
        if method == "pop" {
            self.uses.pop = true;
            let target = self.expr(m.target())?;
            return Some(Expr::Pop(Box::new(target), args_ir));
        }
        let which = match method.as_str() {
            "slice" => Method::Slice,
            "toString" => Method::ToString,
            "toJSNumber" => Method::ToJsNumber,
            _ => return None,
        };
        self.uses.string_bigint_builtins = true;
        let target = self.expr(m.target())?;
        Some(Expr::Method(which, Box::new(target), args_ir))
    }

    /// `JSON.parse(config)` in `setup` (the global `JSON`, which nothing replaced: no script
    /// ran before): the configuration parsed before `setup` runs. `Some(None)` for a second
    /// one, `None` when it is not this call.
    fn parse_config(
        &mut self,
        target: &Expression,
        method: &str,
        args: &[Expression],
    ) -> Option<Option<Expr>> {
        let (slot, used) = self.config?;
        let Expression::Identifier(json) = strip(target) else {
            return None;
        };
        if method != "parse" || !self.global(json.sym(), "JSON") {
            return None;
        }
        let [arg] = args else {
            return Some(None);
        };
        if used || self.param(arg) != Some(Param::Config) {
            return Some(None);
        }
        self.config = Some((slot, true));
        Some(Some(Expr::Local(slot)))
    }

    /// `log.stack.peek(i)`, `log.memory.getUint(o)` and `frame.getValue()`: `Some(None)` when
    /// it is one of them but outside the subset, `None` when it is none of them.
    fn view_call(
        &mut self,
        target: &Expression,
        method: &str,
        args: &[Expression],
    ) -> Option<Option<Expr>> {
        if self.param(target) == Some(Param::Frame) && method == "getValue" {
            return Some(args.is_empty().then_some(Expr::FrameValue));
        }
        if self.param(target) == Some(Param::Db) && method == "getState" {
            let [a, b] = args else {
                return Some(None);
            };
            self.uses.views = true;
            self.uses.state_fns = true;
            let (a, b) = (self.expr(a), self.expr(b));
            return Some(
                a.zip(b)
                    .map(|(a, b)| Expr::DbState(Box::new(a), Box::new(b))),
            );
        }
        if method == "getAddress" && args.is_empty() && self.is_log_contract(target) {
            self.uses.views = true;
            return Some(Some(Expr::ContractAddress));
        }
        let Expression::PropertyAccess(PropertyAccess::Simple(inner)) = strip(target) else {
            return None;
        };
        if self.param(inner.target()) != Some(Param::Log) {
            return None;
        }
        let view = self.field_name(inner.field())?;
        let make: fn(Box<Expr>) -> Expr = match (view.as_str(), method) {
            ("stack", "peek") => Expr::Peek,
            ("memory", "getUint") => Expr::MemUint,
            _ => return None,
        };
        let [arg] = args else {
            return Some(None);
        };
        self.uses.views = true;
        Some(self.expr(arg).map(|a| make(Box::new(a))))
    }

    /// Whether `sym` names the global `name` (no local or parameter of that name).
    fn global(&self, sym: Sym, name: &str) -> bool {
        self.lookup(sym).is_none() && self.name(sym).as_deref() == Some(name)
    }

    /// A frame's buffer: a getter called without arguments, or a helper's parameter given one.
    pub(super) fn buf_of(&self, e: &Expression) -> Option<Buf> {
        match strip(e) {
            Expression::Identifier(id) => match self.lookup(id.sym())? {
                Bind::Buf(b) => Some(b),
                _ => None,
            },
            Expression::PropertyAccess(PropertyAccess::Simple(m))
                if self.param(m.target()) == Some(Param::Ctx) =>
            {
                super::detached::ctx_buffer(&self.field_name(m.field())?)
            }
            Expression::Call(c) if c.args().is_empty() => {
                let Expression::PropertyAccess(PropertyAccess::Simple(m)) = strip(c.function())
                else {
                    return None;
                };
                buffer_getter(self.param(m.target())?, &self.field_name(m.field())?)
            }
            _ => None,
        }
    }

    /// `toHex(buffer)` of a frame's buffer (see [`Compiler::buf_of`]; a getter's arguments
    /// are evaluated and ignored), and `toHex(slice(buffer, start, end))`, with the globals
    /// `toHex` and `slice`.
    fn hex_of_buffer(&mut self, callee: Sym, args: &[Expression]) -> Option<Expr> {
        if !self.global(callee, "toHex") {
            return None;
        }
        let [arg] = args else {
            return None;
        };
        if let Some(b) = self.buf_of(arg) {
            self.uses.to_hex = true;
            return Some(Expr::Get(b.hex(), Vec::new()));
        }
        if let Some(e) = self.hex_of_call(arg) {
            self.uses.to_hex = true;
            return Some(e);
        }
        // Any other value: natively when it is a buffer the hook holds.
        let x = self.expr(arg)?;
        self.uses.to_hex = true;
        Some(Expr::ToHex(Box::new(x)))
    }

    /// `toHex(call)` of a view or a frame's buffer (see [`Compiler::hex_of_buffer`], which
    /// notes the use of `toHex`).
    fn hex_of_call(&mut self, arg: &Expression) -> Option<Expr> {
        let Expression::Call(inner) = strip(arg) else {
            return None;
        };
        if self.is_contract_address(inner.function()) && inner.args().is_empty() {
            self.uses.views = true;
            return Some(Expr::ContractHex);
        }
        if let Expression::Identifier(f) = strip(inner.function()) {
            let [buf, start, end] = inner.args() else {
                return None;
            };
            if !self.global(f.sym(), "slice") {
                return None;
            }
            let b = self.buf_of(buf)?;
            let (start, end) = (self.expr(start)?, self.expr(end)?);
            self.uses.slice = true;
            return Some(Expr::SliceHex(b, Box::new(start), Box::new(end)));
        }
        let Expression::PropertyAccess(PropertyAccess::Simple(m)) = strip(inner.function()) else {
            return None;
        };
        let b = buffer_getter(self.param(m.target())?, &self.field_name(m.field())?)?;
        let args_ir = self.exprs(inner.args())?;
        Some(Expr::Get(b.hex(), args_ir))
    }

    /// Whether `e` is `log.contract`.
    fn is_log_contract(&self, e: &Expression) -> bool {
        let Expression::PropertyAccess(PropertyAccess::Simple(c)) = strip(e) else {
            return false;
        };
        self.field_name(c.field()).as_deref() == Some("contract")
            && self.param(c.target()) == Some(Param::Log)
    }

    /// Whether `callee` is `log.contract.getAddress`.
    fn is_contract_address(&self, callee: &Expression) -> bool {
        let Expression::PropertyAccess(PropertyAccess::Simple(m)) = strip(callee) else {
            return false;
        };
        self.field_name(m.field()).as_deref() == Some("getAddress")
            && self.is_log_contract(m.target())
    }

    /// `this.name(…)` of a helper function of the literal, inlined: its arguments in the
    /// caller's scope, its body in a scope of its own (its parameters and `var`s; a frame's
    /// buffer passed as an argument is read where the parameter is used). Recursion, or
    /// nesting deeper than [`MAX_INLINE`], is not compiled.
    fn inline(
        &mut self,
        name: String,
        formal: &FormalParameterList,
        body: &FunctionBody,
        args: &[Expression],
    ) -> Option<Expr> {
        if self.inlining.len() >= MAX_INLINE || self.inlining.contains(&name) {
            return None;
        }
        let mut given = Vec::with_capacity(args.len());
        for a in args {
            given.push(match self.buf_of(a) {
                Some(b) => Err(b),
                None => Ok(self.expr(a)?),
            });
        }
        let params = formal.as_ref();
        let mut ids = Vec::with_capacity(params.len());
        for p in params {
            if p.is_rest_param() || p.init().is_some() {
                return None;
            }
            let Binding::Identifier(id) = p.variable().binding() else {
                return None;
            };
            ids.push(id.sym());
        }
        let (mut scope, mut args_ir, mut locals) = (Vec::new(), Vec::new(), Vec::new());
        let local = |slot| Bind::Local {
            slot,
            konst: false,
            ready: true,
        };
        for (i, a) in given.into_iter().enumerate() {
            match (ids.get(i), a) {
                (Some(&id), Err(b)) => scope.push((id, Bind::Buf(b))),
                (Some(&id), Ok(e)) => {
                    let slot = self.slot()?;
                    scope.push((id, local(slot)));
                    args_ir.push((slot, e));
                }
                // Extra arguments are evaluated for their effects.
                (None, Ok(e)) => args_ir.push((self.slot()?, e)),
                (None, Err(_)) => {}
            }
        }
        for &id in ids.iter().skip(args.len()) {
            let slot = self.slot()?;
            scope.push((id, local(slot)));
            locals.push(slot);
        }
        locals.extend(self.declare_vars(body, &mut scope)?);
        // The helper sees its own names and the globals, not the caller's locals.
        let caller = std::mem::replace(&mut self.scopes, vec![scope]);
        self.inlining.push(name.clone());
        let body = self.block(body.statements());
        self.inlining.pop();
        self.scopes = caller;
        let body = body?;
        let helper = match self.inlined.iter().position(|h| *h == name) {
            Some(i) => i,
            None => {
                self.inlined.push(name.clone());
                self.inlined.len() - 1
            }
        };
        Some(Expr::Inline(Box::new(Inline {
            key: Key::from_name(self.strings.intern(&name)),
            helper: u16::try_from(helper).ok()?,
            args: args_ir,
            locals,
            body,
        })))
    }
}

/// The buffer a frame getter returns.
fn buffer_getter(p: Param, method: &str) -> Option<Buf> {
    Some(match (p, method) {
        (Param::Frame, "getFrom") => Buf::From,
        (Param::Frame, "getTo") => Buf::To,
        (Param::Frame, "getInput") => Buf::Input,
        (Param::FrameResult, "getOutput") => Buf::Output,
        _ => return None,
    })
}
