//! Struct logs written through to their output ([`super::trace_struct_logs_to`]): the same
//! bytes as the spooled result, and an unfinished document with the reason when the run does
//! not end as the head written first says.

use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use crate::replay::{apply, fixture_env, fixture_snapshot, trace, ReplayError, ReplayTx};
use crate::source::fixture::Fixture;
use crate::trace::opcode::{StructLogError, StructLogHead, StructLoggerConfig};
use crate::trace::TracerSpec;

/// A writer whose bytes the test reads afterwards.
#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn fixture() -> Fixture {
    Fixture::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/reverted-nested.json"
    ))
    .unwrap()
}

fn streamed(
    fx: &Fixture,
    head: StructLogHead,
    cfg: &StructLoggerConfig,
) -> (Result<crate::replay::TracedTx, ReplayError>, Vec<u8>) {
    let snap = fixture_snapshot(fx);
    let env = fixture_env(fx, None);
    let tx = ReplayTx::decode(&fx.input).unwrap();
    let sink = Sink::default();
    let mut db = snap.db();
    let r = super::trace_struct_logs_to(
        &mut db,
        &env,
        &tx,
        cfg,
        head,
        Box::new(sink.clone()),
        "the test's sink",
        None,
    );
    let bytes = sink.0.lock().unwrap().clone();
    (r, bytes)
}

/// The head keys a dry run of the fixture ends with; the same as an untraced run's.
fn dry_head(fx: &Fixture) -> StructLogHead {
    let snap = fixture_snapshot(fx);
    let env = fixture_env(fx, None);
    let tx = ReplayTx::decode(&fx.input).unwrap();
    let dry =
        super::trace_struct_logs_dry(&mut snap.db(), &env, &tx, &Default::default(), None).unwrap();
    let crate::replay::TraceResult::StructLog(r) = &dry.result else {
        panic!("not a struct log");
    };
    assert_eq!(r.entries, 0, "a dry run writes nothing");
    let o = apply(&mut fixture_snapshot(fx).db(), &env, &tx).unwrap();
    let head = StructLogHead {
        gas: r.gas,
        failed: r.failed,
        return_value: r.return_value.clone(),
    };
    assert_eq!(
        (head.gas, head.failed, &head.return_value),
        (o.gas_used, !o.success, &o.output)
    );
    head
}

#[test]
fn written_through_the_bytes_are_the_spooled_ones() {
    let fx = fixture();
    for cfg in [
        StructLoggerConfig::default(),
        StructLoggerConfig {
            enable_memory: true,
            enable_return_data: true,
            ..Default::default()
        },
        StructLoggerConfig {
            limit: 2000,
            ..Default::default()
        },
    ] {
        let spooled = {
            let snap = fixture_snapshot(&fx);
            let env = fixture_env(&fx, None);
            let tx = ReplayTx::decode(&fx.input).unwrap();
            let t = trace(
                &mut snap.db(),
                &env,
                &tx,
                &TracerSpec::StructLog(cfg.clone()),
                0,
            )
            .unwrap();
            let crate::replay::TraceResult::StructLog(s) = &t.result else {
                panic!("not a struct log");
            };
            let mut out = Vec::new();
            s.write_to(&mut out).unwrap();
            out
        };
        let (r, bytes) = streamed(&fx, dry_head(&fx), &cfg);
        let t = r.unwrap();
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            String::from_utf8(spooled).unwrap()
        );
        let crate::replay::TraceResult::StructLog(s) = &t.result else {
            panic!("not a struct log");
        };
        assert!(s.streamed);
        // Written once: asking for the bytes again is an error, not a second copy.
        assert!(s.write_to(&mut Vec::new()).is_err());
    }
}

#[test]
fn a_run_that_ends_otherwise_than_its_head_leaves_the_document_unfinished() {
    let fx = fixture();
    let right = dry_head(&fx);
    assert!(right.failed, "the fixture's transaction reverts");
    let (whole, finished) = streamed(&fx, right.clone(), &StructLoggerConfig::default());
    whole.unwrap();
    // The entries alone, as the finished document has them.
    let entries = &finished[right.open().len()..finished.len() - 2];
    assert!(finished.ends_with(b"]}"));
    for wrong in [
        StructLogHead {
            gas: right.gas + 1,
            ..right.clone()
        },
        StructLogHead {
            failed: false,
            ..right.clone()
        },
        StructLogHead {
            return_value: Default::default(),
            ..right.clone()
        },
    ] {
        let (r, bytes) = streamed(&fx, wrong.clone(), &StructLoggerConfig::default());
        let e = r.unwrap_err();
        assert!(
            matches!(&e, ReplayError::StructLog(StructLogError::Diverged { written, ran, .. })
                if *written == wrong && *ran == right),
            "{e}"
        );
        let msg = e.to_string();
        assert!(
            msg.starts_with("the traced run ended otherwise than the run whose head keys were")
                && msg.ends_with(
                    "the struct log written to the test's sink is unfinished and must not be used"
                ),
            "{msg}"
        );
        // The wrong head, every entry, and no closing bracket.
        assert!(bytes.starts_with(&wrong.open()));
        assert_eq!(
            &bytes[wrong.open().len()..],
            entries,
            "the document was closed"
        );
        assert!(serde_json::from_slice::<serde_json::Value>(&bytes).is_err());
    }
}
