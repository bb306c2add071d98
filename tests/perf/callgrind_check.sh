#!/usr/bin/env bash
# Instruction-count regression check (ctest: perf.callgrind_instructions).
#
#   tests/perf/callgrind_check.sh <path to kai> [--update]
#
# Runs `kai simulate -f tests/perf/allocate-large.yaml --now 2025-01-01T12:00:00Z -o json` under
# `valgrind --tool=callgrind` and compares two instruction counts with tests/perf/baseline.txt:
#   total     the whole process (the callgrind.out `summary:` line). About 98 % of it is YAML
#             parsing inside yaml-cpp, so it guards decoding but hides the scheduler;
#   simulate  the inclusive cost of kai::sim::Simulate (snapshot, session, the five actions, the
#             cycle report): the scheduler itself, read with callgrind_annotate.
# A second run guards the disruptive actions: `kai simulate -f tests/perf/reclaim-large-jobs-50.yaml
# --actions reclaim` (KAI's ReclaimLargeJobs at 50 nodes, written by KAI_BENCH_YAML_DIR from
# bench/actions_bench.cc), whose `reclaim_simulate` count is compared the same way.
# Fails when any grows by more than 10 % over its baseline (both numbers are printed); notes
# when one shrinks by more than 10 % (then refresh the baseline with --update, so later
# regressions are measured from the new level). Instruction counts do not depend on machine load,
# unlike wall time; they do depend on the compiler and its flags, so the check runs only on a
# Release build (exit 77 = skipped otherwise: ctest's SKIP_RETURN_CODE) and never under
# sanitizers (CMakeLists.txt does not register it with KAI_SANITIZE).
#
# allocate-large.yaml is KAI's AllocateAction_LargeCluster shape (bench/generator.h,
# KaiAllocateShape(100, 500): 100 nodes x 8 GPUs, 500 pending one-GPU jobs in 4 queues), written
# by bench/generator's ToYaml with this one-off program, linked against build/libkaicore.a:
#   #include <cstdio>
#   #include "generator.h"
#   int main() {
#     std::fputs(kai::bench::ToYaml(kai::bench::Generate(kai::bench::KaiAllocateShape(100, 500)))
#                    .c_str(), stdout);
#   }
#   g++ -std=c++20 -O2 -Isrc -Ibench gen.cc bench/generator.cc build/libkaicore.a -lyaml-cpp
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
kai="${1:?usage: callgrind_check.sh <path to kai> [--update]}"
update="${2:-}"
yaml="$here/allocate-large.yaml"
baseline="$here/baseline.txt"
limit_pct=10

skip() {
  echo "SKIP: $*"
  exit 77
}

command -v valgrind >/dev/null || skip "valgrind not installed"
command -v callgrind_annotate >/dev/null || skip "callgrind_annotate not installed"
cache="$(dirname "$kai")/CMakeCache.txt"
if [[ -f "$cache" ]]; then
  build_type="$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$cache")"
  sanitize="$(sed -n 's/^KAI_SANITIZE:[A-Z]*=//p' "$cache")"
  [[ "$build_type" == "Release" ]] || skip "the baseline is for Release builds (this one: '${build_type}')"
  [[ "$sanitize" != "ON" ]] || skip "sanitizer build"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# run_case <name> <yaml> <count key> <expected count> [kai simulate arguments...]: runs kai
# simulate under callgrind, checks the first cycle's <count key> (the run must still reach the
# same outcome, or the count measures a different run), and leaves callgrind.out.<name> and
# annotate.<name>.
run_case() {
  local name="$1" yaml="$2" key="$3" want="$4"
  shift 4
  valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out.$name" \
    "$kai" simulate -f "$yaml" --now 2025-01-01T12:00:00Z -o json "$@" >"$work/result.$name.json" \
    2>"$work/valgrind.$name.log" || {
    cat "$work/valgrind.$name.log" >&2
    echo "FAIL: kai simulate ($name) failed under valgrind" >&2
    exit 1
  }
  local got
  got="$(grep -o "\"$key\":[0-9]*" "$work/result.$name.json" | awk -F: 'NR == 1 { print $2 }')"
  if [[ "$got" != "$want" ]]; then
    echo "FAIL: $name: expected $want $key in cycle 1, got '${got}'" >&2
    exit 1
  fi
  callgrind_annotate --inclusive=yes --threshold=100 "$work/callgrind.out.$name" \
    >"$work/annotate.$name.txt" 2>/dev/null
}

# The inclusive cost of kai::sim::Simulate in a case's annotation.
simulate_cost() {
  awk '/kai::sim::Simulate\(/ && !done { gsub(",", "", $1); print $1; done = 1 }' \
    "$work/annotate.$1.txt"
}

run_case allocate "$yaml" binds 500
run_case reclaim "$here/reclaim-large-jobs-50.yaml" evictions 374 --actions reclaim
# (No `| head` or early `exit` in these pipelines: with pipefail a writer's SIGPIPE fails them.)
total="$(awk '/^(summary|totals):/ && !done { print $2; done = 1 }' "$work/callgrind.out.allocate")"
simulate="$(simulate_cost allocate)"
reclaim_simulate="$(simulate_cost reclaim)"
if [[ -z "$total" || -z "$simulate" || -z "$reclaim_simulate" ]]; then
  echo "FAIL: could not read the instruction counts (total='${total}', simulate='${simulate}'," \
    "reclaim_simulate='${reclaim_simulate}')" >&2
  exit 1
fi

if [[ "$update" == "--update" ]]; then
  {
    echo "# callgrind instruction counts (Ir) of tests/perf/callgrind_check.sh: kai simulate -f"
    echo "# tests/perf/allocate-large.yaml --now 2025-01-01T12:00:00Z -o json (total, simulate) and"
    echo "# of tests/perf/reclaim-large-jobs-50.yaml --actions reclaim (reclaim_simulate), Release build."
    echo "# Measured $(date -u +%Y-%m-%d) with $(c++ --version 2>/dev/null | awk 'NR == 1')."
    echo "total $total"
    echo "simulate $simulate"
    echo "reclaim_simulate $reclaim_simulate"
  } >"$baseline"
  echo "baseline updated: total $total, simulate $simulate, reclaim_simulate $reclaim_simulate"
  exit 0
fi

[[ -f "$baseline" ]] || {
  echo "FAIL: no baseline ($baseline); run with --update" >&2
  exit 1
}
status=0
for name in total simulate reclaim_simulate; do
  now="${!name}"
  base="$(awk -v k="$name" '$1 == k { print $2 }' "$baseline")"
  if [[ -z "$base" ]]; then
    echo "FAIL: $name missing from $baseline" >&2
    status=1
    continue
  fi
  pct="$(awk -v a="$now" -v b="$base" 'BEGIN { printf "%+.1f", (a - b) * 100 / b }')"
  echo "$name: $now instructions (baseline $base, ${pct}%)"
  if awk -v a="$now" -v b="$base" -v l="$limit_pct" 'BEGIN { exit !(a > b * (1 + l / 100)) }'; then
    echo "FAIL: $name grew by more than ${limit_pct}% ($base -> $now)" >&2
    status=1
  elif awk -v a="$now" -v b="$base" -v l="$limit_pct" 'BEGIN { exit !(a < b * (1 - l / 100)) }'; then
    echo "note: $name shrank by more than ${limit_pct}%: refresh the baseline" \
      "(tests/perf/callgrind_check.sh $kai --update)"
  fi
done
exit $status
