//! The bad-input corpus: malformed, oversized and hostile inputs a careless user, a broken file
//! or a malicious script author would send. Every case must end with its documented exit code
//! and a message naming the problem on stderr — never a panic, an abort or a hang — and print
//! nothing on stdout when it fails before tracing.
//!
//! Cases are rows: arguments (`{dir}` is a scratch folder holding the case's files), files to
//! write there (a fixture may be given as a change to the bundled one), the exit code, and a
//! piece of the message. Add a case by adding a row.

use crate::run;
use std::path::Path;

use serde_json::{json, Value};

const BUNDLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/reverted-nested.json");
const HASH: &str = "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060";

/// What a case writes before it runs.
enum File {
    Text(&'static str, String),
    /// The bundled fixture with `path` (a JSON pointer) set to a value, or removed (`None`).
    Bundle(&'static str, &'static str, Option<Value>),
}

struct Case {
    name: &'static str,
    args: Vec<String>,
    files: Vec<File>,
    exit: i32,
    says: &'static str,
}

fn case(name: &'static str, args: &[&str], exit: i32, says: &'static str) -> Case {
    Case {
        name,
        args: args.iter().map(|s| s.to_string()).collect(),
        files: Vec::new(),
        exit,
        says,
    }
}

fn with(mut c: Case, f: File) -> Case {
    c.files.push(f);
    c
}

/// A bundle case: `tx --fixture {dir}/f.json` on the bundle with one field changed.
fn bundle(
    name: &'static str,
    pointer: &'static str,
    v: Option<Value>,
    exit: i32,
    says: &'static str,
) -> Case {
    with(
        case(
            name,
            &["tx", "--fixture", "{dir}/f.json", "--json"],
            exit,
            says,
        ),
        File::Bundle("f.json", pointer, v),
    )
}

/// A JS tracer case on the bundle.
fn js(name: &'static str, script: &str, exit: i32, says: &'static str) -> Case {
    let mut c = case(
        name,
        &["tx", "--fixture", BUNDLE, "--json", "--timeout", "2s"],
        exit,
        says,
    );
    c.args.push("--tracer".into());
    c.args.push(script.to_string());
    c
}

fn policy(
    name: &'static str,
    policy_text: String,
    request_text: String,
    exit: i32,
    says: &'static str,
) -> Case {
    let c = case(
        name,
        &[
            "policy",
            "check",
            "--policy",
            "{dir}/p.json",
            "--request",
            "{dir}/r.json",
        ],
        exit,
        says,
    );
    with(
        with(c, File::Text("p.json", policy_text)),
        File::Text("r.json", request_text),
    )
}

fn cases() -> Vec<Case> {
    let good_policy = r#"{"version":"1.0","name":"p","chain_type":"ethereum","rules":[{"name":"r","method":"eth_sendTransaction","conditions":[{"field_source":"ethereum_transaction","field":"to","operator":"eq","value":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8"}],"action":"ALLOW"}]}"#.to_string();
    let good_request = r#"{"method":"eth_sendTransaction","caip2":"eip155:1329","chain_type":"ethereum","params":{"transaction":{"to":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","value":"0x1"}}}"#.to_string();
    let mut v = vec![
        // ---- command line ----
        case("hash too short", &["tx", "0x1234"], 1, "malformed transaction hash"),
        case("hash not hex", &["tx", &format!("0x{}", "zz".repeat(32))], 1, "malformed transaction hash"),
        case("hash empty", &["tx", ""], 1, "malformed transaction hash"),
        case("hash 0x only", &["tx", "0x"], 1, "malformed transaction hash"),
        case("hash 65 digits", &["tx", &format!("0x{}", "a".repeat(65))], 1, "malformed transaction hash"),
        case("no node url", &["tx", HASH], 1, "ETH_RPC_URL"),
        case("debug: hash too short", &["debug", "0x1234"], 1, "malformed transaction hash"),
        case("debug: no fixture file", &["debug", "--fixture", "{dir}/none.json"], 1, "none.json"),
        case("debug: override with a bundle", &["debug", "--bundle", BUNDLE, "--code-override", "0x0000000000000000000000000000000000000001=0x00"], 1, "cannot be used with --fixture or --bundle"),
        case("debug: no terminal", &["debug", "--bundle", BUNDLE], 1, "needs a terminal on stdout"),
        case("unknown tracer", &["tx", "--fixture", BUNDLE, "--tracer", "fourByteTracer"], 1, "unknown tracer"),
        case("tracer config not JSON", &["tx", "--fixture", BUNDLE, "--tracer-config", "{"], 1, "--tracer-config"),
        case("tracer config an array", &["tx", "--fixture", BUNDLE, "--tracer-config", "[1]"], 1, "expected a JSON object"),
        case("tracer config wrong type", &["tx", "--fixture", BUNDLE, "--tracer-config", r#"{"withLog":"yes"}"#], 1, "withLog"),
        case("prestate config wrong type", &["tx", "--fixture", BUNDLE, "--tracer", "prestateTracer", "--tracer-config", r#"{"diffMode":1}"#], 1, "diffMode"),
        case("struct config wrong type", &["tx", "--fixture", BUNDLE, "--tracer", "opcodeTracer", "--tracer-config", r#"{"enableMemory":"on"}"#], 1, "enableMemory"),
        case("unknown hardfork", &["tx", "--fixture", BUNDLE, "--hardfork", "bogota"], 1, "bogota"),
        case("timeout without unit", &["tx", "--fixture", BUNDLE, "--tracer", "{result: function() {}, fault: function() {}}", "--timeout", "5"], 1, "--timeout: invalid duration"),
        case("timeout negative", &["tx", "--fixture", BUNDLE, "--tracer", "{result: function() {}, fault: function() {}}", "--timeout=-1s"], 1, "--timeout: invalid duration"),
        case("timeout garbage", &["tx", "--fixture", BUNDLE, "--tracer", "{result: function() {}, fault: function() {}}", "--timeout", "soon"], 1, "--timeout: invalid duration"),
        case("timeout past Go's range", &["tx", "--fixture", BUNDLE, "--tracer", "{result: function() {}, fault: function() {}}", "--timeout", "1e30h"], 1, "--timeout: invalid duration"),
        case("rpc timeout zero", &["tx", "--fixture", BUNDLE, "--rpc-timeout", "0"], 1, "not in 1..=3600"),
        case("rpc timeout huge", &["tx", "--fixture", BUNDLE, "--rpc-timeout", "99999999999999999999"], 1, "--rpc-timeout"),
        case("rpc timeout not a number", &["tx", "--fixture", BUNDLE, "--rpc-timeout", "ten"], 1, "--rpc-timeout"),
        case("state source unknown", &["tx", HASH, "--rpc-url", "http://127.0.0.1:9", "--state-source", "magic"], 1, "--state-source"),
        case("unknown subcommand", &["trace"], 1, "unrecognized subcommand"),
        case("unknown flag", &["tx", "--fixture", BUNDLE, "--colour"], 1, "--colour"),
        case("malformed block ref", &["block", "twelve", "--rpc-url", "http://127.0.0.1:9"], 1, "block"),
        case("call to a malformed address", &["call", "--rpc-url", "http://127.0.0.1:9", "--to", "0x12"], 1, "malformed --to \"0x12\""),
        case("node url with a strange scheme", &["tx", HASH, "--rpc-url", "ftp://127.0.0.1:9", "--rpc-timeout", "1"], 1, "must start with http"),
        case("node unreachable", &["tx", HASH, "--rpc-url", "http://127.0.0.1:9", "--rpc-timeout", "1"], 2, "cannot reach"),
        case("flamegraph into a missing folder", &["gas", "--fixture", BUNDLE, "--flamegraph", "{dir}/no/such/dir/f.svg"], 1, "f.svg"),
        // ---- call --bundle files (read before the node is asked anything) ----
        case("call bundle missing", &["call", "--rpc-url", "http://127.0.0.1:9", "--bundle", "{dir}/none.json"], 1, "cannot read --bundle"),
        with(case("call bundle not JSON", &["call", "--rpc-url", "http://127.0.0.1:9", "--bundle", "{dir}/b.json"], 1, "is not valid JSON"), File::Text("b.json", "[{".into())),
        with(case("call bundle an object", &["call", "--rpc-url", "http://127.0.0.1:9", "--bundle", "{dir}/b.json"], 1, "expected a JSON array of call objects, got an object"), File::Text("b.json", r#"{"calls": []}"#.into())),
        with(case("call bundle empty", &["call", "--rpc-url", "http://127.0.0.1:9", "--bundle", "{dir}/b.json"], 1, "holds no call"), File::Text("b.json", "[]".into())),
        with(case("call bundle unknown member", &["call", "--rpc-url", "http://127.0.0.1:9", "--bundle", "{dir}/b.json"], 1, "call 2 of 2: unknown member \"vaule\" (did you mean \"value\"?"), File::Text("b.json", r#"[{}, {"vaule": "1"}]"#.into())),
        with(case("call bundle malformed address", &["call", "--rpc-url", "http://127.0.0.1:9", "--bundle", "{dir}/b.json"], 1, "call 1 of 1: to \"0x12\" is not a 20-byte 0x address"), File::Text("b.json", r#"[{"to": "0x12"}]"#.into())),
        with(case("call bundle bad value unit", &["call", "--rpc-url", "http://127.0.0.1:9", "--bundle", "{dir}/b.json"], 1, "unknown unit"), File::Text("b.json", r#"[{"value": "1 dollar"}]"#.into())),
        with(case("call bundle sig and data", &["call", "--rpc-url", "http://127.0.0.1:9", "--bundle", "{dir}/b.json"], 1, "either sig (with args) or data"), File::Text("b.json", r#"[{"sig": "f()", "data": "0x"}]"#.into())),
        with(case("call bundle with --to", &["call", "--rpc-url", "http://127.0.0.1:9", "--bundle", "{dir}/b.json", "--to", "0x0000000000000000000000000000000000000001"], 1, "cannot be used with"), File::Text("b.json", "[{}]".into())),
        // ---- fixture and bundle files ----
        case("fixture missing", &["tx", "--fixture", "{dir}/none.json"], 1, "cannot read"),
        case("fixture is a folder", &["tx", "--fixture", "{dir}"], 1, "cannot read"),
        with(case("fixture empty", &["tx", "--fixture", "{dir}/f.json"], 1, "not valid JSON"), File::Text("f.json", String::new())),
        with(case("fixture not JSON", &["tx", "--fixture", "{dir}/f.json"], 1, "not valid JSON"), File::Text("f.json", "genesis: yes".into())),
        with(case("fixture a JSON array", &["tx", "--fixture", "{dir}/f.json"], 1, "f.json"), File::Text("f.json", "[]".into())),
        with(case("fixture a JSON string", &["tx", "--fixture", "{dir}/f.json"], 1, "f.json"), File::Text("f.json", "\"tx\"".into())),
        with(case("fixture nested too deep", &["tx", "--fixture", "{dir}/f.json"], 1, "recursion limit"), File::Text("f.json", format!("{}{}", "[".repeat(10_000), "]".repeat(10_000)))),
        with(case("fixture binary garbage", &["tx", "--fixture", "{dir}/f.json"], 1, "f.json"), File::Text("f.json", String::from_utf8_lossy(&[0xff, 0xfe, 0x00, 0x01]).into_owned())),
        bundle("input missing", "/input", None, 1, "input"),
        bundle("input not hex", "/input", Some(json!("0xzz")), 1, "input"),
        bundle("input odd length", "/input", Some(json!("0x123")), 1, "input"),
        bundle("input empty", "/input", Some(json!("0x")), 1, "transaction"),
        bundle("input a number", "/input", Some(json!(12)), 1, "input"),
        bundle("input truncated", "/input", Some(json!("0x02f891")), 1, "cannot decode transaction"),
        bundle("input with trailing bytes", "/input", Some(Value::Null), 1, "bytes follow"),
        bundle("signed for another chain", "/genesis/config/chainId", Some(json!(1)), 1, "signed for chain"),
        bundle("opChainConfig of another chain", "/opChainConfig", Some(json!({"chainId": 901, "bedrockBlock": 0, "optimism": {}})), 1, "opChainConfig is chain 901's, but the bundle's genesis config is chain"),
        bundle("opChainConfig without optimism", "/opChainConfig", Some(json!({"chainId": 1})), 1, "opChainConfig: no `optimism` member"),
        bundle("genesis missing", "/genesis", None, 1, "genesis"),
        bundle("config missing", "/genesis/config", None, 1, "config"),
        bundle("context missing", "/context", None, 1, "context"),
        bundle("context number garbage", "/context/number", Some(json!("soon")), 1, "number"),
        bundle("context number negative", "/context/number", Some(json!(-1)), 1, "number"),
        bundle("context timestamp garbage", "/context/timestamp", Some(json!({"t": 1})), 1, "timestamp"),
        bundle("context gas limit garbage", "/context/gasLimit", Some(json!("lots")), 1, "gasLimit"),
        bundle("base fee garbage", "/context/baseFeePerGas", Some(json!("0xgg")), 1, "baseFeePerGas"),
        bundle("alloc not an object", "/genesis/alloc", Some(json!([])), 1, "alloc"),
        bundle("alloc address bad", "/genesis/alloc/0xnope", Some(json!({"balance": "0x1"})), 1, "0xnope"),
        bundle("alloc balance garbage", "/genesis/alloc/0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266/balance", Some(json!("rich")), 1, "balance"),
        bundle("alloc balance past 256 bits", "/genesis/alloc/0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266/balance", Some(json!(format!("0x1{}", "0".repeat(64)))), 1, "balance"),
        bundle("alloc nonce garbage", "/genesis/alloc/0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266/nonce", Some(json!("first")), 1, "nonce"),
        bundle("alloc code not hex", "/genesis/alloc/0xa513e6e4b8f2a923d98304ec87f64353c4d5c853/code", Some(json!("0xabcz")), 1, "code"),
        bundle("receipt a string", "/receipt", Some(json!("ok")), 2, "self-check NOT DONE"),
        bundle("receipt empty object", "/receipt", Some(json!({})), 2, "status missing"),
        bundle("receipt gas unreadable", "/receipt/gasUsed", Some(json!("lots")), 2, "gasUsed unreadable"),
        bundle("receipt logs unreadable", "/receipt/logs", Some(json!("none")), 2, "logs unreadable"),
        bundle("receipt status tampered", "/receipt/status", Some(json!("0x1")), 4, "status: replay 0x0 but receipt 0x1"),
        bundle("receipt gas tampered", "/receipt/gasUsed", Some(json!("0x1")), 4, "gasUsed: replay"),
        bundle("block hashes garbage", "/blockHashes", Some(json!("many")), 1, "blockHashes"),
        bundle("log index offset garbage", "/logIndexOffset", Some(json!("third")), 1, "logIndexOffset"),
        // ---- JavaScript tracers ----
        js("syntax error", "{result: function() { return ; }, fault: function() {", 1, "invalid JavaScript tracer"),
        js("not an object", "42", 1, "unknown tracer \"42\""),
        js("no result", "{fault: function() {}}", 1, "result"),
        js("no fault", "{result: function() { return 1; }}", 1, "fault"),
        js("enter without exit", "{enter: function() {}, fault: function() {}, result: function() { return 1; }}", 1, "enter() and exit()"),
        js("setup throws", "{setup: function() { throw new Error('no'); }, fault: function() {}, result: function() { return 1; }}", 1, "no"),
        js("step throws", "{step: function() { throw new Error('boom'); }, fault: function() {}, result: function() { return 1; }}", 1, "boom    in server-side tracer function 'step'"),
        js("result throws", "{fault: function() {}, result: function() { null.x; }}", 1, "in server-side tracer function 'result'"),
        js("endless step", "{step: function() { while (true) {} }, fault: function() {}, result: function() { return 1; }}", 1, "execution timeout"),
        js("endless result", "{fault: function() {}, result: function() { for (;;) {} }}", 1, "execution timeout"),
        js("exponential recursion", "{f: function(n) { return n < 2 ? n : this.f(n - 1) + this.f(n - 2); }, step: function() { this.f(40); }, fault: function() {}, result: function() { return 1; }}", 1, "execution timeout"),
        js("endless recursion", "{f: function() { return this.f(); }, fault: function() {}, result: function() { return this.f(); }}", 1, "in server-side tracer function 'result'"),
        js("source nested too deep", &format!("{{fault: function() {{}}, result: function() {{ return {}1{}; }}}}", "(".repeat(500), ")".repeat(500)), 1, "nests brackets"),
        js("result nested too deep", "{fault: function() {}, result: function() { var a = [], x = a; for (var i = 0; i < 2000; i++) { var b = []; x.push(b); x = b; } return a; }}", 1, "nests more than 512 levels"),
        js("repeat bomb", "{fault: function() {}, result: function() { return 'x'.repeat(2**31 - 1); }}", 1, "string longer than"),
        js("padEnd bomb", "{fault: function() {}, result: function() { return ''.padEnd(2**30, 'ab'); }}", 1, "string longer than"),
        js("join bomb", "{fault: function() {}, result: function() { return new Array(2e8).join(); }}", 1, "string longer than"),
        js("string doubling in step", "{s: 'x', n: 0, step: function() { if (this.n < 40) { this.s = this.s + this.s; this.n++; } }, fault: function() {}, result: function() { return this.s.length; }}", 1, "out of memory: the tracer holds more than 1 GiB"),
        js("string doubling in result", "{fault: function() {}, result: function() { var s = 'ab'; for (var i = 0; i < 40; i++) { s = s + s; } return s.length; }}", 1, "out of memory: the tracer holds more than 1 GiB"),
        js("regex backtracking bomb", "{fault: function() {}, result: function() { return /(a+)+$/.test('a'.repeat(64) + 'b'); }}", 1, "repeats a group that itself repeats"),
        js("regex bomb through replace", "{fault: function() {}, result: function() { return ('x'.repeat(50) + '!').replace(/([a-z]*)*$/, ''); }}", 1, "backtracking could run unbounded"),
        js("bigInt pow bomb", "{fault: function() {}, result: function() { return bigInt(3).pow(5e7).toString(); }}", 1, "bigInt result would exceed"),
        js("bigInt shift bomb", "{fault: function() {}, result: function() { return bigInt(7).shiftLeft(1e8).toString(); }}", 1, "bigInt result would exceed"),
        js("cyclic result", "{fault: function() {}, result: function() { var a = {}; a.a = a; return a; }}", 1, "TypeError"),
        js("native BigInt result", "{fault: function() {}, result: function() { return 1n; }}", 1, "TypeError"),
        js("db with a string address", "{step: function(log, db) { db.getBalance('0x00'); }, fault: function() {}, result: function() { return 1; }}", 1, "in server-side tracer function 'step'"),
        js("memory slice bad bounds", "{step: function(log) { log.memory.slice(-1, -2); }, fault: function() {}, result: function() { return 1; }}", 1, "tracer accessed out of bound memory"),
        js("memory slice huge padding", "{step: function(log) { log.memory.slice(0, 1e9); }, fault: function() {}, result: function() { return 1; }}", 1, "reached limit for padding memory slice"),
        js("stack peek bad index", "{step: function(log) { log.stack.peek(-1); }, fault: function() {}, result: function() { return 1; }}", 1, "tracer accessed out of bound stack"),
        js("toAddress garbage", "{fault: function() {}, result: function() { return toAddress({}); }}", 1, "in server-side tracer function 'result'"),
        js("setup reads a missing config field", "{setup: function(c) { JSON.parse(c).a.b; }, fault: function() {}, result: function() { return 1; }}", 1, "TypeError"),
        js("script from a missing file", "{dir}/none.js", 1, "none.js"),
        js("a thrown megabyte", "{fault: function() {}, result: function() { throw 'x'.repeat(1 << 20); }}", 1, "bytes in all)"),
        // ---- policy and request bodies ----
        policy("policy not JSON", "{".into(), good_request.clone(), 1, "p.json"),
        policy("policy nested too deep", format!("{}{}", "[".repeat(40_000), "]".repeat(40_000)), good_request.clone(), 1, "recursion limit"),
        policy("policy without rules", r#"{"version":"1.0","name":"p","chain_type":"ethereum"}"#.into(), good_request.clone(), 1, "rules"),
        policy("policy bad operator", good_policy.replace("\"eq\"", "\"resembles\""), good_request.clone(), 1, "conditions[0].operator: unknown variant `resembles`"),
        policy("policy field source missing", good_policy.replace("\"field_source\":\"ethereum_transaction\",", ""), good_request.clone(), 1, "conditions[0]: missing field `field_source`"),
        policy("policy bad action", good_policy.replace("ALLOW", "MAYBE"), good_request.clone(), 1, "MAYBE"),
        policy("calldata condition without an abi", good_policy.replace("\"field_source\":\"ethereum_transaction\",\"field\":\"to\"", "\"field_source\":\"ethereum_calldata\",\"field\":\"transfer.to\""), good_request.clone(), 1, "needs the contract's `abi`"),
        policy("calldata condition on a missing function", good_policy.replace("\"field_source\":\"ethereum_transaction\",\"field\":\"to\"", "\"field_source\":\"ethereum_calldata\",\"field\":\"mint.to\",\"abi\":[]"), good_request.clone(), 1, "has no function mint with a parameter to"),
        policy("request not JSON", good_policy.clone(), "{".into(), 1, "r.json"),
        policy("request repeats a name", good_policy.clone(), good_request.replace("\"value\":\"0x1\"", "\"to\":\"0x90F79bf6EB2c4F870365E785982E1f101E93b906\",\"value\":\"0x1\""), 7, "duplicate member name \"to\""),
        policy("request nested too deep", good_policy.clone(), format!("{}{}", "{\"a\":".repeat(40_000), "}".repeat(40_000)), 1, "recursion limit"),
        policy("request an array", good_policy.clone(), "[]".into(), 1, "r.json"),
        // A misspelled member refuses the policy: ignored, it would loosen a rule (fail open).
        policy("policy rule with `condition`", good_policy.replace("\"conditions\"", "\"condition\""), good_request.clone(), 1, "invalid policy: rules[0].condition: unknown member; did you mean conditions?"),
        policy("policy rule with null conditions", good_policy.replace(r#""conditions":[{"field_source":"ethereum_transaction","field":"to","operator":"eq","value":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8"}]"#, r#""conditions":null"#), good_request.clone(), 1, "invalid policy: rules[0].conditions: missing: a rule needs a `conditions` array"),
        policy("policy rule without conditions", good_policy.replace(r#""conditions":[{"field_source":"ethereum_transaction","field":"to","operator":"eq","value":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8"}],"#, ""), good_request.clone(), 1, "invalid policy: rules[0].conditions: missing"),
        policy("policy conditions an object", good_policy.replace(r#""conditions":[{"field_source":"ethereum_transaction","field":"to","operator":"eq","value":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8"}]"#, r#""conditions":{"field_source":"ethereum_transaction","field":"to","operator":"eq","value":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8"}"#), good_request.clone(), 1, "invalid policy: rules[0].conditions: must be an array of conditions"),
        policy("policy condition member misspelled", good_policy.replace("\"operator\"", "\"operater\""), good_request.clone(), 1, "invalid policy: rules[0].conditions[0].operater: unknown member; did you mean operator?"),
        policy("policy member misspelled", good_policy.replace("\"version\"", "\"verison\""), good_request.clone(), 1, "invalid policy: verison: unknown member; did you mean version?"),
        policy("policy member unknown", good_policy.replace("\"version\"", "\"limits\""), good_request.clone(), 1, "invalid policy: limits: unknown member; the members here are version, name, chain_type"),
        policy("request with differing data and input", good_policy.clone(), good_request.replace("\"value\":\"0x1\"", "\"value\":\"0x1\",\"data\":\"0x\",\"input\":\"0xa9059cbb\""), 1, "has both `data` and `input`, and they differ"),
        policy("request without method", good_policy.clone(), r#"{"params":{}}"#.into(), 1, "method"),
        policy("policy for another chain type", good_policy.replace("\"chain_type\":\"ethereum\"", "\"chain_type\":\"solana\""), good_request.clone(), 1, "`chain_type` is \"solana\": chaintrace evaluates EVM requests"),
        with(with(case("message with an unknown encoding (no node needed)", &["preflight", "--policy", "{dir}/p.json", "--request", "{dir}/r.json"], 7, "params.encoding: must be \"utf-8\" or \"hex\""), File::Text("p.json", good_policy.replace("eth_sendTransaction", "personal_sign"))), File::Text("r.json", r#"{"method":"personal_sign","params":{"message":"hi","encoding":"base64"}}"#.into())),
        case("wallet create without a provider address", &["wallet", "create"], 1, "no wallet provider given: pass --wallet-api-url URL or set WALLET_API_URL"),
        case("wallet rpc without a provider address", &["wallet", "rpc", "--wallet", "w1", "--policy", "{dir}/p.json", "--request", "{dir}/r.json", "--rpc-url", "http://127.0.0.1:9"], 1, "no wallet provider given"),
        // ---- node logs and homes ----
        case("doctor on a missing log", &["node", "doctor", "--log", "{dir}/none.log"], 1, "none.log"),
        with(case("doctor on binary garbage", &["node", "doctor", "--log", "{dir}/bin.log"], 0, "no known error class found"), File::Text("bin.log", String::from_utf8_lossy(&[0u8, 159, 146, 150, 10, 255]).into_owned())),
        case("split-check on a missing home", &["node", "split-check", "--home", "{dir}/nohome"], 1, "is not a directory"),
        with(case("split-check with a broken app.toml", &["node", "split-check", "--home", "{dir}/h"], 1, "app.toml"), File::Text("h/config/app.toml", "[state-store\nss-keep-recent = ".into())),
        with(case("split-check with sc-enable garbage", &["node", "split-check", "--home", "{dir}/h"], 5, "sc-enable is \"maybe\", not a boolean"), File::Text("h/config/app.toml", "[state-commit]\nsc-enable = \"maybe\"\n".into())),
        case("status of an unreachable node", &["node", "status", "--url", "http://127.0.0.1:9"], 2, "127.0.0.1:9"),
        // ---- more command-line and file cases ----
        case("ABI file missing", &["tx", "--fixture", BUNDLE, "--abi", "{dir}/none.abi.json"], 1, "none.abi.json"),
        with(case("ABI file not JSON", &["tx", "--fixture", BUNDLE, "--abi", "{dir}/a.json"], 1, "a.json"), File::Text("a.json", "function transfer".into())),
        // ---- --code-override (what-if replays): refused before any node is asked ----
        case("code override without '='", &["tx", HASH, "--rpc-url", "http://127.0.0.1:9", "--code-override", "0x00000000000000000000000000000000000000aa"], 1, "no '=' between the address and the code"),
        case("code override with a short address", &["tx", HASH, "--rpc-url", "http://127.0.0.1:9", "--code-override", "0xaa=0x00"], 1, "is not 0x followed by 40 hex digits"),
        case("code override with bad hex", &["tx", HASH, "--rpc-url", "http://127.0.0.1:9", "--code-override", "0x00000000000000000000000000000000000000aa=0xzz"], 1, "the code is not hex bytes"),
        case("code override artifact missing", &["tx", HASH, "--rpc-url", "http://127.0.0.1:9", "--code-override", "0x00000000000000000000000000000000000000aa={dir}/none.json"], 1, "none.json"),
        with(case("code override artifact with an immutable not read by a PUSH32", &["tx", HASH, "--rpc-url", "http://127.0.0.1:9", "--code-override", "0x00000000000000000000000000000000000000aa={dir}/Imm.json"], 1, "immutable #5 is not read by a PUSH32 at byte 1"), File::Text("Imm.json", json!({"abi": [], "deployedBytecode": {"object": format!("0x60{}00", "00".repeat(32)), "immutableReferences": {"5": [{"start": 1, "length": 32}]}}}).to_string())),
        with(case("code override artifact with unlinked libraries", &["block", "7", "--rpc-url", "http://127.0.0.1:9", "--code-override", "0x00000000000000000000000000000000000000aa={dir}/L.json"], 1, "libraries (MathLib)"), File::Text("L.json", json!({"abi": [], "deployedBytecode": {"object": "0x73__$0123456789abcdef0123456789abcdef01$__60", "linkReferences": {"src/L.sol": {"MathLib": [{"start": 1, "length": 20}]}}}}).to_string())),
        with(case("code override artifact without runtime code", &["tx", HASH, "--rpc-url", "http://127.0.0.1:9", "--code-override", "0x00000000000000000000000000000000000000aa={dir}/I.json"], 1, "no runtime code"), File::Text("I.json", json!({"abi": []}).to_string())),
        case("code override of a fixture", &["tx", "--fixture", BUNDLE, "--code-override", "0x00000000000000000000000000000000000000aa=0x00"], 1, "cannot be used with --fixture or --remote"),
        case("code override of a block range", &["block", "1..2", "--rpc-url", "http://127.0.0.1:9", "--code-override", "0x00000000000000000000000000000000000000aa=0x00"], 1, "cannot be used with a range"),
        case("cache dir is a file", &["tx", HASH, "--rpc-url", "http://127.0.0.1:9", "--rpc-timeout", "1", "--cache-dir", BUNDLE], 2, "cannot reach"),
        case("bundle capture without a node", &["bundle", "capture", HASH, "-o", "{dir}/b.json"], 1, "ETH_RPC_URL"),
        case("diff without a node", &["diff", HASH], 1, "ETH_RPC_URL"),
        case("access with a bad hash", &["access", "0x1", "--rpc-url", "http://127.0.0.1:9"], 1, "malformed transaction hash"),
        case("gas with a bad hash", &["gas", "0xzz"], 1, "malformed transaction hash"),
        case("block range reversed", &["block", "10..5", "--rpc-url", "http://127.0.0.1:9"], 1, "10..5"),
        case("--out without a range", &["block", "12", "--rpc-url", "http://127.0.0.1:9", "--out", "{dir}/o"], 1, "A..B"),
        case("--shard malformed", &["block", "1..5", "--rpc-url", "http://127.0.0.1:9", "--out", "{dir}/o", "--shard", "3/3"], 1, "--shard"),
        case("--shard without --out", &["block", "1..5", "--rpc-url", "http://127.0.0.1:9", "--shard", "0/2"], 1, "--out"),
        case("--partition-size 0", &["block", "1..5", "--rpc-url", "http://127.0.0.1:9", "--out", "{dir}/o", "--partition-size", "0"], 1, "partition-size"),
        case("--format unknown", &["block", "1..5", "--rpc-url", "http://127.0.0.1:9", "--out", "{dir}/o", "--format", "csv"], 1, "csv"),
        case("preflight without a policy", &["preflight", "--request", "{dir}/r.json"], 1, "--policy"),
        case("fixture with --remote", &["tx", "--fixture", BUNDLE, "--remote"], 1, "--remote asks the node"),
        bundle("tracerConfig of the wrong type", "/tracerConfig", Some(json!({"onlyTopCall": "please"})), 1, "onlyTopCall"),
        bundle("chain id garbage", "/genesis/config/chainId", Some(json!("main")), 1, "chainId"),
        bundle("fork block garbage", "/genesis/config/londonBlock", Some(json!("later")), 1, "londonBlock"),
        bundle("difficulty garbage", "/context/difficulty", Some(json!([1])), 1, "difficulty"),
        bundle("miner not an address", "/context/miner", Some(json!("0x12")), 1, "miner"),
    ];
    v.retain(|c| !c.name.is_empty());
    v
}

fn json_set(root: &mut Value, pointer: &str, v: Option<Value>) {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let parent = if parent.is_empty() {
        root
    } else {
        root.pointer_mut(parent)
            .unwrap_or_else(|| panic!("no {parent} in the bundle"))
    };
    let obj = parent.as_object_mut().expect("an object");
    match v {
        Some(v) => {
            obj.insert(key.to_string(), v);
        }
        None => {
            obj.remove(key);
        }
    }
}

fn prepare(c: &Case, dir: &Path) -> Vec<String> {
    let bundle: Value = serde_json::from_str(&std::fs::read_to_string(BUNDLE).unwrap()).unwrap();
    for f in &c.files {
        let (name, text) = match f {
            File::Text(name, text) => (*name, text.clone()),
            File::Bundle(name, pointer, v) => {
                let mut b = bundle.clone();
                if *pointer == "/input" && v.as_ref().is_some_and(Value::is_null) {
                    // Trailing bytes after the signed transaction.
                    b["input"] = json!(format!("{}00", bundle["input"].as_str().unwrap()));
                } else {
                    json_set(&mut b, pointer, v.clone());
                }
                (*name, b.to_string())
            }
        };
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    c.args
        .iter()
        .map(|a| a.replace("{dir}", dir.to_str().unwrap()))
        .collect()
}

#[test]
fn every_bad_input_ends_in_its_exit_code_and_a_message() {
    let cases = cases();
    let root = std::env::temp_dir().join(format!("chaintrace-bad-{}", std::process::id()));
    let mut failures = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let dir = root.join(i.to_string());
        std::fs::create_dir_all(&dir).unwrap();
        let args = prepare(c, &dir);
        let out = run::cmd(&[]).args(&args).no_cache().output().unwrap();
        let code = out.status.code().unwrap_or(-1);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let problem = if code != c.exit {
            Some(format!("exit {code}, want {}", c.exit))
        } else if !stderr.contains(c.says) && !String::from_utf8_lossy(&out.stdout).contains(c.says)
        {
            Some(format!("message lacks {:?}", c.says))
        } else if stderr.contains("panicked") || stderr.contains("fatal runtime error") {
            Some("panicked".into())
        } else if stderr.contains("Some(\"") {
            Some("the message shows Rust's Debug form".into())
        } else if stderr.len() > 4_000 {
            Some(format!("{} bytes of stderr", stderr.len()))
        } else {
            None
        };
        if let Some(p) = problem {
            let tail: String = stderr.chars().take(300).collect();
            failures.push(format!("{}: {p}: {tail}", c.name));
        }
    }
    std::fs::remove_dir_all(&root).ok();
    assert!(
        failures.is_empty(),
        "{} of {} bad inputs mishandled:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    assert!(cases.len() >= 120, "the corpus has {} cases", cases.len());
    eprintln!("{} bad inputs: each its exit code and message", cases.len());
}

/// A private key pasted into a request field or a flag is never quoted in a message: a run of
/// hex digits longer than an address is shown by its length (`0x<64 hex digits>`), so not even
/// part of the key (the 22 digits an over-wide quantity once showed) is printed.
#[test]
fn no_message_quotes_key_material() {
    let key = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
    let dir = std::env::temp_dir().join(format!("chaintrace-key-msg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, v: Value| {
        let p = dir.join(name);
        std::fs::write(&p, v.to_string()).unwrap();
        p.display().to_string()
    };
    let allow = write(
        "p.json",
        json!({"rules": [
            {"name": "s", "method": "eth_sendTransaction", "conditions": [], "action": "ALLOW"},
            {"name": "m", "method": "personal_sign", "conditions": [], "action": "ALLOW"}]}),
    );
    let tx = |field: &str, v: String| {
        json!({"method": "eth_sendTransaction", "caip2": "eip155:1329",
            "params": {"transaction": {field: v}}})
    };
    let message = write(
        "m.json",
        json!({"method": "personal_sign", "params": {"message": "hi"}}),
    );
    let mut runs = Vec::new();
    for (i, (field, v)) in [
        ("to", format!("0x{key}")),
        ("value", format!("0x{key}{key}")),
        ("data", format!("0x{key}zz")),
    ]
    .into_iter()
    .enumerate()
    {
        let req = write(&format!("r{i}.json"), tx(field, v));
        runs.push((
            1,
            format!("`{field}` \"0x<"),
            run::cmd(&["policy", "check", "--policy", &allow, "--request", &req]).run(),
        ));
    }
    let from = format!("0x{key}");
    runs.push((
        1,
        "malformed --from \"0x<64 hex digits>\"".into(),
        run::cmd(&[
            "preflight",
            "--policy",
            &allow,
            "--request",
            &message,
            "--from",
            &from,
        ])
        .run(),
    ));
    std::fs::remove_dir_all(&dir).ok();
    for (code, says, r) in runs {
        assert_eq!(r.code, code, "{}", r.stderr);
        assert!(r.stderr.contains(&says), "{says}: {}", r.stderr);
        for start in 0..key.len() - 16 {
            let piece = &key[start..start + 16];
            assert!(
                !r.stderr.contains(piece) && !r.stdout.contains(piece),
                "key material {piece}: {}",
                r.stderr
            );
        }
    }
}
