//! Every documented command line, run verbatim: the ``` blocks of
//! `../shared/h2simple-examples.md`, the README's `sh` blocks and the
//! examples of `h2sim server --help` and `h2sim client --help`. Only the
//! ports change (8080/8081 become free ports); a line this test had to
//! alter would be a bug in the program or in the document.
//!
//! Each server line runs in a temporary directory holding what the
//! documents assume is there: h2simple's `eckey.pem`/`eccert.pem` (the dev
//! EC server key and certificate), `certs/` as a trust directory (the dev CA
//! and its CRL, again under `certs/trust` as in the checkout) that also has
//! the README's `certs/server-ec.*` and `certs/client-ec.*`, the
//! `nf2_svr.*`/`nf1_cli.*` pair of the TLS example (the dev server and
//! client certificates under those names: signed by the same CA, with the
//! serverAuth/clientAuth purposes `-V …,purpose` checks) and the request
//! body file of the POST example. A server line that names no `-k`/`-c`
//! runs a second time with no key files at all, where h2sim generates a
//! certificate. Each client line runs against the documented server whose
//! rules answer all its requests with 2xx (the latest one before it in the
//! same document first), before that server gets SIGTERM.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use server_support::{BIN, Server, scratch_dir};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// One documented command line, split into words.
#[derive(Debug, Clone)]
struct Line {
    /// Where it is documented, for messages.
    source: String,
    words: Vec<String>,
}

impl Line {
    fn is_server(&self) -> bool {
        self.words.get(1).is_some_and(|w| w == "server")
    }

    fn is_client(&self) -> bool {
        self.words.get(1).is_some_and(|w| w == "client")
    }

    fn has(&self, flag: &str) -> bool {
        self.words.iter().any(|w| w == flag)
    }

    /// The words after `h2sim`, with 8080/8081/8090 replaced by `ports`.
    fn args(&self, ports: Ports) -> Vec<String> {
        self.words[1..]
            .iter()
            .map(|w| {
                w.replace(":8080", &format!(":{}", ports.0))
                    .replace(":8081", &format!(":{}", ports.1))
                    .replace(":8090", &format!(":{}", ports.2))
            })
            .collect()
    }

    fn text(&self) -> String {
        self.words.join(" ")
    }
}

/// The command lines of one text: `\` continues a line, `#` starts a
/// comment, and only lines that run `h2sim` count (the README's other
/// lines run cargo and scripts).
fn command_lines(source: &str, text: &str) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut logical = String::new();
    for physical in text.lines() {
        logical.push_str(physical);
        logical.push('\n');
        if physical.trim_end().ends_with('\\') {
            continue;
        }
        // A shell drops backslash-newline before splitting words; shlex
        // would leave an empty word in its place.
        let joined = logical.replace("\\\n", "");
        let words =
            shlex::split(&joined).unwrap_or_else(|| panic!("{source}: cannot split {logical:?}"));
        logical.clear();
        let words = match words.first().map(String::as_str) {
            Some("$") => words[1..].to_vec(),
            _ => words,
        };
        let words = run_local_client(words);
        if words.first().is_some_and(|w| w == "h2sim") {
            lines.push(Line {
                source: source.to_owned(),
                words,
            });
        }
    }
    lines
}

/// `…/run-local.sh N DIR -- ARGS` (examples/scale) runs N clients with ARGS
/// and merges their reports: the documented ARGS as one `h2sim client`
/// line, run against the documented server as any client line is.
fn run_local_client(words: Vec<String>) -> Vec<String> {
    if !words.first().is_some_and(|w| w.ends_with("run-local.sh")) {
        return words;
    }
    match words.iter().position(|w| w == "--") {
        Some(i) => ["h2sim", "client"]
            .map(String::from)
            .into_iter()
            .chain(words[i + 1..].iter().cloned())
            .collect(),
        None => words,
    }
}

/// The `run-local.sh …` lines that a Markdown text quotes in its prose
/// (`` `run-local.sh 4 /tmp/run -- …` ``), each as its own text.
fn quoted_run_local(text: &str) -> Vec<String> {
    let mut fenced = false;
    let prose: String = text
        .lines()
        .filter(|line| {
            fenced ^= line.trim_start().starts_with("```");
            !fenced && !line.trim_start().starts_with("```")
        })
        .map(|line| format!("{line}\n"))
        .collect();
    prose
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| span.starts_with("run-local.sh ") && span.contains(" -- "))
        .map(|span| span.replace('\n', " "))
        .collect()
}

/// The contents of the fenced blocks of a Markdown text whose info string
/// is `lang` (any, when `None`).
fn fenced_blocks(text: &str, lang: Option<&str>) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    let mut wanted = false;
    for line in text.lines() {
        if let Some(info) = line.trim_start().strip_prefix("```") {
            match current.take() {
                Some(block) => {
                    if wanted {
                        blocks.push(block);
                    }
                }
                None => {
                    wanted = lang.is_none_or(|l| info.trim() == l);
                    current = Some(String::new());
                }
            }
        } else if let Some(block) = &mut current {
            block.push_str(line);
            block.push('\n');
        }
    }
    blocks
}

/// The example lines of `h2sim COMMAND --help`: those after the first
/// heading that names examples.
fn help_examples(command: &str) -> Vec<Line> {
    let out = Command::new(BIN)
        .args([command, "--help"])
        .output()
        .unwrap();
    assert!(out.status.success(), "h2sim {command} --help");
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    let start = help
        .lines()
        .position(|l| {
            let l = l.trim().to_ascii_lowercase();
            l.starts_with("example") && !l.starts_with("h2sim")
        })
        .unwrap_or_else(|| panic!("h2sim {command} --help has no examples: {help}"));
    let rest: Vec<&str> = help.lines().skip(start + 1).collect();
    command_lines(&format!("h2sim {command} --help"), &rest.join("\n"))
}

/// Servers the test adds for documented client lines that no documented
/// server answers. h2simple's "POST a file" example posts to /test.txt,
/// for which none of its server examples has a rule (its users pointed it
/// at their own server), so the line runs, as written, against this one;
/// the server dumps each request (no `-q`), and the test checks that the
/// file's body arrived. Tried after every documented server.
const SCAFFOLD_SERVERS: &str =
    "h2sim server -S http://127.0.0.1:8080 -m POST -p /test.txt -s 200\n";

/// What the POST example's `-f your_request_body_file` sends.
const REQUEST_BODY_FILE: (&str, &str) =
    ("your_request_body_file", r#"{ "USER_NAME" : "somebody" }"#);

/// The checkout's documents whose `sh` blocks (and quoted `run-local.sh`
/// lines) run, each with the servers it starts.
const DOCUMENTS: [&str; 3] = [
    "README.md",
    "h2sim-cli/examples/README-client.md",
    "h2sim-cli/examples/scale/README.md",
];

/// Whether a server documented in `server` may answer a client line
/// documented in `client`: its own document's, the test's scaffold, and
/// for `h2sim client --help` (which starts no server) the servers its
/// EXAMPLES name, README.md's and `h2sim server --help`'s; never another
/// document's, so that every document of ours works with the servers it
/// starts. h2simple's examples, which are not ours, take any.
fn may_answer(client: &str, server: &str) -> bool {
    client == server
        || server == "test scaffold"
        || client == "h2simple-examples.md"
        || (client == "h2sim client --help"
            && ["README.md", "h2sim server --help"].contains(&server))
}

/// Every documented line, in document order, then the scaffold servers.
fn documented() -> Vec<Line> {
    let examples = std::fs::read_to_string(repo().join("../shared/h2simple-examples.md"))
        .or_else(|_| std::fs::read_to_string("/work/shared/h2simple-examples.md"))
        .expect("h2simple-examples.md");
    let mut lines = Vec::new();
    for block in fenced_blocks(&examples, None) {
        lines.extend(command_lines("h2simple-examples.md", &block));
    }
    for document in DOCUMENTS {
        let text = std::fs::read_to_string(repo().join(document)).unwrap();
        for block in fenced_blocks(&text, Some("sh")) {
            lines.extend(command_lines(document, &block));
        }
        for quoted in quoted_run_local(&text) {
            lines.extend(command_lines(document, &quoted));
        }
    }
    lines.extend(help_examples("server"));
    lines.extend(help_examples("client"));
    lines.extend(command_lines("test scaffold", SCAFFOLD_SERVERS));
    lines
}

/// A server rule as far as pairing needs it.
struct Rule {
    method: String,
    prefix: String,
    status: u16,
    pushes: u64,
}

fn rules(server: &Line) -> Vec<Rule> {
    let mut rules: Vec<Rule> = Vec::new();
    let mut in_push = false;
    let w = &server.words;
    for i in 0..w.len() {
        let value = w.get(i + 1).cloned().unwrap_or_default();
        match (w[i].as_str(), rules.last_mut()) {
            ("-m", _) => {
                in_push = false;
                rules.push(Rule {
                    method: value,
                    prefix: String::new(),
                    status: 200,
                    pushes: 0,
                });
            }
            ("-p", Some(rule)) if !in_push => rule.prefix = value,
            ("-s", Some(rule)) if !in_push => rule.status = value.parse().unwrap(),
            ("-o", Some(rule)) => {
                in_push = true;
                rule.pushes += 1;
            }
            _ => {}
        }
    }
    rules
}

/// The rules of a `--rules` file (a path from the checkout's root) as far
/// as pairing needs them: a rule without a method takes any, its path is a
/// prefix up to its first `{` (a template's variable), and its status is
/// the store's or the reply's, taken for a 2xx (the run checks it).
fn file_rules(file: &str) -> Vec<Rule> {
    let text = std::fs::read_to_string(repo().join(file)).unwrap();
    let doc: serde_norway::Value = serde_norway::from_str(&text).unwrap();
    let rules = doc["rule"].as_sequence().or(doc["rules"].as_sequence());
    rules
        .into_iter()
        .flatten()
        .filter(|rule| rule.get("problem").is_none())
        .filter_map(|rule| {
            let path = rule["path"].as_str()?;
            Some(Rule {
                method: rule["method"].as_str().unwrap_or("*").to_owned(),
                prefix: path.split('{').next().unwrap_or(path).to_owned(),
                status: 200,
                pushes: 0,
            })
        })
        .collect()
}

/// The (method, path) of each step of a client line.
fn steps(client: &Line) -> Vec<(String, String)> {
    let path_of = |url: &str| {
        let rest = url.split_once("://").map_or(url, |(_, r)| r);
        rest.find('/')
            .map_or("/".to_owned(), |i| rest[i..].to_owned())
    };
    let mut steps: Vec<(String, String)> = Vec::new();
    let w = &client.words;
    for i in 2..w.len() {
        let value = w.get(i + 1).cloned().unwrap_or_default();
        match w[i].as_str() {
            "-m" => steps.push((value, String::new())),
            "-u" => {
                if let Some(step) = steps.last_mut() {
                    step.1 = path_of(&value);
                }
            }
            "-p" => {
                if let Some(step) = steps.last_mut() {
                    step.1 = value;
                }
            }
            // A URI argument, not a body or header value that holds one.
            word if (word.starts_with("http://") || word.starts_with("https://"))
                && !matches!(w[i - 1].as_str(), "-u" | "--server") =>
            {
                steps.push(("GET".to_owned(), path_of(word)));
            }
            _ => {}
        }
    }
    steps
}

/// The steps of a client line that reads them from `--scenario FILE` (a
/// path from the checkout's root, as the documents write it).
fn scenario_steps(client: &Line) -> Option<usize> {
    let file = value_of(client, "--scenario")?;
    let text = std::fs::read_to_string(repo().join(file)).unwrap();
    let doc: serde_norway::Value = serde_norway::from_str(&text).unwrap();
    Some(doc["step"].as_sequence().map_or(0, Vec::len))
}

/// The pushes the server promises for the client's steps, if its rules
/// answer every step with 2xx. A scenario file is answered by the rules
/// file beside it (`examples/nrf/client.yaml` by `examples/nrf/rules.yaml`).
fn answers(server: &Line, client: &Line) -> Option<u64> {
    if let Some(scenario) = value_of(client, "--scenario") {
        let dir_of = |file: &str| Path::new(file).parent().map(Path::to_path_buf);
        let rules = value_of(server, "--rules")?;
        return (dir_of(rules) == dir_of(scenario)).then_some(0);
    }
    let rules = match value_of(server, "--rules") {
        Some(file) => file_rules(file),
        None => rules(server),
    };
    let mut pushes = 0;
    for (method, path) in steps(client) {
        let rule = rules
            .iter()
            .find(|r| (r.method == method || r.method == "*") && path.starts_with(&r.prefix))?;
        if !(200..300).contains(&rule.status) {
            return None;
        }
        pushes += rule.pushes;
    }
    Some(pushes)
}

/// The ports that stand for 8080, 8081 and 8090 (a client's `--listen`).
type Ports = (u16, u16, u16);

/// Three ports free right now.
fn free_ports() -> Ports {
    let bind = || std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let (a, b, c) = (bind(), bind(), bind());
    let port = |l: &std::net::TcpListener| l.local_addr().unwrap().port();
    (port(&a), port(&b), port(&c))
}

/// A directory with every file the documented lines name.
fn workdir(name: &str, with_default_cert: bool) -> tempfile::TempDir {
    let certs = repo().join("certs");
    let scratch = scratch_dir(&format!("doc-{name}"));
    let dir = scratch.path();
    // The trust directory both as h2simple's lines name it (`certs`) and
    // as the checkout has it (`certs/trust`, the `--help` examples').
    std::fs::create_dir_all(dir.join("certs/trust")).unwrap();
    for entry in std::fs::read_dir(certs.join("trust")).unwrap() {
        let entry = entry.unwrap();
        for to in ["certs", "certs/trust"] {
            std::fs::copy(entry.path(), dir.join(to).join(entry.file_name())).unwrap();
        }
    }
    let copies = [
        ("server-ec.key", "certs/server-ec.key"),
        ("server-ec.crt", "certs/server-ec.crt"),
        ("client-ec.key", "certs/client-ec.key"),
        ("client-ec.crt", "certs/client-ec.crt"),
        ("server-ec.key", "nf2_svr.key"),
        ("server-ec.crt", "nf2_svr.crt"),
        ("client-ec.key", "nf1_cli.key"),
        ("client-ec.crt", "nf1_cli.crt"),
    ];
    for (from, to) in copies {
        std::fs::copy(certs.join(from), dir.join(to)).unwrap();
    }
    if with_default_cert {
        std::fs::copy(certs.join("server-ec.key"), dir.join("eckey.pem")).unwrap();
        std::fs::copy(certs.join("server-ec.crt"), dir.join("eccert.pem")).unwrap();
    }
    std::fs::write(dir.join(REQUEST_BODY_FILE.0), REQUEST_BODY_FILE.1).unwrap();
    // The examples' rules and scenario files, by the paths the documents
    // give from the checkout's root.
    std::os::unix::fs::symlink(repo().join("h2sim-cli"), dir.join("h2sim-cli")).unwrap();
    scratch
}

/// The value after `flag`.
fn value_of<'a>(line: &'a Line, flag: &str) -> Option<&'a str> {
    let i = line.words.iter().position(|w| w == flag)?;
    line.words.get(i + 1).map(String::as_str)
}

/// The scenarios a client line runs: `-C N`; at `-T N` for `--duration
/// Ss`, one per send time from 0 to just before S seconds, N × S; else 1.
fn scenarios(client: &Line) -> u64 {
    if let Some(n) = value_of(client, "-C") {
        return n.parse().unwrap();
    }
    match (value_of(client, "-T"), value_of(client, "--duration")) {
        (Some(rate), Some(duration)) => {
            let secs: u64 = duration
                .strip_suffix('s')
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("--duration {duration}: write it in whole seconds"));
            rate.parse::<u64>().unwrap() * secs
        }
        _ => 1,
    }
}

/// Runs one client line; returns its problem, if any.
fn run_client(client: &Line, ports: Ports, dir: &Path, pushes: u64) -> Result<(), String> {
    let out = Command::new(BIN)
        .args(client.args(ports))
        .current_dir(dir)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let fail = |why: &str| {
        Err(format!(
            "{}: {}: {why}\n{text}",
            client.source,
            client.text()
        ))
    };
    if !out.status.success() {
        return fail(&format!("exit {:?}", out.status.code()));
    }
    let count = scenarios(client);
    let steps = scenario_steps(client).unwrap_or_else(|| steps(client).len());
    let total = count * steps as u64;
    if !text.contains(&format!("{total} succeeded")) {
        return fail(&format!("report without {total} succeeded"));
    }
    if client.has("-T") && !text.contains("0 sends missed") {
        return fail("a rate not kept");
    }
    if !text.contains(&format!("{total} 2xx")) {
        return fail(&format!("report without {total} 2xx"));
    }
    if pushes > 0 && !text.contains(&format!("pushes: {} received", pushes * count)) {
        return fail(&format!("report without {} pushes", pushes * count));
    }
    if let Some(i) = client.words.iter().position(|w| w == "--json")
        && !dir.join(&client.words[i + 1]).is_file()
    {
        return fail("no JSON report written");
    }
    Ok(())
}

/// Every documented line runs as written; failures are collected and
/// reported together.
#[test]
fn documented_command_lines_run_verbatim() {
    let lines = documented();
    let servers: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].is_server()).collect();
    assert!(servers.len() >= 5, "{lines:#?}");
    // Each client with its server: the latest before it in its document
    // that answers it, else any that does.
    let mut clients_of: Vec<Vec<(usize, u64)>> = vec![Vec::new(); lines.len()];
    let mut problems = Vec::new();
    for (i, client) in lines.iter().enumerate().filter(|(_, l)| l.is_client()) {
        let before = servers
            .iter()
            .rev()
            .filter(|&&s| s < i && lines[s].source == client.source);
        let others = servers.iter().filter(|&&s| {
            (lines[s].source != client.source || s > i)
                && may_answer(&client.source, &lines[s].source)
        });
        match before
            .chain(others)
            .find_map(|&s| answers(&lines[s], client).map(|p| (s, p)))
        {
            Some((s, pushes)) => clients_of[s].push((i, pushes)),
            None => problems.push(format!(
                "{}: {}: no documented server answers it with 2xx",
                client.source,
                client.text()
            )),
        }
    }
    for &s in &servers {
        let server = &lines[s];
        let listeners = server.words.iter().filter(|w| *w == "-S").count();
        let cases: &[bool] = if server.has("-k") {
            &[true]
        } else {
            &[true, false]
        };
        for &with_default_cert in cases {
            let scratch = workdir(&format!("{s}-{with_default_cert}"), with_default_cert);
            let dir = scratch.path();
            let ports = free_ports();
            let label = format!(
                "{}: {}{}",
                server.source,
                server.text(),
                if with_default_cert {
                    ""
                } else {
                    " (no key files)"
                }
            );
            let started =
                std::panic::catch_unwind(|| Server::start(dir, &server.args(ports), listeners));
            let Ok(running) = started else {
                problems.push(format!("{label}: did not start (see the panic above)"));
                continue;
            };
            // Bodies the clients sent from files, to find in the dumps of
            // a server that is not quiet.
            let mut sent_files = Vec::new();
            if with_default_cert {
                for &(c, pushes) in &clients_of[s] {
                    if let Err(e) = run_client(&lines[c], ports, dir, pushes) {
                        problems.push(e);
                    }
                    if let Some(file) = value_of(&lines[c], "-f")
                        && !server.has("-q")
                    {
                        let body = std::fs::read_to_string(dir.join(file)).unwrap();
                        sent_files.push((lines[c].text(), body));
                    }
                }
            } else if server.words.iter().any(|w| w.starts_with("https://")) {
                // With no files the generated certificate serves TLS.
                let url = format!("https://127.0.0.1:{}/", ports.1);
                let status = Command::new("curl")
                    .args(["-sk", "-o", "/dev/null", &url])
                    .status()
                    .expect("curl");
                if !status.success() {
                    problems.push(format!("{label}: no TLS with a generated certificate"));
                }
            }
            let (code, out) = running.stop();
            if code != Some(0) {
                problems.push(format!("{label}: exit {code:?} on SIGTERM\n{out}"));
            }
            for (client, body) in sent_files {
                if !out.contains(&body) {
                    problems.push(format!(
                        "{label}: the request body of `{client}` did not arrive\n{out}"
                    ));
                }
            }
        }
    }
    eprintln!("documented lines run:");
    for line in &lines {
        eprintln!("  [{}] {}", line.source, line.text());
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// The extraction itself: continuations, comments and quotes as a shell
/// reads them.
#[test]
fn lines_split_as_a_shell_would() {
    let text = "h2sim client -m POST -u http://h/x \\\n    -t '{ \"A\" : \"B\" }'   # a comment\ncargo run\nh2sim server -S http://0.0.0.0:8080\n";
    let lines = command_lines("t", text);
    assert_eq!(lines.len(), 2);
    assert_eq!(
        lines[0].words,
        [
            "h2sim",
            "client",
            "-m",
            "POST",
            "-u",
            "http://h/x",
            "-t",
            r#"{ "A" : "B" }"#
        ]
    );
    assert_eq!(
        lines[1].args((1, 2, 3)),
        ["server", "-S", "http://0.0.0.0:1"]
    );
}
