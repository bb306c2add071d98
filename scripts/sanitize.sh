#!/usr/bin/env bash
# Builds the unit tests with AddressSanitizer + UndefinedBehaviorSanitizer and runs them, then runs
# each libFuzzer target (clang) for FUZZ_SECONDS (default 30) under the same sanitizers.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_SECONDS="${FUZZ_SECONDS:-30}"
# The e2e parity run under the sanitizers covers the scenarios of one folder (the whole corpus
# runs in the Release build): the client, informer and writer paths are the same for all.
# -Og -g1: asserts stay on (Debug), the code is optimised enough that the sanitized e2e and
# conformance runs take a quarter less time than at -O0 (e2e.loader 193 s against 265 s, a
# what-if property test 15 s against 57 s), it compiles no slower than -O0 -g, and the debug
# information still gives every sanitizer report function names and lines.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-Og -g1" \
  -DKAI_SANITIZE=ON -DKAI_BUILD_BENCH=OFF \
  -DKAI_E2E_PARITY_FILTER=scenarios/allocate/allocate-00 >/dev/null
cmake --build build-asan -j "$(nproc)"
# Sanitized e2e suites: those whose kai code paths no other suite takes (every server, the
# client's and informer's fault paths, the binder, the pod grouper, the controllers, the scale
# adjuster, the operator, `kai run`, DRA). Left to the Release run: e2e.crds (kubectl only, no kai
# code), and the suites that drive those same paths with more objects rather than other ones
# (loader, workloads, explain, usage, jobs, helm: the operator's paths are e2e.operator's); and
# helm.chart (helm only, no kai code); the lint.* checks (Python over the tree, no kai code); and
# conformance.kai_scenarios (KAI's 184 scenarios through `kai simulate`: the same core paths as
# kai's own scenarios, conformance.own_scenarios, which does run here; about 150 s sanitized).
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$(nproc)" \
  -E '^(e2e\.(crds|loader|workloads|explain|usage|jobs|helm)|helm\.chart|lint\..*|conformance\.kai_scenarios)$'
CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DKAI_SANITIZE=ON -DKAI_BUILD_FUZZ=ON -DKAI_BUILD_TESTS=OFF -DKAI_BUILD_BENCH=OFF >/dev/null
# Only the fuzz targets: they link kaicore, not the daemons.
FUZZ_TARGETS=$(for f in fuzz/*_fuzz.cc; do basename "$f" .cc; done)
# shellcheck disable=SC2086
cmake --build build-fuzz -j "$(nproc)" --target $FUZZ_TARGETS
for f in build-fuzz/*_fuzz; do
  corpus="fuzz/corpus/$(basename "$f")"
  mkdir -p "build-fuzz/corpus-$(basename "$f")"
  echo "fuzzing $(basename "$f") for ${FUZZ_SECONDS}s"
  "$f" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=4096 \
    "build-fuzz/corpus-$(basename "$f")" $( [ -d "$corpus" ] && echo "$corpus" ) 2>&1 | tail -3
done
