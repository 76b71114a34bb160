#!/usr/bin/env bash
# Fails (listing every offending line) when a layer includes a third-party header that only one
# layer may use: CLI11 (cli/), SQLite (ledger/), libcurl (sys/), kainjow's mustache (render/).
# The layer's own headers of jobgen are enforced by its include tree (CMakeLists.txt); these live
# in /usr/include, visible to every layer, so they are checked here, as a step of the layer's
# build.
# Usage: third_party_includes.sh LAYER_DIR LAYER_NAME STAMP
set -euo pipefail
dir=$1 layer=$2 stamp=$3

declare -A owner=([CLI/]=cli [sqlite3]=ledger [curl/]=sys [kainjow/]=render)
status=0
for file in "$dir"/*.cpp "$dir"/*.hpp; do
  [[ -e $file ]] || continue
  while IFS=: read -r line text; do
    for prefix in "${!owner[@]}"; do
      if [[ $text =~ \<$prefix && ${owner[$prefix]} != "$layer" ]]; then
        echo "$file:$line: error: includes <${text#*<}: only the ${owner[$prefix]}/ layer may" \
          "(ARCHITECTURE.md)" >&2
        status=1
      fi
    done
  done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*<' "$file" || true)
done
if ((status == 0)); then touch "$stamp"; fi
exit "$status"
