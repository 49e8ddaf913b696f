//! The operators and methods the evaluator applies to values: JavaScript's binary operators,
//! and the methods of strings and `bigInt`s (`slice`, `toString`, `toJSNumber`).

use alloy_primitives::U256;

use super::super::ir::{Bin, Method};
use super::super::value::{to_i32, Deopt, Text, R, V};
use super::{Machine, CHECK_EVERY};
use crate::js::buffers;
use crate::js::fast::ir::Expr;
use std::time::Instant;

/// The largest integer a `bigInt` hands to `toJSNumber` exactly.
const SAFE_MAX: u64 = (1 << 53) - 1;

/// `bigInt`'s `toString(radix)`: JavaScript's digits, lower case.
fn big_text(v: U256, radix: u64) -> String {
    match radix {
        10 => v.to_string(),
        16 => format!("{v:x}"),
        _ => {
            if v.is_zero() {
                return "0".into();
            }
            v.to_base_be(radix)
                .map(|d| char::from_digit(d as u32, radix as u32).unwrap_or('?'))
                .collect()
        }
    }
}

/// The radix argument of `toString`: `None` when not given, an integer in 2..=36, anything
/// else left to boa (which throws a RangeError, or converts it).
fn radix(v: V) -> R<Option<u64>> {
    match v {
        V::Undef => Ok(None),
        V::Num(r) => {
            let r = f64::from_bits(r);
            if r.fract() != 0.0 || !(2.0..=36.0).contains(&r) {
                return Err(Deopt);
            }
            Ok(Some(r as u64))
        }
        _ => Err(Deopt),
    }
}

/// `ToIntegerOrInfinity` of a number argument (anything else is left to boa).
fn integer(v: V) -> R<f64> {
    match v {
        V::Num(n) => {
            let n = f64::from_bits(n);
            Ok(if n.is_nan() { 0.0 } else { n.trunc() })
        }
        _ => Err(Deopt),
    }
}

/// A relative position of `String.prototype.slice` in a string of `len` units.
fn relative(n: f64, len: usize) -> usize {
    let len = len as f64;
    (if n < 0.0 {
        (len + n).max(0.0)
    } else {
        n.min(len)
    }) as usize
}

impl Machine<'_> {
    /// The buffer expressions: `log.contract.getAddress()`, `toHex`, `toWord`, `db.getState`.
    #[inline(never)]
    pub(super) fn buffers(&mut self, e: &Expr) -> R<V> {
        Ok(match e {
            Expr::ContractAddress => {
                let a = self.shared.step.borrow().address;
                self.heap.t.buf(a.to_vec())
            }
            Expr::ToHex(x) => match self.eval(x)? {
                V::Buf(b) => {
                    let s = hex_string(self.heap.t.buf_bytes(b));
                    self.heap.t.str_value(&Text::from(s))?
                }
                _ => return Err(Deopt),
            },
            Expr::ToWord(x) => {
                let bytes = match self.eval(x)? {
                    V::Str(s) => buffers::from_hex_lenient(self.heap.t.text(s)),
                    V::Buf(b) => self.heap.t.buf_bytes(b).to_vec(),
                    _ => return Err(Deopt),
                };
                self.heap.t.buf(buffers::bytes_to_word(&bytes).to_vec())
            }
            Expr::DbState(a, w) => {
                let (a, w) = (self.eval(a)?, self.eval(w)?);
                let (V::Buf(a), V::Buf(w)) = (a, w) else {
                    return Err(Deopt);
                };
                let addr = buffers::bytes_to_address(self.heap.t.buf_bytes(a));
                let slot = U256::from_be_bytes(buffers::bytes_to_word(self.heap.t.buf_bytes(w)).0);
                let v = self
                    .shared
                    .with_reader(|r| r.storage(addr, slot))
                    .ok_or(Deopt)?;
                self.heap.t.buf(v.to_be_bytes::<32>().to_vec())
            }
            _ => return Err(Deopt),
        })
    }

    /// One loop iteration: past the deadline or the memory limit, boa takes over.
    #[inline]
    pub(super) fn tick(&mut self) -> R<()> {
        self.iterations = self.iterations.wrapping_add(1);
        if self.iterations.is_multiple_of(CHECK_EVERY) {
            let (deadline, base) = self.limits.ok_or(Deopt)?;
            if Instant::now() >= deadline || crate::js::timeout::over_memory(base) {
                return Err(Deopt);
            }
        }
        Ok(())
    }

    /// A stack item or memory offset argument: a whole number (anything else is left to boa,
    /// which converts it, or throws geth's error).
    pub(super) fn index(&mut self, e: &Expr) -> R<usize> {
        let v = self.eval(e)?;
        let n = whole(v)?;
        if n < 0.0 {
            return Err(Deopt);
        }
        Ok(n as usize)
    }

    #[inline(never)]
    pub(super) fn method(&mut self, m: Method, on: V, args: &[V]) -> R<V> {
        let arg = |i: usize| args.get(i).copied().unwrap_or(V::Undef);
        match (m, on) {
            (Method::Slice, V::Str(id)) => {
                let text = self.heap.t.text(id).clone();
                if !text.is_ascii() {
                    return Err(Deopt);
                }
                let len = text.len();
                let from = match arg(0) {
                    V::Undef => 0,
                    a => relative(integer(a)?, len),
                };
                let to = match arg(1) {
                    V::Undef => len,
                    a => relative(integer(a)?, len),
                };
                let part = if from < to { &text[from..to] } else { "" };
                self.heap.t.str_value(&Text::from(part))
            }
            (Method::ToString, V::Str(_)) => Ok(on),
            (Method::ToString, V::Num(n)) => {
                let n = f64::from_bits(n);
                let text = match radix(arg(0))? {
                    None => self.heap.t.to_str(on)?.to_string(),
                    // An integer below 2^53 in a radix: its digits, as Number's `toString`
                    // gives them; fractions and larger numbers are left to boa.
                    Some(_) if n.fract() != 0.0 || n.abs() > SAFE_MAX as f64 => return Err(Deopt),
                    Some(r) => {
                        let digits = big_text(U256::from(n.abs() as u64), r);
                        if n < 0.0 {
                            format!("-{digits}")
                        } else {
                            digits
                        }
                    }
                };
                self.heap.t.str_value(&Text::from(text))
            }
            (Method::ToString, V::Big(b)) => {
                let r = radix(arg(0))?.unwrap_or(10);
                let text = big_text(self.heap.t.big_value(b), r);
                self.heap.t.str_value(&Text::from(text))
            }
            (Method::ToJsNumber, V::Big(b)) => {
                let v = self.heap.t.big_value(b);
                match u64::try_from(v) {
                    Ok(n) if n <= SAFE_MAX => Ok(V::num(n as f64)),
                    _ => Err(Deopt),
                }
            }
            _ => Err(Deopt),
        }
    }

    #[inline]
    pub(super) fn binary(&mut self, op: Bin, a: V, b: V) -> R<V> {
        use std::cmp::Ordering::{Equal, Greater, Less};
        let num = |f: fn(f64, f64) -> f64| -> R<V> { Ok(V::num(f(a.to_num()?, b.to_num()?))) };
        let int = |f: fn(i32, i32) -> i32| -> R<V> {
            Ok(V::num(f64::from(f(
                to_i32(a.to_num()?),
                to_i32(b.to_num()?),
            ))))
        };
        let t = &self.heap.t;
        let cmp = |want: &[std::cmp::Ordering]| -> R<V> {
            Ok(V::bool(t.compare(a, b)?.is_some_and(|o| want.contains(&o))))
        };
        match op {
            Bin::Add => match (a, b) {
                (V::Num(x), V::Num(y)) => Ok(V::num(f64::from_bits(x) + f64::from_bits(y))),
                (V::Obj(_) | V::Opaque(_), _) | (_, V::Obj(_) | V::Opaque(_)) => Err(Deopt),
                (V::Str(_), _) | (_, V::Str(_)) => {
                    let (x, y) = (t.to_str(a)?, t.to_str(b)?);
                    let mut s = String::with_capacity(x.len() + y.len());
                    s.push_str(&x);
                    s.push_str(&y);
                    self.heap.t.str_value(&Text::from(s))
                }
                _ => num(|x, y| x + y),
            },
            Bin::Sub => num(|x, y| x - y),
            Bin::Mul => num(|x, y| x * y),
            Bin::Div => num(|x, y| x / y),
            Bin::Mod => num(|x, y| x % y),
            Bin::And => int(|x, y| x & y),
            Bin::Or => int(|x, y| x | y),
            Bin::Xor => int(|x, y| x ^ y),
            Bin::Shl => int(|x, y| x.wrapping_shl(y as u32 & 31)),
            Bin::Shr => int(|x, y| x.wrapping_shr(y as u32 & 31)),
            Bin::UShr => {
                let x = to_i32(a.to_num()?) as u32;
                let y = to_i32(b.to_num()?) as u32 & 31;
                Ok(V::num(f64::from(x >> y)))
            }
            Bin::Eq => Ok(V::bool(t.loose_eq(a, b)?)),
            Bin::Ne => Ok(V::bool(!t.loose_eq(a, b)?)),
            Bin::StrictEq => Ok(V::bool(t.strict_eq(a, b))),
            Bin::StrictNe => Ok(V::bool(!t.strict_eq(a, b))),
            Bin::Lt => cmp(&[Less]),
            Bin::Le => cmp(&[Less, Equal]),
            Bin::Gt => cmp(&[Greater]),
            Bin::Ge => cmp(&[Greater, Equal]),
        }
    }
}

/// `+ - * / %` on two numbers.
#[inline]
pub(super) fn arithmetic(op: Bin, x: f64, y: f64) -> Option<f64> {
    Some(match op {
        Bin::Add => x + y,
        Bin::Sub => x - y,
        Bin::Mul => x * y,
        Bin::Div => x / y,
        Bin::Mod => x % y,
        _ => return None,
    })
}

/// A number with no fraction, as `slice` reads its bounds exactly (others are left to boa).
pub(super) fn whole(v: V) -> R<f64> {
    match v.to_num()? {
        n if n.fract() == 0.0 && n.abs() < 1e15 => Ok(n),
        _ => Err(Deopt),
    }
}

/// What the global `toHex` gives for `bytes`.
pub(super) fn hex_string(bytes: &[u8]) -> String {
    format!("0x{}", alloy_primitives::hex::encode(bytes))
}
