#!/usr/bin/env bash
# slurmrestd refusing credentials, on the real server: no token (HTTP 401), a token whose
# signature is wrong and an expired one (22.05 answers both with HTTP 500 + error -1). Each must
# exit 5 (auth) with a message that says which case it is (the expiry in UTC) and how to get a
# new token; and no token may appear in anything jobgen prints or stores.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"
[[ -n ${SLURMRESTD_URL:-} && -n ${SLURM_JWT:-} ]] || { echo "SKIP: env.sh has no slurmrestd"; exit 77; }

good=$SLURM_JWT
# A job to ask about.
id=$(sbatch --parsable -p markov_gpu -t 5 -o /dev/null --wrap 'sleep 30')
SUBMITTED+=("$id")

# check NAME TOKEN EXPECTED-TEXT : `jobgen status` with this SLURM_JWT ("" = unset) must fail
# with exit 5 and EXPECTED-TEXT, without printing the token.
check() {
  local name=$1 token=$2 want=$3 rc
  set +e
  if [[ -z $token ]]; then
    env -u SLURM_JWT "$JOBGEN" status "$id" --backend rest >"$name.out" 2>"$name.err"
  else
    SLURM_JWT=$token "$JOBGEN" status "$id" --backend rest >"$name.out" 2>"$name.err"
  fi
  rc=$?
  set -e
  [[ $rc -eq 5 ]] || fail "$name: exit $rc, expected 5 (auth): $(cat "$name.out" "$name.err")"
  grep -qF "$want" "$name.err" || fail "$name: message lacks '$want': $(cat "$name.err")"
  grep -q "scontrol token lifespan=" "$name.err" || fail "$name: no hint how to get a token"
  if [[ -n $token ]]; then
    ! grep -qF "$token" "$name.out" "$name.err" || fail "$name: the token was printed"
    ! grep -qF "${token:40:40}" "$name.out" "$name.err" || fail "$name: part of the token was printed"
  fi
  echo "ok: $name -> $(head -c 160 "$name.err")..."
}

check missing "" "has no token to send"
check wrong "${good%.*}.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" "rejected the token from SLURM_JWT for user 'root'"
expired=$(scontrol token username=root lifespan=1)
expired=${expired#SLURM_JWT=}
sleep 2
# The expiry, as jobgen must print it: the token's own exp claim in UTC.
exp=$(python3 -c '
import base64, json, sys, datetime
p = sys.argv[1].split(".")[1]
p += "=" * (-len(p) % 4)
exp = json.loads(base64.urlsafe_b64decode(p))["exp"]
print(datetime.datetime.fromtimestamp(exp, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"))
' "$expired")
check expired "$expired" "expired at $exp"

# With the good token everything works again, and nothing stored holds any token.
"$JOBGEN" status "$id" --backend rest >good.txt || fail "status with a valid token: $(cat good.txt)"
grep -q "^$id " good.txt || fail "status with a valid token does not list $id: $(cat good.txt)"
for t in "$good" "$expired"; do
  ! grep -rqF "$t" "$XDG_STATE_HOME" ./*.out ./*.err good.txt || fail "a token is stored or printed"
done
echo "PASS"
