#!/usr/bin/env bash
# ARCHITECTURE.md's table of folders lists, for each layer of src/jobgen, the folders it may include
# directly: the same lists the build enforces (BUILD/layers.txt, written by CMakeLists.txt). Any
# difference, and any layer missing from either, is printed.
# Usage: architecture_table.sh ARCHITECTURE.md BUILD/layers.txt
set -euo pipefail
doc=$1 layers=$2
status=0
declare -A built documented
while IFS=: read -r layer deps; do
  built[$layer]=$(tr ' ' '\n' <<<"$deps" | sed '/^$/d' | sort | tr '\n' ' ')
done <"$layers"
# Rows such as "| `slurm/sbatch/` | what it holds | util, sys, slurm |".
while IFS='|' read -r _ folder _ deps _; do
  folder=$(sed -n 's/^ *`\([a-z/_]*\)\/` *$/\1/p' <<<"$folder")
  [[ -n $folder && -n ${built[$folder]+x} ]] || continue
  documented[$folder]=$(tr ',' '\n' <<<"$deps" | sed 's/[ `]//g; s/\/$//; /^nothing$/d; /^$/d' | sort | tr '\n' ' ')
done <"$doc"
for layer in "${!built[@]}"; do
  if [[ -z ${documented[$layer]+x} ]]; then
    echo "ARCHITECTURE.md has no row for $layer/ (the build lets it include: ${built[$layer]:-nothing})"
    status=1
  elif [[ ${documented[$layer]} != "${built[$layer]}" ]]; then
    echo "$layer/: ARCHITECTURE.md says it may include '${documented[$layer]}', the build '${built[$layer]}'"
    status=1
  fi
done
((status == 0)) && echo "architecture_table: ARCHITECTURE.md lists what the build enforces"
exit "$status"
