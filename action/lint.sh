#!/usr/bin/env bash
# The lint step of the lifeguard GitHub Action (action.yml at the
# repository root). Inputs come as environment variables, never spliced
# into the script, so a path or an argument cannot run as a command:
#
#   LG_PATHS       manifests to lint: files, directories, quoted globs (whitespace-separated)
#   LG_CHARTS      chart directories to render with `helm template` (whitespace-separated)
#   LG_RELEASE     the release name given to `helm template`
#   LG_HELM_ARGS   more `helm template` arguments (`--values ci.yaml`), whitespace-separated
#   LG_POLICY      --policy (empty: each file's nearest .lifeguard.yaml, else the default pack)
#   LG_FAIL_ON     --fail-on (empty: the policy's denySeverity)
#   LG_BASELINE    --baseline (empty: none): only findings not in it fail
#   LG_SARIF       where the SARIF report goes
#   LG_ANNOTATIONS `true`: findings as GitHub annotations; else as text in the log
#
# Each target (the paths, then each chart) is linted twice: once to SARIF
# with --fail-on never, once as annotations (or text) with --fail-on, whose
# exit code is the step's. The SARIF files are merged into one run, since
# code scanning takes one run per tool and category.
set -euo pipefail
set -f # globs are lifeguard's to expand (it honours .gitignore and --exclude)

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

read -r -a paths <<<"${LG_PATHS:-}"
read -r -a charts <<<"${LG_CHARTS:-}"
read -r -a helm_args <<<"${LG_HELM_ARGS:-}"
common=()
[[ -n "${LG_POLICY:-}" ]] && common+=(--policy "$LG_POLICY")
[[ -n "${LG_BASELINE:-}" ]] && common+=(--baseline "$LG_BASELINE")
fail_on=()
[[ -n "${LG_FAIL_ON:-}" ]] && fail_on+=(--fail-on "$LG_FAIL_ON")
format=text
[[ "${LG_ANNOTATIONS:-true}" == "true" ]] && format=github
sarif="${LG_SARIF:-lifeguard.sarif}"

if [[ ${#paths[@]} -eq 0 && ${#charts[@]} -eq 0 ]]; then
  echo "::error title=lifeguard::give the action \`paths\` to lint, \`charts\` to render, or both"
  exit 2
fi

status=0
n=0
# lint ARGS... (stdin: the rendered chart, for `-`): both passes for one target.
lint() {
  n=$((n + 1))
  local input="$work/input-$n.yaml" code=0
  cat >"$input"
  # The second pass prints the input errors; this one's stderr is shown only
  # when it wrote no report.
  lifeguard lint --format sarif --fail-on never --quiet --output-file "$work/$n.sarif" "${common[@]}" "$@" \
    <"$input" 2>"$work/$n.log" || true
  [[ -s "$work/$n.sarif" ]] || cat "$work/$n.log" >&2
  lifeguard lint --format "$format" "${fail_on[@]}" "${common[@]}" "$@" <"$input" || code=$?
  if ((code > status)); then status=$code; fi
}

if [[ ${#paths[@]} -gt 0 ]]; then
  lint "${paths[@]}" </dev/null
fi
for chart in "${charts[@]}"; do
  rendered="$work/chart-$((n + 1)).yaml"
  if ! helm template "${LG_RELEASE:-release}" "$chart" "${helm_args[@]}" >"$rendered"; then
    echo "::error title=lifeguard::helm template ${LG_RELEASE:-release} $chart failed (see above)"
    status=2
    continue
  fi
  lint --helm-chart-root "$chart" - <"$rendered"
done

set +f
shopt -s nullglob
reports=("$work"/*.sarif)
if [[ ${#reports[@]} -gt 0 ]]; then
  # One run: the rules of every report (by id), every result and notification.
  # ruleIndex points into one report's rule list, so it goes; ruleId stays.
  jq -s '
    [.[].runs[0]] as $runs
    | .[0]
    | .runs = [$runs[0]
        | .tool.driver.rules = ([$runs[].tool.driver.rules[]] | unique_by(.id))
        | .results = [$runs[].results[] | del(.ruleIndex)]
        | .invocations = [{
            executionSuccessful: ([$runs[].invocations[]?.executionSuccessful] | all),
            toolExecutionNotifications: [$runs[].invocations[]?.toolExecutionNotifications[]?]
          }]]
  ' "${reports[@]}" >"$sarif"
fi

if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
  {
    echo "sarif-file=$sarif"
    echo "exit-code=$status"
  } >>"$GITHUB_OUTPUT"
fi
exit "$status"
