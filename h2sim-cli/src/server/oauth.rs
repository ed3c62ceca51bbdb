//! OAuth2 as an NRF plays it (TS 33.501 §13.4.1, RFC 6749 §4.4 client
//! credentials): a token endpoint that issues opaque bearer tokens, and
//! the check of rules that require one (RFC 6750). The tokens issued are
//! kept, bounded, for the whole server, so a token from one connection is
//! good on every other until it expires.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use h2sim_proto::{HeaderField, ResponseHead};

use super::problem::{MEDIA_TYPE, Problem, json_response};
use super::request::{Request, form_value};

/// Tokens kept at most; past it, expired ones go, then the oldest.
const MAX_TOKENS: usize = 100_000;

/// A token endpoint rule's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenEndpoint {
    /// `expires_in`, in seconds.
    pub expires_in: u64,
}

impl Default for TokenEndpoint {
    fn default() -> Self {
        TokenEndpoint { expires_in: 3600 }
    }
}

/// The tokens this server issued, with their expiry.
#[derive(Debug, Default)]
pub struct Tokens {
    issued: Mutex<HashMap<String, Instant>>,
}

impl Tokens {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Instant>> {
        self.issued.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn issue(&self, now: Instant, lifetime: Duration) -> String {
        let token = uuid::Uuid::new_v4().simple().to_string();
        let mut issued = self.lock();
        if issued.len() >= MAX_TOKENS {
            issued.retain(|_, expiry| *expiry > now);
            if issued.len() >= MAX_TOKENS
                && let Some(oldest) = issued
                    .iter()
                    .min_by_key(|(_, e)| **e)
                    .map(|(k, _)| k.clone())
            {
                issued.remove(&oldest);
            }
        }
        issued.insert(token.clone(), now + lifetime);
        token
    }

    fn valid(&self, token: &str, now: Instant) -> bool {
        self.lock().get(token).is_some_and(|expiry| *expiry > now)
    }

    /// How many are held.
    pub fn len(&self) -> usize {
        self.lock().len()
    }
}

/// `POST …/oauth2/token`: a form-encoded client credentials grant →
/// `{access_token, token_type: "Bearer", expires_in, scope}` (TS 29.510
/// AccessTokenRsp); anything else the errors of RFC 6749 §5.2.
pub fn token(
    endpoint: &TokenEndpoint,
    tokens: &Tokens,
    request: &Request<'_>,
    now: Instant,
) -> (ResponseHead, Bytes) {
    let form = match std::str::from_utf8(request.body) {
        Ok(form) if request.content_type() == "application/x-www-form-urlencoded" => form,
        _ => return token_error("invalid_request"),
    };
    match form_value(form, "grant_type").as_deref() {
        Some("client_credentials") => {}
        Some(_) => return token_error("unsupported_grant_type"),
        None => return token_error("invalid_request"),
    }
    let token = tokens.issue(now, Duration::from_secs(endpoint.expires_in));
    let mut body = serde_json::json!({
        "access_token": token,
        "token_type": "Bearer",
        "expires_in": endpoint.expires_in,
    });
    if let Some(scope) = form_value(form, "scope") {
        body["scope"] = scope.into_owned().into();
    }
    json_response(
        200,
        "application/json",
        Bytes::from(body.to_string()),
        no_store(),
    )
}

/// RFC 6749 §5.1: token responses are not cached.
fn no_store() -> Vec<HeaderField> {
    vec![
        HeaderField::new("cache-control", "no-store"),
        HeaderField::new("pragma", "no-cache"),
    ]
}

fn token_error(error: &str) -> (ResponseHead, Bytes) {
    let body = serde_json::json!({ "error": error }).to_string();
    json_response(400, "application/json", Bytes::from(body), no_store())
}

/// A rule that requires a token: `None` when the request carries one this
/// server issued and that has not expired, else the 401 to answer with
/// (RFC 6750 §3: `WWW-Authenticate: Bearer`, with `invalid_token` when a
/// token was there but is no good), its body problem details (RFC 9457)
/// as every other error the server makes up (TS 29.500 §5.2.7), never the
/// rule's own fields or an empty body labelled JSON.
pub fn check_bearer(
    tokens: &Tokens,
    request: &Request<'_>,
    now: Instant,
) -> Option<(ResponseHead, Bytes)> {
    let given = request.header("authorization").and_then(|v| {
        let (scheme, token) = v.split_once(' ')?;
        scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
    });
    let (challenge, detail) = match given {
        Some(token) if tokens.valid(token, now) => return None,
        Some(_) => (
            r#"Bearer error="invalid_token""#,
            "the bearer token is not one this server issued, or it has expired",
        ),
        None => ("Bearer", "a bearer token is required (RFC 6750)"),
    };
    let problem = Problem {
        status: 401,
        cause: None,
        title: None,
        detail: Some(detail.to_owned()),
        kind: None,
    };
    Some(json_response(
        401,
        MEDIA_TYPE,
        Bytes::from(problem.json()),
        vec![HeaderField::new("www-authenticate", challenge)],
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use h2sim_proto::RequestHead;

    fn post(media: &str) -> RequestHead {
        let mut head = RequestHead::new("POST", "http", "nrf", "/oauth2/token");
        head.fields
            .push(HeaderField::new("content-type", media.to_owned()));
        head
    }

    /// RFC 6749 §4.4.2/§4.4.3 and §5.1/§5.2; RFC 6750 §3.
    #[test]
    fn issue_then_check() {
        let tokens = Tokens::default();
        let now = Instant::now();
        let endpoint = TokenEndpoint { expires_in: 60 };
        let form = "grant_type=client_credentials&nfInstanceId=a&nfType=AMF&targetNfType=UDM&scope=nudm-sdm";
        let head = post("application/x-www-form-urlencoded");
        let (head, body) = token(
            &endpoint,
            &tokens,
            &Request::new(&head, form.as_bytes()),
            now,
        );
        assert_eq!(head.status, 200);
        assert_eq!(&head.get(b"cache-control").unwrap()[..], b"no-store");
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            (&v["token_type"], &v["expires_in"], &v["scope"]),
            (&"Bearer".into(), &60.into(), &"nudm-sdm".into())
        );
        let access = v["access_token"].as_str().unwrap();

        let mut get = RequestHead::new("GET", "http", "udm", "/nudm-sdm/v2/x/am-data");
        let check = |get: &RequestHead, at| check_bearer(&tokens, &Request::new(get, b""), at);
        let (denied, body) = check(&get, now).unwrap();
        assert_eq!(
            (denied.status, &denied.get(b"www-authenticate").unwrap()[..]),
            (401, &b"Bearer"[..])
        );
        // RFC 9457 §3: problem details, as the server's other errors.
        assert_eq!(
            &denied.get(b"content-type").unwrap()[..],
            b"application/problem+json"
        );
        let problem: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            (&problem["status"], &problem["title"]),
            (&401.into(), &"Unauthorized".into())
        );
        assert_eq!(
            &denied.get(b"content-length").unwrap()[..],
            body.len().to_string().as_bytes()
        );
        get.fields.push(HeaderField::new(
            "authorization",
            format!("Bearer {access}"),
        ));
        assert!(check(&get, now).is_none());
        let (expired, _) = check(&get, now + Duration::from_secs(61)).unwrap();
        assert_eq!(
            &expired.get(b"www-authenticate").unwrap()[..],
            br#"Bearer error="invalid_token""#
        );

        let bad = |form: &str, media: &str| {
            let head = post(media);
            let (head, body) = token(
                &endpoint,
                &tokens,
                &Request::new(&head, form.as_bytes()),
                now,
            );
            let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
            (head.status, v["error"].as_str().unwrap().to_owned())
        };
        assert_eq!(
            bad("grant_type=password", "application/x-www-form-urlencoded"),
            (400, "unsupported_grant_type".into())
        );
        assert_eq!(
            bad("scope=x", "application/x-www-form-urlencoded"),
            (400, "invalid_request".into())
        );
        assert_eq!(
            bad("grant_type=client_credentials", "application/json"),
            (400, "invalid_request".into())
        );
    }
}
