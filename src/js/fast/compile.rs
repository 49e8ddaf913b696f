//! From the tracer's source to [`Func`]s: the hook functions of the object literal, when their
//! bodies stay inside the subset the native evaluator models exactly.
//!
//! The subset: `var`/`let`/`const` locals, `if`/`else`, blocks, `return`, expression
//! statements; literals, object and array literals with static keys, `this`, member reads and
//! writes, `=`/compound/logical assignment, `++`/`--`, arithmetic, bitwise, comparison, logical
//! and conditional operators, `typeof`, `void`, `arr.push(…)` (while the built-in is in
//! place); and the argument getters that return plain values (`log.getPC()`,
//! `log.op.toString()`, `frame.getType()`, …). Anything
//! else — loops, calls of other functions, globals, closures, `db`, stack, memory, any other
//! use of the arguments — leaves the hook uncompiled, and the tracer then runs in boa only.

use boa_engine::ast::declaration::{Binding, LexicalDeclaration, Variable};
use boa_engine::ast::expression::access::{PropertyAccess, PropertyAccessField};
use boa_engine::ast::expression::literal::{
    LiteralKind, ObjectMethodDefinition, PropertyDefinition,
};
use boa_engine::ast::expression::operator::assign::{AssignOp, AssignTarget};
use boa_engine::ast::expression::operator::binary::{
    ArithmeticOp, BinaryOp, BitwiseOp, LogicalOp, RelationalOp,
};
use boa_engine::ast::expression::operator::unary::UnaryOp;
use boa_engine::ast::expression::operator::update::{UpdateOp, UpdateTarget};
use boa_engine::ast::function::{FormalParameterList, FunctionBody};
use boa_engine::ast::property::{MethodDefinitionKind, PropertyName};
use boa_engine::ast::scope::Scope;
use boa_engine::ast::statement::iteration::ForLoopInitializer;
use boa_engine::ast::{Declaration, Expression, Statement, StatementListItem};
use boa_engine::interner::{Interner, Sym};
use boa_engine::parser::{Parser, Source};

use super::ir::{member, Base, Bin, Buf, Compiled, Expr, Func, Logic, Stmt, Target, Un, Uses};
use super::value::{Key, Tables, Text, V};

mod cache;
mod calls;
mod detached;

pub use cache::{compile_cached, step_prefix_cached};

/// What a hook's parameter stands for.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Param {
    Log,
    Db,
    Frame,
    FrameResult,
    /// `result`'s `ctx`.
    Ctx,
    /// `setup`'s configuration text.
    Config,
}

#[derive(Clone, Copy, Debug)]
enum Bind {
    Local {
        slot: u16,
        konst: bool,
        ready: bool,
    },
    Param(Param),
    /// A helper's parameter given a frame's buffer (`this.add(frame.getTo())`): read where it
    /// is used, which is the same since the getters are pure.
    Buf(Buf),
}

/// How deep helper calls are inlined (deeper ones, recursion included, are not compiled).
const MAX_INLINE: usize = 4;

/// A hook of the tracer's object literal: its name, and its parameters and body when it is a
/// function literal.
type HookDef<'a> = (
    String,
    Option<&'a FormalParameterList>,
    Option<&'a FunctionBody>,
);

/// The literal's properties in order: a function (`None`) or the expression of a value.
/// `None` as a whole when one is not a plain `name: value` or method (a shorthand `{x}`).
type Props<'a> = Option<Vec<(String, Option<&'a Expression>)>>;

/// Parses `source` (the tracer's object literal) and hands `f` its hooks (`step`, `fault`,
/// `enter`, `exit`). `None` when which function is which hook is not static: the source is not
/// an object literal, a key is computed or repeated, a hook is an accessor.
fn with_hooks<T>(
    source: &str,
    f: impl FnOnce(&Interner, Vec<HookDef<'_>>, Vec<HookDef<'_>>, Props<'_>) -> Option<T>,
) -> Option<T> {
    let text = format!("(\n{source}\n)");
    let mut interner = Interner::default();
    let script = Parser::new(Source::from_bytes(&text))
        .parse_script(&Scope::new_global(), &mut interner)
        .ok()?;
    let [StatementListItem::Statement(stmt)] = script.statements().statements() else {
        return None;
    };
    let Statement::Expression(e) = stmt.as_ref() else {
        return None;
    };
    let Expression::ObjectLiteral(obj) = strip(e) else {
        return None;
    };
    let mut hooks = Vec::new();
    let mut helpers = Vec::new();
    let mut seen = Vec::new();
    let mut props = Some(Vec::new());
    for p in obj.properties() {
        let mut value_of = None;
        let (name, params, body) = match p {
            PropertyDefinition::Property(PropertyName::Literal(id), value) => {
                let name = resolve(&interner, id.sym())?;
                match strip(value) {
                    Expression::FunctionExpression(f) => {
                        (name, Some(f.parameters()), Some(f.body()))
                    }
                    v => {
                        value_of = Some(v);
                        (name, None, None)
                    }
                }
            }
            PropertyDefinition::MethodDefinition(m) => method(m, &interner)?,
            PropertyDefinition::IdentifierReference(id) => {
                props = None;
                (resolve(&interner, id.sym())?, None, None)
            }
            // Computed keys, spreads, `__proto__` setters: which hook is which is not static.
            _ => return None,
        };
        if name == "__proto__" || seen.contains(&name) {
            return None;
        }
        seen.push(name.clone());
        if let Some(props) = props.as_mut() {
            props.push((name.clone(), value_of));
        }
        if hook_params(&name).is_some() {
            hooks.push((name, params, body));
        } else if let (Some(_), Some(_)) = (params, body) {
            helpers.push((name, params, body));
        }
    }
    f(&interner, hooks, helpers, props)
}

/// What each hook's parameters stand for.
fn hook_params(name: &str) -> Option<&'static [Param]> {
    match name {
        "step" | "fault" => Some(&[Param::Log, Param::Db]),
        "enter" => Some(&[Param::Frame]),
        "exit" => Some(&[Param::FrameResult]),
        _ => None,
    }
}

/// Compiles the hooks of `source` (the tracer's object literal) if every one the script
/// defines is inside the subset.
pub fn compile(source: &str, strings: &mut Tables) -> Option<Compiled> {
    with_hooks(source, |interner, hooks, helpers, props| {
        let mut out = Compiled::default();
        for (name, params, body) in hooks {
            // A hook that is not a function literal (a reference, a number) is not compiled.
            let (Some(formal), Some(body)) = (params, body) else {
                return None;
            };
            let mut c = Compiler::new(interner, strings);
            c.helpers = &helpers;
            // One numbering of the inlined helpers for all hooks (`Inline::helper`), one
            // account of what they use.
            c.inlined = std::mem::take(&mut out.helpers);
            c.uses = out.uses;
            let f = c.function(formal, body, hook_params(&name)?)?;
            out.uses = c.uses;
            out.helpers = c.inlined;
            let slot = match name.as_str() {
                "step" => &mut out.step,
                "fault" => &mut out.fault,
                "enter" => &mut out.enter,
                _ => &mut out.exit,
            };
            *slot = Some(f);
        }
        if let Some(props) = props {
            out.detached = detached::compile(interner, strings, &helpers, &props, &mut out);
        }
        Some(out)
    })
}

/// For a script the native path cannot run whole: the leading statements of `step` that are
/// inside the subset (the rest of its body is not looked at), and whether `fault` is inside
/// it as a whole.
pub fn step_prefix(source: &str, strings: &mut Tables) -> Option<(Option<Func>, bool)> {
    with_hooks(source, |interner, hooks, _, _| {
        let (mut step, mut fault) = (None, false);
        for (name, params, body) in hooks {
            let (Some(formal), Some(body)) = (params, body) else {
                continue;
            };
            let params = hook_params(&name)?;
            match name.as_str() {
                "step" => step = Compiler::new(interner, strings).prefix(formal, body, params),
                "fault" => {
                    // Plain: inside the subset, reading no views.
                    let mut c = Compiler::new(interner, strings);
                    fault = c.function(formal, body, params).is_some()
                        && !c.uses.views
                        && !c.uses.may_deopt
                }
                _ => {}
            }
        }
        Some((step, fault))
    })
}

fn method<'a>(
    m: &'a ObjectMethodDefinition,
    interner: &Interner,
) -> Option<(
    String,
    Option<&'a FormalParameterList>,
    Option<&'a FunctionBody>,
)> {
    if m.kind() != MethodDefinitionKind::Ordinary {
        return None;
    }
    let PropertyName::Literal(id) = m.name() else {
        return None;
    };
    Some((
        resolve(interner, id.sym())?,
        Some(m.parameters()),
        Some(m.body()),
    ))
}

fn strip(mut e: &Expression) -> &Expression {
    while let Expression::Parenthesized(p) = e {
        e = p.expression();
    }
    e
}

fn resolve(interner: &Interner, sym: Sym) -> Option<String> {
    interner.resolve_expect(sym).utf8().map(str::to_string)
}

struct Compiler<'i> {
    interner: &'i Interner,
    strings: &'i mut Tables,
    /// The literal's other function-valued properties, which `this.name(…)` inlines.
    helpers: &'i [HookDef<'i>],
    /// The helpers inlined so far (their names).
    inlined: Vec<String>,
    /// Helpers being inlined, innermost last.
    inlining: Vec<String>,
    uses: Uses,
    /// Block scopes, innermost last; the first holds the parameters and `var`s.
    scopes: Vec<Vec<(Sym, Bind)>>,
    locals: u16,
    /// Compiling `result`, where `concat` is modelled too.
    in_result: bool,
    /// Compiling `setup`: the local holding the parsed configuration, and whether
    /// `JSON.parse(config)` was met (once only: each call makes a new object).
    config: Option<(u16, bool)>,
}

impl<'i> Compiler<'i> {
    fn new(interner: &'i Interner, strings: &'i mut Tables) -> Self {
        Compiler {
            interner,
            strings,
            helpers: &[],
            inlined: Vec::new(),
            inlining: Vec::new(),
            uses: Uses::default(),
            scopes: Vec::new(),
            locals: 0,
            in_result: false,
            config: None,
        }
    }

    fn name(&self, sym: Sym) -> Option<String> {
        resolve(self.interner, sym)
    }

    fn slot(&mut self) -> Option<u16> {
        let s = self.locals;
        self.locals = self.locals.checked_add(1)?;
        Some(s)
    }

    /// The scope of a function's parameters and `var`s.
    fn enter_function(
        &mut self,
        formal: &FormalParameterList,
        body: &FunctionBody,
        params: &[Param],
    ) -> Option<()> {
        let mut scope = Vec::new();
        for (i, p) in formal.as_ref().iter().enumerate() {
            if p.is_rest_param() || p.init().is_some() {
                return None;
            }
            let Binding::Identifier(id) = p.variable().binding() else {
                return None;
            };
            let bind = match params.get(i) {
                Some(&p) => Bind::Param(p),
                // Arguments geth does not pass are undefined locals.
                None => Bind::Local {
                    slot: self.slot()?,
                    konst: false,
                    ready: true,
                },
            };
            scope.push((id.sym(), bind));
        }
        self.declare_vars(body, &mut scope)?;
        self.scopes.push(scope);
        Some(())
    }

    /// Gives each `var` of `body` not already in `scope` a local of its own (function-scoped,
    /// undefined until assigned); the slots made.
    fn declare_vars(
        &mut self,
        body: &FunctionBody,
        scope: &mut Vec<(Sym, Bind)>,
    ) -> Option<Vec<u16>> {
        let mut vars = Vec::new();
        hoisted_vars(body.statements(), &mut vars)?;
        let mut slots = Vec::new();
        for sym in vars {
            if scope.iter().any(|(s, _)| *s == sym) {
                continue;
            }
            let slot = self.slot()?;
            let bind = Bind::Local {
                slot,
                konst: false,
                ready: true,
            };
            scope.push((sym, bind));
            slots.push(slot);
        }
        Some(slots)
    }

    fn function(
        &mut self,
        formal: &FormalParameterList,
        body: &FunctionBody,
        params: &[Param],
    ) -> Option<Func> {
        self.enter_function(formal, body, params)?;
        let mut body = self.block(body.statements())?;
        if let Some(Stmt::Expr(e)) = body.pop_if(|s| matches!(s, Stmt::Expr(_))) {
            body.push(Stmt::Final(e));
        }
        Some(Func {
            locals: self.locals,
            body,
        })
    }

    /// The longest run of a function's leading statements inside the subset.
    fn prefix(
        &mut self,
        formal: &FormalParameterList,
        body: &FunctionBody,
        params: &[Param],
    ) -> Option<Func> {
        self.enter_function(formal, body, params)?;
        let items = body.statements();
        self.lexical_scope(items)?;
        let mut out = Vec::new();
        for item in items {
            match self.item(item) {
                Some(s) => out.extend(s),
                None => break,
            }
        }
        Some(Func {
            locals: self.locals,
            body: out,
        })
    }

    /// A statement list in a new block scope holding its `let`/`const` names.
    fn block(&mut self, items: &[StatementListItem]) -> Option<Vec<Stmt>> {
        self.lexical_scope(items)?;
        let mut out = Vec::new();
        for item in items {
            out.extend(self.item(item)?);
        }
        self.scopes.pop();
        Some(out)
    }

    /// Opens the block scope of `items`: their `let`/`const` names, not yet initialised.
    fn lexical_scope(&mut self, items: &[StatementListItem]) -> Option<()> {
        let mut scope = Vec::new();
        for item in items {
            if let StatementListItem::Declaration(d) = item {
                let Declaration::Lexical(lex) = d.as_ref() else {
                    return None;
                };
                self.declare_lexical(lex, &mut scope)?;
            }
        }
        self.scopes.push(scope);
        Some(())
    }

    /// Gives each name of a `let`/`const` declaration a local of its own in `scope`, not yet
    /// initialised (reading it before its declaration runs is left to boa).
    fn declare_lexical(
        &mut self,
        lex: &LexicalDeclaration,
        scope: &mut Vec<(Sym, Bind)>,
    ) -> Option<()> {
        let konst = match lex {
            LexicalDeclaration::Const(_) => true,
            LexicalDeclaration::Let(_) => false,
            _ => return None,
        };
        for v in lex.variable_list().as_ref() {
            let Binding::Identifier(id) = v.binding() else {
                return None;
            };
            let slot = self.slot()?;
            let bind = Bind::Local {
                slot,
                konst,
                ready: false,
            };
            scope.push((id.sym(), bind));
        }
        Some(())
    }

    /// One item of a statement list (a declaration of several names gives several).
    fn item(&mut self, item: &StatementListItem) -> Option<Vec<Stmt>> {
        match item {
            StatementListItem::Statement(s) => Some(vec![self.stmt(s)?]),
            StatementListItem::Declaration(d) => {
                let Declaration::Lexical(lex) = d.as_ref() else {
                    return None;
                };
                lex.variable_list()
                    .as_ref()
                    .iter()
                    .map(|v| self.lexical(v))
                    .collect()
            }
        }
    }

    fn lexical(&mut self, v: &Variable) -> Option<Stmt> {
        let Binding::Identifier(id) = v.binding() else {
            return None;
        };
        let init = match v.init() {
            Some(e) => Some(self.expr(e)?),
            None => None,
        };
        let scope = self.scopes.last_mut()?;
        let (_, bind) = scope.iter_mut().find(|(s, _)| *s == id.sym())?;
        let Bind::Local { slot, ready, .. } = bind else {
            return None;
        };
        *ready = true;
        Some(Stmt::Init(
            *slot,
            Some(init.unwrap_or(Expr::Const(V::Undef))),
        ))
    }

    fn lookup(&self, sym: Sym) -> Option<Bind> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.iter().rev().find(|(n, _)| *n == sym).map(|(_, b)| *b))
    }

    fn stmt(&mut self, s: &Statement) -> Option<Stmt> {
        Some(match s {
            Statement::Empty => Stmt::Empty,
            Statement::Expression(e) => Stmt::Expr(self.expr(e)?),
            Statement::Block(b) => Stmt::Block(self.block(b.statement_list().statements())?),
            Statement::If(i) => {
                let cond = self.expr(i.cond())?;
                let then = self.branch(i.body())?;
                let other = match i.else_node() {
                    Some(e) => Some(self.branch(e)?),
                    None => None,
                };
                Stmt::If(cond, Box::new(then), other.map(Box::new))
            }
            Statement::Return(r) => Stmt::Return(match r.target() {
                Some(e) => Some(self.expr(e)?),
                None => None,
            }),
            Statement::Var(v) => {
                let mut out = Vec::new();
                for var in v.0.as_ref() {
                    let Binding::Identifier(id) = var.binding() else {
                        return None;
                    };
                    let Some(Bind::Local { slot, .. }) = self.lookup(id.sym()) else {
                        return None;
                    };
                    let init = match var.init() {
                        Some(e) => Some(self.expr(e)?),
                        None => None,
                    };
                    if init.is_some() {
                        out.push(Stmt::Init(slot, init));
                    }
                }
                match out.len() {
                    0 => Stmt::Empty,
                    1 => out.pop()?,
                    _ => Stmt::Block(out),
                }
            }
            Statement::WhileLoop(w) => {
                Stmt::While(self.expr(w.condition())?, Box::new(self.stmt(w.body())?))
            }
            Statement::DoWhileLoop(d) => {
                Stmt::DoWhile(Box::new(self.stmt(d.body())?), self.expr(d.cond())?)
            }
            Statement::ForLoop(f) => return self.for_loop(f),
            Statement::Break(b) if b.label().is_none() => Stmt::Break,
            Statement::Continue(c) if c.label().is_none() => Stmt::Continue,
            _ => return None,
        })
    }

    /// `for (init; test; update) body`; a `let`/`const` in `init` is scoped to the loop (no
    /// closure can see that JavaScript makes one binding per iteration).
    fn for_loop(&mut self, f: &boa_engine::ast::statement::ForLoop) -> Option<Stmt> {
        let mut scoped = false;
        let init = match f.init() {
            None => None,
            Some(ForLoopInitializer::Expression(e)) => Some(Stmt::Expr(self.expr(e)?)),
            Some(ForLoopInitializer::Var(v)) => Some(self.stmt(&Statement::Var(v.clone()))?),
            Some(ForLoopInitializer::Lexical(l)) => {
                let lex = l.declaration();
                let mut scope = Vec::new();
                self.declare_lexical(lex, &mut scope)?;
                self.scopes.push(scope);
                scoped = true;
                let mut inits = Vec::new();
                for v in lex.variable_list().as_ref() {
                    inits.push(self.lexical(v)?);
                }
                Some(Stmt::Block(inits))
            }
        };
        let test = match f.condition() {
            Some(c) => self.expr(c).map(Some),
            None => Some(None),
        };
        let update = match f.final_expr() {
            Some(u) => self.expr(u).map(Some),
            None => Some(None),
        };
        let body = self.stmt(f.body());
        if scoped {
            self.scopes.pop();
        }
        Some(Stmt::For {
            init: init.map(Box::new),
            test: test?,
            update: update?,
            body: Box::new(body?),
        })
    }

    /// The body of an `if`: a statement, in a scope of its own when it is a block.
    fn branch(&mut self, s: &Statement) -> Option<Stmt> {
        self.stmt(s)
    }

    fn exprs(&mut self, es: &[Expression]) -> Option<Vec<Expr>> {
        es.iter().map(|e| self.expr(e)).collect()
    }

    fn text(&mut self, sym: Sym) -> Option<Text> {
        let s = self.name(sym)?;
        Some(self.strings.intern(&s))
    }

    fn key(&mut self, sym: Sym) -> Option<Key> {
        Some(Key::from_name(self.text(sym)?))
    }

    fn expr(&mut self, e: &Expression) -> Option<Expr> {
        Some(match e {
            Expression::Parenthesized(p) => self.expr(p.expression())?,
            Expression::This(_) => Expr::This,
            Expression::Literal(l) => Expr::Const(match l.kind() {
                LiteralKind::String(s) => {
                    let t = self.name(*s)?;
                    V::Str(self.strings.intern_id(&t))
                }
                LiteralKind::Num(n) => V::num(*n),
                LiteralKind::Int(i) => V::num(f64::from(*i)),
                LiteralKind::Bool(b) => V::bool(*b),
                LiteralKind::Null => V::Null,
                LiteralKind::Undefined => V::Undef,
                _ => return None,
            }),
            Expression::Identifier(id) => match self.lookup(id.sym()) {
                Some(Bind::Local { slot, ready, .. }) => {
                    if !ready {
                        return None;
                    }
                    Expr::Local(slot)
                }
                Some(Bind::Param(_) | Bind::Buf(_)) => return None,
                None => match self.name(id.sym())?.as_str() {
                    "undefined" => Expr::Const(V::Undef),
                    "NaN" => Expr::Const(V::num(f64::NAN)),
                    "Infinity" => Expr::Const(V::num(f64::INFINITY)),
                    _ => return None,
                },
            },
            Expression::PropertyAccess(PropertyAccess::Simple(a)) => {
                if self.param(a.target()) == Some(Param::Ctx) {
                    return self.ctx_field(a.field());
                }
                if let Some(b) = self.buf_of(a.target()) {
                    return match self.field_name(a.field())?.as_str() {
                        "length" => Some(Expr::BufLen(b)),
                        _ => None,
                    };
                }
                let target = self.expr(a.target())?;
                match a.field() {
                    PropertyAccessField::Const(id) => member(target, self.key(id.sym())?),
                    PropertyAccessField::Expr(k) => match self.static_key(k) {
                        Some(key) => member(target, key),
                        None => Expr::Index(Box::new(target), Box::new(self.expr(k)?)),
                    },
                }
            }
            Expression::Call(c) => self.call(c.function(), c.args())?,
            Expression::Assign(a) => {
                let target = Box::new(self.target(a.lhs())?);
                let rhs = Box::new(self.expr(a.rhs())?);
                match a.op() {
                    AssignOp::Assign => Expr::Assign(target, rhs),
                    AssignOp::BoolAnd => Expr::LogicAssign(target, Logic::And, rhs),
                    AssignOp::BoolOr => Expr::LogicAssign(target, Logic::Or, rhs),
                    AssignOp::Coalesce => Expr::LogicAssign(target, Logic::Coalesce, rhs),
                    op => Expr::Compound(target, compound(op)?, rhs),
                }
            }
            Expression::Update(u) => {
                let target = match u.target() {
                    UpdateTarget::Identifier(id) => self.local_target(id.sym())?,
                    UpdateTarget::PropertyAccess(PropertyAccess::Simple(a)) => {
                        self.member_target(a.target(), a.field())?
                    }
                    _ => return None,
                };
                let (inc, prefix) = match u.op() {
                    UpdateOp::IncrementPost => (true, false),
                    UpdateOp::IncrementPre => (true, true),
                    UpdateOp::DecrementPost => (false, false),
                    UpdateOp::DecrementPre => (false, true),
                };
                Expr::Update {
                    target: Box::new(target),
                    inc,
                    prefix,
                }
            }
            Expression::Binary(b) => {
                let (l, r) = (self.expr(b.lhs())?, self.expr(b.rhs())?);
                let op = match b.op() {
                    BinaryOp::Comma => return Some(Expr::Seq(Box::new(l), Box::new(r))),
                    BinaryOp::Logical(op) => {
                        let op = match op {
                            LogicalOp::And => Logic::And,
                            LogicalOp::Or => Logic::Or,
                            LogicalOp::Coalesce => Logic::Coalesce,
                        };
                        return Some(Expr::Logic(op, Box::new(l), Box::new(r)));
                    }
                    BinaryOp::Arithmetic(op) => match op {
                        ArithmeticOp::Add => Bin::Add,
                        ArithmeticOp::Sub => Bin::Sub,
                        ArithmeticOp::Mul => Bin::Mul,
                        ArithmeticOp::Div => Bin::Div,
                        ArithmeticOp::Mod => Bin::Mod,
                        ArithmeticOp::Exp => return None,
                    },
                    BinaryOp::Bitwise(op) => match op {
                        BitwiseOp::And => Bin::And,
                        BitwiseOp::Or => Bin::Or,
                        BitwiseOp::Xor => Bin::Xor,
                        BitwiseOp::Shl => Bin::Shl,
                        BitwiseOp::Shr => Bin::Shr,
                        BitwiseOp::UShr => Bin::UShr,
                    },
                    BinaryOp::Relational(op) => match op {
                        RelationalOp::Equal => Bin::Eq,
                        RelationalOp::NotEqual => Bin::Ne,
                        RelationalOp::StrictEqual => Bin::StrictEq,
                        RelationalOp::StrictNotEqual => Bin::StrictNe,
                        RelationalOp::LessThan => Bin::Lt,
                        RelationalOp::LessThanOrEqual => Bin::Le,
                        RelationalOp::GreaterThan => Bin::Gt,
                        RelationalOp::GreaterThanOrEqual => Bin::Ge,
                        _ => return None,
                    },
                };
                Expr::Bin(op, Box::new(l), Box::new(r))
            }
            Expression::Unary(u) => {
                let op = match u.op() {
                    UnaryOp::Minus => Un::Neg,
                    UnaryOp::Plus => Un::Plus,
                    UnaryOp::Not => Un::Not,
                    UnaryOp::Tilde => Un::BitNot,
                    UnaryOp::TypeOf => Un::TypeOf,
                    UnaryOp::Void => Un::Void,
                    UnaryOp::Delete => {
                        let Expression::PropertyAccess(PropertyAccess::Simple(a)) =
                            strip(u.target())
                        else {
                            return None;
                        };
                        let key = match a.field() {
                            PropertyAccessField::Const(id) => self.key(id.sym())?,
                            PropertyAccessField::Expr(k) => self.static_key(k)?,
                        };
                        let target = self.expr(a.target())?;
                        return Some(Expr::Delete(Box::new(target), key));
                    }
                };
                Expr::Un(op, Box::new(self.expr(u.target())?))
            }
            Expression::Conditional(c) => Expr::Cond(
                Box::new(self.expr(c.condition())?),
                Box::new(self.expr(c.if_true())?),
                Box::new(self.expr(c.if_false())?),
            ),
            Expression::ObjectLiteral(o) => {
                let mut props = Vec::new();
                for p in o.properties() {
                    let (key, value) = match p {
                        PropertyDefinition::Property(PropertyName::Literal(id), v) => {
                            (self.key(id.sym())?, self.expr(v)?)
                        }
                        PropertyDefinition::IdentifierReference(id) => {
                            let v = self.expr(&Expression::Identifier(*id))?;
                            (self.key(id.sym())?, v)
                        }
                        _ => return None,
                    };
                    // `__proto__: x` sets the prototype.
                    if key == Key::Name(Text::from("__proto__")) {
                        return None;
                    }
                    props.push((key, value));
                }
                Expr::Object(props)
            }
            Expression::ArrayLiteral(a) => {
                if a.has_trailing_comma_spread() {
                    return None;
                }
                let mut items = Vec::new();
                for item in a.as_ref() {
                    let Some(item) = item else {
                        return None;
                    };
                    if matches!(item, Expression::Spread(_)) {
                        return None;
                    }
                    items.push(self.expr(item)?);
                }
                Expr::Array(items)
            }
            _ => return None,
        })
    }

    /// A key known at compile time: `o["name"]`, `o[3]`.
    fn static_key(&mut self, e: &Expression) -> Option<Key> {
        match strip(e) {
            Expression::Literal(l) => match l.kind() {
                LiteralKind::String(s) => Some(Key::from_name(self.text(*s)?)),
                LiteralKind::Int(i) => Key::from_num(f64::from(*i)),
                LiteralKind::Num(n) => Key::from_num(*n),
                _ => None,
            },
            _ => None,
        }
    }

    fn param(&self, e: &Expression) -> Option<Param> {
        match strip(e) {
            Expression::Identifier(id) => match self.lookup(id.sym())? {
                Bind::Param(p) => Some(p),
                Bind::Local { .. } | Bind::Buf(_) => None,
            },
            _ => None,
        }
    }

    fn field_name(&self, f: &PropertyAccessField) -> Option<String> {
        match f {
            PropertyAccessField::Const(id) => self.name(id.sym()),
            PropertyAccessField::Expr(_) => None,
        }
    }

    fn local_target(&self, sym: Sym) -> Option<Target> {
        match self.lookup(sym)? {
            Bind::Local {
                slot,
                konst: false,
                ready: true,
            } => Some(Target::Local(slot)),
            _ => None,
        }
    }

    fn member_target(
        &mut self,
        target: &Expression,
        field: &PropertyAccessField,
    ) -> Option<Target> {
        let obj = self.expr(target)?;
        Some(match field {
            PropertyAccessField::Const(id) => {
                let key = self.key(id.sym())?;
                match Base::of(&obj) {
                    Some(b) => Target::Path(b, key),
                    None => Target::Member(obj, key),
                }
            }
            PropertyAccessField::Expr(k) => match self.static_key(k) {
                Some(key) => match Base::of(&obj) {
                    Some(b) => Target::Path(b, key),
                    None => Target::Member(obj, key),
                },
                None => Target::Index(obj, self.expr(k)?),
            },
        })
    }

    fn target(&mut self, t: &AssignTarget) -> Option<Target> {
        match t {
            AssignTarget::Identifier(id) => self.local_target(id.sym()),
            AssignTarget::Access(PropertyAccess::Simple(a)) => {
                self.member_target(a.target(), a.field())
            }
            _ => None,
        }
    }
}

fn compound(op: AssignOp) -> Option<Bin> {
    Some(match op {
        AssignOp::Add => Bin::Add,
        AssignOp::Sub => Bin::Sub,
        AssignOp::Mul => Bin::Mul,
        AssignOp::Div => Bin::Div,
        AssignOp::Mod => Bin::Mod,
        AssignOp::And => Bin::And,
        AssignOp::Or => Bin::Or,
        AssignOp::Xor => Bin::Xor,
        AssignOp::Shl => Bin::Shl,
        AssignOp::Shr => Bin::Shr,
        AssignOp::Ushr => Bin::UShr,
        _ => return None,
    })
}

/// The `var` names of a function body (they are function-scoped), or `None` for a statement
/// outside the subset.
fn hoisted_vars(items: &[StatementListItem], out: &mut Vec<Sym>) -> Option<()> {
    for item in items {
        if let StatementListItem::Statement(s) = item {
            var_names(s, out)?;
        }
    }
    Some(())
}

fn var_names(s: &Statement, out: &mut Vec<Sym>) -> Option<()> {
    match s {
        Statement::Var(v) => {
            for var in v.0.as_ref() {
                let Binding::Identifier(id) = var.binding() else {
                    return None;
                };
                if !out.contains(&id.sym()) {
                    out.push(id.sym());
                }
            }
        }
        Statement::Block(b) => hoisted_vars(b.statement_list().statements(), out)?,
        Statement::If(i) => {
            var_names(i.body(), out)?;
            if let Some(e) = i.else_node() {
                var_names(e, out)?;
            }
        }
        Statement::WhileLoop(w) => var_names(w.body(), out)?,
        Statement::DoWhileLoop(d) => var_names(d.body(), out)?,
        Statement::ForLoop(f) => {
            if let Some(ForLoopInitializer::Var(v)) = f.init() {
                var_names(&Statement::Var(v.clone()), out)?;
            }
            var_names(f.body(), out)?;
        }
        _ => {}
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::compile;
    use crate::js::fast::value::Tables;

    fn lib(name: &str) -> String {
        std::fs::read_to_string(format!("{}/tracers/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    #[test]
    fn library_counters_compile() {
        let mut strings = Tables::default();
        for name in ["opcode_count.js", "gas_by_opcode.js"] {
            let c = compile(&lib(name), &mut strings)
                .unwrap_or_else(|| panic!("{name} did not compile"));
            assert!(c.step.is_some() && c.fault.is_some(), "{name}");
        }
        let c = compile(
            "{n: 0, step(log) { this.n++; }, fault() {}, result() { return this.n; }}",
            &mut strings,
        )
        .unwrap();
        assert!(c.step.is_some() && c.enter.is_none());
    }

    #[test]
    fn scripts_outside_the_subset_stay_in_boa() {
        for src in [
            // a for-in loop, a labelled break, a global, db, an unknown method, a closure variable
            "{step: function(log) { for (var k in this) {} }, fault: function() {}, result: function() {}}",
            "{step: function(log) { a: for (;;) { break a; } }, fault: function() {}, result: function() {}}",
            "{step: function(log) { toHex(log.op); }, fault: function() {}, result: function() {}}",
            "{step: function(log) { this.x = log.stack.peek(0, 1); }, fault: function() {}, result: function() {}}",
            "{step: function(log, db) { db.getBalance(1); }, fault: function() {}, result: function() {}}",
            "{step: function(log) { this.a.concat([1]); }, fault: function() {}, result: function() {}}",
            "{step: function(log) { x++; }, fault: function() {}, result: function() {}}",
            // use before `let`, assignment to a const, a parameter used as a value
            "{step: function(log) { y = 1; let y; }, fault: function() {}, result: function() {}}",
            "{step: function(log) { const c = 1; c = 2; }, fault: function() {}, result: function() {}}",
            "{step: function(log) { this.l = log; }, fault: function() {}, result: function() {}}",
            // a hook that is not a function literal, a computed key
            "{step: stepFn, fault: function() {}, result: function() {}}",
            "{['step']: function() {}, fault: function() {}, result: function() {}}",
            // an enter that reads a buffer, or hands it to a function other than `toHex`
            "{enter: function(f) { this.f = f.getFrom(); }, exit: function() {}, fault: function() {}, result: function() {}}",
            "{enter: function(f) { this.f = toWord(f.getFrom()); }, exit: function() {}, fault: function() {}, result: function() {}}",
            "{enter: function(f) { var toHex = 1; this.f = toHex(f.getTo()); }, exit: function() {}, fault: function() {}, result: function() {}}",
            "{enter: function(f) { this.f = toHex(f.getTo(), 1); }, exit: function() {}, fault: function() {}, result: function() {}}",
        ] {
            assert!(compile(src, &mut Tables::default()).is_none(), "compiled: {src}");
        }
    }
}
