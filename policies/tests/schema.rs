//! The committed JSON Schema of the policy file is the one the Rust types
//! generate (`LIFEGUARD_BLESS=1 cargo test -p lifeguard-policies --test schema`
//! rewrites it).

// The engine may not touch files (clippy.toml); this test compares and
// rewrites a committed file, which is the point of it.
#![allow(clippy::disallowed_methods)]

use std::path::PathBuf;

#[test]
fn committed_schema_is_current() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("schema/policy.schema.json");
    let generated = policies::policy::json_schema();
    if std::env::var_os("LIFEGUARD_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().expect("schema dir")).expect("create schema dir");
        std::fs::write(&path, &generated).expect("write schema");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(committed == generated, "{} is stale: rerun with LIFEGUARD_BLESS=1", path.display());
}

#[test]
fn schema_describes_the_file_format() {
    let schema: serde_json::Value = serde_json::from_str(&policies::policy::json_schema()).expect("JSON");
    let props = &schema["properties"];
    for key in ["apiVersion", "kind", "extends", "denySeverity", "parameters", "rules", "exemptions", "customRules"] {
        assert!(props.get(key).is_some(), "{key} missing from the schema");
    }
    assert_eq!(schema["additionalProperties"], serde_json::json!(false));
    assert_eq!(props["apiVersion"]["const"], "lifeguard.dev/v1alpha1");
}
