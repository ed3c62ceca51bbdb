//! Problem details (RFC 9457, `application/problem+json`) with the 3GPP
//! `cause` of TS 29.500 §5.2.7: what SBI peers send instead of a bare
//! error status, and what the simulator answers with when a stored
//! resource is absent, the store is full or a request is malformed.

use bytes::Bytes;
use h2sim_proto::{HeaderField, ResponseHead};

pub const MEDIA_TYPE: &str = "application/problem+json";

/// A problem to answer with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub status: u16,
    /// TS 29.500 Table 5.2.7.2-1's application error, e.g.
    /// `RESOURCE_CONTEXT_NOT_FOUND`, `MANDATORY_IE_MISSING`.
    pub cause: Option<String>,
    /// RFC 9457 §3.1.3: a short summary; the status's reason phrase when
    /// not given.
    pub title: Option<String>,
    pub detail: Option<String>,
    /// RFC 9457 §3.1.1: a URI; absent means `about:blank`.
    pub kind: Option<String>,
}

impl Problem {
    pub fn new(status: u16, cause: &str, detail: impl Into<String>) -> Problem {
        Problem {
            status,
            cause: Some(cause.to_owned()),
            title: None,
            detail: Some(detail.into()),
            kind: None,
        }
    }

    /// The JSON body (text: a rule's problem may hold placeholders, which
    /// survive JSON string escaping as they contain no special character).
    pub fn json(&self) -> String {
        let mut object = serde_json::Map::new();
        if let Some(kind) = &self.kind {
            object.insert("type".into(), kind.clone().into());
        }
        let title = self
            .title
            .clone()
            .unwrap_or_else(|| reason(self.status).to_owned());
        object.insert("title".into(), title.into());
        object.insert("status".into(), self.status.into());
        if let Some(detail) = &self.detail {
            object.insert("detail".into(), detail.clone().into());
        }
        if let Some(cause) = &self.cause {
            object.insert("cause".into(), cause.clone().into());
        }
        serde_json::Value::Object(object).to_string()
    }

    /// The response: status, `content-type`, `content-length`, body.
    pub fn response(&self) -> (ResponseHead, Bytes) {
        json_response(
            self.status,
            MEDIA_TYPE,
            Bytes::from(self.json()),
            Vec::new(),
        )
    }
}

/// A response with a JSON body (or none, for 204) and its length.
pub fn json_response(
    status: u16,
    media_type: &str,
    body: Bytes,
    mut fields: Vec<HeaderField>,
) -> (ResponseHead, Bytes) {
    if status != 204 {
        fields.push(HeaderField::new("content-type", media_type.to_owned()));
        fields.push(HeaderField::new("content-length", body.len().to_string()));
    }
    let body = if status == 204 { Bytes::new() } else { body };
    (ResponseHead { status, fields }, body)
}

/// RFC 9110 §15's reason phrases for the statuses SBI uses.
pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        411 => "Length Required",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        507 => "Insufficient Storage",
        _ => "Error",
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// RFC 9457 §3: type, title, status, detail; TS 29.500 §5.2.7: cause.
    #[test]
    fn problem_details_members() {
        let (head, body) = Problem::new(404, "RESOURCE_CONTEXT_NOT_FOUND", "no /x").response();
        assert_eq!(head.status, 404);
        assert_eq!(
            &head.get(b"content-type").unwrap()[..],
            b"application/problem+json"
        );
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"title":"Not Found","status":404,"detail":"no /x",
                               "cause":"RESOURCE_CONTEXT_NOT_FOUND"})
        );
        assert_eq!(
            &head.get(b"content-length").unwrap()[..],
            body.len().to_string().as_bytes()
        );
    }
}
