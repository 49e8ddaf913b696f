//! The tracer as a whole inside the subset: its object literal made of constants and functions,
//! no `setup`, and a `result(ctx, db)` that compiles too. Such a tracer runs without boa until
//! something leaves the subset ([`super::super::Fast::detached`]); a boa context costs more to
//! build than a frame tracer's hooks cost to run on most transactions.

use boa_engine::ast::expression::access::PropertyAccessField;
use boa_engine::ast::Expression;
use boa_engine::interner::Interner;

use super::super::ir::{Buf, Compiled, Detached, Expr, Func, Getter, Stmt, TxBuf, TxField, Un};
use super::super::value::{Held, Key, Tables, V};
use super::{Compiler, HookDef, Param};

/// `ctx.from`, `ctx.to`, … as a buffer.
pub(super) fn ctx_buffer(name: &str) -> Option<Buf> {
    Some(Buf::Tx(match name {
        "from" => TxBuf::From,
        "to" => TxBuf::To,
        "input" => TxBuf::Input,
        "output" => TxBuf::Output,
        "coinbase" => TxBuf::Coinbase,
        _ => return None,
    }))
}

impl Compiler<'_> {
    /// `ctx.type`, `ctx.gas`, `ctx.gasUsed`, `ctx.block`, `ctx.error`, `ctx.txIndex` (the
    /// bigInts `value`/`gasPrice`, the hashes and any other use of `ctx` are left to boa).
    pub(super) fn ctx_field(&mut self, f: &PropertyAccessField) -> Option<Expr> {
        let field = match self.field_name(f)?.as_str() {
            "type" => TxField::Type,
            "gas" => TxField::Gas,
            "gasUsed" => TxField::GasUsed,
            "block" => TxField::Block,
            "error" => TxField::Error,
            "txIndex" => TxField::TxIndex,
            "value" => TxField::Value,
            "gasPrice" => TxField::GasPrice,
            _ => return None,
        };
        Some(Expr::Get(Getter::Tx(field), Vec::new()))
    }
}

/// Whether `e` is a value fixed by the literal alone: a primitive, or an object or array
/// literal of such values.
fn constant(e: &Expr) -> bool {
    match e {
        Expr::Const(v) => !matches!(v, V::Opaque(_) | V::Big(_) | V::Buf(_)),
        Expr::Un(Un::Neg | Un::Plus, x) => matches!(**x, Expr::Const(V::Num(_))),
        Expr::Object(props) => props.iter().all(|(_, v)| constant(v)),
        Expr::Array(items) => items.iter().all(constant),
        _ => false,
    }
}

/// The literal and `result` of a tracer whose hooks compiled into `out`, when the whole
/// tracer is inside the subset; `out` gains the helpers `result` inlines.
pub(super) fn compile(
    interner: &Interner,
    strings: &mut Tables,
    helpers: &[HookDef<'_>],
    props: &[(String, Option<&Expression>)],
    out: &mut Compiled,
) -> Option<Detached> {
    let function = |n: &str| props.iter().any(|(p, v)| p == n && v.is_none());
    // What boa would refuse when it builds the tracer (geth's errors) is left to it.
    if !function("result")
        || !function("fault")
        || function("enter") != function("exit")
        || out.enter.is_some() != out.exit.is_some()
    {
        return None;
    }
    let mut functions = Vec::new();
    let mut fields = Vec::with_capacity(props.len());
    for (name, value) in props {
        let key = Key::from_name(strings.intern(name));
        let v = match value {
            None => {
                let n = u16::try_from(functions.len()).ok()?;
                functions.push(name.clone());
                Expr::Const(strings.held(Held::Literal(n)))
            }
            Some(e) => {
                let mut c = Compiler::new(interner, strings);
                c.scopes.push(Vec::new());
                let x = c.expr(e)?;
                if !constant(&x) {
                    return None;
                }
                x
            }
        };
        fields.push((key, v));
    }
    let setup = match props.iter().find(|(n, _)| n == "setup") {
        None => None,
        Some((_, Some(_))) => return None,
        Some((_, None)) => Some(setup(interner, strings, helpers, out)?),
    };
    let (_, Some(formal), Some(body)) = helpers.iter().find(|(n, _, _)| n == "result")? else {
        return None;
    };
    let mut c = Compiler::new(interner, strings);
    c.helpers = helpers;
    c.inlined = std::mem::take(&mut out.helpers);
    c.in_result = true;
    let result = c.function(formal, body, &[Param::Ctx, Param::Db]);
    out.helpers = c.inlined;
    let mut result = result?;
    // `result` reads no views or `db` (a helper outside the subset hands it to boa where
    // reached).
    if c.uses.views || c.uses.state_fns {
        return None;
    }
    // Its last store is not final: writing the value may still hand `result` to boa.
    not_final(&mut result);
    Some(Detached {
        literal: vec![Stmt::Return(Some(Expr::Object(fields)))],
        result,
        functions,
        setup,
    })
}

/// Makes `f`'s last store an ordinary, undo-logged one (see [`Stmt::Final`]).
fn not_final(f: &mut Func) {
    for s in &mut f.body {
        if let Stmt::Final(e) = s {
            *s = Stmt::Expr(std::mem::replace(e, Expr::Deopt));
        }
    }
}

/// `setup(config)`, whose one `JSON.parse(config)` reads a local holding the parsed
/// configuration; it reads no views or `db`.
fn setup(
    interner: &Interner,
    strings: &mut Tables,
    helpers: &[HookDef<'_>],
    out: &mut Compiled,
) -> Option<(Func, Option<u16>)> {
    let (_, Some(formal), Some(body)) = helpers.iter().find(|(n, _, _)| n == "setup")? else {
        return None;
    };
    let mut c = Compiler::new(interner, strings);
    c.helpers = helpers;
    c.inlined = std::mem::take(&mut out.helpers);
    let slot = c.slot()?;
    c.config = Some((slot, false));
    let f = c.function(formal, body, &[Param::Config]);
    out.helpers = c.inlined;
    let mut f = f?;
    if c.uses.views || c.uses.state_fns {
        return None;
    }
    not_final(&mut f);
    let used = c.config.is_some_and(|(_, used)| used);
    Some((f, used.then_some(slot)))
}
