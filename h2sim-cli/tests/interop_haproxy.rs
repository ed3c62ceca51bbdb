//! Interop with HAProxy (Debian's haproxy), whose HTTP/2 is its own on both
//! of its sides: h2sim's client talks to HAProxy's frontends (HTTP/2 with
//! prior knowledge, TLS with ALPN, HTTP/1.1), and HAProxy's backend talks
//! HTTP/2 to h2sim's server (`proto h2`), so each request crosses both,
//! the way an SBI proxy (SCP, SEPP) sits between network functions. Both
//! runtimes; every count is checked on the client's report and on the
//! server's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use std::path::Path;
use std::process::Command;

use server_support::{
    PeerServer, Server, certs, client_succeeds, count, free_port, scratch_dir, verify_test_ca,
};

const RUNTIMES: [&str; 2] = ["tokio", "glommio"];

/// HAProxy in the foreground, with its frontends on `ports` (HTTP/2 with
/// prior knowledge, TLS offering h2 and http/1.1, HTTP/1.1) and its one
/// backend speaking HTTP/2 to `backend`.
fn haproxy(dir: &Path, backend: &str, ports: [u16; 3]) -> PeerServer {
    let certs = certs();
    // HAProxy takes the certificate and its key from one file.
    let pem = dir.join("server.pem");
    let mut both = std::fs::read(certs.join("server-ec.crt")).unwrap();
    both.extend(std::fs::read(certs.join("server-ec.key")).unwrap());
    std::fs::write(&pem, both).unwrap();
    let [h2c, tls, h1] = ports;
    let config = format!(
        "global\n    maxconn 1000\n\
         defaults\n    mode http\n    timeout connect 5s\n    timeout client 30s\n    \
         timeout server 30s\n\
         frontend h2c\n    bind 127.0.0.1:{h2c} proto h2\n    default_backend sim\n\
         frontend tls\n    bind 127.0.0.1:{tls} ssl crt {} alpn h2,http/1.1\n    \
         default_backend sim\n\
         frontend h1\n    bind 127.0.0.1:{h1}\n    default_backend sim\n\
         backend sim\n    server s1 {backend} proto h2\n",
        pem.display()
    );
    let file = dir.join("haproxy.cfg");
    std::fs::write(&file, config).unwrap();
    let mut command = Command::new("haproxy");
    // -db: in the foreground, its output on stderr.
    command.arg("-db").arg("-f").arg(&file);
    PeerServer::listening(command, &ports, "haproxy (Debian's haproxy)")
}

/// h2sim's client through HAProxy to h2sim's server: GETs of 1 KiB at 50
/// streams over two connections, uploads of 100 KiB, answers of 300 KiB
/// over TLS (HAProxy's certificate checked against the test CA), and
/// HTTP/1.1 with 10 requests pipelined.
#[test]
fn the_client_through_haproxy_to_the_server() {
    let dir = scratch_dir("interop-haproxy");
    let verify = verify_test_ca();
    for runtime in RUNTIMES {
        let server = Server::interop(runtime, dir.path(), &["http://127.0.0.1:0"]);
        let ports = [free_port(), free_port(), free_port()];
        let proxy = haproxy(dir.path(), server.authority(), ports);
        let [h2c, tls, h1] = ports;
        let small = format!("http://127.0.0.1:{h2c}/1k");
        let upload = format!("http://127.0.0.1:{h2c}/up");
        let big = format!("https://127.0.0.1:{tls}/big");
        let http1 = format!("http://127.0.0.1:{h1}/1k");
        let mut expected = 0;
        for (args, n, data) in [
            (vec!["-S", "2", "-P", "50", &small], 4_000, 4_096_000),
            (
                vec!["-P", "20", "-m", "POST", "-e", "100k", &upload],
                400,
                409_600,
            ),
            (vec!["-V", &verify, "-P", "10", &big], 300, 92_160_000),
            (vec!["-1", "-P", "10", &http1], 2_000, 2_048_000),
        ] {
            let mut all = vec!["--runtime", runtime];
            all.extend_from_slice(&args);
            client_succeeds(&all, n, data);
            expected += n;
        }
        drop(proxy);
        let report = server.stop_report();
        assert_eq!(count(&report, "requests"), expected, "{runtime}: {report}");
    }
}
