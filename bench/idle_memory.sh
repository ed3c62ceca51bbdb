#!/usr/bin/env bash
# Memory per idle connection: starts each server on a loopback port, reads
# its VmRSS, opens N idle connections (h2c after preface+SETTINGS, HTTP/1.1
# after one request), reads VmRSS again, and prints (after-before)/N.
# Every server is stopped by its pid; each step is bounded in time.
#
# usage: bench/idle_memory.sh [N] [h2sim binary]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
N=${1:-1000}
H2SIM=$(h2sim_binary "$(cd "$(dirname "$0")/.." && pwd)" "${2:-}") || exit 1
HERE=$(cd "$(dirname "$0")" && pwd)
PORT=${PORT:-18480}
ulimit -n "$(ulimit -Hn)"

pids=()
TLS_DIR=""
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    if [ -n "$TLS_DIR" ]; then rm -rf "$TLS_DIR"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# measure NAME PROTO CMD...: one server (@PORT@ in CMD is its port), one
# round of N idle connections.
measure() {
    local name=$1 proto=$2
    shift 2
    PORT=$((PORT + 1))
    local args=()
    for a in "$@"; do
        case $a in
        *@PORT@*) args+=("${a//@PORT@/$PORT}") ;;
        *) args+=("$a") ;;
        esac
    done
    port_free "$PORT" || exit 1
    "${args[@]}" >/dev/null 2>&1 &
    local pid=$!
    pids+=("$pid")
    wait_port "$PORT"
    sleep 0.3
    local before after
    before=$(status_kib "$pid" VmRSS)
    coproc HOLD { timeout 60 python3 "$HERE/idle_conns.py" "$PORT" "$N" "$proto" 50; }
    local line=""
    read -r -t 55 line <&"${HOLD[0]}" || true
    if [ "$line" != READY ]; then
        # A figure over the connections that did open would be wrong.
        echo "$name $proto: the connections did not all open (is the open-file limit below $N?)" >&2
        kill "${HOLD_PID:-}" 2>/dev/null || true
        exit 1
    fi
    after=$(status_kib "$pid" VmRSS)
    exec {HOLD[1]}>&-
    wait "$HOLD_PID" 2>/dev/null || true
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    printf '%-16s %-5s %8s KiB -> %8s KiB  %7.2f KiB/conn\n' "$name" "$proto" "$before" "$after" \
        "$(echo "($after - $before) / $N" | bc -l)"
}

for proto in h2c h1; do
    for rt in tokio glommio; do
        measure "h2sim-$rt" "$proto" "$H2SIM" server --runtime "$rt" -S http://127.0.0.1:@PORT@ \
            -m GET -p / -s 200 -t ok -q
    done
done
# TLS (h2 by ALPN): each server makes a throw-away certificate when it
# finds no key files, so it starts in an empty directory.
# Removed on exit, an interrupted or failed run's too.
TLS_DIR=$(mktemp -d /tmp/h2sim-idle-tls.XXXXXX)
cd "$TLS_DIR"
for rt in tokio glommio; do
    measure "h2sim-$rt" h2 "$H2SIM" server --runtime "$rt" -S https://127.0.0.1:@PORT@ \
        -m GET -p / -s 200 -t ok -q
done
cd - >/dev/null
if command -v nghttpd >/dev/null; then
    measure nghttpd h2c nghttpd --no-tls -d /tmp @PORT@
fi
