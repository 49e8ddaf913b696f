//! The one redactor: secrets learnt from the environment, request files and URLs, and the
//! scrubbing of every text that might quote them. Used by the JSON-RPC client (the node URL's
//! credentials and keys), `preflight`/`policy` and `wallet` (app secret, authorization and
//! private keys). Everything hidden becomes [`TOKEN`], as in `rpc::redact_url`.

use serde_json::Value;

/// What a secret is replaced with.
pub const TOKEN: &str = "***";

/// Whether a member name denotes a secret (app secret, private or authorization key, token).
pub fn is_secret_name(name: &str) -> bool {
    let n: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    [
        "secret",
        "privatekey",
        "privkey",
        "authorization",
        "signature",
        "apikey",
        "password",
        "passphrase",
        "mnemonic",
        "token",
        "authkey",
        "credential",
    ]
    .iter()
    .any(|s| n.contains(s))
}

/// Strings that must never be printed, and the scrubbing of text that might contain them.
#[derive(Clone, Debug, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

/// Secrets shorter than this are not scrubbed: they would mangle ordinary output and are not
/// real keys anyway.
const MIN_SECRET_LEN: usize = 6;

impl Redactor {
    /// Learns the values of secret-named environment variables (passed in, so it is testable).
    pub fn add_env<I: IntoIterator<Item = (String, String)>>(&mut self, vars: I) {
        for (k, v) in vars {
            if is_secret_name(&k) || k.to_ascii_lowercase().contains("private") {
                self.add(&v);
            }
        }
    }

    /// Learns every string under a secret-named member of `doc` (body or headers).
    pub fn add_json(&mut self, doc: &Value) {
        if let Value::Object(m) = doc {
            for (k, v) in m {
                if is_secret_name(k) {
                    self.add_all_strings(v);
                } else {
                    self.add_json(v);
                }
            }
        } else if let Value::Array(items) = doc {
            items.iter().for_each(|i| self.add_json(i));
        }
    }

    fn add_all_strings(&mut self, v: &Value) {
        match v {
            Value::String(s) => self.add(s),
            Value::Number(n) => self.add(&n.to_string()),
            Value::Array(items) => items.iter().for_each(|i| self.add_all_strings(i)),
            Value::Object(m) => m.values().for_each(|i| self.add_all_strings(i)),
            _ => {}
        }
    }

    /// Adds a secret value, and its parts: `Basic <b64>` headers and `wallet-auth:<key>`
    /// prefixed keys are also recognised without their prefix.
    pub fn add(&mut self, value: &str) {
        let value = value.trim();
        let mut parts = vec![value.to_string()];
        parts.extend(value.split_whitespace().map(String::from));
        if let Some((_, rest)) = value.split_once(':') {
            parts.push(rest.to_string());
        }
        for p in parts {
            if p.len() >= MIN_SECRET_LEN && !self.secrets.contains(&p) {
                self.secrets.push(p);
            }
        }
        self.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }

    /// Adds a secret exactly as given (no parts), if at least 4 characters long: the pieces of
    /// a URL that `rpc::redact_url` hides.
    pub fn add_exact(&mut self, value: &str) {
        if value.len() >= 4 && !self.secrets.iter().any(|s| s == value) {
            self.secrets.push(value.to_string());
            self.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
    }

    /// Learns every secret `other` knows.
    pub fn merge(&mut self, other: &Redactor) {
        for s in &other.secrets {
            if !self.secrets.contains(s) {
                self.secrets.push(s.clone());
            }
        }
        self.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }

    /// `text` with every known secret replaced by [`TOKEN`] (longest first, so overlapping
    /// secrets hide fully).
    pub fn scrub(&self, text: &str) -> String {
        let mut out = text.to_string();
        for s in &self.secrets {
            if out.contains(s.as_str()) {
                out = out.replace(s.as_str(), TOKEN);
            }
        }
        out
    }
}

/// Hex digits a quoted value may show in one run: an address's 40. A private key is 64, and
/// anything longer than an address is shown by its length only, so no message quotes key
/// material (decimal digits count too: they are hex digits).
pub const QUOTED_HEX_RUN: usize = 40;

/// `text` with every run of more than [`QUOTED_HEX_RUN`] hex digits replaced by
/// `<N hex digits>` (an `0x` before it stays). For messages that quote input: a request's
/// fields, a flag's value, a provider's error text.
pub fn elide_hex(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        if run.len() > QUOTED_HEX_RUN {
            out.push_str(&format!("<{} hex digits>", run.len()));
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    for c in text.chars() {
        if c.is_ascii_hexdigit() {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out
}

/// `s` quoted as Rust's `{:?}` writes it, with long hex runs elided ([`elide_hex`]).
pub fn quoted(s: &str) -> String {
    elide_hex(&format!("{s:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn redactor_scrubs_env_and_file_secrets_with_their_parts() {
        let mut r = Redactor::default();
        r.add_env([
            ("APP_SECRET".to_string(), "s3cr3t-value".to_string()),
            ("HOME".to_string(), "/root".to_string()),
        ]);
        r.add_json(
            &json!({"headers": {"Authorization": "Basic QWxhZGRpbjpvcGVu"},
                           "authorization_key": "wallet-auth:MIGHAgEAkey"}),
        );
        assert_eq!(
            r.scrub("a s3cr3t-value b QWxhZGRpbjpvcGVu c MIGHAgEAkey /root"),
            "a *** b *** c *** /root"
        );
    }

    #[test]
    fn long_hex_runs_are_shown_by_their_length() {
        let key = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
        assert_eq!(
            elide_hex(&format!("to 0x{key} and 0x{}", &key[..40])),
            format!("to 0x<64 hex digits> and 0x{}", &key[..40])
        );
        assert_eq!(quoted(&format!("0x{key}z")), "\"0x<64 hex digits>z\"");
    }

    #[test]
    fn exact_secrets_hide_longest_first() {
        let mut r = Redactor::default();
        r.add_exact("abcd");
        r.add_exact("abcdefgh");
        r.add_exact("xyz");
        assert_eq!(r.scrub("abcdefgh abcd xyz"), "*** *** xyz");
    }
}
