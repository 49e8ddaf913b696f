//! The wallet provider's policy engine, evaluated locally.
//!
//! A policy is a list of rules. A rule applies to one signing method and holds when all its
//! conditions hold (an empty list always holds). The provider denies by default: a request is
//! allowed only when at least one ALLOW rule matches and no DENY rule matches, so a policy with
//! only DENY rules blocks everything. Conditions read the transaction (`field_source`
//! `ethereum_transaction`, field `to` or `value`) and compare it, in the order *transaction
//! field, operator, rule value*, with `eq`, `gt`, `gte`, `lt`, `lte` or `in`. Wei amounts in rules
//! are decimal strings (a JSON number could not carry 2^256) and are compared as 256-bit integers;
//! addresses are compared case-insensitively.

use std::fmt;

use alloy_primitives::{Address, U256};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::PolicyError;

/// What a matching rule asks for (written ALLOW or DENY; lower case is accepted).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Action {
    #[serde(alias = "allow", alias = "Allow")]
    Allow,
    #[serde(alias = "deny", alias = "Deny")]
    Deny,
}

/// The signing methods a policy rule can name (and a request can make): `personal_sign` signs a
/// message (`params.message`), the others a transaction (`params.transaction`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    SendTransaction,
    SignTransaction,
    PersonalSign,
}

impl Method {
    /// Every method, in the order messages list them.
    pub const ALL: [Method; 3] = [
        Method::SendTransaction,
        Method::SignTransaction,
        Method::PersonalSign,
    ];

    /// The method's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::SendTransaction => "eth_sendTransaction",
            Method::SignTransaction => "eth_signTransaction",
            Method::PersonalSign => "personal_sign",
        }
    }

    /// The method named `name` exactly (names are case-sensitive, as the provider reads them).
    pub fn parse(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.as_str() == name)
    }

    /// Whether the method signs a message rather than a transaction.
    pub fn signs_message(self) -> bool {
        self == Method::PersonalSign
    }

    /// `eth_sendTransaction, eth_signTransaction, personal_sign`, for messages.
    pub fn list() -> String {
        Method::ALL.map(Method::as_str).join(", ")
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a request made with `method` (as its body names it) signs a message.
pub fn signs_message(method: &str) -> bool {
    Method::parse(method).is_some_and(Method::signs_message)
}

/// A transaction field a condition reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Field {
    To,
    Value,
    /// An argument of a contract call (`field_source: ethereum_calldata`): the calldata is
    /// decoded with the condition's ABI.
    Calldata(Box<CalldataArg>),
}

/// `<function>.<parameter>` of a condition's JSON ABI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CalldataArg {
    pub function: alloy_json_abi::Function,
    /// The parameter's position in the function's inputs.
    pub index: usize,
    pub name: String,
}

/// A comparison; the transaction field is always the left operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Operator {
    Eq,
    Gt,
    Gte,
    Lt,
    Lte,
    In,
}

/// A condition's right operand, typed by its field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operand {
    Address(Address),
    Addresses(Vec<Address>),
    Wei(U256),
    WeiList(Vec<U256>),
}

/// One condition of a rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    pub field: Field,
    pub operator: Operator,
    pub operand: Operand,
}

/// One rule of a policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub name: String,
    pub action: Action,
    pub method: Method,
    pub conditions: Vec<Condition>,
}

/// A parsed policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    pub name: Option<String>,
    pub rules: Vec<Rule>,
}

/// The transaction fields rules can see. `to` is `None` for a contract creation; a missing
/// `value` is zero, as the provider treats it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TxFields {
    pub to: Option<Address>,
    pub value: U256,
    /// The calldata (`data` or `input`), empty when there is none.
    pub data: alloy_primitives::Bytes,
}

/// How one rule fared against the request.
#[derive(Clone, Debug, Serialize)]
pub struct RuleOutcome {
    pub name: String,
    pub action: Action,
    pub matched: bool,
    /// Why: the method mismatch, or each condition with its result.
    pub explanation: Vec<String>,
}

/// The engine's decision with its reasons.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Evaluation {
    pub allowed: bool,
    pub reason: String,
    pub matched_rules: Vec<String>,
    pub rules: Vec<RuleOutcome>,
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Field::To => f.write_str("to"),
            Field::Value => f.write_str("value"),
            Field::Calldata(a) => write!(f, "{}.{}", a.function.name, a.name),
        }
    }
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Operator::Eq => "eq",
            Operator::Gt => "gt",
            Operator::Gte => "gte",
            Operator::Lt => "lt",
            Operator::Lte => "lte",
            Operator::In => "in",
        })
    }
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |items: Vec<String>| format!("[{}]", items.join(", "));
        match self {
            Operand::Address(a) => write!(f, "{a:#x}"),
            Operand::Wei(w) => write!(f, "{w}"),
            Operand::Addresses(v) => {
                f.write_str(&list(v.iter().map(|a| format!("{a:#x}")).collect()))
            }
            Operand::WeiList(v) => f.write_str(&list(v.iter().map(|w| w.to_string()).collect())),
        }
    }
}

/// A rule as its author writes it (the wallet provider's format): serde reads the shape and
/// the enumerated fields; [`parse_rule`] then types each condition's value by its field. Its
/// members were checked against [`RULE_MEMBERS`] first, so an unknown one never reaches serde.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleDoc {
    /// The provider's own id of a stored rule (read back from it): not evaluated.
    #[serde(default, rename = "id")]
    _id: Option<Value>,
    name: Option<String>,
    action: Action,
    /// One of [`Method::ALL`], read by name (so that a wrong one is named in the message).
    method: String,
    /// Required: a rule without the array would match every request of its method.
    conditions: Vec<ConditionDoc>,
}

/// The members a policy object may have: the provider's create body (`version`, `name`,
/// `chain_type`, `rules`, `owner`, `owner_id`) and what it adds when a policy is read back
/// (`id`, `created_at`); `chainType` as its SDKs spell it. Any other is refused: a misspelled
/// member silently ignored could make the policy more permissive than its author meant.
const POLICY_MEMBERS: [&str; 9] = [
    "version",
    "name",
    "chain_type",
    "chainType",
    "rules",
    "owner",
    "owner_id",
    "id",
    "created_at",
];

/// The members a rule may have (`id` as the provider gives a stored rule back).
const RULE_MEMBERS: [&str; 5] = ["id", "name", "method", "conditions", "action"];

/// The members a condition may have (`fieldSource` as the SDKs spell it; `abi` for
/// `ethereum_calldata`).
const CONDITION_MEMBERS: [&str; 6] = [
    "field_source",
    "fieldSource",
    "field",
    "operator",
    "value",
    "abi",
];

/// Refuses the first member of `obj` not in `known`, naming its path (`at.member`) and the known
/// name it is closest to, if one is within two edits.
fn known_members(
    at: &str,
    obj: &serde_json::Map<String, Value>,
    known: &[&str],
) -> Result<(), PolicyError> {
    let Some(unknown) = obj.keys().find(|k| !known.contains(&k.as_str())) else {
        return Ok(());
    };
    let path = if at.is_empty() {
        unknown.clone()
    } else {
        format!("{at}.{unknown}")
    };
    let closest = known
        .iter()
        .map(|k| {
            (
                strsim::damerau_levenshtein(&unknown.to_lowercase(), &k.to_lowercase()),
                k,
            )
        })
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d);
    let reason = match closest {
        Some((_, k)) => format!("unknown member; did you mean {k}?"),
        None => format!("unknown member; the members here are {}", known.join(", ")),
    };
    Err(invalid(&path, reason))
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum FieldSource {
    EthereumTransaction,
    EthereumCalldata,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConditionDoc {
    #[serde(alias = "fieldSource")]
    field_source: FieldSource,
    field: Option<Value>,
    operator: Operator,
    value: Option<Value>,
    /// The contract's JSON ABI (`ethereum_calldata`).
    abi: Option<alloy_json_abi::JsonAbi>,
}

impl Policy {
    /// Parses a policy document: an object with `rules` (and optionally `name`), or a bare
    /// array of rules.
    pub fn from_json(v: &Value) -> Result<Policy, PolicyError> {
        if let Value::Object(o) = v {
            known_members("", o, &POLICY_MEMBERS)?;
        }
        let (name, rules) = match v {
            Value::Array(rules) => (None, rules),
            Value::Object(o) => match o.get("rules") {
                Some(Value::Array(rules)) => (
                    o.get("name").and_then(Value::as_str).map(String::from),
                    rules,
                ),
                _ => return Err(invalid("policy", "it has no `rules` array")),
            },
            _ => return Err(invalid("policy", "expected an object with `rules`")),
        };
        // Every request chaintrace evaluates is an EVM one (the methods of [`Method`]): a policy
        // written for another chain type would never govern it at the provider.
        if let Value::Object(o) = v {
            for key in ["chain_type", "chainType"] {
                match o.get(key) {
                    None | Some(Value::Null) => {}
                    Some(Value::String(t)) if t == "ethereum" => {}
                    Some(other) => {
                        return Err(invalid(
                            "policy",
                            format!(
                                "`{key}` is {other}: chaintrace evaluates EVM requests, which \
                                 only a policy of chain type \"ethereum\" governs"
                            ),
                        ))
                    }
                }
            }
        }
        let rules = rules
            .iter()
            .enumerate()
            .map(|(i, r)| parse_rule(i, r))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Policy { name, rules })
    }

    /// Evaluates the policy for a request made with `method` on `tx`.
    pub fn evaluate(&self, method: &str, tx: &TxFields) -> Evaluation {
        let rules: Vec<RuleOutcome> = self.rules.iter().map(|r| r.evaluate(method, tx)).collect();
        let matched = |a: Action| rules.iter().filter(move |r| r.matched && r.action == a);
        let deny: Vec<&str> = matched(Action::Deny).map(|r| r.name.as_str()).collect();
        let allow: Vec<&str> = matched(Action::Allow).map(|r| r.name.as_str()).collect();
        let quote = |names: &[&str]| {
            names
                .iter()
                .map(|n| format!("{n:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (allowed, reason) = if !deny.is_empty() {
            (false, format!("DENY rule {} matched", quote(&deny)))
        } else if !allow.is_empty() {
            (
                true,
                format!(
                    "ALLOW rule {} matched and no DENY rule matched",
                    quote(&allow)
                ),
            )
        } else if !self.rules.iter().any(|r| r.action == Action::Allow) {
            (
                false,
                "default deny: the policy has no ALLOW rule, so it blocks everything".into(),
            )
        } else {
            (false, "default deny: no ALLOW rule matched".into())
        };
        Evaluation {
            allowed,
            reason,
            matched_rules: rules
                .iter()
                .filter(|r| r.matched)
                .map(|r| r.name.clone())
                .collect(),
            rules,
        }
    }
}

impl Rule {
    fn evaluate(&self, method: &str, tx: &TxFields) -> RuleOutcome {
        let mut explanation = Vec::new();
        let matched = if Method::parse(method) != Some(self.method) {
            explanation.push(format!(
                "applies to {}, the request is {method}",
                self.method
            ));
            false
        } else {
            if self.conditions.is_empty() {
                explanation.push("no conditions: matches every request of its method".into());
            }
            let mut all = true;
            for c in &self.conditions {
                let (holds, actual) = c.holds(tx);
                explanation.push(format!(
                    "{} {} {} ({actual}): {holds}",
                    c.field, c.operator, c.operand
                ));
                all &= holds;
            }
            all
        };
        RuleOutcome {
            name: self.name.clone(),
            action: self.action,
            matched,
            explanation,
        }
    }
}

impl Condition {
    /// Whether the condition holds, and the transaction's value as shown in explanations.
    fn holds(&self, tx: &TxFields) -> (bool, String) {
        match (&self.field, &self.operand) {
            (Field::Calldata(arg), operand) => self.calldata_holds(arg, operand, tx),
            (Field::To, operand) => {
                let Some(to) = tx.to else {
                    return (false, "no `to`: a contract creation".into());
                };
                let holds = match operand {
                    Operand::Address(a) => to == *a,
                    Operand::Addresses(list) => list.contains(&to),
                    _ => false,
                };
                (holds, format!("to is {to:#x}"))
            }
            (Field::Value, operand) => {
                let v = tx.value;
                let holds = match (self.operator, operand) {
                    (Operator::In, Operand::WeiList(list)) => list.contains(&v),
                    (Operator::Eq, Operand::Wei(w)) => v == *w,
                    (Operator::Gt, Operand::Wei(w)) => v > *w,
                    (Operator::Gte, Operand::Wei(w)) => v >= *w,
                    (Operator::Lt, Operand::Wei(w)) => v < *w,
                    (Operator::Lte, Operand::Wei(w)) => v <= *w,
                    _ => false,
                };
                (holds, format!("value is {v} wei"))
            }
        }
    }
}

impl Condition {
    /// A calldata condition: the call must be to the condition's function (its selector), and
    /// the decoded argument is compared as an address (case-insensitive) or an integer.
    fn calldata_holds(
        &self,
        arg: &CalldataArg,
        operand: &Operand,
        tx: &TxFields,
    ) -> (bool, String) {
        use alloy_dyn_abi::{DynSolValue, JsonAbiExt};
        let selector = arg.function.selector();
        if tx.data.len() < 4 || tx.data[..4] != selector[..] {
            return (
                false,
                format!(
                    "the calldata does not call {} ({selector})",
                    arg.function.signature()
                ),
            );
        }
        let values = match arg.function.abi_decode_input(&tx.data[4..]) {
            Ok(v) => v,
            Err(e) => return (false, format!("the calldata does not decode: {e}")),
        };
        match (values.get(arg.index), operand) {
            (Some(DynSolValue::Address(a)), Operand::Address(want)) => {
                (a == want, format!("{} is {a:#x}", arg.name))
            }
            (Some(DynSolValue::Address(a)), Operand::Addresses(list)) => {
                (list.contains(a), format!("{} is {a:#x}", arg.name))
            }
            (Some(DynSolValue::Uint(v, _)), operand) => {
                let holds = match (self.operator, operand) {
                    (Operator::In, Operand::WeiList(list)) => list.contains(v),
                    (Operator::Eq, Operand::Wei(w)) => v == w,
                    (Operator::Gt, Operand::Wei(w)) => v > w,
                    (Operator::Gte, Operand::Wei(w)) => v >= w,
                    (Operator::Lt, Operand::Wei(w)) => v < w,
                    (Operator::Lte, Operand::Wei(w)) => v <= w,
                    _ => false,
                };
                (holds, format!("{} is {v}", arg.name))
            }
            (other, _) => (false, format!("{} is {other:?}", arg.name)),
        }
    }
}

/// Reads `field` (`<function>.<parameter>`) of an `ethereum_calldata` condition with its `abi`;
/// also says whether the parameter is an address (else an unsigned integer).
fn calldata_field(at: &str, c: &ConditionDoc) -> Result<(Field, bool), PolicyError> {
    let abi = c.abi.as_ref().ok_or_else(|| {
        invalid(
            at,
            "an ethereum_calldata condition needs the contract's `abi`",
        )
    })?;
    let field = c.field.as_ref().and_then(Value::as_str).unwrap_or("");
    let Some((function, param)) = field.split_once('.') else {
        return Err(invalid(
            at,
            format!(
                "`field` must be <function>.<parameter>, got {}",
                shown(c.field.as_ref())
            ),
        ));
    };
    let candidates = abi.function(function).map(Vec::as_slice).unwrap_or(&[]);
    let found = candidates.iter().find_map(|f| {
        f.inputs
            .iter()
            .position(|p| p.name == param)
            .map(|i| (f.clone(), i))
    });
    let Some((function_abi, index)) = found else {
        return Err(invalid(
            at,
            format!("the `abi` has no function {function} with a parameter {param}"),
        ));
    };
    let ty = function_abi.inputs[index].ty.clone();
    let is_address = ty == "address";
    if !is_address && !ty.starts_with("uint") {
        return Err(invalid(
            at,
            format!("{function}.{param} is a {ty}: conditions compare address and uint parameters"),
        ));
    }
    Ok((
        Field::Calldata(Box::new(CalldataArg {
            function: function_abi,
            index,
            name: param.to_string(),
        })),
        is_address,
    ))
}

fn invalid(at: &str, reason: impl Into<String>) -> PolicyError {
    PolicyError::InvalidPolicy {
        at: at.to_string(),
        reason: reason.into(),
    }
}

fn parse_rule(index: usize, v: &Value) -> Result<Rule, PolicyError> {
    let name = v
        .get("name")
        .and_then(Value::as_str)
        .map(String::from)
        .unwrap_or_else(|| format!("rule #{}", index + 1));
    let at = format!("rule {name:?}");
    let Some(obj) = v.as_object() else {
        return Err(invalid(&at, "a rule must be an object"));
    };
    // Members first, by path: a misspelled one must refuse the policy, never loosen the rule.
    let path = format!("rules[{index}]");
    known_members(&path, obj, &RULE_MEMBERS)?;
    match obj.get("conditions") {
        Some(Value::Array(conditions)) => {
            for (i, c) in conditions.iter().enumerate() {
                if let Value::Object(c) = c {
                    known_members(&format!("{path}.conditions[{i}]"), c, &CONDITION_MEMBERS)?;
                }
            }
        }
        None | Some(Value::Null) => {
            return Err(invalid(
                &format!("{path}.conditions"),
                "missing: a rule needs a `conditions` array; write \"conditions\": [] for a \
                 rule that matches every request of its method",
            ))
        }
        Some(other) => {
            return Err(invalid(
                &format!("{path}.conditions"),
                format!("must be an array of conditions, got {}", shown(Some(other))),
            ))
        }
    }
    // The path names the member (`conditions[0].operator: unknown variant …`).
    let doc: RuleDoc = serde_path_to_error::deserialize(v).map_err(|e| {
        let path = e.path().to_string();
        invalid(&at, format!("{path}: {}", e.into_inner()))
    })?;
    let Some(method) = Method::parse(&doc.method) else {
        return Err(invalid(
            &at,
            format!(
                "`method` must be one of {}, got {:?}",
                Method::list(),
                doc.method
            ),
        ));
    };
    let conditions = doc
        .conditions
        .iter()
        .enumerate()
        .map(|(i, c)| parse_condition(&format!("{at} condition #{}", i + 1), c))
        .collect::<Result<_, _>>()?;
    Ok(Rule {
        name: doc.name.unwrap_or(name),
        action: doc.action,
        method,
        conditions,
    })
}

/// A policy value as its author wrote it (JSON, at most 80 characters), or `nothing`.
fn shown(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "nothing".into(),
        Some(v) => {
            let s = v.to_string();
            match s.char_indices().nth(80) {
                Some((i, _)) => format!("{}…", &s[..i]),
                None => s,
            }
        }
    }
}

fn parse_condition(at: &str, c: &ConditionDoc) -> Result<Condition, PolicyError> {
    let (field, address_like) = match c.field_source {
        FieldSource::EthereumTransaction => match c.field.as_ref().and_then(Value::as_str) {
            Some("to") => (Field::To, true),
            Some("value") => (Field::Value, false),
            _ => {
                return Err(invalid(
                    at,
                    format!(
                        "`field` must be to or value, got {}",
                        shown(c.field.as_ref())
                    ),
                ))
            }
        },
        FieldSource::EthereumCalldata => calldata_field(at, c)?,
    };
    let operator = c.operator;
    let value = c
        .value
        .as_ref()
        .filter(|v| !v.is_null())
        .ok_or_else(|| invalid(at, "it has no `value`"))?;
    let operand = match (address_like, operator, value) {
        (_, Operator::In, Value::Array(items)) if items.is_empty() => {
            return Err(invalid(at, "`in` needs a non-empty array"))
        }
        (_, Operator::In, v) if !v.is_array() => {
            return Err(invalid(at, "`in` needs an array of values"))
        }
        (_, op, Value::Array(_)) if op != Operator::In => {
            return Err(invalid(
                at,
                format!("`{op}` needs a single value, not an array"),
            ))
        }
        (true, Operator::In, Value::Array(items)) => Operand::Addresses(
            items
                .iter()
                .map(|i| address(at, i))
                .collect::<Result<_, _>>()?,
        ),
        (true, Operator::Eq, v) => Operand::Address(address(at, v)?),
        (true, op, _) => {
            return Err(invalid(
                at,
                format!("`{field}` is an address: use eq or in, not {op}"),
            ))
        }
        (false, Operator::In, Value::Array(items)) => {
            Operand::WeiList(items.iter().map(|i| wei(at, i)).collect::<Result<_, _>>()?)
        }
        (false, _, v) => Operand::Wei(wei(at, v)?),
    };
    Ok(Condition {
        field,
        operator,
        operand,
    })
}

fn address(at: &str, v: &Value) -> Result<Address, PolicyError> {
    v.as_str()
        .and_then(|s| {
            let s = s.trim();
            (s.len() == 42 && s.starts_with("0x")).then(|| s.parse::<Address>().ok())?
        })
        .ok_or_else(|| invalid(at, format!("{v} is not a 0x address of 20 bytes")))
}

fn wei(at: &str, v: &Value) -> Result<U256, PolicyError> {
    match v {
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
            U256::from_str_radix(s, 10)
                .map_err(|_| invalid(at, format!("{s:?} does not fit in 256 bits")))
        }
        Value::Number(_) => Err(invalid(
            at,
            format!(
                "wei amounts are decimal strings, not JSON numbers (write \"{v}\"): a number \
                 above 2^53 loses precision"
            ),
        )),
        _ => Err(invalid(
            at,
            format!("{v} is not a decimal wei string such as \"1000000000000000000\""),
        )),
    }
}
