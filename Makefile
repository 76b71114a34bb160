# Thin wrapper around CMake/CTest. Quick start on a fresh Debian 12 machine (as root):
#   make run     install what building jobgen needs, build the jobgen binary, run the demo plan
#   make test    install what the tests need too, build everything, run every test (unit + real-Slurm integration,
#                Slurm 22.05, 24.11 and 26.05)
# Other targets: build test-unit test-asan test-fuzz install format clean distclean deps deps-build,
# test-slurm24 and test-slurm26 (only the integration tests against Slurm 24.11 or 26.05, each from
# a Debian root: trixie, forky).

BUILD_DIR ?= build
# The sanitizer tree: clang with ASan and UBSan builds jobgen, the tests and the libFuzzer targets
# once (make test-asan, make test-fuzz).
ASAN_DIR  ?= build-san
# Seconds each libFuzzer target runs in `make test-fuzz` (tests/fuzz/README.md), and how many
# targets run at once.
FUZZ_SECONDS ?= 20
FUZZ_JOBS ?= 2
# libFuzzer needs clang; 16 is the first that compiles std::expected with libstdc++ 12.
SAN_CXX   ?= clang++-16
PREFIX    ?= /usr/local
JOBS      ?= $(shell nproc)
# CTest's lanes in `make test`: the integration tests mostly wait on Slurm's timers, and the six
# test clusters (two shapes x three Slurm versions) each run their own tests one at a time, so
# more lanes than cores pay (tests/integration/CMakeLists.txt).
TEST_JOBS ?= 8
# What `make run` runs (one line to change when the planning demo lands).
RUN_ARGS  ?= plan examples/jobgen.yaml --target l40s
# Set to 1 to also run the integration suite under ASan.
ASAN_INTEGRATION ?= 0

# What building and running jobgen needs (`make run`): the compiler, CMake and Ninja, the
# libraries jobgen links or includes (doctest's CMake module is read when the tree is configured),
# and ccache. Everything else below is for the tests (`make test`, `make deps`).
BUILD_PACKAGES := build-essential cmake ninja-build pkg-config libyaml-cpp-dev libcli11-dev \
  libcurl4-openssl-dev doctest-dev nlohmann-json3-dev libkainjow-mustache-dev libfmt-dev \
  libsqlite3-dev ccache

# The test clusters (Slurm with slurmrestd and JWT, munge), the scripts' tools, the lint and the
# sanitizer tree's clang, and gnuplot for bench/accuracy.sh's plots.
DEB_PACKAGES := $(BUILD_PACKAGES) slurm-wlm slurm-wlm-jwt-plugin slurmrestd munge shellcheck curl \
  python3 jq clang-format iproute2 procps clang-16 libclang-rt-16-dev clang-tidy-16 gnuplot-nox

# The Slurm 24.11 and 26.05 integration tests run from Debian roots it debootstraps.
DEB_PACKAGES += debootstrap

# Accounting in the test clusters (cluster.sh JOBGEN_CLUSTER_SHAPE=acct, the test_acct_*.sh tests):
# slurmdbd stores jobs, associations and QOS limits in a MariaDB server that cluster.sh starts under
# the cluster's directory (its own datadir, socket and port), so sacct, sacctmgr and sshare answer.
DEB_PACKAGES += mariadb-server slurmdbd slurm-wlm-mysql-plugin

# The install tests (tests/package/): groff and man read the man page, Lmod loads the modulefile,
# zsh and fish run their completion scripts.
DEB_PACKAGES += groff-base man-db lmod zsh fish

# The HTML report's test (tests/integration/check_report_html.py) opens it in a real headless
# Chromium, driven through chromedriver by Selenium.
DEB_PACKAGES += chromium chromium-driver python3-selenium

# bench/report_1000.sh measures wall time and peak RSS with GNU time's -v.
DEB_PACKAGES += time

# Builds of build/ serialise on one lock, so parallel make invocations do not collide. The ASan
# build has its own directory and runs niced instead.
LOCK := $(if $(shell command -v flock),flock $(CURDIR)/.build.lock,)
ASAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# Every build tree compiles through ccache (CMakeLists.txt). As root its cache is one directory for
# every checkout of the machine, kept like the Slurm roots, so a fresh clone (as CI makes every
# time) compiles only what changed; others keep ccache's own default (~/.cache/ccache).
ifeq ($(shell id -u),0)
export CCACHE_DIR ?= /var/cache/jobgen-ccache
endif

.PHONY: all build deps deps-build run test test-unit test-asan test-fuzz install format clean distclean

all: build

# install_missing TARGET PACKAGES: installs the packages dpkg does not list as installed.
define install_missing
	@missing=$$(for p in $(2); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
	  echo "make $(1): installing" $$missing; \
	  if [ "$$(id -u)" -ne 0 ]; then echo "make $(1): run as root (or install them yourself)" >&2; exit 1; fi; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing </dev/null; \
	fi
endef

# What `make run` needs.
deps-build:
	$(call install_missing,deps-build,$(BUILD_PACKAGES))

# Everything `make test` needs, and a check that its test clusters will not collide with another
# cluster on this machine (ports, munged).
deps:
	$(call install_missing,deps,$(DEB_PACKAGES))
	@tests/integration/cluster.sh check >/dev/null

# The integration tests against newer Slurm versions (Debian trixie's 24.11, label slurm24; Debian
# forky's 26.05, label slurm26) run from debootstrapped roots (tests/integration/slurm_root.sh) kept
# in SLURM24_ROOT and SLURM26_ROOT and reused while their package lists are unchanged: the first
# `make test` on a machine downloads them (about 1 min and 300 MB each). `make test-slurm24` and
# `make test-slurm26` run only those (and take SLURM24_ROOT=/SLURM26_ROOT= elsewhere).
SLURM24_ROOT ?= /var/cache/jobgen-test/trixie
SLURM26_ROOT ?= /var/cache/jobgen-test/forky
.PHONY: slurm24-root test-slurm24 slurm26-root test-slurm26
slurm24-root: deps
	JOBGEN_SLURM_ROOT_SUITE=trixie tests/integration/slurm_root.sh build $(SLURM24_ROOT)

slurm26-root: deps
	JOBGEN_SLURM_ROOT_SUITE=forky tests/integration/slurm_root.sh build $(SLURM26_ROOT)

test-slurm24: slurm24-root build
	$(LOCK) cmake -S . -B $(BUILD_DIR) -DJOBGEN_SLURM24_ROOT=$(abspath $(SLURM24_ROOT)) >/dev/null
	cd $(BUILD_DIR) && ctest --output-on-failure -L slurm24

test-slurm26: slurm26-root build
	$(LOCK) cmake -S . -B $(BUILD_DIR) -DJOBGEN_SLURM26_ROOT=$(abspath $(SLURM26_ROOT)) >/dev/null
	cd $(BUILD_DIR) && ctest --output-on-failure -L slurm26

# Configure only when there is no cache yet: an existing build dir keeps its own generator
# and options (the team shares one Ninja build dir).
$(BUILD_DIR)/CMakeCache.txt:
	$(LOCK) cmake -S . -B $(BUILD_DIR) -G Ninja

# Debug (-O0): it compiles in about half the time of -O1 (measured on 2 cores: the largest files
# 8 s instead of 16), which the CI's budget needs more than the fuzz targets' extra executions.
# cli/ in unity files as in the release tree (CLI11 was 300 s of a cold sanitizer build): that
# every file includes what it uses is proven by `make tidy`, which compiles each file alone.
$(ASAN_DIR)/CMakeCache.txt:
	cmake -S . -B $(ASAN_DIR) -G Ninja -DCMAKE_CXX_COMPILER=$(SAN_CXX) -DJOBGEN_SANITIZE=ON \
	  -DJOBGEN_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug

build: $(BUILD_DIR)/CMakeCache.txt
	$(LOCK) cmake --build $(BUILD_DIR) -j $(JOBS)

# Only the jobgen binary (not the tests), then the plan.
run: deps-build
	@$(MAKE) --no-print-directory $(BUILD_DIR)/CMakeCache.txt
	$(LOCK) cmake --build $(BUILD_DIR) -j $(JOBS) --target jobgen
	$(BUILD_DIR)/jobgen $(RUN_ARGS)

test: deps slurm24-root slurm26-root build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(TEST_JOBS)

test-unit: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -LE 'integration|slurm24|slurm26'

.PHONY: build-asan
build-asan: deps $(ASAN_DIR)/CMakeCache.txt
	nice cmake --build $(ASAN_DIR) -j $(JOBS)

test-asan: build-asan
	cd $(ASAN_DIR) && $(ASAN_ENV) ctest --output-on-failure -j $(JOBS) \
	  -LE '$(if $(filter 1,$(ASAN_INTEGRATION)),slurm24|slurm26,integration|slurm24|slurm26)'

# Every parser's fuzz target for FUZZ_SECONDS, FUZZ_JOBS at a time, from tests/fuzz/corpus.
test-fuzz: build-asan
	FUZZ_JOBS=$(FUZZ_JOBS) tests/fuzz/run.sh $(ASAN_DIR) $(FUZZ_SECONDS)

install: build
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

# The Debian package: $(BUILD_DIR)/jobgen_<version>_<arch>.deb (apt-get install ./build/jobgen_*.deb).
.PHONY: package
package: deps build
	cd $(BUILD_DIR) && cpack -G DEB

SOURCES_CMD := find src tests bench \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \) -print0

format:
	$(SOURCES_CMD) | xargs -0 -r clang-format -i

# CI gates: the tree is clang-formatted, and clang-tidy (.clang-tidy) finds nothing in src/.
# clang-tidy 16 parses libstdc++ 12's <expected> only when told the concepts level g++ has.
# g++ gates the conversion warnings (CMakeLists.txt); clang's -Wconversion is a wider set, so
# clang-tidy, which would report it from the compile commands, leaves it out.
TIDY_ARGS := -extra-arg=-std=c++2b -extra-arg=-Wno-macro-redefined \
  -extra-arg=-D__cpp_concepts=202002L -extra-arg=-Wno-conversion -extra-arg=-Wno-sign-conversion
.PHONY: format-check tidy lint
format-check: deps
	$(SOURCES_CMD) | xargs -0 -r clang-format --dry-run -Werror

# Its own configuration, each file compiled alone (clang-tidy reads a file's own compile command);
# only the compile commands are needed, nothing is built. Only the
# files a change can affect since the last clean pass on this machine are checked, as the release
# tree's dependencies tell (tests/lint/tidy.sh); TIDY_FULL=1 checks every file.
TIDY_DIR ?= build-tidy
TIDY_FULL ?= 0
tidy: deps
	cmake -S . -B $(TIDY_DIR) -G Ninja -DJOBGEN_UNITY_CLI=OFF >/dev/null
	JOBGEN_TIDY_FULL=$(TIDY_FULL) tests/lint/tidy.sh $(TIDY_DIR) $(BUILD_DIR) $(JOBS) $(TIDY_ARGS)

lint: format-check tidy

# Removes build outputs but keeps the configuration (others may share build/).
clean:
	if [ -f $(BUILD_DIR)/CMakeCache.txt ]; then $(LOCK) cmake --build $(BUILD_DIR) --target clean; fi
	if [ -f $(ASAN_DIR)/CMakeCache.txt ]; then cmake --build $(ASAN_DIR) --target clean; fi

distclean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(TIDY_DIR) build-asan build-fuzz

bench: build ; bench/plan_speed.sh $(BUILD_DIR)/jobgen
