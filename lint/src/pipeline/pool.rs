//! A fixed set of scoped threads taking numbered tasks in turn: the tasks
//! are few and coarse (a file, or some tens of kilobytes of a stream), so a
//! shared counter is all the scheduling they need.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Runs `task(0..count)` on `threads` threads (the calling one among them)
/// and returns the results in task order; `None` for a task whose thread
/// died (tasks catch their own panics, so never expected).
pub(super) fn run<T: Send>(count: usize, threads: usize, task: impl Fn(usize) -> T + Sync) -> Vec<Option<T>> {
    let next = AtomicUsize::new(0);
    let work = || {
        let mut mine = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= count {
                return mine;
            }
            mine.push((i, task(i)));
        }
    };
    let helpers = threads.clamp(1, count.max(1)) - 1;
    let mut all: Vec<(usize, T)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..helpers).map(|_| scope.spawn(work)).collect();
        let mut all = work();
        for handle in handles {
            // A task catches its own panics; a helper that still died loses
            // only its results, which the caller sees as missing.
            if let Ok(mut theirs) = handle.join() {
                all.append(&mut theirs);
            }
        }
        all
    });
    let mut out: Vec<Option<T>> = (0..count).map(|_| None).collect();
    for (i, t) in all.drain(..) {
        if let Some(slot) = out.get_mut(i) {
            *slot = Some(t);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_come_in_task_order() {
        for threads in [1, 2, 5] {
            assert_eq!(super::run(100, threads, |i| i * 2), (0..100).map(|i| Some(i * 2)).collect::<Vec<_>>());
        }
        assert!(super::run(0, 2, |i| i).is_empty());
    }
}
