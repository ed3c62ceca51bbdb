//! Which CPU a thread runs on.

use rustix::thread::{CpuSet, sched_getaffinity, sched_setaffinity};

/// The CPUs the calling thread may run on, lowest first (none where the
/// kernel does not say). A pinned thread may run on its CPU alone, so a
/// plan for several threads asks before pinning any.
pub fn allowed() -> Vec<usize> {
    sched_getaffinity(None).map_or_else(
        |_| Vec::new(),
        |set| {
            (0..CpuSet::MAX_CPU)
                .filter(|&cpu| set.is_set(cpu))
                .collect()
        },
    )
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
