//! The NF examples end to end (issue 13): `h2sim server` with
//! `examples/nrf/rules.yaml` and `examples/udm/rules.yaml`, driven by curl
//! over h2c on both runtimes, with a listener in the test receiving the
//! notifications. Checks every step's status, the bodies, `Location`, the
//! problem details and the notification's body.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use std::sync::{Arc, Mutex};

use h2sim_tokio::{HandlerApp, ListenerSpec, Reply, Server as TokioServer, ServerOptions};
use serde_json::{Value, json};
use server_support::{Server, run};

fn example(name: &str) -> String {
    format!("{}/examples/{name}/rules.yaml", env!("CARGO_MANIFEST_DIR"))
}

fn start(runtime: &str, rules: &str) -> Server {
    let flags = ["-q", "-S", "http://127.0.0.1:0", "--rules", rules];
    Server::on_runtime(runtime, std::path::Path::new("."), &flags, 1)
}

/// One response as curl saw it.
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// `curl --http2-prior-knowledge` with a method, fields and a body.
fn curl(method: &str, url: &str, headers: &[&str], body: Option<&str>) -> Response {
    let mut args = vec![
        "-s",
        "--http2-prior-knowledge",
        "-D",
        "-",
        "-X",
        method,
        url,
    ];
    for h in headers {
        args.extend(["-H", h]);
    }
    if let Some(b) = body {
        args.extend(["--data-binary", b]);
    }
    let (code, out) = run("curl", &args);
    assert_eq!(code, Some(0), "curl {args:?}: {out}");
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {out:?}"));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Response {
        status,
        headers,
        body: serde_json::from_str(body).unwrap_or(Value::Null),
    }
}

/// A notification the listener received: path, fields, body.
type Received = (String, Vec<(String, String)>, Value);

/// An h2c listener answering 204 and keeping what it got.
fn listener() -> (String, Arc<Mutex<Vec<Received>>>, h2sim_tokio::Shutdown) {
    let got: Arc<Mutex<Vec<Received>>> = Arc::default();
    let (tx, rx) = std::sync::mpsc::channel();
    let kept = got.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let server = TokioServer::bind(
                vec![ListenerSpec::plain("127.0.0.1:0").unwrap()],
                ServerOptions::default(),
            )
            .await
            .unwrap();
            tx.send((server.local_addrs()[0].0, server.shutdown()))
                .unwrap();
            server
                .run(move |_| {
                    let kept = kept.clone();
                    HandlerApp::new(move |req| {
                        let fields = req
                            .head
                            .fields
                            .iter()
                            .map(|f| {
                                (
                                    String::from_utf8_lossy(&f.name).into_owned(),
                                    String::from_utf8_lossy(&f.value).into_owned(),
                                )
                            })
                            .collect();
                        let body = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
                        let path = String::from_utf8_lossy(&req.head.path).into_owned();
                        kept.lock().unwrap().push((path, fields, body));
                        Reply::new(204, "")
                    })
                })
                .await;
        });
    });
    let (addr, shutdown) = rx.recv().unwrap();
    (format!("http://{addr}"), got, shutdown)
}

/// Waits for the `n`th notification (the harness's timeout bounds a hang).
fn nth(got: &Mutex<Vec<Received>>, n: usize) -> Received {
    loop {
        if let Some(r) = got.lock().unwrap().get(n) {
            return r.clone();
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

const JSON: &str = "content-type: application/json";

/// The NRF flow of TS 29.510: register, heartbeat, discover, subscribe
/// (and get notified), unsubscribe, deregister.
fn nrf_flow(runtime: &str) {
    let (callback, got, stop_listener) = listener();
    let server = start(runtime, &example("nrf"));
    let base = server.url("http").to_owned();
    let id = "4947a69a-f61b-4bc1-b9da-47c9c5d14b64";
    let item = format!("{base}/nnrf-nfm/v1/nf-instances/{id}");
    let profile = json!({"nfInstanceId": id, "nfType": "UDM", "nfStatus": "REGISTERED",
                         "heartBeatTimer": 10, "ipv4Addresses": ["10.0.0.1"]});

    // Register: 201, Location, the profile; again: 200.
    let r = curl("PUT", &item, &[JSON], Some(&profile.to_string()));
    assert_eq!(r.status, 201);
    assert_eq!(r.header("location"), Some(item.as_str()));
    assert_eq!(r.body, profile);
    assert_eq!(
        curl("PUT", &item, &[JSON], Some(&profile.to_string())).status,
        200
    );
    // Another type, for discovery to leave out.
    let ausf = format!("{base}/nnrf-nfm/v1/nf-instances/a-1");
    let r = curl(
        "PUT",
        &ausf,
        &[JSON],
        Some(r#"{"nfInstanceId":"a-1","nfType":"AUSF"}"#),
    );
    assert_eq!(r.status, 201);

    // Heartbeat: a JSON Patch (RFC 6902), 204; the profile changed.
    let patch = r#"[{"op":"replace","path":"/nfStatus","value":"SUSPENDED"}]"#;
    let r = curl(
        "PATCH",
        &item,
        &["content-type: application/json-patch+json"],
        Some(patch),
    );
    assert_eq!(r.status, 204);
    assert_eq!(curl("GET", &item, &[], None).body["nfStatus"], "SUSPENDED");

    // Discovery with query parameters.
    let r = curl(
        "GET",
        &format!("{base}/nnrf-disc/v1/nf-instances?target-nf-type=UDM&requester-nf-type=AMF"),
        &[],
        None,
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.body["validityPeriod"], 3600);
    assert_eq!(r.body["nfInstances"].as_array().unwrap().len(), 1);
    assert_eq!(r.body["nfInstances"][0]["nfInstanceId"], id);
    let r = curl(
        "GET",
        &format!("{base}/nnrf-disc/v1/nf-instances"),
        &[],
        None,
    );
    assert_eq!(
        (r.status, &r.body["cause"]),
        (400, &json!("MANDATORY_QUERY_PARAM_MISSING"))
    );
    assert_eq!(r.header("content-type"), Some("application/problem+json"));

    // Subscribe: 201, Location with the generated subscriptionId, then
    // the notification at the callback.
    let sub = json!({"nfStatusNotificationUri": format!("{callback}/nf-status"),
                     "reqNotifEvents": ["NF_REGISTERED", "NF_DEREGISTERED"],
                     "subscrCond": {"nfInstanceId": id}});
    let r = curl(
        "POST",
        &format!("{base}/nnrf-nfm/v1/subscriptions"),
        &[JSON],
        Some(&sub.to_string()),
    );
    assert_eq!(r.status, 201);
    let sub_id = r.body["subscriptionId"].as_str().unwrap().to_owned();
    let sub_item = format!("{base}/nnrf-nfm/v1/subscriptions/{sub_id}");
    assert_eq!(r.header("location"), Some(sub_item.as_str()));
    let (path, fields, body) = nth(&got, 0);
    assert_eq!(path, "/nf-status");
    assert!(fields.contains(&(
        "3gpp-sbi-callback".into(),
        "Nnrf_NFManagement_NFStatusNotify".into()
    )));
    assert_eq!(
        body,
        json!({"event": "NF_REGISTERED", "nfInstanceUri": format!("/nnrf-nfm/v1/nf-instances/{id}"),
               "subscriptionId": sub_id})
    );
    let r = curl(
        "POST",
        &format!("{base}/nnrf-nfm/v1/subscriptions"),
        &[JSON],
        Some("{}"),
    );
    assert_eq!(
        (r.status, &r.body["cause"]),
        (400, &json!("MANDATORY_IE_MISSING"))
    );

    // Unsubscribe, deregister: 204; then 404 problem details.
    assert_eq!(curl("DELETE", &sub_item, &[], None).status, 204);
    assert_eq!(curl("DELETE", &item, &[], None).status, 204);
    let r = curl("GET", &item, &[], None);
    assert_eq!(
        (r.status, &r.body["cause"]),
        (404, &json!("RESOURCE_CONTEXT_NOT_FOUND"))
    );

    let (code, out) = server.stop();
    stop_listener.trigger();
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("store: 1 items"), "{out}");
    assert!(
        out.contains("notifications: 1 queued, 1 sent, 1 answered (1 2xx), 0 failed"),
        "{out}"
    );
}

/// The UDM flow of TS 29.503: token, registration, data behind the token,
/// SDM subscription and its notification, unsubscribe.
fn udm_flow(runtime: &str) {
    let (callback, got, stop_listener) = listener();
    let server = start(runtime, &example("udm"));
    let base = server.url("http").to_owned();
    let supi = "imsi-001010000000001";

    let reg = format!("{base}/nudm-uecm/v1/{supi}/registrations/amf-3gpp-access");
    let body = json!({"amfInstanceId": "a-1", "deregCallbackUri": format!("{callback}/dereg"),
                      "guami": {"plmnId": {"mcc": "001", "mnc": "01"}, "amfId": "010041"},
                      "ratType": "NR"})
    .to_string();
    let r = curl("PUT", &reg, &[JSON], Some(&body));
    assert_eq!((r.status, r.header("location")), (201, Some(reg.as_str())));
    assert_eq!(curl("PUT", &reg, &[JSON], Some(&body)).status, 200);

    // No token: 401 with the challenge (RFC 6750 §3) and problem
    // details (RFC 9457), as the server's other errors.
    let am = format!("{base}/nudm-sdm/v2/{supi}/am-data");
    let r = curl("GET", &am, &[], None);
    assert_eq!(
        (r.status, r.header("www-authenticate")),
        (401, Some("Bearer"))
    );
    assert_eq!(
        (r.header("content-type"), &r.body["status"]),
        (Some("application/problem+json"), &json!(401))
    );
    let r = curl(
        "POST",
        &format!("{base}/oauth2/token"),
        &["content-type: application/x-www-form-urlencoded"],
        Some(
            "grant_type=client_credentials&nfInstanceId=a-1&nfType=AMF&targetNfType=UDM&scope=nudm-sdm",
        ),
    );
    assert_eq!(
        (r.status, &r.body["token_type"], &r.body["expires_in"]),
        (200, &json!("Bearer"), &json!(600))
    );
    let bearer = format!(
        "authorization: Bearer {}",
        r.body["access_token"].as_str().unwrap()
    );
    let r = curl("GET", &am, &[&bearer], None);
    assert_eq!(
        (r.status, &r.body["supi"], &r.body["gpsis"][0]),
        (200, &json!(supi), &json!("msisdn-1"))
    );

    let subs = format!("{base}/nudm-sdm/v2/{supi}/sdm-subscriptions");
    let sub = json!({"nfInstanceId": "a-1", "callbackReference": format!("{callback}/sdm"),
                     "monitoredResourceUris": [format!("/nudm-sdm/v2/{supi}/am-data")]});
    let r = curl("POST", &subs, &[JSON], Some(&sub.to_string()));
    assert_eq!(r.status, 201);
    let sub_id = r.body["subscriptionId"].as_str().unwrap().to_owned();
    assert_eq!(
        r.header("location"),
        Some(format!("{subs}/{sub_id}").as_str())
    );
    let (path, _, body) = nth(&got, 0);
    assert_eq!(path, "/sdm");
    assert_eq!(body["subscriptionId"], json!(sub_id));
    assert_eq!(
        body["notifyItems"][0]["resourceId"],
        json!(format!("/nudm-sdm/v2/{supi}/am-data"))
    );
    assert_eq!(
        curl("DELETE", &format!("{subs}/{sub_id}"), &[], None).status,
        204
    );
    let r = curl("GET", &format!("{base}/nope"), &[], None);
    assert_eq!(
        (r.status, &r.body["cause"]),
        (404, &json!("RESOURCE_URI_STRUCTURE_NOT_FOUND"))
    );

    let (code, out) = server.stop();
    stop_listener.trigger();
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("tokens: 1 held"), "{out}");
}

/// Notifications that cannot go are counted as queued and failed, so
/// that queued = answered + failed, and each is named with its URI and
/// why, even with -q: no URI from the template, a URI that is none, a
/// callback that refuses the connection.
fn notification_failures(runtime: &str) {
    let dir = server_support::scratch_dir("notify-failures");
    let rules = dir.path().join("rules.yaml");
    std::fs::write(
        &rules,
        "rule:\n  - method: POST\n    path: /sub\n    status: 201\n    notify:\n      - uri: ${body/cb}\n        text: hi\n",
    )
    .unwrap();
    let server = start(runtime, rules.to_str().unwrap());
    let url = format!("{}/sub", server.url("http"));
    for body in [
        r#"{"tag":"nocb"}"#,
        r#"{"cb":"not a uri"}"#,
        r#"{"cb":"http://127.0.0.1:1/x"}"#,
    ] {
        assert_eq!(curl("POST", &url, &[], Some(body)).status, 201);
    }
    server.wait_for("notification to http://127.0.0.1:1/x failed");
    let (code, out) = server.stop();
    assert_eq!(code, Some(0), "{out}");
    for line in [
        "h2sim server: notification to \"\" failed: its URI template gave nothing",
        "h2sim server: notification to \"not a uri\" failed: not an absolute http:// or https:// URI",
        "h2sim server: notification to http://127.0.0.1:1/x failed: cannot connect to 127.0.0.1:1",
        "notifications: 3 queued, 0 sent, 0 answered (0 2xx), 3 failed",
    ] {
        assert!(out.contains(line), "{runtime}: {line}: {out}");
    }
}

#[test]
fn notification_failures_on_tokio() {
    notification_failures("tokio");
}

#[test]
fn notification_failures_on_glommio() {
    notification_failures("glommio");
}

#[test]
fn nrf_example_on_tokio() {
    nrf_flow("tokio");
}

#[test]
fn nrf_example_on_glommio() {
    nrf_flow("glommio");
}

#[test]
fn udm_example_on_tokio() {
    udm_flow("tokio");
}

#[test]
fn udm_example_on_glommio() {
    udm_flow("glommio");
}
