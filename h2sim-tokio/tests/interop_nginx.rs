//! Our client against Debian's nginx: HTTP/1.1 with pipelining, HTTP/2
//! with prior knowledge, and TLS with ALPN choosing either protocol. nginx
//! answers `/proto` with the protocol it served, so each test checks the
//! protocol that was really spoken.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::{Command, Stdio};

use common::matrix::{PeerServer, certs, free_port, require, scratch_dir, wait_listening};
use common::*;
use h2sim_tokio::{ClientOptions, ClientProtocol, FetchRequest, fetch};

const NGINX: (&str, &str) = ("nginx", "apt-get install nginx-light");

/// An nginx in the foreground with its own prefix directory (removed
/// after nginx is stopped).
struct Nginx {
    _process: PeerServer,
    /// HTTP/1.1, HTTP/2 prior knowledge, TLS (ALPN h2 and http/1.1).
    ports: (u16, u16, u16),
}

fn nginx(files: usize) -> Nginx {
    require(NGINX.0, NGINX.1);
    let scratch = scratch_dir("nginx");
    let dir = scratch.path();
    let www = dir.join("www");
    std::fs::create_dir_all(www.join("file")).unwrap();
    for i in 0..files {
        std::fs::write(
            www.join("file").join(i.to_string()),
            format!("nginx file {i}\n"),
        )
        .unwrap();
    }
    let ports = (free_port(), free_port(), free_port());
    let d = dir.display();
    let site = |listen: String| {
        format!(
            "server {{ listen {listen}; root {d}/www; \
             location = /proto {{ return 200 \"$server_protocol\\n\"; }} }}\n"
        )
    };
    let crt = certs().join("server-ec.crt");
    let key = certs().join("server-ec.key");
    let conf = format!(
        "daemon off;\nmaster_process off;\nworker_processes 1;\n\
         error_log {d}/error.log;\npid {d}/nginx.pid;\n\
         events {{ worker_connections 256; }}\n\
         http {{\n access_log off;\n keepalive_requests 10000;\n\
         client_body_temp_path {d}/tmp-body;\n proxy_temp_path {d}/tmp-proxy;\n\
         fastcgi_temp_path {d}/tmp-fcgi;\n uwsgi_temp_path {d}/tmp-uwsgi;\n\
         scgi_temp_path {d}/tmp-scgi;\n\
         ssl_certificate {};\n ssl_certificate_key {};\n{}{}{}}}\n",
        crt.display(),
        key.display(),
        site(format!("127.0.0.1:{}", ports.0)),
        site(format!("127.0.0.1:{} http2", ports.1)),
        site(format!("127.0.0.1:{} ssl http2", ports.2)),
    );
    std::fs::write(dir.join("nginx.conf"), conf).unwrap();
    let child = Command::new("nginx")
        .arg("-p")
        .arg(dir)
        .arg("-e")
        .arg(dir.join("error.log"))
        .arg("-c")
        .arg(dir.join("nginx.conf"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let process = PeerServer {
        child,
        port: ports.0,
        dir: Some(scratch),
    };
    for port in [ports.0, ports.1, ports.2] {
        wait_listening(port);
    }
    Nginx {
        _process: process,
        ports,
    }
}

fn tls_options(protocol: ClientProtocol) -> ClientOptions {
    ClientOptions {
        tls: Some(client_tls()),
        protocol,
        ..ClientOptions::default()
    }
}

/// Fetches `/proto` and `count` files; checks every body; returns the
/// protocol nginx says it served.
async fn check(target: &str, scheme: &str, options: ClientOptions, count: usize) -> String {
    let authority = target
        .rsplit_once("//")
        .map_or(target, |(_, a)| a)
        .to_owned();
    let mut requests = vec![FetchRequest::get(scheme, &authority, "/proto")];
    requests
        .extend((0..count).map(|i| FetchRequest::get(scheme, &authority, &format!("/file/{i}"))));
    let results = fetch(target, options, 5, requests).await.unwrap();
    let records: Vec<_> = results
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("request failed: {e}")))
        .collect();
    for (i, record) in records[1..].iter().enumerate() {
        assert_eq!(record.head.status, 200);
        assert_eq!(record.body, format!("nginx file {i}\n"));
    }
    String::from_utf8_lossy(&records[0].body).trim().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http1_pipelined_against_nginx() {
    let nginx = nginx(40);
    let target = format!("127.0.0.1:{}", nginx.ports.0);
    let options = ClientOptions {
        protocol: ClientProtocol::Http1,
        connections: 2,
        ..ClientOptions::default()
    };
    assert_eq!(check(&target, "http", options, 40).await, "HTTP/1.1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_prior_knowledge_against_nginx() {
    let nginx = nginx(40);
    let target = format!("127.0.0.1:{}", nginx.ports.1);
    let options = ClientOptions {
        connections: 2,
        ..ClientOptions::default()
    };
    assert_eq!(check(&target, "http", options, 40).await, "HTTP/2.0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_alpn_against_nginx() {
    let nginx = nginx(20);
    let target = format!("https://localhost:{}", nginx.ports.2);
    let cases = [
        (ClientProtocol::Negotiate, "HTTP/2.0"),
        (ClientProtocol::Http2, "HTTP/2.0"),
        (ClientProtocol::Http1, "HTTP/1.1"),
    ];
    for (protocol, expected) in cases {
        let got = check(&target, "https", tls_options(protocol), 20).await;
        assert_eq!(got, expected, "{protocol:?}");
    }
}
