//! What `lifeguard fix` tells a person on stderr: each fix, each comment it
//! may have made stale, each fix left out and why, the findings that need a
//! hand, and one summary line.

use std::fmt::Write as _;

use policies::{Applicability, Severity};

use super::diff::LineMap;
use super::file::FileFix;
use super::run::Output;
use crate::outcome::InputError;

/// What the report says of one file (everything but the errors and the
/// summary line), so that a file can be reported once its texts are gone.
pub fn file_block(fix: &FileFix, mode: Output, fail_on: &impl Fn(&str) -> Option<Severity>) -> String {
    let map = fix.changed().then(|| LineMap::new(&fix.original, &fix.fixed));
    file_block_mapped(fix, map.as_ref(), mode, fail_on)
}

/// [`file_block`] with the file's [`LineMap`] already made (`None` when it is unchanged).
pub fn file_block_mapped(
    fix: &FileFix,
    map: Option<&LineMap>,
    mode: Output,
    fail_on: &impl Fn(&str) -> Option<Severity>,
) -> String {
    let mut s = String::new();
    let verb = match mode {
        Output::InPlace => "fixed",
        Output::Diff => "would fix",
    };
    // Lines name the file as it is once this run is over: as read for
    // `--diff`, as fixed in place (see `LineMap`).
    let fixed_line = |line: u32| match (map, mode) {
        (Some(m), Output::Diff) => m.old_line(line),
        _ => line,
    };
    let read_line = |line: u32| match (map, mode) {
        (Some(m), Output::InPlace) => m.new_line(line),
        _ => line,
    };
    for o in &fix.objects {
        // A build's fixes name the files they are written to.
        let file = if o.written_to.is_empty() { fix.file.clone() } else { o.written_to.join(", ") };
        for a in &o.applied {
            let _ = writeln!(s, "{file}: {} {}: [{}] {}", verb, o.object, a.rule, a.description);
        }
    }
    for c in &fix.stale_comments {
        let _ = writeln!(
            s,
            "{}:{}: comment may now be stale: {:?} is next to {}, which the fix {} from {} to {}",
            c.file,
            fixed_line(c.line),
            c.comment,
            c.field,
            if mode == Output::Diff { "would change" } else { "changed" },
            c.old,
            c.new
        );
    }
    let shown = |l: &crate::outcome::Located| fail_on(&l.file).is_some_and(|min| l.finding.severity >= min);
    // A fix left out whose finding is listed below is said once, on the
    // finding's line (a pre-commit hook's output names each error once).
    let said_below = |k: &super::Skipped| {
        fix.remaining.iter().any(|l| {
            shown(l) && fixed_line(l.line) == read_line(k.line) && l.finding.rule == k.rule && l.object() == k.object
        })
    };
    for k in fix.skipped.iter().filter(|k| !said_below(k)) {
        let _ = writeln!(s, "{}:{}: not fixed {}: [{}] {}", k.file, read_line(k.line), k.object, k.rule, k.reason);
    }
    for l in &fix.remaining {
        if shown(l) {
            let skipped = fix.skipped.iter().find(|k| {
                read_line(k.line) == fixed_line(l.line) && l.finding.rule == k.rule && l.object() == k.object
            });
            // The fix's applicability, as the fix note reads it
            // (`Finding::fix_note`), in the few words of a status.
            let left_out;
            let what = match (l.finding.fix.as_ref().map(|x| x.applicability), skipped) {
                (Some(Applicability::Automatic), Some(k)) => {
                    left_out = format!("not fixed ({})", k.reason);
                    left_out.as_str()
                }
                (Some(Applicability::Automatic), None) => "not fixed",
                (Some(Applicability::OptIn), _) => "opt-in fix (fixInfoFindings: true)",
                (None, _) => "no automatic fix",
            };
            let _ = writeln!(
                s,
                "{}:{}:{} {}[{}] {}: {what}: {}",
                l.file,
                fixed_line(l.line),
                l.column,
                l.finding.severity,
                l.finding.rule,
                l.object(),
                l.finding.located_message()
            );
        }
    }
    s
}

/// The end of the report: every error, every note (an input skipped that
/// is no error), then the summary line.
pub fn tail<'e>(
    errors: impl Iterator<Item = &'e InputError>,
    notes: impl Iterator<Item = &'e InputError>,
    summary: &str,
) -> String {
    let mut s = String::new();
    let labelled = errors.map(|e| ("error", e)).chain(notes.map(|e| ("note", e)));
    for (label, e) in labelled {
        let at = match (e.line, e.column) {
            (Some(l), Some(c)) => format!("{}:{l}:{c}", e.file),
            (Some(l), None) => format!("{}:{l}", e.file),
            _ => e.file.clone(),
        };
        let _ = writeln!(s, "{at} {label}: {}", e.message);
    }
    let _ = writeln!(s, "{summary}");
    s
}

/// The counts the summary line gives, summed over files.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Inputs read and parsed.
    pub inputs: usize,
    /// Fixes applied (or to apply).
    pub fixes: usize,
    /// Objects changed.
    pub objects: usize,
    /// Files changed.
    pub files: usize,
    /// Remaining findings with no fix at all.
    pub without: usize,
    /// Remaining info findings whose fix is opt-in.
    pub opt_in: usize,
    /// Remaining findings whose fix was not applied.
    pub unfixed: usize,
    /// Comments that may now be stale.
    pub stale: usize,
    /// Remaining findings below their file's failing severity, so not listed.
    pub unlisted: usize,
}

impl Tally {
    /// The counts of one file; `fail_on` gives each file's failing
    /// severity (the findings below it are not listed).
    pub fn of(fix: &FileFix, fail_on: &impl Fn(&str) -> Option<Severity>) -> Tally {
        let remaining = || fix.remaining.iter();
        let listed = |l: &&crate::outcome::Located| fail_on(&l.file).is_some_and(|min| l.finding.severity >= min);
        let applies = |l: &crate::outcome::Located| l.finding.fix.as_ref().map(|x| x.applicability);
        Tally {
            inputs: 1,
            fixes: fix.fix_count(),
            objects: fix.objects.len(),
            // A build's files are counted once for the run (`Streamed`): builds share bases.
            files: usize::from(fix.fixed != fix.original),
            without: remaining().filter(|l| l.finding.fix.is_none()).count(),
            opt_in: remaining().filter(|l| applies(l) == Some(Applicability::OptIn)).count(),
            unfixed: remaining().filter(|l| applies(l) == Some(Applicability::Automatic)).count(),
            stale: fix.stale_comments.len(),
            unlisted: remaining().filter(|l| !listed(l)).count(),
        }
    }

    /// Adds another file's counts.
    pub fn add(&mut self, other: Tally) {
        self.inputs += other.inputs;
        self.fixes += other.fixes;
        self.objects += other.objects;
        self.files += other.files;
        self.without += other.without;
        self.opt_in += other.opt_in;
        self.unfixed += other.unfixed;
        self.stale += other.stale;
        self.unlisted += other.unlisted;
    }
}

/// The summary line from its counts:
/// `4 fixes applied to 1 object in 1 file; 2 findings remain without an automatic fix`.
pub fn line_of(tally: &Tally, errors: usize, policy: Option<&str>, mode: Output) -> String {
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let Tally { inputs, fixes, objects, files, without, opt_in, unfixed, stale, unlisted } = *tally;
    let mut s = if fixes == 0 {
        format!("nothing to fix in {}", plural(inputs, "file", "files"))
    } else {
        let done = match mode {
            Output::InPlace => "applied to",
            Output::Diff => "to apply to",
        };
        format!(
            "{} {done} {} in {}",
            plural(fixes, "fix", "fixes"),
            plural(objects, "object", "objects"),
            plural(files, "file", "files")
        )
    };
    let _ = write!(s, "; {} without an automatic fix", plural(without, "finding remains", "findings remain"));
    if unfixed > 0 {
        let _ =
            write!(s, "; {} not fixed (--rule, or see above)", plural(unfixed, "fixable finding", "fixable findings"));
    }
    if stale > 0 {
        let _ = write!(s, "; {} may now be stale (see above)", plural(stale, "comment", "comments"));
    }
    if opt_in > 0 {
        let have = if opt_in == 1 { "has" } else { "have" };
        let _ = write!(
            s,
            "; {} {have} an opt-in fix (a policy with `fixInfoFindings: true` applies it)",
            plural(opt_in, "info finding", "info findings")
        );
    }
    if unlisted > 0 {
        // The counts above include them: say why fewer lines are listed.
        let are = if unlisted == 1 { "is" } else { "are" };
        let _ = write!(
            s,
            "; {} {are} below --fail-on and not listed (`lifeguard lint` shows every finding)",
            plural(unlisted, "remaining finding", "remaining findings")
        );
    }
    if errors > 0 {
        let _ = write!(s, "; {}", plural(errors, "error", "errors"));
    }
    if let Some(policy) = policy {
        let _ = write!(s, "; {policy}");
    }
    s
}
