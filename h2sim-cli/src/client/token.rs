//! OAuth2 client credentials (RFC 6749 §4.4) as an NF gets its access
//! tokens from the NRF (TS 33.501 §13.4.1, TS 29.510 §6.3.5.2.2
//! `AccessTokenReq`): the form-encoded request, the token response, and
//! the `authorization: Bearer …` field (RFC 6750 §2.1) every request of
//! the run carries. Runtime-free; `setup::token` fetches and renews.

use std::fmt;
use std::sync::RwLock;
use std::time::Duration;

use bytes::Bytes;
use h2sim_proto::{HeaderField, RequestHead};
use serde_json::Value;

use super::scenario::{literal_target, split_uri};

/// Where and how to ask for a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenSpec {
    pub scheme: String,
    pub authority: String,
    pub path: String,
    /// `nfInstanceId`: the requesting NF (the OAuth2 client).
    pub nf_instance_id: Option<String>,
    /// `nfType` of the requester, e.g. `AMF`.
    pub nf_type: Option<String>,
    /// `targetNfType`, e.g. `UDM`.
    pub target_nf_type: Option<String>,
    /// `scope`: service names, e.g. `nudm-sdm nudm-uecm`.
    pub scope: Option<String>,
    /// How long a token request may go unanswered: an endpoint that never
    /// answers must stop the client, not hold it before its run for ever.
    pub wait: Duration,
}

/// How long a token request waits without `--timeout`.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(10);

impl TokenSpec {
    /// `--token-url URL`, the other fields unset.
    pub fn parse(url: &str) -> Result<TokenSpec, String> {
        let (scheme, authority, path) = split_uri(url)?;
        let path = literal_target(&path, &[])
            .map_err(|why| format!("{url:?}: {why}"))?
            .to_owned();
        Ok(TokenSpec {
            scheme,
            authority,
            path,
            nf_instance_id: None,
            nf_type: None,
            target_nf_type: None,
            scope: None,
            wait: DEFAULT_WAIT,
        })
    }

    /// The URL as given to `--token-url`, path included, for messages.
    pub fn url(&self) -> String {
        format!("{}://{}{}", self.scheme, self.authority, self.path)
    }

    /// `scheme://authority`, as the adapters connect to it.
    pub fn origin(&self) -> String {
        format!("{}://{}", self.scheme, self.authority)
    }

    /// The `application/x-www-form-urlencoded` body (RFC 6749 §4.4.2,
    /// Appendix B), with TS 29.510's `AccessTokenReq` fields.
    pub fn form(&self) -> String {
        let mut pairs = vec![("grant_type", "client_credentials")];
        for (name, value) in [
            ("nfInstanceId", &self.nf_instance_id),
            ("nfType", &self.nf_type),
            ("targetNfType", &self.target_nf_type),
            ("scope", &self.scope),
        ] {
            if let Some(value) = value {
                pairs.push((name, value));
            }
        }
        let mut out = String::new();
        for (i, (name, value)) in pairs.into_iter().enumerate() {
            if i > 0 {
                out.push('&');
            }
            form_encode(name, &mut out);
            out.push('=');
            form_encode(value, &mut out);
        }
        out
    }

    /// The token request.
    pub fn request(&self) -> (RequestHead, Bytes) {
        let body = Bytes::from(self.form());
        let mut head = RequestHead::new(
            "POST",
            self.scheme.clone(),
            self.authority.clone(),
            self.path.clone(),
        );
        head.fields.push(HeaderField::new(
            "content-type",
            "application/x-www-form-urlencoded",
        ));
        head.fields
            .push(HeaderField::new("accept", "application/json"));
        head.fields
            .push(HeaderField::new("content-length", body.len().to_string()));
        (head, body)
    }
}

/// Form encoding (the URL standard's application/x-www-form-urlencoded
/// serializer): alphanumerics and `*-._` as they are, space as `+`, every
/// other byte as `%XX`.
fn form_encode(text: &str, out: &mut String) {
    for b in text.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => {
                out.push(char::from(b));
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
}

/// A token the endpoint granted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub access_token: String,
    /// `expires_in`: the token's lifetime, when the endpoint said.
    pub expires_in: Option<Duration>,
}

impl Grant {
    /// When to ask for the next token: after three quarters of the
    /// lifetime (at least 100 ms, so a token of no lifetime is not asked
    /// for in a loop), so the new one is there before the old one expires;
    /// never for a token without `expires_in`. A floor of a second renewed
    /// a one-second token as it expired: a request or two got 401.
    pub fn renew_after(&self) -> Option<Duration> {
        self.expires_in
            .map(|life| (life * 3 / 4).max(Duration::from_millis(100)))
    }
}

/// Why no token came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenError {
    /// The request got no response.
    Transport(String),
    /// No response came within the token request's wait.
    Unanswered(Duration),
    /// The endpoint refused (RFC 6749 §5.2): the status and its `error`.
    Refused { status: u16, error: String },
    /// A 200 whose body is not the JSON of RFC 6749 §5.1.
    Malformed(String),
}

impl fmt::Display for TokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenError::Transport(why) => write!(f, "no answer: {why}"),
            TokenError::Unanswered(wait) => write!(f, "no answer within {wait:?}"),
            TokenError::Refused { status, error } if error.is_empty() => {
                write!(f, "refused with {status}")
            }
            TokenError::Refused { status, error } => write!(f, "refused with {status} {error}"),
            TokenError::Malformed(why) => write!(f, "malformed token response: {why}"),
        }
    }
}

impl std::error::Error for TokenError {}

/// The token response (RFC 6749 §5.1: `access_token`, `token_type`
/// Bearer, `expires_in` in seconds; §5.2 for refusals).
pub fn parse_grant(status: u16, body: &[u8]) -> Result<Grant, TokenError> {
    let json = serde_json::from_slice::<Value>(body).ok();
    if status != 200 {
        let error = json
            .as_ref()
            .and_then(|j| j["error"].as_str())
            .unwrap_or_default()
            .to_owned();
        return Err(TokenError::Refused { status, error });
    }
    let json = json.ok_or_else(|| TokenError::Malformed("body is not JSON".into()))?;
    let access_token = json["access_token"]
        .as_str()
        .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_graphic()))
        .ok_or_else(|| TokenError::Malformed("no usable access_token".into()))?
        .to_owned();
    match json["token_type"].as_str() {
        Some(kind) if kind.eq_ignore_ascii_case("bearer") => {}
        other => {
            return Err(TokenError::Malformed(format!(
                "token_type {other:?}, not Bearer"
            )));
        }
    }
    let expires_in = match &json["expires_in"] {
        Value::Null => None,
        v => Some(Duration::from_secs(v.as_u64().ok_or_else(|| {
            TokenError::Malformed(format!("expires_in {v} is not a number of seconds"))
        })?)),
    };
    Ok(Grant {
        access_token,
        expires_in,
    })
}

/// The `authorization` field of the run, replaced when a token is renewed.
#[derive(Debug)]
pub struct Bearer(RwLock<HeaderField>);

impl Bearer {
    pub fn new(grant: &Grant) -> Bearer {
        Bearer(RwLock::new(field(grant)))
    }

    pub fn renew(&self, grant: &Grant) {
        if let Ok(mut current) = self.0.write() {
            *current = field(grant);
        }
    }

    /// The field to add to a request (two `Bytes` clones).
    pub fn header(&self) -> Option<HeaderField> {
        self.0.read().ok().map(|f| f.clone())
    }
}

fn field(grant: &Grant) -> HeaderField {
    HeaderField::new("authorization", format!("Bearer {}", grant.access_token))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6749 §4.4.2 with TS 29.510's AccessTokenReq fields, form-encoded.
    #[test]
    fn request_is_form_encoded() {
        let mut spec = TokenSpec::parse("http://nrf:8080/oauth2/token").unwrap();
        assert_eq!(spec.url(), "http://nrf:8080/oauth2/token");
        spec.nf_instance_id = Some("5a7b-1".into());
        spec.nf_type = Some("AMF".into());
        spec.target_nf_type = Some("UDM".into());
        spec.scope = Some("nudm-sdm nudm-uecm".into());
        assert_eq!(
            spec.form(),
            "grant_type=client_credentials&nfInstanceId=5a7b-1&nfType=AMF&targetNfType=UDM&scope=nudm-sdm+nudm-uecm"
        );
        let (head, body) = spec.request();
        assert_eq!(&head.method[..], b"POST");
        assert_eq!(&head.path[..], b"/oauth2/token");
        assert_eq!(
            head.get(b"content-type").unwrap(),
            "application/x-www-form-urlencoded"
        );
        assert_eq!(
            head.get(b"content-length").unwrap(),
            body.len().to_string().as_str()
        );
        let mut out = String::new();
        form_encode("a&b=c/é", &mut out);
        assert_eq!(out, "a%26b%3Dc%2F%C3%A9");
    }

    /// RFC 6749 §5.1 and §5.2.
    #[test]
    fn responses() {
        let g = parse_grant(
            200,
            br#"{"access_token":"tok-1","token_type":"Bearer","expires_in":3600,"scope":"nudm-sdm"}"#,
        )
        .unwrap();
        assert_eq!(g.access_token, "tok-1");
        assert_eq!(g.renew_after(), Some(Duration::from_secs(2700)));
        let g = parse_grant(200, br#"{"access_token":"t","token_type":"bearer"}"#).unwrap();
        assert_eq!(g.renew_after(), None);
        assert_eq!(
            Bearer::new(&g).header().unwrap().value,
            "Bearer t".as_bytes()
        );
        assert_eq!(
            parse_grant(400, br#"{"error":"invalid_client"}"#).unwrap_err(),
            TokenError::Refused {
                status: 400,
                error: "invalid_client".into()
            }
        );
        assert_eq!(
            parse_grant(404, b"").unwrap_err().to_string(),
            "refused with 404"
        );
        for bad in [
            &b"nope"[..],
            br#"{"token_type":"Bearer"}"#,
            br#"{"access_token":"a b","token_type":"Bearer"}"#,
            br#"{"access_token":"t","token_type":"mac"}"#,
            br#"{"access_token":"t","token_type":"Bearer","expires_in":"soon"}"#,
        ] {
            assert!(
                matches!(parse_grant(200, bad), Err(TokenError::Malformed(_))),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        let renewed = |life| {
            Grant {
                access_token: "t".into(),
                expires_in: Some(life),
            }
            .renew_after()
        };
        assert_eq!(renewed(Duration::ZERO), Some(Duration::from_millis(100)));
        // Before it expires: a one-second token was renewed as it did.
        assert_eq!(
            renewed(Duration::from_secs(1)),
            Some(Duration::from_millis(750))
        );
    }
}
