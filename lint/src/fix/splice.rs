//! Writing all of an object's operations into its document's text with as
//! few parses as they allow. Each operation is located in the parse (the
//! same edit as [`super::edit::apply`] would make), and a run of operations
//! that do not depend on each other is spliced in at once; an operation
//! that depends on one before it in the run (it writes inside what that one
//! wrote, its edit reads text that one changes, they insert at one place in
//! an order the text cannot tell) starts a new run on the re-parsed text.
//! Re-parsing after every operation made an object with n fixes cost n
//! parses of a text that grows with n.

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashSet};

use serde_json::Value;

use super::edit::{EditError, Editor, Kind, Located, Splice};
use super::layout::Tally;
use super::text::{Offsets, newline_of, opens_block_scalar};
use crate::input::{Limits, parse_stream};

/// Sets each `(pointer, value)` in turn in document `doc_index` of `text`,
/// as applying them one by one with [`super::edit::apply`] does; on failure,
/// the index of the operation that failed and why.
pub(super) fn apply_all(
    text: &str,
    doc_index: usize,
    ops: &[(String, &Value)],
    json: bool,
    limits: &Limits,
) -> Result<String, (usize, EditError)> {
    apply_in_runs(text, doc_index, ops, json, limits).map(|(text, _)| text)
}

/// [`apply_all`], and how many parses it took.
pub(super) fn apply_in_runs(
    text: &str,
    doc_index: usize,
    ops: &[(String, &Value)],
    json: bool,
    limits: &Limits,
) -> Result<(String, usize), (usize, EditError)> {
    let mut text = text.to_owned();
    let mut next = 0;
    let mut runs = 0;
    while next < ops.len() {
        runs += 1;
        let (docs, _) = parse_stream(&text, limits);
        let doc = docs.get(doc_index).ok_or((next, EditError::NoDocument(doc_index)))?;
        let off = Offsets::new(&text);
        let mut tally = Tally::of(&text, &off, doc);
        let layout = tally.layout(newline_of(&text), json);
        let editor = Editor::new(&text, Offsets::new(&text), layout.clone());
        let mut run = Run::default();
        for (i, (pointer, value)) in ops.iter().enumerate().skip(next) {
            let located = match editor.locate(doc, pointer, value) {
                Ok(located) => located,
                // The text this run has not changed yet: the same error as one by one.
                Err(e) if run.edits.is_empty() => return Err((i, e)),
                // Perhaps an edit of this run makes the place; the next run says.
                Err(_) => break,
            };
            // An anchored value is checked against every alias in the text, which
            // an edit of this run could add or take away: it gets a run alone.
            if !run.edits.is_empty() && (located.anchored || !run.fits(&located, pointer)) {
                break;
            }
            let mut last = located.anchored || run_ends_after(&located.splice);
            if let Some(r) = &located.reshaped {
                tally.remove(&text, &off, r.key_col, r.node, r.value);
                tally.add_written(value, r.key_col, r.col, &layout);
                // The operations after it would indent as the re-parsed text says.
                last |= tally.layout(layout.newline, json) != layout;
            }
            run.add(located, pointer, i);
            next = i + 1;
            if last {
                break;
            }
        }
        text = run.write(&text);
    }
    Ok((text, runs))
}

/// Whether the edit ends a line with a block scalar indicator: the value
/// on the next line would read as a block scalar's content from then on.
fn run_ends_after(splice: &Splice) -> bool {
    splice.text.trim_end().lines().next_back().is_some_and(opens_block_scalar)
}

/// An edit of a run and what ordering it among the others needs.
struct Edit<'p> {
    splice: Splice,
    /// The existing value it edits (the mapping of an insert), and its tokens.
    parent: &'p str,
    depth: usize,
    order: usize,
}

/// The edits located in one parse, spliced in together.
#[derive(Default)]
struct Run<'p> {
    edits: Vec<Edit<'p>>,
    /// The members written, as pointers.
    written: HashSet<&'p str>,
    /// Every prefix of a member written, itself included.
    prefixes: HashSet<&'p str>,
    /// The edits' spans, changed (`true`) or read, by where they start: the
    /// end (inclusive) and the edit.
    spans: BTreeMap<usize, Vec<(usize, bool, usize)>>,
    /// The longest span, so a lookup by start knows how far back to look.
    widest: usize,
}

impl<'p> Run<'p> {
    /// Whether `located` can go in this run: it writes neither inside nor
    /// around a member written, and changes no text another edit read nor
    /// reads text another changed, but in the ways the order of the splices
    /// keeps as one by one would.
    fn fits(&self, located: &Located<'_>, pointer: &'p str) -> bool {
        let member = prefix(pointer, located.written);
        if self.prefixes.contains(member) || (0..=located.written).any(|n| self.written.contains(prefix(pointer, n))) {
            return false;
        }
        let new = &located.splice;
        let parent = prefix(pointer, depth(located));
        // Every edit reads the span it changes, so changes that meet are found too.
        let mut clashes = self.overlapping((new.from, new.to), false);
        for read in &new.reads {
            clashes.extend(self.overlapping(*read, true));
        }
        clashes.into_iter().all(|i| self.edits.get(i).is_some_and(|old| compatible(old, new, parent)))
    }

    /// The edits with a span of the given sort (`changed`) overlapping `lo..=hi`.
    fn overlapping(&self, (lo, hi): (usize, usize), changed: bool) -> Vec<usize> {
        self.spans
            .range(lo.saturating_sub(self.widest)..=hi)
            .flat_map(|(_, spans)| spans.iter())
            .filter(|(end, sort, _)| *end >= lo && *sort == changed)
            .map(|(_, _, i)| *i)
            .collect()
    }

    fn add(&mut self, located: Located<'_>, pointer: &'p str, order: usize) {
        let depth = depth(&located);
        let splice = located.splice;
        let index = self.edits.len();
        for (lo, hi, changed) in
            std::iter::once((splice.from, splice.to, true)).chain(splice.reads.iter().map(|(lo, hi)| (*lo, *hi, false)))
        {
            self.widest = self.widest.max(hi.saturating_sub(lo));
            self.spans.entry(lo).or_default().push((hi, changed, index));
        }
        self.written.insert(prefix(pointer, located.written));
        self.prefixes.extend((0..=located.written).map(|n| prefix(pointer, n)));
        self.edits.push(Edit { splice, parent: prefix(pointer, depth), depth, order });
    }

    /// The text with every edit, from one copy of it. Inserts at one place go
    /// in the order one by one gives them: into the innermost mapping first
    /// (its text ends before its parent's next entry), into one mapping in
    /// the order of the operations.
    fn write(mut self, text: &str) -> String {
        self.edits.sort_by_key(|e| (e.splice.from, Reverse(e.depth), e.order));
        let mut out = String::with_capacity(text.len() + self.edits.iter().map(|e| e.splice.text.len()).sum::<usize>());
        let mut at = 0;
        for e in &self.edits {
            // `fits` keeps the edits apart; `get` only so nothing can panic.
            out.push_str(text.get(at..e.splice.from).unwrap_or_default());
            out.push_str(&e.splice.text);
            at = at.max(e.splice.to);
        }
        out.push_str(text.get(at..).unwrap_or_default());
        out
    }
}

/// Tokens of the existing value an edit changes: the mapping an insert adds to.
fn depth(located: &Located<'_>) -> usize {
    match located.splice.kind {
        Kind::Replace { .. } => located.written,
        Kind::BlockInsert { .. } | Kind::FlowInsert { .. } => located.written.saturating_sub(1),
    }
}

/// The first `n` tokens of a JSON pointer.
fn prefix(pointer: &str, n: usize) -> &str {
    match pointer.match_indices('/').nth(n) {
        Some((at, _)) => &pointer[..at],
        None => pointer,
    }
}

/// Whether two edits whose spans meet still come out as one by one: inserts
/// at one place into one mapping (or, for new lines, into a mapping and one
/// inside its last entry), and an insert right after the value it follows
/// (one by one, it follows the value's new text, whichever comes first).
fn compatible(old: &Edit<'_>, new: &Splice, new_parent: &str) -> bool {
    let after = |insert: &Splice, replaced: &Splice| {
        let last_end = match insert.kind {
            Kind::BlockInsert { last_end } | Kind::FlowInsert { last_end: Some(last_end) } => last_end,
            Kind::FlowInsert { last_end: None } | Kind::Replace { .. } => return false,
        };
        matches!(replaced.kind, Kind::Replace { to_end: true }) && replaced.to == last_end && insert.from >= last_end
    };
    if after(new, &old.splice) || after(&old.splice, new) {
        return true;
    }
    let same_place = old.splice.from == old.splice.to && new.from == new.to && old.splice.from == new.from;
    let within =
        |outer: &str, inner: &str| inner.strip_prefix(outer).is_some_and(|r| r.is_empty() || r.starts_with('/'));
    same_place
        && match (old.splice.kind, new.kind) {
            (Kind::BlockInsert { .. }, Kind::BlockInsert { .. }) => {
                within(old.parent, new_parent) || within(new_parent, old.parent)
            }
            (Kind::FlowInsert { last_end: Some(_) }, Kind::FlowInsert { last_end: Some(_) }) => {
                old.parent == new_parent
            }
            _ => false,
        }
}
