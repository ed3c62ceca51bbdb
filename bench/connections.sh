#!/usr/bin/env bash
# Connections and memory under load, per h2sim runtime (and nginx, when
# installed, for reference):
#
# 1. 10,000 HTTP/1.1 keep-alive connections at once (wrk -c10000, 1 KiB
#    bodies): connections the server accepted and requests it answered
#    (from its own report: wrk alone hides connections that never got an
#    answer), the kernel's listen-queue overflows during the connect burst
#    (TcpExtListenOverflows), and the server's peak RSS (VmHWM).
# 2. 100 HTTP/2 connections with 100 streams each in flight (h2load -c100
#    -m100, 1 KiB bodies): peak RSS above the idle server, per connection
#    (that is, per 100 active streams).
#
# Every server is started on a loopback port and stopped by its pid; each
# run is bounded (wrk -d, h2load -D, timeout).
#
#   bench/connections.sh [h2sim binary]
set -uo pipefail
. "$(dirname "$0")/lib.sh"
H2SIM=$(h2sim_binary "$(cd "$(dirname "$0")/.." && pwd)" "${1:-}") || exit 1
PORT=${PORT:-18560}
DUR=6
ulimit -n "$(ulimit -Hn)"
for tool in wrk h2load nstat; do
    command -v "$tool" >/dev/null || {
        echo "bench/connections.sh: $tool is missing (Debian: wrk, nghttp2-client, iproute2)" >&2
        exit 1
    }
done
if [ "$(ulimit -n)" -lt 10100 ]; then
    echo "bench/connections.sh: the open-file limit ($(ulimit -n)) is below 10,100" >&2
    exit 1
fi

BODY=$(printf '%01024d' 0)
WORK=$(mktemp -d /tmp/h2sim-conns.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

overflows() { nstat -az TcpExtListenOverflows | awk '/ListenOverflows/ {print $2}'; }

# start NAME CMD...: starts a server (@PORT@ in CMD is its port); sets SRV.
start() {
    local name=$1
    shift
    PORT=$((PORT + 1))
    local args=()
    for a in "$@"; do args+=("${a//@PORT@/$PORT}"); done
    port_free "$PORT" || exit 1
    "${args[@]}" >"$WORK/$name.out" 2>&1 &
    SRV=$!
    pids+=("$SRV")
    # A server of ours that does not come up fails the run, where its row
    # was left out and the script exited 0.
    started "$name" "$PORT" "$WORK/$name.out" || exit 1
    sleep 0.5
}

stop() {
    kill -INT "$SRV" 2>/dev/null
    for _ in $(seq 50); do
        kill -0 "$SRV" 2>/dev/null || break
        sleep 0.1
    done
    kill "$SRV" 2>/dev/null
    wait "$SRV" 2>/dev/null
}

nginx_conf() {
    cat >"$WORK/nginx.conf" <<EOF
master_process off;
worker_processes 1;
error_log $WORK/nginx-error.log;
pid $WORK/nginx.pid;
daemon off;
events { worker_connections 20000; }
worker_rlimit_nofile 20000;
http {
    access_log off;
    keepalive_requests 100000000;
    server {
        listen 127.0.0.1:$PORT backlog=4096;
        location / { return 200 "$BODY"; }
    }
}
EOF
}

printf '## 10,000 HTTP/1.1 keep-alive connections (wrk -t1 -c10000 -d%ss, 1 KiB bodies)\n\n' "$DUR"
printf '| server | accepted | requests answered | wrk requests | req/s | listen overflows | peak RSS MB | KiB/conn |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|\n'

h1_row() {
    local name=$1
    local before
    before=$(status_kib "$SRV" VmRSS)
    local ov0
    ov0=$(overflows)
    timeout $((DUR + 30)) wrk -t1 -c10000 -d"${DUR}s" --timeout 10s "http://127.0.0.1:$PORT/" \
        >"$WORK/$name.wrk" 2>&1
    local ov1 hwm
    ov1=$(overflows)
    hwm=$(status_kib "$SRV" VmHWM)
    stop
    local accepted="-" answered="-"
    if [ "${name#h2sim}" != "$name" ]; then
        accepted=$(grep -oE '[0-9]+ connections' "$WORK/$name.out" | grep -oE '^[0-9]+')
        answered=$(grep -oE '[0-9]+ responses' "$WORK/$name.out" | grep -oE '^[0-9]+')
    fi
    local reqs rps
    reqs=$(grep -oE '^ *[0-9]+ requests in' "$WORK/$name.wrk" | grep -oE '[0-9]+')
    rps=$(awk '/Requests\/sec/ {printf "%d", $2}' "$WORK/$name.wrk")
    printf '| %s | %s | %s | %s | %s | %s | %.1f | %.2f |\n' "$name" "$accepted" "$answered" \
        "${reqs:-0}" "${rps:-0}" $((ov1 - ov0)) "$(echo "$hwm / 1024" | bc -l)" \
        "$(echo "($hwm - $before) / 10000" | bc -l)"
}

for rt in tokio glommio; do
    start "h2sim-$rt" "$H2SIM" server --runtime "$rt" -S http://127.0.0.1:@PORT@ \
        -m GET -p / -s 200 -t "$BODY" -q
    h1_row "h2sim-$rt"
done
if command -v nginx >/dev/null; then
    # One process (no master): its RSS is the server's.
    PORT=$((PORT + 1))
    port_free "$PORT" || exit 1
    nginx_conf
    nginx -c "$WORK/nginx.conf" >"$WORK/nginx.out" 2>&1 &
    SRV=$!
    pids+=("$SRV")
    wait_port "$PORT" && sleep 0.5 && h1_row nginx
fi

printf '\n## 100 HTTP/2 connections x 100 streams in flight (h2load -c100 -m100 -D%s, 1 KiB bodies)\n\n' "$DUR"
printf '| server | req/s | idle RSS MB | peak RSS MB | KiB per connection (100 active streams) |\n'
printf '|---|---:|---:|---:|---:|\n'
for rt in tokio glommio; do
    start "h2sim-$rt-h2" "$H2SIM" server --runtime "$rt" -S http://127.0.0.1:@PORT@ \
        -m GET -p / -s 200 -t "$BODY" -q
    before=$(status_kib "$SRV" VmRSS)
    timeout $((DUR + 30)) h2load -c100 -m100 -D"$DUR" "http://127.0.0.1:$PORT/" \
        >"$WORK/h2-$rt.h2load" 2>&1
    hwm=$(status_kib "$SRV" VmHWM)
    stop
    rps=$(awk '/^finished in/ {gsub(/,/, ""); printf "%d", $4}' "$WORK/h2-$rt.h2load")
    printf '| h2sim-%s | %s | %.1f | %.1f | %.1f |\n' "$rt" "${rps:-0}" \
        "$(echo "$before / 1024" | bc -l)" "$(echo "$hwm / 1024" | bc -l)" \
        "$(echo "($hwm - $before) / 100" | bc -l)"
done
