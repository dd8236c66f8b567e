//! Which CEL functions the exports call, and from which Kubernetes release
//! an API server admits them in a new expression: an export for an older
//! release must not use what its API server refuses to compile.
//!
//! The releases come from k8s.io/apiserver's base CEL environment
//! (`pkg/cel/environment/base.go`), where each library is added with the
//! version that introduced it. An API server checks a new expression
//! against its compatibility version, the previous minor
//! ([`KubeVersion::cel_environment`]), so a library added in 1.34 is
//! admitted from 1.35.

use std::collections::BTreeSet;

use thiserror::Error;

use super::kube_version::KubeVersion;

const fn v(minor: u32) -> KubeVersion {
    KubeVersion { major: 1, minor }
}

/// A library of the CEL environment, and the release that added it
/// (1.0: there from CEL's start in Kubernetes).
struct Library {
    name: &'static str,
    added: KubeVersion,
    functions: &'static [&'static str],
}

const LIBRARIES: &[Library] = &[
    Library {
        name: "CEL's standard definitions and macros",
        added: v(0),
        functions: &[
            "has",
            "size",
            "int",
            "uint",
            "double",
            "string",
            "bool",
            "bytes",
            "dyn",
            "type",
            "matches",
            "startsWith",
            "endsWith",
            "contains",
            "all",
            "exists",
            "exists_one",
            "map",
            "filter",
        ],
    },
    Library {
        name: "the strings extension (version 0)",
        added: v(0),
        functions: &[
            "charAt",
            "indexOf",
            "lastIndexOf",
            "lowerAscii",
            "replace",
            "split",
            "substring",
            "trim",
            "upperAscii",
        ],
    },
    Library { name: "Kubernetes' regex library", added: v(0), functions: &["find", "findAll"] },
    // indexOf and lastIndexOf have list overloads here, as old as the strings'.
    Library { name: "Kubernetes' list library", added: v(0), functions: &["sum", "min", "max", "isSorted"] },
    Library {
        name: "the strings extension (version 2)",
        added: v(29),
        functions: &["join", "format", "quote", "strings.quote"],
    },
    Library { name: "Kubernetes' quantity library", added: v(28), functions: &["quantity", "isQuantity"] },
    Library {
        name: "two-variable comprehensions",
        added: v(32),
        functions: &["transformList", "transformMap", "transformMapEntry"],
    },
    // MutatingAdmissionPolicy's own types, there wherever its API is.
    Library { name: "MutatingAdmissionPolicy's types", added: v(32), functions: &["Object", "JSONPatch", "escapeKey"] },
    Library {
        name: "the lists extension (version 3)",
        added: v(34),
        functions: &["slice", "flatten", "range", "distinct", "reverse", "sort", "sortBy", "first", "last"],
    },
    Library { name: "Kubernetes' list library (version 1)", added: v(37), functions: &["includes"] },
];

/// An expression that an API server of the target release would refuse.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CelError {
    /// A function of a library newer than the release's environment.
    #[error(
        "the export calls {function}() of {library}, which Kubernetes {needs} admits in new expressions, not {target}"
    )]
    TooNew {
        /// The function.
        function: String,
        /// Its library.
        library: &'static str,
        /// The first release whose API server admits it.
        needs: KubeVersion,
        /// The release asked for.
        target: KubeVersion,
    },
    /// A function this table does not know: it must be added (with the
    /// release its library came in) before an export may call it.
    #[error("the export calls {0}(), which lifeguard does not know the Kubernetes release of")]
    Unknown(String),
}

/// Checks that an API server of `target` admits every function the
/// `expressions` call.
pub fn check<'a>(expressions: impl IntoIterator<Item = &'a str>, target: KubeVersion) -> Result<(), CelError> {
    let environment = target.cel_environment();
    let mut called = BTreeSet::new();
    for expression in expressions {
        called.extend(functions(expression));
    }
    for function in called {
        let library = LIBRARIES
            .iter()
            .find(|l| l.functions.contains(&function.as_str()))
            .ok_or_else(|| CelError::Unknown(function.clone()))?;
        if library.added > environment {
            let needs = KubeVersion { major: library.added.major, minor: library.added.minor + 1 };
            return Err(CelError::TooNew { function, library: library.name, needs, target });
        }
    }
    Ok(())
}

/// The functions, macros and object types an expression calls (`name(`,
/// `.name(`, `Type{`), outside its string literals.
pub(crate) fn functions(expression: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let bytes = expression.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\'' || b == b'"' {
            i = after_literal(bytes, i);
            continue;
        }
        if b.is_ascii_alphabetic() || b == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let name = &expression[start..i];
            let mut next = i;
            // The exports' layout may put a line break between a call's name and its `(`.
            while next < bytes.len() && bytes[next].is_ascii_whitespace() {
                next += 1;
            }
            let follows = bytes.get(next);
            // `Object.spec.template{`: the type is the first word of the dotted name.
            let dotted_type = (name == "Object" || name == "JSONPatch") && follows == Some(&b'.');
            let after_dot = start > 0 && bytes[start - 1] == b'.';
            let keyword = matches!(name, "in" | "true" | "false" | "null");
            if !keyword && (follows == Some(&b'(') || dotted_type || (follows == Some(&b'{') && !after_dot)) {
                out.insert(name.to_owned());
            }
            continue;
        }
        i += 1;
    }
    out
}

/// The index after the string literal that starts at `start`.
fn after_literal(bytes: &[u8], start: usize) -> usize {
    let quote = bytes[start];
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b if b == quote => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_found_outside_string_literals() {
        let found = functions(
            "variables.containers.filter(c, c.name.matches('^a(b)$')).map(c, 'x(' + string(c.y) + \"z(\") + \
             [1].sum() + Object{spec: Object.spec{x: 1}} + JSONPatch{op: 'add'}",
        );
        let want = ["Object", "JSONPatch", "filter", "map", "matches", "string", "sum"];
        assert_eq!(found, want.iter().map(|s| (*s).to_owned()).collect());
    }

    #[test]
    fn an_escaped_quote_does_not_end_a_literal() {
        assert_eq!(functions(r"'it\'s f(' + g(1)"), ["g".to_owned()].into_iter().collect());
    }

    #[test]
    fn a_library_is_admitted_one_minor_after_it_was_added() {
        let join = "['a'].join(',')";
        assert_eq!(check([join], v(34)), Ok(()));
        let range = "lists.range(3)";
        let err = check([range], v(34)).expect_err("1.34 checks against 1.33");
        assert_eq!(
            err,
            CelError::TooNew {
                function: "range".into(),
                library: "the lists extension (version 3)",
                needs: v(35),
                target: v(34)
            }
        );
        assert!(err.to_string().contains("range() of the lists extension (version 3), which Kubernetes 1.35 admits"));
        assert_eq!(check([range], v(35)), Ok(()));
        assert_eq!(check(["frobnicate(1)"], v(37)), Err(CelError::Unknown("frobnicate".into())));
    }
}
