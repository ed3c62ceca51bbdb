//! A scenario: the steps (`-m METHOD` each) one stream slot runs in order,
//! with symbols replaced by the scenario's number.

use bytes::{Bytes, BytesMut};
use h2sim_proto::octets;
use h2sim_proto::{HeaderField, RequestHead};

use super::capture::{Capture, Expect};
use super::symbol::Values;
use crate::lasting::{self, for_the_run};

/// One request of a scenario.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Step {
    /// The request line's parts as the wire carries them: shared `Bytes`,
    /// so each request clones a reference count, not a string.
    pub method: Bytes,
    pub scheme: Bytes,
    pub authority: Bytes,
    /// With `-R` symbols, replaced per scenario.
    pub path: Bytes,
    pub headers: Vec<HeaderField>,
    pub body: Bytes,
    /// `--capture`: values taken from the response for the later steps.
    pub captures: Vec<Capture>,
    /// `--expect`: the statuses that count as this step's success.
    pub expect: Option<Expect>,
    /// Which of the texts above hold no symbol ([`Step::find_symbols`]).
    pub(crate) plain: Plain,
}

/// Which of a step's texts hold none of the run's symbols, found once
/// when they are known, so that each request shares those texts without
/// scanning them for every symbol. Until then (all false) every text is
/// scanned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Plain {
    path: bool,
    /// One per field of `headers`.
    headers: Vec<bool>,
    body: bool,
    /// The content-length of a plain body, made once.
    length: Option<Bytes>,
}

impl Step {
    /// Whether `status` is a success of this step: an expected status, or
    /// without `--expect` a 2xx or 3xx as h2load counts.
    pub fn succeeds(&self, status: u16) -> bool {
        match &self.expect {
            Some(expect) => expect.allows(status),
            None => (200..400).contains(&status),
        }
    }

    /// Whether a failure of this step ends its scenario: it was told what
    /// to expect or to capture, so the later steps depend on it. (Steps
    /// without either go on whatever the answer, as h2cli's did.)
    pub fn ends_scenario_on_failure(&self) -> bool {
        self.expect.is_some() || !self.captures.is_empty()
    }

    /// Notes which texts hold none of `names`, the run's symbols (the
    /// `-R` ones and every capture's): those are sent as they are.
    pub fn find_symbols(&mut self, names: &[&str]) {
        let plain = |text: &[u8]| {
            !names
                .iter()
                .any(|n| !n.is_empty() && memchr::memmem::find(text, n.as_bytes()).is_some())
        };
        let body = plain(&self.body);
        self.plain = Plain {
            path: plain(&self.path),
            headers: self.headers.iter().map(|f| plain(&f.value)).collect(),
            length: (body && !self.body.is_empty())
                .then(|| for_the_run(itoa::Buffer::new().format(self.body.len()).as_bytes())),
            body,
        };
    }

    /// The step with its texts kept for the rest of the process (see
    /// [`lasting::for_the_run`]).
    pub fn for_the_run(mut self) -> Self {
        // Not `authority`: requests carry their connection's, kept with
        // the run's targets.
        for text in [&mut self.method, &mut self.scheme, &mut self.path] {
            *text = for_the_run(text);
        }
        self.body = lasting::body(&self.body);
        for field in &mut self.headers {
            *field = lasting::field(field);
        }
        self
    }

    /// `METHOD path` (symbols unreplaced), naming the step in reports.
    pub fn label(&self) -> String {
        format!(
            "{} {}",
            String::from_utf8_lossy(&self.method),
            String::from_utf8_lossy(&self.path)
        )
    }

    /// The request of this step for one scenario, to `authority` (the
    /// connection's server), its fields collected in `fields` (its room is
    /// reused and what it held dropped: a spare vector saves allocating one
    /// per request). Symbols are replaced
    /// in the path, in header values (which h2simple drops instead), and in
    /// the body; what has no symbols is shared, not copied.
    pub fn request(
        &self,
        values: &Values,
        authority: &Bytes,
        reuse: &mut Reuse,
        mut fields: Vec<HeaderField>,
    ) -> (RequestHead, Bytes) {
        let plain = &self.plain;
        let texts = &mut reuse.texts;
        let path = match plain.path {
            true => self.path.clone(),
            false => encode_values(values.apply(&self.path, texts), texts),
        };
        let mut fill = |plain: bool, text: &Bytes| {
            if plain {
                text.clone()
            } else {
                values.apply(text, texts)
            }
        };
        let mut head = RequestHead {
            method: self.method.clone(),
            scheme: self.scheme.clone(),
            authority: authority.clone(),
            path,
            protocol: Bytes::new(),
            fields: {
                // The step's fields, a bearer token and content-length.
                fields.clear();
                fields.reserve_exact(self.headers.len() + 2);
                fields
            },
        };
        for (i, field) in self.headers.iter().enumerate() {
            // A value without symbols is shared; names are lowercase already.
            let value = fill(plain.headers.get(i).copied().unwrap_or(false), &field.value);
            head.fields
                .push(HeaderField::new(field.name.clone(), value));
        }
        let body = fill(plain.body, &self.body);
        // The size is known: say it, as h2svr did, rather than leave HTTP/2
        // without content-length and HTTP/1.1 chunked (RFC 9110 §8.6).
        if !body.is_empty() && head.get(b"content-length").is_none() {
            let length = match &plain.length {
                Some(length) => length.clone(),
                None => reuse.length(body.len()),
            };
            head.fields.push(HeaderField::new("content-length", length));
        }
        (head, body)
    }
}

/// What one client's requests reuse from one to the next.
#[derive(Debug, Default)]
pub struct Reuse {
    /// The last content-length value sent: a load's requests carry bodies
    /// of one size, so they share one `Bytes` instead of each formatting
    /// and allocating its own.
    length: Option<(usize, Bytes)>,
    /// The chunk texts with symbols are filled into ([`Values::apply`]).
    texts: BytesMut,
}

impl Reuse {
    fn length(&mut self, len: usize) -> Bytes {
        match &self.length {
            Some((n, value)) if *n == len => value.clone(),
            _ => {
                let value = Bytes::copy_from_slice(itoa::Buffer::new().format(len).as_bytes());
                self.length = Some((len, value.clone()));
                value
            }
        }
    }
}

/// Splits `scheme://authority/path` (the `-u URI` form). The authority
/// ends at the first `/`, `?` or `#` (RFC 3986 §3.2); the path keeps any
/// fragment, which [`literal_target`] cuts off knowing the run's symbols.
pub fn split_uri(uri: &str) -> Result<(String, String, String), String> {
    let (scheme, rest) = uri
        .split_once("://")
        .ok_or_else(|| format!("{uri:?}: not an absolute URI (scheme://host[:port]/path)"))?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(format!("{uri:?}: scheme must be http or https"));
    }
    let (authority, path) = match rest.find(['/', '?', '#']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    check_authority(authority).map_err(|why| format!("{uri:?}: {why}"))?;
    let path = if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("/{path}")
    };
    Ok((scheme, authority.to_owned(), path))
}

/// Whether a request-target we send may not hold `b` as it is: what no
/// target may hold (the core's rule, [`octets::not_in_target`]: controls,
/// space, DEL), and RFC 3986's other excluded characters besides,
/// ``"<>\^`{|}`` (§2, §3.3, §3.4; RFC 9112 §3.2 builds the target from its
/// path and query). The core lets those through, as a receiver meets them;
/// a client sends what every server takes, and curl refuses such a URL.
/// Octets above ASCII pass, as the core lets them: raw UTF-8 paths are met.
fn not_in_target(b: u8) -> bool {
    octets::not_in_target(b) || b"\"<>\\^`{|}".contains(&b)
}

/// A step's path as given (`-u`, the URI argument, `-p`, a scenario
/// file's `uri` or `path`) made its request-target: the fragment cut off,
/// as curl, nghttp and h2load do, since it is not part of the target
/// (RFC 3986 §3.5, RFC 9110 §4.2.1, §7.1), and a byte that no target may
/// hold refused, naming it, at start. Occurrences of `names` (the run's
/// symbols: `-R`, captures, `__LISTEN__`) are skipped: their values come
/// per request, and [`encode_values`] encodes what those bring.
pub fn literal_target<'a>(path: &'a str, names: &[&str]) -> Result<&'a str, String> {
    let bytes = path.as_bytes();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if let Some(name) = names
            .iter()
            .find(|n| !n.is_empty() && bytes[i..].starts_with(n.as_bytes()))
        {
            i += name.len();
        } else if b == b'#' {
            return Ok(&path[..i]);
        } else if not_in_target(b) {
            return Err(format!(
                "{:?} is not allowed in a request-target (RFC 3986 §3.3): write it as %{b:02X}",
                char::from(b)
            ));
        } else {
            i += 1;
        }
    }
    Ok(path)
}

/// A path filled with a scenario's values, each byte of it that a target
/// may not hold, and `#`, percent-encoded (RFC 3986 §2.1). The step's own
/// text passed [`literal_target`] at start, so such bytes came with a
/// value (a `-R` format's text, a captured field or JSON string): data,
/// not URI syntax, encoded as a URI template's expansion encodes it
/// (RFC 6570 §3.2.1), rather than sent for the server to refuse. Cut from
/// `chunk` (left empty) as [`Values::apply`] does.
fn encode_values(path: Bytes, chunk: &mut BytesMut) -> Bytes {
    let bad = |b: u8| b == b'#' || not_in_target(b);
    let count = path.iter().filter(|&&b| bad(b)).count();
    if count == 0 {
        return path;
    }
    chunk.reserve(path.len() + 2 * count);
    for &b in path.iter() {
        if bad(b) {
            const HEX: &[u8; 16] = b"0123456789ABCDEF";
            chunk.extend_from_slice(&[b'%', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xf)]]);
        } else {
            chunk.extend_from_slice(&[b]);
        }
    }
    chunk.split().freeze()
}

/// `host[:port]` as RFC 3986 §3.2.2-3.2.3 has it, with h2sim's limits: a
/// registered name or IPv4 address of unreserved, sub-delims and
/// percent-encoded characters, or an IPv6 address in brackets; a port of
/// 1-65535. No userinfo (RFC 9110 §4.2.4 forbids it in http(s) URIs).
fn check_authority(authority: &str) -> Result<(), String> {
    if authority.is_empty() {
        return Err("no host".to_owned());
    }
    if authority.contains('@') {
        return Err(format!("{authority:?}: no user@ in an http(s) authority"));
    }
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (v6, after) = rest
            .split_once(']')
            .ok_or_else(|| format!("{authority:?}: IPv6 address without closing ]"))?;
        if v6.parse::<std::net::Ipv6Addr>().is_err() {
            return Err(format!("{authority:?}: {v6:?} is not an IPv6 address"));
        }
        let port = match after {
            "" => None,
            p => Some(
                p.strip_prefix(':')
                    .ok_or_else(|| format!("{authority:?}: expected :port after ]"))?,
            ),
        };
        (None, port)
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (Some(host), Some(port)),
            None => (Some(authority), None),
        }
    };
    if let Some(host) = host {
        if host.is_empty() {
            return Err(format!("{authority:?}: no host"));
        }
        if let Some(c) = host
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || "-._~%!$&'()*+,;=".contains(*c)))
        {
            // An IPv6 address without its brackets (`::1:8080`) cannot be
            // told from its port: RFC 3986 §3.2.2 brackets it.
            let v6 = |text: &str| text.parse::<std::net::Ipv6Addr>().is_ok();
            let hint = match port {
                _ if v6(authority) => format!(" (an IPv6 address goes in brackets: [{authority}])"),
                Some(port) if v6(host) => {
                    format!(" (an IPv6 address goes in brackets: [{host}]:{port})")
                }
                _ => String::new(),
            };
            return Err(format!(
                "{authority:?}: {c:?} is not allowed in a host name{hint}"
            ));
        }
    }
    if let Some(port) = port {
        parse_port(port, 1).map_err(|why| format!("{authority:?}: {why}"))?;
    }
    Ok(())
}

/// A port (RFC 3986 §3.2.3) of `min`-65535: 1 for a server to reach, 0
/// too for a listener (one the system picks). The one wording for both.
pub fn parse_port(port: &str, min: u16) -> Result<u16, String> {
    port.parse::<u16>()
        .ok()
        .filter(|&p| p >= min && port.bytes().all(|b| b.is_ascii_digit()))
        .ok_or_else(|| format!("port {port:?} is not {min}-65535"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::symbol::{Needle, Symbol};

    #[test]
    fn uris() {
        assert_eq!(
            split_uri("http://127.0.0.1:8080/user1k/nobody").unwrap(),
            (
                "http".into(),
                "127.0.0.1:8080".into(),
                "/user1k/nobody".into()
            )
        );
        assert_eq!(
            split_uri("HTTPS://[::1]:8443").unwrap(),
            ("https".into(), "[::1]:8443".into(), "/".into())
        );
        assert_eq!(split_uri("http://h?x=1").unwrap().2, "/?x=1");
        assert!(split_uri("127.0.0.1:8080/x").is_err());
        assert!(split_uri("ftp://h/").is_err());
        assert!(split_uri("http:///x").is_err());
    }

    /// Issue 10 item 11: malformed authorities are bad options, not runs
    /// that fail (RFC 3986 §3.2.2, §3.2.3).
    /// What a target we send may not hold is the core's rule (what no
    /// receiver takes: controls, space, DEL) and RFC 3986's other excluded
    /// characters (§2), octet by octet, and nothing else: the start-up
    /// check builds on the core's, so the two cannot part.
    #[test]
    fn a_target_we_send_is_the_cores_and_rfc_3986s() {
        for b in 0..=u8::MAX {
            let excluded = b"\"<>\\^`{|}".contains(&b);
            assert_eq!(
                not_in_target(b),
                octets::not_in_target(b) || excluded,
                "{b:#04x}"
            );
            if b.is_ascii() {
                let path = format!("/{}", char::from(b));
                let refused = literal_target(&path, &[]).is_err();
                assert_eq!(refused, not_in_target(b), "{b:#04x}");
            }
        }
    }

    #[test]
    fn malformed_authorities() {
        for (uri, says) in [
            ("http://127.0.0.1:99999/x", "port \"99999\""),
            ("http://[::1/x", "without closing ]"),
            ("http://[::zz]:80/", "not an IPv6"),
            ("http://a b:80/", "' '"),
            ("http://h<x>:80/", "'<'"),
            ("http://h:/", "port \"\""),
            ("http://h:0/", "port \"0\""),
            ("http://u@h/", "user@"),
            ("http://:80/", "no host"),
        ] {
            let err = split_uri(uri).unwrap_err();
            assert!(err.contains(says), "{uri}: {err}");
        }
        for ok in [
            "http://[::1]:8080/",
            "http://localhost/",
            "https://nf-1.example.com:443/x",
        ] {
            split_uri(ok).unwrap();
        }
    }

    /// A value filled into a path may bring what no request-target may
    /// hold (RFC 3986 §3.3): a captured JSON string with a space, a `-R`
    /// format with one; it is percent-encoded (RFC 3986 §2.1), `#` too,
    /// rather than sent for the server to refuse (RFC 9113 §8.3.1).
    #[test]
    fn values_filled_into_a_path_are_percent_encoded() {
        let mut step = Step {
            method: "GET".into(),
            scheme: "http".into(),
            authority: "h".into(),
            path: "/u/{id}/__N__?q={id}".into(),
            headers: vec![HeaderField::new("x-id", "{id}")],
            ..Step::default()
        };
        step.find_symbols(&["{id}", "__N__"]);
        let mut values = Values::new(&[Symbol::parse("__N__=a b%d").unwrap()], 7);
        values.set(&Needle::new("{id}"), "x y#\"|".to_owned());
        let mut reuse = Reuse::default();
        let (head, _) = step.request(&values, &step.authority, &mut reuse, Vec::new());
        assert_eq!(head.path, "/u/x%20y%23%22%7C/a%20b7?q=x%20y%23%22%7C");
        assert_eq!(
            head.fields[0].value, "x y#\"|",
            "a field value is no target"
        );
        assert!(reuse.texts.is_empty());
    }

    #[test]
    fn steps_keep_headers_with_symbols() {
        let step = Step {
            method: "POST".into(),
            scheme: "http".into(),
            authority: "h".into(),
            path: "/user/__MDN__".into(),
            headers: vec![
                crate::options::header("Content-Type=application/json").unwrap(),
                HeaderField::new("x-mdn", "__MDN__"),
            ],
            body: Bytes::from_static(b"{\"m\":\"__MDN__\"}"),
            ..Step::default()
        };
        let values = Values::new(&[Symbol::parse("__MDN__=01092%06d").unwrap()], 5);
        let (head, body) =
            step.request(&values, &step.authority, &mut Reuse::default(), Vec::new());
        assert_eq!(head.path, "/user/01092000005");
        assert_eq!(head.get(b"content-type").unwrap(), "application/json");
        assert_eq!(head.get(b"x-mdn").unwrap(), "01092000005");
        assert_eq!(&body[..], b"{\"m\":\"01092000005\"}");
        assert_eq!(head.get(b"content-length").unwrap(), "19");
    }

    /// Once the run's symbols are known, texts without any are shared as
    /// they are, and texts with one (a `-R` symbol or a captured one) are
    /// still filled in.
    #[test]
    fn texts_without_symbols_are_shared_unscanned() {
        let mut step = Step {
            method: "POST".into(),
            scheme: "http".into(),
            authority: "h".into(),
            path: "/user/__MDN__".into(),
            headers: vec![
                HeaderField::new("content-type", "application/json"),
                HeaderField::new("x-sub", "__SUB__"),
            ],
            body: Bytes::from_static(b"{\"plain\":true}"),
            ..Step::default()
        };
        step.find_symbols(&["__MDN__", "__SUB__"]);
        let plain = Plain {
            path: false,
            headers: vec![true, false],
            body: true,
            length: Some(Bytes::from_static(b"14")),
        };
        assert_eq!(step.plain, plain);
        let mut values = Values::new(&[Symbol::parse("__MDN__=01092%06d").unwrap()], 5);
        values.set(&Needle::new("__SUB__"), "sub-1".into());
        let (head, body) =
            step.request(&values, &step.authority, &mut Reuse::default(), Vec::new());
        assert_eq!(head.path, "/user/01092000005");
        assert_eq!(head.get(b"x-sub").unwrap(), "sub-1");
        let shared = |a: &Bytes, b: &Bytes| a.as_ptr() == b.as_ptr() && a.len() == b.len();
        assert!(shared(
            head.get(b"content-type").unwrap(),
            &step.headers[0].value
        ));
        assert!(shared(&body, &step.body));
    }

    /// A step made for the run sends the texts it holds, the same octets
    /// at the same addresses request after request, and its body's
    /// content-length made once.
    #[test]
    fn a_step_for_the_run_sends_its_own_texts() {
        let mut step = Step {
            method: "POST".into(),
            scheme: "http".into(),
            authority: "nf.example:8080".into(),
            path: "/nudm-sdm/v2/imsi-1".into(),
            headers: vec![HeaderField::new("content-type", "application/json")],
            body: Bytes::from(vec![b'x'; 1024]),
            ..Step::default()
        }
        .for_the_run();
        // The step holds the only handle on each text: one counted by
        // reference would be unique; a static one never is.
        for text in [&step.method, &step.path, &step.body, &step.headers[0].value] {
            assert!(
                !text.is_unique(),
                "{} octets counted by reference",
                text.len()
            );
        }
        step.find_symbols(&["__MDN__"]);
        let values = Values::new(&[], 1);
        let mut reuse = Reuse::default();
        let same = |a: &Bytes, b: &Bytes| a == b && a.as_ptr() == b.as_ptr();
        let requests: Vec<_> = (0..2)
            .map(|_| step.request(&values, &step.authority, &mut reuse, Vec::new()))
            .collect();
        for (head, body) in &requests {
            assert!(same(&head.method, &step.method) && head.method == "POST");
            assert!(same(&head.path, &step.path) && head.path == "/nudm-sdm/v2/imsi-1");
            assert!(same(&head.authority, &step.authority));
            assert!(same(
                head.get(b"content-type").unwrap(),
                &step.headers[0].value
            ));
            assert!(same(body, &step.body) && body.len() == 1024);
            assert_eq!(head.get(b"content-length").unwrap(), "1024");
        }
        let lengths: Vec<_> = requests
            .iter()
            .map(|(head, _)| head.get(b"content-length").unwrap().as_ptr())
            .collect();
        assert_eq!(lengths[0], lengths[1]);
        // With the step, the connection's reuse and the other request gone,
        // the last request holds the only handle on what it sends: none is
        // counted by reference, its content-length included.
        let (head, body) = requests.into_iter().next_back().unwrap();
        drop((step, reuse));
        let length = head.get(b"content-length").unwrap();
        for text in [&head.method, &head.path, &body, length] {
            assert!(
                !text.is_unique(),
                "{:?} counted by reference",
                String::from_utf8_lossy(&text[..text.len().min(16)])
            );
        }
    }

    /// Bodies of one size share one content-length value; another size
    /// gets its own.
    #[test]
    fn content_lengths_are_shared_between_requests() {
        let mut reuse = Reuse::default();
        let a = reuse.length(1024);
        let b = reuse.length(1024);
        assert_eq!((&a[..], a.as_ptr()), (&b"1024"[..], b.as_ptr()));
        assert_eq!(reuse.length(7), "7");
        assert_eq!(reuse.length(1024), "1024");
    }

    /// RFC 9110 §8.6: a fixed body's size goes in content-length; a step
    /// that sets its own keeps it, and a request without a body gets none.
    #[test]
    fn fixed_bodies_carry_content_length() {
        let mut step = Step {
            method: "POST".into(),
            scheme: "http".into(),
            authority: "h".into(),
            path: "/".into(),
            headers: Vec::new(),
            body: Bytes::from_static(b"hello"),
            ..Step::default()
        };
        let values = Values::new(&[], 0);
        let (head, _) = step.request(&values, &step.authority, &mut Reuse::default(), Vec::new());
        assert_eq!(head.get(b"content-length").unwrap(), "5");
        step.headers.push(HeaderField::new("content-length", "5"));
        let (head, _) = step.request(&values, &step.authority, &mut Reuse::default(), Vec::new());
        assert_eq!(
            head.fields
                .iter()
                .filter(|f| &f.name[..] == b"content-length")
                .count(),
            1
        );
        step.body = Bytes::new();
        step.headers.clear();
        assert!(
            step.request(&values, &step.authority, &mut Reuse::default(), Vec::new())
                .0
                .get(b"content-length")
                .is_none()
        );
    }
}
