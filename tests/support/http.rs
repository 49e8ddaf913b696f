//! Test support: the one loopback HTTP server the tests stand up when they play a node's
//! operator interface, an explorer or a wallet provider. Each connection is served on its own
//! thread: the request is read whole (request line, headers, `Content-Length` body) and handed
//! to the test's handler, whose reply is written with `Connection: close`.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

/// A request as the server read it. Header names are lower-cased.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    /// The request target: path and query.
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What the server does with one request.
pub enum Reply {
    /// Status and a JSON body.
    Answer(u16, String),
    /// Read the request and never answer (a hung node).
    Hang,
    /// A redirect: status (3xx) and its `Location`.
    Redirect(u16, String),
}

/// Serves on 127.0.0.1 (any free port) until the test process ends; returns `http://IP:PORT`.
pub fn serve(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let url = format!("http://{}", listener.local_addr().expect("bound address"));
    let handler = Arc::new(handler);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let handler = handler.clone();
            std::thread::spawn(move || answer(stream, &*handler));
        }
    });
    url
}

fn read_request(stream: &TcpStream) -> Option<Request> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut first = String::new();
    reader.read_line(&mut first).ok()?;
    let mut words = first.split_whitespace();
    let method = words.next()?.to_string();
    let path = words.next().unwrap_or("/").to_string();
    let mut headers = Vec::new();
    let mut len = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_string());
            if k == "content-length" {
                len = v.parse().unwrap_or(0);
            }
            headers.push((k, v));
        }
    }
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    Some(Request {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

fn answer(mut stream: TcpStream, handler: &dyn Fn(&Request) -> Reply) {
    let Some(request) = read_request(&stream) else {
        return;
    };
    match handler(&request) {
        Reply::Hang => std::thread::sleep(Duration::from_secs(30)),
        Reply::Redirect(status, location) => {
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\nlocation: {location}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            );
        }
        Reply::Answer(status, text) => {
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                text.len()
            );
        }
    }
}
