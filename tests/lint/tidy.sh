#!/usr/bin/env bash
# clang-tidy over src/ (make tidy): every file, or only those a change can affect.
#
#   tests/lint/tidy.sh TIDY_BUILD_DIR DEPS_BUILD_DIR JOBS [clang-tidy args...]
#
# TIDY_BUILD_DIR holds the compile commands clang-tidy reads. Every clean pass over the whole of
# src/ at a commit with no uncommitted change is recorded in $JOBGEN_TIDY_STATE (default
# /var/cache/jobgen-ci as root, else ~/.cache/jobgen-ci), with a key of what else decides the
# findings: clang-tidy's version, .clang-tidy, the arguments and the installed packages (system
# headers) and the compile flags. A later run with the same key checks only the .cpp files of src/
# that differ from the recorded commit or include a header that does, as the Ninja dependency log
# of DEPS_BUILD_DIR (the built release tree) lists them. It checks everything when there is no
# record, the key differs, the recorded commit is not in this history or the dependency log is
# missing; JOBGEN_TIDY_FULL=1 forces that. A finding fails the run either way.
set -euo pipefail
tidy_dir=${1:?usage: tidy.sh TIDY_BUILD_DIR DEPS_BUILD_DIR JOBS [ARGS...]}
deps_dir=${2:?}
jobs=${3:?}
shift 3
cd "$(dirname "$0")/../.."
root=$PWD

if [[ -n ${JOBGEN_TIDY_STATE:-} ]]; then
  state=$JOBGEN_TIDY_STATE
elif (($(id -u) == 0)); then
  state=/var/cache/jobgen-ci
else
  state=${XDG_CACHE_HOME:-$HOME/.cache}/jobgen-ci
fi
record=$state/tidy-passed

# The distinct compile flags of the files checked, without the checkout's folder and the file's
# own names: a new source file leaves them as they are, a changed flag or define does not.
compile_flags() {
  python3 -c '
import json, sys
root, flags = sys.argv[1], set()
for e in json.load(open(sys.argv[2])):
    words = e["command"].replace(root, "ROOT").split()
    for opt in ("-o", "-c", "-MT", "-MF"):
        while opt in words:
            i = words.index(opt)
            del words[i:i + 2]
    flags.add(" ".join(words))
print("\n".join(sorted(flags)))
' "$root" "$tidy_dir/compile_commands.json"
}

key=$({
  clang-tidy-16 --version
  cat .clang-tidy
  printf '%s\n' "$@"
  compile_flags
  dpkg-query -W -f '${Package} ${Version}\n' 2>/dev/null
} | sha256sum | cut -c1-32)

all_sources() { git ls-files 'src/*.cpp'; }

# The .cpp files of src/ (main.cpp and tools/ too) whose objects in DEPS_BUILD_DIR depend on one
# of the files given (paths from the checkout's root), from Ninja's log: "OBJ: #deps N ..." then a path a line,
# relative to the build directory or absolute, and through a layer's include tree of symbolic
# links (CMakeLists.txt): resolved before it is compared.
# A unity object (cli/ in the release tree: "...dir/Unity/unity_0_cxx.cxx.o") stands for the .cpp
# files its generated source includes: each of them is a dependent.
dependents() {
  ninja -C "$deps_dir" -t deps | python3 -c '
import os, re, sys
build, changed = sys.argv[1], {os.path.realpath(p) for p in sys.argv[2:]}
root = os.path.realpath(os.path.join(build, ".."))
def sources(obj):
    if ".dir/src/" in obj:
        return ["src/" + obj.split(".dir/src/", 1)[1].removesuffix(".o")]
    if "/Unity/" in obj:
        unity = os.path.join(build, obj.removesuffix(".o"))
        text = open(unity).read() if os.path.exists(unity) else ""
        return [os.path.relpath(p, root) for p in re.findall(r"#include \"([^\"]+\.cpp)\"", text)]
    return []
obj, hit = None, set()
for line in sys.stdin:
    if not line.startswith(" ") and ": #deps" in line:
        obj = line.split(":")[0]
    elif line.strip() and obj and obj not in hit:
        if os.path.realpath(os.path.join(build, line.strip())) in changed:
            hit.add(obj)
            print("\n".join(sources(obj)))
' "$deps_dir" "$@"
}

# Prints the .cpp files of src/ to check, or "ALL".
select_files() {
  local commit recorded_key changed f
  [[ ${JOBGEN_TIDY_FULL:-0} == 1 ]] && { echo ALL; return; }
  [[ -s $record ]] || { echo ALL; return; }
  read -r commit recorded_key <"$record"
  [[ $recorded_key == "$key" ]] || { echo ALL; return; }
  git cat-file -e "$commit^{commit}" 2>/dev/null || { echo ALL; return; }
  [[ -s $deps_dir/.ninja_deps ]] || { echo ALL; return; }
  # Changed against the recorded commit: committed since, staged, unstaged and untracked.
  changed=$({
    git diff --name-only "$commit" --
    git ls-files --others --exclude-standard
  } | sort -u)
  [[ -n $changed ]] || return 0
  # shellcheck disable=SC2086 # one path a word: git paths here have no spaces
  dependents $changed
  for f in $changed; do [[ $f == src/*.cpp && -f $f ]] && echo "$f"; done
  return 0
}

files=$(select_files | sort -u)
if [[ $files == *ALL* ]]; then
  scope=all
  files=$(all_sources)
else
  scope=changed
fi
if [[ -z $files ]]; then
  echo "tidy: no file of src/ changed since the last clean pass ($(cut -d' ' -f1 "$record"))"
  exit 0
fi
count=$(wc -l <<<"$files")
echo "tidy: checking $count file(s) of src/ ($scope)"
# run-clang-tidy takes regular expressions: one alternation of the exact paths.
regex=$(sed -e 's/[.[\*^$()+?{|]/\\&/g' -e "s#^#$root/#" <<<"$files" | paste -sd'|')
nice run-clang-tidy-16 -p "$tidy_dir" -j "$jobs" -quiet "$@" "^($regex)\$"

# Recorded for a committed tree only. After a partial pass too: the files it skipped were clean
# at the recorded commit and neither they nor anything they include has changed since.
if [[ -z $(git status --porcelain --untracked-files=normal -- src .clang-tidy) ]]; then
  mkdir -p "$state"
  echo "$(git rev-parse HEAD) $key" >"$record.tmp" && mv "$record.tmp" "$record"
fi
