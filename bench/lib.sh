# Helpers the bench scripts share (sourced, not run).

# wait_port PORT: until something listens on 127.0.0.1:PORT, at most 10 s.
wait_port() {
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "port $1 never opened" >&2
    return 1
}

# started NAME PORT LOG: waits for NAME's port as `wait_port` does; when it
# never opens, says so with the end of NAME's LOG and fails.
started() {
    wait_port "$2" && return 0
    echo "$1 did not open port $2:" >&2
    tail -5 "$3" >&2
    return 1
}

# port_free PORT: nothing listens on 127.0.0.1:PORT yet. A server of ours
# that cannot bind its port would leave the measurement to whatever holds
# it, so the scripts check first and stop with the port named.
port_free() {
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
        echo "port $1 is already in use: stop what listens there and run again" >&2
        return 1
    fi
}

# status_kib PID FIELD: a /proc/PID/status figure in KiB (VmRSS, VmHWM).
status_kib() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }

# cargo_target_dir ROOT: where cargo builds this checkout: CARGO_TARGET_DIR
# (relative to ROOT, where the scripts run cargo) or ROOT/target. The
# binary is taken from there: a build with CARGO_TARGET_DIR set left
# ROOT/target stale or empty, and the scripts measured an older h2sim, or
# none at all, with nothing said.
cargo_target_dir() {
    local dir=${CARGO_TARGET_DIR:-target}
    case $dir in
    /*) echo "$dir" ;;
    *) echo "$1/$dir" ;;
    esac
}

# h2sim_binary ROOT [GIVEN]: GIVEN, or the release build of the checkout at
# ROOT; stops the script, naming the build command, when it is not there.
h2sim_binary() {
    local bin=${2:-$(cargo_target_dir "$1")/release/h2sim}
    if [ ! -x "$bin" ]; then
        echo "no h2sim binary at $bin: build it first (cargo build --release -p h2sim-cli)" >&2
        exit 1
    fi
    realpath "$bin"
}
