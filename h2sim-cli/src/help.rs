//! The prose of `--help` that clap's per-option lines cannot carry: what
//! each command is for, the grammars, file formats, and examples that run
//! as written (a test parses every example line).

pub const TOP: &str = "\
h2sim: HTTP/2 and HTTP/1.1 simulator for 5G SBI network functions, a successor
of h2simple (h2svr and h2cli). `h2sim server` answers by rules, `h2sim client`
drives scenarios at high rates, `h2sim bench` runs both on loopback.

Run `h2sim <command> --help` for the options of each.";

pub const SERVER_ABOUT: &str = "\
Answer requests by rules (a successor of h2svr).

The listener and rule options are read in order, as h2svr read them: -k, -c
and -V apply to the -S listeners after them; -m starts a rule and the rule
options after it (-a -p -s -x -t -b -f -e -d --delay) describe it; -o starts a
push of that rule, and -s -x -t -b -f -e after it describe the pushed response,
until the next -o or -m. Rules are checked in the order given (--rules files at
their place among them); the first match wins; no match is 404. A HEAD request
that no -m HEAD rule matches is answered by the GET rules, as GET without the
body (its content-length kept, no pushes).";

pub const SERVER_AFTER: &str = "\
TLS
  An https listener without -k/-c uses ./eckey.pem and ./eccert.pem when both
  are in the working directory (as h2svr did), and otherwise a throw-away
  self-signed certificate generated at start for localhost and the listener's
  address (one line on stderr says so). Clients that verify need -k/-c.
  -V verify (peer is its other name, h2simple's) requires a client
  certificate that verifies; pass asks for one and takes it even when it
  does not verify, saying why. A certificate that verifies must be meant for its use:
  its extended key usage, when it has one, must allow client authentication
  (RFC 5280 §4.2.1.12). That check is part of every verification, as it is
  of OpenSSL's, so h2simple's purpose token is accepted and adds nothing.

DIRECTORIES (-d DIR)
  The rule's -p prefix is taken off the request path and the rest names a file
  under DIR: with -m GET -p /files/ -d ./www, GET /files/a/b.json serves
  ./www/a/b.json. A path leaving DIR (.., %2e%2e, a symlink out) is 404.
  A GET reads the whole file into memory, on the connection's thread (-d is
  for the bodies a test needs, not for large trees); the GETs of a file that
  a response still holds share that copy while the file is unchanged. A HEAD
  takes the file's size alone.

REQUEST BODIES (--request-body-limit)
  A request body above the limit (64m unless set; 0 takes none) is answered
  413 with a line saying why (body of N bytes above the limit of M), over
  HTTP/1.1 and HTTP/2 alike, and counted as refused: at once when its
  content-length is above it, otherwise when the body grows past it.
  HTTP/1.1 then closes the connection, mid-body if need be (after a 100
  Continue, say); over HTTP/2 the 413 ends the stream, then RST_STREAM
  (NO_ERROR) tells a client still sending to stop (RFC 9113 §8.1), what it
  sent meanwhile is dropped, and the connection goes on. A 413 once the
  rule's answer has started is too late: that stream is reset (CANCEL).
  An h2c upgrade with a body is answered in HTTP/1.1 (curl --http2 to a
  plain listener), under the same limit. The rules read at most the first
  1 MiB of a body.

RULES FILES (--rules FILE, .toml or .yaml/.yml)
  Each rule has the keys of the command line: method (required), authority,
  path (prefix), status, headers, one of text/hex/file/size, delay, dir, and
  push entries with path, status, headers and a body. Relative file and dir
  entries are read from the rules file's folder. In TOML:

    [[rule]]
    method = \"POST\"
    path = \"/user1k/\"
    status = 200
    headers = { \"content-type\" = \"application/json\" }
    size = \"1k\"
    delay = \"5-20\"

    [[rule.push]]
    path = \"/user1k/name1\"
    text = \"1k_name1\"

  The same in YAML:

    rule:
      - method: POST
        path: /user1k/
        headers: { content-type: application/json }
        size: 1k
        push:
          - { path: /user1k/name1, text: 1k_name1 }

CONNECT (-m CONNECT)
  A CONNECT is answered as soon as its head arrives, as its stream stays open
  for the tunnel: by the first rule that matches it, or 404. A plain CONNECT
  (HTTP/2's, RFC 9113 §8.5, or HTTP/1.1's CONNECT host:port) has no path:
  -m CONNECT without -p (or with -p '') matches it, -a host:port one target.
  An extended CONNECT (RFC 8441: WebSocket over HTTP/2, :protocol websocket)
  has a path, which -p matches; the server takes one only after advertising
  -H enable_connect_protocol=1. A 2xx answer is the head alone (no body and
  no content-length, RFC 9110 §9.3.6) and makes the stream a tunnel that
  echoes what the client sends until the client ends its side, then ends
  ours; over HTTP/1.1 the connection is the tunnel and closes with it. Any
  other status is answered as usual and opens no tunnel.
    h2sim server -S http://127.0.0.1:8080 -H enable_connect_protocol=1 -m CONNECT -p /chat -s 200

DURATIONS
  30s, 500ms, 2m, or a plain number of seconds (1.5).

REPORT
  When it stops, the server prints its counts and each rule's hits on
  stderr; \"refused\" counts the requests turned down because the client
  broke a rule (a malformed head or body, a limit, MAX_CONCURRENT_STREAMS;
  HTTP/1.1's 400, 413, 414, 431, 501, 505; HTTP/2's 413), apart from
  \"resets\" (HTTP/2's streams reset for other causes) and \"unanswered\"
  (requests cut off by their connection's end before their answer), and
  unless -q each gets a line naming it with what the client got, the
  RST_STREAM's code or the status:
  REFUSED[127.0.0.1:37718, stream 1]: PROTOCOL_ERROR: malformed message:
  uppercase field name (RFC 9113 §8.2.1)
  REFUSED[127.0.0.1:37720, stream 1]: 400: invalid chunk (RFC 9112 §7.1)
  A connection names its first 10 refusals; at the 11th one line says the
  rest are counted, not printed:
  REFUSED[127.0.0.1:37718]: more than 10 on this connection: the rest are
  counted, not printed (see its DISCONNECTED line)
  Unless -q, each connection prints h2svr's line when it closes,
  ADDR DISCONNECTED by CAUSE: N tps (S secs for N reqs N rsps N rsts N
  streams); over HTTP/1.1, which has no resets or streams, the counts are
  N reqs N rsps N unanswered (the requests left without their response,
  cut off by the connection's end). Over HTTP/2 \"N unanswered\" follows
  when its end cut off requests still waiting for their answer (a rule's
  --delay, a body still coming), \"N refused\" when it refused any, and
  \"N of M body bytes unsent\" when some of the bodies it was given never
  left: rsps counts the answers given to the connection (as the RESPONSE
  dumps show them), and HTTP/2 holds a body back while the client's window
  is shut; over HTTP/1.1 the server holds nothing back, and what the socket
  had not delivered when it closed is not known.
  CAUSE is one of:
  peer close; GOAWAY received (HTTP/2; its code follows unless NO_ERROR);
  connection: close received (an HTTP/1.1 client's connection: close, or
  HTTP/1.0 without keep-alive); idle timeout; request head timeout; drain
  timeout; keep-alive PING timeout; transport error: what failed; server
  shutdown; error (what broke; over HTTP/1.1 after the status the client
  got, as in error (400: invalid chunk (RFC 9112 §7.1))).
  The REFUSED and DISCONNECTED lines go to stderr, with the report and in
  order with each other, so that they stay in sight when the REQUEST and
  RESPONSE dumps (and -v's frames), which go to stdout, are redirected.

RUNTIMES (--runtime, --threads)
  tokio (the default): work-stealing threads over epoll, one per core unless
  --threads N; right for most runs and every kernel. glommio: one thread per
  core over io_uring (Linux 5.8+), each connection staying on its core. On
  the server rows of bench/README.md's latest full run (one thread each) it
  spent 0.76-1.44x tokio's CPU per request, the most with a connection per
  request and on HTTP/1.1: its reactor re-arms two io_uring timers every
  turn and arms one poll for each wait.

EXAMPLES
  h2sim server -S http://0.0.0.0:8080 -S https://0.0.0.0:8081 -m POST -p /user/ -s 200 -x content-type=application/json -t '{ \"RESULT\" : \"SUCCESS\" }' -m GET -p /user2/ -s 404
  h2sim server -S http://127.0.0.1:8080 -m POST -p /user1k/ -s 200 -e 1k -o /user1k/name1 -s 200 -t '1k_name1'
  h2sim server -S http://127.0.0.1:8080 -m GET -p /files/ -d . -m GET -p /slow/ --delay 10-50 -s 204
  h2sim server -k certs/server-ec.key -c certs/server-ec.crt -V verify,trust_dir=certs/trust -S https://127.0.0.1:8443 -m GET -p / -s 200 -q";

pub const CLIENT_ABOUT: &str = "\
Drive request scenarios (a successor of h2cli).

A scenario is one or more steps run in order on one stream slot; -P scenarios
run at once on each connection. The step options are read in order, as h2cli
read them: -m starts a step and -u -s -a -p -x -t -b -f -e after it describe
it. Before the first -m, -s and -a set every step's defaults, and the other
step options describe the first step, or the single request of a positional
URI (so `-x a=b URI` adds a header to it, and `-m POST -e 1k URI` is one POST).";

pub const CLIENT_AFTER: &str = "\
FIXED RATE (-T)
  -T N starts N scenarios per second over all connections, the send times
  counted from the start of the run, and latency is measured from each
  intended start (no coordinated omission). When all -P slots of a
  connection are busy at a send time, the connection opens more, up to
  max(-P, 1024), and the report says how far it grew; past that bound a
  send waits.
  (Over HTTP/1.1 the extra requests queue behind the -P pipelined ones.) A
  --duration run intends N x duration sends: those that never went out are
  reported as \"sends missed\" and fail the run; a -C run intends its count
  by count / N seconds: the sends that left more than 100 ms (or an
  interval, if longer) after that are missed too.

CONNECTIONS
  A planned end is followed by a new connection at once, without limit,
  while the run has work left: the server closing after its response
  (HTTP/1.0, Connection: close), a GOAWAY without error, or
  --requests-per-connection. Requests the server did not process (above the
  last stream of its GOAWAY, or pipelined behind its connection: close) go
  again on the new connection; those it refused (REFUSED_STREAM) go again on
  the same one, at most 3 times each. Neither needs -r, and they count as
  resent unprocessed, not as failed. A lost connection (refused, reset, a
  protocol error, a GOAWAY with an error, the server closing with requests
  open) is replaced only with -r, --reconnect-max or
  --requests-per-connection, after 100 ms, at most --reconnect-max times in
  a row per connection (3 by default); a connection that answered nothing
  counts as lost. Each connection prints one DISCONNECTED line on stderr
  with its cause: over HTTP/2 such as by peer GOAWAY (its code follows
  unless NO_ERROR) or by local GOAWAY; over HTTP/1.1, which has no GOAWAY,
  by connection: close received (the server's response said so, or was
  HTTP/1.0 without keep-alive), by connection: close sent (the client's last
  request said so: --requests-per-connection) or by local close (the client
  closed with every request answered: the end of the run) or by request
  timeout (--timeout ran out on a request on the wire, which HTTP/1.1 can
  give up only by closing; the run goes on with a new connection, as HTTP/2's
  goes on after resetting the stream). Either protocol may
  also say by peer close (the server closed the transport), by error: ...
  (a rule the server broke, named), by transport error: ... (a reset), or
  by keep-alive PING timeout. The counts in parentheses are h2simple's over
  HTTP/2 (N reqs N rsps N rsts N streams), rsts counting the requests a
  reset lost before their response (the server's, or ours at --timeout; a
  REFUSED_STREAM sent again is not lost). A reset after the whole response,
  as nginx's NO_ERROR after a POST whose body it did not read (RFC 9113
  §8.1), is not counted: the request was answered, as h2simple and h2load
  count it too. \"N unprocessed\" follows them when the server did not
  process some of its requests (above the last stream of its GOAWAY, or
  refused with REFUSED_STREAM), whether they went again or were lost.
  Over HTTP/1.1, which has no resets or streams, N reqs N rsps N
  unanswered (the requests left without their response, whether lost or
  sent again on the next connection).

H2SIMPLE'S -H KEYS
  -H reconn_max=N is --reconnect-max N, -H req_max_per_sess=N is
  --requests-per-connection N, and -H single_request=1 (HTTP/1.1, one request
  per connection) is --requests-per-connection 1; each prints one line saying
  so. enable_connect_protocol=1 is the HTTP/2 setting (RFC 8441).

CTRL-C
  The first Ctrl-C (or SIGTERM, or SIGHUP when the terminal or ssh session
  goes away) stops sending, lets the requests in flight finish, then writes
  the JSON and prints the report; a second one, 100 ms or more after the
  first, exits at once (130). Closer together they are one: GNU timeout
  signals the process and then its group. Under nohup, SIGHUP stays ignored.
  An HTTP/2 connection whose server had not yet sent its SETTINGS (the end
  of its handshake) counts as neither made nor unreachable.
  While the --token-url token is awaited, the first ends the wait: one line
  says so, and the report (and JSON) of a run that sent nothing, interrupted.

TLS
  -V verify with no trust_file or trust_dir checks the server against the
  system's trust store; peer is verify's other name (h2simple's). A
  certificate that verifies must be meant for its use: its extended key
  usage, when it has one, must allow server authentication (RFC 5280
  §4.2.1.12). That check is part of every verification, as it is of
  OpenSSL's, so h2simple's purpose token is accepted and adds nothing.
  Over TLS 1.3 a server checks the client certificate (-k/-c) after the
  client's side of the handshake is over, and refuses it, or its absence,
  with an alert at the first read: such a connection counts as failed, not
  made (unreachable), its line naming the alert.

DURATIONS
  30s, 500ms, 2m, or a plain number of seconds (1.5).

RUNTIMES (--runtime, --threads)
  tokio (the default): work-stealing threads over epoll, one per core unless
  --threads N. glommio: one thread per core over io_uring (Linux 5.8+), each
  connection staying on its core. On the client rows of bench/README.md's
  latest full run (one thread each) it spent 1.05-1.45x tokio's CPU per
  request: its reactor re-arms two io_uring timers every turn and arms one
  poll for each wait.

EXAMPLES
  The first five run against the first server of README.md (POST /user/ and
  GET /user1k/ answered 200), the last against the last example of h2sim
  server --help.
  h2sim client http://127.0.0.1:8080/user1k/nobody
  h2sim client -x content-type=application/json -t '{ \"USER_MDN\" : \"01092000000\" }' -m POST -u http://127.0.0.1:8080/user/01092000000
  h2sim client -P 100 -C 100000 -R __MDN__=01092%06d -m POST -u http://127.0.0.1:8080/user/__MDN__ -x content-type=application/json -e 1k -q
  h2sim client -R __MDN__=01092%06d -s http -a 127.0.0.1:8080 -m POST -p /user/__MDN__ -t '{ \"USER_MDN\" : \"__MDN__\" }' -m GET -p /user1k/__MDN__
  h2sim client -T 1000 -P 100 --duration 2s --json run.json -q http://127.0.0.1:8080/user1k/nobody
  h2sim client -k certs/client-ec.key -c certs/client-ec.crt -V verify,trust_file=certs/ca.crt -m GET -u https://localhost:8443/

Exit status: 0 when every request succeeded; 1 when any failed or was lost,
a -T send was missed, a server could not be reached (at the start, or again
after it went away; the --token-url endpoint too, or it gave no token), or
Ctrl-C, SIGTERM or SIGHUP cut the run short (its report then covers what it
did); 2 on bad options.";

pub const BENCH: &str = "\
Start a server on loopback with h2simple's performance rules (POST /user1k/,
/user4k/, /user10k/ answered 200 with 1k/4k/10k JSON) and drive it with the
client (-P streams, -R __MDN__=01092%06d), printing TPS and latency for h2c, h2
over TLS and HTTP/1.1.";

pub const MERGE: &str = "\
Read reports written by `h2sim client --json FILE` (from one machine or
several) and print them as one: counts added, latency histograms merged exactly
(not averaged), elapsed time the longest of the runs.

EXAMPLE
  h2sim merge --json all.json a.json b.json";
