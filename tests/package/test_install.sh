#!/usr/bin/env bash
# Installs jobgen the ways a site does and uses the result as a user would; no Slurm needed.
#   test_install.sh deb DIR       the Debian package in DIR (built by the CTest fixture with
#                                 cpack), unpacked with dpkg -x into a scratch root: not /usr, so
#                                 the data is found relative to the binary, as after any relocation
#   test_install.sh prefix BUILD  `cmake --install BUILD --prefix P` (what make install PREFIX=P
#                                 runs), then P moved elsewhere: one build, any prefix
# Then, from an unrelated directory with a clean environment (env -i): --version, plan, render,
# profile list (user, site and JOBGEN_DATA_DIR profiles), the man page through groff -ww and man,
# completion of partial command lines by the installed bash, zsh and fish scripts, and the
# modulefile loaded by Lmod (with and without a site default profile).
# Env (CTest): JOBGEN_SOURCE_DIR, JOBGEN_VERSION. Exit 0 pass, 1 fail.
set -euo pipefail
mode=${1:?deb|prefix} where=${2:?directory}
: "${JOBGEN_SOURCE_DIR:?}" "${JOBGEN_VERSION:?}"
lmod_cmd=/usr/share/lmod/lmod/libexec/lmod

tmp=$(mktemp -d /tmp/jobgen-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/home/.config/jobgen/profiles" "$tmp/work"
# The user's own profile (a copy of a bundled one under another name).
cp "$JOBGEN_SOURCE_DIR/cluster-profiles/servers.yaml" "$tmp/home/.config/jobgen/profiles/mine.yaml"

fail() {
  echo "FAIL ($mode): $*" >&2
  exit 1
}
# Runs "$@" in the scratch work directory with nothing of the caller's environment.
user() { (cd "$tmp/work" && env -i HOME="$tmp/home" PATH="$prefix/bin:/usr/bin:/bin" "$@"); }
expect_line() { # expect_line FILE REGEX WHAT
  grep -Eq -- "$2" "$1" || { cat "$1" >&2; fail "$3"; }
}

# The modulefile, loaded by Lmod: PATH and MANPATH of the prefix it was installed for ($1: /usr
# for the package), help and whatis; then one made for this prefix with a site default profile.
check_lmod() {
  local modules=$prefix/share/lmod for=$1
  [[ -f $modules/jobgen/$JOBGEN_VERSION.lua ]] || fail "no modulefile under $modules"
  [[ -x $lmod_cmd ]] || fail "Lmod is missing: run make deps"
  env -i HOME="$tmp/home" PATH=/usr/bin:/bin MODULEPATH="$modules" bash -c '
    eval "$("$1" bash load jobgen)" || exit 1
    echo "PATH=$PATH"
    echo "MANPATH=$MANPATH"
    echo "JOBGEN_PROFILE=${JOBGEN_PROFILE-unset}"
    echo "jobgen=$(command -v jobgen)"' _ "$lmod_cmd" >"$tmp/lmod.out" 2>"$tmp/lmod.err" ||
    { cat "$tmp/lmod.err" >&2; fail "module load jobgen"; }
  expect_line "$tmp/lmod.out" "^PATH=$for/bin:" "module load puts jobgen first on PATH"
  expect_line "$tmp/lmod.out" "^MANPATH=$for/share/man:.*:\$" \
    "module load prepends to MANPATH and keeps man's default path (a trailing empty entry)"
  expect_line "$tmp/lmod.out" "^JOBGEN_PROFILE=unset\$" "no site profile configured"
  if [[ $for == "$prefix" ]]; then
    expect_line "$tmp/lmod.out" "^jobgen=$prefix/bin/jobgen\$" "the module's jobgen"
  fi
  env -i HOME="$tmp/home" PATH=/usr/bin:/bin MODULEPATH="$modules" \
    "$lmod_cmd" bash help jobgen >/dev/null 2>"$tmp/help"
  expect_line "$tmp/help" "jobgen plan $for/share/jobgen/examples/jobgen.yaml" "module help"
  env -i HOME="$tmp/home" PATH=/usr/bin:/bin MODULEPATH="$modules" \
    "$lmod_cmd" bash whatis jobgen >/dev/null 2>"$tmp/whatis"
  expect_line "$tmp/whatis" "Version: $JOBGEN_VERSION" "module whatis"

  # A site that configured JOBGEN_SITE_PROFILE=mine gets it as every user's default.
  cmake -DPREFIX="$prefix" -DVERSION="$JOBGEN_VERSION" -DSITE_PROFILE=mine \
    -DOUTPUT="$tmp/site-modules/jobgen/$JOBGEN_VERSION.lua" \
    -P "$JOBGEN_SOURCE_DIR/packaging/modulefile.cmake"
  env -i HOME="$tmp/home" PATH=/usr/bin:/bin MODULEPATH="$tmp/site-modules" bash -c '
    cd "$2" && eval "$("$1" bash load jobgen)" && echo "JOBGEN_PROFILE=$JOBGEN_PROFILE" &&
      jobgen profile list' _ "$lmod_cmd" "$tmp/work" >"$tmp/lmod-site.out" 2>&1 ||
    { cat "$tmp/lmod-site.out" >&2; fail "module load jobgen with a site profile"; }
  expect_line "$tmp/lmod-site.out" "^JOBGEN_PROFILE=mine\$" "the site profile is set"
  expect_line "$tmp/lmod-site.out" "^mine \\* +user " "the site default is marked in profile list"
}

# Candidates of the installed bash completion for the words after "jobgen" (last = partial).
complete_bash() {
  user bash --norc --noprofile -c '
    source "$1" && shift
    COMP_WORDS=(jobgen "$@") COMP_CWORD=$#
    _jobgen && printf "%s\n" "${COMPREPLY[@]}"' _ "$bash_completion" "$@"
}
expect_words() { # expect_words "OUTPUT" WORD... (each must be a line of OUTPUT)
  local out=$1 word
  shift
  for word in "$@"; do
    grep -qxF -- "$word" <<<"$out" || fail "completion lacks '$word' in: $(tr '\n' ' ' <<<"$out")"
  done
}

case $mode in
  deb)
    debs=("$where"/jobgen_"$JOBGEN_VERSION"_*.deb)
    deb=${debs[0]}
    [[ -f $deb ]] || fail "no jobgen_${JOBGEN_VERSION}_*.deb in $where"
    depends=$(dpkg-deb -f "$deb" Depends)
    for lib in libc6 libstdc++6 libyaml-cpp0.7 libcurl4 libsqlite3-0 libfmt9; do
      [[ $depends == *"$lib "* ]] || fail "Depends ($depends) lacks $lib (dpkg-shlibdeps)"
    done
    dpkg-deb -c "$deb" >"$tmp/contents"
    expect_line "$tmp/contents" ' \./usr/bin/jobgen$' "the package has /usr/bin/jobgen"
    dpkg -x "$deb" "$tmp/root"
    prefix=$tmp/root/usr
    zsh_dir=vendor-completions
    check_lmod /usr
    ;;
  prefix)
    cmake --install "$where" --prefix "$tmp/installed" >"$tmp/install.log" ||
      { cat "$tmp/install.log" >&2; fail "cmake --install"; }
    prefix=$tmp/installed
    zsh_dir=site-functions
    check_lmod "$prefix"
    # Moved after installing: nothing may point back at the install location or the sources.
    mv "$tmp/installed" "$tmp/moved"
    prefix=$tmp/moved
    ;;
  *) fail "unknown mode $mode" ;;
esac

# Everything lands where the tools that read it look.
for file in bin/jobgen share/jobgen/cluster-profiles/markov.yaml \
  share/jobgen/templates/torchrun.sbatch.mustache share/jobgen/examples/jobgen.yaml \
  share/man/man1/jobgen.1 share/bash-completion/completions/jobgen \
  "share/zsh/$zsh_dir/_jobgen" share/fish/vendor_completions.d/jobgen.fish \
  "share/lmod/jobgen/$JOBGEN_VERSION.lua" share/doc/jobgen/README.md; do
  [[ -f $prefix/$file ]] || fail "$file is not installed"
done
example=$prefix/share/jobgen/examples/jobgen.yaml

user jobgen --version >"$tmp/version" || fail "jobgen --version"
expect_line "$tmp/version" "^jobgen $JOBGEN_VERSION \\(git ([0-9a-f]+(-dirty)?|unknown)\\)\$" "--version"
# In a directory without a job spec, the error points at the installed examples.
if user jobgen plan --target l40s >/dev/null 2>"$tmp/nospec.err"; then fail "plan without a job spec"; fi
expect_line "$tmp/nospec.err" "example job specs are in $prefix/share/jobgen/examples" \
  "the missing job spec error names the installed examples"
cp "$example" "$tmp/work/jobgen.yaml"
user jobgen plan --target l40s >"$tmp/plan" 2>"$tmp/plan.err" ||
  { cat "$tmp/plan.err" >&2; fail "jobgen plan --target l40s"; }
expect_line "$tmp/plan" "l40s" "the plan has the L40S options"
rm "$tmp/work/jobgen.yaml"
user jobgen render "$example" --target l40s --stage sft >"$tmp/script" 2>"$tmp/render.err" ||
  { cat "$tmp/render.err" >&2; fail "jobgen render"; }
expect_line "$tmp/script" "^#SBATCH --gres=gpu:gpul40s:" "the script requests the L40S gres"

# Profiles from the user's and the site's directories, and from JOBGEN_DATA_DIR.
mkdir -p "$prefix/etc/jobgen/profiles"
cp "$prefix/share/jobgen/cluster-profiles/dgx8.yaml" "$prefix/etc/jobgen/profiles/ours.yaml"
user jobgen profile list >"$tmp/list" 2>&1 || { cat "$tmp/list" >&2; fail "jobgen profile list"; }
expect_line "$tmp/list" "^mine +user +" "a user profile"
expect_line "$tmp/list" "^ours +site +" "a site profile"
expect_line "$tmp/list" "^markov \\* +bundled +" "the bundled default"
expect_line "$tmp/list" "^ +$prefix/share/jobgen/cluster-profiles/markov.yaml\$" "the bundled file"
expect_line "$tmp/list" "^  site +$prefix/etc/jobgen/profiles\$" "the search path"
if grep -qF "$JOBGEN_SOURCE_DIR" "$tmp/list"; then fail "the installed jobgen reads the sources"; fi
user jobgen plan "$example" --profile mine --target v100 >/dev/null 2>&1 ||
  fail "plan with a user profile"
mkdir -p "$tmp/data/cluster-profiles"
cp "$prefix/share/jobgen/cluster-profiles/markov.yaml" "$tmp/data/cluster-profiles/theirs.yaml"
user env JOBGEN_DATA_DIR="$tmp/data" jobgen profile list >"$tmp/list2" 2>&1 ||
  { cat "$tmp/list2" >&2; fail "profile list with JOBGEN_DATA_DIR"; }
expect_line "$tmp/list2" "^theirs +JOBGEN_DATA_DIR +" "a JOBGEN_DATA_DIR profile"

# The man page: no groff warnings, found by man through MANPATH, every command in it.
man_page=$prefix/share/man/man1/jobgen.1
groff -man -Tutf8 -ww -z "$man_page" 2>"$tmp/groff.err"
[[ ! -s $tmp/groff.err ]] || { cat "$tmp/groff.err" >&2; fail "groff warnings in jobgen.1"; }
[[ $(user env MANPATH="$prefix/share/man" man -w jobgen) == "$man_page" ]] || fail "man -w jobgen"
user env MANPATH="$prefix/share/man" MANWIDTH=100 man jobgen >"$tmp/man.txt" 2>/dev/null
expect_line "$tmp/man.txt" "jobgen profile list" "man jobgen shows the commands"
expect_line "$tmp/man.txt" "--target" "man jobgen shows the options"

# Completion, through each shell's installed script.
bash_completion=$prefix/share/bash-completion/completions/jobgen
expect_words "$(complete_bash pl)" plan
expect_words "$(complete_bash '')" plan render submit status profile completion
expect_words "$(complete_bash plan --ta)" --target
expect_words "$(complete_bash plan --target l4)" l40s
expect_words "$(complete_bash plan --profile '')" markov servers mine ours
expect_words "$(complete_bash profile show m)" markov mine
expect_words "$(complete_bash submit --backend '')" cli rest local
[[ -z $(complete_bash plan --gpus '') ]] || fail "free values must leave bash to complete files"

zsh_completion=$prefix/share/zsh/$zsh_dir/_jobgen
user zsh -n "$zsh_completion" || fail "zsh syntax of _jobgen"
# _describe and _files only work inside a completion widget: here they print what they were given.
user zsh -f -c '
  compdef() { : }
  _describe() { print -rl -- "${(@P)4}" }
  _files() { print -r -- "(files)" }
  source "$1"
  words=(jobgen plan --target l4) CURRENT=4 _jobgen
  words=(jobgen plan --gpus "") CURRENT=4 _jobgen' _ "$zsh_completion" >"$tmp/zsh.out"
expect_line "$tmp/zsh.out" "^l40s:node group: " "zsh candidates with descriptions"
expect_line "$tmp/zsh.out" "^\\(files\\)\$" "zsh falls back to files"

fish_completion=$prefix/share/fish/vendor_completions.d/jobgen.fish
user fish --no-config -c "source $fish_completion; complete -C 'jobgen pl'; complete -C 'jobgen plan --target l4'" \
  >"$tmp/fish.out" 2>"$tmp/fish.err" || { cat "$tmp/fish.err" >&2; fail "fish completion"; }
expect_line "$tmp/fish.out" $'^plan\tPlan a training job' "fish completes subcommands"
expect_line "$tmp/fish.out" $'^l40s\tnode group: ' "fish completes targets"

echo "install ($mode): ok: $prefix"
