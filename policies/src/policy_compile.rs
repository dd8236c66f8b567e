//! A policy compiled against the rules' registry: the constructors of
//! [`Policy`] live here, above the rules, and hand the built-in rules'
//! names down to the policy's checks, so the policy itself never names the
//! rules that read it.

use serde_json::Value;

use crate::policy::PolicyError;
use crate::policy::compiled::{Policy, compile, file_with};
use crate::policy::error::Invalid;
use crate::policy::file::PolicyFile;
use crate::policy::load::{base_of, locate, pack_value, parse_one, typed};
use crate::policy::merge::merge_policy;
use crate::policy::packs::{find_pack, pack_names};
use crate::policy::validate::BuiltInRules;
use crate::rules::RULES;
use crate::settings::Settings;

/// The built-in rules' names, in the registry's order.
fn names() -> Vec<&'static str> {
    RULES.iter().map(|r| r.name).collect()
}

fn built_in<'a>(names: &'a [&'static str]) -> BuiltInRules<'a> {
    BuiltInRules::new(names)
}

impl Default for Policy {
    /// The `default` pack: built-in parameters, every rule on, deny at `error`.
    fn default() -> Self {
        // The defaults are covered by a unit test, so this cannot fail in practice;
        // an empty policy would still be safe (rules just match nothing).
        Policy::new(Settings::default()).unwrap_or_else(|_| Policy::empty(Settings::default()))
    }
}

impl Policy {
    /// Validates and compiles parameters, with every rule on and no
    /// exemptions or custom rules.
    pub fn new(settings: Settings) -> Result<Policy, PolicyError> {
        Policy::from_file(file_with(settings), "")
    }

    /// Validates and compiles a policy file read by other means (`extends`
    /// must be unset: merging packs is [`Policy::load`]'s job). `origin`
    /// names the policy in errors.
    pub fn from_file(file: PolicyFile, origin: &str) -> Result<Policy, PolicyError> {
        if file.extends.is_some() {
            return Err(Invalid::at("/extends", "resolve `extends` with Policy::load").unlocated(origin));
        }
        compile(file, &[], origin, built_in(&names())).map_err(|e| e.unlocated(origin))
    }

    /// Whether `name` is a rule this policy knows (built-in or custom).
    pub fn knows_rule(&self, name: &str) -> bool {
        crate::rules::find(name).is_some() || self.custom_rule_names().any(|c| c == name)
    }

    /// Parses, validates and compiles a policy file's text (YAML or JSON).
    /// `name` names the file in errors. Without `extends`, the file starts
    /// from the `default` pack.
    pub fn load(text: &str, name: &str) -> Result<Policy, PolicyError> {
        let names = names();
        let (doc, own) = parse_one(text, name)?;
        if let Some(pack) = own.extends.as_deref().filter(|p| find_pack(p).is_none()) {
            let e = Invalid::at("/extends", format!("unknown pack {pack:?}; built-in packs: {}", pack_names()));
            return Err(locate(&doc, name, e));
        }
        let base = base_of(own.extends.as_deref(), false, 0)?.unwrap_or(Value::Null);
        let base_file: PolicyFile = typed(&base).map_err(|e| e.unlocated(name))?;
        let inherited: Vec<String> = base_file.custom_rules.iter().map(|r| r.name.clone()).collect();
        // The file's own values are checked on their own, so an error points
        // at the line that holds it; the merged policy is compiled after.
        compile(PolicyFile { extends: None, ..own }, &inherited, name, built_in(&names))
            .map_err(|e| locate(&doc, name, e))?;
        let merged: PolicyFile = typed(&merge_policy(base, doc.value)).map_err(|e| e.unlocated(name))?;
        compile(merged, &[], name, built_in(&names)).map_err(|e| e.unlocated(name))
    }

    /// A built-in pack by name (`default`, `strict`, `gpu-serving`).
    pub fn pack(name: &str) -> Result<Policy, PolicyError> {
        let origin = format!("pack {name}");
        let value = pack_value(name, 0)?;
        let file: PolicyFile = typed(&value).map_err(|e| e.unlocated(&origin))?;
        compile(file, &[], &origin, built_in(&names())).map_err(|e| e.unlocated(&origin))
    }
}
