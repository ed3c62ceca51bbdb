//! Resource and list rules: HTTP's resource semantics over the shared
//! [`Store`], as TS 29.500 and TS 29.501 use them.
//!
//! On a collection (`/nnrf-nfm/v1/subscriptions`) and its items
//! (`…/subscriptions/{id}`): POST on the collection creates (the id from
//! the body at a JSON Pointer, or a new UUID written there) and answers
//! 201 with `Location` and the stored body; PUT on an item creates (201)
//! or replaces (200); GET reads an item (404 problem details when absent)
//! or lists the collection, and so does a HEAD, which the rules hand over
//! as a GET ([`Request::as_get`]); PATCH applies a JSON Merge Patch (RFC 7396) or
//! a JSON Patch (RFC 6902) by content type; DELETE removes (204). A full
//! store refuses with 507 and problem details.

use std::borrow::Cow;

use bytes::Bytes;
use h2sim_proto::{HeaderField, ResponseHead};
use serde_json::Value;

use super::problem::{Problem, json_response};
use super::request::Request;
use super::store::{Put, Store};
use crate::json_pointer;

const JSON: &str = "application/json";
const MERGE_PATCH: &str = "application/merge-patch+json";
const JSON_PATCH: &str = "application/json-patch+json";

/// A resource rule's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// Where a POSTed body holds its id (`/subscriptionId`); absent from
    /// the body, a new UUID v4 is put there. `None`: ids are UUIDs only.
    pub id: Option<String>,
    /// The answer to a PATCH: 200 with the patched body, or 204.
    pub patch_status: u16,
}

impl Default for Resource {
    fn default() -> Self {
        Resource {
            id: None,
            patch_status: 200,
        }
    }
}

/// A list rule's settings: GET on any path lists a collection, e.g.
/// discovery (`/nnrf-disc/v1/nf-instances?target-nf-type=UDM`) over what
/// registrations stored under `/nnrf-nfm/v1/nf-instances`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct List {
    /// The collection's path; placeholders allowed.
    pub collection: String,
    /// Query parameter → JSON Pointer: with the parameter in the request,
    /// only items whose value there equals it (or, for an array, holds
    /// it) are listed.
    pub filter: Vec<(String, String)>,
}

/// The answer to one request, and the id of the item it concerned.
#[derive(Debug)]
pub struct Answered {
    pub head: ResponseHead,
    pub body: Bytes,
    pub id: Option<String>,
}

impl From<(ResponseHead, Bytes)> for Answered {
    fn from((head, body): (ResponseHead, Bytes)) -> Self {
        Answered {
            head,
            body,
            id: None,
        }
    }
}

/// Answers `request` on `collection` (the request path's part that names
/// it) and, when the path goes on, the item `id`.
pub fn handle(
    resource: &Resource,
    store: &Store,
    request: &Request<'_>,
    collection: &str,
    id: Option<&str>,
) -> Answered {
    let collection = collection.trim_end_matches('/');
    let method = request.method;
    let Some(id) = id else {
        return match method {
            b"POST" => create(resource, store, request, collection),
            b"GET" => {
                json_response(200, JSON, list_json(store.list(collection)), Vec::new()).into()
            }
            _ => not_allowed("POST, GET, HEAD"),
        };
    };
    let key = format!("{collection}/{id}");
    let mut answered: Answered = match method {
        b"GET" => match store.get(&key) {
            Some(body) => json_response(200, JSON, body, Vec::new()).into(),
            None => absent(&key),
        },
        b"PUT" => match body_json(request) {
            Ok(value) => store_item(store, request, key.clone(), value),
            Err(problem) => problem,
        },
        b"PATCH" => patch(resource, store, request, &key),
        b"DELETE" => match store.remove(&key) {
            true => json_response(204, JSON, Bytes::new(), Vec::new()).into(),
            false => absent(&key),
        },
        _ => not_allowed("GET, HEAD, PUT, PATCH, DELETE"),
    };
    answered.id = Some(id.to_owned());
    answered
}

fn create(resource: &Resource, store: &Store, request: &Request<'_>, collection: &str) -> Answered {
    let value = match body_json(request) {
        Ok(v) => v,
        Err(problem) => return problem,
    };
    let given = resource
        .id
        .as_deref()
        .and_then(|p| value.pointer(p))
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty() && !id.contains('/'))
        .map(str::to_owned);
    let (id, value) = match given {
        Some(id) => (id, Cow::Borrowed(value)),
        None => {
            let id = uuid::Uuid::new_v4().to_string();
            // The body is copied only to write the new id into it.
            let mut value = Cow::Borrowed(value);
            if let Some(pointer) = &resource.id {
                set_pointer(value.to_mut(), pointer, Value::String(id.clone()));
            }
            (id, value)
        }
    };
    let mut answered = store_item(store, request, format!("{collection}/{id}"), &value);
    answered.id = Some(id);
    answered
}

/// Stores `value` at `key`: 201 with `Location` when new, 200 when
/// replaced, 507 when the store is full.
fn store_item(store: &Store, request: &Request<'_>, key: String, value: &Value) -> Answered {
    let body = json_bytes(value);
    let location = location(request, &key);
    match store.put(key, body.clone()) {
        Ok(Put::Created) => json_response(
            201,
            JSON,
            body,
            vec![HeaderField::new("location", location)],
        )
        .into(),
        Ok(Put::Replaced) => json_response(200, JSON, body, Vec::new()).into(),
        Err(full) => Problem::new(507, "INSUFFICIENT_RESOURCES", full.to_string())
            .response()
            .into(),
    }
}

fn patch(resource: &Resource, store: &Store, request: &Request<'_>, key: &str) -> Answered {
    let media = request.content_type();
    if media != MERGE_PATCH && media != JSON_PATCH {
        // RFC 5789 §2.2: 415, and `Accept-Patch` says what would do.
        let (mut head, body) = Problem::new(
            415,
            "UNSUPPORTED_MEDIA_TYPE",
            format!("PATCH takes {MERGE_PATCH} or {JSON_PATCH}"),
        )
        .response();
        head.fields.push(HeaderField::new(
            "accept-patch",
            format!("{MERGE_PATCH}, {JSON_PATCH}"),
        ));
        return (head, body).into();
    }
    let Some(patch) = request.json() else {
        return invalid("the PATCH body is not JSON");
    };
    let outcome = store.update(key, |old| {
        let mut doc: Value = serde_json::from_slice(old).map_err(|e| e.to_string())?;
        if media == MERGE_PATCH {
            json_patch::merge(&mut doc, patch);
        } else {
            let ops: json_patch::Patch = serde_json::from_value(patch.clone())
                .map_err(|e| format!("not a JSON Patch: {e}"))?;
            json_patch::patch(&mut doc, &ops).map_err(|e| format!("conflict: {e}"))?;
        }
        Ok::<_, String>(json_bytes(&doc))
    });
    match outcome {
        None => absent(key),
        // RFC 5789 §2.2: a patch that cannot apply to the resource is 409.
        Some(Err(why)) if why.starts_with("conflict") => {
            Problem::new(409, "MODIFICATION_NOT_ALLOWED", why)
                .response()
                .into()
        }
        Some(Err(why)) => invalid(&why),
        Some(Ok(Err(full))) => Problem::new(507, "INSUFFICIENT_RESOURCES", full.to_string())
            .response()
            .into(),
        Some(Ok(Ok(body))) => json_response(resource.patch_status, JSON, body, Vec::new()).into(),
    }
}

/// GET of a list rule: the collection's items, filtered by the query.
pub fn list(rule: &List, store: &Store, request: &Request<'_>, collection: &str) -> Bytes {
    let wanted: Vec<(String, &str, Option<usize>)> = rule
        .filter
        .iter()
        .filter_map(|(query, pointer)| {
            let want = request.query(query)?.into_owned();
            Some((want, pointer.as_str(), store.indexed(pointer)))
        })
        .collect();
    if wanted.is_empty() {
        return list_json(store.list(collection));
    }
    // Each item's values at the filters' pointers were read out when it
    // was stored (the server indexes every list rule's); a pointer the
    // store does not index is read from the item's text, not parsed into
    // a tree: discovery looks at every stored profile on every request.
    let kept = store.list_where(collection, |body, values| {
        wanted.iter().all(|(want, pointer, at)| {
            let found = match at {
                Some(at) => values.get(*at).and_then(Option::as_deref),
                None => json_pointer::find_in(body, pointer),
            };
            found.is_some_and(|found| json_pointer::holds(found, want))
        })
    });
    list_json(kept)
}

/// Stored JSON bodies as one JSON array, without parsing them again.
fn list_json(items: Vec<Bytes>) -> Bytes {
    let mut out = Vec::with_capacity(2 + items.iter().map(|i| i.len() + 1).sum::<usize>());
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(item);
    }
    out.push(b']');
    Bytes::from(out)
}

/// The absolute URI of `path` on the server the request reached (TS 29.501
/// §4.4.1: `Location` carries the resource's URI).
fn location(request: &Request<'_>, path: &str) -> String {
    let head = request.head;
    if head.authority.is_empty() {
        return path.to_owned();
    }
    let scheme = if head.scheme.is_empty() {
        "http".into()
    } else {
        String::from_utf8_lossy(&head.scheme)
    };
    format!(
        "{scheme}://{}{path}",
        String::from_utf8_lossy(&head.authority)
    )
}

fn body_json<'r>(request: &'r Request<'_>) -> Result<&'r Value, Answered> {
    request
        .json()
        .ok_or_else(|| invalid("the body is not JSON"))
}

/// `value` as compact JSON, written straight into its buffer (not through
/// `Display`, whose formatter adapter costs a call per piece).
fn json_bytes(value: &Value) -> Bytes {
    // A `Value` always serializes: its keys are strings.
    Bytes::from(serde_json::to_vec(value).unwrap_or_default())
}

/// Sets `value` at `pointer` when its parent is an object.
fn set_pointer(doc: &mut Value, pointer: &str, value: Value) {
    let Some((parent, name)) = pointer.rsplit_once('/') else {
        return;
    };
    let name = name.replace("~1", "/").replace("~0", "~");
    if let Some(Value::Object(map)) = doc.pointer_mut(parent) {
        map.insert(name, value);
    }
}

fn absent(key: &str) -> Answered {
    Problem::new(
        404,
        "RESOURCE_CONTEXT_NOT_FOUND",
        format!("no resource at {key}"),
    )
    .response()
    .into()
}

fn invalid(why: &str) -> Answered {
    Problem::new(400, "INVALID_MSG_FORMAT", why)
        .response()
        .into()
}

fn not_allowed(allow: &str) -> Answered {
    let (mut head, body) = Problem::new(405, "INVALID_API", "method not allowed here").response();
    head.fields
        .push(HeaderField::new("allow", allow.to_owned()));
    (head, body).into()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use h2sim_proto::RequestHead;
    use serde_json::json;

    fn call(
        store: &Store,
        resource: &Resource,
        method: &str,
        path: &str,
        media: &str,
        body: &str,
    ) -> (u16, Value, Option<String>) {
        let mut head = RequestHead::new(method.to_owned(), "http", "nrf:8080", path.to_owned());
        head.fields
            .push(HeaderField::new("content-type", media.to_owned()));
        let request = Request::new(&head, body.as_bytes());
        let collection = "/nnrf-nfm/v1/subscriptions";
        let id = path
            .strip_prefix(collection)
            .and_then(|r| r.strip_prefix('/'));
        let a = handle(resource, store, &request, collection, id);
        let location = a
            .head
            .get(b"location")
            .map(|l| String::from_utf8_lossy(l).into_owned());
        let value = serde_json::from_slice(&a.body).unwrap_or(Value::Null);
        (a.head.status, value, location)
    }

    /// TS 29.510 §5.2.2.5: subscribe (201, Location, subscriptionId),
    /// read, patch both ways, list, unsubscribe (204), then 404.
    #[test]
    fn a_subscription_lifecycle() {
        let store = Store::default();
        let r = Resource {
            id: Some("/subscriptionId".into()),
            patch_status: 200,
        };
        let c = "/nnrf-nfm/v1/subscriptions";
        let (status, body, location) = call(
            &store,
            &r,
            "POST",
            c,
            JSON,
            r#"{"nfStatusNotificationUri":"http://amf/n"}"#,
        );
        assert_eq!(status, 201);
        let id = body["subscriptionId"].as_str().unwrap().to_owned();
        assert_eq!(uuid::Uuid::parse_str(&id).unwrap().get_version_num(), 4);
        assert_eq!(location.unwrap(), format!("http://nrf:8080{c}/{id}"));
        let item = format!("{c}/{id}");
        assert_eq!(call(&store, &r, "GET", &item, JSON, "").1, body);

        // RFC 7396 §2: null removes, objects merge.
        let (status, patched, _) = call(
            &store,
            &r,
            "PATCH",
            &item,
            MERGE_PATCH,
            r#"{"validityTime":"2030-01-01T00:00:00Z","nfStatusNotificationUri":null}"#,
        );
        assert_eq!(status, 200);
        assert_eq!(
            patched,
            json!({"subscriptionId": id, "validityTime": "2030-01-01T00:00:00Z"})
        );
        // RFC 6902 §4.3 replace; §4.6 a failed test is an error: 409.
        let (status, patched, _) = call(
            &store,
            &r,
            "PATCH",
            &item,
            JSON_PATCH,
            r#"[{"op":"replace","path":"/validityTime","value":"x"}]"#,
        );
        assert_eq!((status, &patched["validityTime"]), (200, &json!("x")));
        let (status, problem, _) = call(
            &store,
            &r,
            "PATCH",
            &item,
            JSON_PATCH,
            r#"[{"op":"test","path":"/validityTime","value":"y"}]"#,
        );
        assert_eq!(
            (status, &problem["cause"]),
            (409, &json!("MODIFICATION_NOT_ALLOWED"))
        );
        assert_eq!(call(&store, &r, "PATCH", &item, "text/plain", "{}").0, 415);
        assert_eq!(
            call(&store, &r, "GET", c, JSON, "")
                .1
                .as_array()
                .unwrap()
                .len(),
            1
        );

        assert_eq!(call(&store, &r, "DELETE", &item, JSON, "").0, 204);
        let (status, problem, _) = call(&store, &r, "GET", &item, JSON, "");
        assert_eq!(
            (status, &problem["cause"]),
            (404, &json!("RESOURCE_CONTEXT_NOT_FOUND"))
        );
        assert_eq!(call(&store, &r, "DELETE", &item, JSON, "").0, 404);
    }

    #[test]
    fn put_creates_then_replaces_and_bad_bodies_are_400() {
        let store = Store::default();
        let r = Resource::default();
        let item = "/nnrf-nfm/v1/subscriptions/abc";
        assert_eq!(call(&store, &r, "PUT", item, JSON, r#"{"a":1}"#).0, 201);
        assert_eq!(call(&store, &r, "PUT", item, JSON, r#"{"a":2}"#).0, 200);
        assert_eq!(call(&store, &r, "PUT", item, JSON, "nope").0, 400);
        assert_eq!(call(&store, &r, "POST", item, JSON, "{}").0, 405);
        let (_, body, _) = call(
            &store,
            &r,
            "POST",
            "/nnrf-nfm/v1/subscriptions",
            JSON,
            r#"{"a":3}"#,
        );
        assert_eq!(
            body,
            json!({"a": 3}),
            "without an id pointer the body stays as sent"
        );
    }

    #[test]
    fn a_full_store_answers_507() {
        let store = Store::new(crate::server::store::Limits {
            max_items: 1,
            max_bytes: 1000,
        });
        let r = Resource::default();
        assert_eq!(
            call(
                &store,
                &r,
                "PUT",
                "/nnrf-nfm/v1/subscriptions/a",
                JSON,
                "{}"
            )
            .0,
            201
        );
        let (status, problem, _) = call(
            &store,
            &r,
            "PUT",
            "/nnrf-nfm/v1/subscriptions/b",
            JSON,
            "{}",
        );
        assert_eq!(
            (status, &problem["cause"]),
            (507, &json!("INSUFFICIENT_RESOURCES"))
        );
    }

    #[test]
    fn lists_filter_by_query() {
        let store = Store::default();
        store
            .put(
                "/nf/1".into(),
                Bytes::from_static(br#"{"nfType":"UDM","s":["a","b"]}"#),
            )
            .unwrap();
        store
            .put(
                "/nf/2".into(),
                Bytes::from_static(br#"{"nfType":"AUSF","s":["a"]}"#),
            )
            .unwrap();
        let rule = List {
            collection: "/nf".into(),
            filter: vec![
                ("target-nf-type".into(), "/nfType".into()),
                ("service".into(), "/s".into()),
            ],
        };
        let get = |path: &str| {
            let head = RequestHead::new("GET", "http", "h", path.to_owned());
            let body = list(&rule, &store, &Request::new(&head, b""), "/nf");
            serde_json::from_slice::<Value>(&body)
                .unwrap()
                .as_array()
                .unwrap()
                .len()
        };
        assert_eq!(get("/disc?target-nf-type=UDM"), 1);
        assert_eq!(get("/disc?service=a"), 2);
        assert_eq!(get("/disc?service=b&target-nf-type=AUSF"), 0);
        assert_eq!(get("/disc"), 2);
    }
}
