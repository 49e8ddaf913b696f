//! The small IR compiled hooks are made of ([`compile`](super::compile) builds it, [`eval`](super::eval)
//! walks it): statements and expressions over two-word values, with the argument getters that
//! return plain values as leaves.

use super::value::{Key, V};
use crate::js::hook::Hook;

/// Binary operators evaluated on values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bin {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    UShr,
    Eq,
    Ne,
    StrictEq,
    StrictNe,
    Lt,
    Le,
    Gt,
    Ge,
}

/// Short-circuit operators.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Logic {
    And,
    Or,
    Coalesce,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Un {
    Neg,
    Plus,
    Not,
    BitNot,
    TypeOf,
    Void,
}

/// The argument getters that return plain values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Getter {
    Pc,
    Gas,
    Cost,
    Depth,
    Refund,
    StepError,
    OpNumber,
    OpName,
    OpIsPush,
    FrameType,
    FrameGas,
    ResultGasUsed,
    ResultError,
    /// `toHex(frame.getFrom())` and the like: the buffer getter's bytes as `0x` hex, while the
    /// global `toHex` is the built-in.
    FromHex,
    ToHex,
    InputHex,
    OutputHex,
    /// `toHex(ctx.to)` and the like, in `result`.
    TxHex(TxBuf),
    /// `ctx.type`, `ctx.gas`, … in `result`.
    Tx(TxField),
}

/// The plain fields of `result`'s `ctx`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TxField {
    Type,
    Gas,
    GasUsed,
    Block,
    /// A string, or undefined when the transaction succeeded.
    Error,
    /// A number, or undefined for a simulated call.
    TxIndex,
    /// `bigInt`s.
    Value,
    GasPrice,
}

/// The buffers of `result`'s `ctx`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TxBuf {
    From,
    To,
    Input,
    Output,
    Coinbase,
}

/// A frame's buffer: `frame.getFrom()`, `getTo()`, `getInput()`, `frameResult.getOutput()`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Buf {
    From,
    To,
    Input,
    Output,
    /// `ctx.from`, `ctx.to`, … in `result`.
    Tx(TxBuf),
}

impl Buf {
    /// The getter of `toHex(buffer)`.
    pub fn hex(self) -> Getter {
        match self {
            Buf::From => Getter::FromHex,
            Buf::To => Getter::ToHex,
            Buf::Input => Getter::InputHex,
            Buf::Output => Getter::OutputHex,
            Buf::Tx(t) => Getter::TxHex(t),
        }
    }
}

/// An inlined call of one of the literal's helper functions: `this.name(…)`.
#[derive(Debug)]
pub struct Inline {
    /// The property called, which must still hold the helper (`Compiled::helpers[helper]`).
    pub key: Key,
    pub helper: u16,
    /// The arguments, in order, into the helper's parameter slots (or thrown-away ones).
    pub args: Vec<(u16, Expr)>,
    /// The helper's other locals, reset to `undefined` at each call.
    pub locals: Vec<u16>,
    pub body: Vec<Stmt>,
}

#[derive(Debug)]
pub enum Expr {
    Const(V),
    Local(u16),
    This,
    /// A getter call; its arguments are evaluated (for their effects) and ignored.
    Get(Getter, Vec<Expr>),
    Member(Box<Expr>, Key),
    /// `this.key` or `local.key`: the object needs no evaluation.
    Path(Base, Key),
    Index(Box<Expr>, Box<Expr>),
    Assign(Box<Target>, Box<Expr>),
    Compound(Box<Target>, Bin, Box<Expr>),
    LogicAssign(Box<Target>, Logic, Box<Expr>),
    Update {
        target: Box<Target>,
        inc: bool,
        prefix: bool,
    },
    Bin(Bin, Box<Expr>, Box<Expr>),
    Logic(Logic, Box<Expr>, Box<Expr>),
    Un(Un, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    Seq(Box<Expr>, Box<Expr>),
    Object(Vec<(Key, Expr)>),
    Array(Vec<Expr>),
    /// `arr.push(…)` on a plain array (the built-in `push`).
    Push(Box<Expr>, Vec<Expr>),
    /// `arr.pop(…)` on a plain array (the built-in `pop`); arguments evaluated and ignored.
    Pop(Box<Expr>, Vec<Expr>),
    /// `buffer.length`.
    BufLen(Buf),
    /// `toHex(slice(buffer, start, end))` (the global `slice` and `toHex` the built-ins).
    SliceHex(Buf, Box<Expr>, Box<Expr>),
    Inline(Box<Inline>),
    /// `x.slice(…)`, `x.toString(…)`, `x.toJSNumber()`: on a string or a `bigInt` natively,
    /// on anything else left to boa.
    Method(Method, Box<Expr>, Vec<Expr>),
    /// `bigInt(x)` (the global, which a script cannot replace).
    BigOf(Box<Expr>),
    /// `log.stack.peek(i)`: a `bigInt`.
    Peek(Box<Expr>),
    /// `log.memory.getUint(offset)`: a `bigInt`.
    MemUint(Box<Expr>),
    /// `frame.getValue()`: a `bigInt`, or undefined.
    FrameValue,
    /// `toHex(log.contract.getAddress())`.
    ContractHex,
    /// `log.contract.getAddress()`: a buffer.
    ContractAddress,
    /// `toHex(x)` of a buffer value (the global, while it is the built-in).
    ToHex(Box<Expr>),
    /// `toWord(x)` of a hex string or a buffer value (the global, while it is the built-in).
    ToWord(Box<Expr>),
    /// `db.getState(address, slot)` of two buffer values: a buffer.
    DbState(Box<Expr>, Box<Expr>),
    /// `arr.concat(…)` on a plain array (the built-in `concat`), in `result` only.
    Concat(Box<Expr>, Vec<Expr>),
    /// `delete o.key`.
    Delete(Box<Expr>, Key),
    /// What the subset does not model, where it is reached (a helper that does not compile):
    /// boa runs the hook.
    Deopt,
}

/// The methods called on values of a type known only when they run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Method {
    Slice,
    ToString,
    ToJsNumber,
}

/// An object reached without evaluating an expression.
#[derive(Clone, Copy, Debug)]
pub enum Base {
    This,
    Local(u16),
}

impl Base {
    pub fn of(e: &Expr) -> Option<Base> {
        match e {
            Expr::This => Some(Base::This),
            Expr::Local(s) => Some(Base::Local(*s)),
            _ => None,
        }
    }
}

/// `o.key`, as a path when `o` is `this` or a local.
pub fn member(o: Expr, key: Key) -> Expr {
    match Base::of(&o) {
        Some(b) => Expr::Path(b, key),
        None => Expr::Member(Box::new(o), key),
    }
}

#[derive(Debug)]
pub enum Target {
    Local(u16),
    Member(Expr, Key),
    Path(Base, Key),
    Index(Expr, Expr),
}

#[derive(Debug)]
pub enum Stmt {
    Expr(Expr),
    /// A hook's last statement, an expression: its outermost store is the hook's last effect,
    /// so it needs no undo entry (nothing after it can hand the hook to boa).
    Final(Expr),
    /// `let`/`const`/`var x = …`; a `let x;` sets undefined, a `var x;` does nothing.
    Init(u16, Option<Expr>),
    If(Expr, Box<Stmt>, Option<Box<Stmt>>),
    Block(Vec<Stmt>),
    Return(Option<Expr>),
    /// `while (c) s`.
    While(Expr, Box<Stmt>),
    /// `do s while (c)`.
    DoWhile(Box<Stmt>, Expr),
    /// `for (init; test; update) body`.
    For {
        init: Option<Box<Stmt>>,
        test: Option<Expr>,
        update: Option<Expr>,
        body: Box<Stmt>,
    },
    Break,
    Continue,
    Empty,
}

/// One compiled hook function.
#[derive(Debug)]
pub struct Func {
    pub locals: u16,
    pub body: Vec<Stmt>,
}

/// What compiled hooks rely on, gathered while they compile (one value carried from hook to
/// hook).
#[derive(Clone, Copy, Debug, Default)]
pub struct Uses {
    /// Whether a hook calls `push` (valid only while `Array.prototype.push` is the built-in).
    pub push: bool,
    /// The same for `pop`.
    pub pop: bool,
    /// Whether a hook calls the global `toHex` (valid only while it is the built-in).
    pub to_hex: bool,
    /// The same for the global `slice`.
    pub slice: bool,
    /// Whether a hook calls a method of a string or `bigInt` (`slice`, `toString`,
    /// `toJSNumber`) or `bigInt(…)`: valid only while the built-ins these reach are intact.
    pub string_bigint_builtins: bool,
    /// Whether a hook reads the stack, memory or contract views or `db` (they must be kept per
    /// step, and the hook run with the interpreter and the state at hand).
    pub views: bool,
    /// Whether a hook calls the global `toWord` or `db.getState` (valid only while they are
    /// the built-ins).
    pub state_fns: bool,
    /// Whether a hook reads the step's own fields (`log.getPC()`, `log.op`, `log.getCost()`,
    /// …): without, the inspector keeps none of them per opcode.
    pub reads_step: bool,
    /// Whether a hook holds an [`Expr::Deopt`]: boa may run it, reading anything, so the views
    /// are kept.
    pub may_deopt: bool,
}

/// What a tracer needs to run without boa until something leaves the subset: the object
/// literal as an expression (constants, object and array literals; each function as a
/// [`super::value::Held::Literal`]), and `result(ctx, db)`.
#[derive(Debug)]
pub struct Detached {
    /// `return {…}`.
    pub literal: Vec<Stmt>,
    pub result: Func,
    /// The function-valued properties, in literal order (`Held::Literal(n)` is the `n`th).
    pub functions: Vec<String>,
    /// `setup(config)`, and the local its one `JSON.parse(config)` reads (the configuration
    /// parsed before it runs).
    pub setup: Option<(Func, Option<u16>)>,
}

/// The compiled hooks of a tracer; `None` where the script has no such function.
#[derive(Debug, Default)]
pub struct Compiled {
    /// What the hooks rely on.
    pub uses: Uses,
    /// The helper functions inlined, by property name.
    pub helpers: Vec<String>,
    pub step: Option<Func>,
    pub fault: Option<Func>,
    pub enter: Option<Func>,
    pub exit: Option<Func>,
    /// Set when the whole tracer, its literal and `result` included, is inside the subset
    /// and has no `setup`.
    pub detached: Option<Detached>,
}

impl Compiled {
    /// The compiled function of `hook`, if the script has one (`setup` and `result` run
    /// natively only for a detached tracer: [`Detached`]).
    #[inline]
    pub fn hook(&self, hook: Hook) -> Option<&Func> {
        match hook {
            Hook::Step => self.step.as_ref(),
            Hook::Fault => self.fault.as_ref(),
            Hook::Enter => self.enter.as_ref(),
            Hook::Exit => self.exit.as_ref(),
            Hook::Setup | Hook::Result => None,
        }
    }

    /// The most locals any compiled function needs.
    pub fn locals(&self) -> usize {
        let detached = self
            .detached
            .iter()
            .flat_map(|d| std::iter::once(&d.result).chain(d.setup.as_ref().map(|(f, _)| f)));
        [&self.step, &self.fault, &self.enter, &self.exit]
            .into_iter()
            .flatten()
            .chain(detached)
            .map(|f| f.locals as usize)
            .max()
            .unwrap_or(0)
    }
}
