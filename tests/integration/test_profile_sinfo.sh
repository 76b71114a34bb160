#!/usr/bin/env bash
# `jobgen profile show markov --json` must describe the live local cluster exactly as Slurm reports
# it (`sinfo --json`, a node list in 22.05; from 23.02 on that prints grouped records, and the node
# list is `scontrol show nodes --json`): the same node names, per node the gres type and count
# (MIG slices included), CPUs, RealMemory (MiB) and partitions; and the partitions' time limits and
# default flag (`sinfo -o '%P|%l'`). Differences are listed one per line.
# Env (CTest): JOBGEN, JOBGEN_SOURCE_DIR, JOBGEN_CLUSTER_DIR. Exit 0 pass, 1 fail, 77 skip.
set -euo pipefail

: "${JOBGEN:?path of the jobgen binary}" "${JOBGEN_SOURCE_DIR:?}" "${JOBGEN_CLUSTER_DIR:?}"
[[ -f $JOBGEN_CLUSTER_DIR/env.sh ]] || { echo "SKIP: no cluster in $JOBGEN_CLUSTER_DIR"; exit 77; }
# shellcheck source=/dev/null
source "$JOBGEN_CLUSTER_DIR/env.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# From the source tree, so ./cluster-profiles holds the profile under test.
if ! (cd "$JOBGEN_SOURCE_DIR" && "$JOBGEN" profile show markov --json) >"$tmp/profile.json" 2>"$tmp/err"; then
  echo "FAIL: '$JOBGEN profile show markov --json' failed:"
  cat "$tmp/err"
  exit 1
fi
sinfo --json >"$tmp/sinfo.json"
if ! python3 -c 'import json, sys; sys.exit("nodes" not in json.load(open(sys.argv[1])))' "$tmp/sinfo.json"; then
  scontrol show nodes --json >"$tmp/sinfo.json"
fi
sinfo -h -o '%P|%l' >"$tmp/partitions.txt"

python3 - "$tmp/profile.json" "$tmp/sinfo.json" "$tmp/partitions.txt" <<'PY'
import copy, json, re, subprocess, sys

profile = json.load(open(sys.argv[1]))
sinfo = json.load(open(sys.argv[2]))
part_lines = open(sys.argv[3]).read().split()


def parse_gres(text):
    """'gpu:gpul40s:6(S:0-1),gpu:4' -> sorted [(type or None, count)] for name 'gpu'."""
    out = []
    for item in re.split(r",(?![^(]*\))", text or ""):
        item = re.sub(r"\(.*\)$", "", item.strip())
        if not item:
            continue
        parts = item.split(":")
        if parts[0] != "gpu":
            continue
        if len(parts) == 3:
            out.append((parts[1], int(parts[2])))
        elif len(parts) == 2:
            out.append((None, int(parts[1])))
        else:
            raise ValueError(f"unexpected gres string {text!r}")
    return sorted(out, key=repr)


def seconds(limit):
    """Slurm time limit 'D-HH:MM:SS' / 'HH:MM:SS' / 'MM' -> seconds; UNLIMITED -> None."""
    if limit.upper() in ("UNLIMITED", "INFINITE"):
        return None
    days, _, rest = limit.rpartition("-")
    f = [int(x) for x in rest.split(":")]
    if days:  # D-HH, D-HH:MM, D-HH:MM:SS
        h, m, s = (f + [0, 0])[:3]
    else:  # MM, MM:SS, HH:MM:SS
        h, m, s = ([0, 0] + f)[-3:] if len(f) > 1 else (0, f[0], 0)
    return ((int(days or 0) * 24 + h) * 60 + m) * 60 + s


def expected_from_profile(p):
    """node -> expected attributes; plus problems inside the profile document itself."""
    nodes, problems = {}, []
    for g in p["node_groups"]:
        names = g.get("nodes") or subprocess.run(
            ["scontrol", "show", "hostnames", g["hostlist"]], capture_output=True, text=True, check=True
        ).stdout.split()
        if len(names) != g.get("node_count", len(names)):
            problems.append(f"group {g['name']}: node_count {g['node_count']} but {len(names)} nodes")
        gres = parse_gres(g["gres"])
        mig = g.get("mig")
        if mig:
            want = [(s["gres_type"], s["per_gpu"] * g["gpus_per_node"]) for s in mig["slices"]]
            if sorted(want, key=repr) != gres:
                problems.append(f"group {g['name']}: gres {g['gres']!r} but mig slices say {want}")
        elif gres != [(g.get("gres_type"), g["gpus_per_node"])]:
            problems.append(f"group {g['name']}: gres {g['gres']!r} but gres_type "
                            f"{g.get('gres_type')!r} x gpus_per_node {g['gpus_per_node']}")
        for n in names:
            if n in nodes:
                problems.append(f"node {n} is in two groups")
            nodes[n] = {"group": g["name"], "gres": gres, "cpus": g["cpus"],
                        "memory_mib": g["memory_mib"], "partitions": sorted(g["partitions"]),
                        "mig": bool(mig), "gpus": g["gpus_per_node"]}
    return nodes, problems


def compare(p):
    diffs = []
    want, problems = expected_from_profile(p)
    diffs += problems
    live = {n["name"]: n for n in sinfo["nodes"]}
    for n in sorted(set(want) - set(live)):
        diffs.append(f"node {n}: in the profile (group {want[n]['group']}) but not in the cluster")
    for n in sorted(set(live) - set(want)):
        diffs.append(f"node {n}: in the cluster (gres {live[n]['gres']!r}) but not in the profile")
    for n in sorted(set(want) & set(live)):
        w, l = want[n], live[n]
        for key, got in (("gres", parse_gres(l["gres"])), ("cpus", l["cpus"]),
                         ("memory_mib", l["real_memory"]), ("partitions", sorted(l["partitions"]))):
            if w[key] != got:
                diffs.append(f"node {n}: {key}: profile {w[key]} != cluster {got}")

    live_parts = {}
    for line in part_lines:
        name, limit = line.split("|")
        live_parts[name.rstrip("*")] = {"default": name.endswith("*"), "max_time": limit}
    prof_parts = {q["name"]: q for q in p["partitions"]}
    for name in sorted(set(prof_parts) ^ set(live_parts)):
        where = "profile" if name in prof_parts else "cluster"
        diffs.append(f"partition {name}: only in the {where}")
    for name in sorted(set(prof_parts) & set(live_parts)):
        q, l = prof_parts[name], live_parts[name]
        if q["default"] != l["default"]:
            diffs.append(f"partition {name}: default profile {q['default']} != cluster {l['default']}")
        if q["max_time"] != l["max_time"] or q["max_time_s"] != seconds(l["max_time"]):
            diffs.append(f"partition {name}: max time profile {q['max_time']} ({q['max_time_s']} s)"
                         f" != cluster {l['max_time']} ({seconds(l['max_time'])} s)")

    on_live = [want[n] for n in live if n in want]
    slices = sum(c for w in on_live if w["mig"] for _, c in w["gres"])
    gpus = sum(w["gpus"] if w["mig"] else sum(c for _, c in w["gres"]) for w in on_live)
    got_totals = {"nodes": len(live), "gpus": gpus, "mig_slices": slices}
    for key, value in got_totals.items():
        if p["totals"].get(key) != value:
            diffs.append(f"totals.{key}: profile {p['totals'].get(key)} != cluster {value}")
    return diffs


if profile.get("cluster") != "markov":
    print(f"FAIL: cluster is {profile.get('cluster')!r}, expected 'markov'")
    sys.exit(1)
diffs = compare(profile)
# The comparison must be able to fail: one node fewer GPU in the profile has to be noticed.
broken = copy.deepcopy(profile)
g = next(g for g in broken["node_groups"] if not g.get("mig"))
g["gres"] = re.sub(r"\d+$", lambda m: str(int(m.group()) - 1), g["gres"])
if not compare(broken):
    diffs.append("self-check: a profile with a wrong gres count compared equal (checker broken)")

print(f"cluster: {len(sinfo['nodes'])} nodes; profile: {len(profile['node_groups'])} groups, "
      f"totals {profile['totals']}")
if diffs:
    print(f"FAIL: {len(diffs)} difference(s) between the profile and the live cluster:")
    for d in diffs:
        print("  " + d)
    sys.exit(1)
print("PASS: profile markov matches the live cluster")
PY
