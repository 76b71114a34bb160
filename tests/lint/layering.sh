#!/usr/bin/env bash
# The build refuses an include against ARCHITECTURE.md's direction of dependencies
# (cmake/layer_includes.sh, a step of each layer's build): a header of a folder the layer may not
# include directly, and a third-party header only one layer may use, each named with its file and
# line and what the layer may include. Probed here on files of its own, and on the real tree with
# the lists the build uses (BUILD/layers.txt).
# Usage: layering.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
check=$src/cmake/layer_includes.sh

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# probe LAYER "TEXT" ALLOWED...: runs the check on one file holding TEXT; 0 when it passes.
probe() {
  local layer=$1 text=$2
  shift 2
  rm -rf "$work/layer" "$work/stamp"
  mkdir -p "$work/layer"
  printf '%b' "$text" >"$work/layer/x.cpp"
  bash "$check" "$work/layer" "$layer" "$work/stamp" "$@" 2>"$work/err"
}

probe cli '#include "jobgen/app/jobs.hpp"\n#include "jobgen/util/strings.hpp"\n' app cli/ui util ||
  fail "cli/ including app/ and util/ was refused: $(cat "$work/err")"
[[ -e $work/stamp ]] || fail "a passing check wrote no stamp"
if probe cli '#include <vector>\n#include "jobgen/site/request_check.hpp"\n' app cli/ui util; then
  fail "cli/ including site/ passed"
fi
grep -qx 'cli/x.cpp:2 includes site/: cli may include app, cli/ui, util' "$work/err" ||
  fail "the refusal does not name the file, line and what cli may include: $(cat "$work/err")"
[[ ! -e $work/stamp ]] || fail "a refused check left its stamp"
# Subfolders are layers of their own: slurm/ may not include its backends.
if probe slurm '#include "jobgen/slurm/rest/rest_backend.hpp"\n' util job sys; then
  fail "slurm/ including slurm/rest/ passed"
fi
# A layer that depends on nothing says so.
probe util '#include "jobgen/sys/system.hpp"\n' && fail "util/ including sys/ passed"
grep -q 'util may include nothing' "$work/err" || fail "util's refusal: $(cat "$work/err")"

# Third-party headers: one layer each, every offending line named.
if probe app '#include <vector>\n  #include <CLI/CLI.hpp>\n#include <sqlite3.h>\n' util; then
  fail "app/ including CLI11 and SQLite passed"
fi
grep -q 'app/x.cpp:2 includes <CLI/CLI.hpp>: only cli/ may' "$work/err" &&
  grep -q 'app/x.cpp:3 includes <sqlite3.h>: only ledger/ may' "$work/err" ||
  fail "the third-party check did not name both lines: $(cat "$work/err")"
probe cli '#include <CLI/CLI.hpp>\n' || fail "cli/ may include CLI11"

# The real tree passes with the lists the build uses.
while IFS=: read -r layer deps; do
  # shellcheck disable=SC2086
  bash "$check" "$src/src/jobgen/$layer" "$layer" "$work/real" $deps 2>>"$work/real.err" ||
    fail "$layer/: $(cat "$work/real.err")"
done <"$build/layers.txt"

if ((failures > 0)); then exit 1; fi
echo "layering: every probe answered as ARCHITECTURE.md says"
