#!/usr/bin/env bash
# Limits before you submit, on the acct cluster (cluster.sh JOBGEN_CLUSTER_SHAPE=acct): limits set
# with sacctmgr, used up by running blockers, then for each case `jobgen plan --json` predicts
# whether a 1-GPU L40S job would start or pend and on which limit (Slurm's reason name), the same
# job is submitted with jobgen, and the reason squeue shows must be the predicted one:
#   qos normal MaxTRESPerUser=gres/gpu=2, 2 GPUs in use by root in normal  -> QOSMaxGRESPerUser
#   account vision GrpTRES=gres/gpu=2, 2 GPUs in use in vision (qos high)   -> AssocGrpGRES
#   qos normal MaxTRESPerJob=gres/gpu=1, a 2-GPU job                        -> QOSMaxGRESPerJob,
#                                                                              never starts
#   root in vision MaxJobs=1, 1 job running there                          -> AssocMaxJobsLimit
#   qos high MaxWall=00:10:00 (jobgen asks at least 15 minutes)            -> QOSMaxWallDuration-
#                                                                              PerJobLimit, never
# and, with no account or QOS given, plan picks one where no limit holds the job and
# `submit --target auto` runs it there. The limits are undone at the end (the cluster's tests
# run one after another). With JOBGEN_ACCT_RECORD=DIR the limited sacctmgr/sshare answers in
# jobgen's own formats are written there (tests/data/slurm-cli/*-limits-VERSION.txt).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"
[[ -n ${JOBGEN_CLUSTER_DBD_PORT:-} ]] || { echo "SKIP: $JOBGEN_CLUSTER_DIR has no accounting"; exit 77; }
PROFILE=$JOBGEN_SOURCE_DIR/tests/integration/acct-profile.yaml
# Whose limits: jobgen asks $USER (a login shell sets it; CTest's environment may not).
USER=$(id -un)
export USER

undo_limits() {
  sacctmgr -i modify qos normal set MaxTRESPerUser=gres/gpu=-1 MaxTRESPerJob=gres/gpu=-1 >/dev/null || true
  sacctmgr -i modify qos high set MaxWall=-1 >/dev/null || true
  sacctmgr -i modify account vision set GrpTRES=gres/gpu=-1 >/dev/null || true
  sacctmgr -i modify user root where account=vision set MaxJobs=-1 >/dev/null || true
}
trap 'status=$?; undo_limits; (exit "$status"); cleanup' EXIT

sacctmgr -i modify qos normal set MaxTRESPerUser=gres/gpu=2 >/dev/null
sacctmgr -i modify account vision set GrpTRES=gres/gpu=2 >/dev/null

write_spec spec.yaml jg-limits "$(hold_command)"
# The blockers: 2 L40S GPUs in account ml, qos normal; 2 RTX 2080 Ti in account vision, qos high.
blocker() { # ACCOUNT QOS GRES
  local id
  id=$(sbatch --parsable -A "$1" --qos "$2" --gres "$3" -t 30 -o /dev/null -J jg-blocker \
    --wrap "sleep 300") || fail "sbatch blocker $*"
  SUBMITTED+=("$id")
  wait_state "$id" RUNNING
}
blocker ml normal gpu:gpul40s:2
blocker vision high gpu:gpu2080:2

# plan_limit GPUS [ARGS...]: "verdict|reason|account|qos" of the one-node L40S option with GPUS.
plan_limit() {
  local gpus=$1
  shift
  "$JOBGEN" plan spec.yaml --profile "$PROFILE" --target l40s --gpus "$gpus" --nodes 1 --json "$@" \
    >plan.json || fail "jobgen plan failed"
  GPUS=$gpus python3 - <<'PY'
import json, os
p = json.load(open("plan.json"))
o = next(o for o in p["options"] if o["group"] == "l40s" and o["world_size"] == int(os.environ["GPUS"]))
l = o.get("limits")
if l is None:
    raise SystemExit("no limits in the plan: " + str(p["queue"].get("limits_unavailable")))
print(f'{l["verdict"]}|{l["reason"] or ""}|{l["account"]}|{l["qos"]}')
PY
}

# expect_reason ACCOUNT QOS GPUS REASON VERDICT: plan predicts it, squeue shows it.
expect_reason() {
  local account=$1 qos=$2 gpus=$3 reason=$4 verdict=$5 got id shown=""
  got=$(plan_limit "$gpus" --account "$account" --qos "$qos")
  [[ $got == "$verdict|$reason|$account|$qos" ]] ||
    fail "plan predicted '$got' for $account/$qos, $gpus GPUs; expected $verdict|$reason"
  id=$(submit spec.yaml --profile "$PROFILE" --target l40s --gpus "$gpus" --nodes 1 \
    --account "$account" --qos "$qos")
  for _ in $(seq 50); do
    shown=$(squeue -h -o %r -j "$id")
    [[ $shown == "$reason" ]] && break
    sleep 0.2
  done
  [[ $shown == "$reason" ]] || fail "job $id pends for '$shown', jobgen predicted '$reason'"
  scancel "$id"
  echo "ok: $account/$qos $gpus GPU(s): predicted $verdict $reason, squeue says $shown"
}
expect_reason ml normal 1 QOSMaxGRESPerUser pends
expect_reason vision high 1 AssocGrpGRES pends
sacctmgr -i modify qos normal set MaxTRESPerJob=gres/gpu=1 >/dev/null
expect_reason vision normal 2 QOSMaxGRESPerJob never
# Job counts and wall time come before TRES: root's association with vision may run 1 job (it
# runs the blocker), and qos high allows 10 minutes per job (jobgen asks at least 15).
sacctmgr -i modify user root where account=vision set MaxJobs=1 >/dev/null
expect_reason vision high 1 AssocMaxJobsLimit pends
sacctmgr -i modify user root where account=vision set MaxJobs=-1 >/dev/null
sacctmgr -i modify qos high set MaxWall=00:10:00 >/dev/null
expect_reason ml high 1 QOSMaxWallDurationPerJobLimit never
sacctmgr -i modify qos high set MaxWall=-1 >/dev/null
"$JOBGEN" plan spec.yaml --profile "$PROFILE" --target l40s --gpus 1 --nodes 1 --account ml \
  --qos normal >plan.txt
grep -q "pends: QOSMaxGRESPerUser (qos \`normal\` allows 2 GPUs per user, you use 2" plan.txt ||
  fail "plan's text does not explain the limit: $(cat plan.txt)"

# No account or QOS given: the plan picks one where nothing holds the job (qos high in ml), and
# submit --target auto runs it there.
got=$(plan_limit 1)
[[ $got == "starts||ml|high" ]] || fail "plan chose '$got', expected starts in ml/high"
id=$(submit spec.yaml --profile "$PROFILE" --target auto --gpus 1 --nodes 1)
wait_state "$id" RUNNING
[[ $(squeue -h -o '%a|%q' -j "$id") == "ml|high" ]] || fail "job $id runs in $(squeue -h -o '%a|%q' -j "$id")"
release_held
echo "ok: no account given: plan chose ml/high, --target auto runs job $id there"

if [[ -n ${JOBGEN_ACCT_RECORD:-} ]]; then
  v=$JOBGEN_CLUSTER_SLURM_VERSION
  mkdir -p "$JOBGEN_ACCT_RECORD"
  fmt_assoc=Cluster,Account,User,Partition,ParentName,QOS,DefaultQOS,GrpJobs,GrpSubmit,GrpTRES,MaxJobs,MaxSubmit,MaxTRES,MaxWall
  fmt_qos=Name,Priority,GrpJobs,GrpTRES,MaxTRES,MaxTRESPU,MaxTRESPA,MaxJobsPU,MaxJobsPA,MaxSubmitPU,MaxWall
  sacctmgr -n -P show assoc format=$fmt_assoc >"$JOBGEN_ACCT_RECORD/sacctmgr-assoc-limits-$v.txt"
  sacctmgr -n -P show qos format=$fmt_qos >"$JOBGEN_ACCT_RECORD/sacctmgr-qos-limits-$v.txt"
  sshare -n -P -U -u root >"$JOBGEN_ACCT_RECORD/sshare-user-$v.txt"
  squeue -h -r -O "$(python3 -c 'print("".join(f"{f}:\x1f," for f in "JobArrayID JobID ArrayJobID ArrayTaskID State Reason Partition NumNodes NodeList SubmitTime StartTime EndTime TimeLimit tres-per-node UserName Dependency WorkDir Comment exit_code STDOUT STDERR Account QOS".split())+"Name:\x1e")')" \
    >"$JOBGEN_ACCT_RECORD/squeue-acct-$v.txt"
  echo "recorded into $JOBGEN_ACCT_RECORD"
fi
