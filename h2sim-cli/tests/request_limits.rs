//! Servers that end a connection after so many requests, as nginx does
//! every `keepalive_requests` (1,000 by default): the requests the client
//! had sent past the last one were not processed, above the last stream
//! of the server's GOAWAY (RFC 9113 §6.8) or pipelined behind its
//! `connection: close` (RFC 9112 §9.6). h2sim's client sends them again on
//! a new connection and none fails; h2sim's server plays such a server
//! with `--requests-per-connection`, for curl and h2sim's client.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use std::path::Path;
use std::process::Command;

use server_support::{
    PeerServer, Server, certs, client_succeeds_over, count, free_port, moved_on, run, scratch_dir,
    verify_test_ca,
};

const RUNTIMES: [&str; 2] = ["tokio", "glommio"];

/// nginx in the foreground, ending every connection after 100 requests,
/// answering `/1k` with 1 KiB on `ports`: HTTP/1.1, HTTP/2 with prior
/// knowledge, TLS with ALPN h2.
fn nginx(dir: &Path, ports: [u16; 3]) -> PeerServer {
    let www = dir.join("www");
    std::fs::create_dir_all(&www).unwrap();
    std::fs::write(www.join("1k"), [b'a'; 1024]).unwrap();
    let d = dir.display();
    let certs = certs();
    let [h1, h2c, tls] = ports;
    let config = format!(
        "daemon off;\nmaster_process off;\nworker_processes 1;\n\
         error_log {d}/error.log;\npid {d}/nginx.pid;\n\
         events {{ worker_connections 256; }}\n\
         http {{\n access_log off;\n keepalive_requests 100;\n\
         client_body_temp_path {d}/tmp-body;\n proxy_temp_path {d}/tmp-proxy;\n\
         fastcgi_temp_path {d}/tmp-fcgi;\n uwsgi_temp_path {d}/tmp-uwsgi;\n\
         scgi_temp_path {d}/tmp-scgi;\n\
         ssl_certificate {};\n ssl_certificate_key {};\n\
         server {{ listen 127.0.0.1:{h1}; listen 127.0.0.1:{h2c} http2; \
         listen 127.0.0.1:{tls} ssl http2; root {d}/www; }}\n}}\n",
        certs.join("server-ec.crt").display(),
        certs.join("server-ec.key").display(),
    );
    let file = dir.join("nginx.conf");
    std::fs::write(&file, config).unwrap();
    let mut command = Command::new("nginx");
    command
        .arg("-p")
        .arg(dir)
        .arg("-e")
        .arg(dir.join("error.log"))
        .arg("-c")
        .arg(&file);
    PeerServer::listening(command, &ports, "nginx (Debian's nginx-light)")
}

/// 2,000 requests, 13 at once, against nginx's 100 per connection: some
/// of every connection's requests reach it after its last, and go again.
/// `h2load -m 10` fails them over HTTP/1.1 and, opening no new connection
/// after a GOAWAY, everything past the first 100 over HTTP/2. Not 10 at
/// once: a client and a server that each took their ten in one read and
/// answered them in one write met the 100th answer at the end of a round,
/// with nothing sent after it, and so nothing to send again (a slow debug
/// build did, now and then); 13 rounds end at 91 and 104.
#[test]
fn the_client_sends_again_what_nginx_did_not_process() {
    let dir = scratch_dir("request-limits-nginx");
    let ports = [free_port(), free_port(), free_port()];
    let _nginx = nginx(dir.path(), ports);
    let verify = verify_test_ca();
    let [h1, h2c, tls] = ports.map(|p| p.to_string());
    let h1 = format!("http://127.0.0.1:{h1}/1k");
    let h2c = format!("http://127.0.0.1:{h2c}/1k");
    let tls = format!("https://127.0.0.1:{tls}/1k");
    for runtime in RUNTIMES {
        for (args, protocol) in [
            (vec!["-1", "-P", "13", &h1], "http/1.1"),
            (vec!["-P", "13", &h2c], "h2c"),
            (vec!["-V", &verify, "-P", "13", &tls], "h2"),
        ] {
            let report = client_succeeds_over(runtime, protocol, &args, 2_000, 2_048_000);
            moved_on(&report, 20);
        }
    }
}

/// `h2sim server --requests-per-connection 37` against h2sim's client over
/// h2c, TLS and pipelined HTTP/1.1, 10 at once (so that connections do not
/// end between two rounds of 10): every request is taken once, on
/// connections of 37; and curl, given three URLs, moves to a new
/// connection after each GOAWAY of `--requests-per-connection 1`.
#[test]
fn the_server_ends_connections_at_its_request_limit() {
    let dir = scratch_dir("request-limits-server");
    let verify = verify_test_ca();
    let key = certs().join("server-ec.key");
    let crt = certs().join("server-ec.crt");
    let (key, crt) = (key.to_str().unwrap(), crt.to_str().unwrap());
    for runtime in RUNTIMES {
        let server = Server::on_runtime(
            runtime,
            dir.path(),
            &[
                "-q",
                "--requests-per-connection",
                "37",
                "-S",
                "http://127.0.0.1:0",
                "-k",
                key,
                "-c",
                crt,
                "-S",
                "https://127.0.0.1:0",
                "-m",
                "GET",
                "-p",
                "/1k",
                "-s",
                "200",
                "-e",
                "1k",
            ],
            2,
        );
        let plain = format!("{}/1k", server.url("http"));
        let secure = format!("{}/1k", server.url("https"));
        for (args, protocol) in [
            (vec!["-P", "10", &plain], "h2c"),
            (vec!["-1", "-P", "10", &plain], "http/1.1"),
            (vec!["-V", &verify, "-P", "10", &secure], "h2"),
        ] {
            let report = client_succeeds_over(runtime, protocol, &args, 1_000, 1_024_000);
            moved_on(&report, 28);
            assert_eq!(count(&report, "made"), 28, "{runtime} {protocol}: {report}");
        }
        let report = server.stop_report();
        assert!(
            report.contains("84 connections, 3000 requests, 3000 responses"),
            "{runtime}: each request taken once: {report}"
        );

        let server =
            Server::with_rules(runtime, "-q --requests-per-connection 1 -m GET -p / -t hi");
        let url = format!("{}/", server.url("http"));
        let (code, out) = run("curl", &["-s", "--http2-prior-knowledge", &url, &url, &url]);
        assert_eq!((code, out.as_str()), (Some(0), "hihihi"), "{runtime}");
        let report = server.stop_report();
        assert!(
            report.contains("3 connections, 3 requests"),
            "{runtime}: {report}"
        );
    }
}
