#!/bin/sh
# The what-if benchmark: a week of a 500-node x 8-GPU cluster, 20 queues, about 20,000 jobs.
#   bench/whatif/run_week.sh [KAI=build/kai] [OUT=/tmp/whatif-week] [PERIOD=1s] [MEDIAN=3h]
set -e
KAI=${1:-build/kai}
OUT=${2:-/tmp/whatif-week}
PERIOD=${3:-1s}
MEDIAN=${4:-3h}
python3 "$(dirname "$0")/make_week.py" "$OUT" 500 20 20000
sed -i "s/median: [0-9hm]*,/median: $MEDIAN,/" "$OUT/week.yaml"
start=$(date +%s.%N)
"$KAI" whatif -f "$OUT/cluster.yaml" --workload "$OUT/week.yaml" --until 7d --seed 1 \
  --period "$PERIOD" -o json > "$OUT/result.json"
end=$(date +%s.%N)
python3 - "$OUT/result.json" "$start" "$end" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["variants"][0]
wall = float(sys.argv[3]) - float(sys.argv[2])
jobs = sum(q["jobs"] for q in r["queues"])
waits = max(q["waitP95Seconds"] for q in r["queues"])
print(f"wall {wall:.1f} s; jobs {jobs}; events {r['events']} ({r['events']/wall:.0f}/s); "
      f"cycles {r['cycles']} ({r['cycles']/wall:.0f}/s); mean utilisation "
      f"{100*r['meanUtilisation']:.1f}%; worst queue p95 wait {waits} s")
PY
