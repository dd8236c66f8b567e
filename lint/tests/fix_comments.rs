//! Every comment of a file survives `lifeguard fix`: generated pod specs
//! (the engine's fix generator) are written as YAML with a comment above
//! every entry and after every scalar, fixed, and each comment line of the
//! input must be a line of the output (same text, trimmed), each trailing
//! comment somewhere in it. A comment says why a value was chosen; a fix
//! that drops it loses the reason.

#[path = "../../policies/tests/fix_gen/mod.rs"]
#[allow(dead_code)]
mod fix_gen;

use std::collections::HashMap;

use lifeguard::documents::parse_text;
use lifeguard::fix::fix_text;
use lifeguard::input::Limits;
use policies::{Batch, Policy, Settings};
use proptest::prelude::*;
use serde_json::Value;

/// YAML for `v` with a numbered comment line above every mapping entry and
/// sequence item, and a numbered comment after every scalar. `n` counts them.
fn commented(v: &Value, indent: usize, n: &mut usize, out: &mut Vec<String>) {
    let pad = " ".repeat(indent);
    let note = |out: &mut Vec<String>, n: &mut usize| {
        *n += 1;
        out.push(format!("{pad}# note {n}: keep this"));
    };
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                note(out, n);
                let key = k;
                match v {
                    Value::Object(m) if !m.is_empty() => {
                        out.push(format!("{pad}{key}:"));
                        commented(v, indent + 2, n, out);
                    }
                    Value::Array(a) if !a.is_empty() => {
                        out.push(format!("{pad}{key}:"));
                        commented(v, indent, n, out);
                    }
                    _ => {
                        *n += 1;
                        out.push(format!("{pad}{key}: {v}  # value {n}"));
                    }
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                note(out, n);
                match item {
                    Value::Object(m) if !m.is_empty() => {
                        let mut lines = Vec::new();
                        commented(item, indent + 2, n, &mut lines);
                        // The first entry's comment goes above the dash.
                        let first = lines.iter().position(|l| !l.trim_start().starts_with('#')).unwrap_or(0);
                        for (i, line) in lines.into_iter().enumerate() {
                            if i == first {
                                out.push(format!("{pad}- {}", &line[indent + 2..]));
                            } else {
                                out.push(line);
                            }
                        }
                    }
                    _ => {
                        *n += 1;
                        out.push(format!("{pad}- {item}  # value {n}"));
                    }
                }
            }
        }
        other => out.push(format!("{pad}{other}")),
    }
}

/// Trimmed comment lines of a text, counted.
fn comment_lines(text: &str) -> HashMap<&str, usize> {
    let mut out = HashMap::new();
    for line in text.lines().map(str::trim).filter(|l| l.starts_with('#')) {
        *out.entry(line).or_default() += 1;
    }
    out
}

/// Every comment line of `before` that `after` lacks, and every trailing
/// comment (`# value N`) that is nowhere in `after`.
fn lost_comments(before: &str, after: &str) -> Vec<String> {
    let kept = comment_lines(after);
    let mut lost: Vec<String> = comment_lines(before)
        .into_iter()
        .filter(|(line, n)| kept.get(line).copied().unwrap_or(0) < *n)
        .map(|(line, _)| line.to_owned())
        .collect();
    for line in before.lines().filter(|l| !l.trim_start().starts_with('#')) {
        if let Some(at) = line.find("  # ") {
            let comment = &line[at + 2..];
            if !after.contains(comment) {
                lost.push(comment.to_owned());
            }
        }
    }
    lost.sort();
    lost
}

fn fix(text: &str, policy: &Policy) -> String {
    let limits = Limits::default();
    let parse = parse_text("gen.yaml", text, &limits);
    let out = fix_text("gen.yaml", text, parse, &Batch::default(), policy, None, &limits);
    assert!(out.errors.is_empty(), "{:?}\n{text}", out.errors);
    out.fixed
}

static POLICIES: std::sync::LazyLock<[Policy; 2]> = std::sync::LazyLock::new(|| {
    let all = Settings { add_prestop_bridge: true, fix_info_findings: true, ..Settings::default() };
    [Policy::default(), Policy::new(all).expect("valid policy")]
});

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn every_comment_line_survives_on_generated_specs(object in fix_gen::object_strategy(), which in 0usize..2) {
        let mut lines = Vec::new();
        commented(&object, 0, &mut 0, &mut lines);
        let text = lines.join("\n") + "\n";
        let fixed = fix(&text, &POLICIES[which]);
        let lost = lost_comments(&text, &fixed);
        prop_assert!(lost.is_empty(), "lost {lost:?}\ninput:\n{text}\noutput:\n{fixed}");
    }
}

#[test]
fn the_comment_above_an_exec_sleep_survives_the_native_rewrite() {
    let text = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
        - name: api
          image: example/api:2
          lifecycle:
            preStop:
              exec:
                # 60 s: the cloud load balancer takes up to 55 s to deregister
                command: [\"sleep\", \"60\"]
";
    let fixed = fix(text, &Policy::default());
    assert_ne!(fixed, text, "the long sleep is an error and gets fixed");
    assert!(fixed.contains("sleep:\n"), "{fixed}");
    assert_eq!(lost_comments(text, &fixed), Vec::<String>::new(), "{fixed}");
}
