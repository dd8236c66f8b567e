# Sourced by the installers that take files from a Go module's zip
# (install-report-crds.sh, install-kuberay-crds.sh,
# install-prometheus-crds.sh):
#   module_dir NAME MODULE@VERSION SUM
# downloads the module through the Go module proxy (checked against the
# checksum database) and prints its directory, after checking its hash is
# the pinned SUM; NAME heads the messages. Exits on any failure.
module_dir() {
  local name="$1" json field
  json="$(go mod download -json "$2")"
  field() { printf '%s\n' "$json" | sed -n "s/^[[:space:]]*\"$1\": \"\(.*\)\",\{0,1\}$/\1/p" | head -1; }
  if [[ -n "$(field Error)" ]]; then
    echo "$name: $2: $(field Error)" >&2
    exit 1
  fi
  if [[ "$(field Sum)" != "$3" ]]; then
    echo "$name: $2 has hash $(field Sum), not the pinned $3" >&2
    exit 1
  fi
  field Dir
}
