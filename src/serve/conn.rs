//! The HTTP side of `serve`: the accept loop driving hyper's HTTP/1 connections (header read
//! timeout, half-close, graceful shutdown on the first signal), and a request body read with a
//! size limit and a timeout.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, HttpBody};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use serde_json::json;

use super::{log_line, Shared};

pub(super) async fn serve_connections(
    listener: tokio::net::TcpListener,
    app: Router,
    shared: &Arc<Shared>,
) {
    use hyper::server::conn::http1;
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::server::graceful::GracefulShutdown;
    use hyper_util::service::TowerToHyperService;

    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(shared.cfg.read_timeout)
        .half_close(true);
    let graceful = GracefulShutdown::new();
    let mut signal = std::pin::pin!(shutdown_signal(shared.clone()));
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors and the like: nothing to answer; try again soon.
                    log_line(&json!({"event": "acceptFailed", "error": e.to_string()}));
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = &mut signal => break,
        };
        let _ = stream.set_nodelay(true);
        let conn =
            http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(app.clone()));
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            // A connection's end (a timeout, a client gone) concerns that client only.
            let _ = conn.await;
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// Resolves on the first SIGINT/SIGTERM; a second one exits the process at once.
async fn shutdown_signal(shared: Arc<Shared>) {
    wait_signal().await;
    log_line(&json!({"event": "shutdown", "inFlight":
        shared.metrics.in_flight.load(Ordering::Relaxed),
        "queued": shared.metrics.queued.load(Ordering::Relaxed)}));
    tokio::spawn(async {
        wait_signal().await;
        log_line(&json!({"event": "killed"}));
        std::process::exit(130);
    });
}

async fn wait_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let term = signal(SignalKind::terminate());
    let int = signal(SignalKind::interrupt());
    match (term, int) {
        (Ok(mut term), Ok(mut int)) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        }
        _ => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

fn plain(status: StatusCode, text: &'static str) -> Response {
    (status, text).into_response()
}

/// Reads a request body of at most `--max-body` bytes within `--read-timeout`.
pub(super) async fn read_body(
    shared: &Shared,
    headers: &HeaderMap,
    mut body: Body,
) -> Result<Vec<u8>, Response> {
    let max = shared.cfg.max_body;
    let too_large = || plain(StatusCode::PAYLOAD_TOO_LARGE, "request body too large\n");
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return Err(too_large());
    }
    let read = async {
        let mut buf = Vec::with_capacity(declared.unwrap_or(0) as usize);
        while let Some(frame) =
            std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await
        {
            let Ok(frame) = frame else {
                return Err(plain(StatusCode::BAD_REQUEST, "request body incomplete\n"));
            };
            if let Ok(data) = frame.into_data() {
                if buf.len() + data.len() > max {
                    return Err(too_large());
                }
                buf.extend_from_slice(&data);
            }
        }
        Ok(buf)
    };
    match tokio::time::timeout(shared.cfg.read_timeout, read).await {
        Ok(read) => read,
        Err(_) => Err(plain(
            StatusCode::REQUEST_TIMEOUT,
            "request body not received within --read-timeout\n",
        )),
    }
}
