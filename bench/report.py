#!/usr/bin/env python3
"""Turns Google Benchmark JSON (kai_bench --benchmark_format=json) into the kai-vs-KAI table.

Columns: kai's wall time per cycle (median of the repetitions in this run), the time of the
actions alone (counter action_ms of the cycle benchmarks, bench/harness.h), operator new calls
per cycle (allocs) and the live heap the cycle built (heap_MB: snapshot + session + what the
actions left, before teardown), KAI's published figure for the same shape, the ratio, and the
target and whether it is met where an issue states one.

KAI's figures: 4-vCPU runner, Go, medians of 2026-06-19 (issue "Scale"); KAI's in-process
benchmarks time BuildSession + the actions and include about 100 ms of test harness. A ratio is
KAI's time divided by kai's. Shapes listed in PENDING but absent from the run are printed as
waiting, with the reason.
"""
import json
import re
import sys

# (regex on the benchmark's run name, shape, KAI's figure in ms or None, target in ms or None)
# The first matching row wins. Targets: issue "Reclaim" (ReclaimLargeJobs/1000 < 20 ms,
# ReclaimUnschedulableDistributedJob/100 < 5 ms), issue "GPU sharing" (topology < 50 ms,
# fractional fill < 20 ms), issue "Scale" (production incremental snapshot + cycle < 50 ms,
# first build < 500 ms).
SHAPES = [
    # KAI pkg/scheduler/actions/benchmark_test.go: Small 10 nodes / 50 jobs, Medium 50 / 200,
    # Large 100 / 500.
    (r"BM_Allocate/100\b", "Allocate Large (100 nodes x 8 GPUs, 500 pending jobs)", 207.0, None),
    (r"BM_Allocate/", "Allocate (Small 10/50, Medium 50/200)", None, None),
    (r"BM_Reclaim/", "Reclaim, every job running (nothing to do)", None, None),
    (r"BM_Preempt/", "Preempt, half running, one priority (no victim)", None, None),
    (r"BM_Consolidation/50\b", "Consolidation Medium (50 nodes, 200 jobs, half running)", 298.0, None),
    (r"BM_Consolidation/", "Consolidation (half running)", None, None),
    (r"BM_FullSchedulingCycle/100\b", "FullSchedulingCycle Large (five actions, 500 jobs)", 158.0, None),
    (r"BM_FullSchedulingCycle/", "FullSchedulingCycle (five actions)", None, None),
    (r"BM_ManyQueues/", "ManyQueues (50 nodes, 200 jobs, 20 queues)", None, None),
    (r"BM_GangScheduling/", "GangScheduling (50 nodes, 100 gangs x 4 pods)", None, None),
    # KAI's reclaim benchmarks.
    (r"BM_ReclaimLargeJobs/1000\b", "ReclaimLargeJobs 1,000 nodes (gang of 500 x 8 GPUs)", 6080.0, 20.0),
    (r"BM_ReclaimLargeJobs/", "ReclaimLargeJobs (gang of N/2 x 8 GPUs)", None, None),
    (r"BM_ReclaimUnschedulableDistributedJob/100\b", "ReclaimUnschedulableDistributedJob 100 nodes", 50800.0, 5.0),
    (r"BM_ReclaimUnschedulableDistributedJob/", "ReclaimUnschedulableDistributedJob", None, None),
    (r"BM_ReclaimManySingleGPUJobs/100\b", "ReclaimManySingleGPUJobs 100 nodes (800 + 800 jobs, five actions)", 3490.0, None),
    (r"BM_ReclaimManySingleGPUJobs/500\b", "ReclaimManySingleGPUJobs 500 nodes (4,000 + 4,000 jobs)", 165600.0, None),
    (r"BM_ReclaimManySingleGPUJobs/", "ReclaimManySingleGPUJobs (five actions)", None, None),
    (r"BM_PreemptActive/", "kai: preempt N*2 one-GPU pods (higher priority)", None, None),
    (r"BM_ConsolidationActive/", "kai: consolidation, N/4 2-GPU jobs need one move each", None, None),
    (r"BM_FairShare1000Queues", "Fair share alone, 1,000 leaf queues in 3 levels", None, None),
    # KAI issue #315 (4,000 nodes, 140,000 pods; bench/production_shape.h): case 1, a 6-replica
    # 4-GPU Deployment, half allocated and half reclaimed: 2.216 s snapshot + 290 ms actions.
    # KAI rebuilds its snapshot every cycle, so its 2.2 s applies after churn too.
    (r"BM_ProductionSnapshotBuild", "Production 4,000 nodes / 140k pods: first snapshot build", 2216.0, 500.0),
    (r"BM_ProductionSnapshotAfterChurn", "Production: snapshot after 1 % pod churn (kai: full rebuild)", 2216.0, None),
    (r"BM_ProductionSessionOpen", "Production: session open (plugins, fair share)", None, None),
    (r"BM_ProductionActions", "Production: the five actions", 290.0, None),
    (r"BM_ProductionFullCycle", "Production: snapshot + session + five actions", 2506.0, None),
    (r"BM_ProductionCycleAfterChurn", "Production: 1 % churn + full snapshot rebuild + full cycle", 2506.0, None),
    (r"BM_ProductionSnapshotIncremental", "Production: incremental snapshot after 1 % churn", 2216.0, None),
    (r"BM_ProductionCycleIncremental", "Production: 1 % churn + incremental snapshot + full cycle", 2506.0, 50.0),
    # Issue "GPU sharing": 1,000 nodes x 8 GPUs, 16,000 pending half-GPU pods.
    (r"BM_FractionalFill_Action", "Fractional fill (1,000 x 8 GPUs, 16,000 half-GPU pods): action", None, 20.0),
    (r"BM_FractionalFill", "Fractional fill: snapshot + session + action", None, None),
    (r"BM_MemoryClusterState", "Memory of the object model (counters; KAI ~17 KB/pod)", None, None),
    (r"BM_MemorySnapshot", "Memory of the snapshot (counters)", None, None),
    # KAI: 6 m 38 s end to end through a real API server (kai: scheduler time only).
    (r"BM_FillCluster/500/4000", "Fill 500 x 8 GPUs with 4,000 one-GPU jobs, cycles until all run", 398000.0, None),
    (r"BM_FillCluster", "Fill (smaller)", None, None),
    # KAI test/e2e/scale (docs/scale-tests/example-results.json): one gang of 512 pods x 2 GPUs on
    # 512 nodes in 4 zones x 8 blocks x 8 racks; end to end through a real API server (kai:
    # scheduler time only).
    (r"BM_TopologyPreferredRack_Action", "Topology 512 nodes, 512-pod gang, preferred rack: action", None, None),
    (r"BM_TopologyPreferredRack", "Topology 512 nodes, 512-pod gang, preferred rack: full cycle", 48723.0, 50.0),
    (r"BM_TopologyNoConstraint", "Topology 512 nodes, 512-pod gang, no constraint: full cycle", 49427.0, None),
]

# Shapes of the issues that have no benchmark yet: (name, shape, why).
PENDING = []

UNIT_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1000.0}


def lookup(name):
    for pattern, shape, kai, target in SHAPES:
        if re.match(pattern, name):
            return shape, kai, target
    return name, None, None


def fmt_ms(v):
    if v is None:
        return "-"
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def fmt_count(v):
    if v is None:
        return "-"
    if v >= 1e6:
        return f"{v / 1e6:.2f}M"
    if v >= 1e3:
        return f"{v / 1e3:.1f}k"
    return f"{v:.0f}"


def ratio(kai, ms):
    if not kai or ms <= 0:
        return "-"
    r = kai / ms
    return f"{r:,.0f}x" if r >= 10 else f"{r:.2g}x"  # below 1: kai is slower


def rows_of(data):
    rows, errors = [], {}
    for b in data["benchmarks"]:
        name = re.sub(r"/(manual_time|real_time|iterations:\d+)", "", b.get("run_name", b["name"]))
        if b.get("error_occurred"):
            errors[name] = b.get("error_message", "error")
            continue
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        ms = b["real_time"] * UNIT_MS[b.get("time_unit", "ns")]
        rows.append((name, ms, b.get("cpu_ms"), b.get("action_ms"), b.get("allocs"), b.get("heap_MB")))
    return rows, errors


def main(path):
    data = json.load(open(path))
    rows, errors = rows_of(data)
    ctx = data.get("context", {})
    print(f"# {ctx.get('date', '')}, {ctx.get('num_cpus', '?')} CPUs at {ctx.get('mhz_per_cpu', '?')} MHz, "
          f"load {', '.join(f'{x:.1f}' for x in ctx.get('load_avg', []))}; kai ms = wall time per "
          "cycle, median of the repetitions")
    head = (f"{'benchmark':44s} {'kai ms':>9s} {'cpu ms':>9s} {'action':>9s} {'allocs':>8s} {'heap MB':>8s} "
            f"{'KAI ms':>9s} {'KAI/kai':>8s} {'target':>8s} {'met?':>5s}  shape")
    print(head)
    print("-" * len(head))
    for name, ms, cpu, action, allocs, heap in rows:
        shape, kai, target = lookup(name)
        met = "-" if target is None else ("yes" if ms < target else "NO")
        tgt = "-" if target is None else f"< {target:g}"
        heap_s = "-" if heap is None else f"{heap:.2f}"
        print(f"{name:44s} {fmt_ms(ms):>9s} {fmt_ms(cpu):>9s} {fmt_ms(action):>9s} {fmt_count(allocs):>8s} {heap_s:>8s} "
              f"{fmt_ms(kai):>9s} {ratio(kai, ms):>8s} {tgt:>8s} {met:>5s}  {shape}")
    seen = {r[0] for r in rows} | set(errors)
    for name, shape, why in PENDING:
        if name not in seen:
            print(f"{name:44s} {'waiting':>9s} {'':>9s} {'':>9s} {'':>8s} {'':>8s} {'':>9s} {'':>8s} {'':>8s} {'':>5s}  {shape}: {why}")
    for name, msg in errors.items():
        print(f"{name:44s} {'FAILED':>9s}  {msg}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
