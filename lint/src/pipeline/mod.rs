//! The one input pipeline: read the inputs, give each its context's
//! Services, parse and do a command's [`Step`] on every document on every
//! core, in memory bounded by the largest document and the Services the
//! rules need, not by the input. `lint`, `simulate` and the editor's
//! analysis are steps on documents; `fix`, which edits whole texts, is a
//! step on texts ([`each_text`]), fed by the same reader of Services
//! ([`crate::input::context_objects`]) and run on the same pool.
//!
//! Services inform the rules, and a Service can come after the workload it
//! selects. Each source belongs to a context (its directory, see
//! [`crate::input::context`]) whose batch starts with the Services of the
//! files that were not named; every document is done as if all of its
//! context's Services had been read first.
//!
//! Two paths give the same output, byte for byte (a test holds them to it):
//! the parallel one ([`parallel`]), the default, and the single-threaded one
//! ([`serial`]), kept as its reference and its fallback and chosen with
//! `LIFEGUARD_THREADS=1`.

mod keep;
mod parallel;
mod pool;
mod read;
mod serial;
mod source;
mod step;
mod texts;

use policies::{Batch, Policy};

pub use keep::{Keep, Lint};
pub use read::{Read, read};
pub use source::{Source, SourceResult};
pub use step::{Keeper, Step};
pub use texts::{Text, each_text};

use crate::input::Limits;
use crate::outcome::{InputError, Outcome};

/// Sets the threads that parse and lint (`1`: the single-threaded path);
/// unset, empty or not a number, every core.
pub const THREADS_ENV: &str = "LIFEGUARD_THREADS";

/// What [`lint_sources`] read and found.
#[derive(Debug)]
pub struct Linted {
    /// Findings in input order, and the errors found while linting objects.
    pub outcome: Outcome,
    /// Each source's syntax error, by source index.
    pub syntax_errors: Vec<(usize, InputError)>,
}

/// How many threads parse and lint: [`THREADS_ENV`] when set to a number,
/// else every core (and at least two, so that a single core still gets the
/// parallel path's bounded memory).
pub fn threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let set = std::env::var(THREADS_ENV).ok().and_then(|v| v.trim().parse::<usize>().ok()).filter(|&n| n > 0);
    set.unwrap_or(cores.max(2))
}

/// Parses and lints `(name, text)` sources that share one context (the
/// Services of any of them inform all).
pub fn lint_sources(sources: &[(String, String)], policy: &Policy, limits: &Limits) -> Linted {
    let keep = &mut Keep::default();
    lint_sources_in(sources, &vec![0; sources.len()], vec![Batch::default()], policy, limits, keep)
}

/// Parses and lints `(name, text)` sources, each in its context:
/// `context_of[i]` indexes `seeds`, the batch its context starts from. A
/// source whose context is out of range gets one of its own. `keep` says
/// how each document's outcome is kept.
pub fn lint_sources_in(
    sources: &[(String, String)],
    context_of: &[usize],
    seeds: Vec<Batch>,
    policy: &Policy,
    limits: &Limits,
    keep: &mut Keep,
) -> Linted {
    let sources: Vec<Source<'_>> = sources
        .iter()
        .enumerate()
        .map(|(i, (name, text))| Source {
            name,
            text,
            context: context_of.get(i).copied().unwrap_or(usize::MAX),
            policy,
        })
        .collect();
    lint_each(&sources, seeds, limits, threads(), keep)
}

/// Parses and lints sources, each with its own policy and context, on
/// `threads` threads (`1`: the single-threaded path). A source whose context
/// is out of range of `seeds` gets one of its own; `keep` says how each
/// document's outcome is kept.
pub fn lint_each(
    sources: &[Source<'_>],
    seeds: Vec<Batch>,
    limits: &Limits,
    threads: usize,
    keep: &mut Keep,
) -> Linted {
    let results = run(sources, seeds, limits, threads, &Lint, keep);
    let mut outcome = Outcome { files: sources.len(), ..Outcome::default() };
    let mut syntax_errors = Vec::new();
    for (i, mut result) in results.into_iter().enumerate() {
        let kinds = std::mem::take(&mut result.out.other_kinds);
        let unchecked = result.syntax.is_none() && result.out.objects == 0 && result.out.errors.is_empty();
        if let Some(source) = sources.get(i).filter(|_| unchecked) {
            result.out.notes.push(InputError {
                file: source.name.to_owned(),
                line: None,
                column: None,
                message: crate::outcome::unchecked::no_object(source.text, &kinds),
            });
        }
        outcome.absorb(result.out);
        if let Some(e) = result.syntax {
            syntax_errors.push((i, e));
        }
    }
    Linted { outcome, syntax_errors }
}

/// Reads discovered inputs and runs `step` on every document under one
/// policy, each text with its context's Services: what `simulate` and
/// `export alerts` do. Returns each source's output in input order and the
/// input errors (discovery, reading, syntax) in input order.
pub fn run_found<S: Step, K: Keeper<S::Out>>(
    found: &crate::input::Discovered,
    policy: &Policy,
    limits: &Limits,
    step: &S,
    keep: &mut K,
) -> (Vec<S::Out>, Vec<InputError>) {
    let mut read = read(found, limits);
    let sources: Vec<Source<'_>> = read
        .sources
        .iter()
        .zip(&read.context_of)
        .map(|((name, text), &context)| Source { name, text, context, policy })
        .collect();
    let seeds = std::mem::take(&mut read.seeds);
    let results = run(&sources, seeds, limits, threads(), step, keep);
    let mut outs = Vec::with_capacity(results.len());
    let mut syntax = Vec::new();
    for (i, result) in results.into_iter().enumerate() {
        outs.push(result.out);
        syntax.extend(result.syntax.map(|e| (i, e)));
    }
    let errors = read.errors(syntax);
    (outs, errors)
}

/// Parses every source and does `step` on each of its documents, each
/// source with its own policy and context, on `threads` threads (`1`: the
/// single-threaded path); one result per source, in order. A source whose
/// context is out of range of `seeds` gets one of its own; `keep` shapes
/// each document's output on the calling thread, in input order.
pub fn run<S: Step, K: Keeper<S::Out>>(
    sources: &[Source<'_>],
    mut seeds: Vec<Batch>,
    limits: &Limits,
    threads: usize,
    step: &S,
    keep: &mut K,
) -> Vec<SourceResult<S::Out>> {
    let sources: Vec<Source<'_>> = sources
        .iter()
        .map(|s| {
            if s.context < seeds.len() {
                *s
            } else {
                seeds.push(Batch::default());
                Source { context: seeds.len() - 1, ..*s }
            }
        })
        .collect();
    if threads <= 1 {
        serial::run(&sources, seeds, limits, step, keep)
    } else {
        parallel::run(&sources, seeds, limits, threads, step, keep)
    }
}

#[cfg(test)]
mod tests;
