//! A scenario: the steps (`-m METHOD` each) one stream slot runs in order,
//! with symbols replaced by the scenario's number.

use bytes::Bytes;
use h2sim_proto::{HeaderField, RequestHead};

use super::symbol::Values;

/// One request of a scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub method: String,
    pub scheme: String,
    pub authority: String,
    pub path: String,
    pub headers: Vec<HeaderField>,
    pub body: Bytes,
}

impl Step {
    /// The request of this step for one scenario. Symbols are replaced in
    /// the path, in header values (which h2simple drops instead), and in the
    /// body; a body without symbols is shared, not copied.
    pub fn request(&self, values: &Values) -> (RequestHead, Bytes) {
        let mut head = RequestHead::new(
            self.method.clone(),
            self.scheme.clone(),
            self.authority.clone(),
            values.apply(&self.path),
        );
        for field in &self.headers {
            // A value without symbols is shared; names are lowercase already.
            let value = values.apply_bytes(&field.value);
            head.fields
                .push(HeaderField::new(field.name.clone(), value));
        }
        let body = values.apply_bytes(&self.body);
        // The size is known: say it, as h2svr did, rather than leave HTTP/2
        // without content-length and HTTP/1.1 chunked (RFC 9110 §8.6).
        if !body.is_empty() && head.get(b"content-length").is_none() {
            head.fields
                .push(HeaderField::new("content-length", body.len().to_string()));
        }
        (head, body)
    }
}

/// Splits `scheme://authority/path` (the `-u URI` form).
pub fn split_uri(uri: &str) -> Result<(String, String, String), String> {
    let (scheme, rest) = uri
        .split_once("://")
        .ok_or_else(|| format!("{uri:?}: not an absolute URI (scheme://host[:port]/path)"))?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(format!("{uri:?}: scheme must be http or https"));
    }
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    if authority.is_empty() || authority.contains(['@', ' ']) {
        return Err(format!("{uri:?}: bad authority {authority:?}"));
    }
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_owned()
    };
    Ok((scheme, authority.to_owned(), path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::symbol::Symbol;

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
        };
        let values = Values::new(&[Symbol::parse("__MDN__=01092%06d").unwrap()], 5);
        let (head, body) = step.request(&values);
        assert_eq!(head.path, "/user/01092000005");
        assert_eq!(head.get(b"content-type").unwrap(), "application/json");
        assert_eq!(head.get(b"x-mdn").unwrap(), "01092000005");
        assert_eq!(&body[..], b"{\"m\":\"01092000005\"}");
        assert_eq!(head.get(b"content-length").unwrap(), "19");
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
        };
        let values = Values::new(&[], 0);
        let (head, _) = step.request(&values);
        assert_eq!(head.get(b"content-length").unwrap(), "5");
        step.headers.push(HeaderField::new("content-length", "5"));
        let (head, _) = step.request(&values);
        assert_eq!(
            head.fields
                .iter()
                .filter(|f| &f.name[..] == b"content-length")
                .count(),
            1
        );
        step.body = Bytes::new();
        step.headers.clear();
        assert!(step.request(&values).0.get(b"content-length").is_none());
    }
}
