#!/usr/bin/env python3
"""End-to-end fill on a real kube-apiserver (issue "kai scheduler", benchmark).

    python3 bench/e2e_fill.py [--nodes 500] [--gpus 8] [--pods 4000] [--writers 8]
                              [--period 1s] [--kai build/kai] [--scale-nodes 0 --scale-pods 0]
                              [--binder [--binder-workers 10]] [--fraction 0.5]

1. Starts a kube-apiserver + etcd (../shared/tools/kube-apiserver), installs kai's CRDs, a
   queue, and --nodes Nodes with --gpus GPUs each.
2. Baseline: creates --pods PodGroups and --pods pods (one GPU each) that no scheduler owns
   (schedulerName: none), with --writers parallel kept-alive connections, and times it: the
   server's own create rate for exactly the objects of the fill. Then the writers create the
   --pods BindRequests a fill writes, timed too: pods + BindRequests are every write the fill
   needs after its first pod. They are deleted again.
3. Fill: starts `kai scheduler` (--schedule-period --period), creates the same objects for
   kai-scheduler, and times from the first pod created to the last BindRequest on the server.
4. Prints pods/s for both, their ratio, and the scheduler's peak RSS and CPU.
With --binder: then, on a fresh server, the same fill with `kai binder` running too, timed from
the first pod created to the last pod bound (the binder's count of succeeded binds, checked
against the pods with a node on the server); prints the ratio bound fill / fill.
With --fraction 0.5: the pods ask for half a GPU each (as admission leaves them); with --binder a
thread plays the nodes' part for reservation pods (annotates each with a GPU of its node).
With --backlog: the pods are created first and the scheduler started after, so that its bind
write rate is measured alone (from ready to the last BindRequest).
With --scale-nodes/--scale-pods (e.g. 4000 and 140000): instead, lists a cluster of that size
(running pods bound to nodes, created directly) and reports the scheduler's RSS and CPU per
cycle over 20 cycles.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import threading
import time
import urllib.request

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
import kube_server  # noqa: E402
import scenario_loader as sl  # noqa: E402


def node(i: int, gpus: int) -> dict:
    name = f"node-{i:05d}"
    res = {"cpu": "64", "memory": "512Gi", "pods": "250", "nvidia.com/gpu": str(gpus)}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"capacity": res, "allocatable": res,
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                       "message": "fake"}]}}


def pod_group(ns: str, name: str) -> dict:
    return {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"queue": "team", "minMember": 1}}


def pod(ns: str, name: str, group: str, scheduler: str, node_name: str = "",
        gpus: int = 1, fraction: str = "") -> dict:
    """A pod of one GPU (or `gpus`); with `fraction` (e.g. "0.5") a GPU-sharing pod as admission
    leaves it: the gpu-fraction annotation, the ConfigMap annotation and the environment from the
    two ConfigMaps the binder writes."""
    c = {"name": "c", "image": "x",
         "resources": {"limits": {"nvidia.com/gpu": str(gpus)},
                       "requests": {"cpu": "100m", "memory": "128Mi"}}}
    ann = {"pod-group-name": group}
    if fraction:
        del c["resources"]["limits"]["nvidia.com/gpu"]
        prefix = f"{name}-shared-gpu"
        ann.update({"gpu-fraction": fraction, "runai/shared-gpu-configmap": prefix})
        c["env"] = [{"name": k, "valueFrom": {"configMapKeyRef": {"name": f"{prefix}-0", "key": k}}}
                    for k in ("NVIDIA_VISIBLE_DEVICES", "GPU_PORTION")]
        c["envFrom"] = [{"configMapRef": {"name": f"{prefix}-0-evar"}}]
    spec = {"schedulerName": scheduler, "containers": [c]}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "annotations": ann}, "spec": spec}


def parallel(kubeconfig: str, writers: int, items: list, fn) -> float:
    """Runs fn(client, item) over items on `writers` connections; returns the seconds taken."""
    chunks = [items[i::writers] for i in range(writers)]
    errors: list[str] = []

    def work(chunk):
        c = sl.Client(kubeconfig)
        try:
            for it in chunk:
                try:
                    fn(c, it)
                except sl.ApiError as e:
                    errors.append(str(e))
        finally:
            c.close()

    t0 = time.monotonic()
    threads = [threading.Thread(target=work, args=(ch,)) for ch in chunks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError(f"{len(errors)} writes failed, e.g. {errors[0]}")
    return time.monotonic() - t0


def create_world(server, args) -> None:
    client = sl.Client(server.kubeconfig)
    sl.Loader(client).ensure_crds()
    for ns in ("fill", "baseline"):
        client.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                           "metadata": {"name": ns}})
    for q, parent in (("root", None), ("team", "root")):
        spec = {"resources": {r: {"quota": -1, "limit": -1, "overQuotaWeight": 1}
                              for r in ("gpu", "cpu", "memory")}}
        if parent:
            spec["parentQueue"] = parent
        client.post("/apis/scheduling.run.ai/v2/queues",
                    {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
                     "metadata": {"name": q}, "spec": spec})
    nodes = [node(i, args.gpus) for i in range(args.nodes)]
    parallel(server.kubeconfig, args.writers, nodes, lambda c, n: c.post("/api/v1/nodes", n))
    client.close()


def create_jobs(server, args, ns: str, scheduler: str) -> tuple[float, float]:
    """Creates the PodGroups, then the pods; returns (seconds, monotonic time of the first pod)."""
    groups = [pod_group(ns, f"job-{i:05d}") for i in range(args.pods)]
    parallel(server.kubeconfig, args.writers, groups, lambda c, g: c.post(
        f"/apis/scheduling.run.ai/v2alpha2/namespaces/{ns}/podgroups", g))
    pods = [pod(ns, f"job-{i:05d}-0", f"job-{i:05d}", scheduler, fraction=args.fraction)
            for i in range(args.pods)]
    first = time.monotonic()
    secs = parallel(server.kubeconfig, args.writers, pods,
                    lambda c, p: c.post(f"/api/v1/namespaces/{ns}/pods", p))
    return secs, first


def count_bind_requests(client, ns: str) -> int:
    lst = client.get(f"/apis/scheduling.run.ai/v1alpha2/namespaces/{ns}/bindrequests")
    return len(lst.get("items") or [])


def proc_stats(pid: int) -> tuple[float, float]:
    """(peak RSS MiB, CPU seconds) of a process."""
    hwm = 0.0
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            hwm = int(line.split()[1]) / 1024
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return hwm, (int(fields[11]) + int(fields[12])) / ticks


def server_cpu() -> dict:
    """CPU seconds so far of the kube-apiserver and etcd processes (one server runs at a time)."""
    out = {"kube-apiserver": 0.0, "etcd": 0.0}
    ticks = os.sysconf("SC_CLK_TCK")
    for d in pathlib.Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            comm = (d / "comm").read_text().strip()
            if comm in out:
                f = (d / "stat").read_text().rsplit(")", 1)[1].split()
                out[comm] += (int(f[11]) + int(f[12])) / ticks
        except OSError:
            pass
    return out


def cpu_since(before: dict) -> dict:
    now = server_cpu()
    return {f"{k.replace('-', '_')}_cpu_s": round(now[k] - before[k], 2) for k in now}


def api_calls(client) -> dict:
    """apiserver_request_total by verb and resource (the server's own /metrics)."""
    conn = client._connect()
    conn.request("GET", client.prefix + "/metrics", headers=dict(client.headers, Accept="text/plain"))
    text = conn.getresponse().read().decode()
    out: dict[str, float] = {}
    for m in re.finditer(r'^apiserver_request_total\{([^}]*)\} ([0-9.e+]+)$', text, re.M):
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        sub = f"/{labels['subresource']}" if labels.get("subresource") else ""
        key = f"{labels.get('verb')} {labels.get('resource')}{sub}"
        out[key] = out.get(key, 0) + float(m.group(2))
    return out


def calls_since(before: dict, after: dict) -> dict:
    d = {k: int(v - before.get(k, 0)) for k, v in after.items() if v - before.get(k, 0) >= 1}
    return dict(sorted(d.items(), key=lambda kv: -kv[1]))


def start_scheduler(server, args, extra: list[str]) -> tuple[subprocess.Popen, int]:
    port = 19000 + os.getpid() % 1000
    env = dict(os.environ, KUBECONFIG=server.kubeconfig)
    p = subprocess.Popen([args.kai, "scheduler", "--schedule-period", args.period,
                          "--max-in-flight", str(args.max_in_flight),
                          "--metrics-bind-address", f"127.0.0.1:{port}",
                          "--health-probe-bind-address", f"127.0.0.1:{port}", *extra],
                         env=env, stdout=subprocess.DEVNULL, stderr=open("/tmp/kai-fill.log", "w"))
    wait_ready(p, port, "the scheduler")
    return p, port


def wait_ready(p: subprocess.Popen, port: int, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1).status == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    p.kill()
    raise RuntimeError(f"{what} did not become ready")


def metric(port: int, name: str) -> int:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    m = re.search(rf"^{name} (\d+)", text, re.M)
    return int(m.group(1)) if m else 0


def bind_requests_written(port: int) -> int:
    return metric(port, "kai_bind_requests_created_total")


def cycles(port: int) -> int:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    m = re.search(r"^kai_scheduling_cycles_total (\d+)", text, re.M)
    return int(m.group(1)) if m else 0


def bind_request(ns: str, pod_name: str, node_name: str) -> dict:
    return {"apiVersion": "scheduling.run.ai/v1alpha2", "kind": "BindRequest",
            "metadata": {"name": pod_name, "namespace": ns, "labels": {"selected-node": node_name}},
            "spec": {"podName": pod_name, "selectedNode": node_name,
                     "receivedResourceType": "Regular", "receivedGPU": {"count": 1, "portion": "1.00"}}}


def create_bind_requests(server, args, ns: str) -> float:
    """The BindRequests a fill writes, created by the writers themselves; returns the seconds."""
    brs = [bind_request(ns, f"job-{i:05d}-0", f"node-{i % args.nodes:05d}") for i in range(args.pods)]
    return parallel(server.kubeconfig, args.writers, brs, lambda c, b: c.post(
        f"/apis/scheduling.run.ai/v1alpha2/namespaces/{ns}/bindrequests", b))


RES_NS = "kai-resource-reservation"
GPU_ANN = "run.ai/reserve_for_gpu_index"


class ReservationPlayer(threading.Thread):
    """Plays the nodes' part for reservation pods (no kubelet runs): watches namespace
    kai-resource-reservation and annotates each new reservation pod with a GPU of its node, as
    `kai resource-reservation` would, on `writers` connections."""

    def __init__(self, kubeconfig: str, writers: int = 4, delay: float = 0.0):
        super().__init__(daemon=True)
        self.kubeconfig = kubeconfig
        self.delay = delay  # seconds from a reservation pod's creation to its annotation
        self.todo: list[dict] = []
        self.cv = threading.Condition()
        self.next_gpu: dict[str, int] = {}
        self.annotated = 0
        self.errors: list[str] = []
        self.stopping = False
        self.pool = [threading.Thread(target=self.annotate, daemon=True) for _ in range(writers)]

    def run(self):
        for t in self.pool:
            t.start()
        watcher = sl.Client(self.kubeconfig)
        while not self.stopping:
            try:
                for ev in watcher.watch(f"/api/v1/namespaces/{RES_NS}/pods", timeout=5):
                    md = ev["object"].get("metadata") or {}
                    if ev["type"] == "ADDED" and GPU_ANN not in (md.get("annotations") or {}):
                        with self.cv:
                            self.todo.append((time.monotonic() + self.delay, ev["object"]))
                            self.cv.notify()
                    if self.stopping:
                        break
            except (OSError, sl.ApiError, ValueError):
                time.sleep(0.05)  # a watch time-out or a closed stream: watch again

    def annotate(self):
        c = sl.Client(self.kubeconfig)
        while True:
            with self.cv:
                while not self.todo and not self.stopping:
                    self.cv.wait()
                if self.stopping:
                    return
                due, p = self.todo.pop(0)
                node_name = p["spec"].get("nodeName", "")
                idx = self.next_gpu.get(node_name, 0)
                self.next_gpu[node_name] = idx + 1
            time.sleep(max(0.0, due - time.monotonic()))
            try:
                c.merge_patch(f"/api/v1/namespaces/{RES_NS}/pods/{p['metadata']['name']}",
                              {"metadata": {"annotations": {GPU_ANN: f"GPU-{node_name}-{idx}"}}})
                self.annotated += 1
            except sl.ApiError as e:
                self.errors.append(str(e))

    def stop(self):
        with self.cv:
            self.stopping = True
            self.cv.notify_all()


def start_binder(server, args) -> tuple[subprocess.Popen, int]:
    port = 20000 + os.getpid() % 1000
    env = dict(os.environ, KUBECONFIG=server.kubeconfig)
    p = subprocess.Popen([args.kai, "binder", "--max-concurrent", str(args.binder_workers),
                          "--metrics-bind-address", f"127.0.0.1:{port}",
                          "--health-probe-bind-address", f"127.0.0.1:{port}", *args.binder_arg],
                         env=env, stdout=subprocess.DEVNULL, stderr=open("/tmp/kai-binder-fill.log", "w"))
    wait_ready(p, port, "the binder")
    return p, port


def binder_metric(port: int, series: str) -> float:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    m = re.search(rf'^{re.escape(series)} ([0-9.e+-]+)', text, re.M)
    return float(m.group(1)) if m else 0.0


def binds_done(port: int) -> int:
    return int(binder_metric(port, 'kai_binder_binds_total{result="succeeded"}'))


def bound_pods(client, ns: str) -> int:
    lst = client.get(f"/api/v1/namespaces/{ns}/pods", query={"fieldSelector": "spec.nodeName!="})
    return len(lst.get("items") or [])


def bound_fill(server, args) -> dict:
    """The fill again on a fresh server with `kai binder` running too: first pod created to last
    pod bound (pods/binding), the reservation pods played by a ReservationPlayer."""
    create_world(server, args)
    client = sl.Client(server.kubeconfig)
    client.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                       "metadata": {"name": RES_NS}})
    player = ReservationPlayer(server.kubeconfig, writers=16 if args.reservation_delay else 4,
                               delay=args.reservation_delay)
    player.start()
    sched, _ = start_scheduler(server, args, [])
    binder, bport = start_binder(server, args)
    try:
        cpu0, calls0 = server_cpu(), api_calls(client)
        _, first = create_jobs(server, args, "fill", "kai-scheduler")
        deadline = time.monotonic() + 900
        while binds_done(bport) < args.pods:
            if time.monotonic() > deadline or sched.poll() is not None or binder.poll() is not None:
                raise RuntimeError(f"{binds_done(bport)} of {args.pods} pods bound; see "
                                   "/tmp/kai-fill.log and /tmp/kai-binder-fill.log")
            time.sleep(0.05)
        bound_secs = time.monotonic() - first
        server_during = {f"bound_{k}": v for k, v in cpu_since(cpu0).items()}
        if args.api_calls:
            server_during["bound_api_calls"] = calls_since(calls0, api_calls(client))
        on_server = bound_pods(client, "fill")
        if on_server != args.pods:
            raise RuntimeError(f"{on_server} pods bound on the server, {args.pods} expected")
        bind_s = binder_metric(bport, "kai_binder_bind_duration_seconds_sum")
        rss, cpu = proc_stats(binder.pid)
        srss, scpu = proc_stats(sched.pid)
        reservations = len(client.get(f"/api/v1/namespaces/{RES_NS}/pods").get("items") or [])
    finally:
        player.stop()
        binder.terminate()
        sched.terminate()
        binder.wait(timeout=30)
        sched.wait(timeout=30)
    if player.errors:
        raise RuntimeError(f"{len(player.errors)} reservation annotations failed: {player.errors[0]}")
    return {"bound_fill_s": round(bound_secs, 2), "bound_pods_per_s": round(args.pods / bound_secs, 1),
            "binder_mean_bind_ms": round(bind_s * 1000 / args.pods, 1),
            "reservation_pods": reservations, "binder_peak_rss_mib": round(rss, 1),
            "binder_cpu_s": round(cpu, 2), "scheduler_peak_rss_mib_with_binder": round(srss, 1),
            "scheduler_cpu_s_with_binder": round(scpu, 2), **server_during}


def fill(server, args) -> dict:
    create_world(server, args)
    base_secs, _ = create_jobs(server, args, "baseline", "none")
    base_br_secs = create_bind_requests(server, args, "baseline")
    client = sl.Client(server.kubeconfig)
    client.delete("/apis/scheduling.run.ai/v1alpha2/namespaces/baseline/bindrequests")
    client.delete("/api/v1/namespaces/baseline/pods")
    client.delete("/apis/scheduling.run.ai/v2alpha2/namespaces/baseline/podgroups")
    sched, port = start_scheduler(server, args, [])
    try:
        cpu0 = server_cpu()
        _, first = create_jobs(server, args, "fill", "kai-scheduler")
        deadline = time.monotonic() + 600
        # The scheduler's own count of BindRequests the server acknowledged (listing thousands of
        # BindRequests in a loop would load the server that is being measured).
        trace = []
        while bind_requests_written(port) < args.pods:
            if args.trace:
                trace.append((round(time.monotonic() - first, 2), metric(port, "kai_informer_events_total"),
                              bind_requests_written(port)))
            if time.monotonic() > deadline or sched.poll() is not None:
                raise RuntimeError("the fill did not finish; see /tmp/kai-fill.log")
            time.sleep(0.05)
        fill_secs = time.monotonic() - first
        server_during = {f"fill_{k}": v for k, v in cpu_since(cpu0).items()}
        if args.trace:
            for row in trace[::20]:
                print(*row, file=sys.stderr)
        on_server = count_bind_requests(client, "fill")
        if on_server != args.pods:
            raise RuntimeError(f"{on_server} BindRequests on the server, {args.pods} expected")
        rss, cpu = proc_stats(sched.pid)
    finally:
        sched.terminate()
        sched.wait(timeout=30)
    return {"baseline_create_s": round(base_secs, 2),
            "baseline_pods_per_s": round(args.pods / base_secs, 1),
            "baseline_bind_requests_s": round(base_br_secs, 2),
            "baseline_pods_and_bind_requests_s": round(base_secs + base_br_secs, 2),
            "fill_s": round(fill_secs, 2), "fill_pods_per_s": round(args.pods / fill_secs, 1),
            "ratio_fill_to_create_time": round(fill_secs / base_secs, 2),
            "ratio_fill_to_pods_and_bind_requests": round(fill_secs / (base_secs + base_br_secs), 2),
            "scheduler_peak_rss_mib": round(rss, 1), "scheduler_cpu_s": round(cpu, 2),
            **server_during}


def backlog(server, args) -> dict:
    """The pods created first, the scheduler started after: its bind write rate alone."""
    create_world(server, args)
    create_s, _ = create_jobs(server, args, "fill", "kai-scheduler")
    t0 = time.monotonic()
    sched, port = start_scheduler(server, args, [])
    try:
        ready = time.monotonic()
        while bind_requests_written(port) < args.pods:
            if time.monotonic() - t0 > 600 or sched.poll() is not None:
                raise RuntimeError("the binds did not finish; see /tmp/kai-fill.log")
            time.sleep(0.02)
        done = time.monotonic()
        rss, cpu = proc_stats(sched.pid)
    finally:
        sched.terminate()
        sched.wait(timeout=30)
    return {"pods_create_s": round(create_s, 2), "pods_per_s_created": round(args.pods / create_s, 1),
            "ready_to_last_bind_s": round(done - ready, 2),
            "binds_per_s": round(args.pods / (done - ready), 1),
            "scheduler_peak_rss_mib": round(rss, 1), "scheduler_cpu_s": round(cpu, 2)}


def scale(server, args) -> dict:
    """A listed cluster of --scale-nodes nodes and --scale-pods running pods (bound at create)."""
    args.nodes = args.scale_nodes
    create_world(server, args)
    per_group = 10
    groups = [pod_group("fill", f"run-{i:06d}") for i in range(args.scale_pods // per_group)]
    parallel(server.kubeconfig, args.writers, groups, lambda c, g: c.post(
        "/apis/scheduling.run.ai/v2alpha2/namespaces/fill/podgroups", g))
    pods = []
    for i in range(args.scale_pods):
        g = i // per_group
        n = f"node-{i % args.scale_nodes:05d}"
        pods.append(pod("fill", f"run-{i:06d}", f"run-{g:06d}", "kai-scheduler", n, gpus=0))
    t0 = time.monotonic()
    parallel(server.kubeconfig, args.writers, pods,
             lambda c, p: c.post("/api/v1/namespaces/fill/pods", p))
    create_s = time.monotonic() - t0
    sched, port = start_scheduler(server, args, [])
    try:
        ready_rss, ready_cpu = proc_stats(sched.pid)
        c0 = cycles(port)
        time.sleep(20 * float(args.period.rstrip("s")) + 1)
        c1 = cycles(port)
        rss, cpu = proc_stats(sched.pid)
    finally:
        sched.terminate()
        sched.wait(timeout=30)
    n = max(1, c1 - c0)
    return {"nodes": args.scale_nodes, "pods": args.scale_pods, "create_s": round(create_s, 1),
            "peak_rss_mib": round(rss, 1),
            "bytes_per_pod": int(rss * 1024 * 1024 / args.scale_pods),
            "cpu_s_to_sync": round(ready_cpu, 2),
            "cycles": n, "cpu_ms_per_cycle": round((cpu - ready_cpu) * 1000 / n, 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--pods", type=int, default=4000)
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--period", default="1s")
    ap.add_argument("--max-in-flight", type=int, default=32, help="the scheduler's concurrent writes")
    ap.add_argument("--kai", default=str(REPO / "build" / "kai"))
    ap.add_argument("--scale-nodes", type=int, default=0)
    ap.add_argument("--scale-pods", type=int, default=0)
    ap.add_argument("--trace", action="store_true", help="print (s, watch events, binds) samples")
    ap.add_argument("--backlog", action="store_true",
                    help="create the pods first, then start the scheduler: its bind rate alone")
    ap.add_argument("--fraction", default="", help='GPU-sharing pods of this fraction ("0.5")')
    ap.add_argument("--binder", action="store_true",
                    help="after the fill, the same fill on a fresh server with `kai binder` too, "
                         "timed to the last pod bound, and the ratio of the two")
    ap.add_argument("--api-calls", action="store_true",
                    help="with --binder: the API server's request counts during the bound fill")
    ap.add_argument("--binder-arg", action="append", default=[],
                    help="one more flag for `kai binder` (repeatable), e.g. --binder-arg=--status-write-deferral=30s")
    ap.add_argument("--reservation-delay", type=float, default=0.0,
                    help="with --fraction: seconds a reservation pod takes to report its GPU "
                         "(a container starting)")
    ap.add_argument("--binder-workers", type=int, default=10, help="the binder's --max-concurrent")
    args = ap.parse_args()
    kube_server.require_apiserver()

    def on_fresh_server(fn) -> dict:
        server = kube_server.Server.start()
        try:
            return fn(server, args)
        finally:
            server.stop()

    if args.scale_nodes:
        result = on_fresh_server(scale)
    elif args.backlog:
        result = on_fresh_server(backlog)
    else:
        result = on_fresh_server(fill)
        if args.binder:
            result.update(on_fresh_server(bound_fill))
            result["ratio_bound_to_fill"] = round(result["bound_fill_s"] / result["fill_s"], 2)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
