#!/usr/bin/env bash
# Runs N `h2sim client` processes side by side, each with the same
# arguments and its own JSON report, then merges the reports into one
# (`h2sim merge`: counts summed, latency histograms merged exactly). The
# same shape as the Kubernetes example in this folder, on one machine:
# use it when one process cannot load the cores, or to rehearse a
# multi-pod run.
#
# Usage: run-local.sh N OUT_DIR -- CLIENT_ARGS...
#   Each process runs CLIENT_ARGS as given, so give each its share
#   (-C 100000 over 4 processes: -C 25000).
#   Reports: OUT_DIR/part-I.json and part-I.txt, OUT_DIR/merged.json; the
#   merged report is printed. Exit code: the merge's (1 if any request
#   failed), 1 if a process failed, 2 on bad arguments.
#   H2SIM names the binary (default: h2sim on PATH).
#
# Example (against the server of README.md's first example, whose GET
# /user1k/ answers 200):
#   run-local.sh 4 /tmp/run -- -C 25000 -P 100 http://127.0.0.1:8080/user1k/x
#
# Ctrl-C stops every process; each still writes its report, and the
# reports written are merged.
set -euo pipefail

usage() {
  echo "usage: $0 N OUT_DIR -- CLIENT_ARGS..." >&2
  exit 2
}
[ $# -ge 3 ] && [ "$3" = "--" ] || usage
n=$1
out=$2
shift 3
[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "$0: N must be a positive integer, got '$n'" >&2; exit 2; }
h2sim=${H2SIM:-h2sim}
mkdir -p "$out"
rm -f "$out"/part-*.json "$out"/part-*.txt "$out/merged.json"

pids=()
trap 'kill -INT "${pids[@]}" 2>/dev/null || true' INT TERM
for i in $(seq 0 $((n - 1))); do
  "$h2sim" client "$@" --json "$out/part-$i.json" >"$out/part-$i.txt" 2>&1 &
  pids+=($!)
done
failed=0
for i in "${!pids[@]}"; do
  # `wait` returns early when a trapped signal arrives: wait again.
  while true; do
    set +e
    wait "${pids[$i]}"
    code=$?
    set -e
    kill -0 "${pids[$i]}" 2>/dev/null || break
  done
  if [ "$code" -ne 0 ]; then
    echo "$0: process $i exited with $code (see $out/part-$i.txt)" >&2
    failed=1
  fi
done

parts=("$out"/part-*.json)
[ -e "${parts[0]}" ] || { echo "$0: no process wrote a report (see $out/part-*.txt)" >&2; exit 1; }
set +e
"$h2sim" merge "${parts[@]}" --json "$out/merged.json"
merged=$?
set -e
[ "$merged" -ne 0 ] && exit "$merged"
exit "$failed"
