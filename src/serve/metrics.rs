//! `/metrics` in Prometheus' text format: requests by method and outcome, a latency histogram,
//! queue depth and work in flight, upstream requests, cache hits.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Latency histogram buckets, seconds.
const BUCKETS: [f64; 12] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];
/// Distinct method labels kept; further methods are counted as `other` (a client cannot
/// grow the table without bound by inventing method names).
const MAX_METHODS: usize = 64;

#[derive(Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(String, &'static str), u64>>,
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_micros: AtomicU64,
    pub upstream_requests: AtomicU64,
    pub cache_hits: AtomicU64,
    pub queued: AtomicU64,
    pub in_flight: AtomicU64,
    pub busy_refusals: AtomicU64,
}

impl Metrics {
    /// Records one finished JSON-RPC call.
    pub fn record(&self, method: &str, outcome: &'static str, seconds: f64) {
        let mut requests = self.requests.lock().unwrap_or_else(|p| p.into_inner());
        let plain = !method.is_empty()
            && method.len() <= 64
            && method
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_');
        let known = requests.keys().any(|(m, _)| m == method);
        let distinct = requests
            .keys()
            .map(|(m, _)| m.as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        let label = if plain && (known || distinct < MAX_METHODS) {
            method.to_string()
        } else {
            "other".to_string()
        };
        *requests.entry((label, outcome)).or_default() += 1;
        drop(requests);
        for (i, le) in BUCKETS.iter().enumerate() {
            if seconds <= *le {
                self.buckets[i].fetch_add(1, Ordering::Relaxed);
            }
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sum_micros
            .fetch_add((seconds * 1e6) as u64, Ordering::Relaxed);
    }

    /// The text exposition format (version 0.0.4).
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# HELP chaintrace_requests_total JSON-RPC calls answered, by method and outcome.\n\
             # TYPE chaintrace_requests_total counter"
        );
        let requests = self.requests.lock().unwrap_or_else(|p| p.into_inner());
        for ((method, outcome), n) in requests.iter() {
            let _ = writeln!(
                out,
                "chaintrace_requests_total{{method=\"{method}\",outcome=\"{outcome}\"}} {n}"
            );
        }
        drop(requests);
        let _ = writeln!(
            out,
            "# HELP chaintrace_request_duration_seconds Time to answer one JSON-RPC call.\n\
             # TYPE chaintrace_request_duration_seconds histogram"
        );
        for (i, le) in BUCKETS.iter().enumerate() {
            let _ = writeln!(
                out,
                "chaintrace_request_duration_seconds_bucket{{le=\"{le}\"}} {}",
                self.buckets[i].load(Ordering::Relaxed)
            );
        }
        let count = self.count.load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "chaintrace_request_duration_seconds_bucket{{le=\"+Inf\"}} {count}\n\
             chaintrace_request_duration_seconds_sum {}\n\
             chaintrace_request_duration_seconds_count {count}",
            self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6
        );
        let gauges = [
            (
                "chaintrace_queue_depth",
                "gauge",
                "Trace requests waiting for a worker.",
                self.queued.load(Ordering::Relaxed),
            ),
            (
                "chaintrace_in_flight",
                "gauge",
                "Trace requests being worked on.",
                self.in_flight.load(Ordering::Relaxed),
            ),
            (
                "chaintrace_busy_refusals_total",
                "counter",
                "Trace requests refused because the queue was full.",
                self.busy_refusals.load(Ordering::Relaxed),
            ),
            (
                "chaintrace_upstream_requests_total",
                "counter",
                "HTTP requests sent to the upstream node.",
                self.upstream_requests.load(Ordering::Relaxed),
            ),
            (
                "chaintrace_cache_hits_total",
                "counter",
                "Trace requests served (partly) from the memory or disk cache.",
                self.cache_hits.load(Ordering::Relaxed),
            ),
        ];
        for (name, kind, help, v) in gauges {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}"
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_and_histogram() {
        let m = Metrics::default();
        m.record("debug_traceTransaction", "ok", 0.02);
        m.record("debug_traceTransaction", "ok", 3.0);
        m.record("eth_chainId", "forwarded", 0.001);
        m.record("bad method\"}", "error", 0.001);
        let text = m.render();
        assert!(text.contains(
            "chaintrace_requests_total{method=\"debug_traceTransaction\",outcome=\"ok\"} 2"
        ));
        assert!(text.contains("chaintrace_requests_total{method=\"other\",outcome=\"error\"} 1"));
        assert!(text.contains("chaintrace_request_duration_seconds_bucket{le=\"0.025\"} 3"));
        assert!(text.contains("chaintrace_request_duration_seconds_bucket{le=\"+Inf\"} 4"));
        assert!(text.contains("chaintrace_request_duration_seconds_count 4"));
    }

    #[test]
    fn a_panic_holding_the_table_fails_no_later_call() {
        let m = Metrics::default();
        std::thread::scope(|s| {
            let crashed = s.spawn(|| {
                let _table = m.requests.lock();
                panic!("a call crashed");
            });
            assert!(crashed.join().is_err());
        });
        assert!(m.requests.is_poisoned());
        m.record("eth_chainId", "forwarded", 0.001);
        assert!(m
            .render()
            .contains("chaintrace_requests_total{method=\"eth_chainId\",outcome=\"forwarded\"} 1"));
    }
}
