#!/usr/bin/env bash
# `jobgen status` of 1,000 jobs over slurmrestd (--backend rest) against the Slurm CLI backend
# (--backend cli: squeue --json), measured in one run on the local test cluster. A report, not a
# test: it prints the median wall time of each, the ratio rest/cli, and what each costs
# slurmctld (REQUEST_JOB_INFO RPCs per status, from sdiag).
#
# Usage: bench/status_rest_vs_cli.sh [JOBGEN] [RUNS] [JOBS]   (defaults: build/jobgen, 10, 1000;
# BENCH_SMOKE=1: 1 run of 20 jobs). Goal (bench/goals.sh): one REQUEST_JOB_INFO per status.
# Cluster: $JOBGEN_CLUSTER_DIR (a running tests/integration/cluster.sh cluster), else it starts a
# private one in a temporary directory and stops it afterwards. The jobs are submitted held
# (sbatch --hold) so that all 1,000 stay in the queue, and are cancelled at the end.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
jobgen=${1:-$root/build/jobgen}
# shellcheck source=goals.sh
source "$here/goals.sh"
runs=${2:-$(smoke_or 1 10)}
count=${3:-$(smoke_or 20 1000)}
[[ -x $jobgen ]] || { echo "status_rest_vs_cli: no jobgen binary at $jobgen" >&2; exit 1; }

tmp=$(mktemp -d)
own_cluster=""
ids=()
finish() {
  ((${#ids[@]} == 0)) || scancel "${ids[@]}" 2>/dev/null || true
  [[ -z $own_cluster ]] || bash "$root/tests/integration/cluster.sh" stop "$own_cluster" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap finish EXIT

cluster=${JOBGEN_CLUSTER_DIR:-}
if [[ -z $cluster || ! -f $cluster/env.sh ]]; then
  own_cluster=$tmp/cluster
  echo "starting a private cluster in $own_cluster ..." >&2
  bash "$root/tests/integration/cluster.sh" start "$own_cluster" >&2
  cluster=$own_cluster
fi
# shellcheck source=/dev/null
source "$cluster/env.sh"
export XDG_STATE_HOME=$tmp/state

echo "submitting $count held jobs ..." >&2
t0=$(date +%s%N)
for ((i = 0; i < count; i++)); do
  ids+=("$(sbatch --parsable --hold -p markov_gpu -t 5 -J bench-status -o /dev/null --wrap true)")
done
echo "  $((($(date +%s%N) - t0) / 1000000)) ms for $count sbatch calls" >&2

# The two commands, each one `jobgen status` of all the ids (from a file: 1,000 arguments).
printf '%s\n' "${ids[@]}" >"$tmp/ids"
cat >"$tmp/status.sh" <<EOF
#!/usr/bin/env bash
xargs -a "$tmp/ids" "$jobgen" status --backend "\$1" >/dev/null
EOF
chmod +x "$tmp/status.sh"
for b in rest cli; do
  n=$("$tmp/status.sh" "$b" && xargs -a "$tmp/ids" "$jobgen" status --backend "$b" | grep -c ' PENDING')
  [[ $n -eq $count ]] || { echo "status --backend $b shows $n of $count jobs PENDING" >&2; exit 1; }
done

rpcs() { # BACKEND -> REQUEST_JOB_INFO RPCs of one status call
  sdiag --reset >/dev/null
  "$tmp/status.sh" "$1"
  sdiag | awk '$1 == "REQUEST_JOB_INFO" { sub(/.*count:/, ""); print $1 + 0; f = 1 } END { if (!f) print 0 }'
}
rest_rpcs=$(rpcs rest)
cli_rpcs=$(rpcs cli)

median_ms() { # BACKEND
  local t=() i start
  for ((i = 0; i < runs; i++)); do
    start=$(date +%s%N)
    "$tmp/status.sh" "$1"
    t+=($((($(date +%s%N) - start) / 1000)))
  done
  printf '%s\n' "${t[@]}" | sort -n | awk '{ a[NR] = $1 } END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.1f", m / 1000 }'
}
if command -v hyperfine >/dev/null && ((runs >= 5)); then
  hyperfine --warmup 1 --runs "$runs" --export-json "$tmp/h.json" -N \
    "$tmp/status.sh rest" "$tmp/status.sh cli" >&2
  read -r rest_ms cli_ms < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"]
print(" ".join("%.1f" % (x["median"] * 1000) for x in r))' "$tmp/h.json")
else
  rest_ms=$(median_ms rest)
  cli_ms=$(median_ms cli)
fi

echo
echo "jobgen status of $count jobs, median of $runs runs (this machine, local slurmctld)"
printf '  %-28s %9s ms   %s REQUEST_JOB_INFO RPC(s)\n' "--backend rest (slurmrestd)" "$rest_ms" "$rest_rpcs"
printf '  %-28s %9s ms   %s REQUEST_JOB_INFO RPC(s)\n' "--backend cli (squeue)" "$cli_ms" "$cli_rpcs"
python3 -c 'import sys; r, c = map(float, sys.argv[1:]); print("  ratio rest / cli: %.2f (%s)" % (r / c, "REST faster" if r < c else "CLI faster"))' "$rest_ms" "$cli_ms"
goal "status --backend rest: REQUEST_JOB_INFO RPCs" "$rest_rpcs" 1
goal "status --backend cli: REQUEST_JOB_INFO RPCs" "$cli_rpcs" 1
goals_verdict
