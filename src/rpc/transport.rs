//! The project's one HTTP stack: reqwest (rustls, ring) on tokio.
//!
//! Every outgoing HTTP request of chaintrace goes through here: the JSON-RPC client
//! ([`super::RpcClient`]), the operator GET client (`node/http.rs`), explorer ABI lookups and the
//! test proxy. `chaintrace serve` runs its axum server on the shared runtime ([`runtime`]).
//!
//! The library's callers are synchronous (a replay waits on every answer anyway), so
//! [`block_on`] drives one request from a plain thread: the CLI's main thread, a `block A..B`
//! worker, or a `serve` worker started with `spawn_blocking`. It must not be called from an
//! async task (tokio refuses to block a thread that drives other tasks).
//!
//! Each such thread has its own single-threaded runtime and its own clients ([`client`],
//! [`credentialed_client`]): a request is written, and its answer read, by the thread that waits
//! for it. On the shared runtime every request cost two hand-overs between threads (the
//! connection's task woken on a runtime worker, then the waiting thread woken by it): in a
//! `serve` walk, task switches and futex wake-ups were a fifth of its samples, and its CPU per
//! block fell from 1.05 to 0.90 ms without them. A client therefore stays on its thread: the
//! task of one of its connections runs only while that thread is inside [`block_on`].
//!
//! What callers need from a transport failure is narrower than reqwest's error: whether it is
//! worth a retry, whether the node was never reached (refused connection), and a message that
//! says what happened in the user's words. [`Failure`] is that.

use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// User agent sent with every request.
pub const USER_AGENT: &str = concat!("chaintrace/", env!("CARGO_PKG_VERSION"));

/// Why an HTTP exchange produced no complete response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The request or the body did not finish within its time budget.
    Timeout,
    /// The TCP connection was refused: nothing listens there.
    Refused,
    /// The peer closed the connection; `in_body`: after the status line arrived.
    Closed { in_body: bool },
    /// The host name did not resolve.
    Dns,
    /// The connection could not be set up (TLS handshake, unreachable network, ...).
    Connect(String),
    /// The response body exceeds the caller's limit.
    TooLarge,
    /// The response is not HTTP, or its body is not UTF-8.
    Protocol(String),
    /// The URL cannot be requested.
    BadUrl,
}

impl Failure {
    /// Worth another attempt: the next one may well succeed.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Failure::Timeout | Failure::Refused | Failure::Closed { .. } | Failure::Connect(_)
        )
    }

    /// A reason in the user's words (no URL: callers add the redacted one).
    pub fn reason(&self) -> String {
        match self {
            Failure::Timeout => "timed out".into(),
            Failure::Refused => "connection refused".into(),
            Failure::Closed { in_body: true } => {
                "the connection dropped before the whole response arrived".into()
            }
            Failure::Closed { in_body: false } => "the node closed the connection".into(),
            Failure::Dns => "host not found (DNS lookup failed)".into(),
            Failure::Connect(why) => format!("the connection failed ({why})"),
            Failure::TooLarge => "the response is too large".into(),
            Failure::Protocol(why) => format!("malformed HTTP response: {why}"),
            Failure::BadUrl => "it is not a valid URL".into(),
        }
    }
}

/// The shared runtime: I/O and timers for every HTTP request, and `serve`'s server.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        let workers = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
            .clamp(2, 16);
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .thread_name("chaintrace-io")
            .enable_all()
            .build()
            // Without threads or an epoll instance nothing chaintrace does can work.
            .expect("cannot start the I/O runtime (out of threads or file descriptors)")
    })
}

/// A thread's own runtime, shut down without waiting when the thread ends: a blocking task it
/// started (reqwest's name lookup runs on one) must not hold the thread's end, or the
/// process's exit, until it returns.
struct Local(Option<tokio::runtime::Runtime>);

impl Drop for Local {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

thread_local! {
    /// This thread's runtime for [`block_on`] (`None`: it could not be built, and the shared
    /// one is used).
    static LOCAL: std::cell::OnceCell<Local> = const { std::cell::OnceCell::new() };
    static CLIENT: std::cell::OnceCell<reqwest::Client> = const { std::cell::OnceCell::new() };
    static CREDENTIALED: std::cell::OnceCell<reqwest::Client> =
        const { std::cell::OnceCell::new() };
}

/// Lets this thread's runtime take in what happened on its connections while the thread was
/// away (nothing polls a current-thread runtime between two [`block_on`]s): a connection the
/// server closed meanwhile (an idle keep-alive timeout) is then seen closed and left out of the
/// pool, instead of being picked for the next request, which would fail as "closed" once
/// written. The first yield makes the scheduler pull the pending I/O events, the second runs
/// the connection tasks they woke (tokio's current-thread `block_on`: the future is polled,
/// then the queued tasks run, and an idle queue with a deferred yield parks for no time,
/// which reads the I/O driver). `serve`'s test of a client cut off for idling holds it to
/// this.
async fn caught_up() {
    tokio::task::yield_now().await;
    tokio::task::yield_now().await;
}

/// Runs `f` to completion from a synchronous thread, on that thread's own runtime (see the
/// module docs). Were that runtime impossible to build (no file descriptors left), on the
/// shared one, whose workers then run the connections it opens.
pub fn block_on<F: Future>(f: F) -> F::Output {
    LOCAL.with(|local| {
        let rt = local.get_or_init(|| {
            Local(
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .ok(),
            )
        });
        match &rt.0 {
            Some(rt) => rt.block_on(async {
                caught_up().await;
                f.await
            }),
            None => runtime().handle().block_on(f),
        }
    })
}

/// The HTTP client every chaintrace request uses: our user agent, error statuses returned as
/// answers (a JSON-RPC error often comes with a 4xx/5xx), per-request timeouts set by callers.
/// One client (one connection pool) per thread, for that thread's [`block_on`]; clones share it
/// and must stay on the thread (see the module docs).
pub fn client() -> reqwest::Client {
    CLIENT.with(|c| {
        c.get_or_init(|| {
            // reqwest is built without a default crypto provider (the aws-lc one needs a C
            // toolchain); ring is the one rustls already uses here.
            reqwest::Client::builder()
                .tls_backend_preconfigured(tls_config())
                .user_agent(USER_AGENT)
                .connect_timeout(Duration::from_secs(30))
                .pool_idle_timeout(Duration::from_secs(30))
                .build()
                .unwrap_or_else(|_| reqwest::Client::new())
        })
        .clone()
    })
}

/// The TLS side of both clients: rustls with ring (reqwest is built without a default crypto
/// provider: the aws-lc one needs a C toolchain), certificates checked by the platform's
/// verifier as reqwest's own default does, but that verifier (which reads every root
/// certificate the system has, about 4 ms and a fifth of a `tx` run here) made on the first TLS
/// handshake instead of when the client is built: most runs talk to a node over plain http.
/// One configuration for the process (every thread's clients share its verifier).
fn tls_config() -> rustls::ClientConfig {
    static CONFIG: OnceLock<rustls::ClientConfig> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let _ = rustls::crypto::ring::default_provider().install_default();
            let mut config = rustls::ClientConfig::builder_with_provider(provider.clone())
                .with_safe_default_protocol_versions()
                .expect("ring supports TLS 1.2 and 1.3")
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(LazyVerifier {
                    provider,
                    inner: OnceLock::new(),
                }))
                .with_no_client_auth();
            config.alpn_protocols = vec![b"http/1.1".to_vec()];
            config
        })
        .clone()
}

/// The platform's certificate verifier, made on first use.
#[derive(Debug)]
struct LazyVerifier {
    provider: Arc<rustls::crypto::CryptoProvider>,
    inner: OnceLock<Result<rustls_platform_verifier::Verifier, rustls::Error>>,
}

impl LazyVerifier {
    fn get(&self) -> Result<&rustls_platform_verifier::Verifier, rustls::Error> {
        self.inner
            .get_or_init(|| rustls_platform_verifier::Verifier::new(self.provider.clone()))
            .as_ref()
            .map_err(Clone::clone)
    }
}

impl rustls::client::danger::ServerCertVerifier for LazyVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &rustls::pki_types::CertificateDer<'_>,
        intermediates: &[rustls::pki_types::CertificateDer<'_>],
        server_name: &rustls::pki_types::ServerName<'_>,
        ocsp_response: &[u8],
        now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        self.get()?
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.get()?.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.get()?.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        match self.get() {
            Ok(v) => v.supported_verify_schemes(),
            Err(_) => self
                .provider
                .signature_verification_algorithms
                .supported_schemes(),
        }
    }
}

/// The client for requests that carry a wallet provider's Basic credentials: the same stack as
/// [`client`], but
/// - no redirect is followed: a 3xx comes back as the answer (with its `Location`), so a
///   signed body never goes to a host the user did not name, nor off loopback in clear text;
/// - no proxy from `HTTP_PROXY`/`http_proxy` or `ALL_PROXY`/`all_proxy`, which would see the
///   credentials of a plain http request (or, for `ALL_PROXY`, could be a clear-text proxy
///   for any request). Only `HTTPS_PROXY`/`https_proxy` is used, for https addresses alone
///   (and not for hosts `NO_PROXY` names): reqwest tunnels those with CONNECT, so the proxy
///   sees the host name, never a header.
pub fn credentialed_client() -> reqwest::Client {
    CREDENTIALED.with(|c| {
        c.get_or_init(|| {
            let mut builder = reqwest::Client::builder()
                .tls_backend_preconfigured(tls_config())
                .user_agent(USER_AGENT)
                .connect_timeout(Duration::from_secs(30))
                .pool_idle_timeout(Duration::from_secs(30))
                .redirect(reqwest::redirect::Policy::none())
                .no_proxy();
            let https_proxy = ["HTTPS_PROXY", "https_proxy"]
                .iter()
                .find_map(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()));
            if let Some(p) = https_proxy.and_then(|p| reqwest::Proxy::https(p.trim()).ok()) {
                builder = builder.proxy(p.no_proxy(reqwest::NoProxy::from_env()));
            }
            builder.build().unwrap_or_else(|_| {
                reqwest::Client::builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .no_proxy()
                    .build()
                    .expect("a client without proxies builds")
            })
        })
        .clone()
    })
}

/// An answer as [`send_keeping_location`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    /// The `Location` header, if any (what a 3xx names).
    pub location: Option<String>,
    pub text: String,
}

/// One request: send `req` (its timeout set by the caller), read the body up to `limit` bytes
/// as UTF-8. The status is returned whatever it is.
pub async fn send(req: reqwest::RequestBuilder, limit: u64) -> Result<(u16, String), Failure> {
    send_keeping_location(req, limit)
        .await
        .map(|a| (a.status, a.text))
}

/// [`send`], keeping the answer's `Location` header.
pub async fn send_keeping_location(
    req: reqwest::RequestBuilder,
    limit: u64,
) -> Result<Answer, Failure> {
    let mut resp = req.send().await.map_err(|e| classify(&e, false))?;
    let status = resp.status().as_u16();
    let location = resp
        .headers()
        .get(reqwest::header::LOCATION)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    if resp.content_length().is_some_and(|n| n > limit) {
        return Err(Failure::TooLarge);
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| classify(&e, true))? {
        if body.len() as u64 + chunk.len() as u64 > limit {
            return Err(Failure::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    String::from_utf8(body)
        .map(|text| Answer {
            status,
            location,
            text,
        })
        .map_err(|_| Failure::Protocol("the body is not UTF-8 text".into()))
}

/// POSTs `body` as JSON to `url` with `headers`, one attempt bounded by `timeout`.
pub fn post_json(
    url: &str,
    headers: &[(&str, &str)],
    body: String,
    timeout: Duration,
    limit: u64,
) -> Result<(u16, String), Failure> {
    let mut req = client()
        .post(url)
        .timeout(timeout)
        .header("content-type", "application/json")
        .header("accept", "application/json");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    block_on(send(req.body(body), limit))
}

/// GETs `url` (JSON accepted), one attempt bounded by `timeout`.
pub fn get(url: &str, timeout: Duration, limit: u64) -> Result<(u16, String), Failure> {
    let req = client()
        .get(url)
        .timeout(timeout)
        .header("accept", "application/json");
    block_on(send(req, limit))
}

/// True when `url` parses as an absolute http(s) URL with a host.
pub fn valid_url(url: &str) -> bool {
    reqwest::Url::parse(url)
        .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some())
}

/// Sorts a reqwest error into a [`Failure`] by walking its sources: reqwest's own flags say
/// timeout/connect/body, the I/O error underneath says refused/reset, hyper's says closed.
fn classify(e: &reqwest::Error, in_body: bool) -> Failure {
    use std::io::ErrorKind as K;
    if e.is_timeout() {
        return Failure::Timeout;
    }
    if e.is_builder() {
        return Failure::BadUrl;
    }
    let mut io_kind = None;
    let mut texts = Vec::new();
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            io_kind.get_or_insert(io.kind());
        }
        if let Some(h) = s.downcast_ref::<hyper::Error>() {
            if h.is_timeout() {
                return Failure::Timeout;
            }
            if h.is_incomplete_message() || h.is_canceled() {
                io_kind.get_or_insert(K::UnexpectedEof);
            }
            if h.is_parse() {
                return Failure::Protocol(h.to_string());
            }
        }
        texts.push(s.to_string());
        source = s.source();
    }
    let text = texts.join(": ");
    match io_kind {
        Some(K::TimedOut | K::WouldBlock) => return Failure::Timeout,
        Some(K::ConnectionRefused) => return Failure::Refused,
        Some(
            K::ConnectionReset
            | K::ConnectionAborted
            | K::BrokenPipe
            | K::UnexpectedEof
            | K::NotConnected,
        ) => {
            return Failure::Closed {
                in_body: in_body || e.is_body() || e.is_decode(),
            }
        }
        _ => {}
    }
    if text.contains("dns error") || text.contains("failed to lookup address") {
        return Failure::Dns;
    }
    if e.is_body() || e.is_decode() {
        return Failure::Closed { in_body: true };
    }
    if e.is_connect() {
        // The innermost cause is the informative one (TLS, network unreachable, ...).
        let why = texts.last().cloned().unwrap_or_default();
        return Failure::Connect(why);
    }
    if e.is_request() {
        return Failure::Closed { in_body };
    }
    Failure::Protocol(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert!(valid_url("http://127.0.0.1:8545"));
        assert!(valid_url("https://rpc.example/v2/key?x=1"));
        assert!(!valid_url("http://"));
        assert!(!valid_url("ftp://host"));
        assert!(!valid_url("http://exa mple.com"));
    }

    #[test]
    fn refused_connection_is_refused() {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let got = get(
            &format!("http://127.0.0.1:{port}/"),
            Duration::from_secs(5),
            1 << 20,
        );
        assert_eq!(got, Err(Failure::Refused));
    }

    /// A keep-alive server that answers each connection's first request and then closes it:
    /// the next request from the same thread, after a pause, goes out on a new connection, and
    /// another thread's request on one of its own. (hyper retries this one itself, having seen
    /// the close before writing; the case where the request is written first, which
    /// [`caught_up`] prevents, is `serve`'s test of a client cut off for idling.)
    #[test]
    fn a_connection_closed_while_idle_is_not_reused() {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let server = std::thread::spawn(move || {
            let mut taken = 0;
            for stream in listener.incoming().take(3) {
                let mut stream = stream.unwrap();
                taken += 1;
                let mut seen = Vec::new();
                let mut buf = [0u8; 1024];
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    let n = stream.read(&mut buf).unwrap();
                    assert!(n > 0, "the client closed before its request");
                    seen.extend_from_slice(&buf[..n]);
                }
                let body = format!("answer {taken}");
                write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}",
                    body.len()
                )
                .unwrap();
                // Closed at once: the client's pool still holds the connection as idle.
            }
            taken
        });
        let ask = |url: &str| get(url, Duration::from_secs(5), 1 << 20);
        assert_eq!(ask(&url), Ok((200, "answer 1".to_string())));
        // The server's close reaches this thread's runtime only when it next runs.
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(ask(&url), Ok((200, "answer 2".to_string())));
        let other = url.clone();
        let from_other = std::thread::spawn(move || ask(&other)).join().unwrap();
        assert_eq!(from_other, Ok((200, "answer 3".to_string())));
        assert_eq!(server.join().unwrap(), 3);
    }
}
