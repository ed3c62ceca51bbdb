//! The executors: one glommio `LocalExecutor` per thread, each pinned to a
//! CPU of its own, started together and reporting whether they came up.
//!
//! glommio registers `io_memory` bytes of buffers with each of its three
//! io_uring rings per executor. For a user without `CAP_IPC_LOCK` the kernel
//! counts those pinned pages against `RLIMIT_MEMLOCK`, summed over all of
//! that user's processes; registration past the limit fails (glommio then
//! carries on without registered buffers, with a warning), and glommio
//! refuses to start at all when the limit is below 512 KiB. Its default of
//! 10 MiB per executor is already past the common 8 MiB limit. This crate
//! does no file I/O, the only use of those buffers, so it asks for the
//! minimum (64 KiB): 16 executors then pin 3 MiB.

use std::fmt;
use std::io;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use glommio::{
    BuilderErrorKind, GlommioError, LocalExecutor, LocalExecutorBuilder, Placement,
    ReactorErrorKind,
};

use crate::shutdown::Shutdown;

/// glommio's floor for io_memory: it rounds smaller values up to this.
pub const DEFAULT_IO_MEMORY: usize = 64 * 1024;

/// How many executors run, and where.
#[derive(Debug, Clone)]
pub struct Executors {
    /// Executors (threads) to run; 0 means one per CPU this process may use.
    pub count: usize,
    /// The CPUs to pin to, executor `i` on `cpus[i % cpus.len()]`; `None`
    /// means the CPUs this process may use (its affinity, as `taskset` sets
    /// it), in order.
    pub cpus: Option<Vec<usize>>,
    /// Pin each executor to its CPU. Without pinning the scheduler moves
    /// threads around and the caches they warmed are lost.
    pub pin: bool,
    /// Bytes of I/O buffers glommio registers per executor (see the module
    /// documentation for why this is small).
    pub io_memory: usize,
    /// Busy-poll this long before sleeping when idle: lower latency at the
    /// price of a CPU that never rests. Off by default, since the load
    /// generator usually shares the machine.
    pub spin_before_park: Option<Duration>,
}

impl Default for Executors {
    fn default() -> Self {
        Executors {
            count: 0,
            cpus: None,
            pin: true,
            io_memory: DEFAULT_IO_MEMORY,
            spin_before_park: None,
        }
    }
}

impl Executors {
    /// `n` executors on the CPUs this process may use.
    pub fn new(n: usize) -> Self {
        Executors {
            count: n,
            ..Executors::default()
        }
    }

    /// The number of executors these options start.
    pub fn resolved_count(&self) -> usize {
        match self.count {
            0 => self.cpu_list().len().max(1),
            n => n,
        }
    }

    fn cpu_list(&self) -> Vec<usize> {
        match &self.cpus {
            Some(cpus) if !cpus.is_empty() => cpus.clone(),
            _ => allowed_cpus(),
        }
    }

    /// The CPU executor `index` is pinned to, if pinning.
    fn cpu_for(&self, index: usize, cpus: &[usize]) -> Option<usize> {
        if !self.pin || cpus.is_empty() {
            return None;
        }
        Some(cpus[index % cpus.len()])
    }

    fn builder(&self, cpu: Option<usize>) -> LocalExecutorBuilder {
        let placement = match cpu {
            Some(cpu) => Placement::Fixed(cpu),
            None => Placement::Unbound,
        };
        let mut builder = LocalExecutorBuilder::new(placement).io_memory(self.io_memory);
        if let Some(spin) = self.spin_before_park {
            builder = builder.spin_before_park(spin);
        }
        builder
    }
}

/// The CPUs this process may run on, from `Cpus_allowed_list` in
/// `/proc/self/status` (`0-3,8`); every CPU the standard library counts
/// when that cannot be read.
fn allowed_cpus() -> Vec<usize> {
    let listed = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
            parse_cpu_list(line.trim())
        });
    listed.unwrap_or_else(|| {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        (0..n).collect()
    })
}

/// Parses a kernel CPU list such as `0-3,8,10-11` (as `taskset -c` takes it).
pub fn parse_cpu_list(list: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in list.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if a > b {
                    return None;
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(part.trim().parse().ok()?),
        }
    }
    (!cpus.is_empty()).then_some(cpus)
}

/// Why the glommio runtime cannot run here. Every message names the tokio
/// runtime, which needs none of this, as the way out.
#[derive(Debug)]
pub enum RuntimeError {
    /// io_uring cannot be set up: a kernel without it (before 5.8 for what
    /// glommio needs), `kernel.io_uring_disabled`, or a seccomp filter (as
    /// container runtimes install).
    IoUringUnavailable {
        error: io::Error,
        /// The value of `kernel.io_uring_disabled`, where the kernel has it.
        sysctl_disabled: Option<u8>,
    },
    /// `RLIMIT_MEMLOCK` is below the minimum glommio insists on.
    MemlockTooLow { limit: u64, required: u64 },
    /// A CPU to pin to does not exist.
    NoSuchCpu { cpu: usize },
    /// Anything else glommio reported while building executor `executor`.
    Executor { executor: usize, reason: String },
    /// An executor thread could not be started, or ended before it was ready.
    Thread { executor: usize, reason: String },
    /// Building executor `executor` ran out of file descriptors (its rings
    /// and eventfds take some): the open-file limit, not io_uring, is what
    /// to change, and tokio would meet the same limit.
    OutOfDescriptors { executor: usize, error: io::Error },
}

const ALTERNATIVE: &str = "use `--runtime tokio`, which does not need io_uring";

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuntimeError::IoUringUnavailable {
                error,
                sysctl_disabled,
            } => {
                write!(f, "io_uring is unavailable ({error}")?;
                match (sysctl_disabled, error.raw_os_error()) {
                    (Some(n @ 1..), _) => write!(f, "; kernel.io_uring_disabled = {n}")?,
                    (_, Some(ENOSYS)) => {
                        f.write_str("; the kernel lacks it or a seccomp filter blocks it")?
                    }
                    _ => f.write_str("; a seccomp filter or kernel policy forbids it")?,
                }
                write!(f, "): the glommio runtime cannot run here; {ALTERNATIVE}")
            }
            RuntimeError::MemlockTooLow { limit, required } => write!(
                f,
                "the locked-memory limit (ulimit -l) is {} KiB but glommio needs at least {} KiB; \
                 raise it or {ALTERNATIVE}",
                limit / 1024,
                required / 1024
            ),
            RuntimeError::NoSuchCpu { cpu } => {
                write!(f, "cannot pin an executor to CPU {cpu}: no such CPU")
            }
            RuntimeError::Executor { executor, reason } => write!(
                f,
                "glommio executor {executor} could not start: {reason}; {ALTERNATIVE}"
            ),
            RuntimeError::Thread { executor, reason } => {
                write!(f, "executor thread {executor}: {reason}")
            }
            RuntimeError::OutOfDescriptors { executor, error } => write!(
                f,
                "glommio executor {executor} could not start: {error}: raise the open-file \
                 limit (ulimit -n) or use fewer connections"
            ),
        }
    }
}

impl std::error::Error for RuntimeError {}

const ENOSYS: i32 = 38;
const EPERM: i32 = 1;
const EACCES: i32 = 13;
const ENFILE: i32 = 23;
const EMFILE: i32 = 24;

fn io_uring_disabled_sysctl() -> Option<u8> {
    std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
        .ok()?
        .trim()
        .parse()
        .ok()
}

impl RuntimeError {
    /// Names what went wrong building an executor in the user's terms.
    fn from_glommio(executor: usize, cpu: Option<usize>, error: GlommioError<()>) -> Self {
        match error {
            GlommioError::ReactorError(ReactorErrorKind::MemLockLimit(limit, required)) => {
                RuntimeError::MemlockTooLow { limit, required }
            }
            GlommioError::BuilderError(BuilderErrorKind::NonExistentCpus { cpu }) => {
                RuntimeError::NoSuchCpu { cpu }
            }
            GlommioError::IoError(error)
                if matches!(error.raw_os_error(), Some(EMFILE | ENFILE)) =>
            {
                RuntimeError::OutOfDescriptors { executor, error }
            }
            GlommioError::IoError(error)
                if matches!(error.raw_os_error(), Some(ENOSYS | EPERM | EACCES)) =>
            {
                RuntimeError::IoUringUnavailable {
                    error,
                    sysctl_disabled: io_uring_disabled_sysctl(),
                }
            }
            error => RuntimeError::Executor {
                executor,
                reason: match cpu {
                    Some(cpu) => format!("{error} (pinned to CPU {cpu})"),
                    None => error.to_string(),
                },
            },
        }
    }
}

/// The soft `RLIMIT_MEMLOCK` in bytes, from `/proc/self/limits`; `None`
/// when unlimited or unreadable.
fn memlock_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max locked memory"))?;
    line["Max locked memory".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// glommio's own floor for `RLIMIT_MEMLOCK`, below which it will not start
/// (it reports it inside an opaque `io::Error`, so it is checked here first).
const GLOMMIO_MIN_MEMLOCK: u64 = 512 * 1024;

/// Fails early, with a clear message, where glommio would refuse to start
/// or panic: glommio reports a memlock limit below its floor inside an
/// opaque `io::Error`, and panics ("kernel should be at least 5.8") when
/// `io_uring_setup` is refused, so both are checked here first. Setting up
/// and dropping a two-entry ring costs a few microseconds.
fn preflight() -> Result<(), RuntimeError> {
    if let Some(limit) = memlock_limit()
        && limit < GLOMMIO_MIN_MEMLOCK
    {
        return Err(RuntimeError::MemlockTooLow {
            limit,
            required: GLOMMIO_MIN_MEMLOCK,
        });
    }
    match io_uring::IoUring::new(2) {
        Ok(ring) => {
            drop(ring);
            Ok(())
        }
        Err(error) => Err(RuntimeError::IoUringUnavailable {
            error,
            sysctl_disabled: io_uring_disabled_sysctl(),
        }),
    }
}

/// Registers the process for expedited memory barriers before any
/// executor runs. glommio issues one each time an executor goes to sleep,
/// and registers on the first: with the process's threads running, the
/// kernel then waits for a grace period (9-10 ms measured here), which
/// landed inside the first connection (a client's time to first byte went
/// from 0.4 to 10 ms, and a `-T` run started 10 ms behind). Registered
/// while the process has one thread, it costs a system call, and later
/// registrations find it done; so [`probe`], which a front end calls
/// first, registers too (a client's `start` runs on a thread of the front
/// end's, where the wait was 6-24 ms of its measured run). Where the
/// kernel has no such barrier glommio falls back on its own, so a failure
/// here changes nothing.
fn register_membarrier() {
    use rustix::thread::{MembarrierCommand, membarrier};
    let _ = membarrier(MembarrierCommand::RegisterPrivateExpedited);
}

/// Turns glommio's error type into the `io::Error` the public errors carry.
pub(crate) fn io_error(e: GlommioError<()>) -> io::Error {
    match e {
        GlommioError::IoError(e) => e,
        e => io::Error::other(e.to_string()),
    }
}

/// Builds one executor with these options and drops it: `Ok` when the
/// glommio runtime can run here. A front end calls this before offering
/// glommio, so a machine without io_uring fails at start with the reason.
pub fn probe(executors: &Executors) -> Result<(), RuntimeError> {
    preflight()?;
    register_membarrier();
    let options = executors.clone();
    let cpus = options.cpu_list();
    let cpu = options.cpu_for(0, &cpus);
    // On a thread of its own: pinning would otherwise move the caller.
    std::thread::Builder::new()
        .name("h2sim-glommio-probe".into())
        .spawn(move || {
            options
                .builder(cpu)
                .make()
                .map(drop)
                .map_err(|e| RuntimeError::from_glommio(0, cpu, e))
        })
        .map_err(|e| RuntimeError::Thread {
            executor: 0,
            reason: e.to_string(),
        })?
        .join()
        .unwrap_or_else(|_| {
            Err(RuntimeError::Thread {
                executor: 0,
                reason: "panicked while building the executor".into(),
            })
        })
}

/// How an executor tells the starting thread that it is set up (`Ok`) or
/// why it cannot serve, and hears whether every executor came up: only
/// then does its work begin. An executor that began at once did work a
/// failed start then threw away (a client out of descriptors reported
/// `0 started` for requests one executor had made).
pub(crate) struct Ready<E> {
    tx: mpsc::Sender<(usize, Result<(), E>)>,
    start: Arc<StartGate>,
}

impl<E> Ready<E> {
    /// Reports executor `index`'s set-up, then, if it came up, waits until
    /// every executor has reported: `true` when the work may begin.
    pub(crate) fn report(self, index: usize, result: Result<(), E>) -> bool {
        let up = result.is_ok();
        let Ready { tx, start } = self;
        let _ = tx.send((index, result));
        // Gone before the wait: an executor that died without reporting
        // is then told by the channel's end, not waited for for ever.
        drop(tx);
        up && start.wait()
    }
}

/// Whether a start went through, decided once every executor reported.
#[derive(Default)]
struct StartGate {
    decided: Mutex<Option<bool>>,
    told: Condvar,
}

impl StartGate {
    fn decide(&self, go: bool) {
        let mut decided = self.decided.lock().unwrap_or_else(|e| e.into_inner());
        *decided = Some(go);
        self.told.notify_all();
    }

    /// Blocks the executor's thread, which runs nothing else yet.
    fn wait(&self) -> bool {
        let mut decided = self.decided.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match *decided {
                Some(go) => return go,
                None => decided = self.told.wait(decided).unwrap_or_else(|e| e.into_inner()),
            }
        }
    }
}

/// Waits for every thread and gives back what each returned; an executor
/// that panicked passes its panic on (an application bug is not ours to hide).
pub(crate) fn join_all<T>(threads: Vec<JoinHandle<Option<T>>>) -> Vec<T> {
    threads
        .into_iter()
        .filter_map(|t| t.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
        .collect()
}

/// Starts `count` executors. Executor `i` runs `body(i, ready)`, which must
/// call [`Ready::report`] once it is set up (or has failed), and begin its
/// work only if that says so, then run to its end. Returns once every
/// executor reported; if one failed, the others are told not to begin,
/// `stop` is triggered, all threads are joined, and the first error comes
/// back.
pub(crate) fn start<E, T, B, Fut>(
    executors: &Executors,
    count: usize,
    stop: &Shutdown,
    body: B,
) -> Result<Vec<JoinHandle<Option<T>>>, E>
where
    E: From<RuntimeError> + Send + 'static,
    T: Send + 'static,
    B: Fn(usize, Ready<E>) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = T> + 'static,
{
    preflight().map_err(E::from)?;
    register_membarrier();
    let cpus = executors.cpu_list();
    let body = Arc::new(body);
    let (tx, rx) = mpsc::channel();
    let gate = Arc::new(StartGate::default());
    let mut threads = Vec::with_capacity(count);
    let mut spawn_error = None;
    for index in 0..count {
        let cpu = executors.cpu_for(index, &cpus);
        let builder = executors.builder(cpu);
        let (body, ready) = (
            body.clone(),
            Ready {
                tx: tx.clone(),
                start: gate.clone(),
            },
        );
        let spawned = std::thread::Builder::new()
            .name(format!("h2sim-glommio-{index}"))
            .spawn(move || run_executor(index, cpu, builder, ready, &*body));
        match spawned {
            Ok(thread) => threads.push(thread),
            Err(e) => {
                spawn_error = Some(E::from(RuntimeError::Thread {
                    executor: index,
                    reason: e.to_string(),
                }));
                break;
            }
        }
    }
    drop(tx);
    let mut ready = vec![false; threads.len()];
    let mut first_error = spawn_error;
    for _ in 0..threads.len() {
        match rx.recv() {
            Ok((index, Ok(()))) => ready[index] = true,
            Ok((_, Err(e))) => {
                first_error.get_or_insert(e);
            }
            // Every sender is gone: a thread died before reporting.
            Err(_) => break,
        }
    }
    let missing = ready.iter().position(|r| !r);
    if first_error.is_none()
        && let Some(executor) = missing
    {
        first_error = Some(E::from(RuntimeError::Thread {
            executor,
            reason: "ended before it was ready".into(),
        }));
    }
    gate.decide(first_error.is_none());
    if let Some(error) = first_error {
        stop.trigger();
        // A thread that panicked before it was ready has no panic worth
        // more than the error that explains the failed start.
        for thread in threads {
            let _ = thread.join();
        }
        return Err(error);
    }
    Ok(threads)
}

/// The body of one executor thread: build the executor, then run.
fn run_executor<E, T, B, Fut>(
    index: usize,
    cpu: Option<usize>,
    builder: LocalExecutorBuilder,
    ready: Ready<E>,
    body: &B,
) -> Option<T>
where
    E: From<RuntimeError>,
    B: Fn(usize, Ready<E>) -> Fut,
    Fut: std::future::Future<Output = T>,
{
    // glommio panics on some setups it cannot handle (see `preflight`);
    // one that slipped past the checks still becomes an error, not a
    // thread that dies before it reports.
    let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| builder.make()));
    let executor: LocalExecutor = match made {
        Ok(Ok(executor)) => executor,
        Ok(Err(e)) => {
            let error = RuntimeError::from_glommio(index, cpu, e);
            ready.report(index, Err(E::from(error)));
            return None;
        }
        Err(panic) => {
            let reason = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "glommio panicked while building the executor".into());
            let error = RuntimeError::Executor {
                executor: index,
                reason,
            };
            ready.report(index, Err(E::from(error)));
            return None;
        }
    };
    Some(executor.run(body(index, ready)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// An executor that cannot get its descriptors names the open-file
    /// limit; it named io_uring's absence, with tokio as the way out,
    /// which has the same limit.
    #[test]
    fn out_of_descriptors_names_the_open_file_limit() {
        let error = GlommioError::IoError(io::Error::from_raw_os_error(EMFILE));
        let told = RuntimeError::from_glommio(1, Some(1), error);
        assert!(matches!(
            told,
            RuntimeError::OutOfDescriptors { executor: 1, .. }
        ));
        let text = told.to_string();
        assert!(text.contains("ulimit -n"), "{text}");
        assert!(!text.contains("io_uring"), "{text}");
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,8"), Some(vec![0, 1, 2, 3, 8]));
        assert_eq!(parse_cpu_list("1"), Some(vec![1]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list(""), None);
        assert!(!allowed_cpus().is_empty());
    }

    #[test]
    fn reads_the_memlock_limit() {
        // Present on Linux; "unlimited" reads as None.
        let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
        let unlimited = limits
            .lines()
            .any(|l| l.starts_with("Max locked memory") && l.contains("unlimited"));
        assert_eq!(memlock_limit().is_none(), unlimited);
    }

    #[test]
    fn messages_name_the_tokio_runtime() {
        let errors = [
            RuntimeError::IoUringUnavailable {
                error: io::Error::from_raw_os_error(ENOSYS),
                sysctl_disabled: Some(0),
            },
            RuntimeError::IoUringUnavailable {
                error: io::Error::from_raw_os_error(EPERM),
                sysctl_disabled: Some(2),
            },
            RuntimeError::MemlockTooLow {
                limit: 65536,
                required: 524288,
            },
        ];
        for e in errors {
            assert!(e.to_string().contains("--runtime tokio"), "{e}");
        }
    }

    #[test]
    fn probe_succeeds_here() {
        probe(&Executors::new(1)).unwrap();
    }

    /// An expedited barrier is refused (EPERM) until the process is
    /// registered for it, and glommio registers only when an executor first
    /// sleeps: the body's first poll comes before that, so it sees our
    /// registration only. (nextest runs each test in a process of its own.)
    #[test]
    fn executors_start_registered_for_expedited_barriers() {
        use rustix::thread::{MembarrierCommand, membarrier};
        let threads = start::<RuntimeError, _, _, _>(
            &Executors::new(1),
            1,
            &Shutdown::new(),
            |index, ready| async move {
                ready.report(index, Ok(()));
                membarrier(MembarrierCommand::PrivateExpedited)
            },
        )
        .unwrap();
        let barriers = join_all(threads);
        assert!(matches!(barriers[..], [Ok(())]), "{barriers:?}");
    }

    /// An executor that came up does not begin its work until every one
    /// has: when another fails, it is told not to. It began at once, and
    /// a client out of descriptors lost what one executor had done.
    #[test]
    fn no_executor_begins_unless_all_came_up() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let began = Arc::new(AtomicBool::new(false));
        let seen = began.clone();
        let started = start::<RuntimeError, _, _, _>(
            &Executors {
                pin: false,
                ..Executors::new(2)
            },
            2,
            &Shutdown::new(),
            move |index, ready| {
                let began = seen.clone();
                async move {
                    if index == 1 {
                        let reason = "out of descriptors".to_owned();
                        ready.report(
                            index,
                            Err(RuntimeError::Thread {
                                executor: 1,
                                reason,
                            }),
                        );
                    } else if ready.report(index, Ok(())) {
                        began.store(true, Ordering::SeqCst);
                    }
                }
            },
        );
        assert!(matches!(
            started,
            Err(RuntimeError::Thread { executor: 1, .. })
        ));
        assert!(!began.load(Ordering::SeqCst));
    }

    #[test]
    fn missing_cpu_is_reported() {
        let options = Executors {
            cpus: Some(vec![100_000]),
            ..Executors::new(1)
        };
        let err = probe(&options).unwrap_err();
        assert!(
            matches!(err, RuntimeError::NoSuchCpu { cpu: 100_000 }),
            "{err}"
        );
    }
}
