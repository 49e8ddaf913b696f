//! Buffer conversions and geth's global helper functions: `toHex`, `toWord`, `toAddress`,
//! `toContract`, `toContract2`, `isPrecompiled`, `slice`.
//!
//! Buffers are `Uint8Array`s. Functions that take an address or word accept a `Uint8Array`, a
//! plain array of numbers, or (where geth allows it) a hex string; `db` methods reject strings
//! with geth's `invalid buffer type`.

use std::cell::Cell;
use std::rc::Rc;

use alloy_primitives::{hex, Address, B256};
use boa_engine::object::builtins::{JsArray, JsArrayBuffer, JsTypedArray, JsUint8Array};
use boa_engine::{js_string, Context, JsError, JsNativeError, JsResult, JsValue, NativeFunction};
use revm::precompile::{PrecompileSpecId, Precompiles};
use revm::primitives::hardfork::SpecId;

use super::objects::{fail, native, Shared};

/// A new `Uint8Array` holding `bytes`.
pub fn to_buf(bytes: &[u8], ctx: &mut Context) -> JsResult<JsValue> {
    Ok(JsUint8Array::from_iter(bytes.iter().copied(), ctx)?.into())
}

fn invalid_buffer() -> JsError {
    JsNativeError::error()
        .with_message("invalid buffer type")
        .into()
}

/// Bytes from a buffer-like value; hex strings only when `allow_string` (geth's `fromBuf`).
pub fn from_buf(v: &JsValue, allow_string: bool, ctx: &mut Context) -> JsResult<Vec<u8>> {
    if let Some(s) = v.as_string() {
        if !allow_string {
            return Err(invalid_buffer());
        }
        return Ok(from_hex_lenient(&s.to_std_string_escaped()));
    }
    let Some(obj) = v.as_object() else {
        return Err(invalid_buffer());
    };
    if let Ok(arr) = JsTypedArray::from_object(obj.clone()) {
        let buffer = arr.buffer(ctx)?;
        let offset = arr.byte_offset(ctx)?;
        let len = arr.byte_length(ctx)?;
        if let Some(buf) = buffer
            .as_object()
            .and_then(|b| JsArrayBuffer::from_object(b).ok())
        {
            if let Some(data) = buf.data() {
                if let Some(bytes) = data.get(offset..offset + len) {
                    return Ok(bytes.to_vec());
                }
            }
        }
        return Err(invalid_buffer());
    }
    if obj.is_array() {
        let arr = JsArray::from_object(obj)?;
        let n = arr.length(ctx)?;
        let mut out = Vec::with_capacity(n as usize);
        for i in 0..n {
            out.push(arr.get(i, ctx)?.to_number(ctx)? as i64 as u8);
        }
        return Ok(out);
    }
    Err(invalid_buffer())
}

/// go-ethereum's `common.FromHex`: optional `0x`, odd length gets a leading zero, bad hex → empty.
pub fn from_hex_lenient(s: &str) -> Vec<u8> {
    let t = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    let padded;
    let t = if t.len() % 2 == 1 {
        padded = format!("0{t}");
        padded.as_str()
    } else {
        t
    };
    hex::decode(t).unwrap_or_default()
}

/// The last 20 bytes, left-padded (`common.BytesToAddress`).
pub fn bytes_to_address(b: &[u8]) -> Address {
    let mut out = [0u8; 20];
    let n = b.len().min(20);
    out[20 - n..].copy_from_slice(&b[b.len() - n..]);
    Address::from(out)
}

/// The last 32 bytes, left-padded (`common.BytesToHash`).
pub fn bytes_to_word(b: &[u8]) -> B256 {
    let mut out = [0u8; 32];
    let n = b.len().min(32);
    out[32 - n..].copy_from_slice(&b[b.len() - n..]);
    B256::from(out)
}

fn int_arg(args: &[JsValue], i: usize, ctx: &mut Context) -> JsResult<i64> {
    let n = args.get(i).cloned().unwrap_or_default().to_number(ctx)?;
    Ok(if n.is_nan() { 0 } else { n as i64 })
}

/// Reads argument `i` as an integer the way goja converts to Go's `int64`.
pub fn int(args: &[JsValue], i: usize, ctx: &mut Context) -> JsResult<i64> {
    int_arg(args, i, ctx)
}

fn arg(args: &[JsValue], i: usize) -> JsValue {
    args.get(i).cloned().unwrap_or_default()
}

/// The fork whose precompiles `isPrecompiled` knows, in the context's host data: a host built
/// before the fork is known (to validate a script) can then serve the transaction.
struct Fork {
    precompiles: PrecompileSpecId,
    /// Whether `isPrecompiled` answered under this fork (its answer may live on in `this`).
    asked: Cell<bool>,
}

fn set_fork(spec: SpecId, ctx: &mut Context) {
    ctx.insert_data(Fork {
        precompiles: PrecompileSpecId::from_spec_id(spec),
        asked: Cell::new(false),
    });
}

/// Points `isPrecompiled` at `spec`; false if it already answered under a fork with other
/// precompiles (during `setup`), when the context cannot serve `spec` as a fresh one would.
pub fn retarget(spec: SpecId, ctx: &mut Context) -> bool {
    let target = PrecompileSpecId::from_spec_id(spec);
    let Some(fork) = ctx.get_data::<Fork>() else {
        return false;
    };
    if fork.asked.get() && fork.precompiles != target {
        return false;
    }
    set_fork(spec, ctx);
    true
}

/// Registers the helper functions on the global object, with `isPrecompiled` at fork `spec`.
pub fn register(shared: &Rc<Shared>, spec: SpecId, ctx: &mut Context) -> JsResult<()> {
    set_fork(spec, ctx);
    let reg = |name: &str, len: usize, f: NativeFunction, ctx: &mut Context| {
        ctx.register_global_callable(js_string!(name), len, f)
    };
    reg(
        "toHex",
        1,
        native(|_, args, ctx| {
            let b = from_buf(&arg(args, 0), false, ctx)?;
            Ok(js_string!(format!("0x{}", hex::encode(b))).into())
        }),
        ctx,
    )?;
    reg(
        "toWord",
        1,
        native(|_, args, ctx| {
            let b = from_buf(&arg(args, 0), true, ctx)?;
            to_buf(bytes_to_word(&b).as_slice(), ctx)
        }),
        ctx,
    )?;
    reg(
        "toAddress",
        1,
        native(|_, args, ctx| {
            let b = from_buf(&arg(args, 0), true, ctx)?;
            to_buf(bytes_to_address(&b).as_slice(), ctx)
        }),
        ctx,
    )?;
    reg(
        "toContract",
        2,
        native(|_, args, ctx| {
            let from = bytes_to_address(&from_buf(&arg(args, 0), true, ctx)?);
            let nonce = int_arg(args, 1, ctx)?.max(0) as u64;
            to_buf(from.create(nonce).as_slice(), ctx)
        }),
        ctx,
    )?;
    reg(
        "toContract2",
        3,
        native(|_, args, ctx| {
            let from = bytes_to_address(&from_buf(&arg(args, 0), true, ctx)?);
            let salt = bytes_to_word(&from_buf(&arg(args, 1), true, ctx)?);
            let code = from_buf(&arg(args, 2), false, ctx)?;
            to_buf(from.create2_from_code(salt, code).as_slice(), ctx)
        }),
        ctx,
    )?;
    reg(
        "isPrecompiled",
        1,
        native(|_, args, ctx| {
            let a = bytes_to_address(&from_buf(&arg(args, 0), true, ctx)?);
            let fork = ctx
                .get_data::<Fork>()
                .ok_or_else(|| JsNativeError::error().with_message("isPrecompiled: no fork set"))?;
            fork.asked.set(true);
            Ok(Precompiles::new(fork.precompiles).contains(&a).into())
        }),
        ctx,
    )?;
    let sh = shared.clone();
    reg(
        "slice",
        3,
        native(move |_, args, ctx| {
            let b = from_buf(&arg(args, 0), false, ctx)?;
            let (start, end) = (int_arg(args, 1, ctx)?, int_arg(args, 2, ctx)?);
            if start < 0 || start > end || end > b.len() as i64 {
                return Err(fail(
                    &sh,
                    format!(
                        "Tracer accessed out of bound memory: available {}, offset {}, size {}",
                        b.len(),
                        start,
                        end - start
                    ),
                ));
            }
            to_buf(&b[start as usize..end as usize], ctx)
        }),
        ctx,
    )?;
    Ok(())
}
