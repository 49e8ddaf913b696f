//! Buffer conversions shared by the globals and the `log`/`db` objects: `Uint8Array`s in and
//! out, geth's lenient hex, addresses and words from byte strings, goja's integer arguments.

use alloy_primitives::{hex, Address, B256};
use boa_engine::object::builtins::{JsArray, JsArrayBuffer, JsTypedArray, JsUint8Array};
use boa_engine::{Context, JsError, JsNativeError, JsResult, JsValue};

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

/// Reads argument `i` as an integer the way goja converts to Go's `int64`.
pub fn int(args: &[JsValue], i: usize, ctx: &mut Context) -> JsResult<i64> {
    let n = args.get(i).cloned().unwrap_or_default().to_number(ctx)?;
    Ok(if n.is_nan() { 0 } else { n as i64 })
}
