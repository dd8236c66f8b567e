//! How the commands of a `sh -c` script are joined (`;`, `&&`, `||`, `|`,
//! `&`), for the rules that need control flow rather than the flat list of
//! programs [`super::command`] gives: a preStop loop that never ends
//! ([`super::shell_loop`]), a probe whose exit status is decided by one
//! command.
//!
//! Like `command`, this is not a shell: it reads the common shapes and gives
//! up (`None`) on what it cannot follow (here-documents), so that a rule
//! never reports what it did not understand.

use super::command::basename;
use super::shell_args::{SHELLS, script_argument};
use super::shell_lex::{Glued, Sep, Token, lex};

/// One simple command of a script, its words unquoted, and what follows it.
/// A subshell's `(` and `)` are commands of their own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptCommand {
    /// The words, unquoted; redirections stay words (`>/dev/null`, `2>&1`).
    pub words: Vec<String>,
    /// What joins it to the next command.
    pub sep: Sep,
}

/// A shell run with a script: `sh -c SCRIPT`, `busybox sh -ec SCRIPT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShellScript<'a> {
    /// The script.
    pub script: &'a str,
    /// Whether the shell exits on the first failing command (`-e`, `-o
    /// errexit`, or `set -e` in the script).
    pub errexit: bool,
}

/// The script of an exec command that is a shell given `-c`; `None` for
/// anything else (a program, a script file, a wrapper such as `timeout`).
pub fn shell_script(argv: &[String]) -> Option<ShellScript<'_>> {
    // `busybox sh ...` runs the shell its next word names.
    let at = usize::from(basename(argv.first()?) == "busybox");
    if !SHELLS.contains(&basename(argv.get(at)?)) {
        return None;
    }
    let (script, mut errexit) = script_argument(&argv[at + 1..])?;
    let set_e = |c: &ScriptCommand| {
        c.words.first().is_some_and(|w| w == "set")
            && c.words[1..]
                .iter()
                .any(|w| (w.starts_with('-') && !w.starts_with("--") && w.contains('e')) || w == "errexit")
    };
    errexit |= script_commands(script).is_some_and(|cmds| cmds.iter().any(set_e));
    Some(ShellScript { script, errexit })
}

/// Splits a script into simple commands ([`lex`]) and what joins them;
/// `None` when it holds a here-document. Tokens that touch are one word
/// (`curl>/dev/null`, `-([0-9]+)$`); a parenthesis that starts a word is a
/// subshell's, a command of its own.
pub fn script_commands(script: &str) -> Option<Vec<ScriptCommand>> {
    let lexed = lex(script);
    if lexed.here_doc {
        return None;
    }
    let mut out = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word: Option<String> = None;
    let end = |words: &mut Vec<String>, word: &mut Option<String>, out: &mut Vec<ScriptCommand>, sep: Sep| {
        words.extend(word.take());
        if !words.is_empty() {
            out.push(ScriptCommand { words: std::mem::take(words), sep });
        } else if sep != Sep::Seq
            && let Some(last) = out.last_mut()
        {
            // `done &`, `) || x`: the operator belongs to what came before.
            last.sep = sep;
        }
    };
    for Glued { token, glued } in lexed.tokens {
        match token {
            Token::Word(w) => match word.as_mut().filter(|_| glued) {
                Some(joined) => joined.push_str(&w.text),
                None => {
                    words.extend(word.take());
                    word = Some(w.text);
                }
            },
            Token::Paren(c) => match word.as_mut().filter(|_| glued) {
                Some(joined) => joined.push(c),
                None => {
                    end(&mut words, &mut word, &mut out, Sep::Seq);
                    out.push(ScriptCommand { words: vec![c.to_string()], sep: Sep::Seq });
                }
            },
            Token::Sep(sep) => end(&mut words, &mut word, &mut out, sep),
        }
    }
    end(&mut words, &mut word, &mut out, Sep::Seq);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn splits_with_separators() {
        let cmds = script_commands("a 'b c' && d 2>&1 || e | f & g; h\n# x; y\ni >/dev/null").expect("reads");
        let got: Vec<(Vec<&str>, Sep)> =
            cmds.iter().map(|c| (c.words.iter().map(String::as_str).collect(), c.sep)).collect();
        assert_eq!(
            got,
            [
                (vec!["a", "b c"], Sep::And),
                (vec!["d", "2>&1"], Sep::Or),
                (vec!["e"], Sep::Pipe),
                (vec!["f"], Sep::Background),
                (vec!["g"], Sep::Seq),
                (vec!["h"], Sep::Seq),
                (vec!["i", ">/dev/null"], Sep::Seq),
            ]
        );
        assert_eq!(script_commands("cat <<EOF\nx\nEOF"), None);
        assert_eq!(script_commands("echo \"$(date +%s)\"").expect("reads")[0].words, ["echo", "$(date +%s)"]);
    }

    #[test]
    fn reads_shells_and_errexit() {
        let a = argv(&["/bin/sh", "-ec", "true"]);
        assert_eq!(shell_script(&a), Some(ShellScript { script: "true", errexit: true }));
        let a = argv(&["busybox", "sh", "-c", "set -eu; true"]);
        assert!(shell_script(&a).is_some_and(|s| s.errexit));
        let a = argv(&["bash", "-o", "errexit", "-c", "true"]);
        assert!(shell_script(&a).is_some_and(|s| s.errexit));
        assert_eq!(shell_script(&argv(&["timeout", "20", "sh", "-c", "true"])), None);
        assert_eq!(shell_script(&argv(&["sh", "/drain.sh"])), None);
    }
}
