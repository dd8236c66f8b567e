//! Flags `lint` and `fix` share: which rules run (`--select`, `--ignore`),
//! which files are walked (`--exclude`), how much is said (`--quiet`,
//! `--verbose`) and
//! colour (`--color`); and `--fail-on`, which `audit` takes too. Rule and
//! pack names feed shell completion.

use clap::ValueEnum;
use clap::builder::{PossibleValue, TypedValueParser};
use policies::{Policy, Severity};

/// The flags `lint` and `fix` share.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RunArgs {
    /// Run only these rules (repeatable or comma-separated, e.g.
    /// `--select probe-endpoint-reused,exec-probe`), for a quick run without a
    /// policy file; a rule the policy turns off runs when selected.
    #[arg(long, value_name = "RULE", value_delimiter = ',', value_parser = RULE_NAME, hide_possible_values = true)]
    pub select: Vec<String>,
    /// Do not run these rules (repeatable or comma-separated); wins over `--select`.
    #[arg(long, value_name = "RULE", value_delimiter = ',', value_parser = RULE_NAME, hide_possible_values = true)]
    pub ignore: Vec<String>,
    /// Skip files and directories whose path matches this glob (repeatable),
    /// e.g. `--exclude 'vendor/**' --exclude '*.generated.yaml'`; a glob
    /// without `/` matches a name at any depth.
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Accept a stdin (`-`) that holds no document. Without it an empty
    /// stdin is an input error (exit 2): `helm template ... | lifeguard lint -`
    /// where helm failed must not pass as a clean result.
    #[arg(long)]
    pub allow_empty: bool,
    /// Print only the findings (and input errors): no summary line, no notes.
    #[arg(long, short)]
    pub quiet: bool,
    /// Also say, on stderr, which policy each file is linted with (and where it was found).
    #[arg(long, short, conflicts_with = "quiet")]
    pub verbose: bool,
    /// When to colour the output: `auto` colours a terminal unless
    /// `NO_COLOR` is set, or anything when `CLICOLOR_FORCE` or `FORCE_COLOR` is.
    #[arg(long, value_enum, default_value_t = ColorWhen::Auto, value_name = "WHEN")]
    pub color: ColorWhen,
    /// How Kustomize directories and Helm charts are made into manifests.
    #[command(flatten)]
    pub render: RenderArgs,
}

/// The flags that say how a Kustomize directory is built and a Helm chart
/// rendered (`lint`, `fix` and `simulate` alike).
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Kustomize and Helm")]
pub struct RenderArgs {
    /// Build this Kustomize directory, as `kubectl apply -k DIR` would
    /// (repeatable). A directory named as a path is walked instead: every
    /// kustomization in it that no other builds on is built.
    #[arg(short = 'k', long = "kustomize", value_name = "DIR")]
    pub kustomize: Vec<String>,
    /// Helm charts: a values file for `helm template` (repeatable, in order).
    #[arg(long, value_name = "FILE")]
    pub values: Vec<String>,
    /// Helm charts: a `--set` value for `helm template` (repeatable, in order).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Helm charts: the release name.
    #[arg(long, value_name = "NAME", default_value = "release")]
    pub release_name: String,
    /// Helm charts: the release namespace (`helm template --namespace`).
    #[arg(long, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    /// Helm charts: the Kubernetes version templates see (`helm template --kube-version`).
    #[arg(long, value_name = "VERSION")]
    pub kube_version: Option<String>,
}

impl RenderArgs {
    /// How charts are rendered.
    pub fn options(&self) -> crate::input::render::RenderOptions {
        crate::input::render::RenderOptions {
            helm: crate::input::render::HelmOptions {
                values: self.values.clone(),
                set: self.set.clone(),
                release: self.release_name.clone(),
                namespace: self.namespace.clone(),
                kube_version: self.kube_version.clone(),
            },
        }
    }
}

/// Sets the colour choice every later stream follows.
pub(crate) fn set_color(run: &RunArgs) {
    run.color.choice(|name| std::env::var(name).ok()).write_global();
}

/// The lowest severity that makes `lint` exit 1 (and `fix`, where a change
/// also does, except under `never`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// Fail on errors only.
    Error,
    /// Fail on warnings and errors.
    Warning,
    /// Fail on any finding.
    Info,
    /// Never fail because of findings (input errors still exit 2).
    Never,
}

impl FailOn {
    /// The minimum failing severity; `None` for `never`.
    pub fn severity(self) -> Option<Severity> {
        match self {
            FailOn::Error => Some(Severity::Error),
            FailOn::Warning => Some(Severity::Warning),
            FailOn::Info => Some(Severity::Info),
            FailOn::Never => None,
        }
    }
}

/// `--color`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    /// Colour a terminal; `NO_COLOR` turns it off, `CLICOLOR_FORCE` and `FORCE_COLOR` on.
    #[default]
    Auto,
    /// Always colour, even into a pipe or a file.
    Always,
    /// Never colour.
    Never,
}

impl ColorWhen {
    /// The stream colour choice, from the flag and the environment (`get`
    /// reads a variable; tests pass their own).
    pub fn choice(self, get: impl Fn(&str) -> Option<String>) -> anstream::ColorChoice {
        let set = |name: &str| get(name).is_some_and(|v| !v.is_empty());
        match self {
            ColorWhen::Always => anstream::ColorChoice::Always,
            ColorWhen::Never => anstream::ColorChoice::Never,
            // NO_COLOR wins over the variables that force colour (no-color.org:
            // only an explicit flag overrides it); anstream already honours
            // NO_COLOR, CLICOLOR and CLICOLOR_FORCE, not FORCE_COLOR.
            ColorWhen::Auto if !set("NO_COLOR") && set("FORCE_COLOR") => anstream::ColorChoice::Always,
            ColorWhen::Auto => anstream::ColorChoice::Auto,
        }
    }
}

/// A value parser for names completion can offer, where any string still
/// parses: a policy's custom rules are known only once it is loaded, and a
/// policy may be a file as well as a pack.
#[derive(Debug, Clone, Copy)]
pub struct Offering(fn() -> Vec<PossibleValue>);

impl TypedValueParser for Offering {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new((self.0)().into_iter()))
    }
}

fn rule_names() -> Vec<PossibleValue> {
    policies::rules::RULES.iter().map(|r| PossibleValue::new(r.name).help(r.summary)).collect()
}

/// A rule name; the built-in names are offered.
pub const RULE_NAME: Offering = Offering(rule_names);

/// `lint`'s `--format`: the values of [`crate::report::Format`]. `audit`'s
/// report objects are not among them (their results name the cluster's
/// workloads by uid, which files do not have); asked for here, they are
/// refused with where they are.
#[derive(Debug, Clone, Copy)]
pub struct LintFormat;

impl TypedValueParser for LintFormat {
    type Value = crate::report::Format;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<crate::report::Format, clap::Error> {
        let parsed = clap::builder::EnumValueParser::<crate::report::Format>::new().parse_ref(cmd, arg, value);
        parsed.map_err(|e| {
            let audit_only = value.to_str().and_then(|v| crate::report::policy_report::ReportKind::from_str(v, false).ok());
            match audit_only.and_then(|k| k.to_possible_value()) {
                Some(kind) => clap::Error::raw(
                    clap::error::ErrorKind::InvalidValue,
                    format!(
                        "--format {name} is a format of `lifeguard audit` only: its reports name the cluster's workloads by uid, which files do not have; run `lifeguard audit --format {name}`\n",
                        name = kind.get_name()
                    ),
                )
                .with_cmd(cmd),
                None => e,
            }
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(crate::report::Format::value_variants().iter().filter_map(ValueEnum::to_possible_value)))
    }
}

/// The `explain` topic that is not a rule.
pub const SIMULATE_TOPIC: &str = "simulate";

/// What `explain` takes: a rule name, or `simulate` (the simulation's model).
pub const EXPLAIN_TOPIC: Offering = Offering(|| {
    let simulate = PossibleValue::new(SIMULATE_TOPIC).help("the kubelet model of `lifeguard simulate`");
    rule_names().into_iter().chain([simulate]).collect()
});

/// A policy file or pack name; pack names are offered.
pub const POLICY_NAME: Offering =
    Offering(|| policies::policy::PACKS.iter().map(|p| PossibleValue::new(p.name)).collect());

/// The closest of `candidates` to a mistyped `word`, if one is close enough
/// to be what was meant.
pub fn did_you_mean<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .map(|c| (strsim::levenshtein(word, c), c))
        .filter(|(d, c)| *d <= 3.min(c.len() / 3 + 1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// `unknown rule "x"; did you mean "y"?`, or the pointer to `lifeguard rules`.
pub fn unknown_rule(name: &str, known: &[&str]) -> String {
    match did_you_mean(name, known.iter().copied()) {
        Some(best) => format!("unknown rule {name:?}; did you mean {best:?}?"),
        None => format!("unknown rule {name:?}; `lifeguard rules` lists them"),
    }
}

/// Applies `--select` and `--ignore` to the policy: the same switches a
/// policy file's `rules:` holds, so the engine still decides every finding.
/// A custom rule another policy of the run defines is not this policy's to
/// switch: where it is unknown, it is left alone ([`unknown_selected`]
/// refuses a name no policy in force knows).
pub fn select_rules(policy: Policy, select: &[String], ignore: &[String]) -> Result<Policy, String> {
    if select.is_empty() && ignore.is_empty() {
        return Ok(policy);
    }
    let mut known: Vec<&str> = policies::rules::RULES.iter().map(|r| r.name).collect();
    known.extend(policy.custom_rule_names());
    let known: Vec<String> = known.into_iter().map(str::to_owned).collect();
    let mut file = policy.to_file();
    for rule in &known {
        let runs = (select.is_empty() && policy.is_enabled(rule) || select.contains(rule)) && !ignore.contains(rule);
        let entry = file.rules.entry(rule.clone()).or_default();
        entry.enabled = Some(runs);
    }
    Policy::from_file(file, &policy.origin).map_err(|e| e.to_string())
}

/// The usage error for a `--select` or `--ignore` name that no policy in
/// force knows (a built-in rule or a custom rule of any of them), with a
/// suggestion; `None` when every name is known somewhere.
pub fn unknown_selected<'p>(
    policies: impl IntoIterator<Item = &'p Policy>,
    select: &[String],
    ignore: &[String],
) -> Option<String> {
    let mut known: Vec<&str> = policies::rules::RULES.iter().map(|r| r.name).collect();
    for policy in policies {
        known.extend(policy.custom_rule_names());
    }
    let mut named = select.iter().map(|n| ("--select", n)).chain(ignore.iter().map(|n| ("--ignore", n)));
    named
        .find(|(_, name)| !known.contains(&name.as_str()))
        .map(|(flag, name)| format!("{flag}: {}", unknown_rule(name, &known)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
    }

    #[test]
    fn force_color_forces_unless_no_color_is_set() {
        use anstream::ColorChoice::{Always, Auto, Never};
        assert_eq!(ColorWhen::Auto.choice(env(&[])), Auto);
        assert_eq!(ColorWhen::Auto.choice(env(&[("FORCE_COLOR", "1")])), Always);
        assert_eq!(ColorWhen::Auto.choice(env(&[("FORCE_COLOR", "")])), Auto);
        assert_eq!(ColorWhen::Auto.choice(env(&[("FORCE_COLOR", "1"), ("NO_COLOR", "1")])), Auto);
        assert_eq!(ColorWhen::Never.choice(env(&[("FORCE_COLOR", "1")])), Never);
        assert_eq!(ColorWhen::Always.choice(env(&[("NO_COLOR", "1")])), Always);
    }

    #[test]
    fn select_runs_only_the_named_rules_and_ignore_wins() {
        let policy = Policy::default();
        let only = select_rules(policy.clone(), &["exec-probe".into()], &[]).expect("valid");
        assert!(only.is_enabled("exec-probe"));
        assert!(!only.is_enabled("probe-endpoint-reused"));
        let both = select_rules(policy.clone(), &["exec-probe".into()], &["exec-probe".into()]).expect("valid");
        assert!(!both.is_enabled("exec-probe"));
        let ignored = select_rules(policy, &[], &["exec-probe".into()]).expect("valid");
        assert!(!ignored.is_enabled("exec-probe"));
        assert!(ignored.is_enabled("probe-endpoint-reused"));
    }

    #[test]
    fn an_unknown_rule_gets_a_suggestion() {
        let default = Policy::default();
        let err = unknown_selected([&default], &["exec-prob".into()], &[]).expect("unknown");
        assert_eq!(err, "--select: unknown rule \"exec-prob\"; did you mean \"exec-probe\"?");
        let err = unknown_selected([&default], &[], &["zzz".into()]).expect("unknown");
        assert!(err.starts_with("--ignore: unknown rule \"zzz\"; `lifeguard rules`"), "{err}");
        assert_eq!(unknown_selected([&default], &["exec-probe".into()], &[]), None);
    }
}
