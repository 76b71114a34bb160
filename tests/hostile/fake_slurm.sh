#!/usr/bin/env bash
# Slurm's commands answering hugely or oddly, for the hostile cases of scheduler output
# (run.sh links this file as sbatch, squeue, sacct, sacctmgr, sshare and sinfo in a case's bin/).
# What each prints is set by the case's environment:
#   FAKE_LINES  how many records (default 1)
#   FAKE_QUEUE  how many squeue prints (default FAKE_LINES)
#   FAKE_LOG    the StdOut squeue reports for every job (default /tmp/o)
#   FAKE_MODE   good (default): well-formed records of jobs 1001, 1002, ...
#               nodelim: sacct lines without a single \x1f
#               maxrss, reqmem, elapsed: job 1001's sacct line with that field absurd
#               disabled: sacct says accounting storage is disabled
#               own: sacctmgr lists FAKE_LINES associations of the user u, one account each
#   FAKE_DIR    a folder: a command with a file of its name there (sacct, squeue, sacctmgr) prints
#               that file instead (bench/scheduler_output.sh times jobgen on a fixed text)
# sbatch answers job id 1001; sinfo prints the site cluster's samples (tests/data/slurm-cli).
set -euo pipefail
here=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
data=$here/../data/slurm-cli
n=${FAKE_LINES:-1}
mode=${FAKE_MODE:-good}

name=$(basename "$0")
if [[ -n ${FAKE_DIR:-} && -f $FAKE_DIR/$name && $* != *"show qos"* && $* != *"show user"* ]]; then
  exec cat "$FAKE_DIR/$name"
fi
case $name in
  sbatch)
    [[ " $* " == *" --test-only "* ]] && exit 0
    cat >/dev/null
    echo 1001
    ;;
  squeue)
    awk -v n="${FAKE_QUEUE:-$n}" -v stdout_path="${FAKE_LOG:-/tmp/o}" 'BEGIN {
      f = "\x1f"
      for (i = 1; i <= n; i++) {
        id = 1000 + i
        print id f id f "N/A" f "N/A" f "RUNNING" f "None" f "gpu" f "1" f "node1" f \
          "2026-12-01T00:00:00" f "2026-12-01T00:00:00" f "2026-12-02T00:00:00" f "1-00:00:00" f \
          "gres/gpu:1" f "u" f "(null)" f "/tmp" f "(null)" f "0:0" f stdout_path f "/tmp/e" f "ml" f \
          "normal" f "train\x1e"
      }
    }'
    ;;
  sacct)
    if [[ $mode == disabled ]]; then
      echo "sacct: error: Slurm accounting storage is disabled" >&2
      exit 1
    fi
    awk -v n="$n" -v mode="$mode" 'BEGIN {
      f = "\x1f"
      for (i = 1; i <= n; i++) {
        if (mode == "nodelim") { print "not a sacct record " i; continue }
        id = 1000 + i; rss = "1000K"; req = "16G"; elapsed = 3540
        if (i == 1 && mode == "maxrss") rss = "99999999999999999999P"
        if (i == 1 && mode == "reqmem") req = "1e308G"
        if (i == 1 && mode == "elapsed") elapsed = "9223372036854775807"
        print id f id f "COMPLETED" f "0:0" f "2026-12-01T00:00:00" f "2026-12-01T00:01:00" f \
          "2026-12-01T01:00:00" f elapsed f "01:00:00" f "4" f "1" f req f rss f "00:10:00" f \
          "billing=4,cpu=4,gres/gpu=1,mem=16G,node=1" f "gpu" f "node1" f "ok" f "u"
      }
    }'
    ;;
  sacctmgr)
    case "$*" in
      *"show assoc"*)
        awk -v n="$n" -v mode="$mode" 'BEGIN {
          print "c|root||||normal|normal||||||||"
          print "c|ml|||root|normal|normal|||cpu=8|||||"
          print "c|ml|u|||normal|normal||||||||"
          for (i = 1; i <= n; i++) {
            if (mode == "own") print "c|a" i "|u|||normal,high|normal||||||||"
            print "c|a" i "|||root|normal|normal||||||||"
          }
        }'
        ;;
      *"show qos"*) printf 'normal|0|||||||||\nhigh|0|||||||||\n' ;;
      *"show user"*) echo "u|ml|" ;;
    esac
    ;;
  sshare) echo "ml|u|1|0.5|0|0|0.5" ;;
  sinfo)
    case "$*" in
      *"%P|%l|%N|%L"*) cat "$data/sinfo-partitions-site-24.11.txt" ;;
      *) cat "$data/sinfo-nodes-site-24.11.txt" ;;
    esac
    ;;
  *)
    echo "fake_slurm.sh: unknown command $(basename "$0")" >&2
    exit 1
    ;;
esac
