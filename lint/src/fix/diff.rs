//! Unified diffs of fixed files, with `a/` and `b/` headers like git's.

use similar::{Algorithm, TextDiff};

/// The unified diff from `old` to `new` (empty when they are equal).
pub fn unified(name: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    unified_of(&lines(old, new), name)
}

/// [`unified`] and [`LineMap::new`] of the same texts from one diff (the
/// costly part of both); no map when they are equal.
pub fn unified_and_map(name: &str, old: &str, new: &str) -> (String, Option<LineMap>) {
    if old == new {
        return (String::new(), None);
    }
    let diff = lines(old, new);
    (unified_of(&diff, name), Some(LineMap::of(&diff)))
}

/// The line diff. Patience, not Myers: a fixed stream changes lines in
/// thousands of places, and Myers' cost grows with the number of changes
/// times the length (11.5 s for the fixes of a 10,000-object stream, where
/// patience, anchored on the many unique lines such as object names, takes
/// a fraction of a second); both give the same hunks on the corpus and on
/// that stream.
fn lines<'a>(old: &'a str, new: &'a str) -> TextDiff<'a, 'a, 'a, str> {
    TextDiff::configure().algorithm(Algorithm::Patience).diff_lines(old, new)
}

fn unified_of<'a>(diff: &'a TextDiff<'a, 'a, 'a, str>, name: &str) -> String {
    let name = name.trim_start_matches("./").trim_start_matches('/');
    diff.unified_diff().context_radius(3).header(&format!("a/{name}"), &format!("b/{name}")).to_string()
}

/// Line numbers between a text as read and as fixed. `fix --diff` leaves
/// the file as read, so what it reports (remaining findings, stale comments,
/// located in the fixed text) must name lines of the file as read; `fix` in
/// place rewrites it, so what was located in the text as read (fixes left
/// out) must name lines of the fixed file.
#[derive(Debug, Clone)]
pub struct LineMap {
    /// For each line of the fixed text (0-based), its line in the text as read.
    to_old: Vec<u32>,
    /// For each line of the text as read (0-based), its line in the fixed text.
    to_new: Vec<u32>,
}

impl LineMap {
    /// The map between `old` and `new`: a line both hold maps to its twin; a
    /// changed line to the line at the same place in the other side of its
    /// hunk; an inserted (or deleted) line to the line above it.
    pub fn new(old: &str, new: &str) -> LineMap {
        LineMap::of(&lines(old, new))
    }

    fn of(diff: &TextDiff<'_, '_, '_, str>) -> LineMap {
        let mut to_old = Vec::new();
        let mut to_new = Vec::new();
        for op in diff.ops() {
            let (o, n) = (op.old_range(), op.new_range());
            let pair = |i: usize, from: &std::ops::Range<usize>, to: &std::ops::Range<usize>| -> u32 {
                let at = if to.is_empty() {
                    to.start.saturating_sub(1)
                } else {
                    to.start + (i - from.start).min(to.len() - 1)
                };
                u32::try_from(at).unwrap_or(u32::MAX)
            };
            to_old.extend(n.clone().map(|i| pair(i, &n, &o)));
            to_new.extend(o.clone().map(|i| pair(i, &o, &n)));
        }
        LineMap { to_old, to_new }
    }

    /// The 1-based line of the text as read that holds the fixed text's
    /// 1-based `line` (unchanged when out of range).
    pub fn old_line(&self, line: u32) -> u32 {
        Self::map(&self.to_old, line)
    }

    /// The 1-based line of the fixed text that holds the 1-based `line` of
    /// the text as read (unchanged when out of range).
    pub fn new_line(&self, line: u32) -> u32 {
        Self::map(&self.to_new, line)
    }

    fn map(table: &[u32], line: u32) -> u32 {
        let index = usize::try_from(line).ok().and_then(|l| l.checked_sub(1));
        index.and_then(|i| table.get(i)).map_or(line, |l| l + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::{LineMap, unified};

    #[test]
    fn lines_map_across_an_insertion_in_both_directions() {
        let old = "a: 1\nb: 1\n---\nc: 1\n";
        let new = "a: 1\nb: 3\nt: 5\n---\nc: 1\n";
        let map = LineMap::new(old, new);
        let to_old: Vec<u32> = (1..=5).map(|l| map.old_line(l)).collect();
        assert_eq!(to_old, [1, 2, 2, 3, 4], "`t: 5` is new: the line above it; `---` and `c` move up by one");
        let to_new: Vec<u32> = (1..=4).map(|l| map.new_line(l)).collect();
        assert_eq!(to_new, [1, 2, 4, 5]);
        assert_eq!(map.old_line(99), 99);
        assert_eq!(LineMap::new("", "x: 1\n").old_line(1), 1, "nothing above: the first line");
    }

    #[test]
    fn git_style_headers_and_hunks() {
        let d = unified("./k8s/app.yaml", "a: 1\nb: 2\n", "a: 1\nb: 3\n");
        assert_eq!(d, "--- a/k8s/app.yaml\n+++ b/k8s/app.yaml\n@@ -1,2 +1,2 @@\n a: 1\n-b: 2\n+b: 3\n");
        assert_eq!(unified("x", "same", "same"), "");
        let (both, map) = super::unified_and_map("./k8s/app.yaml", "a: 1\nb: 2\n", "a: 1\nt: 0\nb: 3\n");
        assert_eq!(both, unified("./k8s/app.yaml", "a: 1\nb: 2\n", "a: 1\nt: 0\nb: 3\n"));
        let alone = LineMap::new("a: 1\nb: 2\n", "a: 1\nt: 0\nb: 3\n");
        let lines = |m: &LineMap| ((1..=3).map(|l| m.old_line(l)).collect(), (1..=2).map(|l| m.new_line(l)).collect());
        assert_eq!(map.as_ref().map(lines), Some(lines(&alone)));
        assert_eq!(lines(&alone), (vec![1, 2, 2], vec![1, 2]));
    }
}
