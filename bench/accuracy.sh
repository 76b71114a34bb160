#!/usr/bin/env bash
# The estimator against every measured public run: per data file and split (calibration / held
# back), fit/OOM right, memory within 10 % and 20 %, median signed memory error, throughput
# within x1.35 (the table of docs/accuracy.md). With --plots DIR it also draws predicted against
# measured memory and throughput with gnuplot (memory.svg, throughput.svg).
#   bench/accuracy.sh [--rows] [--plots DIR] [DATA...]
# DATA: YAML/Markdown files or directories; none = tests/data/measured and ../shared/reference.
# Env: BUILD_DIR (default build).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${BUILD_DIR:-$ROOT/build}/tests/jobgen_accuracy
[[ -x $BIN ]] || { echo "accuracy: build it first (cmake --build build --target jobgen_accuracy)" >&2; exit 1; }

plots="" args=()
while (($#)); do
  case $1 in
    --plots) plots=${2:?--plots needs a directory}; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done

if [[ -z $plots ]]; then
  exec "$BIN" "${args[@]}"
fi
command -v gnuplot >/dev/null || { echo "accuracy: gnuplot is missing (apt-get install gnuplot-nox, or make deps)" >&2; exit 1; }
mkdir -p "$plots"
tsv=$(mktemp)
trap 'rm -f "$tsv"' EXIT
"$BIN" --tsv "$tsv" "${args[@]}"
gnuplot -e "data='$tsv'; out='$plots'" "$ROOT/bench/accuracy_plots.gp"
echo "accuracy: wrote $plots/memory.svg and $plots/throughput.svg" >&2
