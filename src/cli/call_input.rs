//! `call` inputs the way cast users type them: `--sig 'f(address,uint256)' ARGS…` encoded with
//! alloy, `--value 1ether`-style amounts, and override JSON given inline or as a file.

use alloy_dyn_abi::{DynSolValue, JsonAbiExt, Specifier};
use alloy_json_abi::Function;
use alloy_primitives::utils::Unit;
use alloy_primitives::U256;
use chaintrace::source::fixture::parse_u256_str;
use serde_json::Value;

use super::common::CliError;

/// Drops a cast-style output list: `balanceOf(address)(uint256)` → `balanceOf(address)`.
fn without_outputs(sig: &str) -> &str {
    let mut depth = 0usize;
    for (i, c) in sig.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return &sig[..=i];
                }
            }
            _ => {}
        }
    }
    sig
}

/// Calldata for `sig` with `args` given as text (`0x…` addresses, decimal or hex integers,
/// `true`, `[1,2]`, `(a,b)`, strings), as alloy coerces them.
pub fn encode_call(sig: &str, args: &[String]) -> Result<Vec<u8>, CliError> {
    let trimmed = without_outputs(sig.trim());
    let func = Function::parse(trimmed)
        .map_err(|e| CliError::input(format!("malformed --sig {sig:?}: {e}")))?;
    if func.inputs.len() != args.len() {
        return Err(CliError::input(format!(
            "--sig {} takes {} argument(s), {} given",
            func.signature(),
            func.inputs.len(),
            args.len()
        )));
    }
    let mut values: Vec<DynSolValue> = Vec::with_capacity(args.len());
    for (i, (p, a)) in func.inputs.iter().zip(args).enumerate() {
        let ty = p
            .resolve()
            .map_err(|e| CliError::input(format!("--sig {sig:?}: {e}")))?;
        let v = ty.coerce_str(a).map_err(|e| {
            CliError::input(format!(
                "argument {} {a:?} is not a valid {}: {e}",
                i + 1,
                ty.sol_type_name()
            ))
        })?;
        values.push(v);
    }
    func.abi_encode_input(&values)
        .map_err(|e| CliError::input(format!("cannot encode --sig {sig:?}: {e}")))
}

/// An amount of wei: a plain number (decimal or `0x` hex) is wei; a number followed by a unit
/// (`1ether`, `1.5 ether`, `20gwei`, `3wei`) is scaled by it, and must come to a whole number of wei.
pub fn parse_value(s: &str, flag: &str) -> Result<U256, CliError> {
    let t = s.trim();
    let split = if t.starts_with("0x") || t.starts_with("0X") {
        None
    } else {
        t.find(|c: char| c.is_ascii_alphabetic())
    };
    let Some(at) = split else {
        return parse_u256_str(t).map_err(|e| CliError::input(format!("malformed {flag}: {e}")));
    };
    let (amount, unit) = (t[..at].trim(), t[at..].trim());
    let unit = match unit.to_ascii_lowercase().as_str() {
        "eth" | "ether" => Unit::ETHER,
        "gwei" => Unit::GWEI,
        "wei" => Unit::WEI,
        other => {
            return Err(CliError::input(format!(
                "malformed {flag} {s:?}: unknown unit {other:?} (wei, gwei, ether)"
            )))
        }
    };
    let bad = |why: String| CliError::input(format!("malformed {flag} {s:?}: {why}"));
    if let Some((_, frac)) = amount.split_once('.') {
        if frac.len() > unit.get() as usize {
            return Err(bad("more decimals than the unit has".to_string()));
        }
    }
    let parsed = alloy_primitives::utils::ParseUnits::parse_units(amount, unit)
        .map_err(|e| bad(e.to_string()))?;
    if parsed.is_negative() {
        return Err(bad("negative amount".to_string()));
    }
    Ok(parsed.get_absolute())
}

/// A simulated call's failure at the CLI edge: a block override that does not apply is bad
/// input, anything else the source's.
pub fn call_error(e: chaintrace::replay::call::CallError) -> CliError {
    use chaintrace::replay::call::CallError;
    match e {
        CallError::BlockOverride(m) => CliError::input(format!("--block-override: {m}")),
        CallError::Source(e) => e.into(),
    }
}

/// A JSON override given inline (`{…}`) or as a file path.
pub fn json_arg(s: &str, flag: &str) -> Result<Value, CliError> {
    let text = if s.trim_start().starts_with('{') {
        s.to_string()
    } else {
        std::fs::read_to_string(s)
            .map_err(|e| CliError::input(format!("cannot read {flag} {s}: {e}")))?
    };
    serde_json::from_str(&text)
        .map_err(|e| CliError::input(format!("{flag} is not valid JSON: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_like_cast() {
        let data = encode_call(
            "transfer(address,uint256)",
            &[
                "0x00000000000000000000000000000000000a11ce".into(),
                "1000".into(),
            ],
        )
        .unwrap();
        assert_eq!(
            alloy_primitives::hex::encode(&data),
            "a9059cbb00000000000000000000000000000000000000000000000000000000000a11ce00000000000000000000000000000000000000000000000000000000000003e8"
        );
        assert!(encode_call(
            "balanceOf(address)(uint256)",
            &["0x00000000000000000000000000000000000a11ce".into()]
        )
        .is_ok());
        let e = encode_call("transfer(address,uint256)", &["1".into()]).unwrap_err();
        assert!(
            e.message.contains("takes 2 argument(s), 1 given"),
            "{}",
            e.message
        );
        let e = encode_call("f(uint8)", &["256".into()]).unwrap_err();
        assert!(
            e.message
                .contains("argument 1 \"256\" is not a valid uint8"),
            "{}",
            e.message
        );
        assert!(encode_call("f(", &[]).is_err());
    }

    #[test]
    fn values_with_units() {
        let v = |s: &str| parse_value(s, "--value").map_err(|e| e.message);
        assert_eq!(v("1ether").unwrap(), U256::from(10u64.pow(18)));
        assert_eq!(v("1.5 ether").unwrap(), U256::from(15 * 10u64.pow(17)));
        assert_eq!(v("20gwei").unwrap(), U256::from(20 * 10u64.pow(9)));
        assert_eq!(v("7").unwrap(), U256::from(7));
        assert_eq!(v("0x10").unwrap(), U256::from(16));
        assert!(v("1.5wei").unwrap_err().contains("more decimals"));
        assert!(v("1 dollar").unwrap_err().contains("unknown unit"));
        assert!(v("-1ether").is_err());
    }
}
