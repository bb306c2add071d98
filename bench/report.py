#!/usr/bin/env python3
"""Turns Google Benchmark JSON (kai_bench --benchmark_format=json) into the kai-vs-KAI table.

KAI's figures: 4-vCPU runner, Go, medians of 2026-06-19 (issue "Scale"); KAI's in-process action
benchmarks include about 100 ms of test harness. A ratio is KAI's time divided by kai's, both
measured as wall time of the same shape (kai: median of repetitions in this run).
"""
import json
import sys

# benchmark name prefix -> (shape, KAI's published figure in ms or None)
KAI_MS = [
    ("BM_AllocateLargeCluster_Action", "Allocate Large (100 nodes x 8 GPUs, 500 jobs): action", 107.0),
    ("BM_AllocateLargeCluster_Snapshot", "Allocate Large: snapshot build", None),
    ("BM_AllocateLargeCluster_SessionOpen", "Allocate Large: session open (plugins, fair share)", None),
    ("BM_AllocateLargeCluster", "Allocate Large: snapshot + session + action", 207.0),
    ("BM_AllocateSmall", "Allocate Small (10 nodes, 50 jobs)", None),
    ("BM_FairShare1000Queues", "Fair share, 1,000 queues in 3 levels", None),
    ("BM_ManyQueuesAllocate", "ManyQueues allocate (50 nodes, 200 jobs, 20 queues)", 138.0),
    ("BM_ManyQueuesCycle", "ManyQueues full cycle", None),
    ("BM_ReclaimLargeJobs/1000", "ReclaimLargeJobs 1,000 nodes", 6080.0),
    ("BM_ReclaimLargeJobs", "ReclaimLargeJobs", None),
    ("BM_ReclaimUnschedulableDistributedJob/100", "ReclaimUnschedulableDistributedJob 100 nodes", 50800.0),
    ("BM_ReclaimUnschedulableDistributedJob", "ReclaimUnschedulableDistributedJob", None),
    ("BM_ReclaimManySingleGPUJobs/100", "ReclaimManySingleGPUJobs 100 nodes", 3490.0),
    ("BM_ReclaimManySingleGPUJobs/500", "ReclaimManySingleGPUJobs 500 nodes", 165600.0),
    ("BM_Consolidation", "Consolidation", None),
    ("BM_Preempt", "Preempt", None),
    # KAI issue #315 (4,000 nodes, 140,000 pods; bench/production_shape.h): case 1, a 6-replica
    # 4-GPU Deployment, half allocated and half reclaimed: 2.216 s snapshot + 290 ms actions.
    # KAI rebuilds its snapshot every cycle, so its 2.2 s applies after churn too.
    ("BM_ProductionSnapshotBuild", "Production 4,000 nodes / 140k pods: snapshot build", 2216.0),
    ("BM_ProductionSnapshotAfterChurn", "Production: snapshot after 1 % pod churn (kai: full rebuild)", 2216.0),
    ("BM_ProductionSessionOpen", "Production: session open (plugins, fair share)", None),
    ("BM_ProductionActions", "Production: the five actions", 290.0),
    ("BM_ProductionFullCycle", "Production: snapshot + session + five actions", 2506.0),
    ("BM_ProductionCycleAfterChurn", "Production: 1 % churn + full cycle", 2506.0),
    # Memory: the figures are counters (bytes per pod/node/PodGroup), the time is the build.
    # Issue "GPU sharing": 1,000 nodes x 8 GPUs, 16,000 pending half-GPU pods (target: 20 ms).
    ("BM_FractionalFill_Action", "Fractional fill (1,000 x 8 GPUs, 16,000 half-GPU pods): action", None),
    ("BM_FractionalFill", "Fractional fill: snapshot + session + action", None),
    ("BM_MemoryClusterState", "Memory of the object model (see counters; KAI ~17 KB/pod)", None),
    ("BM_MemorySnapshot", "Memory of the snapshot (see counters)", None),
    # KAI: 6 m 38 s end to end through a real API server (kai: scheduler time only).
    ("BM_FillCluster/500/4000", "Fill 500 nodes x 8 GPUs with 4,000 one-GPU jobs, until all run", 398000.0),
    ("BM_FillCluster", "Fill (smaller)", None),
    # KAI test/e2e/scale (docs/scale-tests/example-results.json): one gang of 512 pods x 2 GPUs on
    # 512 nodes in 4 zones x 8 blocks x 8 racks; end to end through a real API server (kai:
    # scheduler time only).
    ("BM_TopologyPreferredRack_Action", "Topology 512 nodes, 512-pod gang, preferred rack: action", None),
    ("BM_TopologyPreferredRack", "Topology 512 nodes, 512-pod gang, preferred rack: full cycle", 48723.0),
    ("BM_TopologyNoConstraint", "Topology 512 nodes, 512-pod gang, no constraint: full cycle", 49427.0),
]

UNIT_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1000.0}


def lookup(name):
    for prefix, shape, kai in KAI_MS:
        if name.startswith(prefix):
            return shape, kai
    return name, None


def main(path):
    data = json.load(open(path))
    rows = []
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = b["run_name"] if "run_name" in b else b["name"]
        ms = b["real_time"] * UNIT_MS[b.get("time_unit", "ns")]
        shape, kai = lookup(name)
        ratio = "-"
        if kai and ms > 0:
            r = kai / ms
            ratio = f"{r:,.0f}x" if r >= 10 else f"{r:.2g}x"  # below 1: kai is slower
        rows.append((name, shape, ms, kai, ratio))
    print(f"{'benchmark':48s} {'kai ms (median)':>16s} {'KAI ms':>10s} {'KAI/kai':>10s}  shape")
    for name, shape, ms, kai, ratio in rows:
        kai_s = f"{kai:,.0f}" if kai else "-"
        print(f"{name:48s} {ms:16.3f} {kai_s:>10s} {ratio:>10s}  {shape}")


if __name__ == "__main__":
    main(sys.argv[1])
