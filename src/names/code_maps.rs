//! A code's source map: decoded once per code hash from the artifact whose code it is (a
//! loaded artifact, a build info read when first needed, or one Sourcify gave), and rebuilt by
//! solc from the artifact's metadata when it does not fit the code; the jump markers a gas
//! profiler follows internal functions by, from it.

use std::collections::HashMap;
use std::sync::Arc;

use alloy_primitives::keccak256;

use super::artifacts::{self, Artifact};
use super::sources::{self, CodeMap};
use super::SourceIndex;
use crate::trace::gas_context::JumpMarks;

impl SourceIndex {
    /// The decoded source map of `code` (a CREATE's init code when `creation`), decoded once
    /// per code hash.
    pub(super) fn code_map(&self, code: &[u8], creation: bool) -> Option<Arc<CodeMap>> {
        if code.is_empty() {
            return None;
        }
        let key = (keccak256(code), creation);
        if let Some(hit) = self.maps.lock().ok()?.get(&key) {
            return hit.clone();
        }
        let lazy = || {
            self.from_build_infos.get_or_init(|| {
                self.build_infos
                    .iter()
                    .filter_map(|p| artifacts::load_build_info(p).ok())
                    .flatten()
                    .collect()
            })
        };
        let map_of = |a: &Artifact| -> Option<Arc<CodeMap>> {
            // Matched first: a kept artifact's sources are read only for the code it is.
            let fits = match creation {
                true => a.creation_matches(code),
                false => a.matches(code),
            };
            let s = fits.then(|| a.sources()).flatten()?;
            let map = match creation {
                true => &s.creation.as_ref()?.2,
                false => s.runtime_map.as_ref()?,
            };
            let cm = CodeMap::new(&a.name, code, map, s.unit.clone())
                .with_args_from_stack(legacy_codegen(s))
                .for_creation(creation);
            match cm.misfit(code) {
                None => Some(Arc::new(cm)),
                Some(m) => self.refit(a, s, code, creation, m),
            }
        };
        // Two contracts whose creation code is the same, byte for byte (a constructor that
        // always reverts deploys no code, so no metadata tells `C is D` from D when D's
        // constructor always reverts): nothing in the code says which ran, and the one declared
        // last names it (AST ids follow the sources' order and each file's declarations), as
        // EDR's identifier keeps the last of identical bytecodes.
        let last_declared = || -> Option<Arc<CodeMap>> {
            fn creation_code(a: &Artifact) -> Option<&Vec<u8>> {
                Some(&a.sources()?.creation.as_ref()?.0)
            }
            if !creation {
                return None;
            }
            let tied: Vec<&Artifact> = self
                .artifacts
                .iter()
                .chain(lazy().iter())
                .filter(|a| a.creation_matches(code))
                .collect();
            let first = creation_code(tied.first()?);
            if tied.len() < 2 || tied.iter().any(|a| creation_code(a) != first) {
                return None;
            }
            let declared = |a: &Artifact| a.sources()?.unit.declaration_id(&a.name);
            let ids: Option<Vec<i64>> = tied.iter().map(|a| declared(a)).collect();
            let ids = ids?;
            let last = (0..tied.len()).max_by_key(|&i| ids[i])?;
            map_of(tied[last])
        };
        let found = last_declared()
            .or_else(|| self.artifacts.iter().chain(lazy().iter()).find_map(map_of))
            .or_else(|| self.fetched.lock().ok()?.iter().find_map(|a| map_of(a)));
        if let Ok(mut m) = self.maps.lock() {
            m.insert(key, found.clone());
        }
        found
    }

    /// A map that does not fit `code`, rebuilt by solc from the artifact's metadata; `None`
    /// (no source locations in this code, and a note saying why) when it cannot be.
    fn refit(
        &self,
        a: &Artifact,
        s: &sources::ArtifactSources,
        code: &[u8],
        creation: bool,
        m: sources::Misfit,
    ) -> Option<Arc<CodeMap>> {
        let what = format!(
            "the {}source map of {} does not fit its code ({} of {} function jumps off a JUMP, \
             {} entries for {} instructions): solc 0.6/0.7 reports a map optimized again for a \
             contract another one in the same build creates with `new`",
            if creation { "creation " } else { "" },
            a.name,
            m.marks_off,
            m.marks,
            m.entries,
            m.instructions,
        );
        let fits = |object: &str, map: &str, is_creation: bool| {
            // (File indices are not compared: only whether the jumps sit on JUMPs.)
            is_creation == creation
                && artifacts::object_is(object, code, creation)
                && sources::misfit(code, &sources::decode_source_map(map)).is_none()
        };
        let result = match s.metadata.as_deref().and_then(sources::Metadata::value) {
            Some(meta) => sources::rebuild::rebuild(meta, &s.unit, self.solc.as_deref(), &fits),
            None => Err(sources::rebuild::NotRebuilt(
                "the artifact carries no solc metadata to rebuild it from".into(),
            )),
        };
        let (note, map) = match result {
            Ok(r) => {
                let map = if creation {
                    r.creation_map
                } else {
                    r.runtime_map
                };
                // The rebuild numbered its sources itself: its file indices become the
                // artifact's compilation's, by path.
                let ids: HashMap<i32, i32> = r
                    .source_ids
                    .iter()
                    .filter_map(|(id, path)| {
                        let mine = s.unit.files.iter().find(|(_, f)| &f.path == path)?.0;
                        Some((*id, *mine))
                    })
                    .collect();
                let entries = map.map(|m| {
                    let mut e = sources::decode_source_map(&m);
                    for x in &mut e {
                        x.file = ids.get(&x.file).copied().unwrap_or(-1);
                    }
                    e
                });
                (
                    format!(
                        "{what}; rebuilt with {} in {:.1} s",
                        r.solc.display(),
                        r.took.as_secs_f64()
                    ),
                    entries,
                )
            }
            Err(why) => (
                format!(
                    "no source locations in {}: {what}; not rebuilt: {}",
                    a.name, why.0
                ),
                None,
            ),
        };
        self.note(note);
        Some(Arc::new(
            CodeMap::from_entries(&a.name, code, map?, s.unit.clone())
                .with_args_from_stack(legacy_codegen(s))
                .for_creation(creation),
        ))
    }
}

/// Whether the artifact's solc metadata says legacy code generation (no viaIR): only then are
/// internal functions' arguments read from the stack.
fn legacy_codegen(s: &sources::ArtifactSources) -> bool {
    s.metadata
        .as_deref()
        .and_then(sources::Metadata::value)
        .is_some_and(|m| {
            m.pointer("/settings/viaIR")
                .and_then(serde_json::Value::as_bool)
                != Some(true)
        })
}

impl JumpMarks for SourceIndex {
    fn marks(&self, code: &[u8], creation: bool) -> Option<Arc<[u8]>> {
        Some(self.code_map(code, creation)?.jump_marks(code))
    }
}
