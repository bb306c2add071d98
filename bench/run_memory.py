#!/usr/bin/env python3
"""`kai run` against the same components run alone, on a real kube-apiserver: resident memory
and the watches the server holds open (issue 19, `kai run` shares one client and one cache).

    python3 bench/run_memory.py [--nodes 200] [--pods 10000] [--kai build/kai]

Starts a kube-apiserver + etcd (../shared/tools/kube-apiserver), creates --nodes GPU nodes and
--pods running pods (bound at create, one PodGroup per ten), then
1. runs `kai run --components scheduler,binder,podgrouper,controllers,scale-adjuster`, waits
   until every component is ready and has run a while, and reads its RSS and the server's
   gauge of open watches (apiserver_longrunning_requests, minus the server's own);
2. stops it and runs the five components as five processes, and reads the same.
Prints both and their ratios as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
sys.path.insert(0, str(REPO / "bench"))
import e2e_fill as fill  # noqa: E402
import kube_server  # noqa: E402
import scenario_loader as sl  # noqa: E402

COMPONENTS = ["scheduler", "binder", "podgrouper", "controllers", "scale-adjuster"]
BASE_PORT = 21000 + os.getpid() % 500 * 20


def rss_mib(pid: int) -> float:
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def populate(server, args) -> None:
    args.writers, args.gpus = 8, 8
    fill.create_world(server, args)
    client = sl.Client(server.kubeconfig)
    client.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                       "metadata": {"name": "kai-scheduler"}})
    client.close()
    groups = [fill.pod_group("fill", f"run-{i:06d}") for i in range(args.pods // 10)]
    fill.parallel(server.kubeconfig, 8, groups, lambda c, g: c.post(
        "/apis/scheduling.run.ai/v2alpha2/namespaces/fill/podgroups", g))
    pods = [fill.pod("fill", f"run-{i:06d}", f"run-{i // 10:06d}", "kai-scheduler",
                     f"node-{i % args.nodes:05d}", gpus=0) for i in range(args.pods)]
    fill.parallel(server.kubeconfig, 8, pods, lambda c, p: c.post(
        "/api/v1/namespaces/fill/pods", p))


def measure(server, procs: list[tuple[subprocess.Popen, int]], baseline: dict, settle: float):
    for p, health in procs:
        fill.wait_ready(p, health, f"pid {p.pid} (health :{health})", timeout=180)
    time.sleep(settle)
    for p, _ in procs:
        if p.poll() is not None:
            raise RuntimeError(f"pid {p.pid} exited with {p.returncode}")
    watches = {r: n - baseline.get(r, 0.0) for r, n in server.open_watches().items()
               if n != baseline.get(r, 0.0)}
    pids = {p.pid for p, _ in procs}  # kai run: one process serves every health port
    return {"rss_mib": round(sum(rss_mib(pid) for pid in pids), 1), "processes": len(pids),
            "watches": {r: int(n) for r, n in sorted(watches.items())},
            "watches_total": int(sum(watches.values()))}


def stop(procs) -> None:
    for p, _ in procs:
        kube_server.stop_process(p)


def run_together(server, args, baseline) -> dict:
    env = dict(os.environ, KUBECONFIG=server.kubeconfig)
    p = subprocess.Popen([args.kai, "run", "--components", ",".join(COMPONENTS),
                          "--shard", "default", "--create-defaults",
                          f"--metrics-bind-address=127.0.0.1:{BASE_PORT}",
                          f"--health-probe-bind-address=127.0.0.1:{BASE_PORT + 10}"],
                         env=env, stdout=subprocess.DEVNULL, stderr=open("/tmp/kai-run-mem.log", "w"))
    procs = [(p, BASE_PORT + 10 + i) for i in range(len(COMPONENTS))]
    try:
        m = measure(server, procs, baseline, args.settle)
    finally:
        kube_server.stop_process(p)
    return m


def run_alone(server, args, baseline) -> dict:
    env = dict(os.environ, KUBECONFIG=server.kubeconfig)
    procs = []
    try:
        for i, name in enumerate(COMPONENTS):
            extra = ["--shard", "default"] if name == "scheduler" else []
            p = subprocess.Popen([args.kai, name, *extra,
                                  f"--metrics-bind-address=127.0.0.1:{BASE_PORT + i}",
                                  f"--health-probe-bind-address=127.0.0.1:{BASE_PORT + 10 + i}"],
                                 env=env, stdout=subprocess.DEVNULL,
                                 stderr=open(f"/tmp/kai-alone-{name}.log", "w"))
            procs.append((p, BASE_PORT + 10 + i))
        return measure(server, procs, baseline, args.settle)
    finally:
        stop(procs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--settle", type=float, default=10.0, help="seconds run after ready")
    ap.add_argument("--kai", default=str(REPO / "build" / "kai"))
    args = ap.parse_args()
    kube_server.require_apiserver()
    server = kube_server.Server.start()
    try:
        populate(server, args)
        baseline = server.open_watches()
        together = run_together(server, args, baseline)
        time.sleep(2)
        alone = run_alone(server, args, baseline)
    finally:
        server.stop()
    print(json.dumps({"nodes": args.nodes, "pods": args.pods, "kai_run": together,
                      "five_processes": alone,
                      "rss_ratio_run_to_alone": round(together["rss_mib"] / alone["rss_mib"], 2),
                      "watch_ratio_run_to_alone": round(
                          together["watches_total"] / max(1, alone["watches_total"]), 2)},
                     indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
