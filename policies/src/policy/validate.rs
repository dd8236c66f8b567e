//! What checking a policy's values needs in more than one place: globs and
//! regexes compiled with errors that point at the value, and rule and key
//! names checked with a "did you mean" hint.

use globset::{Glob, GlobSet, GlobSetBuilder};

use super::error::Invalid;

/// Compiles globs; errors point at the offending item of the list at `pointer`.
pub(crate) fn glob_set(pointer: &str, patterns: &[String]) -> Result<GlobSet, Invalid> {
    let mut builder = GlobSetBuilder::new();
    for (i, p) in patterns.iter().enumerate() {
        let glob = Glob::new(p)
            .map_err(|e| Invalid::at(format!("{pointer}/{i}"), format!("invalid glob {p:?}: {}", e.kind())))?;
        builder.add(glob);
    }
    builder.build().map_err(|e| Invalid::at(pointer, format!("invalid globs: {e}")))
}

/// A regex error in one line: the regex crate's message spans several (the
/// pattern with a caret), which reads badly after `file:line:col:`.
pub(crate) fn regex_reason(e: &regex::Error) -> String {
    let text = e.to_string();
    text.lines().rev().find_map(|l| l.trim().strip_prefix("error: ")).map_or_else(|| one_line(&text), str::to_owned)
}

fn one_line(s: &str) -> String {
    s.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}

/// The built-in rules' names, which the rules' registry, a layer above the
/// policy, hands down to check a policy's rule names against.
#[derive(Debug, Clone, Copy)]
pub struct BuiltInRules<'a> {
    names: &'a [&'static str],
}

impl<'a> BuiltInRules<'a> {
    /// The names, in the registry's order.
    pub fn new(names: &'a [&'static str]) -> BuiltInRules<'a> {
        BuiltInRules { names }
    }

    /// Whether `name` is a built-in rule.
    pub(crate) fn knows(&self, name: &str) -> bool {
        self.names.contains(&name)
    }

    /// "unknown rule ..." with a hint.
    pub(crate) fn unknown(&self, name: &str) -> String {
        match closest(name, self.names.iter().copied()) {
            Some(best) => format!("unknown rule {name:?}; did you mean {best:?}?"),
            None => format!(
                "unknown rule {name:?}; `lifeguard rules` lists the built-in rules, and custom rules must be defined under customRules"
            ),
        }
    }
}

/// The candidate within a small edit distance of `word`, if any.
pub(crate) fn closest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .map(|c| (edit_distance(word, c), c))
        .filter(|(d, c)| *d <= 3.min(c.len() / 3 + 1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            let next = (row[j + 1] + 1).min(row[j] + 1).min(prev + cost);
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}
