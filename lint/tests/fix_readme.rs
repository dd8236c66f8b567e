//! docs/lint.md's hand-checked `lifeguard fix --diff` example is what the
//! binary prints for `lint/examples/gpu-model-server.yaml`.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn readme_fix_example_matches_the_binary() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("../docs/lint.md")).expect("docs/lint.md");
    let start = readme.find("<!-- fix-example").expect("docs/lint.md has a fix-example block");
    let section =
        &readme[start..readme.find("<!-- /fix-example -->").expect("docs/lint.md closes the fix-example block")];
    let start = section.find("```diff\n").expect("a diff block") + "```diff\n".len();
    let block = &section[start..start + section[start..].find("```").expect("closed block")];
    let out = Command::new(env!("CARGO_BIN_EXE_lifeguard"))
        .args(["fix", "--diff", "gpu-model-server.yaml"])
        .current_dir(root.join("examples"))
        .output()
        .expect("run lifeguard");
    assert_eq!(out.status.code(), Some(1));
    let printed = String::from_utf8_lossy(&out.stdout);
    assert_eq!(block, printed, "the fix example of docs/lint.md is stale");
    // The values docs/lint.md explains.
    for line in [
        "+            failureThreshold: 49",
        "+      terminationGracePeriodSeconds: 45",
        "+                seconds: 25",
    ] {
        assert!(printed.lines().any(|l| l == line), "{line}");
    }
    // Liveness' initialDelaySeconds is left as written, so a re-apply converges.
    assert!(!printed.contains("initialDelaySeconds"), "{printed}");
}
