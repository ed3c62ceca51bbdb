#!/usr/bin/env bash
# How the glommio server scales with its executors: for K = 1, 2, 4, 8, 16
# (as far as the machine allows), `h2sim server --runtime glommio
# --threads K` pinned to cores 0..K-1, and h2load on the remaining cores,
# over h2c with a 1 KiB answer. Prints one row per K: req/s, the server's
# CPU µs per request, the speedup over K=1, and whether h2load (at 100% of
# its cores) rather than the server bounded the run.
#
# Usage: bench/glommio_scaling.sh [SECONDS per run, default 10]
# Needs: h2load (nghttp2-client), taskset (util-linux), a release build
# (built here when missing). Load goes to 127.0.0.1 only; each run is
# bounded by SECONDS and the server is stopped by pid.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-10}
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "$0: SECONDS must be a positive integer, got '$seconds'" >&2; exit 2; }
command -v h2load >/dev/null || { echo "$0: h2load is needed (apt-get install nghttp2-client)" >&2; exit 1; }
command -v taskset >/dev/null || { echo "$0: taskset is needed (apt-get install util-linux)" >&2; exit 1; }
bin="$root/target/release/h2sim"
[ -x "$bin" ] || (cd "$root" && cargo build --release -p h2sim-cli)

cores=$(nproc)
ks=()
for k in 1 2 4 8 16; do
  # Leave h2load at least as many cores as the server has, and one at the least.
  [ $((k * 2)) -le "$cores" ] || [ "$k" -eq 1 ] && ks+=("$k")
done
[ "$cores" -ge 32 ] || echo "note: $cores cores: K up to ${ks[-1]} (K=16 needs 32 so h2load keeps up)"

ticks=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
port=18440
base=""
printf '%-4s %12s %14s %9s  %s\n' K req/s "CPU µs/req" speedup bound
for k in "${ks[@]}"; do
  server_cores="0-$((k - 1))"
  if [ "$cores" -gt "$k" ]; then
    load_cores="$k-$((cores - 1))" threads=$((cores - k))
  else # one core: both share it, and the table says nothing of scaling
    load_cores="0-$((cores - 1))" threads=1
  fi
  taskset -c "$server_cores" "$bin" server --runtime glommio --threads "$k" -q \
    -S "http://127.0.0.1:$port" -m GET -p / -s 200 -e 1k \
    >/dev/null 2>&1 &
  server=$!
  trap 'kill "$server" 2>/dev/null || true' EXIT
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.05
  done
  before=$(cpu_ticks "$server")
  out=$(taskset -c "$load_cores" h2load -D "$seconds" -t "$threads" -c $((threads * 10)) -m 100 \
    "http://127.0.0.1:$port/" 2>&1)
  after=$(cpu_ticks "$server")
  kill "$server"; wait "$server" 2>/dev/null || true
  port=$((port + 1))
  done_reqs=$(sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p' <<<"$out")
  rps=$(sed -n 's/^finished in .*, \([0-9.]*\) req\/s.*/\1/p' <<<"$out")
  [ -n "$done_reqs" ] && [ "$done_reqs" -gt 0 ] || { echo "$0: h2load failed at K=$k:"; echo "$out"; exit 1; } >&2
  us=$(awk -v t=$((after - before)) -v hz="$ticks" -v n="$done_reqs" 'BEGIN {printf "%.2f", t / hz * 1e6 / n}')
  [ -n "$base" ] || base=$rps
  speedup=$(awk -v a="$rps" -v b="$base" 'BEGIN {printf "%.2fx", a / b}')
  # The server's CPU over the run against the cores it had: well below its
  # K cores means h2load, not the server, set the rate.
  busy=$(awk -v t=$((after - before)) -v hz="$ticks" -v s="$seconds" -v k="$k" 'BEGIN {printf "%.0f", t / hz / s / k * 100}')
  bound="server at ${busy}% of its $k core(s)"
  [ "$busy" -lt 90 ] && bound="$bound: h2load bounded the run"
  printf '%-4s %12s %14s %9s  %s\n' "$k" "$rps" "$us" "$speedup" "$bound"
done
