//! The wallets `wallet create` made, remembered so that `wallet rpc` knows a wallet's address
//! without asking the provider: one file per wallet, `<dir>/wallets/<id>.json`, holding
//! `{"api", "id", "address"}` (the provider's address as `rpc::redact_url` shows it). An entry
//! counts only for the provider it was made at. Written whole to a temporary and renamed.

use std::path::{Path, PathBuf};

use alloy_primitives::Address;
use serde_json::{json, Value};

use super::check_wallet_id;
use crate::rpc::redact_url;

fn file(dir: &Path, id: &str) -> Option<PathBuf> {
    check_wallet_id(id).ok()?;
    Some(dir.join("wallets").join(format!("{id}.json")))
}

/// Remembers that wallet `id` at provider `api` has `address`.
pub fn record(dir: &Path, api: &str, id: &str, address: Address) -> std::io::Result<()> {
    let path = file(dir, id)
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a wallet id"))?;
    let parent = path.parent().unwrap_or(dir);
    std::fs::create_dir_all(parent)?;
    let entry = json!({"api": redact_url(api), "id": id, "address": format!("{address:?}")});
    let tmp = parent.join(format!(".{id}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, entry.to_string())?;
    std::fs::rename(&tmp, &path)
}

/// The address remembered for wallet `id` at provider `api`, if any.
pub fn recorded(dir: &Path, api: &str, id: &str) -> Option<Address> {
    let text = std::fs::read_to_string(file(dir, id)?).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    if v["api"].as_str()? != redact_url(api) || v["id"].as_str()? != id {
        return None;
    }
    v["address"].as_str()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_counts_for_its_provider_and_id_only() {
        let dir = std::env::temp_dir().join(format!("chaintrace-known-{}", std::process::id()));
        let a: Address = "0x1111111111111111111111111111111111111111"
            .parse()
            .unwrap();
        record(&dir, "https://api.example", "w1", a).unwrap();
        assert_eq!(recorded(&dir, "https://api.example", "w1"), Some(a));
        assert_eq!(recorded(&dir, "https://other.example", "w1"), None);
        assert_eq!(recorded(&dir, "https://api.example", "w2"), None);
        assert!(record(&dir, "https://api.example", "../x", a).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
