//! What only `result` reads natively: the fields and buffers of its `ctx`, and `concat`.

use super::super::ir::{Expr, Getter, TxBuf, TxField};
use super::super::value::{Deopt, Key, Text, R, V};
use super::Machine;
use crate::js::objects::Shared;

/// `f` of one of `ctx`'s buffers (empty outside `result`, which never reads one then).
pub(super) fn buffer<T>(shared: &Shared, b: TxBuf, f: impl FnOnce(&[u8]) -> T) -> T {
    let tx = shared.tx.borrow();
    let Some(t) = tx.as_ref() else {
        return f(&[]);
    };
    match b {
        TxBuf::From => f(t.from.as_slice()),
        TxBuf::To => f(t.to.as_slice()),
        TxBuf::Input => f(&t.input),
        TxBuf::Output => f(&t.output),
        TxBuf::Coinbase => f(t.coinbase.as_slice()),
    }
}

/// Elements an array made by `concat` may have (more are left to boa).
const CONCAT_MAX: usize = 1 << 16;

impl Machine<'_> {
    /// `toHex(ctx.to)` and the like, `ctx.type`, `ctx.gas`, …
    pub(super) fn tx_getter(&mut self, g: Getter) -> R<V> {
        match g {
            Getter::TxHex(b) => {
                let s = buffer(self.shared, b, super::ops::hex_string);
                self.heap.t.str_value(&Text::from(s))
            }
            Getter::Tx(f) => self.tx_field(f),
            _ => Err(Deopt),
        }
    }

    /// `ctx.type`, `ctx.gas`, …: what the host's `ctx` object holds (see `Host::ctx_object`).
    fn tx_field(&mut self, f: TxField) -> R<V> {
        let tx = self.shared.tx.borrow();
        let t = tx.as_ref().ok_or(Deopt)?;
        let num = |n: u64| V::num(n as f64);
        Ok(match f {
            TxField::Type => V::Str(self.heap.t.intern_id(t.kind().as_str())),
            TxField::Gas => num(t.gas),
            TxField::GasUsed => num(t.gas_used),
            TxField::Block => num(t.block),
            TxField::TxIndex => t.tx_index.map_or(V::Undef, num),
            TxField::Value => self.heap.t.big(t.value),
            TxField::GasPrice => self.heap.t.big(t.gas_price),
            TxField::Error => match &t.error {
                Some(e) => self.heap.t.str_value(&e.as_str().into())?,
                None => V::Undef,
            },
        })
    }

    /// `on.concat(…vals)` with the built-in `concat`, for a plain array `on`: a new array of
    /// its elements, then each argument's (an array's elements, holes kept) or the argument.
    /// Values boa holds are left to it (a function or typed array may be spreadable).
    pub(super) fn concat(&mut self, on: &Expr, args: &[Expr]) -> R<V> {
        let on = self.eval(on)?;
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(self.eval(a)?);
        }
        // `concat` of a non-array: ToObject, and its species, are left to boa.
        if !matches!(on, V::Obj(id) if self.heap.obj(id as u32).array) {
            return Err(Deopt);
        }
        let mut elems: Vec<(Key, V)> = Vec::new();
        let mut len = 0usize;
        for &v in std::iter::once(&on).chain(&vals) {
            match v {
                V::Obj(id) if self.heap.obj(id as u32).array => {
                    let o = self.heap.obj(id as u32);
                    if len + o.elems.len() > CONCAT_MAX {
                        return Err(Deopt);
                    }
                    for (i, e) in o.elems.iter().enumerate() {
                        if let Some(e) = e {
                            elems.push((Key::Idx((len + i) as u32), *e));
                        }
                    }
                    len += o.elems.len();
                }
                V::Opaque(_) | V::Big(_) | V::Buf(_) => return Err(Deopt),
                v => {
                    if len >= CONCAT_MAX {
                        return Err(Deopt);
                    }
                    elems.push((Key::Idx(len as u32), v));
                    len += 1;
                }
            }
        }
        let id = self.heap.create(true, elems)?;
        self.heap.set_len(id, len);
        Ok(V::Obj(u64::from(id)))
    }
}
