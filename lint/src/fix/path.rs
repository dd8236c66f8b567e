//! Following a JSON pointer through a document's values and positions, and
//! refusing the nodes whose text is not where the pointer leads (aliases,
//! merge keys): editing their text would edit the anchor instead.

use serde_json::Value;

use crate::input::source::Node;

/// One step of a resolved pointer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Step<'d> {
    pub node: &'d Node,
    pub value: &'d Value,
}

/// Where a pointer leads in a document.
#[derive(Debug)]
pub(crate) struct Resolved<'d> {
    /// Every existing node from the root down (the root first).
    pub chain: Vec<Step<'d>>,
    /// The tokens that do not exist yet (empty when the target exists).
    pub missing: Vec<String>,
}

/// Why a pointer cannot be followed for editing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PathError {
    /// The value at this prefix comes from an alias or a merge key.
    Aliased(String),
    /// The value at this prefix is a scalar or a sequence index that does not exist.
    NotContainer(String),
}

/// Splits an RFC 6901 pointer into unescaped tokens.
pub(crate) fn tokens(pointer: &str) -> Vec<String> {
    pointer.split('/').skip(1).map(|t| t.replace("~1", "/").replace("~0", "~")).collect()
}

/// Whether a child's text lies where it belongs: inside its parent, after
/// its own key, and (in a sequence) after the item before it. An alias or a
/// merged entry carries the position of the anchored text elsewhere.
pub(crate) fn genuine(parent: &Node, kid: &Node, previous: Option<&Node>) -> bool {
    let inside = kid.start.index >= parent.start.index && kid.end.index <= parent.end.index;
    let after_key = kid.key.is_none_or(|k| k.index < kid.start.index);
    let after_previous = previous.is_none_or(|p| kid.start.index >= p.end.index);
    inside && after_key && after_previous
}

/// Follows `pointer` from the document root.
pub(crate) fn resolve<'d>(value: &'d Value, root: &'d Node, pointer: &str) -> Result<Resolved<'d>, PathError> {
    let tokens = tokens(pointer);
    let mut chain = vec![Step { node: root, value }];
    let mut at = String::new();
    for (i, token) in tokens.iter().enumerate() {
        let Some(&Step { node, value }) = chain.last() else {
            break;
        };
        at.push('/');
        at.push_str(&token.replace('~', "~0").replace('/', "~1"));
        let (kid_value, index) = match value {
            Value::Object(map) => match map.keys().position(|k| k == token).zip(map.get(token.as_str())) {
                Some((i, v)) => (v, i),
                None => {
                    return Ok(Resolved { chain, missing: tokens[i..].to_vec() });
                }
            },
            Value::Array(items) => match token.parse::<usize>().ok().filter(|i| *i < items.len()) {
                Some(i) => (&items[i], i),
                None => return Err(PathError::NotContainer(at)),
            },
            _ => return Err(PathError::NotContainer(at)),
        };
        let Some(kid) = node.kids.get(index) else {
            return Err(PathError::Aliased(at));
        };
        let previous = match value {
            Value::Array(_) if index > 0 => node.kids.get(index - 1),
            _ => None,
        };
        if !genuine(node, kid, previous) {
            return Err(PathError::Aliased(at));
        }
        chain.push(Step { node: kid, value: kid_value });
    }
    Ok(Resolved { chain, missing: Vec::new() })
}

/// The entries of a mapping (or items of a sequence) whose text is their own.
pub(crate) fn genuine_kids(node: &Node, sequence: bool) -> Vec<&Node> {
    let mut out: Vec<&Node> = Vec::new();
    for (i, kid) in node.kids.iter().enumerate() {
        let previous = if sequence && i > 0 { node.kids.get(i - 1) } else { None };
        if genuine(node, kid, previous) {
            out.push(kid);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{Limits, parse_stream};

    fn resolve_in(text: &str, pointer: &str) -> Result<usize, PathError> {
        let (docs, err) = parse_stream(text, &Limits::default());
        assert_eq!(err, None);
        let d = &docs[0];
        resolve(&d.value, &d.root, pointer).map(|r| r.missing.len())
    }

    #[test]
    fn follows_and_reports_missing_tokens() {
        let text = "a:\n  b: [1, {c: 2}]\n";
        assert_eq!(resolve_in(text, "/a/b/1/c"), Ok(0));
        assert_eq!(resolve_in(text, "/a/x/y"), Ok(2));
        assert_eq!(resolve_in(text, "/a/b/5"), Err(PathError::NotContainer("/a/b/5".into())));
        assert_eq!(tokens("/a~1b/c~0d"), vec!["a/b".to_owned(), "c~d".to_owned()]);
    }

    #[test]
    fn aliases_and_merges_are_refused() {
        let text = "base: &b {x: 1}\nuse: *b\nmerged:\n  <<: *b\n  z: 2\nsame: &s 1\nalso: *s\nlist: [&i {a: 1}, *i]\n";
        assert_eq!(resolve_in(text, "/base/x"), Ok(0));
        assert_eq!(resolve_in(text, "/use/x"), Err(PathError::Aliased("/use".into())));
        assert_eq!(resolve_in(text, "/merged/x"), Err(PathError::Aliased("/merged/x".into())));
        assert_eq!(resolve_in(text, "/merged/z"), Ok(0));
        assert_eq!(resolve_in(text, "/also"), Err(PathError::Aliased("/also".into())));
        assert_eq!(resolve_in(text, "/list/1/a"), Err(PathError::Aliased("/list/1".into())));
    }
}
