#!/usr/bin/env bash
# The build refuses an include against ARCHITECTURE.md's direction of dependencies:
#   1. a layer's include tree (BUILD/layers/<layer>) holds the headers of the layers below it that
#      it depends on, and no others: estimate/ sees model/ but not sys/ or cli/; slurm/ sees none
#      of its backends; cli/ sees app/;
#   2. cmake/third_party_includes.sh fails on CLI11 outside cli/ and SQLite outside ledger/,
#      naming the file and line.
# Usage: layering.sh SOURCE_DIR BUILD_DIR CXX CXXFLAGS... (the C++23 option among them)
set -euo pipefail
src=$1 build=$2 cxx=$3
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
flags=("$@")

# compiles LAYER "jobgen/x/y.hpp": 0 when the layer may include the header
compiles() {
  local layer=$1 header=$2
  shift 2
  printf '#include "%s"\n' "$header" >"$work/probe.cpp"
  "$cxx" "$@" -fsyntax-only -I"$build/layers/$layer" "$work/probe.cpp" 2>"$work/err"
}
expect() {  # expect yes|no LAYER HEADER
  local want=$1 layer=$2 header=$3 got=no
  if compiles "$layer" "$header" "${flags[@]}"; then got=yes; fi
  if [[ $got != "$want" ]]; then
    local expected="a refusal"
    [[ $want == yes ]] && expected="it to compile"
    echo "FAIL: $layer/ including $header: expected $expected" >&2
    cat "$work/err" >&2
    failures=$((failures + 1))
  elif [[ $want == no ]] && ! grep -qE 'No such file|file not found' "$work/err"; then
    echo "FAIL: $layer/ including $header failed for another reason:" >&2
    cat "$work/err" >&2
    failures=$((failures + 1))
  fi
}

expect yes estimate jobgen/model/architecture.hpp
expect no estimate jobgen/sys/system.hpp
expect no estimate jobgen/plan/planner.hpp
expect no util jobgen/sys/system.hpp
expect yes slurm jobgen/job/sbatch_options.hpp
expect no slurm jobgen/slurm/rest/rest_backend.hpp
expect no slurm jobgen/profile/profile.hpp
expect no slurm_rest jobgen/slurm/sbatch/sbatch_backend.hpp
expect no site jobgen/app/session.hpp
expect no app jobgen/cli/app.hpp
expect yes app jobgen/slurm/rest/rest_backend.hpp
expect yes cli jobgen/app/jobs.hpp
expect no report jobgen/ledger/ledger.hpp
expect no report jobgen/app/session.hpp
expect yes report jobgen/slurm/backend.hpp

# Third-party headers: one layer each.
mkdir -p "$work/layer"
printf '#include <vector>\n  #include <CLI/CLI.hpp>\n#include <sqlite3.h>\n' >"$work/layer/x.cpp"
if bash "$src/cmake/third_party_includes.sh" "$work/layer" app "$work/stamp" 2>"$work/err"; then
  echo "FAIL: app/ including CLI11 and SQLite passed the third-party check" >&2
  failures=$((failures + 1))
elif ! grep -q 'x.cpp:2: error: includes <CLI/CLI.hpp>: only the cli/ layer' "$work/err" ||
  ! grep -q 'x.cpp:3: error: includes <sqlite3.h>: only the ledger/ layer' "$work/err" ||
  [[ -e $work/stamp ]]; then
  echo "FAIL: the third-party check did not name both lines, or left its stamp:" >&2
  cat "$work/err" >&2
  failures=$((failures + 1))
fi
printf '#include <CLI/CLI.hpp>\n' >"$work/layer/x.cpp"
if ! bash "$src/cmake/third_party_includes.sh" "$work/layer" cli "$work/stamp" || [[ ! -e $work/stamp ]]; then
  echo "FAIL: cli/ may include CLI11" >&2
  failures=$((failures + 1))
fi

if ((failures > 0)); then exit 1; fi
echo "layering: every probe answered as ARCHITECTURE.md says"
