#!/bin/bash
# The user's side of a test job: a stand-in training program that takes the settings jobgen
# planned as a real training script would (--micro-batch 8 --grad-accum 2 ...), records them in
# $JOBGEN_TEST_SETTINGS when that is set (tests that check what reached the job), and then runs
# the rest of its arguments: the test's own command.
#   trainer.sh [--NAME VALUE]... [--gradient_checkpointing] [--] COMMAND [ARG]...
settings=()
while [[ $# -gt 0 && $1 == --* ]]; do
  case $1 in
    --) shift; break ;;
    --gradient_checkpointing | --flag-*) settings+=("$1"); shift ;;
    *) settings+=("$1=${2:-}"); shift 2 ;;
  esac
done
if [[ -n ${JOBGEN_TEST_SETTINGS:-} ]]; then
  printf '%s\n' "${settings[@]}" >"$JOBGEN_TEST_SETTINGS"
fi
[[ $# -gt 0 ]] || exit 0
exec "$@"
