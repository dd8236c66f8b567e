//! The README's example policy is a valid policy that does what its
//! comments say.

use lifeguard_e2e::repo_root;
use policies::policy::AdmissionMode;
use policies::{Policy, Severity};

fn example() -> String {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).expect("README.md");
    let start = readme.find("<!-- policy-example").expect("README has a policy-example block");
    let end = readme.find("<!-- /policy-example -->").expect("README closes the policy-example block");
    let block = &readme[start..end];
    let body = block.split_once("```yaml\n").map(|(_, b)| b).expect("yaml fence");
    body.split_once("```").map(|(b, _)| b.to_owned()).expect("closing fence")
}

#[test]
fn readme_example_policy_loads() {
    let policy = Policy::load(&example(), "README.md").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(policy.name(), Some("inference-platform"));
    assert_eq!(policy.settings.gpu_boot_seconds, 1200);
    assert!(policy.settings.require_startup_probe_for_gpu, "inherited from gpu-serving");
    assert!(!policy.is_enabled("exec-probe"));
    assert_eq!(policy.severity_override("liveness-too-aggressive"), Some(Severity::Error));
    assert_eq!(policy.custom_rule_names().collect::<Vec<_>>(), ["memory-limit-missing"]);
    assert_eq!(policy.to_file().exemptions.len(), 3);
    assert_eq!(policy.mode, AdmissionMode::Enforce);
}
