//! `pgrep PATTERN` without `-f`: procps-ng matches the pattern against the
//! process name (`/proc/PID/comm`), which the kernel cuts to 15 bytes, so a
//! pattern whose every match is longer can never match.

use super::command::SimpleCommand;

/// The longest process name the kernel keeps (`TASK_COMM_LEN` 16, minus the NUL).
pub const COMM_MAX: usize = 15;

/// A `pgrep` whose pattern can never match a process name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameTooLong {
    /// The pattern as given.
    pub pattern: String,
    /// The fewest bytes any match of the pattern has (more than [`COMM_MAX`]).
    pub shortest: usize,
    /// Whether the match is tied to the whole name or to one of its ends
    /// (`-x`, `--exact`, a pattern anchored with `^` or `$`): with `-f` it
    /// would be tied to the whole command line instead, which holds more.
    pub anchored: bool,
}

/// Options of procps-ng `pgrep` that take a value.
const WITH_VALUE: &str = "dFgGOPrstuUm";
const LONG_FLAGS: &[&str] = &[
    "--exact",
    "--ignore-case",
    "--list-name",
    "--list-full",
    "--newest",
    "--oldest",
    "--count",
    "--lightweight",
    "--quiet",
    "--ignore-ancestors",
    "--require-handler",
];
const LONG_WITH_VALUE: &[&str] = &[
    "--delimiter",
    "--pidfile",
    "--pgroup",
    "--group",
    "--older",
    "--parent",
    "--runstates",
    "--session",
    "--terminal",
    "--euid",
    "--uid",
    "--ns",
    "--nslist",
    "--signal",
    "--cgroup",
    "--env",
];

/// The `pgrep` of `cmd` when its one pattern is matched against the process
/// name (no `-f`) and every match is longer than [`COMM_MAX`]. `None` for
/// `-f`, `-v` (inverted, it matches the other processes), an option it does
/// not know, several or no patterns, and patterns it cannot bound
/// (alternations, groups, variables).
pub fn pgrep_name_too_long(cmd: &SimpleCommand) -> Option<NameTooLong> {
    if cmd.program != "pgrep" {
        return None;
    }
    let mut patterns = Vec::new();
    let mut args = cmd.args.iter();
    let mut operands_only = false;
    let mut exact = false;
    while let Some(arg) = args.next() {
        if operands_only || !arg.starts_with('-') || arg == "-" {
            patterns.push(arg.as_str());
        } else if arg == "--" {
            operands_only = true;
        } else if arg.starts_with("--") {
            let long = arg.split('=').next().unwrap_or(arg);
            match long {
                "--full" | "--inverse" => return None,
                "--exact" => exact = true,
                _ if LONG_FLAGS.contains(&long) => {}
                _ if LONG_WITH_VALUE.contains(&long) => {
                    if !arg.contains('=') {
                        args.next()?;
                    }
                }
                _ => return None,
            }
        } else {
            // A cluster such as `-fx` or `-xu root`: a letter that takes a
            // value ends it, the rest (or the next word) being the value.
            for (i, letter) in arg.char_indices().skip(1) {
                match letter {
                    'f' | 'v' | 'h' | 'V' => return None,
                    _ if WITH_VALUE.contains(letter) => {
                        if i + 1 == arg.len() {
                            args.next()?;
                        }
                        break;
                    }
                    'x' => exact = true,
                    'a' | 'c' | 'i' | 'l' | 'n' | 'o' | 'q' | 'w' | 'A' | 'H' | 'L' | 'e' => {}
                    _ => return None,
                }
            }
        }
    }
    let [pattern] = patterns[..] else { return None };
    let shortest = shortest_match(pattern)?;
    let anchored = exact || pattern.starts_with('^') || (pattern.ends_with('$') && !pattern.ends_with("\\$"));
    (shortest > COMM_MAX).then(|| NameTooLong { pattern: pattern.to_owned(), shortest, anchored })
}

/// The fewest bytes a match of an extended regular expression has, for the
/// simple ones: literals, `.`, bracket expressions, escapes, anchors at the
/// ends and the `* ? + {n,m}` repeats. `None` for alternations, groups and
/// anything else it would have to guess at.
fn shortest_match(pattern: &str) -> Option<usize> {
    let body = pattern.strip_prefix('^').unwrap_or(pattern);
    let mut chars = body.chars().peekable();
    let mut total = 0usize;
    let mut last: Option<usize> = None;
    while let Some(c) = chars.next() {
        let atom = match c {
            '$' if chars.peek().is_none() => break,
            '(' | ')' | '|' | '^' | '$' => return None,
            // GNU's word boundaries match no character.
            '\\' => match chars.next()? {
                '<' | '>' | 'b' | 'B' | '`' | '\'' => 0,
                e => e.len_utf8(),
            },
            '.' => 1,
            '[' => {
                let mut first = true;
                loop {
                    match chars.next()? {
                        '^' if first => continue,
                        ']' if !first => break,
                        _ => first = false,
                    }
                }
                1
            }
            '*' | '?' => {
                total -= last.take()?;
                continue;
            }
            '+' => {
                last.take()?;
                continue;
            }
            '{' => {
                let mut min = String::new();
                for d in chars.by_ref() {
                    if d == ',' || d == '}' {
                        if d == ',' {
                            chars.find(|&x| x == '}')?;
                        }
                        break;
                    }
                    min.push(d);
                }
                let n: usize = min.parse().ok()?;
                let l = last.take()?;
                total = total - l + l.checked_mul(n)?;
                continue;
            }
            c => c.len_utf8(),
        };
        total += atom;
        last = Some(atom);
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn too_long(args: &[&str]) -> Option<NameTooLong> {
        let cmd = SimpleCommand {
            program: "pgrep".to_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            assignments: Vec::new(),
            redirects: Vec::new(),
        };
        pgrep_name_too_long(&cmd)
    }

    fn pgrep(args: &[&str]) -> Option<usize> {
        too_long(args).map(|n| n.shortest)
    }

    fn anchored(args: &[&str]) -> Option<bool> {
        too_long(args).map(|n| n.anchored)
    }

    #[test]
    fn long_names_never_match_without_f() {
        assert_eq!(pgrep(&["kube-controller-manager"]), Some(23));
        assert_eq!(pgrep(&["-x", "prometheus-node-exporter"]), Some(24));
        assert_eq!(pgrep(&["-xo", "^celery-worker-main$"]), Some(18));
        assert_eq!(pgrep(&["-u", "app", "-l", "gunicorn-workers"]), Some(16));
        assert_eq!(pgrep(&["-nu", "app", "--", "-dashed-daemon-name"]), Some(19));
        assert_eq!(pgrep(&["--exact", "--euid=app", "my-long-service-name"]), Some(20));
        assert_eq!(pgrep(&["python3.11-server"]), Some(17));
        assert_eq!(pgrep(&["[a-z]{16}"]), Some(16));
        assert_eq!(pgrep(&["kube-controller-m?"]), Some(16));
    }

    #[test]
    fn exact_and_anchored_matches_are_told_apart() {
        assert_eq!(anchored(&["kube-controller-manager"]), Some(false));
        assert_eq!(anchored(&["-on", "kube-controller-manager"]), Some(false));
        assert_eq!(anchored(&["-x", "kube-controller-manager"]), Some(true));
        assert_eq!(anchored(&["-lx", "kube-controller-manager"]), Some(true));
        assert_eq!(anchored(&["--exact", "kube-controller-manager"]), Some(true));
        assert_eq!(anchored(&["^kube-controller-manager"]), Some(true));
        assert_eq!(anchored(&["kube-controller-manager$"]), Some(true));
        assert_eq!(anchored(&["kube-controller-manager\\$"]), Some(false));
    }

    #[test]
    fn what_can_match_is_not_reported() {
        for args in [
            &["-f", "kube-controller-manager"][..],
            &["-fx", "kube-controller-manager"],
            &["-xf", "kube-controller-manager"],
            &["--full", "kube-controller-manager"],
            &["-v", "kube-controller-manager"],
            &["kube-controller"],
            &["nginx|php-fpm|my-long-app-name"],
            &["(worker|manager)-process"],
            &["kube-controller.*"],
            &["kube-controller-?"],
            &["$APP_PROCESS_NAME_LONG"],
            &["-Z", "kube-controller-manager"],
            &["one-long-pattern-here", "two"],
            &["-u"],
        ] {
            assert_eq!(pgrep(args), None, "{args:?}");
        }
    }

    #[test]
    fn shortest_matches() {
        assert_eq!(shortest_match("abc"), Some(3));
        assert_eq!(shortest_match("^a.c$"), Some(3));
        assert_eq!(shortest_match("a[]x]*b+"), Some(2));
        assert_eq!(shortest_match("\\<ab\\.c"), Some(4));
        assert_eq!(shortest_match("ab{3,5}"), Some(4));
        assert_eq!(shortest_match("a|b"), None);
        assert_eq!(shortest_match("*a"), None);
        assert_eq!(shortest_match("[abc"), None);
    }
}
