//! CEL as text: its tokens, a rename of the identifiers the ratchet reads
//! on the old object, and a layout that breaks an expression into lines a
//! person can review. CEL ignores whitespace between tokens, so a line
//! break anywhere between two tokens keeps the expression's meaning; only a
//! string literal must stay whole.
//!
//! Over 400 lines: the tokenizer (every form of CEL string literal), the
//! renames and the line layout all work on one `Token`, and the unit tests
//! (about 120 lines) sit beside them; the code itself is about 330 lines.

/// One token of an expression, with whether whitespace came before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token<'a> {
    pub(crate) text: &'a str,
    /// The byte offset where it starts.
    pub(crate) at: usize,
    pub(crate) spaced: bool,
}

impl Token<'_> {
    fn is_ident(&self) -> bool {
        self.text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
    }
}

/// The tokens of `expression`: identifiers, numbers, string literals
/// (quoted with `'` or `"`, tripled or not, raw or not), operators and
/// punctuation.
pub(crate) fn tokens(expression: &str) -> Vec<Token<'_>> {
    let bytes = expression.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut spaced = false;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_whitespace() {
            spaced = true;
            i += 1;
            continue;
        }
        let start = i;
        let prefix = literal_prefix(bytes, i);
        if let Some(len) = prefix {
            let raw = bytes[i..i + len].iter().any(|b| b.eq_ignore_ascii_case(&b'r'));
            i = after_literal(bytes, i + len, raw);
        } else if b.is_ascii_alphabetic() || b == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
        } else if b.is_ascii_digit() {
            i = after_number(bytes, i);
        } else {
            let two = bytes.get(i..i + 2).unwrap_or_default();
            i += if matches!(two, b"&&" | b"||" | b"==" | b"!=" | b"<=" | b">=") { 2 } else { 1 };
        }
        // A token boundary is always a char boundary: tokens start and end at ASCII bytes.
        let text = expression.get(start..i.min(bytes.len())).unwrap_or_default();
        out.push(Token { text, at: start, spaced });
        spaced = false;
    }
    out
}

/// The length of a string literal's prefix and opening quote at `i`
/// (`'`, `r'`, `b"`, `rb'`...), or `None` where no literal starts.
fn literal_prefix(bytes: &[u8], i: usize) -> Option<usize> {
    let prefix = bytes[i..].iter().take_while(|b| matches!(b.to_ascii_lowercase(), b'r' | b'b')).count().min(2);
    let quote = *bytes.get(i + prefix)?;
    let starts_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
    ((quote == b'\'' || quote == b'"') && (prefix == 0 || starts_word)).then_some(prefix)
}

/// The index after the literal whose quote is at `start`.
fn after_literal(bytes: &[u8], start: usize, raw: bool) -> usize {
    let quote = bytes[start];
    let triple = bytes.get(start..start + 3).is_some_and(|q| q.iter().all(|b| *b == quote));
    let mut i = start + if triple { 3 } else { 1 };
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if !raw => i += 2,
            b if b == quote && !triple => return i + 1,
            b if b == quote && bytes.get(i..i + 3).is_some_and(|q| q.iter().all(|b| *b == quote)) => return i + 3,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// The index after the number at `start`: digits, a fraction, an exponent,
/// a hex prefix, an unsigned suffix.
fn after_number(bytes: &[u8], start: usize) -> usize {
    let mut i = start;
    let digit = |i: usize| bytes.get(i).is_some_and(u8::is_ascii_alphanumeric);
    while digit(i) || (bytes.get(i) == Some(&b'.') && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
        // An exponent's sign: `1e-3`.
        if matches!(bytes[i], b'e' | b'E') && matches!(bytes.get(i + 1), Some(b'-' | b'+')) {
            i += 1;
        }
        i += 1;
    }
    i
}

/// `expression` read on one side of `variables.objects` (`[object]`, or
/// `[object, oldObject]` on an UPDATE the ratchet judges): each of
/// `variables` (`variables.NAME`, each a list with a value per side) as
/// `variables.NAME[SIDE]`, and with `object` too, `object` as
/// `variables.objects[SIDE]`.
pub(crate) fn on_side(expression: &str, variables: &[&str], side: &str, object: bool) -> String {
    let tokens = tokens(expression);
    let mut out = String::with_capacity(expression.len() + 64);
    let mut copied = 0;
    for (i, t) in tokens.iter().enumerate() {
        let after_dot = i > 0 && tokens[i - 1].text == ".";
        let renamed = if object && t.text == "object" && !after_dot {
            Some(format!("variables.objects[{side}]"))
        } else if after_dot && i > 1 && tokens[i - 2].text == "variables" && variables.contains(&t.text) {
            Some(format!("{}[{side}]", t.text))
        } else {
            None
        };
        if let Some(renamed) = renamed {
            out.push_str(&expression[copied..t.at]);
            out.push_str(&renamed);
            copied = t.at + t.text.len();
        }
    }
    out.push_str(&expression[copied..]);
    out
}

/// `expression` with `object` read as `oldObject`.
pub(crate) fn on_old_object(expression: &str) -> String {
    let tokens = tokens(expression);
    let mut out = String::with_capacity(expression.len() + 64);
    let mut copied = 0;
    for (i, t) in tokens.iter().enumerate() {
        if t.text == "object" && !(i > 0 && tokens[i - 1].text == ".") {
            out.push_str(&expression[copied..t.at]);
            out.push_str("oldObject");
            copied = t.at + t.text.len();
        }
    }
    out.push_str(&expression[copied..]);
    out
}

/// The name of the variable of a rule's findings on the old object:
/// `oldNAME`, camel-cased.
pub(crate) fn old_name(name: &str) -> String {
    let mut chars = name.chars();
    let first = chars.next().map(|c| c.to_ascii_uppercase().to_string()).unwrap_or_default();
    format!("old{first}{}", chars.as_str())
}

/// A token, or a bracketed group of them.
#[derive(Debug)]
enum Item<'a> {
    Token(Token<'a>),
    Group { open: Token<'a>, inner: Vec<Item<'a>>, close: Option<Token<'a>> },
}

impl Item<'_> {
    fn spaced(&self) -> bool {
        match self {
            Item::Token(t) => t.spaced,
            Item::Group { open, .. } => open.spaced,
        }
    }
}

fn items<'a>(tokens: &mut std::iter::Peekable<std::vec::IntoIter<Token<'a>>>, closing: Option<&str>) -> Vec<Item<'a>> {
    let mut out = Vec::new();
    while let Some(t) = tokens.peek().copied() {
        if Some(t.text) == closing {
            break;
        }
        tokens.next();
        let close = match t.text {
            "(" => ")",
            "[" => "]",
            "{" => "}",
            _ => {
                out.push(Item::Token(t));
                continue;
            }
        };
        let inner = items(tokens, Some(close));
        let close = tokens.next_if(|c| c.text == close);
        out.push(Item::Group { open: t, inner, close });
    }
    out
}

/// The items on one line, with a space where the source had whitespace.
fn flat(items: &[Item<'_>], out: &mut String) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 && item.spaced() {
            out.push(' ');
        }
        match item {
            Item::Token(t) => out.push_str(t.text),
            Item::Group { open, inner, close } => {
                out.push_str(open.text);
                flat(inner, out);
                out.push_str(close.map_or("", |c| c.text));
            }
        }
    }
}

fn flat_len(items: &[Item<'_>]) -> usize {
    let mut s = String::new();
    flat(items, &mut s);
    s.chars().count()
}

/// The operators a line may break before, loosest first: the ternary's
/// `:` (each `cond ? value :` of a chain on its line), then its `?`, `||`,
/// `&&`, comparisons, `+` and `-`. Inside brackets, a comma comes before all.
const LEVELS: [&[&str]; 6] = [&[":"], &["?"], &["||"], &["&&"], &["==", "!=", "<", "<=", ">", ">=", "in"], &["+", "-"]];

/// Whether the token at `i` of `items` is a binary operator of `level`
/// (not a unary minus, not the `:` at `key`, a map entry's or an object
/// field's, where a ternary's `:` in its value may still break).
fn breaks_at(items: &[Item<'_>], i: usize, level: &[&str], key: Option<usize>) -> bool {
    let Item::Token(t) = &items[i] else { return false };
    if i == 0 || !level.contains(&t.text) || key == Some(i) {
        return false;
    }
    // After an operand, `-` is binary.
    match &items[i - 1] {
        Item::Group { .. } => true,
        Item::Token(before) => {
            before.is_ident() && before.text != "in"
                || before.text.starts_with(|c: char| c.is_ascii_digit() || c == '\'' || c == '"')
        }
    }
}

/// Lays `items` out from column `indent`, each line at most `width`
/// wide where a token allows.
fn lay(items: &[Item<'_>], indent: usize, width: usize, open: Option<&str>, lines: &mut Vec<String>) {
    let pad = " ".repeat(indent);
    if indent + flat_len(items) <= width {
        let mut line = pad;
        flat(items, &mut line);
        lines.push(line);
        return;
    }
    // One line per comma-separated element inside brackets.
    let commas: Vec<usize> = if open.is_some() {
        items
            .iter()
            .enumerate()
            .filter(|(_, it)| matches!(it, Item::Token(t) if t.text == ","))
            .map(|(i, _)| i + 1)
            // An element's own trailing comma (a map's entries are laid out
            // knowing they are entries) is no place to cut.
            .filter(|&cut| cut < items.len())
            .collect()
    } else {
        Vec::new()
    };
    let in_map = open == Some("{");
    // An entry of a map or an object's field: its first `:` is the key's.
    let key = if in_map { items.iter().position(|it| matches!(it, Item::Token(t) if t.text == ":")) } else { None };
    let (cuts, level) = if commas.is_empty() {
        LEVELS
            .iter()
            .map(|level| ((0..items.len()).filter(|&i| breaks_at(items, i, level, key)).collect::<Vec<_>>(), *level))
            .find(|(cuts, _)| !cuts.is_empty())
            .unwrap_or_default()
    } else {
        (commas, &[","][..])
    };
    if !cuts.is_empty() {
        // A concatenation fills its lines; other operators and commas
        // break at each, one operand or element per line.
        let fill = !level.contains(&":") && !level.contains(&"?") && !level.contains(&",");
        let mut from = 0;
        let mut ends = cuts.into_iter().chain([items.len()]).peekable();
        while let Some(mut cut) = ends.next() {
            while fill && ends.peek().is_some_and(|&next| indent + flat_len(&items[from..next]) <= width) {
                cut = ends.next().unwrap_or(cut);
            }
            if cut > from {
                // A map's entries keep knowing they are entries, and an
                // entry's first part that it holds its key.
                let within = if in_map && (level.contains(&",") || from == 0) { open } else { None };
                lay(&items[from..cut], indent, width, within, lines);
            }
            from = cut;
        }
        return;
    }
    // No operator to break at: a chain of calls, a negation, a literal.
    // Each group that does not fit opens a block of its own.
    let mut line = pad.clone();
    let mut fresh = true;
    for item in items {
        if !fresh && item.spaced() {
            line.push(' ');
        }
        fresh = false;
        match item {
            Item::Token(t) => line.push_str(t.text),
            Item::Group { open, inner, close } => {
                let fits = line.chars().count() + flat_len(std::slice::from_ref(item)) <= width;
                if fits || inner.is_empty() {
                    flat(std::slice::from_ref(item), &mut line);
                    continue;
                }
                line.push_str(open.text);
                lines.push(std::mem::take(&mut line));
                lay(inner, indent + 2, width, Some(open.text), lines);
                line = pad.clone();
                line.push_str(close.map_or("", |c| c.text));
            }
        }
    }
    lines.push(line);
}

/// `expression` on lines of at most `width` characters (but for a string
/// literal longer than that), broken at its loosest operators and commas
/// and indented by nesting.
pub(crate) fn layout(expression: &str, width: usize) -> String {
    let mut tokens = tokens(expression).into_iter().peekable();
    let items = items(&mut tokens, None);
    let mut lines = Vec::new();
    lay(&items, 0, width, None, &mut lines);
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(expression: &str) -> Vec<&str> {
        tokens(expression).into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn literals_stay_whole_and_operators_are_tokens() {
        assert_eq!(
            texts(r#"'it\'s a (b' + "x\"y" + r'\d' && a.b(1.5e-3, -2u) != 'x'"#),
            [
                r"'it\'s a (b'",
                "+",
                r#""x\"y""#,
                "+",
                r"r'\d'",
                "&&",
                "a",
                ".",
                "b",
                "(",
                "1.5e-3",
                ",",
                "-",
                "2u",
                ")",
                "!=",
                "'x'"
            ]
        );
        assert_eq!(texts("l[0].m"), ["l", "[", "0", "]", ".", "m"]);
        assert_eq!(texts("'''a ' b'''+bar"), ["'''a ' b'''", "+", "bar"]);
    }

    #[test]
    fn a_side_s_reading_indexes_the_variables_it_names_and_the_object() {
        let e =
            "object.spec.x == variables.containers[0] + variables.other + 'object' + a.object + variables.containersX";
        assert_eq!(
            on_side(e, &["containers", "containersX"], "s", true),
            "variables.objects[s].spec.x == variables.containers[s][0] + variables.other + 'object' + a.object + \
             variables.containersX[s]"
        );
        assert_eq!(
            on_side(e, &["containers"], "0", false),
            "object.spec.x == variables.containers[0][0] + variables.other + 'object' + a.object + variables.containersX"
        );
    }

    #[test]
    fn the_old_object_s_reading_renames_the_object_alone() {
        assert_eq!(
            on_old_object("has(object.spec) && a.object == 'object'"),
            "has(oldObject.spec) && a.object == 'object'"
        );
    }

    /// The layout changes only whitespace between tokens.
    fn same_tokens(a: &str, b: &str) {
        assert_eq!(texts(a), texts(b), "{b}");
    }

    #[test]
    fn a_short_expression_stays_on_one_line() {
        assert_eq!(layout("a && b(c, d)", 80), "a && b(c, d)");
    }

    #[test]
    fn a_long_one_breaks_at_its_loosest_operators_then_inside_brackets() {
        let e = "object.kind == 'Pod' ? object.spec : object.kind == 'CronJob' ? object.spec.jobTemplate.spec.template.spec : object.spec.template.spec";
        assert_eq!(
            layout(e, 60),
            "object.kind == 'Pod' ? object.spec\n\
             : object.kind == 'CronJob'\n\
             ? object.spec.jobTemplate.spec.template.spec\n\
             : object.spec.template.spec"
        );
        let e = "'r' in variables.ignored || !variables.containers.exists(c, has(c.livenessProbe) && c.livenessProbe.failureThreshold < 3)";
        let out = layout(e, 50);
        assert_eq!(
            out,
            "'r' in variables.ignored\n\
             || !variables.containers.exists(\n  \
               c,\n  \
               has(c.livenessProbe)\n  \
               && c.livenessProbe.failureThreshold < 3\n\
             )"
        );
        same_tokens(e, &out);
    }

    #[test]
    fn a_map_s_colon_and_a_unary_minus_are_no_breaks() {
        let e = "{'a': 1, 'b': -2} == x ? [-1, 0] : [1 - 2, 3]";
        let out = layout(e, 12);
        same_tokens(e, &out);
        assert!(out.contains("'a': 1,\n") && out.contains("'b': -2\n") && out.contains("? [-1, 0]\n"), "{out}");
    }

    #[test]
    fn an_entry_s_key_stays_beside_its_value_and_a_ternary_in_the_value_still_breaks() {
        let e = "JSONPatch{op: 'add', value: has(object.metadata.annotations) ? object.metadata.annotations : {}}";
        let out = layout(e, 44);
        same_tokens(e, &out);
        assert!(out.contains("\n  op: 'add',\n  value: has(object.metadata.annotations)\n"), "{out}");
        assert!(out.contains("\n  ? object.metadata.annotations\n  : {}\n"), "{out}");
        assert!(!out.lines().any(|l| l.trim() == "value" || l.trim_start().starts_with(": has")), "{out}");
    }

    #[test]
    fn no_line_is_wider_than_asked_but_for_a_long_literal() {
        let long = format!("f('{}') && g(a, b)", "x".repeat(50));
        let out = layout(&long, 30);
        same_tokens(&long, &out);
        for line in out.lines() {
            assert!(line.len() <= 30 || line.contains("xxxx"), "{out}");
        }
    }
}
