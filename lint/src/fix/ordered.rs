//! Numbered tasks on a few threads, their results handed over in task order
//! as soon as each one and all before it are done, so that the caller can
//! write a file's result and drop it while later files are still being
//! fixed. Workers run at most a window of tasks ahead of the one handed
//! over last, so one slow file does not make the others pile up.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError, mpsc};

/// Runs `task(0..count)` on `threads` threads and calls `sink(i, result)`
/// on the calling thread in task order. A task that panics is done again on
/// the calling thread (so a panic it repeats is the caller's, as when the
/// work is done without threads).
pub(super) fn run<T: Send>(
    count: usize,
    threads: usize,
    task: impl Fn(usize) -> T + Sync,
    mut sink: impl FnMut(usize, T),
) {
    let window = threads.max(1) * 4;
    let next = AtomicUsize::new(0);
    // How many results were handed over, for the window.
    let handed = (Mutex::new(0usize), Condvar::new());
    let (tx, rx) = mpsc::channel::<(usize, Option<T>)>();
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, count.max(1)) {
            let (tx, next, handed, task) = (tx.clone(), &next, &handed, &task);
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= count {
                        return;
                    }
                    let (lock, wake) = handed;
                    let mut done = lock.lock().unwrap_or_else(PoisonError::into_inner);
                    while i >= *done + window {
                        done = wake.wait(done).unwrap_or_else(PoisonError::into_inner);
                    }
                    drop(done);
                    let result = catch_unwind(AssertUnwindSafe(|| task(i))).ok();
                    if tx.send((i, result)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        let mut waiting: BTreeMap<usize, Option<T>> = BTreeMap::new();
        let mut at = 0;
        let mut hand = |at: &mut usize, result: Option<T>| {
            sink(*at, result.unwrap_or_else(|| task(*at)));
            *at += 1;
            let (lock, wake) = &handed;
            *lock.lock().unwrap_or_else(PoisonError::into_inner) = *at;
            wake.notify_all();
        };
        for (i, result) in rx {
            waiting.insert(i, result);
            while let Some(result) = waiting.remove(&at) {
                hand(&mut at, result);
            }
        }
        // Every worker is gone: what none of them handed back is done here.
        while at < count {
            let result = waiting.remove(&at).flatten();
            hand(&mut at, result);
        }
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_come_in_task_order_and_a_panic_is_done_again() {
        let first = std::sync::atomic::AtomicBool::new(true);
        for threads in [1, 2, 5] {
            first.store(true, std::sync::atomic::Ordering::SeqCst);
            let mut got = Vec::new();
            super::run(
                100,
                threads,
                |i| {
                    if i == 37 && first.swap(false, std::sync::atomic::Ordering::SeqCst) {
                        panic!("once");
                    }
                    i * 2
                },
                |i, r| got.push((i, r)),
            );
            assert_eq!(got, (0..100).map(|i| (i, i * 2)).collect::<Vec<_>>());
        }
        let mut none = 0;
        super::run(0, 2, |i| i, |_, _| none += 1);
        assert_eq!(none, 0);
    }
}
