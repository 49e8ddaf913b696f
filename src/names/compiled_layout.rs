//! Storage layouts for a build that has none (Foundry's default artifacts): compiled from an
//! artifact's own solc metadata by a solc of its version ([`sources::rebuild::rebuild_layout`]),
//! the ERC-7201 namespaces of its bases added from the same compilation's ASTs, once per run,
//! and kept between runs in the cache directory's `layouts/` by the metadata's keccak256 (it
//! fixes the compiler, the settings and every source's hash).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::artifacts::Artifact;
use super::ast_layout::AstStorage;
use super::{sources, Names};

/// A layout an earlier run compiled and kept ([`keep_layout`]); `None` when there is none or it
/// is not one (a torn or foreign file is compiled again).
fn read_kept_layout(path: &Path) -> Option<RebuiltLayout> {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    let part = |k: &str| v.get(k).filter(|l| l.is_object()).cloned();
    let storage = part("storageLayout");
    storage.as_ref()?;
    Some(RebuiltLayout {
        storage,
        transient: part("transientStorageLayout"),
        note: String::new(),
    })
}

/// Keeps a compiled layout at `path`, whole or not at all ([`crate::source::cache::write_atomic`]);
/// a failure only means the next run compiles again, and is said (the text to add to the note).
fn keep_layout(
    path: &Path,
    storage: Option<&serde_json::Value>,
    transient: Option<&serde_json::Value>,
) -> Option<String> {
    let mut v = serde_json::Map::new();
    if let Some(s) = storage {
        v.insert("storageLayout".into(), s.clone());
    }
    if let Some(t) = transient {
        v.insert("transientStorageLayout".into(), t.clone());
    }
    let body = serde_json::Value::Object(v).to_string();
    crate::source::cache::write_atomic(path, body.as_bytes())
        .err()
        .map(|e| format!("; not kept ({}: {e})", path.display()))
}

/// An artifact's storage layouts compiled from its metadata ([`Names::rebuilt_layout`]), or why
/// not; with the note that says which.
#[derive(Debug)]
pub struct RebuiltLayout {
    pub storage: Option<serde_json::Value>,
    pub transient: Option<serde_json::Value>,
    pub note: String,
}

impl Names {
    /// The storage layouts of `a`, whose build has none, compiled from its solc metadata by a
    /// solc of its version (the compiler search of a rebuilt map); `None` when it carries no
    /// metadata and sources to compile from. Compiled once per run.
    pub fn rebuilt_layout(&self, a: &Artifact) -> Option<Arc<RebuiltLayout>> {
        let s = a.sources()?;
        let metadata = s.metadata.as_deref()?;
        let meta = metadata.value()?;
        let key = Arc::as_ptr(s) as usize;
        let mut cache = self.index.layouts.lock().ok()?;
        let got = cache.entry(key).or_insert_with(|| {
            // The metadata fixes the layout (compiler version, settings, each source's hash):
            // one compiled before is kept on disk by its digest.
            let kept = self
                .index
                .layout_cache
                .as_ref()
                .map(|d| d.join(format!("{:x}.json", metadata.digest())));
            if let Some(path) = &kept {
                if let Some(r) = read_kept_layout(path) {
                    return Arc::new(RebuiltLayout {
                        note: format!(
                            "the build has no storageLayout for {}: compiled from its metadata \
                             by an earlier run (kept in {})",
                            a.name,
                            path.display()
                        ),
                        ..r
                    });
                }
            }
            Arc::new(
                match sources::rebuild::rebuild_layout(meta, &s.unit, self.index.solc.as_deref()) {
                    Ok(r) => {
                        // The namespaces of its bases, from the ASTs of the same compilation:
                        // kept with the layout.
                        let files: Vec<(&str, &AstStorage)> = r
                            .asts
                            .iter()
                            .map(|(p, d)| (p.as_str(), &d.storage))
                            .collect();
                        let (storage, why) =
                            super::namespaces::with_namespaces(r.storage.as_ref(), &a.name, &files);
                        let not_kept = kept.as_deref().and_then(|path| {
                            keep_layout(path, storage.as_ref(), r.transient.as_ref())
                        });
                        let why: String = why
                            .iter()
                            .map(|w| format!("; {w}: its slots are shown raw"))
                            .collect();
                        RebuiltLayout {
                            note: format!(
                                "the build has no storageLayout for {}: compiled from its \
                                 metadata with {} in {:.1} s{}{why}",
                                a.name,
                                r.solc.display(),
                                r.took.as_secs_f64(),
                                not_kept.unwrap_or_default()
                            ),
                            storage,
                            transient: r.transient,
                        }
                    }
                    Err(why) => RebuiltLayout {
                        note: format!(
                            "the build has no storageLayout for {}, and none was compiled: {}",
                            a.name, why.0
                        ),
                        storage: None,
                        transient: None,
                    },
                },
            )
        });
        Some(got.clone())
    }

    /// Where layouts compiled from metadata are kept between runs (the cache directory's
    /// `layouts/`); `None` keeps none.
    pub fn with_layout_cache(mut self, dir: Option<PathBuf>) -> Names {
        if let Some(index) = Arc::get_mut(&mut self.index) {
            index.layout_cache = dir;
        }
        self
    }
}
