//! The JavaScript tracers geth ships by name (eth/tracers/js/internal/tracers, registered as
//! the camel-cased file names): `bigramTracer`, `evmdisTracer`, `opcountTracer`,
//! `trigramTracer`, `unigramTracer`, `callTracerLegacy`, `prestateTracerLegacy`,
//! `4byteTracerLegacy` and `noopTracerLegacy`.
//!
//! The scripts in `tracers/geth/` are chaintrace's own, written to give the results geth's
//! scripts give on the same hooks (geth's are LGPL and are not copied into this project); each
//! file says which geth file it stands for and how its result is shaped.

/// The script geth runs for `name`, if geth ships one by that name.
pub fn source(name: &str) -> Option<&'static str> {
    Some(match name {
        "bigramTracer" => include_str!("../../tracers/geth/bigram_tracer.js"),
        "evmdisTracer" => include_str!("../../tracers/geth/evmdis_tracer.js"),
        "opcountTracer" => include_str!("../../tracers/geth/opcount_tracer.js"),
        "trigramTracer" => include_str!("../../tracers/geth/trigram_tracer.js"),
        "unigramTracer" => include_str!("../../tracers/geth/unigram_tracer.js"),
        "callTracerLegacy" => include_str!("../../tracers/geth/call_tracer_legacy.js"),
        "prestateTracerLegacy" => include_str!("../../tracers/geth/prestate_tracer_legacy.js"),
        "4byteTracerLegacy" => include_str!("../../tracers/geth/4byte_tracer_legacy.js"),
        "noopTracerLegacy" => include_str!("../../tracers/geth/noop_tracer_legacy.js"),
        _ => return None,
    })
}

/// The names, for help texts and errors.
pub const NAMES: &[&str] = &[
    "bigramTracer",
    "evmdisTracer",
    "opcountTracer",
    "trigramTracer",
    "unigramTracer",
    "callTracerLegacy",
    "prestateTracerLegacy",
    "4byteTracerLegacy",
    "noopTracerLegacy",
];
