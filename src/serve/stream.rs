//! A single call's large result sent as it is written: the worker writes it into a bounded
//! channel of chunks, the HTTP response body reads them, so the server holds the trace once —
//! never the trace and its whole text (issue 43: a 151 MB callTracer answer took the server to
//! 256 MB when made into one text first).
//!
//! The result's length is measured before the first byte is sent (`methods::reply`), so the
//! response carries an exact `Content-Length`, `--max-response` is decided before anything is
//! sent, and a client can tell a cut answer from a whole one.

use std::io::{self, BufWriter, Write};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Bytes;
use http_body::{Frame, SizeHint};
use serde_json::json;
use tokio::sync::mpsc;

use super::log_line;
use super::methods::Streamed;

/// Chunks the worker writes, up to `CHUNK` bytes each, at most `DEPTH` of them waiting.
const CHUNK: usize = 64 << 10;
const DEPTH: usize = 8;

/// The body's side: the result's chunks as they are written (an error where writing failed).
pub struct Chunks(mpsc::Receiver<io::Result<Bytes>>);

/// The worker's side: writes a result into the chunks, waiting at most `stall` for the client
/// to take each one.
pub struct Writer {
    tx: mpsc::Sender<io::Result<Bytes>>,
    stall: Duration,
    runtime: tokio::runtime::Handle,
}

/// A channel for one result; `stall` bounds how long the worker waits for a client that does
/// not read (it then stops, and the connection is closed with the answer cut).
pub fn channel(stall: Duration) -> (Chunks, Writer) {
    let (tx, rx) = mpsc::channel(DEPTH);
    let writer = Writer {
        tx,
        stall,
        runtime: tokio::runtime::Handle::current(),
    };
    (Chunks(rx), writer)
}

impl Writer {
    /// Writes `result` (on a blocking thread: a worker). A failure is passed to the body, which
    /// ends the response short of its `Content-Length`; it is logged.
    pub fn send(self, result: Streamed) {
        let tx = self.tx.clone();
        let mut out = BufWriter::with_capacity(CHUNK, self);
        let written = result.write_to(&mut out).and_then(|()| out.flush());
        // What is left in the buffer after a failure is dropped, not flushed again (a client
        // that stopped reading would be waited for a second time).
        drop(out.into_parts());
        if let Err(e) = written {
            log_line(&json!({"event": "answerCut", "error": e.to_string()}));
            let _ = tx.try_send(Err(e));
        }
    }
}

impl Write for Writer {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let chunk = Bytes::copy_from_slice(data);
        let sent = self
            .runtime
            .block_on(tokio::time::timeout(self.stall, self.tx.send(Ok(chunk))));
        match sent {
            Ok(Ok(())) => Ok(data.len()),
            Ok(Err(_)) => Err(io::Error::other("the client is gone")),
            Err(_) => Err(io::Error::other(format!(
                "the client read nothing for {:?}",
                self.stall
            ))),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A response body: `head`, exactly `len` bytes from the chunks, then `tail`.
pub struct Streaming {
    head: Option<Bytes>,
    left: usize,
    chunks: Chunks,
    tail: Option<Bytes>,
}

impl Streaming {
    pub fn new(head: String, len: usize, chunks: Chunks, tail: &'static str) -> Streaming {
        Streaming {
            head: Some(Bytes::from(head)),
            left: len,
            chunks,
            tail: Some(Bytes::from_static(tail.as_bytes())),
        }
    }

    fn remaining(&self) -> u64 {
        let head = self.head.as_ref().map_or(0, Bytes::len);
        let tail = self.tail.as_ref().map_or(0, Bytes::len);
        (head + self.left + tail) as u64
    }
}

impl http_body::Body for Streaming {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let this = self.get_mut();
        if let Some(head) = this.head.take() {
            return Poll::Ready(Some(Ok(Frame::data(head))));
        }
        if this.left > 0 {
            return match this.chunks.0.poll_recv(cx) {
                Poll::Ready(Some(Ok(chunk))) if chunk.len() <= this.left => {
                    this.left -= chunk.len();
                    Poll::Ready(Some(Ok(Frame::data(chunk))))
                }
                Poll::Ready(Some(Ok(_))) => Poll::Ready(Some(Err(io::Error::other(
                    "the result is longer than it measured",
                )))),
                Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e))),
                Poll::Ready(None) => Poll::Ready(Some(Err(io::Error::other(
                    "the result ended short of its length",
                )))),
                Poll::Pending => Poll::Pending,
            };
        }
        Poll::Ready(this.tail.take().map(|t| Ok(Frame::data(t))))
    }

    fn is_end_stream(&self) -> bool {
        self.remaining() == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining())
    }
}
