#!/usr/bin/env bash
# Scaling of the glommio server with its executor count: h2load against
# `examples/glommio_serve.rs` on loopback, once per executor count, h2load pinned
# to its own CPUs with taskset. Prints one table row per count.
#
#   h2sim-glommio/bench/scale.sh [-e "1 2 4 8 16"] [-l LOAD_CPUS] [-s SERVER_CPUS]
#                                [-n REQUESTS] [-c CONNECTIONS] [-m STREAMS]
#                                [-t THREADS] [-T SECONDS]
#
#   -e  executor counts to measure (default: 1 and the number of server CPUs)
#   -l  CPUs for h2load, a taskset list (default: every CPU)
#   -s  CPUs the executors are pinned to, in order (default: the CPUs not in
#       -l, or every CPU when -l takes them all, as on a 2-core machine)
#   -n  requests per run (default 200000); -c connections (64);
#   -m  concurrent streams per connection (100); -t h2load threads
#       (default: the number of load CPUs); -T time limit per run (60 s)
#
# On a machine with 16 or more cores, for instance:
#   bench/scale.sh -e "1 2 4 8 16" -s 0-15 -l 16-31
# Everything stays on 127.0.0.1; every run is bounded by -n and -T.
set -euo pipefail

counts="" load_cpus="" server_cpus="" requests=200000 conns=64 streams=100 threads="" limit=60
while getopts "e:l:s:n:c:m:t:T:h" opt; do
    case $opt in
        e) counts=$OPTARG ;;
        l) load_cpus=$OPTARG ;;
        s) server_cpus=$OPTARG ;;
        n) requests=$OPTARG ;;
        c) conns=$OPTARG ;;
        m) streams=$OPTARG ;;
        t) threads=$OPTARG ;;
        T) limit=$OPTARG ;;
        *) sed -n '2,22p' "$0"; exit 2 ;;
    esac
done

for tool in h2load taskset cargo; do
    command -v "$tool" >/dev/null || { echo "scale.sh: $tool is not installed" >&2; exit 1; }
done

# Expands a taskset-style list (0-3,8) into one CPU per line.
expand() {
    local part
    IFS=, read -ra parts <<<"$1"
    for part in "${parts[@]}"; do
        if [[ $part == *-* ]]; then seq "${part%-*}" "${part#*-}"; else echo "$part"; fi
    done
}

all_cpus=$(grep Cpus_allowed_list /proc/self/status | awk '{print $2}')
load_cpus=${load_cpus:-$all_cpus}
if [[ -z $server_cpus ]]; then
    rest=$(comm -23 <(expand "$all_cpus" | sort -n) <(expand "$load_cpus" | sort -n) | sort -n | paste -sd,)
    server_cpus=${rest:-$all_cpus}
fi
n_server=$(expand "$server_cpus" | wc -l)
n_load=$(expand "$load_cpus" | wc -l)
counts=${counts:-"1 $n_server"}
threads=${threads:-$n_load}

root=$(cd "$(dirname "$0")/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
echo "building the glommio_serve example (release)..." >&2
(cd "$root" && cargo build --release -q -p h2sim-glommio --example glommio_serve)
serve=$target/release/examples/glommio_serve

out=$(mktemp -d)
server_pid=""
cleanup() {
    [[ -n $server_pid ]] && kill -INT "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
    rm -rf "$out"
}
trap cleanup EXIT

echo "server CPUs: $server_cpus; h2load CPUs: $load_cpus, $threads threads;" \
     "-n $requests -c $conns -m $streams; $(nproc) CPUs online, kernel $(uname -r)"
printf '%-10s %12s %12s %10s  %s\n' executors "requests/s" "throughput" "succeeded" "connections per executor"
for n in $counts; do
    "$serve" --executors "$n" --cpus "$server_cpus" --listen 127.0.0.1:0 >"$out/serve" 2>&1 &
    server_pid=$!
    for _ in $(seq 100); do
        grep -q "listening on" "$out/serve" && break
        kill -0 "$server_pid" 2>/dev/null || { cat "$out/serve" >&2; exit 1; }
        sleep 0.05
    done
    url=$(grep -o 'http://[^ ]*' "$out/serve" | head -1)
    [[ -n $url ]] || { echo "the server did not start:" >&2; cat "$out/serve" >&2; exit 1; }
    # Warm-up: connections, page faults, CPU frequency.
    timeout "$limit" taskset -c "$load_cpus" h2load -n $((requests / 10)) -c "$conns" \
        -m "$streams" -t "$threads" "$url" >/dev/null
    timeout "$limit" taskset -c "$load_cpus" h2load -n "$requests" -c "$conns" \
        -m "$streams" -t "$threads" "$url" >"$out/h2load" || true
    kill -INT "$server_pid"
    wait "$server_pid" || true
    server_pid=""
    rps=$(awk '/^finished in/ {print $4}' "$out/h2load")
    mbs=$(awk '/^finished in/ {print $6}' "$out/h2load")
    ok=$(awk '/^requests:/ {print $8}' "$out/h2load")
    spread=$(grep -o 'per executor \[[^]]*\]' "$out/serve" | sed 's/per executor //' || true)
    printf '%-10s %12s %12s %10s  %s\n' "$n" "${rps:-?}" "${mbs:-?}" "${ok:-?}" "${spread:-?}"
done
