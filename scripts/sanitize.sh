#!/usr/bin/env bash
# Builds the unit tests with AddressSanitizer + UndefinedBehaviorSanitizer and runs them, then runs
# each libFuzzer target (clang) for FUZZ_SECONDS (default 60) under the same sanitizers.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_SECONDS="${FUZZ_SECONDS:-60}"
# The e2e parity run under the sanitizers covers the scenarios of one folder (the whole corpus
# runs in the Release build): the client, informer and writer paths are the same for all.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DKAI_SANITIZE=ON -DKAI_BUILD_BENCH=OFF \
  -DKAI_E2E_PARITY_FILTER=scenarios/allocate/allocate-00 >/dev/null
cmake --build build-asan -j "$(nproc)"
# e2e.crds runs kubectl against the API server and no kai code: the Release run covers it.
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$(nproc)" -E '^e2e\.crds$'
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
