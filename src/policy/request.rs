//! The `/rpc` request body as the wallet provider will sign it, and the secrets around it.
//!
//! The provider canonicalises the body with RFC 8785 before it is signed, so every
//! `params.transaction` field must be a `0x` hex string: a JSON number is written back as an
//! IEEE-754 double and the signed amount would not be the intended one. Request files may hold
//! just the body, or `{ "body": …, "headers": … }` as an HTTP client would send it; headers and
//! any secret-named field (app secret, authorization private key, signatures) are only ever
//! used to learn which strings must never be printed.

use crate::redact::{elide_hex, quoted};
pub use crate::redact::{is_secret_name, Redactor};
use alloy_primitives::{Address, U256};
use serde::Serialize;
use serde_json::{Map, Value};

use super::engine::{Method, TxFields};
use super::jcs::canonicalize;

/// Transaction fields that are lists, exempt from the hex-string rule.
const LIST_FIELDS: [&str; 4] = [
    "access_list",
    "accessList",
    "authorization_list",
    "authorizationList",
];
/// Transaction fields that hold a 20-byte address.
const ADDRESS_FIELDS: [&str; 2] = ["to", "from"];
/// Transaction fields that hold arbitrary bytes rather than a quantity.
const BYTES_FIELDS: [&str; 2] = ["data", "input"];

/// A problem that would make the provider reject or mis-sign the body.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{path} {problem}")]
pub struct RequestIssue {
    /// JSON path of the offending member, e.g. `params.transaction.value`.
    pub path: String,
    pub problem: String,
}

/// Splits a request file into the body to be signed and the rest of the document (headers).
pub fn body_of(doc: &Value) -> &Value {
    match doc.get("body") {
        Some(b) if b.is_object() && doc.get("method").is_none() => b,
        _ => doc,
    }
}

/// The request's method, when it is a string.
pub fn method_of(body: &Value) -> Option<&str> {
    body.get("method").and_then(Value::as_str)
}

/// The request's method, when it is one a policy governs.
pub fn method(body: &Value) -> Option<Method> {
    method_of(body).and_then(Method::parse)
}

/// The `params.transaction` object.
pub fn transaction_of(body: &Value) -> Option<&Map<String, Value>> {
    body.get("params")?.get("transaction")?.as_object()
}

/// The bytes a `personal_sign` request signs: `params.message` read per `params.encoding`,
/// `utf-8` (the default: the string's bytes) or `hex` (`0x` hex of raw bytes).
pub fn message_bytes(body: &Value) -> Result<Vec<u8>, RequestIssue> {
    let issue = |path: &str, problem: String| RequestIssue {
        path: path.into(),
        problem,
    };
    let params = body.get("params");
    let message = params
        .and_then(|p| p.get("message"))
        .and_then(Value::as_str)
        .ok_or_else(|| issue("params.message", "is required and must be a string".into()))?;
    match params.and_then(|p| p.get("encoding")) {
        None | Some(Value::Null) => Ok(message.as_bytes().to_vec()),
        Some(Value::String(e)) if e == "utf-8" => Ok(message.as_bytes().to_vec()),
        Some(Value::String(e)) if e == "hex" => message
            .strip_prefix("0x")
            .and_then(|h| alloy_primitives::hex::decode(h).ok())
            .ok_or_else(|| {
                issue(
                    "params.message",
                    "is not 0x hex of whole bytes, as encoding \"hex\" says".into(),
                )
            }),
        Some(other) => Err(issue(
            "params.encoding",
            format!("must be \"utf-8\" or \"hex\", got {other}"),
        )),
    }
}

/// The chain id named by a CAIP-2 string `eip155:<decimal>`.
pub fn parse_caip2(s: &str) -> Option<u64> {
    let id = s.strip_prefix("eip155:")?;
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) || id.starts_with('0') {
        return None;
    }
    id.parse().ok()
}

/// Every reason the provider would refuse or mis-sign `body`; `chain_id` is the chain the
/// transaction is meant for (from `eth_chainId`), when known. A message (`personal_sign`) needs
/// no `caip2`; one it gives must still be well formed and match.
pub fn validate(body: &Value, chain_id: Option<u64>) -> Vec<RequestIssue> {
    let mut issues = Vec::new();
    let mut issue = |path: &str, problem: String| {
        issues.push(RequestIssue {
            path: path.to_string(),
            problem,
        })
    };
    if !body.is_object() {
        issue("", "the body must be a JSON object".into());
        return issues;
    }
    match body.get("method") {
        Some(Value::String(m)) if Method::parse(m).is_some() => {}
        other => issue(
            "method",
            format!("must be one of {}, got {}", Method::list(), shown(other)),
        ),
    }
    let message = method(body).is_some_and(Method::signs_message);
    match body.get("caip2") {
        None if message => {}
        Some(Value::String(c)) => match (parse_caip2(c), chain_id) {
            (None, _) => issue(
                "caip2",
                format!(
                    "{} is not a CAIP-2 EVM chain id such as \"eip155:1329\"",
                    quoted(c)
                ),
            ),
            (Some(id), Some(want)) if id != want => issue(
                "caip2",
                format!(
                    "{} names chain {id}, but the node is chain {want} (eip155:{want})",
                    quoted(c)
                ),
            ),
            _ => {}
        },
        other => issue(
            "caip2",
            format!("is required (e.g. \"eip155:1329\"), got {}", shown(other)),
        ),
    }
    if let Some(ct) = body.get("chain_type") {
        if ct.as_str() != Some("ethereum") {
            issue(
                "chain_type",
                format!("must be \"ethereum\", got {}", elide_hex(&ct.to_string())),
            );
        }
    }
    for path in secret_paths(body, "") {
        issue(
            &path,
            "looks like a secret: it would be sent to the provider inside the signed body; \
             secrets belong in headers or the signer, never in the body"
                .into(),
        );
    }
    if message {
        if let Err(i) = message_bytes(body) {
            issue(&i.path, i.problem);
        }
        return issues;
    }
    let Some(tx) = transaction_of(body) else {
        issue(
            "params.transaction",
            "is required and must be an object".into(),
        );
        return issues;
    };
    for (k, v) in tx {
        if LIST_FIELDS.contains(&k.as_str()) {
            continue;
        }
        let path = format!("params.transaction.{k}");
        let chain_field = k == "chain_id" || k == "chainId";
        // The documentation shows chain_id as an integer (see `warnings`); only there is a JSON
        // number accepted.
        let integer_chain = chain_field && v.as_u64().is_some();
        if let Some(problem) = field_problem(k, v).filter(|_| !integer_chain) {
            issue(&path, problem);
        } else if chain_field {
            let id = v.as_u64().or_else(|| {
                v.as_str()
                    .and_then(|s| u64::from_str_radix(s.get(2..)?, 16).ok())
            });
            if let (Some(id), Some(want)) = (id, chain_id) {
                if id != want {
                    issue(
                        &path,
                        format!("is chain {id}, but the node is chain {want}"),
                    );
                }
            }
        }
    }
    if let Err(e @ TxFieldsError::DataAndInput) = tx_fields(body) {
        issue("params.transaction.input", e.to_string());
    }
    issues
}

/// What the provider accepts but is unsafe: a `chain_id` given as a JSON integer (the
/// documentation's own example) is canonicalised as an IEEE-754 double, exact only up to 2^53.
pub fn warnings(body: &Value) -> Vec<RequestIssue> {
    let Some(tx) = transaction_of(body) else {
        return Vec::new();
    };
    ["chain_id", "chainId"]
        .iter()
        .filter(|k| tx.get(**k).is_some_and(Value::is_u64))
        .map(|k| RequestIssue {
            path: format!("params.transaction.{k}"),
            problem: "is a JSON integer: accepted for the chain id, but RFC 8785 writes numbers \
                      as IEEE-754 doubles, exact only up to 2^53; the 0x hex string form is \
                      safe for any value"
                .into(),
        })
        .collect()
}

fn shown(v: Option<&Value>) -> String {
    v.map(|v| elide_hex(&v.to_string()))
        .unwrap_or_else(|| "nothing".into())
}

/// Why a transaction field is not an acceptable hex string, if it is not.
fn field_problem(key: &str, v: &Value) -> Option<String> {
    let s = match v {
        Value::String(s) => s,
        Value::Number(n) => {
            let canonical = canonicalize(v);
            let hint = n
                .as_u64()
                .map(|u| format!(" such as \"{u:#x}\""))
                .unwrap_or_default();
            let changed = if canonical == n.to_string() || n.as_u64().is_some_and(|u| u < (1 << 53))
            {
                String::new()
            } else {
                format!(" and this one would be signed as {canonical}")
            };
            return Some(format!(
                "is a JSON number: the body is RFC 8785-canonicalised before signing, which \
                 writes numbers as IEEE-754 doubles (exact only up to 2^53){changed}; send a \
                 0x hex string{hint}"
            ));
        }
        other => {
            return Some(format!(
                "must be a 0x hex string, got {}",
                elide_hex(&other.to_string())
            ))
        }
    };
    let Some(hex) = s.strip_prefix("0x") else {
        let decimal = !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        return Some(if decimal {
            format!("{} is a decimal string; send a 0x hex string", quoted(s))
        } else {
            format!("{} is not a 0x hex string", quoted(s))
        });
    };
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Some(format!("{} is not a 0x hex string", quoted(s)));
    }
    if ADDRESS_FIELDS.contains(&key) && hex.len() != 40 {
        return Some(format!("{} is not a 20-byte address", quoted(s)));
    }
    if BYTES_FIELDS.contains(&key) && hex.len() % 2 != 0 {
        return Some(format!("{} has an odd number of hex digits", quoted(s)));
    }
    if !ADDRESS_FIELDS.contains(&key) && !BYTES_FIELDS.contains(&key) && hex.is_empty() {
        return Some(format!(
            "{} is an empty quantity; zero is \"0x0\"",
            quoted(s)
        ));
    }
    if !ADDRESS_FIELDS.contains(&key) && !BYTES_FIELDS.contains(&key) {
        // An EVM quantity has at most 256 bits; gas, nonce and chain id at most 64.
        let digits = hex.trim_start_matches('0').len();
        let max = if matches!(
            key,
            "value"
                | "max_fee_per_gas"
                | "maxFeePerGas"
                | "max_priority_fee_per_gas"
                | "maxPriorityFeePerGas"
                | "gas_price"
                | "gasPrice"
        ) {
            64
        } else {
            16
        };
        if digits > max {
            return Some(format!(
                "{} has {} bits, more than the {} a transaction can carry",
                quoted(s),
                digits * 4,
                max * 4
            ));
        }
    }
    None
}

/// Why a body's transaction cannot be evaluated against a policy.
#[derive(Debug, thiserror::Error)]
pub enum TxFieldsError {
    #[error("the body has no params.transaction object")]
    NoTransaction,
    #[error("`to` {} is not an address", elide_hex(&.0.to_string()))]
    To(Value),
    #[error("`value` {} is not a wei amount", elide_hex(&.0.to_string()))]
    Value(Value),
    #[error("`data` {} is not 0x hex", elide_hex(&.0.to_string()))]
    Data(Value),
    /// Both `data` and `input`, different: which one the provider signs is not the policy's to
    /// guess, and judging one while the provider gets both could let the other through.
    #[error(
        "params.transaction has both `data` and `input`, and they differ: send one of them \
         (the policy would judge one while the provider receives both)"
    )]
    DataAndInput,
}

/// The fields policies read, parsed leniently (hex or decimal strings, small JSON numbers) so a
/// body with format problems can still be evaluated.
///
/// A message request (`personal_sign`) has no transaction: its fields are empty, so conditions
/// on transaction fields never hold for it.
pub fn tx_fields(body: &Value) -> Result<TxFields, TxFieldsError> {
    if method(body).is_some_and(Method::signs_message) {
        return Ok(TxFields::default());
    }
    let tx = transaction_of(body).ok_or(TxFieldsError::NoTransaction)?;
    let to = match tx.get("to") {
        None | Some(Value::Null) => None,
        Some(v) => Some(address(v).ok_or_else(|| TxFieldsError::To(v.clone()))?),
    };
    let value = match tx.get("value") {
        None | Some(Value::Null) => U256::ZERO,
        Some(v) => quantity(v).ok_or_else(|| TxFieldsError::Value(v.clone()))?,
    };
    let bytes = |v: &Value| -> Result<alloy_primitives::Bytes, TxFieldsError> {
        match v {
            Value::Null => Ok(Default::default()),
            v => v
                .as_str()
                .and_then(|s| crate::geth::hex::parse_hex(s).ok())
                .ok_or_else(|| TxFieldsError::Data(v.clone())),
        }
    };
    let data = match (tx.get("data"), tx.get("input")) {
        (None, None) => Default::default(),
        (Some(v), None) | (None, Some(v)) => bytes(v)?,
        (Some(d), Some(i)) => {
            let data = bytes(d)?;
            if data != bytes(i)? {
                return Err(TxFieldsError::DataAndInput);
            }
            data
        }
    };
    Ok(TxFields { to, value, data })
}

/// An address from a JSON string.
pub fn address(v: &Value) -> Option<Address> {
    v.as_str()
        .filter(|s| s.len() == 42 && s.starts_with("0x"))?
        .parse()
        .ok()
}

/// A quantity from a hex or decimal string, or a JSON integer that fits 64 bits.
pub fn quantity(v: &Value) -> Option<U256> {
    match v {
        Value::String(s) => crate::geth::hex::parse_u256_str(s).ok(),
        Value::Number(n) => n.as_u64().map(U256::from),
        _ => None,
    }
}

fn secret_paths(v: &Value, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Value::Object(m) = v {
        for (k, item) in m {
            let path = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            if is_secret_name(k) {
                out.push(path);
            } else {
                out.extend(secret_paths(item, &path));
            }
        }
    }
    out
}

/// The body with every secret-named member's value replaced, for printing.
pub fn redacted_body(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, item)| {
                    let item = if is_secret_name(k) {
                        Value::String(crate::redact::TOKEN.into())
                    } else {
                        redacted_body(item)
                    };
                    (k.clone(), item)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redacted_body).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_non_hex_transaction_field_is_reported() {
        let body = json!({"method": "eth_sendTransaction", "caip2": "eip155:1329",
            "params": {"transaction": {"to": "0x1234", "value": "1000", "data": "0xabc",
                       "nonce": 7, "gas_limit": "0x", "access_list": []}}});
        let issues = validate(&body, Some(1329));
        let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "params.transaction.data",
                "params.transaction.gas_limit",
                "params.transaction.nonce",
                "params.transaction.to",
                "params.transaction.value"
            ]
        );
        assert!(
            issues[2].problem.contains("such as \"0x7\""),
            "{}",
            issues[2].problem
        );
        assert!(!issues[2].problem.contains("would be signed as"));
    }

    /// A private key put in a transaction field is never quoted, not even in part.
    #[test]
    fn issues_never_quote_key_material() {
        let key = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
        let body = json!({"method": "eth_sendTransaction", "caip2": "eip155:1329",
            "params": {"transaction": {"nonce": format!("0x{key}"), "to": format!("0x{key}"),
                       "data": format!("0x{key}0"), "gas": format!("{key}")}}});
        let issues = validate(&body, Some(1329));
        let text: Vec<String> = issues.iter().map(|i| i.to_string()).collect();
        assert_eq!(
            text,
            [
                "params.transaction.data \"0x<65 hex digits>\" has an odd number of hex digits",
                "params.transaction.gas \"<64 hex digits>\" is not a 0x hex string",
                "params.transaction.nonce \"0x<64 hex digits>\" has 256 bits, more than the 64 a \
                 transaction can carry",
                "params.transaction.to \"0x<64 hex digits>\" is not a 20-byte address",
            ]
        );
    }

    #[test]
    fn messages_are_read_per_encoding() {
        let m =
            |params: Value| message_bytes(&json!({"method": "personal_sign", "params": params}));
        assert_eq!(m(json!({"message": "hi"})), Ok(b"hi".to_vec()));
        assert_eq!(
            m(json!({"message": "hi", "encoding": "utf-8"})),
            Ok(b"hi".to_vec())
        );
        assert_eq!(
            m(json!({"message": "0x6869", "encoding": "hex"})),
            Ok(b"hi".to_vec())
        );
        assert!(m(json!({"message": "0x686", "encoding": "hex"})).is_err());
        assert!(m(json!({"message": "hi", "encoding": "base64"})).is_err());
        assert!(m(json!({"message": 7})).is_err());
        // No caip2 is needed for a message; a bad encoding is a request error on its path.
        let body =
            json!({"method": "personal_sign", "params": {"message": "hi", "encoding": "b64"}});
        let issues = validate(&body, None);
        assert_eq!(issues.len(), 1, "{issues:?}");
        assert_eq!(issues[0].path, "params.encoding");
    }

    #[test]
    fn caip2_must_be_well_formed_and_match() {
        assert_eq!(parse_caip2("eip155:1329"), Some(1329));
        for bad in ["eip155:", "eip155:0x531", "eip155:01", "cosmos:1329"] {
            assert_eq!(parse_caip2(bad), None, "{bad}");
        }
        let body = json!({"method": "eth_signTransaction", "caip2": "eip155:1328",
                          "params": {"transaction": {}}});
        assert_eq!(validate(&body, Some(1328)), []);
        assert_eq!(validate(&body, Some(1329))[0].path, "caip2");
    }
}
