//! `--help` texts: each option with its long form, and examples.

pub const TOP: &str = "\
h2sim: HTTP/2 and HTTP/1.1 simulator for 5G SBI network functions

USAGE:
    h2sim server [options] [rules]     answer requests by rules
    h2sim client [options] [steps|URI] drive request scenarios
    h2sim bench  [options]             server and client in one process, TPS table
    h2sim merge  FILE...               one report from several --json reports

Run `h2sim <command> --help` for the options of each.
";

pub const SERVER: &str = "\
h2sim server [options] [rules]: answer requests by rules (a successor of h2svr)

LISTENERS
  -S, --listen URL           http://ip:port (HTTP/2 prior knowledge, HTTP/1.1 and
                             h2c upgrade detected) or https://ip:port (ALPN);
                             IPv6 as [addr]:port; repeatable
  -k, --key FILE             private key (PEM) for the https listeners after it
  -c, --cert FILE            certificate chain (PEM) for the https listeners after it
  -V, --verify SPEC          client certificates: none | verify | pass, trust_file=PEM,
                             trust_dir=DIR, crl, crl_all, purpose (comma-separated)
  -H, --setting NAME=VALUE   HTTP/2 setting: header_table_size, enable_push,
                             max_concurrent_streams, initial_window_size,
                             max_frame_size, max_header_list_size
  -1, --http1                plain listeners speak HTTP/1.1 only
  -q, --quiet                no per-request output
  -Q, --no-trace             no protocol trace (overrides -v)
  -v, --verbose              trace HTTP/2 frames
      --idle-timeout DUR     close idle connections after DUR (e.g. 60s)
      --runtime tokio|glommio, --threads N

RULES (checked in order, first match wins; no match is 404)
  -m, --method METHOD        starts a rule
  -a, --authority HOST       match :authority exactly
  -p, --path PREFIX          match paths starting with PREFIX
  -s, --status CODE          response status (default 200)
  -x, --header NAME=VALUE    response field (repeatable)
  -t, --text TEXT            body; ${path}, ${suffix}, ${seg1}... echo the request path
  -b, --hex HEX              body as hex
  -f, --file FILE            body from a file
  -e, --size N|Nk|Nm         generated JSON body of that size
  -d, --dir DIR              serve files under DIR (never outside it)
      --delay MS|MIN-MAX     hold the response back (a slow network function)
  -o, --push PATH            push PATH before the response; -s -x -t -b -f -e after
                             it describe the pushed response
      --rules FILE           more rules from a .toml or .yaml file

EXAMPLE
  h2sim server -S http://0.0.0.0:8080 \\
    -m POST -p /user/ -s 200 -x content-type=application/json -t '{ \"RESULT\" : \"SUCCESS\" }' \\
    -m GET  -p /user2/ -s 404
";

pub const CLIENT: &str = "\
h2sim client [options] [steps | URI]: drive request scenarios (a successor of h2cli)

RUN
  -P, --parallel N           scenarios in flight per connection (streams)
  -C, --count N              scenarios to run (default 1)
      --duration DUR         run for DUR (30s, 2m) instead of a count
      --warmup DUR           do not count the first DUR
  -T, --tps N                start N scenarios per second; latency is measured from
                             the intended start (no coordinated omission)
  -S, --connections-per-server N
                             connections to each server (default 1)
      --server URL           another instance to load (scheme://host:port, repeatable);
                             each scenario runs on one server, with its authority
      --connections N        connections in all, dealt out over the servers
  -R, --replace SYM=FORMAT   replace SYM in paths, header values and bodies by the
                             scenario number, printf-style (e.g. __MDN__=01092%06d)
  -M, --wrap N               scenario numbers wrap at N
  -k, -c, -V                 TLS key, certificate and verification (as the server)
  -H, --setting NAME=VALUE   HTTP/2 setting
  -1, --http1                HTTP/1.1
  -r, --retry                send again a request that was reset or lost
  -D, --dump-slow MS         print transactions slower than MS
      --timeout DUR          reset a request unanswered after DUR
  -q, --quiet                no per-request output (a progress bar on a terminal)
  -v, --verbose              trace HTTP/2 frames
  -Q, --no-trace             no protocol trace (overrides -v)
      --json FILE            write the report as JSON (histograms mergeable)
      --runtime tokio|glommio, --threads N

STEPS (a scenario runs them in order on one stream slot)
  -m, --method METHOD        starts a step
  -u, --uri URI              scheme://authority/path
  -s, -a, -p                 scheme, authority, path (before any -m: defaults)
  -x, --header NAME=VALUE    request field (kept with -R)
  -t, -b, -f, -e             body: text, hex, file, generated size

EXAMPLES
  h2sim client http://127.0.0.1:8080/user1k/nobody
  h2sim client -P 100 -C 100000 -R __MDN__=01092%06d \\
    -m POST -u http://127.0.0.1:8080/user1k/__MDN__ -x content-type=application/json -e 1k -q

Exit status: 0 when every request succeeded, 1 when any failed or was lost, 2 on bad options.
";

pub const BENCH: &str = "\
h2sim bench [options]: start a server on loopback with h2simple's performance rules
(POST /user1k/, /user4k/, /user10k/ answered 200 with 1k/4k/10k JSON) and drive it
with the client (100 streams, -R __MDN__=01092%06d), printing TPS and latency for
h2c, h2 over TLS and HTTP/1.1.

  -C, --count N              requests per cell (default 20000)
  -P, --parallel N           streams (or pipelined requests) per connection (default 100)
      --duration DUR         run each cell for DUR instead of a count
";

pub const MERGE: &str = "\
h2sim merge FILE...: read reports written by `h2sim client --json FILE` (from one
machine or several) and print them as one: counts added, latency histograms merged
exactly (not averaged), elapsed time the longest of the runs.
";
