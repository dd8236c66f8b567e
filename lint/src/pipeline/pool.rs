//! A fixed set of scoped threads taking numbered tasks in turn: the tasks
//! are few and coarse (a file, or some tens of kilobytes of a stream), so a
//! shared counter (and a window on how far it runs ahead) is all the
//! scheduling they need.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Condvar, Mutex, mpsc};

/// How far the tasks handed out may run ahead of the one [`run_ordered`]
/// waits for, per thread: results wait in memory until their turn, so this
/// bounds them (a slow task, a huge document, holds the others back).
const AHEAD_PER_THREAD: usize = 4;

/// Runs `task(0..count)` on `threads` threads and returns the results in
/// task order; `None` for a task that panicked (tasks catch their own
/// panics, so never expected).
pub(super) fn run<T: Send>(count: usize, threads: usize, task: impl Fn(usize) -> T + Sync) -> Vec<Option<T>> {
    let mut out = Vec::with_capacity(count);
    run_ordered(count, threads, task, |_, t| out.push(t));
    out
}

/// Runs `task(0..count)` on `threads` threads and hands each result to
/// `consume`, on the calling thread, in task order as soon as it and all
/// before it are done (so results need not wait for the whole run): `None`
/// for a task whose thread died. At most [`AHEAD_PER_THREAD`] tasks per
/// thread wait for their turn.
pub(super) fn run_ordered<T: Send>(
    count: usize,
    threads: usize,
    task: impl Fn(usize) -> T + Sync,
    mut consume: impl FnMut(usize, Option<T>),
) {
    let threads = threads.clamp(1, count.max(1));
    let window = threads * AHEAD_PER_THREAD;
    // The next task to hand out, and the first whose result is not consumed.
    let turn = Mutex::new((0_usize, 0_usize));
    let moved = Condvar::new();
    let (send, receive) = mpsc::channel::<(usize, Option<T>)>();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let send = send.clone();
            let (turn, moved, task) = (&turn, &moved, &task);
            scope.spawn(move || {
                loop {
                    let i = {
                        let Ok(mut guard) = turn.lock() else { return };
                        while guard.0 < count && guard.0 >= guard.1 + window {
                            guard = match moved.wait(guard) {
                                Ok(guard) => guard,
                                Err(_) => return,
                            };
                        }
                        if guard.0 >= count {
                            return;
                        }
                        guard.0 += 1;
                        guard.0 - 1
                    };
                    // A task that panics gives `None` rather than stall those waiting for its turn.
                    let result = catch_unwind(AssertUnwindSafe(|| task(i))).ok();
                    if send.send((i, result)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(send);
        let mut waiting: BTreeMap<usize, Option<T>> = BTreeMap::new();
        let mut next = 0;
        let mut advance = |next: &mut usize, waiting: &mut BTreeMap<usize, Option<T>>| {
            while let Some(t) = waiting.remove(next) {
                consume(*next, t);
                *next += 1;
            }
            if let Ok(mut guard) = turn.lock() {
                guard.1 = *next;
            }
            moved.notify_all();
        };
        for (i, t) in receive.iter() {
            waiting.insert(i, t);
            advance(&mut next, &mut waiting);
        }
        // Every sender gone: whatever is still missing died with its thread.
        while next < count {
            let t = waiting.remove(&next).flatten();
            consume(next, t);
            next += 1;
        }
    });
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

    #[test]
    fn ordered_tasks_never_run_further_ahead_than_the_window() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let consumed = AtomicUsize::new(0);
        let furthest = AtomicUsize::new(0);
        let threads = 2;
        super::run_ordered(
            300,
            threads,
            |i| {
                let ahead = i.saturating_sub(consumed.load(Ordering::SeqCst));
                furthest.fetch_max(ahead, Ordering::SeqCst);
            },
            |_, _| {
                // A slow consumer: the workers would race ahead without the window.
                std::thread::sleep(std::time::Duration::from_micros(200));
                consumed.fetch_add(1, Ordering::SeqCst);
            },
        );
        assert_eq!(consumed.into_inner(), 300);
        let furthest = furthest.into_inner();
        assert!(furthest >= 1, "the workers ran ahead at all");
        assert!(furthest < threads * super::AHEAD_PER_THREAD, "a task {furthest} ahead of the consumer");
    }

    #[test]
    fn ordered_results_come_in_task_order_and_a_dead_task_as_none() {
        for threads in [1, 2, 5] {
            let mut seen = Vec::new();
            super::run_ordered(100, threads, |i| i * 2, |i, t| seen.push((i, t)));
            assert_eq!(seen, (0..100).map(|i| (i, Some(i * 2))).collect::<Vec<_>>());
        }
        // A panicking task kills its thread; the others still finish the run.
        let mut seen = Vec::new();
        let quiet = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        super::run_ordered(
            20,
            2,
            |i| {
                assert!(i != 7, "task 7 dies");
                i
            },
            |i, t| seen.push((i, t)),
        );
        std::panic::set_hook(quiet);
        assert_eq!(seen.len(), 20);
        assert_eq!(seen[7], (7, None));
        assert!(seen.iter().enumerate().all(|(k, &(i, t))| i == k && (k == 7 || t == Some(k))), "{seen:?}");
    }
}
