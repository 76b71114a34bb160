#!/usr/bin/env bash
# shellcheck disable=SC2016 # backquotes in the patterns are markdown, not shell
# docs/jobspec.md's key table explains every training setting `jobgen settings` lists (the table in
# estimate/settings.hpp): a setting added or renamed in the code without the docs fails here.
# Usage: jobspec_doc_settings.sh JOBGEN docs/jobspec.md
set -euo pipefail
jobgen=$1 doc=$2
status=0
# A row's first cell names one key or several: "| `vpp`, `cp`, `sp` | ...".
documented=$(sed -n 's/^| *\(`[a-z_0-9]*`\(, *`[a-z_0-9]*`\)*\) *|.*/\1/p' "$doc" | tr ',' '\n' |
  sed 's/[ `]//g' | sort -u)
keys=$("$jobgen" settings --markdown | sed -n 's/^| `\([a-z_0-9]*\)` |.*/\1/p' | sort -u)
[[ -n $keys ]] || { echo "jobgen settings --markdown listed no key"; exit 1; }
while read -r key; do
  grep -qx "$key" <<<"$documented" || { echo "docs/jobspec.md has no row for the setting '$key'"; status=1; }
done <<<"$keys"
((status == 0)) && echo "jobspec_doc_settings: docs/jobspec.md explains all $(wc -l <<<"$keys") settings"
exit "$status"
