//! geth's global helper functions: `toHex`, `toWord`, `toAddress`,
//! `toContract`, `toContract2`, `isPrecompiled`, `slice`.
//!
//! Buffers are `Uint8Array`s. Functions that take an address or word accept a `Uint8Array`, a
//! plain array of numbers, or (where geth allows it) a hex string; `db` methods reject strings
//! with geth's `invalid buffer type`.

use std::cell::Cell;
use std::rc::Rc;

use alloy_primitives::{hex, Address};
use boa_engine::{js_string, Context, JsNativeError, JsResult, JsValue, NativeFunction};
use revm::precompile::{PrecompileSpecId, Precompiles};
use revm::primitives::hardfork::SpecId;

use super::buffers::{bytes_to_address, bytes_to_word, from_buf, int, to_buf};
use super::objects::{fail, native, Shared};

fn arg(args: &[JsValue], i: usize) -> JsValue {
    args.get(i).cloned().unwrap_or_default()
}

/// The fork whose precompiles `isPrecompiled` knows, in the context's host data: a host built
/// before the fork is known (to validate a script) can then serve the transaction.
struct Fork {
    precompiles: PrecompileSpecId,
    /// Precompiles the chain adds to the fork's (an OP block's `p256Verify`).
    extra: Vec<Address>,
    /// Whether `isPrecompiled` answered under this fork (its answer may live on in `this`).
    asked: Cell<bool>,
}

fn set_fork(spec: SpecId, ctx: &mut Context) {
    ctx.insert_data(Fork {
        precompiles: PrecompileSpecId::from_spec_id(spec),
        extra: Vec::new(),
        asked: Cell::new(false),
    });
}

/// Adds precompiles beyond the fork's to what `isPrecompiled` counts.
pub fn add_precompiles(addrs: &[Address], ctx: &mut Context) {
    let Some(fork) = ctx.get_data::<Fork>() else {
        return;
    };
    let mut extra = fork.extra.clone();
    extra.extend_from_slice(addrs);
    let next = Fork {
        precompiles: fork.precompiles,
        extra,
        asked: Cell::new(fork.asked.get()),
    };
    ctx.insert_data(next);
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
            let nonce = int(args, 1, ctx)?.max(0) as u64;
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
            Ok((Precompiles::new(fork.precompiles).contains(&a) || fork.extra.contains(&a)).into())
        }),
        ctx,
    )?;
    let sh = shared.clone();
    reg(
        "slice",
        3,
        native(move |_, args, ctx| {
            let b = from_buf(&arg(args, 0), false, ctx)?;
            let (start, end) = (int(args, 1, ctx)?, int(args, 2, ctx)?);
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
