//! How the loops of a `sh -c` script end, read from its commands
//! ([`super::shell_flow`]): a loop nothing ends, and a loop only one kind of
//! command's success ends (a request to the container's own server), for
//! `prestop-loop-unbounded`. Not a shell either: what it cannot follow is a
//! way out, so a rule never reports a loop it did not understand.
//!
//! Over 400 lines: the unit tests (about 145 lines) list scripts whose loops
//! are endless, guarded or neither, beside the reader whose ways out of a loop
//! they pin down; both kinds of loop share that reader's walk over a loop's
//! body.

use super::command::basename;
use super::shell_flow::{ScriptCommand, ShellScript, script_commands};
use super::shell_lex::Sep;

/// A loop that nothing ends, read from a shell script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndlessLoop {
    /// The loop's head as written, `while true` or `until false`.
    pub head: String,
}

/// Words that leave a loop or end the script or the container.
const ENDS: &[&str] = &["break", "exit", "return", "exec", "kill", "pkill", "killall", "logout"];
/// Programs that do not fail, so `set -e` does not end a loop that runs them.
const CANNOT_FAIL: &[&str] = &["sleep", "echo", "printf", "true", ":", "date"];

/// The first top-level loop of a script whose condition never changes
/// (`while true`, `while :`, `while sleep 5`, `until false`) and whose body
/// never leaves it: no `break`, `exit`, `return`, `exec` or `kill`, nor,
/// under `set -e`, a command that may fail. A backgrounded loop, a loop
/// inside `if`, `case`, a function or a subshell, or after `&&` / `||` is not
/// followed: it may never run, or not hold the script.
pub fn endless_loop(sh: &ShellScript<'_>) -> Option<EndlessLoop> {
    let cmds = script_commands(sh.script)?;
    first_loop(&cmds, |l| {
        let cond = l.condition();
        let endless = if l.until { matches!(cond[..], ["false" | "/bin/false"]) } else { always_true(&cond) };
        (endless && !can_end(l.body, sh.errexit)).then(|| EndlessLoop { head: l.head.words.join(" ") })
    })
}

/// A loop that ends only when one kind of command succeeds: for
/// `prestop-loop-unbounded`, a request to the container's own server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardedLoop {
    /// The loop's head as written, `while true` or `until curl -sf localhost:8080/ready`.
    pub head: String,
    /// The first command whose success it waits for, as written.
    pub guard: String,
}

/// The first top-level loop of a script (followed where [`endless_loop`]
/// follows one) whose every way out waits for a command that `needs` names
/// to succeed, and which has at least one:
/// - its condition never changes (as for [`endless_loop`]), or ends the
///   loop only on such a command's success: `until CMD`, `while ! CMD`;
/// - each `break`, `exit`, `return`, `exec` or `kill` of its body comes
///   after such a command and `&&` only (`CMD && exit 0`), or in the `then`
///   of an `if` whose condition is such a command, joined by `&&` only;
/// - under `set -e`, no other command of the body that may fail can end the
///   script (a condition, a command before `&&` or `||`, or after `!` cannot).
///
/// Anything else is a way out that waits for nothing `needs` names: an
/// `exit` after `||`, in an `else`, after a `[ -f ... ]` test or a
/// pipeline, a condition such as `while CMD` or `while [ $i -lt 30 ]`, or a
/// `case`. A loop with no way out at all is [`endless_loop`]'s.
pub fn guarded_loop(sh: &ShellScript<'_>, needs: impl Fn(&[String]) -> bool) -> Option<GuardedLoop> {
    let cmds = script_commands(sh.script)?;
    first_loop(&cmds, |l| {
        let words = &l.head.words[1..];
        let (negated, cond) = match words.split_first() {
            Some((bang, rest)) if bang == "!" => (true, rest),
            _ => (false, words),
        };
        let plain: Vec<&str> = cond.iter().map(String::as_str).collect();
        let never =
            !negated && if l.until { matches!(plain[..], ["false" | "/bin/false"]) } else { always_true(&plain) };
        // `until CMD` and `while ! CMD` end when CMD succeeds.
        let mut guards = Vec::new();
        if !never {
            if l.until == negated || !needs(cond) {
                return None;
            }
            guards.push(cond.join(" "));
        }
        guards.extend(body_guards(l.body, sh.errexit, &needs)?);
        let guard = guards.into_iter().next()?;
        Some(GuardedLoop { head: l.head.words.join(" "), guard })
    })
}

/// A top-level loop of a script.
struct Loop<'c> {
    /// `until` rather than `while`.
    until: bool,
    /// Its head, `while` or `until` and the condition's first command.
    head: &'c ScriptCommand,
    /// The commands between `do` and `done`.
    body: &'c [ScriptCommand],
}

impl Loop<'_> {
    fn condition(&self) -> Vec<&str> {
        self.head.words[1..].iter().map(String::as_str).collect()
    }
}

/// The first loop `judge` accepts of those that hold a script: at the top
/// level, run unconditionally (not inside `if`, `case`, a function or a
/// subshell, nor after `&&` / `||`), in the foreground, with a condition of
/// one command. `None` also when a loop is not closed before one is found.
fn first_loop<T>(cmds: &[ScriptCommand], mut judge: impl FnMut(Loop<'_>) -> Option<T>) -> Option<T> {
    let mut depth = 0usize;
    let mut prev = Sep::Seq;
    let mut i = 0;
    while let Some(cmd) = cmds.get(i) {
        let first = cmd.words.first().map(String::as_str).unwrap_or_default();
        match first {
            "if" | "case" | "{" | "(" => depth += 1,
            "fi" | "esac" | "}" | ")" => depth = depth.saturating_sub(1),
            "while" | "until" if depth == 0 && prev == Sep::Seq && cmd.sep == Sep::Seq => {
                let (body, done) = loop_body(cmds, i + 1)?;
                let background = cmds.get(done).is_some_and(|c| c.sep == Sep::Background);
                if !background && let Some(found) = judge(Loop { until: first == "until", head: cmd, body }) {
                    return Some(found);
                }
                i = done;
            }
            _ => {}
        }
        prev = cmds.get(i).map_or(Sep::Seq, |c| c.sep);
        i += 1;
    }
    None
}

/// Shell words that head a command without being its program.
const KEYWORDS: &[&str] = &["do", "then", "else", "elif", "if", "while", "until", "{", "}", "!", "fi", "done"];

/// Where a command of a loop's body sits in an `if`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Branch {
    /// In the condition (`if` or `elif` up to `then`).
    Condition,
    /// In the `then`, reached only when the condition succeeded.
    Then,
    /// In the `else`.
    Else,
}

/// One `if` a command of a loop's body is in.
struct If {
    branch: Branch,
    /// In the `then`: the command of the condition `needs` names, when the
    /// condition succeeds only with it (`&&` only).
    guard: Option<String>,
}

/// One and-or list (`a && b || c`) of a loop's body, as far as it is read.
#[derive(Default)]
struct AndOr {
    /// Something other than `&&` joined two of its commands (`||`, `|`).
    not_only_and: bool,
    /// The first command `needs` names, not negated, that a later command
    /// of the list runs only after (it is followed by `&&`).
    guard: Option<String>,
    /// It heads with a condition (`if`, `elif`, `while`, `until`) or `!`:
    /// `set -e` ignores its failure.
    exempt: bool,
}

/// The commands whose success each way out of a loop's body waits for (see
/// [`guarded_loop`]); `None` when a way out waits for none of them.
fn body_guards(body: &[ScriptCommand], errexit: bool, needs: &impl Fn(&[String]) -> bool) -> Option<Vec<String>> {
    let mut guards = Vec::new();
    let mut ifs: Vec<If> = Vec::new();
    let mut list = AndOr::default();
    // The list that ended last, for the `then` that may follow it.
    let mut ended: Option<AndOr> = None;
    let mut starts_list = true;
    for c in body {
        let mut at = 0;
        while let Some(word) = c.words.get(at).map(String::as_str).filter(|w| KEYWORDS.contains(w)) {
            match word {
                "if" => ifs.push(If { branch: Branch::Condition, guard: None }),
                "elif" => ifs.last_mut()?.branch = Branch::Condition,
                "then" => {
                    let top = ifs.last_mut()?;
                    let condition = ended.take().filter(|l| !l.not_only_and);
                    *top = If { branch: Branch::Then, guard: condition.and_then(|l| l.guard) };
                }
                "else" => *ifs.last_mut()? = If { branch: Branch::Else, guard: None },
                "fi" => {
                    ifs.pop()?;
                }
                _ => {}
            }
            if starts_list && matches!(word, "if" | "elif" | "while" | "until" | "!") {
                list.exempt = true;
            }
            at += 1;
        }
        let negated = c.words.get(at.saturating_sub(1)).is_some_and(|w| w == "!");
        let rest = &c.words[at..];
        if !rest.is_empty() {
            let leaves = c.words.iter().any(|w| ENDS.contains(&basename(w)));
            if leaves {
                let by_list = list.guard.clone().filter(|_| !list.not_only_and);
                // Any `then` it is in must be reached, so any guarded one guards it.
                let by_if = ifs.iter().filter(|f| f.branch == Branch::Then).find_map(|f| f.guard.clone());
                guards.push(by_list.or(by_if)?);
            } else if errexit
                && !list.exempt
                && !negated
                && !matches!(c.sep, Sep::And | Sep::Or | Sep::Pipe)
                && !ifs.iter().any(|f| f.branch == Branch::Condition)
                && may_fail(rest)
            {
                // `set -e` ends the script on this command's failure.
                return None;
            }
        }
        let named = !negated && !rest.is_empty() && needs(rest);
        match c.sep {
            Sep::And | Sep::Or | Sep::Pipe => {
                if named && c.sep == Sep::And && list.guard.is_none() {
                    list.guard = Some(rest.join(" "));
                }
                list.not_only_and |= c.sep != Sep::And;
                starts_list = false;
            }
            Sep::Seq | Sep::Background => {
                // The whole list, its last command too, for an `if` condition.
                if named && list.guard.is_none() {
                    list.guard = Some(rest.join(" "));
                }
                list.not_only_and |= c.sep == Sep::Background;
                ended = Some(std::mem::take(&mut list));
                starts_list = true;
            }
        }
    }
    Some(guards)
}

/// Whether a command (its program first) may fail, so that `set -e` ends
/// the script on it.
fn may_fail(words: &[String]) -> bool {
    let program = words.first().map(String::as_str).unwrap_or_default();
    !CANNOT_FAIL.contains(&basename(program))
        && !program.starts_with(['>', '<'])
        && !matches!(program, "for" | "case" | "esac" | "in" | "(" | ")")
}

/// The commands between `do` (at `start`) and its `done`, and the index of
/// the `done`; `None` when the loop is not closed.
fn loop_body(cmds: &[ScriptCommand], start: usize) -> Option<(&[ScriptCommand], usize)> {
    if cmds.get(start)?.words.first()? != "do" {
        return None;
    }
    let mut depth = 0usize;
    for (k, c) in cmds.iter().enumerate().skip(start) {
        match c.words.first().map(String::as_str) {
            Some("do") => depth += 1,
            Some("done") => {
                depth -= 1;
                if depth == 0 {
                    return Some((&cmds[start..k], k));
                }
            }
            _ => {}
        }
    }
    None
}

fn always_true(cond: &[&str]) -> bool {
    match cond {
        ["true" | "/bin/true" | ":"] | ["[", "1" | "true", "]"] => true,
        ["sleep", n] => n.trim_end_matches('s').parse::<f64>().is_ok(),
        _ => false,
    }
}

fn can_end(body: &[ScriptCommand], errexit: bool) -> bool {
    body.iter().any(|c| {
        let words: Vec<&str> = c.words.iter().map(String::as_str).collect();
        // `do` and flow keywords head a command; the program is the next word.
        let program = words.iter().copied().find(|w| !matches!(*w, "do" | "then" | "else" | "if" | "!" | "{"));
        words.iter().any(|w| ENDS.contains(&basename(w)))
            || (errexit && program.is_some_and(|p| !CANNOT_FAIL.contains(&basename(p)) && !p.starts_with(['>', '<'])))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::shell_flow::shell_script;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    fn endless(words: &[&str]) -> Option<String> {
        let argv = argv(words);
        endless_loop(&shell_script(&argv)?).map(|l| l.head)
    }

    #[test]
    fn endless_loops() {
        for script in [
            "while true; do echo waiting; sleep 5; done",
            "while :\ndo\n  curl -s localhost:8080/drain\n  sleep 5\ndone",
            "nginx -s quit; while sleep 5; do echo draining; done",
            "until false; do sleep 1; done > /dev/null",
            "while [ 1 ]; do for i in 1 2; do sleep 1; done; done | logger",
        ] {
            assert!(endless(&["sh", "-c", script]).is_some(), "{script}");
        }
        assert_eq!(endless(&["sh", "-c", "while true; do sleep 5; done"]).as_deref(), Some("while true"));
        // Under -e the only commands are ones that do not fail.
        assert!(endless(&["sh", "-ec", "while true; do echo x; sleep 5; done"]).is_some());
    }

    /// `guarded_loop` with "a command that runs `serve`" standing in for a
    /// request to the container's own server.
    fn guarded(words: &[&str]) -> Option<(String, String)> {
        let argv = argv(words);
        let serve = |w: &[String]| w.first().is_some_and(|p| p == "serve");
        guarded_loop(&shell_script(&argv)?, serve).map(|l| (l.head, l.guard))
    }

    #[test]
    fn loops_whose_every_way_out_waits_for_one_command() {
        let found = |h: &str, g: &str| Some((h.to_owned(), g.to_owned()));
        assert_eq!(
            guarded(&["sh", "-c", "until serve -f /ready; do sleep 1; done"]),
            found("until serve -f /ready", "serve -f /ready")
        );
        assert_eq!(guarded(&["sh", "-c", "while ! serve; do sleep 1; done"]), found("while ! serve", "serve"));
        assert_eq!(
            guarded(&["sh", "-c", "while true; do serve /done && exit 0; sleep 1; done"]),
            found("while true", "serve /done")
        );
        assert_eq!(
            guarded(&[
                "sh",
                "-c",
                "while :; do if serve /idle && [ -f /x ]; then\n echo done\n break\nfi; sleep 1; done"
            ]),
            found("while :", "serve /idle")
        );
        // An `if` inside a guarded `then` is reached only through the guard.
        assert_eq!(
            guarded(&["sh", "-c", "while true; do if serve; then if [ -f /x ]; then exit 0; fi; fi; sleep 1; done"]),
            found("while true", "serve")
        );
        // Two guarded ways out: the first is named.
        assert_eq!(
            guarded(&["sh", "-c", "while true; do serve /a && break; [ -f /x ] && serve /b && exit 0; sleep 1; done"]),
            found("while true", "serve /a")
        );
        // Under -e: a condition, a command before `&&` and commands that cannot fail do not end it.
        assert_eq!(
            guarded(&["sh", "-ec", "until serve; do echo waiting; sleep 1; done"]),
            found("until serve", "serve")
        );
        assert_eq!(
            guarded(&["sh", "-ec", "while true; do serve && exit 0; sleep 1; done"]),
            found("while true", "serve")
        );
        assert_eq!(
            guarded(&["sh", "-ec", "while true; do if serve; then exit 0; fi; sleep 1; done"]),
            found("while true", "serve")
        );
        // The first loop that holds the hook: a bounded one before it is passed over.
        assert_eq!(
            guarded(&["sh", "-c", "for i in 1 2; do sleep 1; done; until serve; do sleep 1; done"]),
            found("until serve", "serve")
        );
    }

    #[test]
    fn loops_with_a_way_out_that_waits_for_nothing() {
        for words in [
            // The condition can end it otherwise.
            &["sh", "-c", "while serve; do sleep 1; done"][..],
            &["sh", "-c", "until ! serve; do sleep 1; done"],
            &["sh", "-c", "until curl -sf http://other/idle; do sleep 1; done"],
            &["sh", "-c", "i=0; while [ $i -lt 30 ]; do serve && exit 0; i=$((i+1)); done"],
            &["sh", "-c", "until serve || [ $(date +%s) -ge $end ]; do sleep 1; done"],
            // A way out of the body that needs no answer.
            &["sh", "-c", "while true; do serve || exit 0; sleep 1; done"],
            &["sh", "-c", "while true; do serve && exit 0; [ -f /x ] && break; sleep 1; done"],
            &["sh", "-c", "while true; do if serve; then sleep 1; else exit 0; fi; done"],
            &["sh", "-c", "while true; do if ! serve; then exit 1; fi; sleep 1; done"],
            &["sh", "-c", "while true; do if serve; then sleep 1; elif [ -f /x ]; then exit 0; fi; done"],
            &["sh", "-c", "while true; do if [ -f /x ]; then serve && sleep 1; exit 0; fi; done"],
            &["sh", "-c", "while true; do if [ -f /x ] || serve; then exit 0; fi; sleep 1; done"],
            &["sh", "-c", "while true; do if [ \"$(serve)\" = 0 ]; then break; fi; sleep 1; done"],
            &["sh", "-c", "while true; do serve | grep -q ok && exit 0; sleep 1; done"],
            &["sh", "-c", "while true; do serve && echo ok; exit 0; done"],
            // Under -e, a command that may fail ends the script.
            &["sh", "-ec", "while true; do serve && exit 0; serve /busy; sleep 1; done"],
            // No way out at all: endless_loop's; not held: backgrounded, conditional, wrapped.
            &["sh", "-c", "while true; do serve; sleep 1; done"],
            &["sh", "-c", "until serve; do sleep 1; done &"],
            &["sh", "-c", "[ -f /x ] && until serve; do sleep 1; done"],
            &["timeout", "20", "sh", "-c", "until serve; do sleep 1; done"],
        ] {
            assert_eq!(guarded(words), None, "{words:?}");
        }
    }

    /// Loops whose ways out `endless_loop` sees; those that wait on the
    /// container's own server are `guarded_loop`'s.
    #[test]
    fn loops_that_end_or_do_not_hold_the_hook() {
        for words in [
            &["sh", "-c", "while true; do [ -f /tmp/drained ] && break; sleep 5; done"][..],
            &["sh", "-c", "while true; do if curl -sf localhost/idle; then exit 0; fi; sleep 1; done"],
            &["sh", "-c", "i=0; while [ $i -lt 30 ]; do i=$((i+1)); sleep 1; done"],
            &["sh", "-c", "for i in $(seq 1 30); do sleep 1; done"],
            &["sh", "-c", "nginx -s quit; while pgrep -x nginx; do sleep 1; done"],
            &["sh", "-c", "until curl -sf localhost/idle; do sleep 1; done"],
            &["timeout", "25", "sh", "-c", "while true; do sleep 5; done"],
            &["sh", "-c", "while true; do sleep 5; done &"],
            &["sh", "-c", "if [ -f /x ]; then while true; do sleep 1; done; fi"],
            &["sh", "-c", "test -f /x && while true; do sleep 1; done"],
            // Under -e, a failing curl ends the script.
            &["sh", "-ec", "while true; do curl -sf localhost/busy; sleep 5; done"],
            &["sh", "-c", "while true; do sleep 5"],
            &["/drain.sh"],
        ] {
            assert_eq!(endless(words), None, "{words:?}");
        }
    }
}
