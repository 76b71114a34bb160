#!/usr/bin/env bash
# Fails, listing every offending line, when a file of a layer includes what ARCHITECTURE.md does not
# let that layer include directly:
#   - a header of another folder of src/jobgen that is not among the layer's direct dependencies
#     ("cli/cmd_submit.cpp:34 includes site/: cli may include app, cli/ui, util");
#   - a third-party header that only one layer may use: CLI11 (cli/), SQLite (ledger/), libcurl
#     (sys/), kainjow's mustache (render/).
# Run as a step of the layer's build (CMakeLists.txt, jobgen_layer), so a forbidden include fails
# the build; the stamp is written only when every line passes.
# Usage: layer_includes.sh LAYER_DIR LAYER STAMP [ALLOWED_LAYER...]
set -euo pipefail
dir=$1 layer=$2 stamp=$3
shift 3
allowed=("$@")

declare -A owner=([CLI/]=cli [sqlite3]=ledger [curl/]=sys [kainjow/]=render)
may() { local IFS=','; local list="${allowed[*]:-}"; echo "${list:-nothing}" | sed 's/,/, /g'; }
status=0
for file in "$dir"/*.cpp "$dir"/*.hpp; do
  [[ -e $file ]] || continue
  name="$layer/${file##*/}"
  while IFS=: read -r line text; do
    if [[ $text =~ \<([^>]*)\> ]]; then
      header=${BASH_REMATCH[1]}
      for prefix in "${!owner[@]}"; do
        if [[ $header == "$prefix"* && ${owner[$prefix]} != "$layer" ]]; then
          echo "$name:$line includes <$header>: only ${owner[$prefix]}/ may (ARCHITECTURE.md)" >&2
          status=1
        fi
      done
    elif [[ $text =~ \"jobgen/(.*)/[^/]*\" ]]; then
      folder=${BASH_REMATCH[1]}
      [[ $folder == "$layer" ]] && continue
      ok=0
      for a in "${allowed[@]}"; do [[ $folder == "$a" ]] && ok=1; done
      if ((!ok)); then
        echo "$name:$line includes $folder/: $layer may include $(may)" >&2
        status=1
      fi
    fi
  done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]' "$file" || true)
done
if ((status == 0)); then touch "$stamp"; fi
exit "$status"
