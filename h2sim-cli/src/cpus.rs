//! Which CPU a thread runs on.

use rustix::thread::{CpuSet, sched_getaffinity, sched_setaffinity};

use crate::bench::Threads;

/// Two CPUs of those this process may run on: one for the bench's client
/// thread, one for its server thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pair {
    pub client: usize,
    pub server: usize,
}

impl Pair {
    /// The first two CPUs the calling thread may run on, when the bench's
    /// client and server each run on one thread of their own; otherwise
    /// `None` (one thread for both, or runtimes of several workers, which
    /// the kernel places). Asked before either is pinned: a pinned thread
    /// may run on its CPU alone.
    pub fn for_bench(threads: Threads) -> Option<Pair> {
        if threads.client != 1 || threads.server != Some(1) {
            return None;
        }
        let allowed = sched_getaffinity(None).ok()?;
        let mut cpus = (0..CpuSet::MAX_CPU).filter(|&cpu| allowed.is_set(cpu));
        Some(Pair {
            client: cpus.next()?,
            server: cpus.next()?,
        })
    }
}

/// Keeps the calling thread (and the threads it starts from now on) on
/// `cpu`. Best effort: where the kernel refuses, the thread runs where it
/// may, as it did.
pub fn pin(cpu: usize) {
    let mut set = CpuSet::new();
    set.set(cpu);
    let _ = sched_setaffinity(None, &set);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn allowed() -> Vec<usize> {
        let set = sched_getaffinity(None).unwrap();
        (0..CpuSet::MAX_CPU).filter(|&c| set.is_set(c)).collect()
    }

    #[test]
    fn a_pair_only_for_one_thread_each_and_two_cpus() {
        let cpus = allowed();
        let one_each = Threads {
            client: 1,
            server: Some(1),
        };
        match cpus[..] {
            [client, server, ..] => {
                assert_eq!(Pair::for_bench(one_each), Some(Pair { client, server }));
            }
            _ => assert_eq!(Pair::for_bench(one_each), None),
        }
        let shared = Threads {
            client: 1,
            server: None,
        };
        assert_eq!(Pair::for_bench(shared), None);
        let several = Threads {
            client: 2,
            server: Some(2),
        };
        assert_eq!(Pair::for_bench(several), None);
    }

    #[test]
    fn a_pinned_thread_runs_on_its_cpu_alone() {
        let last = *allowed().last().unwrap();
        let on = std::thread::spawn(move || {
            pin(last);
            allowed()
        })
        .join()
        .unwrap();
        assert_eq!(on, [last]);
    }
}
