#!/usr/bin/env bash
# Slurm accounting on the acct cluster (cluster.sh JOBGEN_CLUSTER_SHAPE=acct): a job jobgen submits
# is in slurmdbd's records once it ends, with what it used (sacct: the batch step's MaxRSS and
# TotalCPU, the GPUs in AllocTRES as gres/gpu), and sacctmgr lists the associations cluster.sh made.
# With JOBGEN_ACCT_RECORD=DIR it also writes the answers the unit tests read (tests/data/slurm-cli:
# sacct, sacctmgr show assoc and qos, sshare, named by Slurm version) to DIR.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"
[[ -n ${JOBGEN_CLUSTER_DBD_PORT:-} ]] || { echo "SKIP: $JOBGEN_CLUSTER_DIR has no accounting"; exit 77; }
PROFILE=$JOBGEN_SOURCE_DIR/tests/integration/acct-profile.yaml

# The associations cluster.sh promises: root in ml and vision, QOS normal and high.
sacctmgr -n -P show assoc where user=root format=Account,User,QOS,DefaultQOS >assoc.txt
for account in $JOBGEN_CLUSTER_ACCOUNTS; do
  grep -qx "$account|root|high,normal|normal" assoc.txt || fail "no association root/$account: $(cat assoc.txt)"
done
echo "ok: associations: $(tr '\n' ' ' <assoc.txt)"

# A job that holds 256 MiB in a shell variable and spins 7 s (longer than one
# JobAcctGatherFrequency sample); bash, as a Slurm root has no python.
cat >"$WORK/hog.sh" <<'SH'
held=$(head -c 268435456 /dev/zero | tr '\0' x)
end=$((SECONDS + 7))
while ((SECONDS < end)); do :; done
echo "${#held} bytes held"
SH
write_spec spec.yaml jg-acct "bash $WORK/hog.sh"
id=$(submit spec.yaml --profile "$PROFILE" --target l40s --gpus 1)
wait_state "$id" COMPLETED
fields=JobID,State,Elapsed,MaxRSS,TotalCPU,AllocTRES
# slurmdbd hears of the end from slurmctld a moment after scontrol shows it, the batch step's
# end and the job's in separate messages: wait for both (under load the job's comes later).
for ((i = 0; i < 150 * TS; i++)); do
  sacct -n -P -j "$id" -o "$fields" >sacct.txt
  grep -q "^$id.batch|COMPLETED|" sacct.txt && grep -q "^$id|COMPLETED|" sacct.txt && break
  sleep 0.2
done
echo "sacct -j $id: $(tr '\n' ' ' <sacct.txt)"
IFS='|' read -r _ state _ _ _ tres < <(grep "^$id|" sacct.txt) || fail "sacct has no job $id"
[[ $state == COMPLETED ]] || fail "job $id is $state in sacct"
[[ ,$tres, == *,gres/gpu=1,* ]] || fail "AllocTRES of $id has no gres/gpu=1: $tres"
IFS='|' read -r _ _ _ rss cpu _ < <(grep "^$id.batch|" sacct.txt) || fail "sacct has no batch step"
# MaxRSS in KiB, MiB or GiB (K/M/G): at least the 256 MiB the job held.
kib=$(awk -v r="$rss" 'BEGIN { m = 1; u = substr(r, length(r))
  if (u == "K") m = 1; else if (u == "M") m = 1024; else if (u == "G") m = 1048576; else m = 1 / 1024
  print int(r * m) }')
((kib >= 256 * 1024)) || fail "batch step MaxRSS $rss (${kib} KiB) is below the 256 MiB the job held"
# TotalCPU [DD-][HH:]MM:SS.mmm: the job spun for about 7 s.
secs=$(awk -v t="$cpu" 'BEGIN { n = split(t, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print int(s) }')
((secs >= 1)) || fail "batch step TotalCPU $cpu is below 1 s: the job spun for 7"
echo "ok: job $id COMPLETED, AllocTRES $tres, batch MaxRSS $rss, TotalCPU $cpu"

if [[ -n ${JOBGEN_ACCT_RECORD:-} ]]; then
  v=$JOBGEN_CLUSTER_SLURM_VERSION
  mkdir -p "$JOBGEN_ACCT_RECORD"
  sacct -P -j "$id" -o JobID,JobIDRaw,JobName,User,Account,QOS,Partition,State,ExitCode,Submit,Start,End,Elapsed,Timelimit,NCPUS,ReqMem,AllocTRES,MaxRSS,TotalCPU,NodeList \
    >"$JOBGEN_ACCT_RECORD/sacct-acct-$v.txt"
  sacctmgr -P show assoc >"$JOBGEN_ACCT_RECORD/sacctmgr-assoc-$v.txt"
  sacctmgr -P show qos >"$JOBGEN_ACCT_RECORD/sacctmgr-qos-$v.txt"
  sshare -P -a >"$JOBGEN_ACCT_RECORD/sshare-$v.txt"
  echo "recorded into $JOBGEN_ACCT_RECORD"
fi
