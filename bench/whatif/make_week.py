#!/usr/bin/env python3
"""Writes the what-if benchmark's inputs: a cluster of NODES x 8-GPU nodes with QUEUES queues
(cluster.yaml) and a generator spec with about JOBS jobs over a week (week.yaml).
  python3 bench/whatif/make_week.py OUT_DIR [NODES=500] [QUEUES=20] [JOBS=20000]"""
import os
import sys

out = sys.argv[1]
nodes = int(sys.argv[2]) if len(sys.argv) > 2 else 500
queues = int(sys.argv[3]) if len(sys.argv) > 3 else 20
jobs = int(sys.argv[4]) if len(sys.argv) > 4 else 20000
os.makedirs(out, exist_ok=True)
gpus = nodes * 8
with open(os.path.join(out, "cluster.yaml"), "w") as f:
    f.write("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: train}\n"
            "value: 50\n---\n")
    for q in range(queues):
        quota = gpus // queues
        f.write(f"apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {{name: team-{q:02d}, "
                f"creationTimestamp: \"2025-01-01T00:00:{q:02d}Z\"}}\nspec:\n  resources:\n"
                f"    gpu: {{quota: {quota}, limit: -1, overQuotaWeight: 1}}\n"
                "    cpu: {quota: -1, limit: -1, overQuotaWeight: 1}\n"
                "    memory: {quota: -1, limit: -1, overQuotaWeight: 1}\n---\n")
    for n in range(nodes):
        f.write(f"apiVersion: v1\nkind: Node\nmetadata:\n  name: node-{n:04d}\n  labels: "
                "{nvidia.com/gpu.count: \"8\", nvidia.com/gpu.memory: \"81920\"}\nstatus:\n"
                "  allocatable: {cpu: \"128\", memory: 1Ti, nvidia.com/gpu: \"8\", pods: \"110\"}\n")
        if n + 1 < nodes:
            f.write("---\n")
# Queues differ in load: the first quarter ask for twice the average, the last quarter half.
per_hour = jobs / (7 * 24) / queues
with open(os.path.join(out, "week.yaml"), "w") as f:
    f.write("duration: 7d\nqueues:\n")
    for q in range(queues):
        scale = 2.0 if q < queues // 4 else (0.5 if q >= queues - queues // 4 else 1.0)
        f.write(f"- queue: team-{q:02d}\n  priorityClass: train\n"
                f"  arrivalsPerHour: {per_hour * scale * 20 / (20 + 5 * 0.5):.4f}\n"
                "  pods: {\"1\": 5, \"2\": 3, \"4\": 2}\n"
                "  gpu: {\"1\": 3, \"2\": 1, \"4\": 1, \"8\": 1}\n"
                "  runtime: {distribution: lognormal, median: 3h30m, sigma: 1, max: 2d}\n")
