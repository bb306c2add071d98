#!/usr/bin/env bash
# Before/after decision check for changes that must not change a decision (performance work):
# runs two kai binaries on the same manifests and reports every manifest whose
# `kai simulate -f <m> --now 2025-01-01T12:00:00Z --cycles 3 -o json` output (stdout, stderr and
# exit status) differs.
#
#   scripts/compare_decisions.sh <kai before> <kai after> [random worlds] [property worlds]
#
# Manifests: the shared corpus (../shared/scenarios, or $KAI_SHARED/scenarios), tests/scenarios,
# tests/perf, examples; `random worlds` (default 300) worlds of scripts/decision_worlds.cc
# (compiled against the after binary's build directory: libkaicore.a); `property worlds`
# (default 200) worlds of tests/disruption_property_test.cc (KAI_PROPERTY_SEED, needs kai_tests
# in the after build directory; 0 skips them). Exit status 1 when some output differs.
# KAI_COMPARE_IGNORE_KEYS="a,b": JSON keys (at any depth) left out of both outputs before they are
# compared, for a change that adds output fields and must change no decision.
set -euo pipefail

before="$(realpath "${1:?usage: compare_decisions.sh <kai before> <kai after> [worlds] [property]}")"
after="$(realpath "${2:?usage: compare_decisions.sh <kai before> <kai after> [worlds] [property]}")"
worlds="${3:-300}"
property="${4:-200}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="${KAI_SHARED:-$root/../shared}"
build="$(dirname "$after")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/worlds" "$work/out"
if ((worlds > 0)); then
  g++ -std=c++20 -O1 -I"$root/src" -I"$root/bench" "$root/scripts/decision_worlds.cc" \
    "$root/bench/generator.cc" "$build/libkaicore.a" -lyaml-cpp -o "$work/gen"
  "$work/gen" "$work/worlds" "$worlds"
fi
if ((property > 0)) && [[ -x "$build/kai_tests" ]]; then
  for seed in $(seq 1 "$property"); do
    mkdir -p "$work/prop"
    TEST_TMPDIR="$work/prop/" KAI_PROPERTY_SEED="$seed" "$build/kai_tests" \
      --gtest_filter='DisruptionProperty.NoNodeOvercommit' >/dev/null 2>&1 || true
    mv "$work/prop/disruption_property_seed.yaml" "$work/worlds/property-$seed.yaml" 2>/dev/null ||
      true
  done
fi

{
  find "$shared/scenarios" "$root/tests/scenarios" -name scenario.yaml 2>/dev/null
  find "$root/tests/perf" "$root/examples" -name '*.yaml' 2>/dev/null
  find "$work/worlds" -name '*.yaml'
} | sort >"$work/manifests"

strip_keys() {  # drops $KAI_COMPARE_IGNORE_KEYS from the JSON on stdin (other text unchanged)
  if [[ -z "${KAI_COMPARE_IGNORE_KEYS:-}" ]]; then cat; return; fi
  python3 -c '
import json, os, sys
keys = set(os.environ["KAI_COMPARE_IGNORE_KEYS"].split(","))
def strip(v):
    if isinstance(v, dict): return {k: strip(x) for k, x in v.items() if k not in keys}
    if isinstance(v, list): return [strip(x) for x in v]
    return v
text = sys.stdin.read()
try:
    print(json.dumps(strip(json.loads(text)), indent=1, sort_keys=False))
except ValueError:
    sys.stdout.write(text)
'
}
run() {  # <kai> <manifest> <out file>: stdout (keys stripped), then stderr, then the exit status
  local rc=0
  "$1" simulate -f "$2" --now 2025-01-01T12:00:00Z --cycles 3 -o json >"$3.out" 2>"$3.err" || rc=$?
  { strip_keys <"$3.out"; cat "$3.err"; echo "exit $rc"; } >"$3"
  rm -f "$3.out" "$3.err"
}
export -f strip_keys
export -f run

xargs -a "$work/manifests" -P 2 -I{} bash -c '
  id=$(echo "{}" | md5sum | cut -c1-16)
  run "'"$before"'" "{}" "'"$work"'/out/$id.before"
  run "'"$after"'" "{}" "'"$work"'/out/$id.after"
  cmp -s "'"$work"'/out/$id.before" "'"$work"'/out/$id.after" || echo "DIFFERS: {}"
' | tee "$work/diffs"

total=$(wc -l <"$work/manifests")
diffs=$(grep -c '^DIFFERS' "$work/diffs" || true)
echo "compared $total manifests: $diffs differ"
((diffs == 0))
