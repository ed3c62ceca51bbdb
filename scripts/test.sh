#!/usr/bin/env bash
# Runs every test h2sim has, on a fresh Debian machine with Rust: installs what
# the tests need when it is missing, checks formatting and lints, builds, and
# runs the unit, property, vector, corpus and doc tests.
#
# Usage: scripts/test.sh        (from anywhere inside the checkout)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

step() { printf '\n==> %s\n' "$*"; }

# The HPACK vectors live beside the checkout, in ../shared; a test that needs
# them fails without them, so say so up front rather than deep in a test log.
if [ ! -d "$root/../shared/hpack-test-case" ]; then
  echo "error: ../shared/hpack-test-case is missing (expected beside the checkout at $root/../shared)" >&2
  exit 1
fi

need_cargo_tool() { # tool crate
  if ! cargo "$1" --version >/dev/null 2>&1; then
    step "installing $2"
    cargo install --locked "$2"
  fi
}
need_cargo_tool nextest cargo-nextest

# Interop peers: programs nobody here wrote. A test whose peer is missing
# fails, so install them rather than let the tests find out.
need_debian() { # command package
  if ! command -v "$1" >/dev/null 2>&1; then
    missing_packages+=("$2")
  fi
}
need_debian_file() { # file package
  if [ ! -e "$1" ]; then
    missing_packages+=("$2")
  fi
}
missing_packages=()
need_debian curl curl
need_debian nghttp nghttp2-client
need_debian h2load nghttp2-client
need_debian nghttpd nghttp2-server
need_debian openssl openssl
need_debian nginx nginx-light
need_debian go golang-go
need_debian node nodejs
need_debian haproxy haproxy
need_debian lighttpd lighttpd
need_debian apache2 apache2
need_debian javac openjdk-17-jdk-headless  # java runs Peer.java from source: a JDK, not a JRE
need_debian_file /usr/share/java/netty-codec-http2.jar libnetty-java
need_debian_file /usr/share/java/okhttp.jar libokhttp-java
need_debian_file /usr/share/java/jetty9-http2-server.jar libjetty9-java
if [ ${#missing_packages[@]} -gt 0 ]; then
  step "installing ${missing_packages[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  # The servers among them (nginx, lighttpd, haproxy, apache2) install without
  # starting: the tests start their own, and two of them on port 80 would
  # fail the install. A policy already in place (as in container images)
  # stays as it is.
  policy=/usr/sbin/policy-rc.d
  own_policy=""
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo_cmd tee "$policy" >/dev/null
    $sudo_cmd chmod +x "$policy"
    own_policy=1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing_packages[@]}"
  if [ -n "$own_policy" ]; then
    $sudo_cmd rm -f "$policy"
  fi
fi
if ! python3 -c "import h2" >/dev/null 2>&1; then
  step "installing Python h2"
  python3 -m pip install --quiet h2
fi
# Python's HTTP/2 server and client on h2 (interop_python.rs).
if ! python3 -c "import hypercorn, httpx, h2" >/dev/null 2>&1; then
  step "installing hypercorn and httpx"
  python3 -m pip install --quiet hypercorn 'httpx[http2]'
fi
if ! command -v httpwg >/dev/null 2>&1; then
  step "installing httpwg-cli"
  cargo install --locked httpwg-cli
fi

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "cargo nextest run (unit, property, vector and corpus tests)"
cargo nextest run --workspace --all-targets --locked --no-fail-fast

step "cargo test --doc"
cargo test --workspace --doc --locked

step "cargo doc (broken or private links are errors), then with the private items"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --document-private-items --locked
RUSTDOCFLAGS="-D warnings" cargo doc -p h2sim-proto --all-features --no-deps --locked

step "fuzz targets build"
cargo check --manifest-path fuzz/Cargo.toml --locked

# Each fuzz target for about 30 s on top of its committed corpus (which the
# tests above replayed), failing on a crash. libFuzzer needs a nightly
# toolchain and cargo-fuzz; where they cannot be had, say so and go on.
# No sanitizer: h2sim-proto forbids unsafe code, so AddressSanitizer would
# only slow the run; -a keeps debug assertions and overflow checks on.
step "fuzzing each target for 30 s"
fuzz_blocker=""
if ! command -v rustup >/dev/null 2>&1; then
  fuzz_blocker="rustup is missing, so no nightly toolchain can be installed"
elif ! rustup run nightly rustc --version >/dev/null 2>&1 &&
  ! rustup toolchain install nightly --profile minimal; then
  fuzz_blocker="no nightly toolchain, and rustup could not install one"
elif ! cargo fuzz --version >/dev/null 2>&1 && ! cargo install --locked cargo-fuzz; then
  fuzz_blocker="cargo-fuzz is missing and could not be installed"
fi
if [ -n "$fuzz_blocker" ]; then
  echo "FUZZING NOT RUN: $fuzz_blocker (the corpus replay above still ran)"
else
  cargo +nightly fuzz build -s none -a
  fuzz_scratch=$(mktemp -d)
  trap 'rm -rf "$fuzz_scratch"' EXIT
  for target in $(cargo +nightly fuzz list); do
    # New inputs go to the scratch directory; the committed corpus is only read.
    mkdir "$fuzz_scratch/$target"
    log="$fuzz_scratch/$target.log"
    if ! cargo +nightly fuzz run -s none -a "$target" "$fuzz_scratch/$target" "fuzz/corpus/$target" -- \
      -max_total_time=30 -timeout=10 -print_final_stats=1 >"$log" 2>&1; then
      tail -n 60 "$log"
      echo "error: fuzz target $target crashed; the input is under fuzz/artifacts/$target" >&2
      exit 1
    fi
    echo "$target: $(grep -o 'number_of_executed_units: [0-9]*' "$log") in 30 s, no crash"
  done
fi

step "all tests passed"
