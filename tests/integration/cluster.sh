#!/usr/bin/env bash
# A throwaway Slurm cluster on loopback that mirrors the `markov` profile
# (cluster-profiles/markov.yaml): munged (reused if already running), slurmctld, one slurmd per node
# (21 nodes, fake GPU gres including the MIG type) and slurmrestd with JWT, everything under one
# directory. Slurm 22.05 from this machine's packages, or another version from a Debian root
# (JOBGEN_SLURM_ROOT below).
#
#   cluster.sh start DIR    start (a cluster already running in DIR is stopped first)
#   cluster.sh stop DIR     stop exactly the processes recorded in DIR/pids (safe to repeat)
#   cluster.sh status DIR   print the recorded processes and sinfo; exit 0 only if all alive
#   cluster.sh check        exit 1 naming the Debian package of each missing program or plugin
#   cluster.sh restart DIR slurmctld|slurmrestd
#                           stop that daemon (if it runs) and start it again, recorded (fault tests)
#
# Contract for tests: `source DIR/env.sh` exports SLURM_CONF, SLURMRESTD_URL, SLURM_JWT (root),
# JOBGEN_CLUSTER_DIR, JOBGEN_CLUSTER_SLURM_VERSION ("22.05"), JOBGEN_CLUSTER_REST_VERSION (an API
# version the slurmrestd serves, "v0.0.38"), JOBGEN_CLUSTER_REST_PLUGINS (its -s argument) and
# JOBGEN_CLUSTER_SPARE_PORT (a loopback port no other cluster uses, for a test's own daemon). Ports: slurmctld 17000, node classtNN 17000+NN, slurmrestd the first
# free port from 17080. Only one cluster per machine can own these ports.
#
# JOBGEN_CLUSTER_SHAPE=site (for `start`) starts another shape instead, on ports 17100+ so that
# it can run beside markov: tests/integration/site-profile.yaml describes it (a node with two GPU
# types, full GPUs beside MIG slices, untyped gres on nodes in two partitions, MaxTime=INFINITE).
#
# JOBGEN_CLUSTER_SHAPE=acct starts a cluster with Slurm accounting, on ports 17040+ (between markov's
# nodes and its slurmrestd): tests/integration/acct-profile.yaml describes it (acct-l40s[1-2] with
# gres gpu:gpul40s:2 each, acct-2080 with gpu:gpu2080:4; partition `gpu`: all three, the default,
# MaxTime 1 day; `long`: acct-2080, MaxTime 3 days). Beside the other daemons it runs, every file
# under DIR: a MariaDB server (this machine's mariadbd; datadir DIR/mysql, socket DIR/run/mysql.sock,
# TCP 127.0.0.1:17051, user `slurm` with a password made at start) and slurmdbd
# (DIR/etc/slurmdbd.conf, mode 600; DbdPort 17050). slurm.conf has
# AccountingStorageEnforce=associations,limits,qos (limits set with sacctmgr hold jobs with Slurm's
# own reasons), AccountingStorageTRES=gres/gpu (GPUs accounted and limitable as gres/gpu),
# JobAcctGatherType=jobacct_gather/linux (sacct shows the steps' MaxRSS and TotalCPU) and
# PriorityType=priority/multifactor (sshare shows fair-share). Made with sacctmgr: cluster `acct`,
# accounts `ml` and `vision` (under root), user root (and $SUDO_USER when set) in both with default
# account `ml`, QOS `normal` (default) and `high` (Priority=10), both allowed; no limits anywhere.
# A test that sets limits undoes them before it ends: the tests of a cluster run one after another.
# Its env.sh adds JOBGEN_CLUSTER_ACCOUNTS ("ml vision"), JOBGEN_CLUSTER_QOS ("normal high") and
# JOBGEN_CLUSTER_DBD_PORT; sacct, sacctmgr and sshare of the cluster's Slurm work after sourcing it.
# `stop` ends slurmdbd and then mariadbd after the Slurm daemons.
#
# JOBGEN_SLURM_ROOT=ROOT (for `start` and `check`) runs another Slurm version: the daemons and the
# client tools of the Debian root ROOT made by slurm_root.sh (Debian trixie: Slurm 24.11), each in
# a chroot through DIR/bin/<program> wrappers that env.sh puts first on PATH, on ports 10000 higher
# (27000+; JOBGEN_CLUSTER_ROOT_PORTS below), so that it runs beside a 22.05 cluster. munged stays this machine's (its socket is
# bound into the root); ROOT sees /tmp, DIR and this checkout. Without ROOT, `start` exits 77.
set -euo pipefail

readonly SHAPE=${JOBGEN_CLUSTER_SHAPE:-markov}
# JOBGEN_CLUSTER_PORT_OFFSET (a multiple of 200, default 0) moves every port, so that clusters of
# two checkouts can run at once on one machine.
readonly PORT_OFFSET=${JOBGEN_CLUSTER_PORT_OFFSET:-0}
if ! [[ $PORT_OFFSET =~ ^[0-9]+$ ]] || ((PORT_OFFSET % 200 != 0 || PORT_OFFSET > 40000)); then
  echo "cluster.sh: error: JOBGEN_CLUSTER_PORT_OFFSET must be a multiple of 200 up to 40000 (got '$PORT_OFFSET')" >&2
  exit 1
fi
# A cluster of another Slurm (JOBGEN_SLURM_ROOT) is JOBGEN_CLUSTER_ROOT_PORTS (default 10000; the
# 26.05 tests use 5000) ports higher, beside the 22.05 one.
readonly ROOT_PORTS=${JOBGEN_CLUSTER_ROOT_PORTS:-10000}
BASE_PORT=$((17000 + PORT_OFFSET))
if [[ -n ${JOBGEN_SLURM_ROOT:-} ]]; then
  [[ $ROOT_PORTS =~ ^[0-9]+$ ]] && BASE_PORT=$((BASE_PORT + ROOT_PORTS))
  if ! [[ $ROOT_PORTS =~ ^[0-9]+$ ]] || ((ROOT_PORTS % 200 != 0 || BASE_PORT > 65000)); then
    echo "cluster.sh: error: JOBGEN_CLUSTER_ROOT_PORTS must be a multiple of 200 that keeps the ports (from $BASE_PORT) below 65000 (got '$ROOT_PORTS', offset $PORT_OFFSET)" >&2
    exit 1
  fi
fi
# SPARE_PORT is the cluster's own for its tests' extra daemons (a second slurmrestd): its tests run
# one at a time, while other clusters' tests run beside them.
case $SHAPE in
  markov) readonly CTLD_PORT=$BASE_PORT REST_PORT=$((BASE_PORT + 80)) SPARE_PORT=$((BASE_PORT + 90)) ;;
  site) readonly CTLD_PORT=$((BASE_PORT + 100)) REST_PORT=$((BASE_PORT + 180)) SPARE_PORT=$((BASE_PORT + 190)) ;;
  acct) readonly CTLD_PORT=$((BASE_PORT + 40)) REST_PORT=$((BASE_PORT + 60)) SPARE_PORT=$((BASE_PORT + 70)) ;;
  *) echo "cluster.sh: error: unknown JOBGEN_CLUSTER_SHAPE '$SHAPE' (markov, site or acct)" >&2; exit 1 ;;
esac
# The acct shape's slurmdbd and MariaDB server, and what it creates with sacctmgr.
readonly DBD_PORT=$((BASE_PORT + 50)) DB_PORT=$((BASE_PORT + 51))
readonly ACCOUNTS="ml vision" QOS_NAMES="normal high"
readonly START_TIMEOUT=${JOBGEN_CLUSTER_TIMEOUT:-60}
SLURM_ROOT=${JOBGEN_SLURM_ROOT:-}
# Physical, as /proc shows the paths (stepd_pids).
[[ -n $SLURM_ROOT && -d $SLURM_ROOT ]] && SLURM_ROOT=$(cd "$SLURM_ROOT" && pwd -P)
readonly SLURM_ROOT
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
readonly HERE SOURCE_ROOT=${HERE%/tests/integration}
readonly STOP_GRACE=10

# name|port offset|Gres|CPUs|RealMemory (MiB)|Features|Weight. markov: must match
# cluster-profiles/markov.yaml; site: tests/integration/site-profile.yaml; acct:
# tests/integration/acct-profile.yaml.
node_table() {
  local n
  if [[ $SHAPE == acct ]]; then
    echo "acct-l40s1|1|gpu:gpul40s:2|16|131072|"
    echo "acct-l40s2|2|gpu:gpul40s:2|16|131072|"
    echo "acct-2080|3|gpu:gpu2080:4|16|65536|"
    return
  fi
  if [[ $SHAPE == site ]]; then
    echo "nu-gpu01|31|gpu:geforce_gtx_1080_ti:2,gpu:titan_xp:1|16|65536|pascal|10"
    echo "amig1|32|gpu:a100l:1,gpu:1g.10gb:7,gpu:2g.20gb:3|32|262144|a100|50"
    echo "old-gpu1|33|gpu:2|8|32768|t4"
    echo "old-gpu2|34|gpu:2|8|32768|t4"
    return
  fi
  for n in 01 02 03 04 05 07 08 09 10 11 12 13 14 15 16; do echo "classt$n|$n|gpu:gpu2080:4|32|131072|"; done
  echo "classt06|06|gpu:gpu4070:4|32|131072|"
  echo "classt21|21|gpu:gpul40s:6|64|524288|"
  echo "classt22|22|gpu:gpul40s:6|64|524288|"
  echo "classt23|23|gpu:h100nvl_1g.12gb:14|64|524288|"
  echo "classt24|24|gpu:h100nvl_1g.12gb:14|64|524288|"
  echo "classt25|25|gpu:gpu4090:4|32|262144|"
}
node_count() { node_table | wc -l; }

partition_lines() {
  if [[ $SHAPE == acct ]]; then
    echo "PartitionName=gpu Nodes=ALL Default=YES MaxTime=1-00:00:00 State=UP"
    echo "PartitionName=long Nodes=acct-2080 MaxTime=3-00:00:00 DefaultTime=01:00:00 State=UP"
  elif [[ $SHAPE == site ]]; then
    echo "PartitionName=shared Nodes=nu-gpu01,amig1,old-gpu[1-2] Default=YES MaxTime=1-00:00:00 DefaultTime=01:00:00 State=UP"
    echo "PartitionName=long Nodes=old-gpu[1-2] MaxTime=INFINITE DefaultTime=1-00:00:00 State=UP"
  else
    echo "PartitionName=markov_gpu Nodes=ALL Default=YES MaxTime=2-00:00:00 State=UP"
  fi
}

die() { echo "cluster.sh: error: $*" >&2; exit 1; }
log() { echo "cluster.sh: $*" >&2; }

# Process identity is pid + start time (field 22 of /proc/PID/stat), so a recycled pid is
# never mistaken for one of ours.
start_time() { awk '{sub(/^.*\) /, ""); print $20}' "/proc/$1/stat" 2>/dev/null; }
record_pid() { # NAME PID
  local st
  st=$(start_time "$2") || true
  [[ -n $st ]] || die "$1 (pid $2) exited right after starting; see $DIR/log/"
  echo "$2 $st" >"$DIR/pids/$1.pid"
}
alive() { # PIDFILE -> prints pid if the recorded process still runs
  local pid st
  read -r pid st <"$1" 2>/dev/null || return 1
  [[ -n ${pid:-} && "$(start_time "$pid")" == "${st:-x}" ]] && echo "$pid"
}

port_holders() { # PORT... -> "port: pid N: command line" for each port someone listens on
  local p pid
  for p in "$@"; do
    [[ -n $(ss -Htln "sport = :$p") ]] || continue
    pid=$(ss -Htlnp "sport = :$p" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -n 1)
    echo "  $p: pid ${pid:-?}: $(ps -o args= -p "${pid:-0}" 2>/dev/null || echo unknown)"
  done
}

set_dir() {
  [[ -n ${1:-} ]] || die "missing DIR (usage: cluster.sh start|stop|status DIR)"
  [[ ${2:-} == create ]] && mkdir -p "$1"
  if [[ -d $1 ]]; then DIR=$(cd "$1" && pwd -P); else DIR=$1; fi
  CONF="$DIR/etc/slurm.conf"
  # A cluster started from a Slurm root is driven through its wrappers, also by stop and status.
  [[ ${2:-} != create && -x $DIR/bin/slurmctld ]] && export PATH=$DIR/bin:$PATH
  return 0
}

any_alive() {
  local f
  for f in "$DIR"/pids/*.pid; do [[ -e $f ]] && alive "$f" >/dev/null && return 0; done
  return 1
}

show_logs() {
  local f
  for f in "$DIR/log/slurmctld.log" "$DIR/log/slurmrestd.out" "$DIR/log/slurmdbd.log" \
    "$DIR/log/mariadbd.log" "$DIR/log/sacctmgr.log"; do
    [[ -s $f ]] && { echo "===== $f (last 20 lines)"; tail -n 20 "$f"; } >&2
  done
  for f in "$DIR"/log/slurmd-*.log; do # errors only, without the harmless PMIx noise
    if [[ -s $f ]]; then
      grep -iE 'error|fatal' "$f" | grep -viE 'pmix|mpi' | sed "s|^|$(basename "$f"): |" >&2 || true
    fi
  done
  return 0
}

# --- munge -----------------------------------------------------------------------------------
munge_works() { munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; }

# munged is one per machine (/run/munge) while several clusters may run at once (markov and
# site in one ctest run): each cluster registers under MUNGE_SHARED, and the last one to stop
# stops the munged that one of them started. A munged started by someone else is left alone.
MUNGE_SHARED=/run/jobgen-munge
munge_lock() {
  mkdir -p "$MUNGE_SHARED/users"
  exec {MUNGE_LOCK_FD}>"$MUNGE_SHARED/lock"
  flock "$MUNGE_LOCK_FD"
}
munge_unlock() { exec {MUNGE_LOCK_FD}>&-; }
munge_registration() { echo "$MUNGE_SHARED/users/$(printf '%s' "$DIR" | md5sum | cut -c1-16)"; }

start_munge() {
  munge_lock
  if munge_works; then
    log "munged already running: reusing it"
  else
    launch_munge
  fi
  echo "$DIR" >"$(munge_registration)"
  munge_unlock
}

stop_munge() {
  munge_lock
  rm -f "$(munge_registration)"
  local pid
  if [[ -z $(ls -A "$MUNGE_SHARED/users") && -e $MUNGE_SHARED/munged.pid ]]; then
    if pid=$(alive "$MUNGE_SHARED/munged.pid"); then terminate "$pid"; fi
    rm -f "$MUNGE_SHARED/munged.pid"
  fi
  munge_unlock
}

launch_munge() {
  if [[ ! -s /etc/munge/munge.key ]]; then
    log "creating /etc/munge/munge.key"
    mkdir -p /etc/munge
    mungekey --create --keyfile=/etc/munge/munge.key 2>/dev/null ||
      dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
    chmod 400 /etc/munge/munge.key
  fi
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown -R munge:munge /run/munge /var/log/munge /var/lib/munge /etc/munge
  rm -f /run/munge/munged.pid
  # Without the lock's descriptor: a daemon that inherits it would hold the lock for its life.
  su -s /bin/sh munge -c munged {MUNGE_LOCK_FD}>&- ||
    die "munged failed to start (see /var/log/munge/munged.log)"
  local i pid=""
  for ((i = 0; i < 50; i++)); do
    pid=$(cat /run/munge/munged.pid 2>/dev/null || true)
    [[ -n $pid ]] && munge_works && break
    sleep 0.1
  done
  munge_works || die "munged started but 'munge -n | unmunge' fails"
  local st
  st=$(start_time "$pid") || die "munged (pid $pid) exited right after starting"
  echo "$pid $st" >"$MUNGE_SHARED/munged.pid"
  log "started munged (pid $pid)"
}

# --- configuration -----------------------------------------------------------------------------
# slurm.conf's accounting lines: none, but for the acct shape.
accounting_config() {
  if [[ $SHAPE != acct ]]; then
    printf '%s\n' JobAcctGatherType=jobacct_gather/none AccountingStorageType=accounting_storage/none
    return
  fi
  cat <<EOF
# Accounting through slurmdbd (the acct shape): limits enforced, GPUs a TRES.
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$DBD_PORT
AccountingStorageEnforce=associations,limits,qos
AccountingStorageTRES=gres/gpu
# linuxproc reads /proc: the steps' MaxRSS and TotalCPU without cgroups, sampled every 5 s and at
# the end of each task.
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=5
# Fair-share, for sshare.
PriorityType=priority/multifactor
PriorityWeightFairshare=10000
PriorityWeightAge=100
EOF
}

write_config() {
  local name off gres cpus mem features weight entry type count i next devs
  {
    cat <<EOF
# Generated by tests/integration/cluster.sh: the $SHAPE shape on one machine.
ClusterName=$SHAPE
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$DIR/etc/jwt.key
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd-%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
# No systemd/cgroups in containers; nodes may declare more CPUs/memory than the host has.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
$(accounting_config)
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
MailProg=/bin/true
SlurmdParameters=config_overrides
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1024
GresTypes=gpu
ReturnToService=2
# Fast scheduling for tests.
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2,sched_min_interval=100000,bf_interval=1,bf_resolution=60
MessageTimeout=10
TCPTimeout=5
SlurmctldTimeout=30
SlurmdTimeout=60
InactiveLimit=0
KillWait=2
MinJobAge=300
# bench/status_vs_squeue.sh 10000 submits a 10,000-task sweep (Slurm's default limit is 1,001).
MaxArraySize=10001
MaxJobCount=50000
EOF
    while IFS='|' read -r name off gres cpus mem features weight; do
      echo "NodeName=$name NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((CTLD_PORT + 10#$off)) CPUs=$cpus RealMemory=$mem Gres=$gres${features:+ Features=$features}${weight:+ Weight=$weight} State=UNKNOWN"
    done < <(node_table)
    partition_lines
  } >"$CONF"

  echo "AutoDetect=off" >"$DIR/etc/gres.conf"
  while IFS='|' read -r name off gres cpus mem _ _; do
    mkdir -p "$DIR/dev/$name"
    next=0
    # One gres.conf line per Gres entry ("gpu:TYPE:N" or untyped "gpu:N"), its own device files.
    for entry in ${gres//,/ }; do
      IFS=: read -r _ type count <<<"$entry"
      [[ -n $count ]] || { count=$type; type=""; }
      # Slurm only sets CUDA_VISIBLE_DEVICES/SLURM_JOB_GPUS for character devices: plain files
      # are rejected ("not a valid character or block device"), so each fake GPU links to /dev/null.
      for ((i = next; i < next + count; i++)); do ln -s /dev/null "$DIR/dev/$name/nvidia$i"; done
      devs="$DIR/dev/$name/nvidia[$next-$((next + count - 1))]"
      next=$((next + count))
      echo "NodeName=$name Name=gpu${type:+ Type=$type} File=$devs" >>"$DIR/etc/gres.conf"
    done
  done < <(node_table)

  # 32 random bytes; only slurmctld (root) reads it, slurmrestd just forwards tokens.
  dd if=/dev/urandom of="$DIR/etc/jwt.key" bs=32 count=1 status=none
  chmod 600 "$DIR/etc/jwt.key"
  chmod 644 "$CONF" "$DIR/etc/gres.conf"
}

free_port() { # first port from $1 nobody listens on
  local p=$1
  while [[ -n $(ss -Htln "sport = :$p") ]]; do p=$((p + 1)); done
  echo "$p"
}

# Start a foreground daemon in its own session (so CTest's process group and terminal signals
# never reach it) and record its pid. $1 = name, rest = command.
launch() {
  local name=$1
  shift
  setsid "$@" </dev/null >"$DIR/log/$name.out" 2>&1 &
  record_pid "$name" $!
}

wait_for() { # DESCRIPTION COMMAND... : poll until COMMAND succeeds or START_TIMEOUT passes
  local what=$1 deadline=$((SECONDS + START_TIMEOUT))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || die "timed out after ${START_TIMEOUT}s waiting for $what"
    sleep 0.2
  done
}

all_nodes_idle() {
  local n
  n=$(sinfo -h -N -o '%N %T' 2>/dev/null | awk '$2 == "idle"' | sort -u | wc -l)
  [[ $n -eq $(node_count) ]]
}

ctld_up() { scontrol ping >/dev/null 2>&1; }

rest_ping() {
  curl -sf -o /dev/null -H "X-SLURM-USER-NAME: root" -H "X-SLURM-USER-TOKEN: $SLURM_JWT" \
    "$SLURMRESTD_URL/slurm/$REST_VERSION/ping"
}

# SLURM_VERSION ("24.11") of the slurmctld on PATH, and what differs with it: REST_VERSION, the
# API the ping uses, and REST_PLUGINS, slurmrestd's -s (22.05 has a plugin per API version; 23.02+
# has openapi/slurmctld with the versions as data_parser plugins).
detect_version() {
  local v
  v=$(slurmctld -V) || die "slurmctld -V failed"
  SLURM_VERSION=$(sed -n 's/^slurm[^ ]* \([0-9]*\.[0-9]*\).*/\1/p' <<<"$v")
  [[ -n $SLURM_VERSION ]] || die "cannot read the version in slurmctld -V: '$v'"
  # An API every release of the range serves (23.02: v0.0.37-39 ... 24.05: v0.0.39-41; 24.11:
  # v0.0.40-42 ... 26.05: v0.0.42-45).
  if version_before 23.02; then
    REST_VERSION=v0.0.38 REST_PLUGINS=openapi/v0.0.38
  elif version_before 24.11; then
    REST_VERSION=v0.0.39 REST_PLUGINS=openapi/slurmctld
  else
    REST_VERSION=v0.0.42 REST_PLUGINS=openapi/slurmctld
  fi
}
version_before() { # X.Y: is SLURM_VERSION older?
  local a=${SLURM_VERSION%%.*} b=${SLURM_VERSION#*.} x=${1%%.*} y=${1#*.}
  ((10#$a < 10#$x || (10#$a == 10#$x && 10#$b < 10#$y)))
}

launch_slurmrestd() { # PORT
  # nobody's ids, not its name: slurmrestd 26.05 refuses '-u nobody' ("Unable to resolve user").
  SLURM_JWT=daemon launch slurmrestd slurmrestd -f "$CONF" -a rest_auth/jwt -u 65534 -g 65534 \
    -s "$REST_PLUGINS" "127.0.0.1:$1"
}

# --- accounting (the acct shape) -----------------------------------------------------------------
# mariadbd's options (--no-defaults first: no /etc/mysql file applies): everything under DIR, and
# small, unsynced InnoDB files, since the data goes with the cluster and a crash-safe write per
# commit would only cost time. slurmdbd logs that it recommends larger InnoDB buffers and lock
# timeouts; the tests' few jobs do not need them.
db_options() {
  DB_OPTIONS=(--no-defaults --user=root "--datadir=$DIR/mysql" "--tmpdir=$DIR/run" --skip-name-resolve
    --skip-log-bin --innodb-log-file-size=8M --innodb-buffer-pool-size=32M
    --innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0)
}
db_socket() { echo "$DIR/run/mysql.sock"; }
db_sql() { mariadb --no-defaults --protocol=socket -S "$(db_socket)" -u root -e "$1"; }
db_up() { db_sql 'SELECT 1' >/dev/null 2>&1; }

# A MariaDB server of its own with the database user slurmdbd logs in as (root logs in over the
# socket as the Unix user root; `slurm` over TCP from 127.0.0.1, which a Slurm root reaches too).
start_mariadb() {
  local sock
  sock=$(db_socket)
  ((${#sock} < 108)) || die "the MariaDB socket $sock is longer than a Unix socket path may be (107 bytes): use a shorter DIR"
  db_options
  mariadb-install-db "${DB_OPTIONS[@]}" --auth-root-authentication-method=socket --skip-test-db \
    >"$DIR/log/mariadb-install-db.log" 2>&1 ||
    die "mariadb-install-db failed (see $DIR/log/mariadb-install-db.log)"
  launch mariadbd mariadbd "${DB_OPTIONS[@]}" "--socket=$sock" "--pid-file=$DIR/run/mariadbd.pid" \
    "--port=$DB_PORT" --bind-address=127.0.0.1 "--log-error=$DIR/log/mariadbd.log"
  wait_for "MariaDB on $sock" db_up
  DB_PASSWORD=$(head -c 18 /dev/urandom | base64 | tr '+/' 'xy')
  db_sql "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$DB_PASSWORD';
          GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';" ||
    die "creating the database user slurm failed"
}

# slurmdbd reads slurmdbd.conf beside $SLURM_CONF; it refuses a file others may read (the password).
# It takes JWTs too: a client with env.sh's SLURM_JWT (sacctmgr, sacct) authenticates with it.
write_slurmdbd_conf() {
  local conf=$DIR/etc/slurmdbd.conf
  (
    umask 077
    cat >"$conf" <<EOF
# Generated by tests/integration/cluster.sh: the acct shape's slurmdbd.
AuthType=auth/munge
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$DIR/etc/jwt.key
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
LogFile=$DIR/log/slurmdbd.log
PidFile=$DIR/run/slurmdbd.pid
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=$DB_PASSWORD
StorageLoc=slurm_acct_db
EOF
  )
  chmod 600 "$conf"
}

dbd_up() { timeout 10 sacctmgr -n show cluster >/dev/null 2>&1; }

# The associations the header promises, before slurmctld starts (it reads them once at start).
# One sacctmgr reads every command (one connection: 2 s instead of 4); it exits non-zero when one
# of them fails.
make_associations() {
  local users=root
  [[ -n ${SUDO_USER:-} && $SUDO_USER != root ]] && users+=",$SUDO_USER"
  # root exists already (in account root): `add user` keeps its default account, `modify` sets it.
  printf '%s\n' "add cluster $SHAPE" \
    "add qos high Priority=10" \
    "add account ${ACCOUNTS// /,} Cluster=$SHAPE Organization=jobgen Description=test" \
    "add user $users Cluster=$SHAPE Account=${ACCOUNTS// /,} DefaultAccount=${ACCOUNTS%% *} QOS=${QOS_NAMES// /,} DefaultQOS=${QOS_NAMES%% *}" \
    "modify user where name=$users set DefaultAccount=${ACCOUNTS%% *}" |
    timeout 60 sacctmgr -i >"$DIR/log/sacctmgr.log" 2>&1 ||
    die "creating the accounts with sacctmgr failed (see $DIR/log/sacctmgr.log)"
}

start_accounting() {
  start_mariadb
  write_slurmdbd_conf
  launch slurmdbd slurmdbd -D
  wait_for "slurmdbd on port $DBD_PORT (sacctmgr show cluster)" dbd_up
  make_associations
}

start_failed() { # EXIT trap while starting: leave nothing running behind
  set +e
  show_logs
  log "start failed; stopping what was started (logs stay in $DIR/log)"
  cmd_stop "$DIR" || true
}

cmd_start() {
  # A token left in the caller's shell (another cluster's env.sh) would make the daemons switch
  # AuthType to auth/jwt and this script's own sinfo fail; this cluster makes its own.
  unset SLURM_JWT
  set_dir "$1" create
  if [[ -n $SLURM_ROOT && ! -x $SLURM_ROOT/bin/sh ]]; then
    rm -f "$DIR/env.sh" # the tests skip without it
    log "skipped: no Slurm root in $SLURM_ROOT (make it with 'make slurm24-root' or 'make slurm26-root')"
    exit 77
  fi
  cd "$DIR" # the daemons' working directory must outlive the caller's
  local t0=$SECONDS
  if any_alive; then
    log "a cluster is already running in $DIR: stopping it first"
    cmd_stop "$DIR"
  fi
  local ports=("$CTLD_PORT") name
  local off
  while IFS='|' read -r name off _; do ports+=($((CTLD_PORT + 10#$off))); done < <(node_table)
  [[ $SHAPE != acct ]] || ports+=("$DBD_PORT" "$DB_PORT")
  local held
  held=$(port_holders "${ports[@]}")
  if [[ -n $held ]]; then
    die "ports ${ports[*]} are in use (another test cluster? stop it with 'cluster.sh stop ITS_DIR'):"$'\n'"$held"
  fi
  cmd_check "$SHAPE" >/dev/null || die "$(cmd_check "$SHAPE" 2>&1)"

  # Fresh state every time; only our own subdirectories are wiped.
  rm -rf "${DIR:?}"/{bin,etc,state,spool,log,run,dev,pids,mysql} "$DIR/env.sh" "$DIR/slurm-root"
  mkdir -p "$DIR"/{etc,state,spool,log,run,dev,pids}
  if [[ -n $SLURM_ROOT ]]; then
    "$HERE/slurm_root.sh" wrappers "$SLURM_ROOT" "$DIR/bin" "$DIR:$SOURCE_ROOT"
    echo "$SLURM_ROOT" >"$DIR/slurm-root"
    export PATH=$DIR/bin:$PATH
  fi
  detect_version
  trap start_failed EXIT
  chmod 755 "$DIR" "$DIR/etc"
  while IFS='|' read -r name _; do mkdir -p "$DIR/spool/$name"; done < <(node_table)

  start_munge
  write_config
  export SLURM_CONF=$CONF JOBGEN_CLUSTER_DIR=$DIR
  [[ $SHAPE != acct ]] || start_accounting

  launch slurmctld slurmctld -D -i -f "$CONF"
  while IFS='|' read -r name _; do launch "slurmd-$name" slurmd -D -f "$CONF" -N "$name"; done < <(node_table)
  wait_for "$(node_count) idle nodes in sinfo" all_nodes_idle

  local port
  port=$(free_port "$REST_PORT")
  export SLURMRESTD_URL="http://127.0.0.1:$port"
  launch_slurmrestd "$port"
  local tok
  tok=$(scontrol token username=root lifespan=604800) || die "scontrol token failed"
  export SLURM_JWT=${tok#SLURM_JWT=}
  wait_for "slurmrestd ping on $SLURMRESTD_URL" rest_ping

  cat >"$DIR/env.sh" <<EOF
# Source this to talk to the test cluster in $DIR (Slurm $SLURM_VERSION).
export SLURM_CONF=$CONF
export SLURMRESTD_URL=$SLURMRESTD_URL
export SLURM_JWT=$SLURM_JWT
export JOBGEN_CLUSTER_DIR=$DIR
export JOBGEN_CLUSTER_SLURM_VERSION=$SLURM_VERSION
export JOBGEN_CLUSTER_REST_VERSION=$REST_VERSION
export JOBGEN_CLUSTER_REST_PLUGINS=$REST_PLUGINS
export JOBGEN_CLUSTER_SPARE_PORT=$SPARE_PORT
EOF
  if [[ $SHAPE == acct ]]; then
    printf 'export %s\n' "JOBGEN_CLUSTER_ACCOUNTS='$ACCOUNTS'" "JOBGEN_CLUSTER_QOS='$QOS_NAMES'" \
      "JOBGEN_CLUSTER_DBD_PORT=$DBD_PORT" >>"$DIR/env.sh"
  fi
  [[ -z $SLURM_ROOT ]] || echo "export PATH=$DIR/bin:\$PATH" >>"$DIR/env.sh"
  trap - EXIT
  log "Slurm $SLURM_VERSION cluster up in $((SECONDS - t0))s: $(node_count) nodes idle, slurmrestd at $SLURMRESTD_URL"
  log "use it with: source $DIR/env.sh"
}

# slurmstepd processes of this cluster (they outlive a killed slurmd). slurmstepd overwrites its
# environment with its process title, so they are recognised by an open file under DIR (the node's
# slurmd log) plus their executable. Those of a Slurm root see DIR through a bind mount of their own
# namespace, which /proc shows from the root: ROOT/DIR/... (ROOT as recorded in DIR/slurm-root).
stepd_pids() {
  local d pid fd root=""
  [[ -f $DIR/slurm-root ]] && root=$(cat "$DIR/slurm-root")
  for d in /proc/[0-9]*; do
    pid=${d#/proc/}
    case $(readlink "$d/exe" 2>/dev/null) in
      */slurmstepd | */slurmstepd-wlm) ;;
      *) continue ;;
    esac
    for fd in "$d"/fd/*; do
      if [[ $(readlink "$fd" 2>/dev/null) == "$root$DIR"/* ]]; then
        echo "$pid"
        break
      fi
    done
  done
  return 0
}

cmd_stop() {
  set_dir "$1"
  [[ -d $DIR/pids ]] || { log "nothing recorded in $DIR"; return 0; }
  # Cancel jobs while slurmctld still runs, so job steps end cleanly.
  if [[ -f $DIR/pids/slurmctld.pid ]] && alive "$DIR/pids/slurmctld.pid" >/dev/null; then
    export SLURM_CONF=$CONF
    local jobs
    jobs=$(timeout 10 squeue -h -o %A 2>/dev/null || true)
    # shellcheck disable=SC2086 # one word per job id
    [[ -z $jobs ]] || timeout 10 scancel --quiet $jobs 2>/dev/null || true
    local i
    for ((i = 0; i < STOP_GRACE * 5; i++)); do
      [[ -z $(timeout 5 squeue -h -t R,CG -o %i 2>/dev/null) ]] && break
      sleep 0.2
    done
  fi
  local f pid pids=() files=()
  # slurmrestd and slurmd's before slurmctld; munged (when no other cluster uses it) last.
  for f in "$DIR"/pids/slurmrestd.pid "$DIR"/pids/slurmd-*.pid "$DIR"/pids/slurmctld.pid; do
    [[ -e $f ]] || continue
    files+=("$f")
    if pid=$(alive "$f"); then pids+=("$pid"); fi
  done
  terminate "${pids[@]}"
  # Job steps orphaned by their slurmd.
  mapfile -t pids < <(stepd_pids)
  terminate "${pids[@]}"
  # The acct shape's slurmdbd once slurmctld has gone (it sends it the jobs' ends), then MariaDB.
  for f in "$DIR"/pids/slurmdbd.pid "$DIR"/pids/mariadbd.pid; do
    [[ -e $f ]] || continue
    files+=("$f")
    if pid=$(alive "$f"); then terminate "$pid"; fi
  done
  stop_munge
  rm -f "${files[@]}"
  log "stopped the cluster in $DIR"
}

# A process counts as gone once it exited (or is a zombie awaiting its reaper) or its pid now
# belongs to another process.
running() { # PID START_TIME
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [[ ${stat%% *} != Z && "$(start_time "$1")" == "$2" ]]
}

terminate() { # PID... : TERM, wait up to STOP_GRACE seconds, then KILL
  (($# > 0)) || return 0
  local p i ids=() left=()
  for p in "$@"; do ids+=("$p:$(start_time "$p")"); done
  kill -TERM "$@" 2>/dev/null || true
  for ((i = 0; i <= STOP_GRACE * 10; i++)); do
    left=()
    for p in "${ids[@]}"; do running "${p%%:*}" "${p#*:}" && left+=("${p%%:*}"); done
    ((${#left[@]} == 0)) && return 0
    sleep 0.1
  done
  log "killing after ${STOP_GRACE}s: ${left[*]}"
  kill -KILL "${left[@]}" 2>/dev/null || true
}

cmd_status() {
  set_dir "$1"
  local f pid ok=0 n=0
  for f in "$DIR"/pids/*.pid; do
    [[ -e $f ]] || continue
    n=$((n + 1))
    if pid=$(alive "$f"); then
      echo "$(basename "$f" .pid): running (pid $pid)"
    else
      echo "$(basename "$f" .pid): NOT running"
      ok=1
    fi
  done
  ((n > 0)) || { echo "no cluster in $DIR"; return 1; }
  if [[ $ok -eq 0 && -f $DIR/env.sh ]]; then
    # shellcheck source=/dev/null
    source "$DIR/env.sh"
    sinfo -o '%P %D %T %N %G' || ok=1
    echo "slurmrestd: $SLURMRESTD_URL"
  fi
  return "$ok"
}

# What the cluster needs, each with the Debian package that ships it: a missing auth/jwt plugin
# otherwise surfaces only as slurmctld's "cannot find auth plugin for auth/jwt". A fourth word
# names the one shape that needs it.
readonly NEEDED=(
  "program slurmctld slurmctld"
  "program slurmd slurmd"
  "program slurmrestd slurmrestd"
  "program scontrol slurm-client"
  "program sinfo slurm-client"
  "program munged munge"
  "program curl curl"
  "program ss iproute2"
  "plugin auth_munge.so slurm-wlm-basic-plugins"
  "plugin gres_gpu.so slurm-wlm-basic-plugins"
  "plugin select_cons_tres.so slurm-wlm-basic-plugins"
  "plugin auth_jwt.so slurm-wlm-jwt-plugin"
  "plugin rest_auth_jwt.so slurmrestd"
  "program slurmdbd slurmdbd acct"
  "program sacctmgr slurm-client acct"
  "program mariadbd mariadb-server acct"
  "program mariadb-install-db mariadb-server acct"
  "program mariadb mariadb-client acct"
  "plugin accounting_storage_slurmdbd.so slurm-wlm-basic-plugins acct"
  "plugin accounting_storage_mysql.so slurm-wlm-mysql-plugin acct"
  "plugin jobacct_gather_linux.so slurm-wlm-basic-plugins acct"
  "plugin priority_multifactor.so slurm-wlm-basic-plugins acct"
)
# Programs this machine runs for every cluster, also one from a Slurm root.
on_this_machine() { case $1 in munged | curl | ss | mariadbd | mariadb-install-db | mariadb) return 0 ;; esac; return 1; }

plugin_found() { # NAME: Slurm's plugin directory as Debian and source builds lay it out
  local d
  for d in "$SLURM_ROOT"/usr/lib/*/slurm-wlm "$SLURM_ROOT"/usr/lib/slurm-wlm \
    "$SLURM_ROOT"/usr/lib64/slurm "$SLURM_ROOT"/usr/lib/slurm "$SLURM_ROOT"/usr/local/lib/slurm; do
    [[ -e $d/$1 ]] && return 0
  done
  return 1
}

program_found() { # NAME: Slurm's programs in SLURM_ROOT when set; on_this_machine ones here
  if [[ -n $SLURM_ROOT ]] && ! on_this_machine "$1"; then
    [[ -x $SLURM_ROOT/usr/sbin/$1 || -x $SLURM_ROOT/usr/bin/$1 ]]
  else
    command -v "$1" >/dev/null
  fi
}

cmd_check() { # [SHAPE]: what that shape needs; without one (`cluster.sh check`), every shape's
  local want=${1:-all} entry kind name package shape missing=() packages=() here_packages=()
  if [[ -n $SLURM_ROOT && ! -x $SLURM_ROOT/bin/sh ]]; then
    echo "cluster.sh: no Slurm root in $SLURM_ROOT (JOBGEN_SLURM_ROOT): make it with" \
      "'make slurm24-root' (trixie) or 'make slurm26-root' (forky)" >&2
    return 1
  fi
  for entry in "${NEEDED[@]}"; do
    read -r kind name package shape <<<"$entry"
    [[ -z $shape || $want == all || $want == "$shape" ]] || continue
    if [[ $kind == program ]]; then
      program_found "$name" && continue
    else
      plugin_found "$name" && continue
    fi
    missing+=("$name (package $package)")
    if [[ -n $SLURM_ROOT ]] && ! { [[ $kind == program ]] && on_this_machine "$name"; }; then
      [[ " ${packages[*]} " == *" $package "* ]] || packages+=("$package")
    else
      [[ " ${here_packages[*]} " == *" $package "* ]] || here_packages+=("$package")
    fi
  done
  if ((${#missing[@]} > 0)); then
    printf 'cluster.sh: missing: %s\n' "${missing[@]}" >&2
    if ((${#packages[@]} > 0)); then
      echo "cluster.sh: in $SLURM_ROOT: packages ${packages[*]}: list them in slurm_root.sh's PACKAGES" \
        "and make the root again ('make slurm24-root' or 'make slurm26-root')" >&2
    fi
    if ((${#here_packages[@]} > 0)); then
      echo "cluster.sh: as root: apt-get install --reinstall ${here_packages[*]} (or run 'make deps')" >&2
    fi
    return 1
  fi
  echo "cluster.sh: every program and plugin the test cluster needs is installed"
}

# Restarts one daemon of a running cluster with the configuration and port it had.
cmd_restart() {
  set_dir "$1"
  local name=${2:-} pid
  [[ -f $DIR/env.sh ]] || die "no cluster in $DIR"
  # shellcheck source=/dev/null
  source "$DIR/env.sh"
  # The daemons outlive the caller's (temporary) directory: they must not run in it.
  cd "$DIR"
  detect_version
  if [[ -e $DIR/pids/$name.pid ]] && pid=$(alive "$DIR/pids/$name.pid"); then
    kill -CONT "$pid" 2>/dev/null || true # a frozen daemon cannot exit
    terminate "$pid"
  fi
  case $name in
    slurmctld)
      # Started without SLURM_JWT, as at first (a token there makes it switch AuthType).
      SLURM_JWT='' launch slurmctld env -u SLURM_JWT slurmctld -D -i -f "$CONF"
      wait_for "slurmctld answering" ctld_up
      ;;
    slurmrestd)
      local port=${SLURMRESTD_URL##*:}
      launch_slurmrestd "$port"
      wait_for "slurmrestd ping on $SLURMRESTD_URL" rest_ping
      ;;
    *) die "restart: unknown daemon '$name' (slurmctld or slurmrestd)" ;;
  esac
  log "restarted $name"
}

case "${1:-}" in
  check) cmd_check "${JOBGEN_CLUSTER_SHAPE:-all}" ;;
  restart) cmd_restart "${2:-}" "${3:-}" ;;
  start) cmd_start "${2:-}" ;;
  stop) cmd_stop "${2:-}" ;;
  status) cmd_status "${2:-}" ;;
  *) echo "usage: cluster.sh start|stop|status DIR, or cluster.sh check" >&2; exit 2 ;;
esac
