//! The evaluator of compiled hooks: a tree walk over [`Stmt`]/[`Expr`] with JavaScript's
//! evaluation order, reading the argument getters straight from [`Shared`].

use std::borrow::Cow;
use std::time::Instant;

use alloy_primitives::U256;
use revm::bytecode::opcode::OpCode;

use super::heap::{Heap, Pos};
use super::ir::{Base, Buf, Expr, Getter, Logic, Stmt, Target, Un};
use super::value::{to_i32, Deopt, Key, Tables, Text, R, V};
use crate::geth::opcode::op_name;
use crate::js::objects::Shared;

mod ops;
mod tx;

use ops::{arithmetic, hex_string, whole};

/// Names of the 256 opcodes, as `log.op.toString()` gives them (interned with a compiled
/// script's strings, and kept with them: `compile::cache`).
#[derive(Clone)]
pub struct Names(pub std::rc::Rc<[V]>);

impl Names {
    pub fn new(strings: &mut Tables) -> Names {
        Names(
            (0..=255u8)
                .map(|op| V::Str(strings.intern_id(&op_name(op))))
                .collect::<Vec<_>>()
                .into(),
        )
    }
}

pub struct Machine<'a> {
    pub heap: &'a mut Heap,
    pub locals: &'a mut [V],
    pub this: u32,
    pub shared: &'a Shared,
    pub names: &'a Names,
    /// Evaluating before the opcode ran: its cost and error are not known (reading them is a
    /// [`Deopt`]).
    pub before: bool,
    /// What each inlined helper's property must hold (`Compiled::helpers`, in order).
    pub helpers: &'a [V],
    /// The value of the last `return` (an inlined helper's result).
    pub ret: V,
    /// Loop iterations so far in this hook; every [`CHECK_EVERY`] the clock and the memory are
    /// looked at, and past the tracer's limits boa runs the hook (and reports the timeout or
    /// the memory limit as it does).
    pub iterations: u32,
    /// The tracer's deadline and memory base (`None` for code without loops).
    pub limits: Option<(Instant, i64)>,
    /// The expression of the running hook's [`Stmt::Final`], once it runs.
    pub last: *const Expr,
}

impl<'a> Machine<'a> {
    /// A machine over `heap` with `locals` (all undefined) for a hook of the tracer object
    /// `this`.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn new(
        heap: &'a mut Heap,
        locals: &'a mut [V],
        this: u32,
        shared: &'a Shared,
        names: &'a Names,
        helpers: &'a [V],
        before: bool,
        limits: Option<(Instant, i64)>,
    ) -> Self {
        for l in locals.iter_mut() {
            *l = V::Undef;
        }
        Machine {
            heap,
            locals,
            this,
            shared,
            names,
            before,
            helpers,
            ret: V::Undef,
            iterations: 0,
            limits,
            last: std::ptr::null(),
        }
    }
}

/// Loop iterations between two looks at the clock and the memory.
const CHECK_EVERY: u32 = 1024;

enum Flow {
    Normal,
    Return,
    Break,
    Continue,
}

impl Machine<'_> {
    pub fn run(&mut self, body: &[Stmt]) -> R<()> {
        for s in body {
            if let Flow::Return = self.exec(s)? {
                break;
            }
        }
        Ok(())
    }

    /// One statement; expression statements and initialisations, the common ones, here,
    /// the rest in [`Machine::exec_other`].
    #[inline]
    fn exec(&mut self, s: &Stmt) -> R<Flow> {
        match s {
            Stmt::Expr(e) => {
                self.eval(e)?;
                Ok(Flow::Normal)
            }
            Stmt::Init(slot, Some(e)) => {
                let v = self.eval(e)?;
                self.locals[*slot as usize] = v;
                Ok(Flow::Normal)
            }
            Stmt::Final(e) => {
                self.last = e;
                self.eval(e)?;
                Ok(Flow::Normal)
            }
            _ => self.exec_other(s),
        }
    }

    #[inline(never)]
    fn exec_other(&mut self, s: &Stmt) -> R<Flow> {
        match s {
            Stmt::Empty | Stmt::Init(_, None) => {}
            Stmt::Expr(_) | Stmt::Init(_, Some(_)) | Stmt::Final(_) => return self.exec(s),
            Stmt::If(c, then, other) => {
                let c = self.eval(c)?;
                if self.truthy(c) {
                    return self.exec(then);
                } else if let Some(o) = other {
                    return self.exec(o);
                }
            }
            Stmt::Block(b) => {
                for s in b {
                    match self.exec(s)? {
                        Flow::Normal => {}
                        f => return Ok(f),
                    }
                }
            }
            Stmt::Break => return Ok(Flow::Break),
            Stmt::Continue => return Ok(Flow::Continue),
            Stmt::While(c, body) => {
                while self.holds(c)? {
                    if let Some(end) = self.iteration(body)? {
                        return Ok(end);
                    }
                }
            }
            Stmt::DoWhile(body, c) => loop {
                if let Some(end) = self.iteration(body)? {
                    return Ok(end);
                }
                if !self.holds(c)? {
                    break;
                }
            },
            Stmt::For {
                init,
                test,
                update,
                body,
            } => {
                if let Some(i) = init {
                    self.exec(i)?;
                }
                while test.as_ref().map_or(Ok(true), |t| self.holds(t))? {
                    if let Some(end) = self.iteration(body)? {
                        return Ok(end);
                    }
                    if let Some(u) = update {
                        self.eval(u)?;
                    }
                }
            }
            Stmt::Return(e) => {
                self.ret = match e {
                    Some(e) => self.eval(e)?,
                    None => V::Undef,
                };
                return Ok(Flow::Return);
            }
        }
        Ok(Flow::Normal)
    }

    #[inline]
    pub fn truthy(&self, v: V) -> bool {
        self.heap.t.truthy(v)
    }

    /// A loop's condition.
    fn holds(&mut self, c: &Expr) -> R<bool> {
        let v = self.eval(c)?;
        Ok(self.truthy(v))
    }

    /// One run of a loop's body: how the statement ends when the loop does (`break`: normally;
    /// `return`), `None` when it goes on.
    fn iteration(&mut self, body: &Stmt) -> R<Option<Flow>> {
        self.tick()?;
        Ok(match self.exec(body)? {
            Flow::Break => Some(Flow::Normal),
            Flow::Return => Some(Flow::Return),
            Flow::Normal | Flow::Continue => None,
        })
    }

    #[inline]
    fn t(&self) -> &Tables {
        &self.heap.t
    }

    /// `f` of a frame's buffer.
    fn buffer<T>(&self, b: Buf, f: impl FnOnce(&[u8]) -> T) -> T {
        match b {
            Buf::From => f(self.shared.frame.borrow().from.as_slice()),
            Buf::To => f(self.shared.frame.borrow().to.as_slice()),
            Buf::Input => f(&self.shared.frame.borrow().input),
            Buf::Output => f(&self.shared.frame_result.borrow().output),
            Buf::Tx(t) => tx::buffer(self.shared, t, f),
        }
    }

    /// `toHex` of `bytes`: a new string value.
    fn hex(&mut self, bytes: &[u8]) -> R<V> {
        self.heap.t.str_value(&Text::from(hex_string(bytes)))
    }

    /// An error text or frame kind as a string value (interned: there are few of them).
    fn text(&mut self, s: Option<&str>) -> R<V> {
        match s {
            Some(s) => Ok(V::Str(self.heap.t.intern_id(s))),
            None => Ok(V::Undef),
        }
    }

    #[inline]
    fn getter(&mut self, g: Getter) -> R<V> {
        let num = |n: u64| V::num(n as f64);
        Ok(match g {
            Getter::FrameType => {
                let kind = self.shared.frame.borrow().kind;
                self.text(Some(kind.as_str()))?
            }
            Getter::FrameGas => num(self.shared.frame.borrow().gas),
            Getter::ResultGasUsed => num(self.shared.frame_result.borrow().gas_used),
            Getter::ResultError => {
                let e = self.shared.frame_result.borrow().error.clone();
                self.text(e.as_deref())?
            }
            Getter::FromHex => {
                let a = self.shared.frame.borrow().from;
                self.hex(a.as_slice())?
            }
            Getter::ToHex => {
                let a = self.shared.frame.borrow().to;
                self.hex(a.as_slice())?
            }
            Getter::InputHex => {
                let f = self.shared.frame.borrow();
                let s = hex_string(&f.input);
                drop(f);
                self.heap.t.str_value(&Text::from(s))?
            }
            Getter::OutputHex => {
                let r = self.shared.frame_result.borrow();
                let s = hex_string(&r.output);
                drop(r);
                self.heap.t.str_value(&Text::from(s))?
            }
            Getter::TxHex(_) | Getter::Tx(_) => self.tx_getter(g)?,
            Getter::StepError | Getter::Cost if self.before => return Err(Deopt),
            Getter::StepError => {
                let e = self.shared.step.borrow().error.clone();
                self.text(e.as_deref())?
            }
            _ => {
                let s = self.shared.step.borrow();
                match g {
                    Getter::Pc => num(s.pc),
                    Getter::Gas => num(s.gas),
                    Getter::Cost => num(s.cost),
                    Getter::Depth => num(s.depth),
                    Getter::Refund => num(s.refund),
                    Getter::OpNumber => num(u64::from(s.op)),
                    Getter::OpName => self.names.0[s.op as usize],
                    Getter::OpIsPush => V::bool(OpCode::new(s.op).is_some_and(|c| c.is_push())),
                    // Answered above.
                    _ => V::Undef,
                }
            }
        })
    }

    /// The object a path starts from; a local that holds no object is left to boa (reading a
    /// property of a primitive, or of undefined, which throws).
    #[inline]
    fn base(&self, b: Base) -> R<u32> {
        match b {
            Base::This => Ok(self.this),
            Base::Local(s) => match self.locals[s as usize] {
                V::Obj(id) => Ok(id as u32),
                _ => Err(Deopt),
            },
        }
    }

    #[inline]
    fn object(&self, v: V) -> R<u32> {
        match v {
            V::Obj(id) => Ok(id as u32),
            _ => Err(Deopt),
        }
    }

    #[inline]
    fn read(&self, v: V, key: &Key) -> R<V> {
        match v {
            V::Obj(id) => self.heap.get(id as u32, key),
            V::Str(s) if key.name() == Some("length") && self.t().text(s).is_ascii() => {
                Ok(V::num(self.t().text(s).len() as f64))
            }
            _ => Err(Deopt),
        }
    }

    /// The frequent expressions; the rest are in [`Machine::eval_other`], which keeps this
    /// function's frame small (it runs several times per opcode).
    pub fn eval(&mut self, e: &Expr) -> R<V> {
        match e {
            Expr::Const(v) => Ok(*v),
            Expr::Local(s) => Ok(self.locals[*s as usize]),
            Expr::This => Ok(V::Obj(u64::from(self.this))),
            Expr::Get(g, args) if args.is_empty() => self.getter(*g),
            Expr::Path(b, key) => match *b {
                Base::This => self.heap.get(self.this, key),
                // A local may hold a string (`s.length`).
                Base::Local(s) => self.read(self.locals[s as usize], key),
            },
            Expr::Member(o, key) => {
                let o = self.eval(o)?;
                self.read(o, key)
            }
            Expr::Update {
                target,
                inc,
                prefix,
            } => {
                // `this.n++`: a number property changed in place.
                if let Target::Path(b, key) = &**target {
                    let id = self.base(*b)?;
                    if let Some(pos) = self.heap.locate(id, key) {
                        if let Some(n) = self.heap.num_at(id, pos) {
                            let new = if *inc { n + 1.0 } else { n - 1.0 };
                            self.heap.unlogged = std::ptr::eq(e, self.last);
                            self.heap.set_num(id, pos, n, new);
                            self.heap.unlogged = false;
                            return Ok(V::num(if *prefix { new } else { n }));
                        }
                    }
                }
                self.eval_other(e)
            }
            Expr::Compound(target, op, rhs) => {
                // `e.gas += cost`: a number property changed in place.
                if let Target::Path(b, key) = &**target {
                    let id = self.base(*b)?;
                    if let Some(pos) = self.heap.locate(id, key) {
                        if let Some(x) = self.heap.num_at(id, pos) {
                            let pure = match &**rhs {
                                Expr::Const(_) | Expr::Local(_) => true,
                                Expr::Get(_, args) => args.is_empty(),
                                _ => false,
                            };
                            let r = self.eval(rhs)?;
                            // The right side may have replaced the property (unless it cannot
                            // write); `x` is what JavaScript read before evaluating it.
                            let now = if pure {
                                Some(pos)
                            } else {
                                self.heap.locate(id, key)
                            };
                            if let (V::Num(y), Some(now)) = (r, now) {
                                if let Some(n) = arithmetic(*op, x, f64::from_bits(y)) {
                                    self.heap.unlogged = std::ptr::eq(e, self.last);
                                    self.heap.set_num_any(id, now, n);
                                    self.heap.unlogged = false;
                                    return Ok(V::num(n));
                                }
                            }
                            let v = self.binary(*op, V::num(x), r)?;
                            let now = self.heap.locate(id, key);
                            self.heap.write(id, key, now, v)?;
                            return Ok(v);
                        }
                    }
                }
                self.eval_other(e)
            }
            Expr::Index(o, k) => {
                let o = self.eval(o)?;
                let k = self.eval(k)?;
                match (o, k) {
                    (V::Obj(id), V::Num(n)) => {
                        let key = Key::from_num(f64::from_bits(n)).ok_or(Deopt)?;
                        self.heap.get(id as u32, &key)
                    }
                    (o @ (V::Obj(_) | V::Str(_)), k) => {
                        let key = self.t().to_key(k)?;
                        self.read(o, &key)
                    }
                    _ => Err(Deopt),
                }
            }
            Expr::Bin(op, l, r) => {
                let l = self.eval(l)?;
                let r = self.eval(r)?;
                self.binary(*op, l, r)
            }
            Expr::Logic(op, l, r) => {
                let l = self.eval(l)?;
                if self.continues(*op, l) {
                    self.eval(r)
                } else {
                    Ok(l)
                }
            }
            Expr::Assign(t, rhs) => {
                let place = self.place(t)?;
                let v = self.eval(rhs)?;
                // Unlogged only for a primitive with no string: the undo log also tells which
                // of the hook's strings an older object now holds (`Heap::compact_strings`).
                self.heap.unlogged = std::ptr::eq(e, self.last)
                    && matches!(v, V::Num(_) | V::True | V::False | V::Undef | V::Null);
                let stored = self.store(&place, v);
                self.heap.unlogged = false;
                stored?;
                Ok(v)
            }
            _ => self.eval_other(e),
        }
    }

    #[inline(never)]
    fn eval_other(&mut self, e: &Expr) -> R<V> {
        Ok(match e {
            Expr::Const(_) | Expr::Local(_) | Expr::This | Expr::Member(..) | Expr::Path(..) => {
                self.eval(e)?
            }
            Expr::Get(g, args) => {
                for a in args {
                    self.eval(a)?;
                }
                self.getter(*g)?
            }
            Expr::Index(..) | Expr::Bin(..) | Expr::Logic(..) | Expr::Assign(..) => {
                unreachable!("evaluated in eval")
            }
            Expr::Compound(t, op, rhs) => {
                let place = self.place(t)?;
                let old = self.load(&place)?;
                let r = self.eval(rhs)?;
                let v = self.binary(*op, old, r)?;
                self.store(&place, v)?;
                v
            }
            Expr::LogicAssign(t, op, rhs) => {
                let place = self.place(t)?;
                let old = self.load(&place)?;
                if !self.continues(*op, old) {
                    return Ok(old);
                }
                let v = self.eval(rhs)?;
                self.store(&place, v)?;
                v
            }
            Expr::Update {
                target,
                inc,
                prefix,
            } => {
                let place = self.place(target)?;
                let n = self.load(&place)?.to_num()?;
                let new = if *inc { n + 1.0 } else { n - 1.0 };
                self.store(&place, V::num(new))?;
                V::num(if *prefix { new } else { n })
            }
            Expr::Un(op, x) => {
                let x = self.eval(x)?;
                match op {
                    Un::Neg => V::num(-x.to_num()?),
                    Un::Plus => V::num(x.to_num()?),
                    Un::Not => V::bool(!self.truthy(x)),
                    Un::BitNot => V::num(f64::from(!to_i32(x.to_num()?))),
                    Un::TypeOf => {
                        let t = self.t().type_of(x);
                        self.text(Some(t))?
                    }
                    Un::Void => V::Undef,
                }
            }
            Expr::Cond(c, a, b) => {
                let c = self.eval(c)?;
                if self.truthy(c) {
                    self.eval(a)?
                } else {
                    self.eval(b)?
                }
            }
            Expr::Seq(a, b) => {
                self.eval(a)?;
                self.eval(b)?
            }
            Expr::Object(props) => {
                let mut vals = Vec::with_capacity(props.len());
                for (k, e) in props {
                    vals.push((k.clone(), self.eval(e)?));
                }
                V::Obj(u64::from(self.heap.create(false, vals)?))
            }
            Expr::Push(target, args) => {
                let t = self.eval(target)?;
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(a)?);
                }
                let id = self.object(t)?;
                self.heap.push(id, &vals)?
            }
            Expr::BufLen(b) => V::num(self.buffer(*b, |bytes| bytes.len()) as f64),
            Expr::SliceHex(b, start, end) => {
                let (start, end) = (self.eval(start)?, self.eval(end)?);
                let (start, end) = (whole(start)?, whole(end)?);
                let s = self
                    .buffer(*b, |bytes| {
                        let ok = 0.0 <= start && start <= end && end <= bytes.len() as f64;
                        ok.then(|| hex_string(&bytes[start as usize..end as usize]))
                    })
                    // Out of range: boa throws geth's error.
                    .ok_or(Deopt)?;
                self.heap.t.str_value(&Text::from(s))?
            }
            Expr::Inline(i) => {
                let f = self.heap.get(self.this, &i.key)?;
                if self.helpers.get(i.helper as usize) != Some(&f) {
                    return Err(Deopt);
                }
                for (slot, e) in &i.args {
                    let v = self.eval(e)?;
                    self.locals[*slot as usize] = v;
                }
                for s in &i.locals {
                    self.locals[*s as usize] = V::Undef;
                }
                self.ret = V::Undef;
                for s in &i.body {
                    if let Flow::Return = self.exec(s)? {
                        break;
                    }
                }
                std::mem::replace(&mut self.ret, V::Undef)
            }
            Expr::Pop(target, args) => {
                let t = self.eval(target)?;
                for a in args {
                    self.eval(a)?;
                }
                let id = self.object(t)?;
                self.heap.pop(id)?
            }
            Expr::Array(items) => {
                let mut vals = Vec::with_capacity(items.len());
                for (i, e) in items.iter().enumerate() {
                    vals.push((Key::Idx(i as u32), self.eval(e)?));
                }
                V::Obj(u64::from(self.heap.create(true, vals)?))
            }
            Expr::Method(m, on, args) => {
                let on = self.eval(on)?;
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(a)?);
                }
                self.method(*m, on, &vals)?
            }
            Expr::BigOf(x) => {
                let v = match self.eval(x)? {
                    V::Undef => U256::ZERO,
                    V::Big(b) => self.heap.t.big_value(b),
                    V::Num(n) => {
                        let n = f64::from_bits(n).trunc();
                        // Negative values and values past 2^64 are left to boa.
                        if !(0.0..18_446_744_073_709_551_616.0).contains(&n) {
                            return Err(Deopt);
                        }
                        U256::from(n as u64)
                    }
                    _ => return Err(Deopt),
                };
                self.heap.t.big(v)
            }
            Expr::Peek(i) => {
                let i = self.index(i)?;
                let v = self.shared.peek(i).ok_or(Deopt)?;
                self.heap.t.big(v)
            }
            Expr::MemUint(o) => {
                let off = self.index(o)?;
                let len = self.shared.step.borrow().mem_len;
                if off.checked_add(32).is_none_or(|end| end > len) {
                    return Err(Deopt);
                }
                let bytes = self.shared.memory(off, 32);
                self.heap.t.big(U256::from_be_slice(&bytes))
            }
            Expr::FrameValue => match self.shared.frame.borrow().value {
                Some(v) => self.heap.t.big(v),
                None => V::Undef,
            },
            Expr::ContractAddress | Expr::ToHex(_) | Expr::ToWord(_) | Expr::DbState(..) => {
                self.buffers(e)?
            }
            Expr::ContractHex => {
                let a = self.shared.step.borrow().address;
                self.hex(a.as_slice())?
            }
            Expr::Delete(o, key) => {
                let o = self.eval(o)?;
                let id = self.object(o)?;
                self.heap.delete(id, key)?
            }
            Expr::Concat(on, args) => self.concat(on, args)?,
            Expr::Deopt => return Err(Deopt),
        })
    }

    /// Evaluates the object and key parts of an assignment target, in order.
    #[inline]
    fn place<'e>(&mut self, t: &'e Target) -> R<Place<'e>> {
        Ok(match t {
            Target::Local(s) => Place::Local(*s),
            Target::Path(b, key) => {
                let id = self.base(*b)?;
                let pos = self.heap.locate(id, key);
                Place::Prop(id, Cow::Borrowed(key), pos, self.heap.moved())
            }
            Target::Member(o, key) => {
                let o = self.eval(o)?;
                let id = self.object(o)?;
                let pos = self.heap.locate(id, key);
                Place::Prop(id, Cow::Borrowed(key), pos, self.heap.moved())
            }
            Target::Index(o, k) => {
                let o = self.eval(o)?;
                let k = self.eval(k)?;
                let id = self.object(o)?;
                let key = self.t().to_key(k)?;
                let pos = self.heap.locate(id, &key);
                Place::Prop(id, Cow::Owned(key), pos, self.heap.moved())
            }
        })
    }

    #[inline]
    fn load(&self, p: &Place) -> R<V> {
        match p {
            Place::Local(s) => Ok(self.locals[*s as usize]),
            Place::Prop(id, key, pos, _) => self.heap.read(*id, key, *pos),
        }
    }

    #[inline]
    fn store(&mut self, p: &Place, v: V) -> R<()> {
        match p {
            Place::Local(s) => {
                self.locals[*s as usize] = v;
                Ok(())
            }
            Place::Prop(id, key, pos, moved) => {
                // A property found stays where it is, unless a `delete` moved names since; one
                // that was missing may have been added while the right-hand side ran.
                let pos = match pos {
                    Some(p) if *moved == self.heap.moved() => Some(*p),
                    _ => self.heap.locate(*id, key),
                };
                self.heap.write(*id, key, pos, v)
            }
        }
    }

    /// Whether a short-circuit operator goes on to its right side.
    #[inline]
    fn continues(&self, op: Logic, l: V) -> bool {
        match op {
            Logic::And => self.truthy(l),
            Logic::Or => !self.truthy(l),
            Logic::Coalesce => matches!(l, V::Undef | V::Null),
        }
    }
}

enum Place<'e> {
    Local(u16),
    /// Object, key, where the key was when the target was evaluated, and the heap's
    /// [`Heap::moved`] then.
    Prop(u32, Cow<'e, Key>, Option<Pos>, u64),
}
