//! `awari serve`: the Awari Oracle as a local web page and a JSON API.
//!
//! The transport is written for a server that must outlive its clients: an accept loop over
//! `std::net` that never ends (a failed accept, descriptor exhaustion included, is logged
//! once and retried with back-off), a thread per connection up to [`MAX_CONNECTIONS`]
//! (beyond it a 503 and the connection closed), at most [`WORKERS`] requests computed at
//! once, a deadline for the request's head ([`HEAD_TIMEOUT`]: an idle or slow client is
//! closed), caps on the head and the body, and one request per connection. Requests are
//! parsed by `httparse`; anything that is not HTTP/1.x (an HTTP/2 preface) is answered at
//! once and closed. Each request is answered inside `catch_unwind`, so a panic in a
//! handler becomes an HTTP 500 and the server goes on. While a request is computed, a
//! watcher reads its connection: a client gone stops its search ([`watch_client`]).
//!
//! The routes and their answers are in `api.rs`.

use super::api::{guarded, handle};
use super::json::error_json;
use super::oracle::Oracle;
use super::output::{say, tell};
use super::text::check_think;
use anyhow::{Context, Result};
use awari::Rules;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Requests computed at once (a search holds its slot for up to the think time); the other
/// connections wait for a slot.
const WORKERS: usize = 4;
/// Connections held at once. A page in a browser opens a handful; beyond this a client gets
/// a 503 at once rather than a connection that hangs, and the descriptors a flood of clients
/// can take stay bounded.
const MAX_CONNECTIONS: usize = 64;
/// Time a client has to send its request's head, from the moment it is accepted: a client
/// that connects and sends nothing (or a byte at a time) gives its connection back.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// Time a client has to take the answer.
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest request head (request line and headers): the longest URL the page builds,
/// a long game's move list, is a few kilobytes.
const MAX_HEAD: usize = 32 << 10;
/// Headers read at most.
const MAX_HEADERS: usize = 64;
/// The largest request body read (and dropped: every route is a GET).
const MAX_BODY: u64 = 16 << 10;
/// How often at most the watcher of a request looks again at its client (it is woken at
/// once when the client closes).
const WATCH_EVERY: Duration = Duration::from_millis(500);
/// The first and the longest wait before accepting again after a failed accept.
const BACKOFF_FIRST: Duration = Duration::from_millis(10);
const BACKOFF_LONGEST: Duration = Duration::from_secs(1);

/// The reason phrase of a status this server sends.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        411 => "Length Required",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Unknown",
    }
}

/// Sends one response and closes the connection (every response says so). A client that
/// went away is not the server's problem.
fn respond(stream: &mut TcpStream, status: u16, kind: &str, body: &str, head_only: bool) {
    let head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        reason(status),
        body.len()
    );
    let _ = stream
        .write_all(head.as_bytes())
        .and_then(|()| match head_only {
            true => Ok(()),
            false => stream.write_all(body.as_bytes()),
        })
        .and_then(|()| stream.flush());
    let _ = stream.shutdown(std::net::Shutdown::Write);
}

/// A response of the transport itself (not of a route): a JSON error.
fn refuse(stream: &mut TcpStream, status: u16, why: &str) {
    let body = error_json(why).to_string();
    respond(stream, status, "application/json", &body, false);
}

/// Bytes read from `stream` until `deadline`: `Ok(0)` when the client closed, `Err` when the
/// deadline passed or the connection failed.
fn read_until(stream: &mut TcpStream, buf: &mut [u8], deadline: Instant) -> std::io::Result<usize> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        stream.set_read_timeout(Some(left))?;
        match stream.read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// Counting semaphore: the slots of [`WORKERS`].
struct Slots {
    free: Mutex<usize>,
    freed: Condvar,
}

/// A slot taken; given back when dropped (also when a handler panics).
struct Slot<'a>(&'a Slots);

impl Slots {
    fn new(n: usize) -> Slots {
        Slots {
            free: Mutex::new(n),
            freed: Condvar::new(),
        }
    }
    fn take(&self) -> Slot<'_> {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(|e| e.into_inner());
        }
        *free -= 1;
        Slot(self)
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.0.freed.notify_one();
    }
}

/// One connection counted in `active`; uncounted when dropped, however its thread ends.
struct Held(Arc<AtomicUsize>);

impl Drop for Held {
    fn drop(&mut self) {
        self.0.fetch_sub(1, SeqCst);
    }
}

/// What the head of a request asks, once parsed.
struct Head {
    target: String,
    method: String,
    /// Bytes of the body already read with the head.
    body_read: usize,
    body_length: u64,
}

/// Reads and parses a request's head within [`HEAD_TIMEOUT`]; `Err` carries the refusal
/// (`None`: close without a word, the client is gone or silent).
fn read_head(stream: &mut TcpStream) -> std::result::Result<Head, Option<(u16, String)>> {
    let deadline = Instant::now() + HEAD_TIMEOUT;
    let mut buf: Vec<u8> = Vec::with_capacity(2048);
    let mut chunk = [0u8; 4096];
    loop {
        match read_until(stream, &mut chunk, deadline) {
            Ok(0) => return Err(None),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
                ) =>
            {
                let why = format!("no complete request within {} s", HEAD_TIMEOUT.as_secs());
                return Err(Some((408, why)));
            }
            Err(_) => return Err(None),
        }
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut request = httparse::Request::new(&mut headers);
        match request.parse(&buf) {
            Ok(httparse::Status::Complete(head_len)) => {
                let mut body_length = None;
                for h in request.headers.iter() {
                    if h.name.eq_ignore_ascii_case("transfer-encoding") {
                        return Err(Some((
                            411,
                            "a request body needs a Content-Length (every route is a GET, without a body)".into(),
                        )));
                    }
                    if h.name.eq_ignore_ascii_case("content-length") {
                        let length = std::str::from_utf8(h.value)
                            .ok()
                            .and_then(|v| v.trim().parse::<u64>().ok())
                            .ok_or_else(|| Some((400, "bad Content-Length".to_string())))?;
                        // Two lengths that differ leave the body's end in doubt, and a proxy
                        // in front may have read the other one (request smuggling); the
                        // same length twice is allowed (RFC 9112, 6.3).
                        if body_length.is_some_and(|l| l != length) {
                            return Err(Some((
                                400,
                                "Content-Length given twice with different values".into(),
                            )));
                        }
                        body_length = Some(length);
                    }
                }
                let body_length = body_length.unwrap_or(0);
                if body_length > MAX_BODY {
                    return Err(Some((
                        413,
                        format!(
                            "a request body holds at most {} KiB (every route is a GET, without a body)",
                            MAX_BODY >> 10
                        ),
                    )));
                }
                return Ok(Head {
                    target: request.path.unwrap_or("/").to_string(),
                    method: request.method.unwrap_or("").to_string(),
                    body_read: buf.len() - head_len,
                    body_length,
                });
            }
            Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD => {
                let why = format!("the request's head is over {} KiB", MAX_HEAD >> 10);
                return Err(Some((431, why)));
            }
            Ok(httparse::Status::Partial) => continue,
            Err(httparse::Error::TooManyHeaders) => {
                return Err(Some((431, format!("more than {MAX_HEADERS} headers"))));
            }
            // Among them an HTTP/2 connection preface ("PRI * HTTP/2.0"): answered at once
            // in HTTP/1.1, rather than waited on.
            Err(httparse::Error::Version) => {
                return Err(Some((
                    505,
                    "this server speaks HTTP/1.0 and HTTP/1.1 only".into(),
                )));
            }
            Err(e) => return Err(Some((400, format!("not an HTTP request: {e}")))),
        }
    }
}

/// Serves one connection: one request and its answer. Never panics through: a handler's
/// panic is caught by [`guarded`].
fn serve_connection(oracle: &Oracle, slots: &Slots, mut stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let head = match read_head(&mut stream) {
        Ok(head) => head,
        Err(Some((status, why))) => return refuse(&mut stream, status, &why),
        Err(None) => return,
    };
    // The body (no route takes one) is read and dropped, so that closing the connection
    // with unread bytes does not reset it under the client's feet before it reads the answer.
    let mut left = head.body_length.saturating_sub(head.body_read as u64);
    let deadline = Instant::now() + HEAD_TIMEOUT;
    let mut chunk = [0u8; 4096];
    while left > 0 {
        match read_until(&mut stream, &mut chunk, deadline) {
            Ok(0) | Err(_) => return,
            Ok(n) => left = left.saturating_sub(n as u64),
        }
    }
    let head_only = head.method == "HEAD";
    let (status, kind, body) = if head.method == "GET" || head_only {
        let _slot = slots.take();
        let stop = AtomicBool::new(false);
        let done = AtomicBool::new(false);
        let watch = stream.try_clone().ok();
        std::thread::scope(|scope| {
            if let Some(watch) = &watch {
                scope.spawn(|| watch_client(watch, &stop, &done));
            }
            let reply = guarded(|| handle(oracle, &head.target, &stop));
            done.store(true, SeqCst);
            // Wakes the watcher at once (its read returns), the answer still to write.
            if let Some(watch) = &watch {
                let _ = watch.shutdown(std::net::Shutdown::Read);
            }
            reply
        })
    } else {
        (
            405,
            "application/json",
            error_json("only GET is served").to_string(),
        )
    };
    respond(&mut stream, status, kind, &body, head_only);
}

/// While a request is computed: sets `stop` once its client has gone (its connection read
/// to its end or broken), so a search above the tables gives back its slot instead of
/// thinking on for no one. A client that half-closes its side after its request is taken
/// as gone too, as most servers do. Returns once `done` is set.
fn watch_client(stream: &TcpStream, stop: &AtomicBool, done: &AtomicBool) {
    let _ = stream.set_read_timeout(Some(WATCH_EVERY));
    let mut byte = [0u8; 1];
    while !done.load(SeqCst) {
        match stream.peek(&mut byte) {
            Ok(0) => {
                stop.store(!done.load(SeqCst), SeqCst);
                return;
            }
            // A byte beyond the request (pipelining, not served): the client is there.
            Ok(_) => std::thread::sleep(WATCH_EVERY),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(_) => {
                stop.store(true, SeqCst);
                return;
            }
        }
    }
}

/// Accept errors that concern one connection only (it went away before it was accepted):
/// not worth a pause or a word.
fn transient(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::Interrupted
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
            | std::io::ErrorKind::WouldBlock
    )
}

/// How often a failure that goes on is said again on stderr.
const LOG_AGAIN: Duration = Duration::from_secs(60);

/// Failures of the accept loop, said on stderr once, then at most once every [`LOG_AGAIN`]
/// with how many there were since: while descriptors are exhausted every closing client
/// lets one accept through and the next fails, which must not flood the log.
struct Failures {
    said: Option<Instant>,
    since: u64,
    backoff: Duration,
}

impl Failures {
    fn new() -> Failures {
        Failures {
            said: None,
            since: 0,
            backoff: BACKOFF_FIRST,
        }
    }

    /// Says the failure if it is time to, then pauses before the next try, each pause of a
    /// run of failures twice the last, up to [`BACKOFF_LONGEST`].
    fn failed(&mut self, what: &str, e: &std::io::Error) {
        self.since += 1;
        if self.said.is_none_or(|t| t.elapsed() >= LOG_AGAIN) {
            let again = match (self.said, self.since) {
                (None, _) | (_, 1) => String::new(),
                (Some(_), n) => format!(" ({n} times in the last minute)"),
            };
            tell!("awari serve: cannot {what}: {e}{again}; retrying, clients waiting stay queued");
            self.said = Some(Instant::now());
            self.since = 0;
        }
        std::thread::sleep(self.backoff);
        self.backoff = (self.backoff * 2).min(BACKOFF_LONGEST);
    }

    fn succeeded(&mut self) {
        self.backoff = BACKOFF_FIRST;
    }
}

/// Accepts connections until the process is stopped. Nothing here ends the loop: a failed
/// accept (descriptors exhausted, memory short) or a thread that cannot start is said on
/// stderr (see [`Failures`]) and retried after a pause; the clients waiting meanwhile stay
/// queued by the kernel.
fn accept_loop(listener: &TcpListener, oracle: &Arc<Oracle>) -> ! {
    let active = Arc::new(AtomicUsize::new(0));
    let slots = Arc::new(Slots::new(WORKERS));
    let mut failures = Failures::new();
    loop {
        let mut stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(e) if transient(&e) => continue,
            Err(e) => {
                failures.failed("accept connections", &e);
                continue;
            }
        };
        failures.succeeded();
        if active.load(SeqCst) >= MAX_CONNECTIONS {
            // Answered from here without waiting: the socket's buffer takes a short answer.
            let _ = stream.set_nonblocking(true);
            refuse(
                &mut stream,
                503,
                "too many connections at once; try again in a moment",
            );
            continue;
        }
        active.fetch_add(1, SeqCst);
        let held = Held(Arc::clone(&active));
        let (oracle, slots) = (Arc::clone(oracle), Arc::clone(&slots));
        let started = std::thread::Builder::new()
            .name("awari-connection".into())
            .spawn(move || {
                let _held = held;
                serve_connection(&oracle, &slots, stream);
            });
        // The closure, with the connection and its count, is dropped when no thread
        // starts: the client sees the connection close.
        if let Err(e) = started {
            failures.failed("start a thread for a connection", &e);
        }
    }
}

/// Runs the server until the process is stopped.
pub fn run(db: &Path, bind: &str, port: u16, think_ms: u64) -> Result<bool> {
    let oracle = Arc::new(Oracle::open(db, check_think(think_ms)?)?.with_own_row());
    let addr = format!("{bind}:{port}");
    let listener = TcpListener::bind(&addr).with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener.local_addr().context("the server has no address")?;
    let tables: Vec<String> = Rules::ALL
        .iter()
        .map(|&r| match oracle.db(r).complete_up_to() {
            Some(n) => format!("{r} 0..={n}"),
            None => format!("{r} none"),
        })
        .collect();
    say!(
        "awari oracle listening on http://{local}/  (tables: {}; think {think_ms} ms)",
        tables.join(", ")
    );
    accept_loop(&listener, &oracle)
}
