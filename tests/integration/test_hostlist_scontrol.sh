#!/usr/bin/env bash
# Compares `jobgen hostlist expand|compress` with Slurm's own `scontrol show hostnames|hostlist`
# on fixed and random expressions. scontrol needs only a slurm.conf for these (no daemon), so:
# - with JOBGEN_CLUSTER_DIR set, it uses that cluster's env.sh (SLURM_CONF);
# - without it, it writes a minimal slurm.conf into a temporary directory.
# Prints every mismatch; exits 1 on any, 77 (skip) when scontrol is missing.
# Env: JOBGEN (the binary; default build/jobgen), HOSTLIST_SEED (random seed; default: time).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
JOBGEN="${JOBGEN:-$here/../../build/jobgen}"
command -v scontrol >/dev/null || { echo "SKIP: scontrol not installed"; exit 77; }
[[ -x "$JOBGEN" ]] || { echo "FAIL: jobgen binary not found at $JOBGEN"; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if [[ -n "${JOBGEN_CLUSTER_DIR:-}" ]]; then
  # shellcheck disable=SC1091
  source "$JOBGEN_CLUSTER_DIR/env.sh"
else
  printf '%s\n' 'ClusterName=hostlisttest' 'SlurmctldHost=localhost' \
    'NodeName=x State=UNKNOWN' 'PartitionName=p Nodes=x' >"$work/slurm.conf"
  export SLURM_CONF="$work/slurm.conf"
fi
[[ -n "${SLURM_CONF:-}" ]] || { echo "FAIL: SLURM_CONF is not set by $JOBGEN_CLUSTER_DIR/env.sh"; exit 1; }

failures=0
checks=0
typos=0

# scontrol exits 0 even for an invalid hostlist; it says so on stderr.
slurm() {  # slurm hostnames|hostlist EXPR -> sets slurm_out, slurm_ok
  local err
  slurm_out="$(scontrol show "$1" "$2" 2>"$work/err")" || true
  err="$(cat "$work/err")"
  if [[ -n "$err" ]]; then slurm_ok=0; else slurm_ok=1; fi
}

jobgen() {  # jobgen expand|compress EXPR -> sets jobgen_out, jobgen_rc, jobgen_err
  jobgen_rc=0
  jobgen_out="$("$JOBGEN" hostlist "$1" "$2" 2>"$work/jerr")" || jobgen_rc=$?
  jobgen_err="$(cat "$work/jerr")"
}

mismatch() {
  failures=$((failures + 1))
  printf 'MISMATCH %s\n' "$1"
  printf '  scontrol: %s\n' "$(printf '%s' "$2" | tr '\n' ' ' | cut -c1-300)"
  printf '  jobgen:   %s\n' "$(printf '%s' "$3" | tr '\n' ' ' | cut -c1-300)"
}

# True for the typos Slurm accepts silently and jobgen rejects on purpose (see hostlist.hpp):
# unbalanced or nested brackets, spaces or '+' inside brackets, open ranges "1-]" / "1-,",
# numbers of 19+ digits.
typo_like() {
  local s="$1" depth=0 i c
  for ((i = 0; i < ${#s}; i++)); do
    c="${s:i:1}"
    case "$c" in
      '[') depth=$((depth + 1)); ((depth == 1)) || return 0 ;;
      ']') depth=$((depth - 1)); ((depth == 0)) || return 0 ;;
      ' ' | '+') ((depth == 0)) || return 0 ;;
    esac
  done
  ((depth == 0)) || return 0
  [[ "$s" =~ -[],] || "$s" =~ [0-9]{19} ]]
}

# Same output when Slurm accepts (or exit 2 for typo_like input); exit 2 when Slurm rejects.
compare() {  # compare hostnames|hostlist expand|compress EXPR
  local slurm_cmd="$1" sub="$2" expr="$3"
  # A mutation may start with '-': both tools then read an option ("-h20" is help), not a list.
  [[ "$expr" == -* ]] && return 0
  checks=$((checks + 1))
  slurm "$slurm_cmd" "$expr"
  jobgen "$sub" "$expr"
  if [[ "$slurm_ok" == 1 && "$jobgen_rc" == 2 ]] && typo_like "$expr"; then
    typos=$((typos + 1))
  elif [[ "$slurm_ok" == 1 ]]; then
    if [[ "$jobgen_rc" != 0 || "$jobgen_out" != "$slurm_out" ]]; then
      mismatch "$sub '$expr' (jobgen exit $jobgen_rc)" "$slurm_out" "$jobgen_out $jobgen_err"
    fi
  elif [[ "$jobgen_rc" != 2 || "$jobgen_err" != "jobgen: error: "* ]]; then
    mismatch "$sub '$expr': Slurm rejects it, jobgen must exit 2 (got $jobgen_rc)" \
      "$(cat "$work/err")" "$jobgen_out $jobgen_err"
  fi
}

# Inputs Slurm accepts but turns into surely-unintended names; jobgen must reject them (exit 2).
expect_rejected() {
  checks=$((checks + 1))
  jobgen expand "$1"
  if [[ "$jobgen_rc" != 2 || "$jobgen_err" != "jobgen: error: "* ]]; then
    mismatch "expand '$1': jobgen must reject it with exit 2 (got $jobgen_rc)" "(n/a)" \
      "$jobgen_out $jobgen_err"
  fi
}

expand_cases=(
  'a[1-3]' 'classt[01-05,07-16]' 'classt[21-22]' 'classt06' 'classt25' 'node[001-010]' '[8-12]'
  'n[7]' 'n[7-7]' 'n[0-0]' 'n[000]' 'n[9-11]' 'n[09-11]' 'n[9-011]' 'a[01-2]' 'a[1-02]'
  'a[1-2]b[3-4]' 'a[1-2]-[3-4]' 'a[1-2][3-4]' '[1-2]b[3-4]' 'n[1-2][3-4][5-6]'
  'x[00-02]y[1-2]z[8]' 'n[1-2]-[3-4]-ib[5]' 'n[1-3,5]x[1-2]' 'n[1-2]a[3-4],m[5-6]'
  'a,b,c' 'a[1-2],b[01-02]' 'n[1,1,2]' 'n1,n1' 'n[2-3,1]' 'a,,b' 'a b' 'n[1-2] m' 'n[1-2],,'
  'node-1.cluster' 'rack1-n[1-2]' 'a.b-c_d[10-12]' '' ','
  'gpu[1-2]-ib' 'a.b[1-2].c' 'a[1-2]b' 'a[1-2]b,c' 'n[3-1]' 'n[]' 'n[a-b]' 'n[-1]' 'n[1-2-3]'
  'n[1--2]' 'n[0x1]' 'n[1x2]' 'n[1,]' 'n[,1]' 'n[1,,2]' 'a[1-2]x[]' 'a[]x[1-2]' '[a]'
  'a[1-2]]' 'a[1-2]][3-4]' 'a[1-2[3-4]]' 'a[1-3]b]c[1-2]' 'a[1]]b[1-2]' 'n[1-65537]'
  'n[1-1000000]' 'n[1-65536]' 'a[1-65537]b[1-2]'
)
rejected_cases=('n[1-' 'n[1-2' 'a[' 'x[1-2][' 'n1-3]' 'a]b[1-2]' 'a[1[2-3]' 'a[[1-2]' 'n[1-]'
  'n[1, 2]' 'n[ 1-2]' 'n[+1-2]' 'n[99999999999999999999]')
compress_cases=(
  'a1,a2,a3' 'a3,a2,a1' 'b1,a1' 'n1,n1' 'n1,n2,n1' 'n1,n2,n2,n3' 'n9,n10' 'n09,n10' 'n9,n010'
  'n08,n9,n10' 'n8,n09,n10' 'n1,n01' 'n01,n1' 'n001,n01,n1' 'n5,n05' 'n10,n010' 'n100,n099'
  'n099,n100' 'n99,n100' 'n99,n0100' 'n9,n10,n011' 'n10,n11,n012' 'n01,n2' 'n1,n02' 'n0,n00'
  'n00,n0' 'n1,n2,n03,n04' 'n01,n02,n3,n4' 'n0001,n0002,n1000,n999' 'n9,n10,n11,n08'
  'n10,n9,n09' 'x01,x1,x2,x02' 'a,b,a' 'a,a1' 'a1,a' 'c10,c9,c1' 'a10,a2,b1' 'a1,b1,a2'
  'n1-1,n1-2' 'x1y2,x1y3' 'a1b,a2b' 'node-1,node-2' 'a.1,a.2' 'rack1-n1,rack1-n2,rack2-n1'
  '1,2,3' '01,02,3' 'A1,a1,B1' 'x01y1,x1y2' 'n[1-3],n[2-5]' 'n[01-03],m1,n04' 'n1 n2'
  'classt[01-05,07-16]' 'classt01,classt02,classt03,classt05,classt06,classt21'
  'classt[21-22],classt[23-24],classt25,classt06'
)

for e in "${expand_cases[@]}"; do compare hostnames expand "$e"; done
for e in "${rejected_cases[@]}"; do expect_rejected "$e"; done
for e in "${compress_cases[@]}"; do compare hostlist compress "$e"; done

# Random expressions and name lists, reproducible with HOSTLIST_SEED.
seed="${HOSTLIST_SEED:-$(date +%s)}"
RANDOM="$seed"
prefixes=(n node gpu- classt a.b r1-n x "")
pad() {  # pad NUMBER WIDTH
  printf "%0${2}d" "$1"
}
random_range() {
  local lo=$((RANDOM % 25)) w=$((1 + RANDOM % 3))
  case $((RANDOM % 4)) in
    0) pad "$lo" "$w" ;;
    *) printf '%s-%s' "$(pad "$lo" "$w")" "$(pad $((lo + RANDOM % 12)) $((1 + RANDOM % 3)))" ;;
  esac
}
random_bracket() {
  local n=$((1 + RANDOM % 3)) i out=""
  for ((i = 0; i < n; i++)); do out+="${out:+,}$(random_range)"; done
  printf '[%s]' "$out"
}
random_name() {
  local name="${prefixes[RANDOM % ${#prefixes[@]}]}" b=$((RANDOM % 4)) i
  if ((b == 0)); then
    printf '%s%s' "${name:-h}" "$(pad $((RANDOM % 30)) $((1 + RANDOM % 3)))"
    return
  fi
  for ((i = 0; i < b; i++)); do
    name+="$(random_bracket)"
    ((i + 1 < b)) && name+="${prefixes[RANDOM % ${#prefixes[@]}]}"
  done
  printf '%s' "$name"
}
random_expr() {
  local n=$((1 + RANDOM % 3)) i out=""
  for ((i = 0; i < n; i++)); do out+="${out:+,}$(random_name)"; done
  printf '%s' "$out"
}
random_names() {  # names that share prefixes, with mixed zero padding, in random order
  local n=$((1 + RANDOM % 12)) i out="" p
  for ((i = 0; i < n; i++)); do
    p="${prefixes[RANDOM % 3]}"
    out+="${out:+,}${p:-h}$(pad $((RANDOM % 14)) $((1 + RANDOM % 3)))"
  done
  printf '%s' "$out"
}
mutate() {  # one random edit (insert one of "[],-0" or delete a character), for error paths
  local s="$1" at=$((RANDOM % (${#1} + 1))) chars='[],-0'
  if ((RANDOM % 2)); then
    printf '%s%s%s' "${s:0:at}" "${chars:RANDOM % ${#chars}:1}" "${s:at}"
  else
    printf '%s%s' "${s:0:at}" "${s:at+1}"
  fi
}
for ((k = 0; k < 80; k++)); do
  compare hostnames expand "$(random_expr)"
  compare hostlist compress "$(random_names)"
  compare hostlist compress "$(random_expr)"
  e="$(mutate "$(random_expr)")"
  compare hostnames expand "$e"
  compare hostlist compress "$e"
done

echo "hostlist vs scontrol: $checks checks, $failures mismatches, $typos typos rejected on" \
  "purpose (seed $seed, SLURM_CONF=$SLURM_CONF)"
((failures == 0))
