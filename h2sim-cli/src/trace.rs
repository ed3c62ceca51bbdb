//! Where the simulator's human-readable output goes: the terminal in the
//! binary, a buffer in tests. Lines are built only when tracing is on.
//!
//! Standard output and standard error are written by a thread of their
//! own, from a bounded queue: a connection's thread only appends its lines.
//! Written from the event loops, a reader that stopped reading (a pager, a
//! terminal paused with Ctrl-S, `| (sleep 9; cat)`) blocked the loop in
//! `write`, and with it every connection on that thread: the mock network
//! function stopped answering. Past [`BACKLOG`] the lines are dropped and
//! counted, and [`flush`] says so. A stream that cannot be written (a
//! closed pipe, a full disk) loses its lines and never panics the process,
//! as `println!` and `eprintln!` did.
//!
//! The client's progress bar shares the terminal with these lines, so they
//! meet here too: while [`show_bar`] has one shown, a line clears it and
//! draws it again after itself (see [`Stream::write`]).

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};

use h2sim_proto::HeaderField;

/// A destination for whole lines of trace output.
pub trait Trace: Send + Sync {
    fn line(&self, text: &str);
}

/// Standard output; each line is appended whole, so lines of concurrent
/// connections do not interleave.
#[derive(Debug, Default)]
pub struct Stdout;

impl Trace for Stdout {
    fn line(&self, text: &str) {
        queue(out()).push(text, Backlog::Bounded);
    }
}

/// `--json -`: standard output carries the JSON report alone (see
/// [`print_json`]), and what would go there goes to standard error.
static STDOUT_FOR_JSON: AtomicBool = AtomicBool::new(false);

/// Keeps standard output for the JSON report from now on: the request and
/// response dumps, frame traces and text report go to standard error, so
/// that `--json - | jq` reads JSON alone (the dumps came first, without
/// `-q`).
pub fn keep_stdout_for_json() {
    STDOUT_FOR_JSON.store(true, Ordering::Relaxed);
}

/// Where lines meant for standard output go.
fn out() -> Stream {
    if STDOUT_FOR_JSON.load(Ordering::Relaxed) {
        Stream::Err
    } else {
        Stream::Out
    }
}

/// Standard error, for connection summaries and the program's own lines.
#[derive(Debug, Default)]
pub struct Stderr;

impl Trace for Stderr {
    fn line(&self, text: &str) {
        queue(Stream::Err).push(text, Backlog::Bounded);
    }
}

/// A line on standard error, through its queue (see the module
/// documentation): `eprintln!` that neither blocks nor panics.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::trace::Trace::line(&$crate::trace::Stderr, &format!($($arg)*))
    };
}
pub(crate) use errln;

/// A line on standard output, through its queue: `println!` that neither
/// blocks nor panics.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::trace::Trace::line(&$crate::trace::Stdout, &format!($($arg)*))
    };
}
pub(crate) use outln;

/// Text on standard output, through its queue: the reports, which end in
/// their own newline.
pub fn print(text: &str) {
    queue(out()).push(text.strip_suffix('\n').unwrap_or(text), Backlog::Whole);
}

/// A report's text on standard error (the server's summary and its rules'
/// hits), which waits for its reader as the reports on standard output do.
pub fn print_err(text: &str) {
    queue(Stream::Err).push(text, Backlog::Whole);
}

/// The JSON report on standard output, which [`keep_stdout_for_json`]
/// kept for it.
pub fn print_json(text: &str) {
    queue(Stream::Out).push(text.strip_suffix('\n').unwrap_or(text), Backlog::Whole);
}

/// Writes out every queued line (waiting for a reader that is slow, as a
/// direct write would), then says on standard error how many lines a
/// stream that did not keep up lost. Called before the process ends and
/// before output that must come after the lines already queued.
pub fn flush() {
    let lost: Vec<_> = [Stream::Out, Stream::Err]
        .into_iter()
        .filter_map(|stream| QUEUES[stream as usize].get().map(|q| (stream, q.flush())))
        .filter(|&(_, dropped)| dropped > 0)
        .collect();
    for (stream, dropped) in lost {
        let line = format!(
            "h2sim: {dropped} lines of output dropped: {} was not read fast enough \
             (at most {} MiB wait for it)",
            stream.name(),
            BACKLOG >> 20
        );
        // Straight out: the queue has just been emptied.
        let _ = Stream::Err.write(format!("{line}\n").as_bytes());
    }
}

/// The client's progress bar while it is on the terminal.
static BAR: Mutex<Option<indicatif::ProgressBar>> = Mutex::new(None);

fn lock_bar() -> MutexGuard<'static, Option<indicatif::ProgressBar>> {
    BAR.lock().unwrap_or_else(|e| e.into_inner())
}

/// Shows `bar` on standard error until [`end_bar`]. The bar draws itself
/// there from a thread of its own, without a newline, and a line written
/// meanwhile landed after it on its line, and its next draw went on below
/// (`> req msgs: 40/400 |##>  | 10% 200/s ETA 2s  127.0.0.1:8080
/// DISCONNECTED …`), so every line is written through the bar from now on.
pub fn show_bar(bar: indicatif::ProgressBar) {
    *lock_bar() = Some(bar);
}

/// Draws the bar a last time and ends its line, so that what follows (the
/// report) starts on a line of its own; lines are written plainly again.
pub fn end_bar() {
    if let Some(bar) = lock_bar().take() {
        bar.finish();
        let _ = std::io::stderr().lock().write_all(b"\n");
    }
}

/// Whether standard output is a terminal, looked up once.
fn stdout_is_terminal() -> bool {
    static TERMINAL: OnceLock<bool> = OnceLock::new();
    *TERMINAL.get_or_init(|| std::io::stdout().is_terminal())
}

/// The output that may wait for a slow reader, per stream, before lines
/// are dropped: a second of a fully traced run at 100,000 requests a second
/// is about 20 MiB, so a reader that pauses loses lines, not the process's
/// memory.
const BACKLOG: usize = 8 << 20;

#[derive(Debug, Clone, Copy)]
enum Stream {
    Out = 0,
    Err = 1,
}

impl Stream {
    fn name(self) -> &'static str {
        match self {
            Stream::Out => "standard output",
            Stream::Err => "standard error",
        }
    }

    /// Writes `bytes`, or fails for good (a closed pipe, a full disk).
    ///
    /// While a bar is shown ([`show_bar`]), the write goes inside its
    /// `suspend`, which clears it first and draws it again after, under
    /// the bar's lock, so that it cannot draw in the middle; the lock on
    /// [`BAR`] is held throughout, so that [`end_bar`] cannot finish the
    /// bar in the middle either. Standard output goes so only when it is a
    /// terminal: into a file or a pipe its lines never meet the bar, which
    /// would be drawn again for every batch of them.
    fn write(self, bytes: &[u8]) -> std::io::Result<()> {
        let bar = lock_bar();
        let meets_bar = match self {
            Stream::Out => stdout_is_terminal(),
            Stream::Err => true,
        };
        match bar.as_ref().filter(|_| meets_bar) {
            Some(bar) => bar.suspend(|| self.write_plain(bytes)),
            None => {
                drop(bar);
                self.write_plain(bytes)
            }
        }
    }

    fn write_plain(self, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            Stream::Out => {
                let mut out = std::io::stdout().lock();
                out.write_all(bytes).and_then(|()| out.flush())
            }
            Stream::Err => std::io::stderr().lock().write_all(bytes),
        }
    }
}

/// Whether a text may be dropped when [`BACKLOG`] is queued already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backlog {
    /// A trace or a connection's line: dropped (and counted) past it.
    Bounded,
    /// A report, which a run is for: queued whatever waits before it (a
    /// server of 200,000 rules has a summary of 10 MiB, all of it dropped
    /// as one line past the bound).
    Whole,
}

static QUEUES: [OnceLock<Queue>; 2] = [OnceLock::new(), OnceLock::new()];

fn queue(stream: Stream) -> &'static Queue {
    QUEUES[stream as usize].get_or_init(|| Queue::new(stream))
}

/// One stream's lines waiting for its writer thread.
struct Queue {
    stream: Stream,
    state: Mutex<Pending>,
    /// The writer waits here for lines.
    ready: Condvar,
    /// [`Queue::flush`] waits here for the writer to be done.
    idle: Condvar,
}

#[derive(Default)]
struct Pending {
    lines: Vec<u8>,
    /// The writer holds lines it took and has not finished writing.
    writing: bool,
    dropped: u64,
    /// The stream failed for good: lines are thrown away.
    broken: bool,
    /// The writer thread could not be started: lines are written in place.
    direct: bool,
    started: bool,
}

impl Queue {
    fn new(stream: Stream) -> Self {
        Queue {
            stream,
            state: Mutex::new(Pending::default()),
            ready: Condvar::new(),
            idle: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Pending> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn push(&'static self, text: &str, backlog: Backlog) {
        let mut pending = self.lock();
        if pending.broken {
            return;
        }
        if !pending.started {
            pending.started = true;
            let spawned = std::thread::Builder::new()
                .name(format!("h2sim-{}", self.stream.name()))
                .spawn(|| self.write_out());
            pending.direct = spawned.is_err();
        }
        if pending.direct {
            drop(pending);
            let mut line = Vec::with_capacity(text.len() + 1);
            line.extend_from_slice(text.as_bytes());
            line.push(b'\n');
            let _ = self.stream.write(&line);
            return;
        }
        if backlog == Backlog::Bounded && pending.lines.len() + text.len() + 1 > BACKLOG {
            pending.dropped += 1;
            return;
        }
        let wake = pending.lines.is_empty() && !pending.writing;
        pending.lines.extend_from_slice(text.as_bytes());
        pending.lines.push(b'\n');
        if wake {
            self.ready.notify_one();
        }
    }

    /// The writer thread: takes every line queued, writes them in one go,
    /// and again, for the life of the process.
    fn write_out(&self) {
        let mut taken = Vec::new();
        loop {
            let mut pending = self.lock();
            pending.writing = false;
            while pending.lines.is_empty() {
                self.idle.notify_all();
                pending = self.ready.wait(pending).unwrap_or_else(|e| e.into_inner());
            }
            std::mem::swap(&mut pending.lines, &mut taken);
            pending.writing = true;
            drop(pending);
            let written = self.stream.write(&taken);
            taken.clear();
            // A burst's buffer is not kept for the life of the process.
            taken.shrink_to(64 * 1024);
            if written.is_err() {
                let mut pending = self.lock();
                pending.broken = true;
                pending.lines = Vec::new();
            }
        }
    }

    /// Waits until the writer has written everything queued; the lines
    /// dropped so far, counted once.
    fn flush(&self) -> u64 {
        let mut pending = self.lock();
        while !pending.direct && (!pending.lines.is_empty() || pending.writing) {
            pending = self.idle.wait(pending).unwrap_or_else(|e| e.into_inner());
        }
        std::mem::take(&mut pending.dropped)
    }
}

/// Collects lines in memory (tests).
#[cfg(test)]
#[derive(Debug, Default)]
pub struct Memory(pub std::sync::Mutex<Vec<String>>);

#[cfg(test)]
impl Trace for Memory {
    fn line(&self, text: &str) {
        if let Ok(mut lines) = self.0.lock() {
            lines.push(text.to_owned());
        }
    }
}

#[cfg(test)]
impl Memory {
    pub fn lines(&self) -> Vec<String> {
        self.0.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

/// The longest body a dump shows as text; a longer one is shown by its
/// size, so whoever keeps a body for dumps keeps this much of it.
pub const SHOWN_BODY: usize = 4096;

/// Appends `  name = value` lines for fields, then the body as text (or its
/// size when it is not UTF-8 or too long to show).
pub fn dump(out: &mut String, fields: &[(&[u8], &[u8])], extra: &[HeaderField], body: &[u8]) {
    dump_kept(out, fields, extra, body, body.len(), &[]);
}

/// [`dump`] of a body of `len` octets of which only `kept`, its start
/// (at least [`SHOWN_BODY`] octets when it is longer), was kept, then the
/// message's `trailers`, after a line of their own ([`TRAILERS`]) so they
/// are not taken for header fields when there is no body between.
pub fn dump_kept(
    out: &mut String,
    fields: &[(&[u8], &[u8])],
    extra: &[HeaderField],
    kept: &[u8],
    len: usize,
    trailers: &[HeaderField],
) {
    use std::fmt::Write as _;
    for (name, value) in fields {
        field(out, name, value);
    }
    for f in extra {
        field(out, &f.name, &f.value);
    }
    if len > 0 {
        // A body too long to show is not read at all: a trace of 100 KiB
        // responses would otherwise check every octet of each for UTF-8.
        let shown = (len <= SHOWN_BODY && kept.len() == len)
            .then(|| std::str::from_utf8(kept).ok())
            .flatten();
        match shown {
            Some(text) => {
                let _ = writeln!(out, "  {text}");
            }
            None => {
                let _ = writeln!(out, "  <{len} bytes>");
            }
        }
    }
    if !trailers.is_empty() {
        out.push_str(TRAILERS);
        out.push('\n');
        for f in trailers {
            field(out, &f.name, &f.value);
        }
    }
    if out.ends_with('\n') {
        out.pop();
    }
}

/// The line a dump puts before a message's trailer fields.
const TRAILERS: &str = "  -- trailers";

/// One `  name = value` line of a dump.
fn field(out: &mut String, name: &[u8], value: &[u8]) {
    use std::fmt::Write as _;
    let _ = writeln!(
        out,
        "  {} = {}",
        String::from_utf8_lossy(name),
        String::from_utf8_lossy(value)
    );
}

/// One frame as a trace line, in the spirit of `nghttp -v`: direction, type,
/// stream, flags that matter, and the fields a reader looks for; payloads
/// by size only.
pub fn frame(outgoing: bool, frame: &h2sim_proto::frame::Frame) -> String {
    use h2sim_proto::frame::Frame;
    let dir = if outgoing { "send" } else { "recv" };
    let flag = |on: bool, name: &str| {
        if on {
            format!(" {name}")
        } else {
            String::new()
        }
    };
    match frame {
        Frame::Data(d) => format!(
            "{dir} DATA stream={} length={}{}",
            d.stream_id,
            d.payload.len(),
            flag(d.end_stream, "END_STREAM")
        ),
        Frame::Headers(h) => format!(
            "{dir} HEADERS stream={} block={}{}{}",
            h.stream_id,
            h.fragment.len(),
            flag(h.end_stream, "END_STREAM"),
            flag(h.end_headers, "END_HEADERS")
        ),
        Frame::Priority(p) => format!(
            "{dir} PRIORITY stream={} depends_on={} weight={}",
            p.stream_id, p.spec.dependency, p.spec.weight
        ),
        Frame::RstStream(r) => {
            format!("{dir} RST_STREAM stream={} error={}", r.stream_id, r.reason)
        }
        Frame::Settings(s) if s.ack => format!("{dir} SETTINGS ACK"),
        Frame::Settings(s) => format!("{dir} SETTINGS {:?}", s.values),
        Frame::PushPromise(p) => format!(
            "{dir} PUSH_PROMISE stream={} promised={} block={}{}",
            p.stream_id,
            p.promised_id,
            p.fragment.len(),
            flag(p.end_headers, "END_HEADERS")
        ),
        Frame::Ping(p) => format!(
            "{dir} PING{} payload={:02x?}",
            flag(p.ack, "ACK"),
            p.payload
        ),
        Frame::GoAway(g) => format!(
            "{dir} GOAWAY last_stream={} error={} debug={:?}",
            g.last_stream_id,
            g.reason,
            String::from_utf8_lossy(&g.debug_data)
        ),
        Frame::WindowUpdate(w) => format!(
            "{dir} WINDOW_UPDATE stream={} increment={}",
            w.stream_id, w.increment
        ),
        Frame::Continuation(c) => format!(
            "{dir} CONTINUATION stream={} block={}{}",
            c.stream_id,
            c.fragment.len(),
            flag(c.end_headers, "END_HEADERS")
        ),
        Frame::Unknown(u) => format!(
            "{dir} frame type={:#x} stream={} length={}",
            u.kind,
            u.stream_id,
            u.payload.len()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::{SHOWN_BODY, dump, dump_kept};
    use h2sim_proto::HeaderField;

    fn shown(body: &[u8]) -> String {
        let mut out = String::new();
        dump(&mut out, &[], &[], body);
        out
    }

    /// A short UTF-8 body is shown as text; one that is not UTF-8, or too
    /// long to show, by its size.
    #[test]
    fn a_body_is_shown_as_text_or_by_size() {
        assert_eq!(shown(b"{\"a\":1}"), "  {\"a\":1}");
        assert_eq!(shown(&[0xff, 0xfe]), "  <2 bytes>");
        assert_eq!(shown(&[b'x'; 4097]), "  <4097 bytes>");
        assert_eq!(shown(&[b'x'; 4096]).len(), 2 + 4096);
        assert_eq!(shown(b""), "");
    }

    /// A body kept in part is shown by its whole size.
    #[test]
    fn a_body_kept_in_part_is_shown_by_its_size() {
        let mut out = String::new();
        dump_kept(&mut out, &[], &[], &[b'x'; SHOWN_BODY], 307_200, &[]);
        assert_eq!(out, "  <307200 bytes>");
    }

    /// Trailers come after the body, in the fields' style, behind a line
    /// that keeps them apart from the head when there is no body.
    #[test]
    fn trailers_follow_the_body() {
        let head = [HeaderField::new("content-type", "application/grpc")];
        let trailers = [
            HeaderField::new("grpc-status", "0"),
            HeaderField::new("grpc-message", "ok"),
        ];
        let mut out = String::new();
        dump_kept(&mut out, &[], &head, b"hello", 5, &trailers);
        assert_eq!(
            out,
            "  content-type = application/grpc\n  hello\n  -- trailers\n  grpc-status = 0\n  grpc-message = ok"
        );
        let mut out = String::new();
        dump_kept(&mut out, &[], &head, b"", 0, &trailers[..1]);
        assert_eq!(
            out,
            "  content-type = application/grpc\n  -- trailers\n  grpc-status = 0"
        );
    }
}
