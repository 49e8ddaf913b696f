//! Why a frame reverted when the EVM gives no reason, in the user's words, as Hardhat's stack
//! traces say it: a function that is not payable sent value, a call data that matches no
//! function of a contract without a fallback, a fallback that is not payable sent value, a
//! high-level call to an account without code, a public array's getter asked past its end, a
//! call whose return data the caller could not decode. Each is inferred only where the contract's own
//! JSON ABI (its matched artifact) and the frame make it certain; otherwise nothing is said.

use alloy_primitives::U256;
use revm::bytecode::opcode::{CALL, CALLCODE, DELEGATECALL, EXTCODESIZE, STATICCALL};

use crate::render::abi::Abi;
use crate::trace::call::CallFrame;
use crate::trace::errors::FrameError;

/// What the frame's failure was, when it reverted with no data and the ABI tells why; with the
/// name of the function whose declaration it is at, when it is one. `enum_size` gives the
/// member count of an enum by its canonical name (`C.Kind`) where the build's AST says it.
pub fn infer(
    f: &CallFrame,
    abi: &Abi,
    enum_size: &dyn Fn(&str) -> Option<usize>,
) -> Option<(String, Option<String>)> {
    if !reverted_without_data(f) {
        return None;
    }
    if f.kind.is_create() {
        return None;
    }
    let value = f.value.unwrap_or_default();
    let sent = |what: &str| format!("{what} is not payable but was sent {value} wei");
    // Before any call, the dispatcher decided: the function chosen, or none.
    if f.calls.is_empty() {
        let entry = abi.entry_points()?;
        if f.input.len() >= 4 {
            let selector: [u8; 4] = f.input[..4].try_into().ok()?;
            if let Some(func) = abi.functions(selector).first() {
                let payable = func.state_mutability == alloy_json_abi::StateMutability::Payable;
                if !payable && value > U256::ZERO {
                    return Some((
                        sent(&format!("`{}`", func.signature())),
                        Some(func.name.clone()),
                    ));
                }
                // The function's parameters refuse the call data (ABI coder v2 checks every
                // value: too short, an address, bool or integer out of its width, an enum past
                // its members): solc's decoder reverted before the function ran.
                return (!decodes(&func.inputs, &f.input[4..], enum_size)).then(|| {
                    (
                        format!("the call data does not decode as `{}`", func.signature()),
                        Some(func.name.clone()),
                    )
                });
            }
        }
        let empty = f.input.is_empty();
        if empty && entry.receive {
            return None;
        }
        return match entry.fallback {
            // No call data and no receive function: the value went to the fallback function
            // because there is no receive function (Hardhat's "no receive function" case).
            Some(false) if value > U256::ZERO && empty => Some((
                format!(
                    "there is no receive function, and {}",
                    sent("the fallback function")
                ),
                Some("fallback".into()),
            )),
            Some(false) if value > U256::ZERO => {
                Some((sent("the fallback function"), Some("fallback".into())))
            }
            Some(_) => None,
            None if empty && value > U256::ZERO => Some((
                format!("no receive or fallback function to take the {value} wei sent"),
                None,
            )),
            None if f.input.len() >= 4 => Some((
                format!(
                    "no function matches selector 0x{} and there is no fallback function",
                    alloy_primitives::hex::encode(&f.input[..4])
                ),
                None,
            )),
            None => Some((
                "the call data matches no function and there is no fallback function".into(),
                None,
            )),
        };
    }
    None
}

/// A high-level call whose target has no code: Solidity checks EXTCODESIZE before the CALL and
/// reverts with no data; the frame's last opcodes (`recent`, newest first) show the check and no
/// call after it.
pub fn non_contract_call(f: &CallFrame, code: &[u8], recent: &[u32]) -> Option<String> {
    if !reverted_without_data(f) {
        return None;
    }
    for &pc in recent {
        match code.get(pc as usize).copied() {
            Some(EXTCODESIZE) => {
                return Some("function call to a non-contract account".into());
            }
            Some(CALL | STATICCALL | DELEGATECALL | CALLCODE) => return None,
            _ => {}
        }
    }
    None
}

/// Why a deployment reverted with no data before its constructor ran, from the contract's
/// ABI: value sent to a constructor that is not payable, or constructor arguments (`args`: the
/// init code past the artifact's creation code) its parameters refuse.
pub fn constructor(
    f: &CallFrame,
    abi: &Abi,
    args: &[u8],
    enum_size: &dyn Fn(&str) -> Option<usize>,
) -> Option<(String, Option<String>)> {
    if !reverted_without_data(f) || !f.kind.is_create() || !f.calls.is_empty() {
        return None;
    }
    let value = f.value.unwrap_or_default();
    let payable = abi.entry_points()?.payable_constructor;
    let at = Some("constructor".to_string());
    if value > U256::ZERO && !payable {
        return Some((
            format!("`constructor` is not payable but was sent {value} wei"),
            at,
        ));
    }
    let inputs = abi.constructor().unwrap_or_default();
    (!inputs.is_empty() && !decodes(inputs, args, enum_size)).then(|| {
        let types: Vec<String> = inputs.iter().map(|p| p.ty.clone()).collect();
        (
            format!(
                "the call data does not decode as `constructor({})`",
                types.join(",")
            ),
            at,
        )
    })
}

/// Whether `data` decodes strictly as `params`, enums within their members.
fn decodes(
    params: &[alloy_json_abi::Param],
    data: &[u8],
    enum_size: &dyn Fn(&str) -> Option<usize>,
) -> bool {
    let Some(values) = crate::render::values::decode_params(params, data) else {
        return false;
    };
    params.iter().zip(&values).all(|(p, v)| {
        let members = p
            .internal_type
            .as_ref()
            .map(|t| t.to_string())
            .and_then(|t| t.strip_prefix("enum ").map(str::to_string))
            .and_then(|name| enum_size(&name));
        match (members, v) {
            (Some(n), alloy_dyn_abi::DynSolValue::Uint(x, _)) => *x < U256::from(n),
            _ => true,
        }
    })
}

/// A library's code called, not delegated to: solc guards a library's state-changing functions
/// with a check that the code runs at its own address only by DELEGATECALL (its runtime code
/// opens with `PUSH20 <its address> ADDRESS EQ`), and a library has no fallback; either way the
/// call reverts with no data. The function the selector names, when the library has one.
pub fn library_call(f: &CallFrame, code: &[u8], abi: &Abi) -> Option<(String, Option<String>)> {
    use revm::bytecode::opcode::{ADDRESS, EQ, PUSH20};
    if !reverted_without_data(f) || f.kind.is_create() {
        return None;
    }
    let library = code.first() == Some(&PUSH20)
        && code.get(21) == Some(&ADDRESS)
        && code.get(22) == Some(&EQ);
    let direct = !matches!(f.kind.as_str(), "DELEGATECALL" | "CALLCODE");
    if !library || !direct {
        return None;
    }
    let function = f
        .input
        .get(..4)
        .and_then(|s| <[u8; 4]>::try_from(s).ok())
        .and_then(|s| abi.functions(s).first())
        .map(|func| func.name.clone());
    Some((
        "a library called directly: its functions run only by DELEGATECALL".into(),
        function,
    ))
}

/// A REVERT that handed back no data: the only failure these explain.
fn reverted_without_data(f: &CallFrame) -> bool {
    f.error == Some(FrameError::Reverted) && f.output.as_ref().is_none_or(|o| o.is_empty())
}

/// A public array's getter (or a mapping of arrays') asked for an index past the end: solc's
/// getter reverts with no data, before any call. `is_public_array` says whether the contract's
/// source declares a public state variable of that name holding an array. Gives why, and the
/// getter's name (the stack places it at the variable's declaration, as EDR does).
pub fn array_getter(
    f: &CallFrame,
    abi: &Abi,
    is_public_array: &dyn Fn(&str) -> bool,
) -> Option<(String, String)> {
    if !reverted_without_data(f) || !f.calls.is_empty() {
        return None;
    }
    let selector: [u8; 4] = f.input.get(..4)?.try_into().ok()?;
    let func = abi.functions(selector).first()?;
    (!func.inputs.is_empty() && is_public_array(&func.name)).then(|| {
        let why = format!(
            "array index out of bounds in the getter of the public `{}`",
            func.name
        );
        (why, func.name.clone())
    })
}

/// A high-level call that succeeded but whose return data the caller could not decode (too
/// short for the values the caller's interface declares): the caller reverts with no data
/// right after the call, at the call's own statement (`at_call`: whether the frame's failure
/// is placed at the statement of the CALL at that pc). `recent`: the frame's last pcs, newest
/// first.
pub fn undecodable_return(
    f: &CallFrame,
    code: &[u8],
    recent: &[u32],
    at_call: &dyn Fn(u32) -> bool,
) -> Option<String> {
    if !reverted_without_data(f) {
        return None;
    }
    let last = f.calls.last().filter(|c| c.error.is_none())?;
    let call = recent.iter().copied().find(|&pc| {
        matches!(
            code.get(pc as usize).copied(),
            Some(CALL | STATICCALL | DELEGATECALL | CALLCODE)
        )
    })?;
    at_call(call).then(|| {
        let n = last.output.as_ref().map_or(0, |o| o.len());
        format!(
            "the call returned {n} bytes of data, which the caller could not decode as the \
             values it expects"
        )
    })
}
