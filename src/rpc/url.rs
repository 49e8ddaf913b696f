//! A node URL's secrets: hosted providers put API keys in the path, the query or the user
//! info. [`redact_url`] is the only form a URL is ever shown in; [`url_secrets`] lists what to
//! scrub from text the node or the network stack echoes; the user info becomes Basic auth.

/// The pieces of a URL, split without validation so that even malformed input is redacted.
pub(super) struct UrlParts<'a> {
    pub(super) scheme: &'a str,
    pub(super) userinfo: Option<&'a str>,
    pub(super) host: &'a str,
    pub(super) path: &'a str,
    pub(super) query: Option<&'a str>,
    pub(super) fragment: Option<&'a str>,
}

pub(super) fn split_url(url: &str) -> UrlParts<'_> {
    let (scheme, rest) = match url.find("://") {
        Some(i) => (&url[..i], &url[i + 3..]),
        None => ("", url),
    };
    let auth_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..auth_end];
    let (userinfo, host) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    let rest = &rest[auth_end..];
    let (rest, fragment) = match rest.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (rest, None),
    };
    let (path, query) = match rest.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (rest, None),
    };
    UrlParts {
        scheme,
        userinfo,
        host,
        path,
        query,
        fragment,
    }
}

/// A path segment or bare query word that looks like an API key: 16+ characters of
/// `[A-Za-z0-9_-]` including a digit.
fn looks_like_key(s: &str) -> bool {
    s.len() >= 16
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        && s.bytes().any(|b| b.is_ascii_digit())
}

/// Path segments to hide: key-like ones, and everything after a `/v2/` or `/v3/` segment
/// (Alchemy, Infura and many others put the key there).
fn secret_segments(path: &str) -> Vec<bool> {
    let mut after_version = false;
    path.split('/')
        .map(|seg| {
            let secret = !seg.is_empty() && (after_version || looks_like_key(seg));
            if seg.eq_ignore_ascii_case("v2") || seg.eq_ignore_ascii_case("v3") {
                after_version = true;
            }
            secret
        })
        .collect()
}

/// `url` with everything that could be a credential replaced, so it can be printed.
///
/// Drops `user:pass@`, replaces query values with `***` (keeping the keys), replaces path
/// segments that look like API keys or follow `/v2/` or `/v3/` with `***`, and hides any
/// fragment. Works on malformed input too, since that is exactly when errors get printed.
///
/// ```
/// use chaintrace::rpc::redact_url;
/// assert_eq!(redact_url("https://user:pw@host/x"), "https://host/x");
/// assert_eq!(
///     redact_url("https://eth-mainnet.g.alchemy.com/v2/abcDEF123456789xyz"),
///     "https://eth-mainnet.g.alchemy.com/v2/***"
/// );
/// assert_eq!(redact_url("https://rpc.example/?apikey=secret"), "https://rpc.example/?apikey=***");
/// assert_eq!(redact_url("http://127.0.0.1:8545"), "http://127.0.0.1:8545");
/// ```
pub fn redact_url(url: &str) -> String {
    let parts = split_url(url.trim());
    let mut out = String::with_capacity(url.len());
    if !parts.scheme.is_empty() {
        out.push_str(parts.scheme);
        out.push_str("://");
    }
    out.push_str(parts.host);
    let segments: Vec<&str> = parts.path.split('/').collect();
    let hide = secret_segments(parts.path);
    let path: Vec<&str> = segments
        .iter()
        .zip(&hide)
        .map(|(seg, h)| if *h { "***" } else { seg })
        .collect();
    out.push_str(&path.join("/"));
    if let Some(q) = parts.query {
        out.push('?');
        let pairs: Vec<String> = q
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, v)) if !v.is_empty() => format!("{k}=***"),
                Some(_) => pair.to_string(),
                None if looks_like_key(pair) => "***".to_string(),
                None => pair.to_string(),
            })
            .collect();
        out.push_str(&pairs.join("&"));
    }
    if parts.fragment.is_some_and(|f| !f.is_empty()) {
        out.push_str("#***");
    }
    out
}

/// Every substring of `url` that [`redact_url`] hides, for scrubbing echoed text.
pub(super) fn url_secrets(url: &str) -> Vec<String> {
    let parts = split_url(url);
    let mut secrets = vec![url.to_string()];
    if let Some(info) = parts.userinfo {
        secrets.push(format!("{info}@"));
        for piece in info.split(':') {
            secrets.push(piece.to_string());
            secrets.push(String::from_utf8_lossy(&percent_decode(piece)).into_owned());
        }
    }
    for (seg, hide) in parts.path.split('/').zip(secret_segments(parts.path)) {
        if hide {
            secrets.push(seg.to_string());
        }
    }
    if let Some(q) = parts.query {
        for pair in q.split('&') {
            match pair.split_once('=') {
                Some((_, v)) => secrets.push(v.to_string()),
                None if looks_like_key(pair) => secrets.push(pair.to_string()),
                None => {}
            }
        }
    }
    if let Some(f) = parts.fragment {
        secrets.push(f.to_string());
    }
    // Very short pieces would mangle unrelated text; longest first so overlaps hide fully.
    secrets.retain(|s| s.len() >= 4);
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    secrets.dedup();
    secrets
}

pub(super) fn percent_decode(s: &str) -> Vec<u8> {
    percent_encoding::percent_decode_str(s).collect()
}

pub(super) fn base64(input: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(input)
}
