#!/usr/bin/env bash
# The benchmark suite in one command: installs the peers when missing,
# builds h2sim (release) and the minimal hyper server, starts every server
# on loopback ports by itself, runs the server matrix, the client matrix and
# the h2sim pair, stops what it started (by pid) and prints the tables.
#
#   bench/run.sh [--quick] [--no-install] [--only server|client|pair] [--out FILE]
#
# --quick: 1k bodies, the 1x100 and 100-connection shapes, 2 s per run
# (a few minutes in all). Without it: 1k/4k/10k, 1x100, 10x100, 10x1000
# streams and 100 HTTP/1.1 connections, 3 s per run. Both add a connection
# per request (wrk, "Connection: close", 50 connections, 1k). --only
# runs one part: the server matrix, the client matrix or the pair.
#
# Every run is bounded (h2load -D, wrk -d, oha -z, h2sim --duration, and
# `timeout` around each). Servers and load generators are pinned to
# different cores with taskset; cells alternate A B A B over the servers
# and the table shows the mean of the two rounds. CPU per request comes
# from /proc/PID/stat (utime+stime of the server and its children; the
# load generator's, and its peak resident set, from GNU time), TCP
# segments from the OutSegs delta of /proc/net/snmp (both directions:
# loopback). "bound" says what limited the run: a load generator at >=90%
# of its core means the server was not saturated. On a shared machine
# neither side may get a whole core (other work takes its share): the
# column then names the busier side, with both shares, so a load generator
# busier than the server still reads as "server not saturated". The client
# matrix adds a cell of 1,000 connections with one request in flight on
# each, quick or not.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/lib.sh"
QUICK=0
INSTALL=1
OUT=""
ONLY=""
while [ $# -gt 0 ]; do
    case $1 in
    --quick) QUICK=1 ;;
    --no-install) INSTALL=0 ;;
    --out)
        OUT=${2:-}
        if [ -z "$OUT" ]; then
            echo "bench/run.sh: --out takes a file name" >&2
            exit 2
        fi
        shift
        ;;
    --only)
        ONLY=${2:-}
        case $ONLY in
        server | client | pair) ;;
        *)
            echo "bench/run.sh: --only takes server, client or pair" >&2
            exit 2
            ;;
        esac
        shift
        ;;
    *)
        echo "bench/run.sh: unknown argument $1 (use --quick, --no-install, --only PART, --out FILE)" >&2
        exit 2
        ;;
    esac
    shift
done

if [ "$QUICK" = 1 ]; then
    DUR=2
    SIZES=(1k)
    H2_SHAPES=("1x100")
else
    DUR=3
    SIZES=(1k 4k 10k)
    H2_SHAPES=("1x100" "10x100" "10x1000")
fi
H1_CONNS=100
# A connection per request (wrk with "Connection: close"): what accepting,
# answering once and closing costs, 1k bodies only.
CLOSE_CONNS=50
# Longest a single run may take, startup and teardown included.
BOUND=$((DUR + 20))

if [ "$(nproc)" -ge 2 ]; then
    LG_CPU=0
    SRV_CPU=1
else
    LG_CPU=0
    SRV_CPU=0
fi
HZ=$(getconf CLK_TCK)

# Built by `build` below; where cargo puts it (see lib.sh).
H2SIM=$(cargo_target_dir "$ROOT")/release/h2sim
HYPER=$ROOT/target/release/bench-hyper-server
CERT=$ROOT/certs/server-ec.crt
KEY=$ROOT/certs/server-ec.key
WORK=$(mktemp -d /tmp/h2sim-bench.XXXXXX)
# 1,000 client connections, and the servers' as many.
ulimit -n "$(ulimit -Hn)"
chmod 755 "$WORK"

PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do
        kill "$p" 2>/dev/null
    done
    sleep 0.5
    for p in "${PIDS[@]}"; do
        kill -9 "$p" 2>/dev/null
    done
    rm -rf "$WORK"
}
trap cleanup EXIT
# Ctrl-C (or SIGTERM) ends the run with the tables of the cells measured so
# far, where it printed none and a long run's work was lost.
trap 'interrupted 130' INT
trap 'interrupted 143' TERM

log() { echo "[bench] $*" >&2; }

# --- peers -----------------------------------------------------------------

ensure_peers() {
    local missing=()
    command -v h2load >/dev/null || missing+=(nghttp2-client)
    command -v nghttpd >/dev/null || missing+=(nghttp2-server)
    command -v h2o >/dev/null || missing+=(h2o)
    command -v nginx >/dev/null || missing+=(nginx)
    command -v wrk >/dev/null || missing+=(wrk)
    [ -x /usr/bin/time ] || missing+=(time)
    if [ ${#missing[@]} -gt 0 ]; then
        log "installing ${missing[*]}"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
    if ! command -v oha >/dev/null && [ ! -x "$HOME/.cargo/bin/oha" ]; then
        log "installing oha from crates.io"
        cargo install oha --locked >/dev/null 2>&1 || log "oha did not install: its rows are skipped"
    fi
}

OHA=$(command -v oha || echo "$HOME/.cargo/bin/oha")

build() {
    log "building h2sim and the hyper server (release)"
    (cd "$ROOT" && cargo build --release -q -p h2sim-cli) || exit 1
    CARGO_TARGET_DIR=$ROOT/target cargo build --release -q \
        --manifest-path "$ROOT/bench/hyper-server/Cargo.toml" || exit 1
}

# --- servers ---------------------------------------------------------------

# name -> "h2c-port tls-port h1-port" ("-" where the server lacks it)
declare -A PORTS=(
    [h2sim-tokio]="19100 19101 19100"
    [h2sim-glommio]="19110 19111 19110"
    [nghttpd]="19120 19121 -"
    [h2o]="19130 19131 19130"
    [nginx]="19140 19141 19142"
    [hyper]="19150 - 19150"
)
SERVERS=(h2sim-tokio h2sim-glommio nghttpd h2o nginx hyper)
# The pair's servers: tokio's h2c here and TLS on the next port, glommio's
# on the two after.
PAIR_PORT=19200
# The peers the ratio column compares against.
PEERS=(nghttpd h2o nginx hyper)
declare -A SPID=()

port_of() { # SERVER h2c|tls|h1
    local -a p
    read -ra p <<<"${PORTS[$1]}"
    case $2 in
    h2c) echo "${p[0]}" ;;
    tls) echo "${p[1]}" ;;
    h1) echo "${p[2]}" ;;
    esac
}

docroot() {
    mkdir -p "$WORK/www" "$WORK/tmp"
    for s in 1 4 10; do
        head -c $((s * 1024)) /dev/zero | tr '\0' x >"$WORK/www/${s}k"
    done
    chmod -R a+rX "$WORK/www"
}

h2sim_rules() {
    for s in 1k 4k 10k; do
        printf -- '-m GET -p /%s -s 200 -e %s -m POST -p /%s -s 200 -e %s ' "$s" "$s" "$s" "$s"
    done
}

start() { # NAME CMD...: pinned to the server core, pid recorded
    local name=$1
    shift
    taskset -c "$SRV_CPU" "$@" >"$WORK/$name.log" 2>&1 &
    SPID[$name]=$!
    PIDS+=($!)
}

start_servers() {
    local rules
    for s in "${SERVERS[@]}"; do
        for proto in h2c tls h1; do
            local p
            p=$(port_of "$s" "$proto")
            [ "$p" = - ] || port_free "$p" || exit 1
        done
    done
    for p in $(seq "$PAIR_PORT" $((PAIR_PORT + 3))); do
        port_free "$p" || exit 1
    done
    rules=$(h2sim_rules)
    for rt in tokio glommio; do
        local p
        p=$(port_of "h2sim-$rt" h2c)
        # shellcheck disable=SC2086
        start "h2sim-$rt" "$H2SIM" server --runtime "$rt" --threads 1 -H max_concurrent_streams=1000 \
            -S "http://127.0.0.1:$p" -k "$KEY" -c "$CERT" -S "https://127.0.0.1:$((p + 1))" $rules -q
    done
    start nghttpd nghttpd --no-tls -n 1 -m 1000 -d "$WORK/www" "$(port_of nghttpd h2c)"
    start nghttpd-tls nghttpd -n 1 -m 1000 -d "$WORK/www" "$(port_of nghttpd tls)" "$KEY" "$CERT"
    cat >"$WORK/h2o.conf" <<EOF
listen:
  host: 127.0.0.1
  port: $(port_of h2o h2c)
listen:
  host: 127.0.0.1
  port: $(port_of h2o tls)
  ssl:
    certificate-file: $CERT
    key-file: $KEY
    ocsp-update-interval: 0
num-threads: 1
http2-max-concurrent-requests-per-connection: 1000
error-log: $WORK/h2o-error.log
hosts:
  default:
    paths:
      /:
        file.dir: $WORK/www
EOF
    start h2o h2o -c "$WORK/h2o.conf"
    cat >"$WORK/nginx.conf" <<EOF
worker_processes 1;
daemon off;
master_process off;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log;
events { worker_connections 20000; }
http {
    access_log off;
    default_type application/octet-stream;
    keepalive_requests 100000000;
    http2_max_concurrent_streams 1000;
    client_body_temp_path $WORK/tmp;
    proxy_temp_path $WORK/tmp;
    fastcgi_temp_path $WORK/tmp;
    uwsgi_temp_path $WORK/tmp;
    scgi_temp_path $WORK/tmp;
    server {
        listen 127.0.0.1:$(port_of nginx h2c) http2;
        listen 127.0.0.1:$(port_of nginx tls) ssl http2;
        listen 127.0.0.1:$(port_of nginx h1);
        ssl_certificate $CERT;
        ssl_certificate_key $KEY;
        root $WORK/www;
    }
}
EOF
    start nginx nginx -c "$WORK/nginx.conf" -p "$WORK"
    TOKIO_WORKER_THREADS=1 start hyper "$HYPER" "$(port_of hyper h2c)"
    for s in "${SERVERS[@]}"; do
        for proto in h2c tls h1; do
            local p
            p=$(port_of "$s" "$proto")
            [ "$p" = - ] && continue
            # Without h2sim's own servers the run measures nothing it is
            # for; a peer's cells show `(errors)` and fail the run.
            started "$s" "$p" "$WORK/$s.log" || case $s in
            h2sim-*) exit 1 ;;
            esac
        done
    done
}

# The pid whose CPU counts for SERVER in PROTO.
server_pid() {
    if [ "$1" = nghttpd ] && [ "$2" = tls ]; then
        echo "${SPID[nghttpd-tls]}"
    else
        echo "${SPID[$1]}"
    fi
}

# utime+stime (ticks) of PID and its children's threads.
cpu_ticks() {
    local total=0 p
    for p in $1 $(pgrep -P "$1"); do
        [ -r "/proc/$p/stat" ] || continue
        local f
        read -ra f <<<"$(sed 's/^.*) //' "/proc/$p/stat")"
        # Fields after "comm": state is f[0]; utime f[11], stime f[12].
        total=$((total + f[11] + f[12]))
    done
    echo "$total"
}

out_segs() { awk '/^Tcp:/ { if (h) { print $12; exit } h = 1 }' /proc/net/snmp; }

# --- one measured run ------------------------------------------------------

# run_load KIND URL CONNS STREAMS [POST]: prints "reqs rps lg_cpu_seconds wall ok peak_rss_kib"
run_load() {
    local kind=$1 url=$2 conns=$3 streams=$4 post=${5:-}
    local out=$WORK/load.out timing=$WORK/load.time
    local data=()
    [ -n "$post" ] && data=(-d "$WORK/www/1k")
    # GNU time: wall, user and system seconds and the peak resident set,
    # of the load generator and its children (a failing run's status
    # line comes first, hence the last line).
    local TIMED=(/usr/bin/time -o "$timing" -f '%e %U %S %M')
    case $kind in
    h2load | h2load-h1)
        local h1=()
        [ "$kind" = h2load-h1 ] && h1=(--h1)
        "${TIMED[@]}" timeout "$BOUND" taskset -c "$LG_CPU" h2load "${h1[@]}" "${data[@]}" -t 1 -c "$conns" \
            -m "$streams" -D "$DUR" "$url" >"$out" 2>&1
        local reqs rps
        reqs=$(awk '/^requests:/ { print $8 }' "$out")
        rps=$(awk '/^finished in/ { print $4 }' "$out")
        local failed
        failed=$(awk '/^requests:/ { print $10 }' "$out")
        ;;
    wrk | wrk-close)
        local close=()
        [ "$kind" = wrk-close ] && close=(-H "Connection: close")
        "${TIMED[@]}" timeout "$BOUND" taskset -c "$LG_CPU" wrk -t1 -c "$conns" -d "${DUR}s" "${close[@]}" "$url" >"$out" 2>&1
        reqs=$(awk '/requests in/ { print $1 }' "$out")
        rps=$(awk '/^Requests\/sec:/ { print $2 }' "$out")
        failed=$(awk '/Non-2xx/ { print $5 }' "$out")
        ;;
    oha)
        local body=()
        [ -n "$post" ] && body=(-m POST -D "$WORK/www/1k")
        "${TIMED[@]}" timeout "$BOUND" taskset -c "$LG_CPU" "$OHA" --no-tui --http2 --insecure -z "${DUR}s" -c "$conns" \
            -p "$streams" "${body[@]}" "$url" >"$out" 2>&1
        rps=$(awk '/Requests\/sec:/ { print $2 }' "$out")
        reqs=$(awk -v r="$rps" -v d="$DUR" 'BEGIN { printf "%d", r * d }')
        failed=0
        ;;
    h2sim-tokio | h2sim-glommio)
        local method=GET body=()
        [ -n "$post" ] && method=POST body=(-e 1k)
        "${TIMED[@]}" timeout "$BOUND" taskset -c "$LG_CPU" "$H2SIM" client --runtime "${kind#h2sim-}" --threads 1 \
            --connections "$conns" -P "$streams" --duration "${DUR}s" -m "$method" "${body[@]}" \
            -u "$url" -q >"$out" 2>&1
        reqs=$(awk '/^requests:/ { print $8 }' "$out")
        rps=$(awk '/^finished in/ { print $4 }' "$out")
        failed=$(awk '/^requests:/ { print $10 }' "$out")
        ;;
    esac
    local wall user sys rss
    read -r wall user sys rss < <(tail -n 1 "$timing")
    local ok=1
    if [ -z "${reqs:-}" ] || [ "${reqs:-0}" = 0 ] || [ "${failed:-0}" != 0 ]; then
        ok=0
    fi
    echo "${reqs:-0} ${rps:-0} $(echo "$user + $sys" | bc -l) $wall $ok ${rss:-0}"
}

# measure SERVER PROTO KIND URL CONNS STREAMS: one run against a server;
# prints "rps us_per_req segs_per_req lg_pct srv_pct ok"
measure() {
    local server=$1 proto=$2
    shift 2
    local pid t0 s0 t1 s1
    pid=$(server_pid "$server" "$proto")
    t0=$(cpu_ticks "$pid")
    s0=$(out_segs)
    local reqs rps lg wall ok
    read -r reqs rps lg wall ok _ <<<"$(run_load "$@")"
    t1=$(cpu_ticks "$pid")
    s1=$(out_segs)
    awk -v r="$reqs" -v rps="$rps" -v t=$((t1 - t0)) -v hz="$HZ" -v s=$((s1 - s0)) -v lg="$lg" -v w="$wall" -v ok="$ok" \
        'BEGIN { if (r == 0) r = 1; if (w == 0) w = 1;
                 printf "%.0f %.2f %.3f %.0f %.0f %d\n", rps, t / hz * 1e6 / r, s / r, 100 * lg / w, 100 * t / hz / w, ok }'
}

# --- the matrices ----------------------------------------------------------

RESULTS=$WORK/results
: >"$RESULTS"

# Per-run figures gathered over the rounds of a cell, in associative
# arrays named by the caller: add ARRAY KEY VALUE sums, at_least ARRAY KEY
# VALUE keeps the largest, mean ARRAY KEY halves (two rounds).
add() {
    local -n into=$1
    into[$2]=$(echo "${into[$2]:-0} + $3" | bc -l)
}
at_least() {
    local -n into=$1
    [ "$3" -ge "${into[$2]:-0}" ] && into[$2]=$3
    return 0
}
mean() {
    local -n of=$1
    echo "${of[$2]} / 2" | bc -l
}

# cell NAME PROTO KIND PATH CONNS STREAMS: every server that has PROTO, two
# rounds in the same order (A B A B), one result line per server (means).
cell() {
    local name=$1 proto=$2 kind=$3 path=$4 conns=$5 streams=$6
    local -A sum_rps=() sum_us=() sum_segs=() max_lg=() max_srv=() all_ok=()
    for round in 1 2; do
        for s in "${SERVERS[@]}"; do
            local port scheme=http
            port=$(port_of "$s" "$proto")
            [ "$port" = - ] && continue
            [ "$proto" = tls ] && scheme=https
            local rps us segs lg srv ok
            read -r rps us segs lg srv ok <<<"$(measure "$s" "$proto" "$kind" "$scheme://127.0.0.1:$port$path" "$conns" "$streams")"
            add sum_rps "$s" "$rps"
            add sum_us "$s" "$us"
            add sum_segs "$s" "$segs"
            at_least max_lg "$s" "$lg"
            at_least max_srv "$s" "$srv"
            [ "$ok" = 0 ] && all_ok[$s]=0
            log "$name $s round $round: $rps req/s, $us us/req, client ${lg}%, server ${srv}%"
        done
    done
    for s in "${SERVERS[@]}"; do
        [ -n "${sum_rps[$s]:-}" ] || continue
        echo "$name $s $(mean sum_rps "$s") $(mean sum_us "$s") $(mean sum_segs "$s") \
${max_lg[$s]} ${max_srv[$s]} ${all_ok[$s]:-1}" >>"$RESULTS"
    done
}

server_matrix() {
    for size in "${SIZES[@]}"; do
        for shape in "${H2_SHAPES[@]}"; do
            local c=${shape%x*} m=${shape#*x}
            cell "h2c/$size/${shape}" h2c h2load "/$size" "$c" "$m"
            cell "tls/$size/${shape}" tls h2load "/$size" "$c" "$m"
        done
        cell "h1/$size/${H1_CONNS}conn" h1 h2load-h1 "/$size" "$H1_CONNS" 1
        cell "wrk/$size/${H1_CONNS}conn" h1 wrk "/$size" "$H1_CONNS" 1
    done
    cell "close/1k/${CLOSE_CONNS}conn" h1 wrk-close /1k "$CLOSE_CONNS" 1
}

print_server_table() {
    printf '\n## Server matrix (h2load/wrk on cpu %s, server on cpu %s, %ss per run, mean of 2 alternating rounds)\n\n' \
        "$LG_CPU" "$SRV_CPU" "$DUR"
    printf '| cell | server | req/s | server CPU µs/req | TCP segs/req | ratio to best peer | bound |\n'
    printf '|---|---|---:|---:|---:|---:|---|\n'
    awk -v peers="${PEERS[*]}" '
        BEGIN { n = split(peers, p, " "); for (i = 1; i <= n; i++) peer[p[i]] = 1 }
        { cell[NR] = $1; srv[NR] = $2; rps[NR] = $3; us[NR] = $4; segs[NR] = $5; lg[NR] = $6; sc[NR] = $7; ok[NR] = $8
          if (($2 in peer) && $3 > best[$1]) best[$1] = $3
          if (!($1 in order)) { order[$1] = ++cells; name[cells] = $1 } }
        END {
          for (c = 1; c <= cells; c++) for (i = 1; i <= NR; i++) if (cell[i] == name[c]) {
            if (lg[i] >= 90 && sc[i] >= 90) b = "both saturated (load generator " lg[i] "%, server " sc[i] "%)"
            else if (lg[i] >= 90) b = "load generator " lg[i] "%: server not saturated"
            else if (sc[i] >= 90) b = "server CPU " sc[i] "%"
            else if (lg[i] >= sc[i]) b = "load generator busier (" lg[i] "% vs server " sc[i] "%): server not saturated"
            else b = "server busier (" sc[i] "% vs load generator " lg[i] "%)"
            r = best[cell[i]] > 0 ? sprintf("%.2f", rps[i] / best[cell[i]]) : "-"
            printf "| %s | %s | %.0f%s | %.2f | %.3f | %s | %s |\n", cell[i], srv[i], rps[i], ok[i] ? "" : " (errors)", us[i], segs[i], r, b
          } }' "$RESULTS"
}

CLIENTS=(h2load oha h2sim-tokio h2sim-glommio)
CRESULTS=$WORK/cresults
: >"$CRESULTS"

# The client matrix: each load generator against nghttpd and h2o (on the
# server core), over h2c and TLS, same shapes; the client's own CPU per
# request and peak resident set. One cell more plays many clients: 1,000
# connections with a request in flight on each, GET from nghttpd over h2c.
client_matrix() {
    local shapes=("1x100") targets=("nghttpd h2c" "nghttpd tls" "h2o h2c")
    [ "$QUICK" = 0 ] && shapes=("1x100" "10x100") targets+=("h2o tls")
    for spec in "${targets[@]}"; do
        for shape in "${shapes[@]}"; do
            for method in GET POST; do
                # nghttpd answers POST to a file; h2o's file handler does not.
                [ "${spec% *}" = h2o ] && [ "$method" = POST ] && continue
                client_cell "$spec" "$shape" "$method"
            done
        done
    done
    client_cell "nghttpd h2c" 1000x1 GET
}

# client_cell "TARGET PROTO" CONNSxSTREAMS METHOD: two alternating rounds
# of every client, their means into $CRESULTS.
client_cell() {
    local spec=$1 shape=$2 method=$3
    local target=${spec% *} proto=${spec#* } scheme=http cellname=${spec% *}
    [ "$proto" = tls ] && scheme=https cellname=$target-tls
    local c=${shape%x*} m=${shape#*x} post=""
    [ "$method" = POST ] && post=1
    local -A sum_rps=() sum_us=() lgmax=() okall=() rssmax=()
    for round in 1 2; do
        for tool in "${CLIENTS[@]}"; do
            [ "$tool" = oha ] && [ ! -x "$OHA" ] && continue
            local reqs rps lg wall ok rss
            read -r reqs rps lg wall ok rss <<<"$(run_load "$tool" \
                "$scheme://127.0.0.1:$(port_of "$target" "$proto")/1k" "$c" "$m" $post)"
            [ "$reqs" = 0 ] && reqs=1
            local us
            us=$(echo "$lg * 1000000 / $reqs" | bc -l)
            add sum_rps "$tool" "$rps"
            add sum_us "$tool" "$us"
            at_least lgmax "$tool" "$(echo "100 * $lg / $wall" | bc)"
            at_least rssmax "$tool" "$rss"
            [ "$ok" = 0 ] && okall[$tool]=0
            log "client $cellname $method $shape $tool round $round: $rps req/s, $us us/req, peak RSS $rss KiB"
        done
    done
    for tool in "${CLIENTS[@]}"; do
        [ -n "${sum_rps[$tool]:-}" ] || continue
        echo "$cellname/$method-1k/$shape $tool $(mean sum_rps "$tool") $(mean sum_us "$tool") \
${lgmax[$tool]} ${okall[$tool]:-1} ${rssmax[$tool]}" >>"$CRESULTS"
    done
}

print_client_table() {
    printf '\n## Client matrix (client on cpu %s, server on cpu %s, h2c and TLS, %ss per run, mean of 2 alternating rounds)\n\n' \
        "$LG_CPU" "$SRV_CPU" "$DUR"
    printf '| cell | client | req/s | client CPU µs/req | req/s ratio to h2load | CPU ratio to h2load | client CPU | peak RSS MB |\n'
    printf '|---|---|---:|---:|---:|---:|---:|---:|\n'
    awk '{ cell[NR] = $1; t[NR] = $2; rps[NR] = $3; us[NR] = $4; lg[NR] = $5; ok[NR] = $6; rss[NR] = $7
           if ($2 == "h2load") { brps[$1] = $3; bus[$1] = $4 }
           if (!($1 in order)) { order[$1] = ++cells; name[cells] = $1 } }
         END { for (c = 1; c <= cells; c++) for (i = 1; i <= NR; i++) if (cell[i] == name[c])
               printf "| %s | %s | %.0f%s | %.2f | %s | %s | %d%% | %.1f |\n", cell[i], t[i], rps[i], ok[i] ? "" : " (errors)", us[i],
                 brps[cell[i]] ? sprintf("%.2f", rps[i] / brps[cell[i]]) : "-",
                 bus[cell[i]] ? sprintf("%.2f", us[i] / bus[cell[i]]) : "-", lg[i], rss[i] / 1024 }' "$CRESULTS"
}

# The pair: h2sim client against h2sim server with h2simple's performance
# commands (-P 100 -C 100000 -R __MDN__=01092%06d, POST with a 1k/4k/10k body).
# pair_once RT PROTO SIZE PORT: TPS of one run of the pair's client, or
# nothing when the client failed (a request that failed fails the run).
pair_once() {
    local rt=$1 proto=$2 size=$3 port=$4
    local scheme=http p=$port one=() out
    [ "$proto" = tls ] && scheme=https p=$((port + 1))
    [ "$proto" = h1 ] && one=(-1)
    out=$(timeout 60 taskset -c "$LG_CPU" "$H2SIM" client --runtime "$rt" --threads 1 "${one[@]}" \
        -P 100 -C 100000 -R __MDN__=01092%06d -m POST \
        -u "$scheme://127.0.0.1:$p/user$size/__MDN__" -x content-type=application/json -e "$size" -q 2>&1) || {
        log "pair $rt $proto $size failed: $(tail -3 <<<"$out")"
        return
    }
    awk '/^finished in/ { print $4 }' <<<"$out"
}

# Both runtimes' servers at once (tokio on PAIR_PORT, glommio two ports up,
# each with its TLS listener on the next port); each cell runs the two
# runtimes' pairs alternately, twice (A B A B), and shows the mean.
pair() {
    printf '\n## The pair: h2sim client -> h2sim server, h2simple performance commands (-P 100 -C 100000, mean of 2 alternating rounds)\n\n'
    printf '| runtime | protocol | body | TPS | vs h2simple pair (~66k, 1k h2c) |\n|---|---|---|---:|---:|\n'
    local rts=(tokio glommio) sp=()
    local -A port=([tokio]=$PAIR_PORT [glommio]=$((PAIR_PORT + 2)))
    for rt in "${rts[@]}"; do
        taskset -c "$SRV_CPU" "$H2SIM" server --runtime "$rt" --threads 1 -S "http://127.0.0.1:${port[$rt]}" \
            -k "$KEY" -c "$CERT" -S "https://127.0.0.1:$((port[$rt] + 1))" \
            -m POST -p /user1k/ -s 200 -x content-type=application/json -e 1k \
            -m POST -p /user4k/ -s 200 -x content-type=application/json -e 4k \
            -m POST -p /user10k/ -s 200 -x content-type=application/json -e 10k -q >"$WORK/pair-$rt.log" 2>&1 &
        sp+=($!)
        PIDS+=($!)
        started "the pair's $rt server" "${port[$rt]}" "$WORK/pair-$rt.log" || exit 1
    done
    for proto in h2c tls h1; do
        for size in "${SIZES[@]}"; do
            local -A sum=([tokio]=0 [glommio]=0) failed=([tokio]="" [glommio]="")
            for _ in 1 2; do
                for rt in "${rts[@]}"; do
                    local tps
                    tps=$(pair_once "$rt" "$proto" "$size" "${port[$rt]}")
                    [ -z "$tps" ] && failed[$rt]=" (errors)"
                    log "pair $rt $proto $size: ${tps:-0} TPS"
                    sum[$rt]=$(echo "${sum[$rt]} + ${tps:-0}" | bc -l)
                done
            done
            for rt in "${rts[@]}"; do
                local mean
                mean=$(echo "${sum[$rt]} / 2" | bc -l)
                printf '| %s | %s | %s | %.0f%s | %s |\n' "$rt" "$proto" "$size" "$mean" "${failed[$rt]}" \
                    "$([ "$proto$size" = h2c1k ] && echo "$mean" | awk '{ printf "%.1fx", $1 / 66000 }')"
            done
        done
    done
    kill "${sp[@]}" 2>/dev/null
    wait "${sp[@]}" 2>/dev/null
}

machine() {
    printf '## Machine\n\n'
    printf -- '- %s, %s cores, Linux %s\n' "$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)" "$(nproc)" "$(uname -r)"
    printf -- '- %s; %s; %s; h2o %s; %s; %s\n' "$(h2load --version | head -1)" "$(nghttpd --version | head -1)" \
        "$(nginx -v 2>&1)" "$(h2o --version | awk '/version/ { print $3; exit }')" "$(wrk -v 2>&1 | head -1 | awk '{ print $1, $2 }')" \
        "$([ -x "$OHA" ] && "$OHA" --version)"
    printf -- '- command: `bench/run.sh%s%s`, %s\n' "$([ "$QUICK" = 1 ] && echo ' --quick')" \
        "${ONLY:+ --only $ONLY}" "$(date -u '+%Y-%m-%d %H:%M UTC')"
}

# The machine, and the table of each part this run has measured cells of
# (all of them, unless it was interrupted).
tables() {
    machine
    if part server && [ -s "$RESULTS" ]; then print_server_table; fi
    if part client && [ -s "$CRESULTS" ]; then print_client_table; fi
    if part pair && [ -s "$WORK/pair.md" ]; then cat "$WORK/pair.md"; fi
}

# interrupted STATUS: prints the tables of what was measured, then exits
# with STATUS (130 for Ctrl-C, 143 for SIGTERM).
interrupted() {
    trap - INT TERM
    if declare -F tables >/dev/null && [ -n "${CRESULTS:-}" ]; then
        log "interrupted: the tables of the cells measured so far"
        tables | tee "${OUT:-$WORK/table.md}"
    fi
    exit "$1"
}

# part NAME: whether this run includes the server, client or pair part.
part() {
    [ -z "$ONLY" ] || [ "$ONLY" = "$1" ]
}

[ "$INSTALL" = 1 ] && ensure_peers
build
docroot
start_servers
# `if`, not `&&`: a part left out must not become the script's exit status.
if part server; then server_matrix; fi
if part client; then client_matrix; fi
if part pair; then pair >"$WORK/pair.md"; fi
tables | tee "${OUT:-$WORK/table.md}"
# A cell that failed (a peer missing or down, a client that failed) is in
# the tables as `(errors)`; the run fails with it, so a script that runs
# the benchmark can tell.
if grep -q '(errors)' "${OUT:-$WORK/table.md}"; then
    log "cells marked (errors) failed: see the lines above"
    exit 1
fi
