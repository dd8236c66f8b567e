//! `lifeguard simulate` on the fixtures of `tests/fixtures/simulate`, for
//! the simulate test binaries.

use std::path::PathBuf;

use serde_json::Value;

use super::Run;

/// The simulate fixtures' directory, where the runs start.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/simulate")
}

/// `lifeguard ARGS` in the fixtures' directory, without colour; never a panic.
pub fn lifeguard(args: &[&str]) -> Run {
    let r = super::lifeguard(&fixtures(), args, None, &[("NO_COLOR", Some("1"))]);
    r.assert_no_panic();
    r
}

/// The JSON entries of `lifeguard simulate --format json ARGS`, and its exit code.
pub fn simulate_json(args: &[&str]) -> (Vec<Value>, i32) {
    let mut all = vec!["simulate", "--format", "json"];
    all.extend_from_slice(args);
    let r = lifeguard(&all);
    match serde_json::from_str(&r.stdout) {
        Ok(Value::Array(items)) => (items, r.code),
        other => panic!("stdout is not a JSON array: {other:?}\n{}\n{}", r.stdout, r.stderr),
    }
}

/// The one JSON entry of a run (one container, one scenario), and its exit code.
pub fn one(args: &[&str]) -> (Value, i32) {
    let (mut items, code) = simulate_json(args);
    assert_eq!(items.len(), 1, "not one JSON entry: {items:?}");
    (items.remove(0), code)
}
