//! Every way a policy file can be wrong gets one clear error naming the
//! file, the line and column, and the offending key.

use policies::Policy;

const HEAD: &str = "apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\n";

fn error(text: &str) -> String {
    match Policy::load(text, "policy.yaml") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn error_after_head(rest: &str) -> String {
    error(&format!("{HEAD}{rest}"))
}

#[test]
fn unknown_keys_name_the_key_and_suggest_the_closest() {
    assert_eq!(
        error_after_head("paramters: {}\n"),
        "policy.yaml:3:1: paramters: unknown key `paramters`; did you mean `parameters`?"
    );
    assert_eq!(
        error_after_head("parameters:\n  gpuBotSeconds: 900\n"),
        "policy.yaml:4:3: parameters.gpuBotSeconds: unknown key `gpuBotSeconds`; did you mean `gpuBootSeconds`?"
    );
    assert_eq!(
        error_after_head("rules:\n  exec-probe: {enable: false}\n"),
        "policy.yaml:4:16: rules.exec-probe.enable: unknown key `enable`; did you mean `enabled`?"
    );
    let far = error_after_head("colour: blue\n");
    assert!(far.starts_with("policy.yaml:3:1: colour: unknown key `colour`; expected one of `apiVersion`"), "{far}");
}

#[test]
fn wrong_types_name_the_key() {
    assert_eq!(
        error_after_head("parameters:\n  gpuBootSeconds: ten\n"),
        "policy.yaml:4:3: parameters.gpuBootSeconds: expected a whole number, got the string \"ten\""
    );
    assert_eq!(
        error_after_head("parameters:\n  slowBootImages: vllm\n"),
        "policy.yaml:4:3: parameters.slowBootImages: expected a list, got the string \"vllm\""
    );
    assert_eq!(
        error_after_head("rules:\n  exec-probe: {severity: fatal}\n"),
        "policy.yaml:4:16: rules.exec-probe.severity: fatal is not a known value; use info, warning or error"
    );
    assert_eq!(
        error_after_head("denySeverity: 3\n"),
        "policy.yaml:3:1: denySeverity: expected string or map, got the number 3"
    );
}

#[test]
fn out_of_range_numbers_name_the_key() {
    assert_eq!(
        error_after_head("parameters:\n  startupPeriodSeconds: 0\n"),
        "policy.yaml:4:3: parameters.startupPeriodSeconds: must be at least 1, got 0"
    );
    // A bridge of a day or more would read as a sleep that never ends.
    assert_eq!(
        error_after_head("parameters:\n  prestopBridgeSeconds: 86400\n"),
        "policy.yaml:4:3: parameters.prestopBridgeSeconds: must be less than 86400 (a day), got 86400"
    );
}

#[test]
fn unknown_rule_names_are_errors_wherever_rules_are_named() {
    assert_eq!(
        error_after_head("rules:\n  exec-probes: {enabled: false}\n"),
        "policy.yaml:4:3: rules.exec-probes: unknown rule \"exec-probes\"; did you mean \"exec-probe\"?"
    );
    assert_eq!(
        error_after_head("rules:\n  no-such-thing: {enabled: false}\n"),
        "policy.yaml:4:3: rules.no-such-thing: unknown rule \"no-such-thing\"; `lifeguard rules` lists the built-in rules, and custom rules must be defined under customRules"
    );
    assert_eq!(
        error_after_head(
            "exemptions:\n- reason: r\n  namespaces: [a]\n  rules: [exec-probe, liveness-too-agressive]\n"
        ),
        "policy.yaml:6:23: exemptions[0].rules[1]: unknown rule \"liveness-too-agressive\"; did you mean \"liveness-too-aggressive\"?"
    );
}

#[test]
fn invalid_regexes_point_at_the_pattern() {
    assert_eq!(
        error_after_head("parameters:\n  dependencyPaths: ['^/ok$', '(']\n"),
        "policy.yaml:4:30: parameters.dependencyPaths[1]: invalid regex \"(\": unclosed group"
    );
    assert_eq!(
        error_after_head(
            "customRules:\n- name: tag\n  severity: error\n  message: m\n  path: $.image\n  when: {matches: '[a-'}\n"
        ),
        "policy.yaml:8:10: customRules[0].when.matches: invalid regex \"[a-\": unclosed character class"
    );
}

#[test]
fn invalid_globs_point_at_the_pattern() {
    assert_eq!(
        error_after_head("exemptions:\n- reason: r\n  names: ['web-[']\n"),
        "policy.yaml:5:11: exemptions[0].names[0]: invalid glob \"web-[\": unclosed character class; missing ']'"
    );
}

#[test]
fn invalid_jsonpath_points_at_the_path() {
    assert_eq!(
        error_after_head("customRules:\n- name: tag\n  severity: error\n  message: m\n  path: $.[\n  when: exists\n"),
        "policy.yaml:7:3: customRules[0].path: invalid JSONPath \"$.[\": expected wildcard_selector or ALPHA at character 3"
    );
}

#[test]
fn custom_rule_mistakes() {
    let rule = |name: &str, when: &str| {
        format!("customRules:\n- name: {name}\n  severity: warning\n  message: m\n  path: $.image\n  when: {when}\n")
    };
    assert_eq!(
        error_after_head(&rule("exec-probe", "exists")),
        "policy.yaml:4:3: customRules[0].name: \"exec-probe\" is a built-in rule; give the custom rule its own name"
    );
    assert_eq!(
        error_after_head(&rule("Tag_Pinned", "exists")),
        "policy.yaml:4:3: customRules[0].name: \"Tag_Pinned\" is not a rule name: use lower-case words and digits joined by `-`"
    );
    assert_eq!(
        error_after_head(&rule("tag", "present")),
        "policy.yaml:8:3: customRules[0].when: present is not a known value; use exists, absent, equals, matches, lt, le, gt, ge or oneOf"
    );
    assert_eq!(
        error_after_head(&rule("tag", "{lt: five}")),
        "policy.yaml:8:10: customRules[0].when.lt: expected a number, got the string \"five\""
    );
    let twice = format!("{}{}", rule("tag", "exists"), &rule("tag", "absent")["customRules:\n".len()..]);
    assert_eq!(error_after_head(&twice), "policy.yaml:9:3: customRules[1].name: custom rule \"tag\" is defined twice");
}

#[test]
fn exemption_mistakes() {
    assert_eq!(
        error_after_head("exemptions:\n- namespaces: [kube-system]\n"),
        "policy.yaml:4:3: exemptions[0]: missing field `reason`"
    );
    assert_eq!(
        error_after_head("exemptions:\n- reason: ''\n  namespaces: [kube-system]\n"),
        "policy.yaml:4:3: exemptions[0].reason: an exemption needs a reason that reviewers can read"
    );
    assert_eq!(
        error_after_head("exemptions:\n- reason: everywhere\n  rules: [exec-probe]\n"),
        "policy.yaml:4:3: exemptions[0]: an exemption needs namespaces, names, selector or containers; to turn a rule off everywhere, set rules.NAME.enabled: false"
    );
    assert_eq!(
        error_after_head(
            "exemptions:\n- reason: r\n  selector:\n    matchExpressions:\n    - {key: tier, operator: In}\n"
        ),
        "policy.yaml:7:7: exemptions[0].selector.matchExpressions[0].values: operator In needs at least one value"
    );
}

#[test]
fn header_mistakes() {
    assert_eq!(
        error("apiVersion: lifeguard.dev/v1\nkind: Policy\n"),
        "policy.yaml:1:1: apiVersion: must be \"lifeguard.dev/v1alpha1\", got \"lifeguard.dev/v1\""
    );
    assert_eq!(
        error("apiVersion: lifeguard.dev/v1alpha1\nkind: Deployment\n"),
        "policy.yaml:2:1: kind: must be \"Policy\", got \"Deployment\""
    );
    assert_eq!(error("kind: Policy\n"), "policy.yaml:1:1: missing field `apiVersion`");
    assert_eq!(
        error_after_head("extends: gpu\n"),
        "policy.yaml:3:1: extends: unknown pack \"gpu\"; built-in packs: default, strict, gpu-serving"
    );
}

#[test]
fn syntax_and_shape_mistakes() {
    assert_eq!(
        error("apiVersion: [\n"),
        "policy.yaml:1:14: while parsing a node, did not find expected node content; the input ends here"
    );
    assert_eq!(error(&format!("{HEAD}---\n{HEAD}")), "policy.yaml:3:1: a policy file holds one document");
    assert_eq!(
        error("# nothing\n"),
        "policy.yaml: empty policy: expected `apiVersion: lifeguard.dev/v1alpha1` and `kind: Policy`"
    );
    assert_eq!(error("- a\n"), "policy.yaml:1:1: a policy is a mapping (apiVersion, kind, parameters, rules, ...)");
}

#[test]
fn json_policies_report_lines_too() {
    let text = "{\n  \"apiVersion\": \"lifeguard.dev/v1alpha1\",\n  \"kind\": \"Policy\",\n  \"parameters\": {\"gpuBootSeconds\": \"ten\"}\n}\n";
    assert_eq!(
        error(text),
        "policy.yaml:4:18: parameters.gpuBootSeconds: expected a whole number, got the string \"ten\""
    );
}
