#!/usr/bin/env python3
"""simnodes: one process that plays the kubelets of N GPU nodes on a real kube-apiserver.

    python3 tools/simnodes/simnodes.py --kubeconfig K --nodes 4 --gpus-per-node 8

It registers the Nodes (capacity, allocatable, the labels GPU feature discovery sets, Ready),
keeps their Leases in kube-node-lease fresh, and runs the pods bound to them: a pod whose
spec.nodeName names one of its nodes is admitted as a kubelet would (refused with
OutOf<resource> when the node has no room), becomes Running with the conditions and container
statuses a kubelet reports, and ends by its annotations or the default rule:

    simnodes.kai/runtime: 30s | 1m30s | forever   how long its containers run
    simnodes.kai/outcome: succeed | fail          how they end (exit code 0 or 1)
    simnodes.kai/start-delay: 2s                  from bind to Running (image pull)

A pod without a runtime annotation runs --default-runtime (a duration or a MIN-MAX range drawn
from a seeded RNG) when its restartPolicy is Never or OnFailure, and forever when it is Always.
Containers that end are restarted as restartPolicy says (restartCount grows). A pod being deleted
has its containers terminated and is deleted with gracePeriodSeconds 0 (uid precondition).
kai's GPU reservation pods (namespace kai-resource-reservation) get the GPU the simulated device
plugin gave them written to their run.ai/reserve_for_gpu_index annotation, as
`kai resource-reservation` does on a real node.

One watch on all bound pods (fieldSelector spec.nodeName!=) serves every node; the decisions are
made on one thread, the API calls on a few workers (per pod in order); leases are renewed spread
evenly over --lease-interval. Python 3.11 standard library and PyYAML only. See
docs/cluster-in-a-box.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import hashlib
import heapq
import http.client
import json
import os
import pathlib
import queue
import random
import re
import signal
import sys
import threading
import time
import urllib.parse
import uuid
from typing import Any, Callable, Iterator

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
from scenario_loader import ApiError, Client  # noqa: E402

ANN_RUNTIME = "simnodes.kai/runtime"
ANN_OUTCOME = "simnodes.kai/outcome"
ANN_START_DELAY = "simnodes.kai/start-delay"
NODE_LABEL = "simnodes.kai/node"  # on every node simnodes registers (value: the name prefix)
RESERVATION_NS = "kai-resource-reservation"
RESERVED_GPU_ANNOTATION = "run.ai/reserve_for_gpu_index"
GPU = "nvidia.com/gpu"
STRATEGIC = "application/strategic-merge-patch+json"
TERMINAL = ("Succeeded", "Failed")
FOREVER = float("inf")


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_SUFFIX = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
           "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
           "E": 1e18}
_QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?\d+)?)([a-zA-Z]*)$")


def parse_duration(text: str) -> float:
    """Seconds of "30s", "1m30s", "250ms", "2h", a plain number of seconds, or "forever"."""
    text = text.strip()
    if text in ("forever", "inf", "never"):
        return FOREVER
    try:
        return float(text)
    except ValueError:
        pass
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"not a duration: {text!r} (e.g. 30s, 1m30s, forever)")
    scale = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    return sum(float(n) * scale[u] for n, u in parts)


def parse_range(text: str) -> tuple[float, float]:
    """(min, max) seconds of "30s" or "20s-40s"."""
    low, sep, high = text.partition("-")
    a = parse_duration(low)
    b = parse_duration(high) if sep else a
    if b < a:
        raise ValueError(f"range {text!r}: the maximum is below the minimum")
    return a, b


def parse_quantity(text: str | int | float) -> float:
    """A Kubernetes quantity ("500m", "1Gi", "2") as a number."""
    m = _QUANTITY.match(str(text).strip())
    if not m or (m.group(2) and m.group(2) not in _SUFFIX):
        raise ValueError(f"not a quantity: {text!r}")
    return float(m.group(1)) * _SUFFIX.get(m.group(2), 1)


def parse_labels(text: str) -> dict[str, str]:
    out = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        k, sep, v = item.partition("=")
        if not sep or not k:
            raise ValueError(f"--labels: {item!r} is not KEY=VALUE")
        out[k] = v
    return out


def now_rfc3339() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_micro() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


# --------------------------------------------------------------------------------------------
# Pods: what a kubelet reads from them
# --------------------------------------------------------------------------------------------

RESOURCES = ("cpu", "memory", GPU)


def pod_requests(pod: dict) -> dict[str, float]:
    """What the pod asks of its node: the sum over containers, at least any init container's,
    plus its overhead (requests are defaulted from limits by the API server)."""
    spec = pod.get("spec") or {}

    def of(c: dict) -> dict[str, float]:
        req = (c.get("resources") or {}).get("requests") or {}
        return {r: parse_quantity(req[r]) for r in RESOURCES if r in req}

    total = {r: 0.0 for r in RESOURCES}
    for c in spec.get("containers") or []:
        for r, v in of(c).items():
            total[r] += v
    for c in spec.get("initContainers") or []:
        for r, v in of(c).items():
            total[r] = max(total[r], v)
    for r, v in (spec.get("overhead") or {}).items():
        if r in total:
            total[r] += parse_quantity(v)
    return total


def key_of(pod: dict) -> str:
    md = pod["metadata"]
    return f"{md['namespace']}/{md['name']}"


# --------------------------------------------------------------------------------------------
# Nodes
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass
class NodeShape:
    cpu: str = "64"
    memory: str = "512Gi"
    pods: int = 110
    gpus: int = 8
    gpu_product: str = "NVIDIA-H100-80GB-HBM3"
    gpu_memory_mib: int = 81920
    labels: dict[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Node:
    name: str
    index: int
    allocatable: dict[str, float]
    max_pods: int
    gpus: int
    used: dict[str, float] = dataclasses.field(default_factory=lambda: {r: 0.0 for r in RESOURCES})
    pods: set[str] = dataclasses.field(default_factory=set)  # uids of admitted live pods
    free_gpus: list[int] = dataclasses.field(default_factory=list)
    next_ip: int = 2

    def __post_init__(self):
        self.free_gpus = list(range(self.gpus))

    def host_ip(self) -> str:
        return f"172.16.{self.index // 256}.{self.index % 256}"

    def pod_ip(self) -> str:
        ip = f"10.{64 + self.index // 256}.{self.index % 256}.{self.next_ip}"
        self.next_ip = self.next_ip + 1 if self.next_ip < 254 else 2
        return ip

    def gpu_uuid(self, index: int) -> str:
        return "GPU-" + str(uuid.uuid5(uuid.NAMESPACE_URL, f"simnodes/{self.name}/{index}"))

    def refusal(self, req: dict[str, float]) -> str | None:
        """Why the kubelet's admission refuses a pod asking `req` (None: it fits)."""
        if len(self.pods) + 1 > self.max_pods:
            return "pods"
        for r in RESOURCES:
            if req[r] > 0 and self.used[r] + req[r] > self.allocatable.get(r, 0.0) + 1e-9:
                return r
        return None


def node_object(name: str, index: int, shape: NodeShape, prefix: str) -> dict:
    alloc = {"cpu": shape.cpu, "memory": shape.memory, "pods": str(shape.pods),
             "ephemeral-storage": "1Ti", GPU: str(shape.gpus)}
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
              "kubernetes.io/arch": "amd64", NODE_LABEL: prefix.rstrip("-") or "sim"}
    if shape.gpus:
        labels.update({"nvidia.com/gpu.present": "true", "nvidia.com/gpu.count": str(shape.gpus),
                       "nvidia.com/gpu.product": shape.gpu_product,
                       "nvidia.com/gpu.memory": str(shape.gpu_memory_mib)})
    labels.update(shape.labels)
    now = now_rfc3339()

    def cond(kind: str, status: str, reason: str, message: str) -> dict:
        return {"type": kind, "status": status, "reason": reason, "message": message,
                "lastHeartbeatTime": now, "lastTransitionTime": now}

    host_ip = f"172.16.{index // 256}.{index % 256}"
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": labels,
                     "annotations": {"node.alpha.kubernetes.io/ttl": "0"}},
        "spec": {"podCIDR": f"10.{64 + index // 256}.{index % 256}.0/24"},
        "status": {
            "capacity": alloc, "allocatable": alloc,
            "conditions": [
                cond("MemoryPressure", "False", "KubeletHasSufficientMemory", "simulated"),
                cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "simulated"),
                cond("PIDPressure", "False", "KubeletHasSufficientPID", "simulated"),
                cond("Ready", "True", "KubeletReady", "simnodes plays this node's kubelet")],
            "addresses": [{"type": "InternalIP", "address": host_ip},
                          {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"architecture": "amd64", "operatingSystem": "linux",
                         "kubeletVersion": "v1.28.0-simnodes", "kubeProxyVersion": "v1.28.0",
                         "containerRuntimeVersion": "simnodes://1", "osImage": "simnodes",
                         "kernelVersion": "0.0.0", "machineID": "", "systemUUID": "",
                         "bootID": ""}}}


def lease_object(node: dict) -> dict:
    name = node["metadata"]["name"]
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": name, "namespace": "kube-node-lease",
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": name,
                                              "uid": node["metadata"]["uid"]}]},
            "spec": {"holderIdentity": name, "leaseDurationSeconds": 40,
                     "renewTime": now_micro()}}


# --------------------------------------------------------------------------------------------
# API access from several threads
# --------------------------------------------------------------------------------------------


class Workers:
    """N threads, each with its own API client; work for one key (a pod's uid) always goes to
    the same thread, so that one pod's calls reach the server in the order they were decided."""

    def __init__(self, kubeconfig: str, n: int, log: Callable[[str], None]):
        self.log = log
        self.queues: list[queue.Queue] = [queue.Queue() for _ in range(n)]
        clients = [Client(kubeconfig) for _ in range(n)]  # a bad kubeconfig fails here
        self.threads = [threading.Thread(target=self._run, args=(q, c), daemon=True)
                        for q, c in zip(self.queues, clients)]
        self.calls = 0
        self.errors = 0
        self.lock = threading.Lock()
        for t in self.threads:
            t.start()

    def submit(self, key: str, fn: Callable[[Client], Any]) -> None:
        h = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=4).digest(), "big")
        self.queues[h % len(self.queues)].put(fn)

    def _run(self, q: queue.Queue, client: Client) -> None:
        while True:
            fn = q.get()
            if fn is None:
                break
            try:
                fn(client)
                ok = True
            except ApiError as e:
                # The pod went, or another took its name (uid precondition): nothing to do.
                ok = e.status in (404, 409) or (e.status == 422 and "uid" in e.message.lower())
                if not ok:
                    self.log(f"API call failed: {e}")
            except Exception as e:  # a bug must not kill the worker
                ok = False
                self.log(f"worker error: {type(e).__name__}: {e}")
            with self.lock:
                self.calls += 1
                self.errors += 0 if ok else 1
            q.task_done()
        client.close()

    def drain(self) -> None:
        for q in self.queues:
            q.join()

    def stop(self) -> None:
        for q in self.queues:
            q.put(None)
        for t in self.threads:
            t.join(timeout=10)


class Gone(Exception):
    """The watch's resourceVersion is too old (410): list again."""


def watch_events(client: Client, path: str, query: dict, stop: threading.Event
                 ) -> Iterator[dict]:
    """The events of one watch (bookmarks on); raises Gone on 410, returns when it ends."""
    q = dict(query, watch="1", allowWatchBookmarks="true", timeoutSeconds="300")
    url = client.prefix + path + "?" + urllib.parse.urlencode(q)
    if client.scheme == "https":
        conn = http.client.HTTPSConnection(client.host, client.port, timeout=330,
                                           context=client.ssl_ctx)
    else:
        conn = http.client.HTTPConnection(client.host, client.port, timeout=330)
    try:
        conn.request("GET", url, headers=dict(client.headers))
        resp = conn.getresponse()
        if resp.status == 410:
            raise Gone()
        if resp.status >= 400:
            raise ApiError(resp.status, resp.reason, resp.read().decode(errors="replace")[:300])
        while not stop.is_set():
            line = resp.readline()
            if not line:
                return
            if not line.strip():
                continue
            ev = json.loads(line)
            if ev.get("type") == "ERROR":
                if (ev.get("object") or {}).get("code") == 410:
                    raise Gone()
                raise ApiError((ev.get("object") or {}).get("code", 0), "WatchError",
                               (ev.get("object") or {}).get("message", ""))
            yield ev
    finally:
        conn.close()


# --------------------------------------------------------------------------------------------
# The kubelets
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass
class PodState:
    uid: str
    key: str
    node: str
    requests: dict[str, float]
    gpus: list[int]
    restart_policy: str
    containers: list[str]
    init_containers: list[str]
    runtime: float  # per run of the containers; FOREVER = until deleted
    outcome: str  # succeed | fail
    phase: str = "Pending"  # what simnodes made it: Pending, Running, Succeeded, Failed
    started_at: str = ""
    started_mono: float = 0.0
    restarts: int = 0
    pod_ip: str = ""
    deleting: bool = False
    epoch: int = 0  # bumps whenever a scheduled timer no longer applies
    is_reservation: bool = False


class SimNodes:
    """The state machine: events from the pod watch and timers in, API calls out."""

    def __init__(self, args: argparse.Namespace, log: Callable[[str], None],
                 workers: Workers | None = None):
        self.args = args
        self.log = log
        self.rng = random.Random(args.seed)
        self.default_runtime = parse_range(args.default_runtime)
        self.start_delay = parse_range(args.start_delay)
        self.shape = NodeShape(cpu=args.cpu, memory=args.memory, pods=args.max_pods,
                               gpus=args.gpus_per_node, gpu_product=args.gpu_product,
                               gpu_memory_mib=args.gpu_memory, labels=parse_labels(args.labels))
        width = max(3, len(str(args.nodes - 1)))
        self.node_names = [f"{args.name_prefix}{i:0{width}d}" for i in range(args.nodes)]
        self.nodes: dict[str, Node] = {}
        self.pods: dict[str, PodState] = {}  # by uid
        self.refused: set[str] = set()  # uids the admission refused (their Failed is on its way)
        self.events: queue.Queue = queue.Queue()
        self.timers: list[tuple[float, int, str, int, str]] = []  # (due, seq, uid, epoch, what)
        self.seq = 0
        self.stop = threading.Event()
        self.workers = workers or Workers(args.kubeconfig, args.workers, log)
        self.counts = {"started": 0, "succeeded": 0, "failed": 0, "restarted": 0,
                       "refused": 0, "deleted": 0, "reserved": 0}

    # ---- registration and leases ----

    def register(self) -> float:
        """Creates (or takes over) every node and its lease; returns the seconds it took."""
        t0 = time.monotonic()
        alloc = {"cpu": parse_quantity(self.shape.cpu), "memory": parse_quantity(self.shape.memory),
                 GPU: float(self.shape.gpus)}
        for i, name in enumerate(self.node_names):
            self.nodes[name] = Node(name, i, alloc, self.shape.pods, self.shape.gpus)
            obj = node_object(name, i, self.shape, self.args.name_prefix)
            self.workers.submit(name, lambda c, obj=obj: self._register_one(c, obj))
        self.workers.drain()
        return time.monotonic() - t0

    def _register_one(self, client: Client, obj: dict) -> None:
        name = obj["metadata"]["name"]
        try:
            got = client.post("/api/v1/nodes", obj)
        except ApiError as e:
            if e.status != 409:
                raise
            got = client.merge_patch(f"/api/v1/nodes/{name}",
                                     {"metadata": {"labels": obj["metadata"]["labels"]}})
            client.merge_patch(f"/api/v1/nodes/{name}/status", {"status": obj["status"]})
        lease = lease_object(got)
        try:
            client.post("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", lease)
        except ApiError as e:
            if e.status != 409:
                raise
            self._renew(client, name)

    def _renew(self, client: Client, name: str) -> None:
        path = f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{name}"
        client.merge_patch(path, {"spec": {"renewTime": now_micro(), "holderIdentity": name}})

    def lease_loop(self) -> None:
        """Renews every lease once per --lease-interval, spread evenly over it."""
        client = Client(self.args.kubeconfig)
        names = list(self.nodes)
        gap = self.args.lease_interval / max(1, len(names))
        nxt = time.monotonic()
        try:
            while not self.stop.is_set():
                for name in names:
                    nxt += gap
                    if self.stop.wait(max(0.0, nxt - time.monotonic())):
                        return
                    try:
                        self._renew(client, name)
                    except ApiError as e:
                        self.log(f"lease of {name}: {e}")
                    nxt = max(nxt, time.monotonic() - self.args.lease_interval)
        finally:
            client.close()

    # ---- the pod watch ----

    def watch_loop(self) -> None:
        client = Client(self.args.kubeconfig, timeout=120)
        query = {"fieldSelector": "spec.nodeName!="}
        rv = ""
        try:
            while not self.stop.is_set():
                try:
                    if not rv:
                        listed = client.get("/api/v1/pods", query=query)
                        rv = listed["metadata"]["resourceVersion"]
                        self.events.put(("relist", listed.get("items") or []))
                    for ev in watch_events(client, "/api/v1/pods",
                                           dict(query, resourceVersion=rv), self.stop):
                        obj = ev.get("object") or {}
                        rv = (obj.get("metadata") or {}).get("resourceVersion") or rv
                        if ev["type"] in ("ADDED", "MODIFIED"):
                            self.events.put(("pod", obj))
                        elif ev["type"] == "DELETED":
                            self.events.put(("gone", obj))
                except Gone:
                    self.log("pod watch: resourceVersion too old (410); listing again")
                    rv = ""
                except (ApiError, OSError, http.client.HTTPException, ValueError) as e:
                    self.log(f"pod watch broke ({type(e).__name__}: {e}); reconnecting")
                    if self.stop.wait(1.0):
                        return
        finally:
            client.close()

    # ---- the main loop ----

    def run(self) -> None:
        last_stats = time.monotonic()
        while not self.stop.is_set():
            timeout = 0.5
            if self.timers:
                timeout = min(timeout, max(0.0, self.timers[0][0] - time.monotonic()))
            try:
                kind, payload = self.events.get(timeout=timeout)
                self.handle(kind, payload)
            except queue.Empty:
                pass
            self.fire_timers()
            every = self.args.stats_interval
            if every and time.monotonic() - last_stats > every:
                last_stats = time.monotonic()
                self.log(self.stats_line())

    def stats_line(self) -> str:
        running = sum(1 for p in self.pods.values() if p.phase == "Running")
        c = self.counts
        return (f"stats: nodes {len(self.nodes)}, pods running {running}, started "
                f"{c['started']}, succeeded {c['succeeded']}, failed {c['failed']}, restarted "
                f"{c['restarted']}, refused {c['refused']}, deleted {c['deleted']}, reservations "
                f"{c['reserved']}, API calls {self.workers.calls} ({self.workers.errors} failed)")

    def handle(self, kind: str, payload: Any) -> None:
        if kind == "pod":
            self.on_pod(payload)
        elif kind == "gone":
            self.forget(payload["metadata"]["uid"])
        elif kind == "relist":
            seen = set()
            for pod in payload:
                seen.add(pod["metadata"]["uid"])
                self.on_pod(pod)
            for uid in [u for u in self.pods if u not in seen]:
                self.forget(uid)

    def schedule(self, delay: float, st: PodState, what: str) -> None:
        if delay == FOREVER:
            return
        self.seq += 1
        heapq.heappush(self.timers, (time.monotonic() + delay, self.seq, st.uid, st.epoch, what))

    def fire_timers(self) -> None:
        now = time.monotonic()
        while self.timers and self.timers[0][0] <= now:
            _, _, uid, epoch, what = heapq.heappop(self.timers)
            st = self.pods.get(uid)
            if st is None or st.epoch != epoch or st.deleting:
                continue
            if what == "start":
                self.start(st)
            elif what == "end":
                self.end(st)

    # ---- one pod ----

    def on_pod(self, pod: dict) -> None:
        md, spec = pod["metadata"], pod.get("spec") or {}
        node = self.nodes.get(spec.get("nodeName", ""))
        if node is None:
            return
        uid = md["uid"]
        st = self.pods.get(uid)
        phase = (pod.get("status") or {}).get("phase") or "Pending"
        if st is None:
            if phase in TERMINAL or uid in self.refused:
                return  # finished before we saw it (or before a restart of simnodes)
            st = self.admit(pod, node, phase)
            if st is None:
                return
        if md.get("deletionTimestamp") and not st.deleting:
            self.terminate(st, pod)

    def admit(self, pod: dict, node: Node, phase: str) -> PodState | None:
        """A new pod on one of our nodes: the kubelet's admission, then its start is planned.
        A pod already Running (simnodes restarted) is taken over as it is."""
        md, spec = pod["metadata"], pod["spec"]
        ann = md.get("annotations") or {}
        req = pod_requests(pod)
        refused = node.refusal(req) if phase == "Pending" else None
        if refused:
            self.refuse(pod, node, refused, req)
            return None
        policy = spec.get("restartPolicy") or "Always"
        reservation = md["namespace"] == self.args.reservation_namespace
        if reservation:
            policy = "Always"  # it holds its GPU until deleted, whatever the default runtime
        try:
            runtime = self.runtime_of(ann, policy)
            delay = self.pick(parse_range(ann[ANN_START_DELAY])) if ANN_START_DELAY in ann \
                else self.pick(self.start_delay)
        except ValueError as e:
            self.log(f"{key_of(pod)}: {e}; using the defaults")
            runtime, delay = self.runtime_of({}, policy), self.pick(self.start_delay)
        outcome = ann.get(ANN_OUTCOME, self.args.default_outcome)
        if outcome not in ("succeed", "fail"):
            self.log(f"{key_of(pod)}: {ANN_OUTCOME}={outcome!r} is not succeed|fail; succeeding")
            outcome = "succeed"
        n_gpus = int(round(req[GPU]))
        st = PodState(uid=md["uid"], key=key_of(pod), node=node.name, requests=req,
                      gpus=[node.free_gpus.pop(0) for _ in range(min(n_gpus, len(node.free_gpus)))],
                      restart_policy=policy,
                      containers=[c["name"] for c in spec.get("containers") or []],
                      init_containers=[c["name"] for c in spec.get("initContainers") or []],
                      runtime=runtime, outcome=outcome,
                      is_reservation=reservation)
        self.pods[st.uid] = st
        node.pods.add(st.uid)
        for r in RESOURCES:
            node.used[r] += req[r]
        if phase == "Running":
            self.adopt(st, pod, node)
        else:
            self.schedule(delay, st, "start")
        return st

    def runtime_of(self, ann: dict, policy: str) -> float:
        if ANN_RUNTIME in ann:
            return self.pick(parse_range(ann[ANN_RUNTIME]))
        if policy == "Always":
            return FOREVER
        return self.pick(self.default_runtime)

    def pick(self, span: tuple[float, float]) -> float:
        low, high = span
        return low if low == high else self.rng.uniform(low, high)

    def adopt(self, st: PodState, pod: dict, node: Node) -> None:
        status = pod.get("status") or {}
        st.phase, st.pod_ip = "Running", status.get("podIP") or node.pod_ip()
        statuses = status.get("containerStatuses") or []
        st.restarts = max([c.get("restartCount", 0) for c in statuses] or [0])
        st.started_at = status.get("startTime") or now_rfc3339()
        started = parse_time(st.started_at) or time.time()
        st.started_mono = time.monotonic() - max(0.0, time.time() - started)
        self.schedule(max(0.0, st.runtime - (time.time() - started)), st, "end")

    def release(self, st: PodState) -> None:
        node = self.nodes[st.node]
        if st.uid in node.pods:
            node.pods.discard(st.uid)
            for r in RESOURCES:
                node.used[r] -= st.requests[r]
            node.free_gpus.extend(st.gpus)
            node.free_gpus.sort()
            st.gpus = []

    def forget(self, uid: str) -> None:
        self.refused.discard(uid)
        st = self.pods.pop(uid, None)
        if st is not None:
            self.release(st)

    # ---- status writes ----

    def refuse(self, pod: dict, node: Node, resource: str, req: dict[str, float]) -> None:
        """The kubelet's admission refusal: the pod fails at once (it is never run)."""
        self.counts["refused"] += 1
        self.refused.add(pod["metadata"]["uid"])
        asked = "1" if resource == "pods" else f"{req[resource]:g}"
        used = len(node.pods) if resource == "pods" else node.used[resource]
        cap = node.max_pods if resource == "pods" else node.allocatable.get(resource, 0)
        msg = (f"Pod was rejected: Node didn't have enough resource: {resource}, requested: "
               f"{asked}, used: {used:g}, capacity: {cap:g}")
        self.log(f"{key_of(pod)} refused on {node.name}: {msg}")
        body = {"status": {"phase": "Failed", "reason": f"OutOf{resource}", "message": msg,
                           "startTime": now_rfc3339()}}
        md = pod["metadata"]
        path = f"/api/v1/namespaces/{md['namespace']}/pods/{md['name']}/status"
        self.workers.submit(pod["metadata"]["uid"],
                            lambda c: c.request("PATCH", path, body, content_type=STRATEGIC))

    def status_path(self, st: PodState) -> str:
        ns, name = st.key.split("/", 1)
        return f"/api/v1/namespaces/{ns}/pods/{name}/status"

    def patch_status(self, st: PodState, status: dict) -> None:
        path = self.status_path(st)
        self.workers.submit(st.uid, lambda c: c.request(
            "PATCH", path, {"metadata": {"uid": st.uid}, "status": status},
            content_type=STRATEGIC))

    def conditions(self, ready: bool, reason: str = "") -> list[dict]:
        now = now_rfc3339()
        out = [{"type": "Initialized", "status": "True", "lastTransitionTime": now}]
        for kind in ("ContainersReady", "Ready"):
            c = {"type": kind, "status": "True" if ready else "False", "lastTransitionTime": now}
            if not ready:
                c["reason"] = reason
            out.append(c)
        return out

    def container_statuses(self, st: PodState, state: dict, last: dict | None = None
                           ) -> list[dict]:
        out = []
        for name in st.containers:
            cs = {"name": name, "image": "simnodes", "imageID": "simnodes://" + name,
                  "containerID": f"simnodes://{st.uid[:8]}-{name}-{st.restarts}",
                  "ready": "running" in state, "started": "running" in state,
                  "restartCount": st.restarts, "state": state}
            if last:
                cs["lastState"] = last
            out.append(cs)
        return out

    def init_statuses(self, st: PodState) -> list[dict]:
        now = now_rfc3339()
        return [{"name": n, "image": "simnodes", "imageID": "simnodes://" + n, "ready": True,
                 "restartCount": 0, "state": {"terminated": {
                     "exitCode": 0, "reason": "Completed", "startedAt": now, "finishedAt": now}}}
                for n in st.init_containers]

    def start(self, st: PodState) -> None:
        node = self.nodes[st.node]
        st.phase, st.pod_ip = "Running", node.pod_ip()
        st.started_at, st.started_mono = now_rfc3339(), time.monotonic()
        self.counts["started"] += 1
        status = {"phase": "Running", "hostIP": node.host_ip(), "podIP": st.pod_ip,
                  "podIPs": [{"ip": st.pod_ip}], "startTime": st.started_at,
                  "conditions": self.conditions(True),
                  "containerStatuses": self.container_statuses(
                      st, {"running": {"startedAt": st.started_at}})}
        if st.init_containers:
            status["initContainerStatuses"] = self.init_statuses(st)
        self.patch_status(st, status)
        if st.is_reservation:
            self.reserve_gpu(st, node)
        self.schedule(st.runtime, st, "end")

    def reserve_gpu(self, st: PodState, node: Node) -> None:
        """What `kai resource-reservation` does in the pod: the id of the GPU it was given."""
        if not st.gpus:
            self.log(f"{st.key}: a reservation pod without a GPU of its own on {node.name}")
            return
        ns, name = st.key.split("/", 1)
        body = {"metadata": {"uid": st.uid, "annotations": {
            RESERVED_GPU_ANNOTATION: node.gpu_uuid(st.gpus[0])}}}
        self.counts["reserved"] += 1
        self.workers.submit(st.uid, lambda c: c.merge_patch(
            f"/api/v1/namespaces/{ns}/pods/{name}", body))

    def end(self, st: PodState) -> None:
        """Its containers exit (by its outcome); restarted or finished by its restartPolicy."""
        code = 0 if st.outcome == "succeed" else 1
        now = now_rfc3339()
        term = {"terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                               "startedAt": st.started_at, "finishedAt": now}}
        restart = st.restart_policy == "Always" or (st.restart_policy == "OnFailure" and code)
        if restart:
            st.restarts += 1
            self.counts["restarted"] += 1
            st.started_at = now
            self.patch_status(st, {"phase": "Running", "containerStatuses": self.container_statuses(
                st, {"running": {"startedAt": now}}, last=term)})
            self.schedule(st.runtime, st, "end")
            return
        self.counts["succeeded" if code == 0 else "failed"] += 1
        self.finish(st, "Succeeded" if code == 0 else "Failed", term)

    def finish(self, st: PodState, phase: str, term: dict) -> None:
        st.phase = phase
        st.epoch += 1
        reason = "PodCompleted" if phase == "Succeeded" else "PodFailed"
        self.patch_status(st, {"phase": phase, "conditions": self.conditions(False, reason),
                               "containerStatuses": self.container_statuses(st, term)})
        self.release(st)

    def terminate(self, st: PodState, pod: dict) -> None:
        """A deletion: containers stopped, then the pod deleted with grace 0 (uid precondition).
        A pod that never reached a terminal phase is Failed, as a kubelet reports it."""
        st.deleting = True
        st.epoch += 1
        self.counts["deleted"] += 1
        if st.phase not in TERMINAL:
            now = now_rfc3339()
            term = {"terminated": {"exitCode": 143 if st.phase == "Running" else 137,
                                   "reason": "Error", "startedAt": st.started_at or now,
                                   "finishedAt": now}}
            self.finish(st, "Failed", term)
        ns, name = st.key.split("/", 1)
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0,
                "preconditions": {"uid": st.uid}}
        self.workers.submit(st.uid, lambda c: c.request(
            "DELETE", f"/api/v1/namespaces/{ns}/pods/{name}", body))

    def shutdown(self, delete_nodes: bool) -> None:
        self.stop.set()
        self.workers.drain()
        if delete_nodes:
            for name in self.nodes:
                self.workers.submit(name, lambda c, n=name: c.delete(f"/api/v1/nodes/{n}"))
            self.workers.drain()
        self.workers.stop()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="simnodes", description="Play the kubelets of N simulated GPU nodes on a real "
        "kube-apiserver (see docs/cluster-in-a-box.md).")
    p.add_argument("--kubeconfig", default=os.environ.get(
        "KUBECONFIG", str(pathlib.Path.home() / ".kube" / "config")))
    p.add_argument("--nodes", type=int, default=4, help="how many nodes (default 4)")
    p.add_argument("--gpus-per-node", type=int, default=8, help="nvidia.com/gpu each (default 8)")
    p.add_argument("--cpu", default="64", help="CPU of each node (default 64)")
    p.add_argument("--memory", default="512Gi", help="memory of each node (default 512Gi)")
    p.add_argument("--max-pods", type=int, default=110, help="pods per node (default 110)")
    p.add_argument("--gpu-product", default="NVIDIA-H100-80GB-HBM3",
                   help="label nvidia.com/gpu.product")
    p.add_argument("--gpu-memory", type=int, default=81920,
                   help="label nvidia.com/gpu.memory, MiB per GPU (default 81920)")
    p.add_argument("--name-prefix", default="sim-node-", help="node names: PREFIX000, PREFIX001...")
    p.add_argument("--labels", default="", help="more node labels: k=v,k2=v2")
    p.add_argument("--seed", type=int, default=1, help="seed of the runtime draws (default 1)")
    p.add_argument("--default-runtime", default="20s-40s",
                   help="how long pods with restartPolicy Never/OnFailure run when not annotated: "
                   "DURATION, MIN-MAX or forever (default 20s-40s)")
    p.add_argument("--default-outcome", choices=("succeed", "fail"), default="succeed")
    p.add_argument("--start-delay", default="0s",
                   help="from bind to Running: DURATION or MIN-MAX (default 0s)")
    p.add_argument("--lease-interval", type=float, default=10.0,
                   help="seconds between renewals of one node's lease (default 10, as kubelet)")
    p.add_argument("--workers", type=int, default=4, help="threads making API calls (default 4)")
    p.add_argument("--reservation-namespace", default=RESERVATION_NS)
    p.add_argument("--stats-interval", type=float, default=60.0,
                   help="seconds between stats lines on stderr (0: none; default 60)")
    p.add_argument("--delete-nodes-on-exit", action="store_true",
                   help="delete the nodes when stopped (SIGTERM/SIGINT)")
    p.add_argument("--ready-file", default="",
                   help="write this file once every node and lease is registered")
    args = p.parse_args(argv)
    if args.nodes < 1 or args.gpus_per_node < 0 or args.workers < 1 or args.lease_interval <= 0:
        p.error("--nodes and --workers must be positive, --gpus-per-node not negative")
    try:
        parse_range(args.default_runtime)
        parse_range(args.start_delay)
        parse_labels(args.labels)
        parse_quantity(args.cpu)
        parse_quantity(args.memory)
    except ValueError as e:
        p.error(str(e))
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    lock = threading.Lock()

    def log(msg: str) -> None:
        with lock:
            sys.stderr.write(f"{dt.datetime.now().strftime('%H:%M:%S.%f')[:-3]} simnodes: {msg}\n")
            sys.stderr.flush()

    try:
        sim = SimNodes(args, log)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        log(f"cannot use the kubeconfig {args.kubeconfig}: {type(e).__name__}: {e}")
        return 2
    stopping = threading.Event()

    def on_signal(signum, _frame):
        stopping.set()
        sim.stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    took = sim.register()
    if sim.workers.errors:
        log(f"cannot register the nodes: {sim.workers.errors} calls failed (see above)")
        sim.shutdown(False)
        return 1
    log(f"registered {len(sim.nodes)} nodes and leases in {took:.2f}s "
        f"({args.gpus_per_node} GPUs each)")
    if args.ready_file:
        pathlib.Path(args.ready_file).write_text(f"{len(sim.nodes)} {took:.3f}\n")
    threads = [threading.Thread(target=sim.watch_loop, daemon=True, name="watch"),
               threading.Thread(target=sim.lease_loop, daemon=True, name="leases")]
    for t in threads:
        t.start()
    sim.run()
    log(sim.stats_line())
    sim.shutdown(args.delete_nodes_on_exit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
