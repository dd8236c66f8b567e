//! The one tokenizer under both views of a `sh -c` script: the flat list
//! of programs ([`super::command`]) and the commands with what joins them
//! ([`super::shell_flow`]). It splits a script into simple commands of
//! unquoted words, marks the words that are redirections, keeps the
//! command substitutions' scripts so the programs they run are seen, and
//! notes a here-document (whose body is text, not commands).
//!
//! This is not a shell: it reads the common shapes well enough to find the
//! programs a script runs and how they are joined, and each view gives up
//! (returns less) rather than guess.

/// What joins a command to the next one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sep {
    /// `;`, a newline, or the end of the script.
    Seq,
    /// `&&`.
    And,
    /// `||`.
    Or,
    /// `|`.
    Pipe,
    /// `&`: the command runs in the background.
    Background,
}

/// One word, unquoted; a redirection is a word of its own, as written
/// (`2>&1`, `>/dev/null`, or `>` alone when its target is the next word).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    /// The word, its quotes removed; substitutions as written.
    pub(crate) text: String,
    /// For a redirection, where its target starts in `text` (after the
    /// operator and a file descriptor's number): `text.len()` when the
    /// target is the next word.
    pub(crate) target_at: Option<usize>,
}

impl Word {
    /// The redirection's target in this word, if it is one and has it.
    pub(crate) fn target(&self) -> Option<&str> {
        self.target_at.map(|at| &self.text[at..]).filter(|t| !t.is_empty())
    }
}

/// What a script is made of, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Token {
    /// A word.
    Word(Word),
    /// `(` or `)`: a subshell's, or a character a word holds (`[[ $x =~
    /// -([0-9]+)$ ]]`): [`Glued`] says which a view may take it for.
    Paren(char),
    /// What ends a command and joins it to the next.
    Sep(Sep),
}

/// A token, and whether it touches the one before (no blank, no
/// separator between): `2>&1` after `curl`, `)` in `-([0-9]+)$`. A view
/// that reads such a run as one word joins them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Glued {
    /// The token.
    pub(crate) token: Token,
    /// Whether it touches the token before.
    pub(crate) glued: bool,
}

/// A script, split.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Lexed {
    /// Its tokens, in order.
    pub(crate) tokens: Vec<Glued>,
    /// The scripts of its command substitutions (`$(...)`, `` `...` ``),
    /// outermost first, not yet split.
    pub(crate) nested: Vec<String>,
    /// Whether it holds a here-document or here-string (`<<`).
    pub(crate) here_doc: bool,
}

/// The word being read, and whether it is a redirection.
#[derive(Default)]
struct Pending {
    word: Option<String>,
    target_at: Option<usize>,
    glued: bool,
    /// Whether nothing (a blank, a separator, the start) was read since
    /// the last token: the next one does not touch it.
    gap: bool,
}

impl Pending {
    fn text(&mut self) -> &mut String {
        if self.word.is_none() {
            self.glued = !self.gap;
            self.gap = false;
        }
        self.word.get_or_insert_default()
    }

    /// Ends the word being read, if any, into `tokens`.
    fn flush(&mut self, tokens: &mut Vec<Glued>) {
        if let Some(text) = self.word.take() {
            let word = Word { text, target_at: self.target_at.take() };
            tokens.push(Glued { token: Token::Word(word), glued: self.glued });
        }
    }

    /// Ends the word being read and pushes `token` after it.
    fn push(&mut self, tokens: &mut Vec<Glued>, token: Token) {
        self.flush(tokens);
        let glued = !self.gap;
        tokens.push(Glued { token, glued });
    }

    /// A separator: it ends the command, and what follows does not touch it.
    fn sep(&mut self, tokens: &mut Vec<Glued>, sep: Sep) {
        self.push(tokens, Token::Sep(sep));
        self.gap = true;
    }

    /// A blank: what follows does not touch what came before.
    fn gap(&mut self, tokens: &mut Vec<Glued>) {
        self.flush(tokens);
        self.gap = true;
    }
}

/// Splits a script into tokens.
pub(crate) fn lex(script: &str) -> Lexed {
    let chars: Vec<char> = script.chars().collect();
    let mut out = Lexed::default();
    let mut pending = Pending { gap: true, ..Pending::default() };
    let mut tokens = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        i += 1;
        let next = chars.get(i).copied();
        match c {
            ' ' | '\t' | '\r' => pending.gap(&mut tokens),
            '\\' => {
                if let Some(n) = next.filter(|&n| n != '\n') {
                    pending.text().push(n);
                }
                i += 1;
            }
            '\'' => {
                let w = pending.text();
                while let Some(&n) = chars.get(i) {
                    i += 1;
                    if n == '\'' {
                        break;
                    }
                    w.push(n);
                }
            }
            '"' => {
                pending.text();
                while let Some(&n) = chars.get(i) {
                    i += 1;
                    match n {
                        '"' => break,
                        '\\' if matches!(chars.get(i), Some('"' | '\\' | '$' | '`')) => {
                            pending.text().extend(chars.get(i));
                            i += 1;
                        }
                        '$' | '`' => i = substitution(&chars, i - 1, pending.text(), &mut out.nested),
                        _ => pending.text().push(n),
                    }
                }
            }
            // A comment starts a word; a `#` touching a parenthesis is text.
            '#' if pending.word.is_none() && pending.gap => {
                while chars.get(i).is_some_and(|&n| n != '\n') {
                    i += 1;
                }
            }
            '$' | '`' => i = substitution(&chars, i - 1, pending.text(), &mut out.nested),
            '<' | '>' => {
                // A redirection starts a word of its own, unless what is
                // before it is a file descriptor's number (`2>`).
                let fd =
                    pending.word.as_deref().is_some_and(|w| !w.is_empty() && w.chars().all(|d| d.is_ascii_digit()));
                if !fd || pending.target_at.is_some() {
                    pending.flush(&mut tokens);
                }
                if c == '<' && next == Some('<') {
                    out.here_doc = true;
                }
                let w = pending.text();
                w.push(c);
                // The operator: `>>`, `<>`, `>&`, `<&`, `<<`, `<<<`, `>|`.
                while let Some(&n) = chars.get(i).filter(|&&n| matches!(n, '<' | '>' | '&' | '|')) {
                    if n == '|' && w.ends_with('<') {
                        break;
                    }
                    w.push(n);
                    i += 1;
                    if n == '&' || n == '|' {
                        break;
                    }
                }
                pending.target_at = Some(pending.text().len());
            }
            // `&>FILE` sends both outputs to FILE: a redirection.
            '&' if next == Some('>') => {
                pending.flush(&mut tokens);
                pending.text().push_str("&>");
                i += 1;
                pending.target_at = Some(2);
            }
            '&' if next == Some('&') => {
                i += 1;
                pending.sep(&mut tokens, Sep::And);
            }
            '|' if next == Some('|') => {
                i += 1;
                pending.sep(&mut tokens, Sep::Or);
            }
            '&' => pending.sep(&mut tokens, Sep::Background),
            '|' => pending.sep(&mut tokens, Sep::Pipe),
            ';' | '\n' => pending.sep(&mut tokens, Sep::Seq),
            '(' | ')' => {
                pending.push(&mut tokens, Token::Paren(c));
                pending.gap = false;
            }
            _ => pending.text().push(c),
        }
    }
    pending.flush(&mut tokens);
    out.tokens = tokens;
    out
}

/// Copies `$(...)`, `${...}`, `` `...` `` or a plain `$` starting at `start`
/// into `word` as written; returns the index after it. A command
/// substitution's script also goes to `nested`, so the programs it runs
/// are seen (`$((1+2))` is arithmetic, `${x}` a variable: neither runs one).
fn substitution(chars: &[char], start: usize, word: &mut String, nested: &mut Vec<String>) -> usize {
    let (open, close) = match (chars.get(start), chars.get(start + 1)) {
        (Some('`'), _) => ('`', '`'),
        (Some('$'), Some('(')) => ('(', ')'),
        (Some('$'), Some('{')) => ('{', '}'),
        _ => {
            word.push('$');
            return start + 1;
        }
    };
    let body_start = if open == '`' { start + 1 } else { start + 2 };
    let mut depth = 1;
    let mut i = body_start;
    while let Some(&c) = chars.get(i) {
        if c == close && (open == '`' || depth == 1) {
            break;
        }
        if open != '`' && c == open {
            depth += 1;
        } else if open != '`' && c == close {
            depth -= 1;
        }
        i += 1;
    }
    let end = i.min(chars.len());
    let body: String = chars[body_start..end].iter().collect();
    word.extend(&chars[start..body_start]);
    word.push_str(&body);
    if end < chars.len() {
        word.push(close);
    }
    if open != '{' && !body.starts_with('(') {
        nested.push(body);
    }
    end + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(script: &str) -> Vec<(String, Option<usize>, bool)> {
        let tokens = lex(script).tokens.into_iter();
        tokens
            .filter_map(|g| match g.token {
                Token::Word(w) => Some((w.text, w.target_at, g.glued)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn redirections_are_words_that_know_their_target() {
        let got = words("curl -s x 2>&1 >/dev/null; exec 3<>/dev/tcp/db/5432 a&>/dev/null > out");
        let targets: Vec<(&str, Option<&str>, bool)> = got
            .iter()
            .filter(|(_, at, _)| at.is_some())
            .map(|(text, at, glued)| (text.as_str(), at.map(|at| &text[at..]), *glued))
            .collect();
        assert_eq!(
            targets,
            [
                ("2>&1", Some("1"), false),
                (">/dev/null", Some("/dev/null"), false),
                ("3<>/dev/tcp/db/5432", Some("/dev/tcp/db/5432"), false),
                ("&>/dev/null", Some("/dev/null"), true),
                (">", Some(""), false),
            ]
        );
        assert!(!lex("echo a >b").here_doc);
        assert!(lex("cat <<EOF\nx\nEOF").here_doc);
    }

    #[test]
    fn separators_parens_quotes_and_substitutions() {
        let kinds: Vec<(String, bool)> = lex("a 'b c' && d || e | f & g; h\n# x; y\n(i) -(1)$")
            .tokens
            .into_iter()
            .map(|g| {
                let text = match g.token {
                    Token::Word(w) => w.text,
                    Token::Paren(c) => c.to_string(),
                    Token::Sep(s) => format!("{s:?}"),
                };
                (text, g.glued)
            })
            .collect();
        let expected = [
            ("a", false),
            ("b c", false),
            ("And", false),
            ("d", false),
            ("Or", false),
            ("e", false),
            ("Pipe", false),
            ("f", false),
            ("Background", false),
            ("g", false),
            ("Seq", true),
            ("h", false),
            ("Seq", true),
            ("Seq", false),
            ("(", false),
            ("i", true),
            (")", true),
            ("-", false),
            ("(", true),
            ("1", true),
            (")", true),
            ("$", true),
        ];
        assert_eq!(kinds, expected.map(|(t, g)| (t.to_owned(), g)));
        let lexed = lex("echo \"ok $(hostname) `id -u` ${HOME} $((1+2))\"");
        assert_eq!(
            words("echo \"ok $(hostname) `id -u` ${HOME} $((1+2))\"")[1].0,
            "ok $(hostname) `id -u` ${HOME} $((1+2))"
        );
        assert_eq!(lexed.nested, ["hostname", "id -u"]);
        // A substitution's quotes do not end the word's.
        assert_eq!(words("echo \"$(cat \"a b\")\"")[1].0, "$(cat \"a b\")");
    }
}
