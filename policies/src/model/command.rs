//! Reading exec commands the way a shell would run them. Shared by the rules
//! that look inside exec probes.
//!
//! This is not a shell: it splits scripts well enough to find the programs a
//! probe runs and their arguments, and gives up (returns less) rather than guess.

use super::shell_args::{SHELLS, script_argument};
use super::shell_lex::{Token, lex};

/// One program run by an exec command, with the arguments it gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Basename of the program (`/usr/bin/redis-cli` -> `redis-cli`).
    pub program: String,
    /// Arguments after the program, unquoted.
    pub args: Vec<String>,
    /// `NAME=value` words that prefix the command (`PGHOST=db psql`).
    pub assignments: Vec<(String, String)>,
    /// Redirection targets (`> /dev/null`, `< /dev/tcp/host/port`).
    pub redirects: Vec<String>,
}

/// Words that run the next word as the command (`exec curl ...`).
const PREFIXES: &[&str] = &[
    "exec", "command", "builtin", "nohup", "time", "!", "if", "then", "elif", "else", "do", "while", "until", "{", "}",
    "busybox",
];
const MAX_DEPTH: usize = 4;

/// The programs an exec command runs: shells given `-c` are opened up
/// (nested ones too), wrappers like `timeout 5` or `env X=1` are skipped.
pub fn simple_commands(argv: &[String]) -> Vec<SimpleCommand> {
    let mut out = Vec::new();
    analyze(argv, &[], 0, &mut out);
    out
}

/// `/usr/bin/redis-cli` -> `redis-cli`.
pub fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

fn analyze(words: &[String], redirects: &[String], depth: usize, out: &mut Vec<SimpleCommand>) {
    if depth > MAX_DEPTH {
        return;
    }
    let mut assignments = Vec::new();
    let mut i = 0;
    while let Some(w) = words.get(i) {
        if let Some(kv) = assignment(w) {
            assignments.push(kv);
            i += 1;
            continue;
        }
        let skip = match basename(w) {
            p if PREFIXES.contains(&p) => 1,
            "env" => 1 + count_while(&words[i + 1..], |a| a.starts_with('-') || assignment(a).is_some()),
            "timeout" => {
                let opts = count_options(&words[i + 1..], &["-s", "-k", "--signal", "--kill-after"]);
                2 + opts
            }
            "nice" | "ionice" => 1 + count_options(&words[i + 1..], &["-n", "-c"]),
            "gosu" | "su-exec" => 2,
            _ => 0,
        };
        if skip == 0 {
            break;
        }
        if basename(w) == "env" {
            for a in words.iter().skip(i + 1).take(skip - 1) {
                assignments.extend(assignment(a));
            }
        }
        i += skip;
    }
    let Some(first) = words.get(i) else {
        // `</dev/tcp/host/port` alone still connects somewhere.
        if !redirects.is_empty() {
            out.push(SimpleCommand {
                program: String::new(),
                args: Vec::new(),
                assignments,
                redirects: redirects.to_vec(),
            });
        }
        return;
    };
    let program = basename(first).to_owned();
    let args: Vec<String> = words[i + 1..].to_vec();
    if SHELLS.contains(&program.as_str())
        && let Some((script, _)) = script_argument(&args)
    {
        analyze_script(script, depth + 1, out);
        return;
    }
    out.push(SimpleCommand { program, args, assignments, redirects: redirects.to_vec() });
}

fn analyze_script(script: &str, depth: usize, out: &mut Vec<SimpleCommand>) {
    if depth > MAX_DEPTH {
        return;
    }
    let mut nested = Vec::new();
    for cmd in split_script(script, &mut nested) {
        analyze(&cmd.words, &cmd.redirects, depth, out);
    }
    for inner in nested {
        analyze_script(&inner, depth + 1, out);
    }
}

fn count_while(words: &[String], f: impl Fn(&str) -> bool) -> usize {
    words.iter().take_while(|w| f(w)).count()
}

/// Options (and the values of those listed) before the first operand.
fn count_options(words: &[String], with_value: &[&str]) -> usize {
    let mut n = 0;
    while let Some(w) = words.get(n) {
        if !w.starts_with('-') || w == "-" {
            break;
        }
        n += if with_value.contains(&w.as_str()) { 2 } else { 1 };
    }
    n
}

fn assignment(word: &str) -> Option<(String, String)> {
    let (name, value) = word.split_once('=')?;
    let valid = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then(|| (name.to_owned(), value.to_owned()))
}

/// A simple command's words and redirection targets.
#[derive(Default)]
struct Words {
    words: Vec<String>,
    redirects: Vec<String>,
}

/// Splits a shell script into simple commands ([`lex`]), each with its
/// redirections' targets apart from its words; a separator or a
/// parenthesis ends a command. Command substitutions stay in their word
/// and their scripts are pushed to `nested`.
fn split_script(script: &str, nested: &mut Vec<String>) -> Vec<Words> {
    let lexed = lex(script);
    nested.extend(lexed.nested);
    let mut out = Vec::new();
    let mut cmd = Words::default();
    let mut target_next = false;
    for glued in lexed.tokens {
        let word = match glued.token {
            Token::Word(word) => word,
            Token::Paren(_) | Token::Sep(_) => {
                target_next = false;
                if !cmd.words.is_empty() || !cmd.redirects.is_empty() {
                    out.push(std::mem::take(&mut cmd));
                }
                continue;
            }
        };
        if std::mem::take(&mut target_next) && word.target_at.is_none() {
            cmd.redirects.push(word.text);
        } else if word.target_at.is_some() {
            match word.target() {
                Some(target) => cmd.redirects.push(target.to_owned()),
                None => target_next = true,
            }
        } else {
            cmd.words.push(word.text);
        }
    }
    if !cmd.words.is_empty() || !cmd.redirects.is_empty() {
        out.push(cmd);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    fn programs(words: &[&str]) -> Vec<(String, Vec<String>)> {
        simple_commands(&argv(words)).into_iter().map(|c| (c.program, c.args)).collect()
    }

    #[test]
    fn opens_shell_scripts() {
        let got = programs(&[
            "/bin/bash",
            "-ec",
            "timeout 3 /usr/bin/redis-cli -h 'my host' ping | grep -q PONG && echo \"ok $(hostname)\"",
        ]);
        let names: Vec<&str> = got.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(names, ["redis-cli", "grep", "echo", "hostname"]);
        assert_eq!(got[0].1, ["-h", "my host", "ping"]);
        assert_eq!(got[2].1, ["ok $(hostname)"]);
    }

    #[test]
    fn nested_shells_wrappers_and_assignments() {
        let cmds = simple_commands(&argv(&[
            "sh",
            "-o",
            "pipefail",
            "-c",
            "if PGHOST=db env -i X=1 pg_isready -q; then exit 0; fi # comment; curl x",
        ]));
        assert_eq!(cmds[0].program, "pg_isready");
        assert_eq!(cmds[0].assignments, [("PGHOST".to_owned(), "db".to_owned()), ("X".to_owned(), "1".to_owned())]);
        assert!(!cmds.iter().any(|c| c.program == "curl"));
        let inner = programs(&["bash", "-c", "sh -c 'nc -z db 5432'"]);
        assert_eq!(inner[0].0, "nc");
    }

    #[test]
    fn redirections_are_kept_apart() {
        let cmds = simple_commands(&argv(&["sh", "-c", "curl -s x 2>&1 >/dev/null; exec 3<>/dev/tcp/db/5432"]));
        assert_eq!(cmds[0].args, ["-s", "x"]);
        assert_eq!(cmds[0].redirects, ["1", "/dev/null"]);
        assert_eq!(cmds[1].program, "");
        assert_eq!(cmds[1].redirects, ["/dev/tcp/db/5432"]);
    }

    #[test]
    fn script_files_are_opaque() {
        assert_eq!(programs(&["sh", "/probe.sh"])[0].0, "sh");
    }
}
