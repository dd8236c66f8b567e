//! How a shell given a script reads its arguments (`sh -c SCRIPT`, `bash
//! -ec SCRIPT`, `sh -o pipefail -c SCRIPT`), for both views of a script
//! ([`super::command`] and [`super::shell_flow`]).

/// The shells whose `-c` script lifeguard reads.
pub(crate) const SHELLS: &[&str] = &["sh", "bash", "ash", "dash", "zsh", "ksh", "mksh"];

/// The script among a shell's arguments (those after the program), and
/// whether its options make the shell exit on the first failing command
/// (`-e`, `-o errexit`); `None` without `-c` or for a script file
/// (`sh script.sh`, which cannot be seen into).
pub(crate) fn script_argument(args: &[String]) -> Option<(&str, bool)> {
    let (mut saw_c, mut errexit) = (false, false);
    let mut args = args.iter().map(String::as_str);
    while let Some(arg) = args.next() {
        match arg {
            "--" if saw_c => return args.next().map(|script| (script, errexit)),
            "-o" | "+o" => {
                let option = args.next()?;
                errexit |= arg == "-o" && option == "errexit";
            }
            _ if arg.starts_with("--") => {}
            _ => match arg.strip_prefix('-').map(|f| (f, true)).or_else(|| arg.strip_prefix('+').map(|f| (f, false))) {
                Some((flags, set)) => {
                    saw_c |= flags.contains('c');
                    errexit |= set && flags.contains('e');
                }
                None if saw_c => return Some((arg, errexit)),
                None => return None,
            },
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn finds_the_script_after_the_options() {
        assert_eq!(script_argument(&args(&["-ec", "true"])), Some(("true", true)));
        assert_eq!(script_argument(&args(&["-o", "pipefail", "-c", "x"])), Some(("x", false)));
        assert_eq!(script_argument(&args(&["-o", "errexit", "-c", "x"])), Some(("x", true)));
        assert_eq!(script_argument(&args(&["+x", "-c", "x"])), Some(("x", false)));
        assert_eq!(script_argument(&args(&["-c", "--", "-x"])), Some(("-x", false)));
        assert_eq!(script_argument(&args(&["--login", "-c", "x"])), Some(("x", false)));
        assert_eq!(script_argument(&args(&["/drain.sh"])), None);
        assert_eq!(script_argument(&args(&["-c"])), None);
    }
}
