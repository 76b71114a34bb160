#!/usr/bin/env bash
# Other Slurm versions for the integration tests: a Debian root (JOBGEN_SLURM_ROOT_SUITE, default
# trixie: Slurm 24.11; forky: 26.05) made with debootstrap from Debian's packages, in which
# cluster.sh runs the daemons and the client tools while jobgen (built on this machine) runs outside.
#
#   slurm_root.sh build [ROOT]     make ROOT (default $JOBGEN_SLURM_ROOT, else DEFAULT_ROOT below)
#                                  unless it is there with the same suite, mirror and package list;
#                                  needs the network only then (the Debian mirror)
#   slurm_root.sh exec ROOT PROGRAM [ARG...]
#                                  run PROGRAM (a path inside ROOT) in ROOT: a private mount
#                                  namespace (its mounts end with it) with /proc, /sys, /dev,
#                                  /run/munge (this machine's munged), /tmp and the directories in
#                                  JOBGEN_SLURM_ROOT_BINDS (colon-separated) bound at their own
#                                  paths; the same pid (exec all the way), network and environment,
#                                  and the caller's working directory when ROOT sees it
#   slurm_root.sh wrappers ROOT DIR [BINDS]
#                                  write DIR/<program> for every Slurm program: each runs the one in
#                                  ROOT through `exec` with JOBGEN_SLURM_ROOT_BINDS=BINDS (inside
#                                  ROOT, e.g. in a job, the real one)
#   slurm_root.sh default          print the default ROOT
#
# ROOT/.jobgen-slurm-root holds what ROOT was made from; a ROOT being made is ROOT.new until done.
set -euo pipefail

readonly SUITE=${JOBGEN_SLURM_ROOT_SUITE:-trixie}
readonly MIRROR=${JOBGEN_SLURM_ROOT_MIRROR:-http://deb.debian.org/debian}
readonly DEFAULT_ROOT=/var/cache/jobgen-test/$SUITE
# The daemons, the client tools, the JWT plugins (auth/jwt for slurmctld, rest_auth/jwt is in
# slurmrestd), munge (libmunge for Slurm; munged itself is this machine's, see cluster.sh) and
# slurmdbd with its MySQL plugin for the acct shape (the MariaDB server is this machine's: slurmdbd
# reaches it over TCP on 127.0.0.1).
readonly PACKAGES=(slurm-wlm slurmctld slurmd slurm-client slurmrestd slurm-wlm-basic-plugins
  slurm-wlm-jwt-plugin munge slurmdbd slurm-wlm-mysql-plugin)
# What wrappers exist for: every program cluster.sh, the tests and jobgen run.
readonly PROGRAMS=(slurmctld slurmd slurmrestd slurmdbd slurmstepd sbatch squeue sinfo scontrol scancel
  sacct sacctmgr sdiag sprio srun salloc sshare sstat munge unmunge)
readonly MARKER=.jobgen-slurm-root

die() { echo "slurm_root.sh: error: $*" >&2; exit 1; }
log() { echo "slurm_root.sh: $*" >&2; }
here=$(cd "$(dirname "$0")" && pwd -P)

stamp() { echo "suite=$SUITE mirror=$MIRROR packages=${PACKAGES[*]}"; }

cmd_build() {
  local root=${1:-${JOBGEN_SLURM_ROOT:-$DEFAULT_ROOT}} t0=$SECONDS
  if [[ -f $root/$MARKER && "$(cat "$root/$MARKER")" == "$(stamp)" ]]; then
    log "reusing $root ($(stamp))"
    return 0
  fi
  [[ $(id -u) -eq 0 ]] || die "making $root needs root (debootstrap, chroot)"
  command -v debootstrap >/dev/null || die "debootstrap is missing: run 'make deps' (as root)"
  local new=$root.new
  rm -rf "${new:?}"
  mkdir -p "$new"
  # A suite newer than this machine's debootstrap (forky on bookworm) is made like sid.
  local script=()
  [[ -e /usr/share/debootstrap/scripts/$SUITE ]] || script=(/usr/share/debootstrap/scripts/sid)
  log "debootstrap $SUITE into $new from $MIRROR"
  debootstrap --variant=minbase "$SUITE" "$new" "$MIRROR" "${script[@]}" >"$new.log" 2>&1 ||
    { tail -n 20 "$new.log" >&2; die "debootstrap failed (whole log: $new.log)"; }
  # Package scripts must not start the daemons they install.
  printf '#!/bin/sh\nexit 101\n' >"$new/usr/sbin/policy-rc.d"
  chmod 755 "$new/usr/sbin/policy-rc.d"
  cp /etc/resolv.conf "$new/etc/resolv.conf"
  log "installing ${PACKAGES[*]}"
  # Check-Valid-Until=false: a testing suite's Release expires within days, and a mirror snapshot
  # older than that would otherwise refuse to install anything; this root is for tests only.
  # A subshell: cmd_exec ends in exec.
  (JOBGEN_SLURM_ROOT_BINDS='' DEBIAN_FRONTEND=noninteractive cmd_exec "$new" /bin/sh -c \
    'apt-get -o Acquire::Check-Valid-Until=false update -qq && apt-get install -y -qq --no-install-recommends "$@" && apt-get clean' \
    sh "${PACKAGES[@]}") </dev/null >>"$new.log" 2>&1 ||
    { tail -n 20 "$new.log" >&2; die "installing the packages failed (whole log: $new.log)"; }
  stamp >"$new/$MARKER"
  rm -rf "${root:?}"
  mv "$new" "$root"
  mv "$new.log" "$root.log"
  log "made $root in $((SECONDS - t0))s: $(cmd_exec "$root" /usr/sbin/slurmctld -V)"
}

# Runs in the new mount namespace (the `unshare` in cmd_exec): bind, chroot, exec.
cmd_enter() {
  local root=$1 d
  shift
  mount -t proc proc "$root/proc"
  mount --rbind /sys "$root/sys"
  mount --rbind /dev "$root/dev"
  mkdir -p "$root/run/munge"
  [[ -d /run/munge ]] && mount --bind /run/munge "$root/run/munge"
  local binds=/tmp
  [[ -n ${JOBGEN_SLURM_ROOT_BINDS:-} ]] && binds+=":$JOBGEN_SLURM_ROOT_BINDS"
  local IFS=:
  for d in $binds; do
    [[ -n $d && -d $d ]] || continue
    mkdir -p "$root$d"
    mount --bind "$d" "$root$d"
  done
  unset IFS
  # chroot(8) starts in /: go back to the caller's directory when the root has it.
  # shellcheck disable=SC2016 # expanded by the shell inside the root
  exec chroot "$root" /bin/sh -c 'cd "$1" 2>/dev/null || cd /; shift; exec "$@"' sh "$PWD" "$@"
}

cmd_exec() {
  local root=${1:-}
  shift || true
  [[ -n $root && -x $root/bin/sh ]] || die "no root at '$root' (make it with: slurm_root.sh build)"
  (($# > 0)) || die "exec: missing PROGRAM"
  exec unshare --mount --propagation private -- "$here/slurm_root.sh" _enter "$root" "$@"
}

cmd_wrappers() {
  local root=${1:-} dir=${2:-} binds=${3:-} p
  [[ -f $root/$MARKER ]] || die "no root at '$root' (make it with: slurm_root.sh build)"
  [[ -n $dir ]] || die "wrappers: missing DIR"
  mkdir -p "$dir"
  for p in "${PROGRAMS[@]}"; do
    cat >"$dir/$p" <<EOF
#!/bin/sh
# $p of the Slurm in $root (written by tests/integration/slurm_root.sh).
if [ -e /$MARKER ]; then # already inside the root (a job, a daemon): the real one
  for d in /usr/sbin /usr/bin; do [ -x "\$d/$p" ] && exec "\$d/$p" "\$@"; done
  echo "$p: not installed in this root" >&2; exit 127
fi
for d in /usr/sbin /usr/bin; do
  [ -x "$root\$d/$p" ] && JOBGEN_SLURM_ROOT_BINDS='$binds' exec "$here/slurm_root.sh" exec "$root" "\$d/$p" "\$@"
done
echo "$p: not installed in $root" >&2; exit 127
EOF
    chmod 755 "$dir/$p"
  done
}

case "${1:-}" in
  build) cmd_build "${2:-}" ;;
  exec) shift; cmd_exec "$@" ;;
  _enter) shift; cmd_enter "$@" ;;
  wrappers) cmd_wrappers "${2:-}" "${3:-}" "${4:-}" ;;
  default) echo "${JOBGEN_SLURM_ROOT:-$DEFAULT_ROOT}" ;;
  *) echo "usage: slurm_root.sh build [ROOT] | exec ROOT PROGRAM [ARG...] | wrappers ROOT DIR | default" >&2; exit 2 ;;
esac
