//! Interop with hyper's `h2` crate, the HTTP/2 under hyper, reqwest and
//! tonic's gRPC (and so under many Rust network functions): an
//! implementation of its own, with its own flow control and stream
//! scheduling. Its client against h2sim's server, and h2sim's client
//! against its server, over HTTP/2 with prior knowledge, on both runtimes;
//! the server also with small windows and few streams, so that both sides'
//! flow control and stream limits are what the exchange waits on.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use server_support::{Server, client_succeeds_over, scratch_dir};
use tokio::net::{TcpListener, TcpStream};

const RUNTIMES: [&str; 2] = ["tokio", "glommio"];

/// What is asked for, in turn: method, path, status, answer length.
const WANTS: [(&str, &str, u16, usize); 3] = [
    ("GET", "/1k", 200, 1024),
    ("POST", "/up", 201, 1024),
    ("GET", "/big", 200, 300 * 1024),
];

/// The body of each POST /up.
const UPLOAD: usize = 100 * 1024;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Reads `body` to its end, giving the window back as it goes; its length.
async fn read_body(mut body: h2::RecvStream) -> Result<usize, h2::Error> {
    let mut n = 0;
    while let Some(chunk) = body.data().await {
        let chunk = chunk?;
        n += chunk.len();
        body.flow_control().release_capacity(chunk.len())?;
    }
    Ok(n)
}

/// One request of [`WANTS`] on `client`; what went wrong, if anything.
async fn exchange(
    mut client: h2::client::SendRequest<Bytes>,
    authority: String,
    i: usize,
) -> Option<String> {
    let (method, path, status, length) = WANTS[i % WANTS.len()];
    let result = async {
        client = client.ready().await?;
        let request = http::Request::builder()
            .method(method)
            .uri(format!("http://{authority}{path}"))
            .body(())
            .unwrap();
        let post = method == "POST";
        let (response, mut send) = client.send_request(request, !post)?;
        if post {
            send.send_data(Bytes::from(vec![b'u'; UPLOAD]), true)?;
        }
        let response = response.await?;
        let got = response.status().as_u16();
        let n = read_body(response.into_body()).await?;
        Ok::<_, h2::Error>((got, n))
    }
    .await;
    match result {
        Ok(got) if got == (status, length) => None,
        Ok(got) => Some(format!("{method} {path}: {got:?}")),
        Err(e) => Some(format!("{method} {path}: {e}")),
    }
}

/// `n` requests of [`WANTS`] on one h2 connection to `authority`, the
/// first alone, then 50 at a time; the failures.
///
/// The crate's client takes no stream limit until the server's SETTINGS
/// arrive, and a server refuses streams above the limit it announced
/// before they do (REFUSED_STREAM, RFC 9113 §5.1.2, as nghttp2 and Go do):
/// the first exchange has them in.
async fn h2_client(authority: &str, n: usize) -> Vec<String> {
    let tcp = TcpStream::connect(authority).await.unwrap();
    let (client, connection) = h2::client::handshake(tcp).await.unwrap();
    let driver = tokio::spawn(connection);
    let mut problems = Vec::new();
    let rounds: Vec<usize> = (0..n).collect();
    let (first, rest) = rounds.split_at(1);
    for round in std::iter::once(first).chain(rest.chunks(50)) {
        let tasks: Vec<_> = round
            .iter()
            .map(|&i| tokio::spawn(exchange(client.clone(), authority.to_owned(), i)))
            .collect();
        for task in tasks {
            problems.extend(task.await.unwrap());
        }
    }
    drop(client);
    // Every handle gone: the connection ends by itself, without an error.
    let ended = tokio::time::timeout(Duration::from_secs(10), driver)
        .await
        .expect("the h2 connection ended")
        .expect("the h2 connection's task did not panic");
    if let Err(e) = ended {
        problems.push(format!("connection: {e}"));
    }
    problems
}

#[test]
fn the_h2_crate_client_against_the_server() {
    for runtime_name in RUNTIMES {
        for flags in [
            &[][..],
            // Small windows and few streams: the crate's client waits on
            // our WINDOW_UPDATEs and our stream limit.
            &[
                "-H",
                "initial_window_size=4096",
                "-H",
                "max_concurrent_streams=7",
            ][..],
        ] {
            let dir = scratch_dir("interop-h2-crate");
            let server =
                Server::interop_with(runtime_name, dir.path(), &["http://127.0.0.1:0"], flags);
            let problems = runtime().block_on(h2_client(server.authority(), 300));
            assert!(
                problems.is_empty(),
                "{runtime_name} {flags:?}: {problems:?}"
            );
            let report = server.stop_report();
            assert!(
                report.contains(" 300 requests, 300 responses"),
                "{runtime_name} {flags:?}: {report}"
            );
        }
    }
}

/// How the crate's server is set up.
struct H2Server {
    window: u32,
    streams: u32,
}

/// Answers one request of [`WANTS`] (anything else is 404), reading a
/// POST's body to its end first.
async fn answer(
    request: http::Request<h2::RecvStream>,
    mut respond: h2::server::SendResponse<Bytes>,
) -> Result<(), h2::Error> {
    let (head, body) = request.into_parts();
    let method = head.method.as_str();
    let want = WANTS
        .iter()
        .find(|(m, p, _, _)| *m == method && *p == head.uri.path());
    let got = read_body(body).await?;
    let (status, length) = match want {
        Some(&(_, _, status, length)) if method != "POST" || got == UPLOAD => (status, length),
        _ => (404, 0),
    };
    let response = http::Response::builder().status(status).body(()).unwrap();
    let mut send = respond.send_response(response, length == 0)?;
    if length > 0 {
        send.send_data(Bytes::from(vec![b'a'; length]), true)?;
    }
    Ok(())
}

/// Serves every connection `listener` accepts with `setup`.
async fn serve(listener: TcpListener, setup: H2Server) {
    loop {
        let (tcp, _) = listener.accept().await.unwrap();
        let mut builder = h2::server::Builder::new();
        builder
            .initial_window_size(setup.window)
            .max_concurrent_streams(setup.streams);
        tokio::spawn(async move {
            let Ok(mut connection) = builder.handshake::<_, Bytes>(tcp).await else {
                return;
            };
            while let Some(Ok((request, respond))) = connection.accept().await {
                tokio::spawn(answer(request, respond));
            }
        });
    }
}

#[test]
fn the_client_against_the_h2_crate_server() {
    let rt = runtime();
    for setup in [
        H2Server {
            window: 65_535,
            streams: 100,
        },
        // Our client holds requests past the crate's stream limit and
        // sends within its small windows.
        H2Server {
            window: 4096,
            streams: 7,
        },
    ] {
        let listener = rt.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        let label = format!("window {}, streams {}", setup.window, setup.streams);
        rt.spawn(serve(listener, setup));
        let base = format!("http://{addr}");
        let (small, up, big) = (
            format!("{base}/1k"),
            format!("{base}/up"),
            format!("{base}/big"),
        );
        for runtime_name in RUNTIMES {
            for (args, n, data) in [
                (vec!["-P", "50", &small], 2_000, 2_048_000),
                (
                    vec!["-m", "POST", "-e", "100k", "-P", "20", &up],
                    300,
                    307_200,
                ),
                (vec!["-P", "10", &big], 100, 30_720_000),
                (
                    vec!["-P", "10", "--requests-per-connection", "50", &small],
                    500,
                    512_000,
                ),
            ] {
                let report = client_succeeds_over(runtime_name, "h2c", &args, n, data);
                assert!(
                    !report.contains("DISCONNECTED by peer"),
                    "{label}: {report}"
                );
            }
        }
    }
}
