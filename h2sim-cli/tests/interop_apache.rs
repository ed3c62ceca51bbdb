//! Interop with Apache httpd (Debian's apache2), on both runtimes: h2sim's
//! client against Apache's HTTP/1.1 (pipelined, past its default of 100
//! requests per connection, `MaxKeepAliveRequests`), h2c and TLS with ALPN
//! (its certificate checked against the test CA); and Apache as a reverse
//! proxy (mod_proxy_http2 over h2c, mod_proxy_http over HTTP/1.1) in front
//! of h2sim's server, which ends each connection after 37 requests
//! (`--requests-per-connection`), so that Apache's client side must move
//! to new connections as h2sim's server asks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use server_support::{
    PeerServer, Server, certs, client_succeeds_over, count, free_port, moved_on, scratch_dir,
    verify_test_ca,
};

const RUNTIMES: [&str; 2] = ["tokio", "glommio"];

/// Apache in the foreground, serving `dir`/www on `plain` (HTTP/1.1 and
/// h2c) and `tls` (h2 and HTTP/1.1), with its defaults for keep-alive (100
/// requests per connection), and proxying `/h2/` (h2c) and `/h1/` to
/// `backend`.
fn apache(dir: &Path, plain: u16, tls: u16, backend: u16) -> PeerServer {
    // Apache's children run as www-data, which must read the files.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let www = dir.join("www");
    std::fs::create_dir_all(&www).unwrap();
    std::fs::write(www.join("1k"), [b'a'; 1024]).unwrap();
    std::fs::set_permissions(www.join("1k"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let d = dir.display();
    let certs = certs();
    let modules = [
        "mpm_event",
        "authz_core",
        "mime",
        "http2",
        "ssl",
        "proxy",
        "proxy_http",
        "proxy_http2",
    ]
    .map(|m| format!("LoadModule {m}_module modules/mod_{m}.so\n"))
    .concat();
    let config = format!(
        "ServerRoot /usr/lib/apache2\n{modules}\
         User www-data\nGroup www-data\n\
         DefaultRuntimeDir {d}\nPidFile {d}/httpd.pid\nErrorLog {d}/error.log\n\
         LogLevel warn\nServerName localhost\nTypesConfig /etc/mime.types\n\
         Listen 127.0.0.1:{plain}\nListen 127.0.0.1:{tls}\n\
         DocumentRoot {d}/www\nProtocols h2c http/1.1\n\
         <Directory {d}/www>\n  Require all granted\n</Directory>\n\
         ProxyPass /h2/ h2c://127.0.0.1:{backend}/\n\
         ProxyPass /h1/ http://127.0.0.1:{backend}/\n\
         <VirtualHost 127.0.0.1:{tls}>\n  SSLEngine on\n  \
         SSLCertificateFile {}\n  SSLCertificateKeyFile {}\n  \
         Protocols h2 http/1.1\n</VirtualHost>\n",
        certs.join("server-ec.crt").display(),
        certs.join("server-ec.key").display(),
    );
    let file = dir.join("httpd.conf");
    std::fs::write(&file, config).unwrap();
    let mut command = Command::new("apache2");
    command.arg("-DFOREGROUND").arg("-f").arg(&file);
    PeerServer::listening(command, &[plain, tls], "Apache httpd (Debian's apache2)")
}

#[test]
fn the_client_against_apache_and_apache_against_the_server() {
    let dir = scratch_dir("interop-apache");
    let (plain, tls, backend) = (free_port(), free_port(), free_port());
    let _apache = apache(dir.path(), plain, tls, backend);
    let verify = verify_test_ca();
    let small = format!("http://127.0.0.1:{plain}/1k");
    let small_tls = format!("https://127.0.0.1:{tls}/1k");
    let backend_url = format!("http://127.0.0.1:{backend}");
    for runtime in RUNTIMES {
        for (args, protocol) in [
            (vec!["-1", "-P", "10", &small], "http/1.1"),
            (vec!["-P", "50", &small], "h2c"),
            (vec!["-V", &verify, "-P", "50", &small_tls], "h2"),
            (
                vec!["-1", "-V", &verify, "-P", "10", &small_tls],
                "http/1.1",
            ),
        ] {
            let report = client_succeeds_over(runtime, protocol, &args, 2_000, 2_048_000);
            if protocol == "http/1.1" {
                // Apache answers the 100th request with `connection:
                // close`; what was pipelined behind it goes again.
                moved_on(&report, 20);
            }
        }

        let server = Server::with_rules_on(
            runtime,
            &backend_url,
            "-q --requests-per-connection 37 -m GET -p / -s 200 -e 1k",
        );
        for (path, protocol) in [("h2", "h2c"), ("h1", "h2c")] {
            let url = format!("http://127.0.0.1:{plain}/{path}/x");
            client_succeeds_over(runtime, protocol, &["-P", "20", &url], 1_000, 1_024_000);
        }
        let report = server.stop_report();
        assert!(
            report.contains(" 2000 requests, 2000 responses"),
            "{runtime}: each request through Apache taken once: {report}"
        );
        assert!(
            count(&report, "connections") >= 2_000 / 37,
            "{runtime}: {report}"
        );
    }
}
