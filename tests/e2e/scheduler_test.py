#!/usr/bin/env python3
"""`kai scheduler` as a long-running process on a real kube-apiserver (RBAC on).

    python3 tests/e2e/scheduler_test.py [-v]
    KAI_BIN=/path/to/kai python3 tests/e2e/scheduler_test.py -v Failover
    KAI_E2E_KEEP=1 python3 tests/e2e/scheduler_test.py     # keep the schedulers' logs (path printed)

One kube-apiserver for the module; every test starts from a cleared server (scenario_loader.clear)
and its own namespace, starts `kai scheduler` processes (each with a time-out; tearDown kills what
is left) and checks what they wrote:

- Rbac: deploy/rbac/scheduler.yaml applied, the scheduler run with its ServiceAccount's token:
  binds, events, pod and PodGroup conditions, stale BindRequest deletion, an eviction and the
  Lease, and no 403 anywhere in its log; the file's rules are exactly the calls the code makes.
- Failover: two --leader-elect processes; exactly one holds the Lease and writes; after kill -9 of
  the leader the other takes over within a lease duration (+ slack) and schedules new pods; no
  BindRequest is ever deleted or written twice.
- Shards: --shard shard-a and --shard shard-b side by side; each pool's pods go to its nodes only,
  BindRequests carry the pool label, and neither scheduler writes to the other pool's objects.
- KillMidCommit: kill -9 while a cycle's BindRequests are being written, restart: converges to
  exactly one BindRequest per pod, no node over its GPUs, no duplicate write.
- Endpoints: /healthz, /readyz, /metrics, /debug/snapshot (its own address; read back by `kai simulate`: the same
  pod statuses as a --dry-run of the scheduler); every event names an existing object.
- ShardSettings: a shard naming a plugin and a scheduler argument kai does not know (KAI's chart
  example) still schedules; each name is logged once, counted in /metrics and named in the
  shard's SettingsApplied condition, which turns True once the names are removed.
- BadConfiguration: a missing kubeconfig file or SchedulingShard: exit 2 naming it.
- OptionalWatches: the DRA kinds (resource.k8s.io/v1, which 1.28 does not serve) and the
  NodeResourceTopology CRD (not installed at start) are reported as not served, once each, and
  the scheduler schedules; the CRD installed while it runs is watched at the next re-check, and a
  pod that needs one NUMA zone gets the node whose zones hold it and spec.predictedNUMAZones.

Skips when /opt/kube-test/bin/kube-apiserver is not built.
"""

from __future__ import annotations

import http.client
import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kube_server  # noqa: E402
import scenario_loader as sl  # noqa: E402

REPO = kube_server.REPO_ROOT
KAI_BIN = pathlib.Path(os.environ.get("KAI_BIN", REPO / "build" / "kai"))
RBAC = REPO / "deploy" / "rbac" / "scheduler.yaml"
POOL_KEY = "kai.scheduler/node-pool"
LEADER_NS = "kai-scheduler"
LEADER_ID = "kai-scheduler"

SERVER: kube_server.Server | None = None
CLIENT: sl.Client | None = None
LOADER: sl.Loader | None = None
TMP: tempfile.TemporaryDirectory | None = None


class KeptDir:
    def __init__(self, name: str):
        self.name = name

    def cleanup(self):
        print(f"logs kept in {self.name}", file=sys.stderr)


def setUpModule():
    global SERVER, CLIENT, LOADER, TMP
    kube_server.require_apiserver()
    if not KAI_BIN.is_file():
        raise unittest.SkipTest(f"{KAI_BIN} not built")
    if os.environ.get("KAI_E2E_KEEP"):  # keep the processes' logs
        TMP = KeptDir(tempfile.mkdtemp(prefix="kai-sched-e2e-"))
    else:
        TMP = tempfile.TemporaryDirectory(prefix="kai-sched-e2e-")
    SERVER = kube_server.Server.start()
    try:
        CLIENT = sl.Client(SERVER.kubeconfig)
        LOADER = sl.Loader(CLIENT)
        LOADER.ensure_crds()
        # The leader namespace (deploy/rbac/scheduler.yaml creates it too; apply is idempotent).
        ensure_namespace(LEADER_NS)
    except BaseException:
        SERVER.stop()
        raise


def tearDownModule():
    kube_server.release(CLIENT, SERVER, TMP)


# --------------------------------------------------------------------------------------------
# The world
# --------------------------------------------------------------------------------------------

READY = [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "fake",
          "lastHeartbeatTime": "2026-01-01T00:00:00Z", "lastTransitionTime": "2026-01-01T00:00:00Z"}]


def labels_for(pool: str | None, extra: dict | None = None) -> dict:
    out = dict(extra or {})
    if pool is not None:
        out[POOL_KEY] = pool
    return out


def node(name: str, gpus: int = 8, pool: str | None = None) -> dict:
    alloc = {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels_for(pool, {
                "kubernetes.io/hostname": name, "nvidia.com/gpu.count": str(gpus),
                "nvidia.com/gpu.memory": "81920"})},
            "status": {"capacity": alloc, "allocatable": alloc, "conditions": READY}}


def queue(name: str, pool: str | None = None) -> dict:
    unlimited = {"quota": -1, "limit": -1, "overQuotaWeight": 1}
    return {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
            "metadata": {"name": name, "labels": labels_for(pool)},
            "spec": {"resources": {"gpu": dict(unlimited), "cpu": dict(unlimited),
                                   "memory": dict(unlimited)}}}


def priority_class(name: str, value: int) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name}, "value": value}


def pod_group(ns: str, name: str, q: str, min_member: int = 1, pool: str | None = None,
              priority_class_name: str | None = None) -> dict:
    spec = {"queue": q, "minMember": min_member}
    if priority_class_name:
        spec["priorityClassName"] = priority_class_name
    return {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": ns, "labels": labels_for(pool)},
            "spec": spec}


def pod(ns: str, name: str, pg: str, gpus: int = 1, pool: str | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "annotations": {"pod-group-name": pg},
                         "labels": labels_for(pool)},
            "spec": {"schedulerName": "kai-scheduler",
                     "containers": [{"name": "main", "image": "busybox",
                                     "resources": {"limits": {"nvidia.com/gpu": str(gpus),
                                                              "cpu": "1", "memory": "1Gi"}}}]}}


def running(p: dict, node_name: str) -> dict:
    """The pod bound to node_name and Running (the loader binds it and sets the status)."""
    p["spec"]["nodeName"] = node_name
    p["status"] = {"phase": "Running"}
    return p


def single_pod_jobs(ns: str, q: str, names: list[str], gpus: int = 1,
                    pool: str | None = None) -> list[dict]:
    """One PodGroup (minMember 1) per pod, named after it."""
    out = []
    for n in names:
        out.append(pod_group(ns, n, q, 1, pool))
        out.append(pod(ns, n, n, gpus, pool))
    return out


def ensure_namespace(ns: str) -> None:
    try:
        CLIENT.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                           "metadata": {"name": ns}})
    except sl.ApiError as e:
        if e.status != 409:
            raise


def load(objs: list[dict]) -> None:
    res = LOADER.load(objs)
    if not res.ok:
        raise AssertionError("loading the world failed:\n" + "\n".join(res.failures[:10]))


# --------------------------------------------------------------------------------------------
# Reading the server
# --------------------------------------------------------------------------------------------


def items(path: str, **query) -> list[dict]:
    return CLIENT.get(path, query=query or None).get("items") or []


def bind_requests(ns: str | None = None) -> dict[str, dict]:
    return {b["metadata"]["name"]: b for b in items(sl.R["BindRequest"].collection(ns))}


def count_bind_requests(ns: str) -> int:
    lst = CLIENT.get(sl.R["BindRequest"].collection(ns), query={"limit": "1"})
    n = len(lst.get("items") or [])
    return n + int((lst.get("metadata") or {}).get("remainingItemCount") or 0)


def pods(ns: str) -> dict[str, dict]:
    return {p["metadata"]["name"]: p for p in items(sl.R["Pod"].collection(ns))}


def pod_groups(ns: str) -> dict[str, dict]:
    return {p["metadata"]["name"]: p for p in items(sl.R["PodGroup"].collection(ns))}


def events(ns: str) -> list[dict]:
    return items(f"/api/v1/namespaces/{ns}/events")


def lease() -> dict | None:
    try:
        return CLIENT.get(f"/apis/coordination.k8s.io/v1/namespaces/{LEADER_NS}/leases/{LEADER_ID}")
    except sl.ApiError as e:
        if e.status == 404:
            return None
        raise


def lease_holder() -> str | None:
    le = lease()
    return ((le or {}).get("spec") or {}).get("holderIdentity") or None


def delete_lease() -> None:
    try:
        CLIENT.delete(f"/apis/coordination.k8s.io/v1/namespaces/{LEADER_NS}/leases/{LEADER_ID}")
    except sl.ApiError as e:
        if e.status != 404:
            raise


def pod_scheduled_false(p: dict) -> dict | None:
    for c in (p.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            return c
    return None


def gpus_of(p: dict) -> int:
    total = 0
    for c in p["spec"]["containers"]:
        r = c.get("resources") or {}
        total += int((r.get("limits") or r.get("requests") or {}).get("nvidia.com/gpu", 0))
    return total


def event_problems(ns: str, once: bool = True) -> list[str]:
    """Events of ns that do not name an existing Pod or PodGroup by its name and uid; with
    `once`, also the same event (object, reason, message) written more than once."""
    objs = {("Pod", n): p["metadata"]["uid"] for n, p in pods(ns).items()}
    objs.update({("PodGroup", n): g["metadata"]["uid"] for n, g in pod_groups(ns).items()})
    out, seen = [], {}
    for e in events(ns):
        io = e.get("involvedObject") or {}
        key = (io.get("kind"), io.get("name"))
        if key not in objs:
            out.append(f"{e['reason']} event on {io.get('kind')} {io.get('name')!r}, which does "
                       f"not exist (uid {io.get('uid')!r})")
        elif io.get("uid") and io["uid"] != objs[key]:
            out.append(f"{e['reason']} event on {key[0]} {key[1]} with uid {io['uid']!r} != "
                       f"{objs[key]!r}")
        k = (*key, e.get("reason"), e.get("message"))
        seen[k] = seen.get(k, 0) + int(e.get("count") or 1)
    if once:
        out.extend(f"{n} times: {k[2]} event on {k[0]} {k[1]}" for k, n in seen.items() if n > 1)
    return out


def wait_for(what: str, pred, timeout: float, interval: float = 0.1, procs=()):
    """Polls pred() until it gives a true value (returned); fails naming `what` after timeout,
    with the tails of the logs of `procs`."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = pred()
        if last:
            return last
        if time.monotonic() > deadline:
            logs = "".join(f"\n--- {p.name} (rc {p.poll()}) log tail:\n{p.log()[-2500:]}"
                           for p in procs)
            raise AssertionError(f"timed out after {timeout}s waiting for {what}{logs}")
        time.sleep(interval)


class Watcher:
    """Records every watch event of a collection from a resourceVersion on (a thread with its
    own connection), so that a delete-and-recreate between two polls is seen."""

    def __init__(self, collection: str):
        lst = CLIENT.get(collection, query={"limit": "1"})
        self.rv = lst["metadata"]["resourceVersion"]
        self.collection = collection
        self.events: list[tuple[str, str, str]] = []  # (type, name, uid)
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        c = CLIENT
        while not self._stop.is_set():
            conn = http.client.HTTPSConnection(c.host, c.port, timeout=1, context=c.ssl_ctx)
            q = urllib.parse.urlencode({"watch": "1", "resourceVersion": self.rv,
                                        "allowWatchBookmarks": "true", "timeoutSeconds": "60"})
            try:
                conn.request("GET", f"{c.prefix}{self.collection}?{q}", headers=c.headers)
                resp = conn.getresponse()
                if resp.status != 200:
                    self.errors.append(f"watch: {resp.status} {resp.read()[:300]!r}")
                    return
                buf = b""
                while not self._stop.is_set():
                    try:
                        chunk = resp.read1(65536)
                    except socket.timeout:
                        break  # quiet for a while: watch again from the last event seen
                    if not chunk:
                        break
                    buf += chunk
                    while b"\n" in buf:
                        line, buf = buf.split(b"\n", 1)
                        if line.strip():
                            self._event(json.loads(line))
            except (OSError, http.client.HTTPException) as e:
                if not self._stop.is_set():
                    time.sleep(0.1)
                    self.errors.append(f"watch reconnect: {e}")
            finally:
                conn.close()

    def _event(self, ev: dict):
        obj = ev.get("object") or {}
        md = obj.get("metadata") or {}
        if md.get("resourceVersion"):
            self.rv = md["resourceVersion"]
        if ev.get("type") == "ERROR":
            self.errors.append(f"watch error event: {obj}")
            return
        if ev.get("type") == "BOOKMARK":
            return
        with self._lock:
            self.events.append((ev["type"], md.get("name"), md.get("uid")))

    def stop(self) -> list[tuple[str, str, str]]:
        self._stop.set()
        self._thread.join(timeout=5)
        with self._lock:
            return list(self.events)


# --------------------------------------------------------------------------------------------
# Scheduler processes
# --------------------------------------------------------------------------------------------


def _die_with_parent():
    """In the child: SIGKILL when the test process dies (Linux), so no scheduler outlives a
    killed test run."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Proc:
    """One `kai scheduler` process; stdout and stderr go to files; killed after `timeout`."""

    def __init__(self, name: str, args: list[str], kubeconfig: str, timeout: float,
                 workdir: pathlib.Path):
        self.name = name
        self.out_path = workdir / f"{name}.out"
        self.err_path = workdir / f"{name}.err"
        self.cmd = [str(KAI_BIN), "scheduler", "--kubeconfig", kubeconfig, *args]
        self._out = open(self.out_path, "w")
        self._err = open(self.err_path, "w")
        self.p = subprocess.Popen(self.cmd, stdout=self._out, stderr=self._err,
                                  stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent)
        self.timed_out = False
        self._timer = threading.Timer(timeout, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def _expire(self):
        if self.p.poll() is None:
            self.timed_out = True
            self.p.kill()

    def poll(self):
        return self.p.poll()

    def wait(self, timeout: float | None = None) -> int:
        try:
            rc = self.p.wait(timeout=timeout)
        finally:
            self._close_files_if_done()
        return rc

    def kill(self, sig=signal.SIGKILL) -> None:
        if self.p.poll() is None:
            self.p.send_signal(sig)

    def stop(self, timeout: float = 15) -> int:
        """SIGTERM, wait; SIGKILL when it does not stop."""
        self.kill(signal.SIGTERM)
        try:
            return self.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return self.wait(5)

    def _close_files_if_done(self):
        if self.p.poll() is not None:
            self._timer.cancel()
            for f in (self._out, self._err):
                if not f.closed:
                    f.close()

    def log(self) -> str:
        try:
            return self.err_path.read_text(errors="replace")
        except OSError:
            return ""

    def stdout(self) -> str:
        try:
            return self.out_path.read_text(errors="replace")
        except OSError:
            return ""


free_port = kube_server.free_port


def http_get(port: int, path: str, timeout: float = 5) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, r.read().decode(errors="replace")
    finally:
        conn.close()


def try_http_get(port: int, path: str) -> tuple[int, str] | None:
    try:
        return http_get(port, path)
    except OSError:
        return None


def metric(text: str, name: str) -> float | None:
    """The value of an unlabelled sample `name` in a Prometheus text page."""
    m = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


FORBIDDEN = re.compile(r"\b403\b|Forbidden", re.I)


class SchedulerTestCase(unittest.TestCase):
    maxDiff = 6000
    NS = "default"

    def setUp(self):
        errs = sl.clear(CLIENT)
        self.assertFalse(errs, f"clearing the server: {errs[:3]}")
        delete_lease()
        ensure_namespace(self.NS)
        for e in events(self.NS):
            try:
                CLIENT.delete(f"/api/v1/namespaces/{self.NS}/events/{e['metadata']['name']}")
            except sl.ApiError:
                pass
        self.procs: list[Proc] = []
        self.workdir = pathlib.Path(TMP.name) / self.id().rsplit(".", 2)[-2] / self._testMethodName
        self.workdir.mkdir(parents=True, exist_ok=True)

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                pass

    def start(self, name: str, *args: str, kubeconfig: str | None = None,
              timeout: float = 90) -> Proc:
        p = Proc(name, list(args), kubeconfig or SERVER.kubeconfig, timeout, self.workdir)
        self.procs.append(p)
        return p

    def assert_snapshot_cache_held(self, *procs: Proc) -> None:
        """No --verify-snapshot-cache difference in the logs of procs."""
        bad = {p.name: p.log() for p in procs if "differs from a full build" in p.log()}
        self.assertFalse(bad, "the incremental snapshot differed from a full build:\n" + "\n".join(
            f"--- {n}:\n{log[:3000]!r}" for n, log in bad.items()))

    def run_once(self, name: str, *args: str, kubeconfig: str | None = None,
                 timeout: float = 60) -> tuple[int, str, str]:
        p = self.start(name, *args, kubeconfig=kubeconfig, timeout=timeout)
        rc = p.wait(timeout + 5)
        self.assertFalse(p.timed_out, f"{name} ran past its {timeout}s time-out:\n{p.log()[-3000:]}")
        return rc, p.stdout(), p.log()


# --------------------------------------------------------------------------------------------
# 1. RBAC
# --------------------------------------------------------------------------------------------


class Rbac(SchedulerTestCase):
    NS = "e2e-rbac"

    def sa_kubeconfig(self) -> str:
        SERVER.kubectl("apply", "-f", str(RBAC))
        return SERVER.token_kubeconfig("kai-scheduler", "kai-scheduler", self.workdir / "sa.kubeconfig")

    def test_service_account_has_every_right_it_needs(self):
        ns = self.NS
        kc = self.sa_kubeconfig()
        # The ServiceAccount may not do more than the role says (a spot check of the role).
        sa = "system:serviceaccount:kai-scheduler:kai-scheduler"
        for verb, res, allowed in [("create", "bindrequests.scheduling.run.ai", "yes"),
                                   ("update", "pods", "no"), ("patch", "pods", "no"), ("create", "pods/binding", "no"),
                                   ("delete", "nodes", "no"), ("update", "leases", "no")]:
            self.assertEqual(SERVER.can_i(verb, res, sa, ns), allowed,
                             f"can-i {verb} {res} (namespace {ns})")
        got = SERVER.kubectl("auth", "can-i", "patch", "pods", "--subresource", "status", "--as",
                             sa, "-n", ns, check=False).stdout.strip()
        self.assertEqual(got, "yes", "can-i patch pods/status")
        self.assertEqual(SERVER.can_i("update", "leases", sa, LEADER_NS), "yes",
                         f"can-i update leases -n {LEADER_NS}")

        load([queue("rbac-q"), node("rbac-n1", 4), node("rbac-n2", 4),
              pod_group(ns, "gang", "rbac-q", 2), pod(ns, "gang-0", "gang", 4),
              pod(ns, "gang-1", "gang", 4),
              pod_group(ns, "huge", "rbac-q", 1), pod(ns, "huge-0", "huge", 16)])
        # A stale BindRequest (its node does not exist): the scheduler deletes it.
        CLIENT.post(sl.R["BindRequest"].collection(ns), {
            "apiVersion": "scheduling.run.ai/v1alpha2", "kind": "BindRequest",
            "metadata": {"name": "ghost", "namespace": ns},
            "spec": {"podName": "ghost", "selectedNode": "no-such-node",
                     "receivedResourceType": "Regular", "receivedGPU": {"count": 1, "portion": "1.00"}}})

        rc, out, log = self.run_once("once", "--once", "-o", "json", kubeconfig=kc)
        self.assertEqual(rc, 0, f"kai scheduler --once with the ServiceAccount's token:\n{log[-3000:]}")
        self.assertNotRegex(log, FORBIDDEN, "the ServiceAccount lacks a right")
        brs = bind_requests(ns)
        # ghost's is gone: a stale BindRequest deleted.
        self.assertEqual(sorted(brs), ["gang-0", "gang-1"], f"BindRequests; log:\n{log[-2000:]}")
        self.assertEqual(sorted(b["spec"]["selectedNode"] for b in brs.values()),
                         ["rbac-n1", "rbac-n2"])
        huge = pods(ns)["huge-0"]
        self.assertIsNotNone(pod_scheduled_false(huge), f"huge-0 conditions: {huge.get('status')}")
        conds = (pod_groups(ns)["huge"].get("status") or {}).get("schedulingConditions") or []
        self.assertTrue(conds, "no schedulingConditions on the PodGroup that cannot fit")
        reasons = {e["reason"] for e in events(ns)}
        self.assertLessEqual({"Scheduled", "Unschedulable"}, reasons, f"events: {reasons}")

        # An eviction: a low-priority pod runs on a third node, a higher-priority one that needs
        # it arrives; every GPU is taken (the gang's BindRequests hold theirs). Run with leader
        # election, with the same token: the Lease in kai-scheduler is taken, the victim deleted.
        load([priority_class("rbac-low", 10), priority_class("rbac-high", 200), node("rbac-n3", 4),
              pod_group(ns, "low", "rbac-q", 1, priority_class_name="rbac-low"),
              running(pod(ns, "low-0", "low", 4), "rbac-n3"),
              pod_group(ns, "high", "rbac-q", 1, priority_class_name="rbac-high"),
              pod(ns, "high-0", "high", 4)])
        p = self.start("leader", "--leader-elect", "--leader-elect-identity", "rbac-sa",
                       "--leader-elect-retry-period", "200ms", "--schedule-period", "200ms",
                       "--max-cycles", "15", kubeconfig=kc, timeout=60)
        wait_for("the Lease held by rbac-sa", lambda: lease_holder() == "rbac-sa", 30, procs=[p])
        wait_for("low-0 evicted", lambda: (q := pods(ns).get("low-0")) is None or
                 q["metadata"].get("deletionTimestamp"), 30, procs=[p])
        rc = p.wait(60)
        log = p.log()
        self.assertEqual(rc, 0, f"kai scheduler --leader-elect --max-cycles 15:\n{log[-3000:]}")
        self.assertNotRegex(log, FORBIDDEN, "the ServiceAccount lacks a right")
        evict = [e for e in events(ns) if e["reason"] == "Evict"]
        self.assertEqual([e["involvedObject"]["name"] for e in evict], ["low"], "Evict events")
        self.assertEqual(sorted(bind_requests(ns))[:2], ["gang-0", "gang-1"])
        self.assertEqual(event_problems(ns, once=False), [], "events")

    def test_role_is_exactly_what_the_scheduler_calls(self):
        by_kind = kube_server.rbac_objects(RBAC)

        def rules(kind, name):
            return kube_server.rbac_rules(by_kind[(kind, name)])

        watch = {("", "nodes"), ("", "pods"), ("scheduling.run.ai", "podgroups"),
                 ("scheduling.run.ai", "queues"), ("scheduling.k8s.io", "priorityclasses"),
                 ("kai.scheduler", "topologies"), ("scheduling.run.ai", "bindrequests"),
                 ("kai.scheduler", "schedulingshards"),
                 # the optional watches (DRA, NUMA)
                 ("resource.k8s.io", "deviceclasses"), ("resource.k8s.io", "resourceclaims"),
                 ("resource.k8s.io", "resourceclaimtemplates"),
                 ("resource.k8s.io", "resourceslices"),
                 ("topology.node.k8s.io", "noderesourcetopologies"),
                 # volumes in placement
                 ("", "persistentvolumes"), ("", "persistentvolumeclaims"),
                 ("storage.k8s.io", "storageclasses"), ("storage.k8s.io", "csinodes")}
        want = {(g, r, v) for g, r in watch for v in ("list", "watch")} | {
            ("kai.scheduler", "schedulingshards", "get"),
            ("kai.scheduler", "schedulingshards/status", "patch"),
            ("scheduling.run.ai", "bindrequests", "create"),
            ("scheduling.run.ai", "bindrequests", "get"),
            ("scheduling.run.ai", "bindrequests", "delete"),
            ("", "events", "create"), ("", "pods/status", "patch"), ("", "pods", "delete"),
            ("scheduling.run.ai", "podgroups", "patch"), ("scheduling.run.ai", "podgroups", "get"),
            ("scheduling.run.ai", "podgroups/status", "patch")}
        self.assertEqual(rules("ClusterRole", "kai-scheduler"), want)
        self.assertEqual(rules("Role", "kai-scheduler-leader-election"),
                         {("coordination.k8s.io", "leases", v) for v in ("get", "create", "update")})
        self.assertEqual(by_kind[("Role", "kai-scheduler-leader-election")]["metadata"]["namespace"],
                         LEADER_NS)
        sa = {"kind": "ServiceAccount", "name": "kai-scheduler", "namespace": "kai-scheduler"}
        for kind, name in [("ClusterRoleBinding", "kai-scheduler"),
                           ("RoleBinding", "kai-scheduler-leader-election")]:
            self.assertEqual(by_kind[(kind, name)]["subjects"], [sa], f"{kind} {name}")
        self.assertIn(("ServiceAccount", "kai-scheduler"), by_kind)
        self.assertIn(("Namespace", "kai-scheduler"), by_kind)


# --------------------------------------------------------------------------------------------
# 1b. Typed explanations written to the API: the condition's reasons, the reclaim event's queues
# --------------------------------------------------------------------------------------------


def capped_queue(name: str, gpu: dict, parent: str | None = None) -> dict:
    q = queue(name)
    q["spec"]["resources"]["gpu"] = gpu
    if parent:
        q["spec"]["parentQueue"] = parent
    return q


class Explanations(SchedulerTestCase):
    NS = "e2e-explain"

    def test_condition_reasons_and_reclaim_queues(self):
        ns = self.NS
        load([priority_class("exp-train", 50),
              capped_queue("exp-dept", {"quota": -1, "limit": -1, "overQuotaWeight": 1}),
              capped_queue("exp-lim", {"quota": 0, "limit": 2, "overQuotaWeight": 1}, "exp-dept"),
              capped_queue("exp-a", {"quota": 4, "limit": -1, "overQuotaWeight": 1}, "exp-dept"),
              capped_queue("exp-b", {"quota": 0, "limit": -1, "overQuotaWeight": 1}, "exp-dept"),
              node("exp-n1", 4),
              pod_group(ns, "over", "exp-lim", 1), pod(ns, "over-0", "over", 4),
              pod_group(ns, "borrower", "exp-b", 1, priority_class_name="exp-train"),
              running(pod(ns, "borrower-0", "borrower", 4), "exp-n1"),
              pod_group(ns, "owner", "exp-a", 1, priority_class_name="exp-train"),
              pod(ns, "owner-0", "owner", 4)])
        p = self.start("explain", "--schedule-period", "200ms", "--max-cycles", "10", timeout=60)
        wait_for("over's condition with its reasons", lambda: any(
            c.get("reasons") for c in (pod_groups(ns)["over"].get("status") or {}).get(
                "schedulingConditions") or []), 30, procs=[p])
        wait_for("borrower-0 reclaimed", lambda: (q := pods(ns).get("borrower-0")) is None or
                 q["metadata"].get("deletionTimestamp"), 30, procs=[p])
        self.assertEqual(p.wait(60), 0, p.log()[-3000:])

        cond = pod_groups(ns)["over"]["status"]["schedulingConditions"][0]
        limit = [r for r in cond["reasons"] if r["reason"] == "OverLimit"]
        self.assertEqual(len(limit), 1, f"reasons: {cond['reasons']}")
        self.assertIn("queue exp-lim over limit", limit[0]["message"])
        details = limit[0]["details"]["queueDetails"]
        self.assertEqual(details["name"], "exp-lim")
        self.assertEqual(details["queueResourceLimits"]["nvidia.com/gpu"], "2")
        self.assertEqual(details["podGroupRequestedResources"]["nvidia.com/gpu"], "4")
        self.assertEqual(details["queueDeservedResources"]["nvidia.com/gpu"], "0")

        evict = [e for e in events(ns) if e["reason"] == "Evict"]
        self.assertEqual([e["involvedObject"]["name"] for e in evict], ["borrower"], "Evict events")
        lines = evict[0]["message"].split("\n")
        self.assertTrue(lines[0].startswith("reclaim for e2e-explain/owner"), lines)
        self.assertEqual(len(lines), 3, lines)
        self.assertTrue(lines[1].startswith("queue exp-b uses <gpu 4,"), lines)
        self.assertIn("with a quota of <gpu 0,", lines[1])
        self.assertTrue(lines[2].startswith("queue exp-a uses <gpu 0,"), lines)
        self.assertIn("with a quota of <gpu 4,", lines[2])


class BackgroundPods(SchedulerTestCase):
    NS = "e2e-background"

    def test_a_workload_takes_a_background_place_and_binds_once_it_is_gone(self):
        """A maintenance pod (kai.scheduler/background: "true", another scheduler's) holds 2 of
        bg-n1's 4 GPUs; a 4-GPU job of a queue with no quota takes its place without any reclaim:
        the scheduler evicts the pod with an event saying why, and binds the job once it is gone.
        The background pod on bg-n2, whose place nobody needs, is left alone."""
        ns = self.NS
        health = running(pod(ns, "health", "", 2), "bg-n1")
        probe = running(pod(ns, "probe", "", 1), "bg-n2")
        for p in (health, probe):
            p["metadata"]["annotations"] = {}
            p["metadata"]["labels"] = {"kai.scheduler/background": "true"}
            p["spec"]["schedulerName"] = "default-scheduler"
        load([capped_queue("bg-q", {"quota": 0, "limit": -1, "overQuotaWeight": 1}),
              node("bg-n1", 4), node("bg-n2", 4),
              pod_group(ns, "busy", "bg-q", 1), running(pod(ns, "busy-0", "busy", 3), "bg-n2"),
              health, probe,
              pod_group(ns, "train", "bg-q", 1), pod(ns, "train-0", "train", 4)])
        p = self.start("background", "--schedule-period", "200ms", "--verify-snapshot-cache",
                       timeout=90)
        wait_for("health evicted", lambda: (q := pods(ns).get("health")) is None or
                 q["metadata"].get("deletionTimestamp"), 30, procs=[p])
        # No kubelet here: the pod's termination is the test's to finish.
        try:
            CLIENT.delete(f"/api/v1/namespaces/{ns}/pods/health", query={"gracePeriodSeconds": "0"})
        except sl.ApiError as e:
            if e.status != 404:
                raise
        wait_for("a BindRequest of train-0 to bg-n1", lambda: [
            b for b in bind_requests(ns).values() if b["spec"].get("podName") == "train-0"
            and b["spec"].get("selectedNode") == "bg-n1"], 30, procs=[p])
        self.assertIn("probe", pods(ns))
        self.assertFalse(pods(ns)["probe"]["metadata"].get("deletionTimestamp"))
        evict = wait_for("the Evict event", lambda: [
            e for e in events(ns) if e["reason"] == "Evict"], 15, procs=[p])
        self.assertEqual([(e["involvedObject"]["kind"], e["involvedObject"]["name"])
                          for e in evict], [("Pod", "health")], "Evict events")
        self.assertEqual(evict[0]["message"],
                         f"background for {ns}/train: a background pod, its place taken (its "
                         f"resources on node bg-n1 went to pod {ns}/train-0)")
        self.assertFalse([e for e in events(ns) if e["reason"] == "Evict"
                          and e["involvedObject"]["kind"] == "PodGroup"])
        p.kill()
        p.wait(10)
        self.assert_snapshot_cache_held(p)


# --------------------------------------------------------------------------------------------
# 2. Leader failover
# --------------------------------------------------------------------------------------------

LEASE_S = 4
FAILOVER_SLACK_S = 6


class Failover(SchedulerTestCase):
    NS = "e2e-failover"

    def elector(self, ident: str, port: int) -> Proc:
        return self.start(ident, "--leader-elect", "--leader-elect-lease-duration", f"{LEASE_S}s",
                          "--leader-elect-renew-deadline", "3s",
                          "--leader-elect-retry-period", "500ms",
                          "--leader-elect-identity", ident, "--schedule-period", "200ms",
                          "--metrics-bind-address", f"127.0.0.1:{port}", timeout=120)

    def binds_written(self, port: int) -> float | None:
        got = try_http_get(port, "/metrics")
        return metric(got[1], "kai_bind_requests_created_total") if got and got[0] == 200 else None

    def test_standby_takes_over_after_kill_9(self):
        ns = self.NS
        first = [f"first-{i}" for i in range(4)]
        second = [f"second-{i}" for i in range(4)]
        load([queue("fo-q"), node("fo-n1", 8), node("fo-n2", 8)])
        watcher = Watcher(sl.R["BindRequest"].collection(ns))
        ports = {"A": free_port(), "B": free_port()}
        procs = {i: self.elector(i, ports[i]) for i in ("A", "B")}
        all_procs = list(procs.values())
        leader = wait_for("a Lease holder", lease_holder, 30, procs=all_procs)
        self.assertIn(leader, procs)
        standby = "B" if leader == "A" else "A"
        load(single_pod_jobs(ns, "fo-q", first))
        wait_for("BindRequests of the first pods",
                 lambda: sorted(bind_requests(ns)) == first, 30, procs=all_procs)
        # Let a few more cycles run: the standby must still write nothing.
        wait_for("both metrics endpoints",
                 lambda: None not in (self.binds_written(ports["A"]), self.binds_written(ports["B"])),
                 20, procs=all_procs)
        wait_for(f"{leader}'s metrics to count its writes",
                 lambda: self.binds_written(ports[leader]) == len(first), 20, procs=all_procs)
        time.sleep(1.5)
        self.assertEqual(lease_holder(), leader)
        self.assertEqual(self.binds_written(ports[leader]), len(first))
        self.assertEqual(self.binds_written(ports[standby]), 0,
                         f"the standby {standby} wrote BindRequests")
        # Only the leader's queue gauges are exported: a standby's would double every queue's sum.
        standby_text = try_http_get(ports[standby], "/metrics")[1]
        self.assertNotRegex(standby_text, r"(?m)^kai_queue_", "a standby exported queue gauges")
        self.assertRegex(try_http_get(ports[leader], "/metrics")[1],
                         r'(?m)^kai_queue_fair_share_gpu\{[^}]*queue_name="fo-q"')
        self.assertIn(f"{leader} leads", procs[leader].log())
        self.assertNotIn(f"{standby} leads", procs[standby].log())
        uids_before = {n: b["metadata"]["uid"] for n, b in bind_requests(ns).items()}

        procs[leader].kill()
        killed_at = time.monotonic()
        procs[leader].wait(10)
        wait_for(f"{standby} to take the Lease", lambda: lease_holder() == standby,
                 LEASE_S + FAILOVER_SLACK_S + 5, interval=0.05, procs=[procs[standby]])
        took = time.monotonic() - killed_at
        print(f"\n  failover: {standby} took the Lease {took:.2f}s after kill -9 of {leader}",
              file=sys.stderr)
        self.assertLessEqual(took, LEASE_S + FAILOVER_SLACK_S,
                             f"takeover took {took:.1f}s (lease duration {LEASE_S}s)")
        load(single_pod_jobs(ns, "fo-q", second))
        wait_for("BindRequests of the second pods",
                 lambda: sorted(bind_requests(ns)) == sorted(first + second), 30,
                 procs=[procs[standby]])
        time.sleep(1.0)  # a few more cycles: nothing may be rewritten
        brs = bind_requests(ns)
        self.assertEqual(sorted(brs), sorted(first + second))
        self.assertEqual({n: brs[n]["metadata"]["uid"] for n in first}, uids_before,
                         "a BindRequest of the first pods was recreated")
        wait_for(f"{standby}'s metrics to count its writes",
                 lambda: self.binds_written(ports[standby]) == len(second), 20,
                 procs=[procs[standby]])
        # Leading now, it exports the queue gauges.
        self.assertRegex(try_http_get(ports[standby], "/metrics")[1],
                         r'(?m)^kai_queue_fair_share_gpu\{[^}]*queue_name="fo-q"')
        for name, b in brs.items():
            self.assertEqual(b["spec"]["podName"], name)
        evs = watcher.stop()
        self.assertFalse([e for e in watcher.errors if not e.startswith("watch reconnect")],
                         watcher.errors)
        added = [n for t, n, _ in evs if t == "ADDED"]
        self.assertEqual(sorted(added), sorted(first + second), "BindRequests created (watch)")
        self.assertFalse([e for e in evs if e[0] == "DELETED"], "a BindRequest was deleted")
        self.assertIsNone(procs[standby].poll(), f"{standby} exited:\n{procs[standby].log()[-2000:]}")
        self.assertEqual(failure_lines(procs[standby].log()), [],
                         "the new leader logged a failed call")
        self.assertEqual(event_problems(ns, once=False), [], "events")


# --------------------------------------------------------------------------------------------
# 3. Two shards
# --------------------------------------------------------------------------------------------


def shard(name: str, value: str) -> dict:
    return {"apiVersion": "kai.scheduler/v1", "kind": "SchedulingShard", "metadata": {"name": name},
            "spec": {"partitionLabelValue": value}}


class Shards(SchedulerTestCase):
    NS = "e2e-shards"

    def world(self, pool: str) -> list[dict]:
        ns = self.NS
        return [queue(f"q-{pool}", pool), node(f"{pool}-n1", 4, pool), node(f"{pool}-n2", 4, pool),
                *single_pod_jobs(ns, f"q-{pool}", [f"{pool}-p{i}" for i in range(4)], 2, pool),
                pod_group(ns, f"{pool}-big", f"q-{pool}", 1, pool),
                pod(ns, f"{pool}-big-0", f"{pool}-big", 8, pool)]

    def test_each_shard_schedules_only_its_pool(self):
        ns = self.NS
        load([shard("shard-a", "a"), shard("shard-b", "b"), *self.world("a"), *self.world("b")])
        common = ["--schedule-period", "200ms", "--verify-snapshot-cache"]
        b = self.start("shard-b", "--shard", "shard-b", *common)
        wait_for("pool b's BindRequests",
                 lambda: sorted(bind_requests(ns)) == [f"b-p{i}" for i in range(4)], 30, procs=[b])
        wait_for("b-big-0's PodScheduled=False",
                 lambda: pod_scheduled_false(pods(ns)["b-big-0"]), 20, procs=[b])
        time.sleep(1.0)  # more cycles of shard b alone: pool a stays untouched
        ps = pods(ns)
        for name, p in ps.items():
            if name.startswith("a-"):
                self.assertIsNone(pod_scheduled_false(p), f"shard b wrote {name}'s condition")
        self.assertFalse([e for e in events(ns) if e["involvedObject"]["name"].startswith("a-")],
                         "shard b wrote events of pool a")
        self.assertFalse(any((pg.get("status") or {}).get("schedulingConditions")
                             for n, pg in pod_groups(ns).items() if n.startswith("a-")),
                         "shard b wrote a pool-a PodGroup's conditions")
        self.assertFalse([n for n in bind_requests(ns) if n.startswith("a-")])

        a = self.start("shard-a", "--shard", "shard-a", *common)
        want = sorted(f"{p}-p{i}" for p in "ab" for i in range(4))
        wait_for("both pools' BindRequests", lambda: sorted(bind_requests(ns)) == want, 30,
                 procs=[a, b])
        wait_for("a-big-0's PodScheduled=False",
                 lambda: pod_scheduled_false(pods(ns)["a-big-0"]), 20, procs=[a])
        time.sleep(1.5)  # side by side for a while
        for p in (a, b):
            self.assertIsNone(p.poll(), f"{p.name} exited:\n{p.log()[-2000:]}")

        brs = bind_requests(ns)
        self.assertEqual(sorted(brs), want)
        per_node: dict[str, int] = {}
        for name, br in brs.items():
            pool = name[0]
            self.assertTrue(br["spec"]["selectedNode"].startswith(f"{pool}-"),
                            f"{name} (pool {pool}) bound to {br['spec']['selectedNode']}")
            labels = br["metadata"].get("labels") or {}
            self.assertEqual(labels.get(POOL_KEY), pool, f"{name}'s labels: {labels}")
            self.assertEqual(labels.get("selected-node"), br["spec"]["selectedNode"])
            per_node[br["spec"]["selectedNode"]] = per_node.get(br["spec"]["selectedNode"], 0) + 2
        self.assertTrue(all(v <= 4 for v in per_node.values()), per_node)

        groups = pod_groups(ns)
        for pool in "ab":
            conds = (groups[f"{pool}-big"].get("status") or {}).get("schedulingConditions") or []
            self.assertEqual([c.get("nodePool") for c in conds], [pool],
                             f"{pool}-big's schedulingConditions: {conds}")
        for n, pg in groups.items():
            for c in (pg.get("status") or {}).get("schedulingConditions") or []:
                self.assertEqual(c.get("nodePool"), n[0], f"PodGroup {n}: {c}")
        # Scheduled events name the pool that bound the pod.
        for e in events(ns):
            obj = e["involvedObject"]["name"]
            if e["reason"] == "Scheduled":
                self.assertIn(f"at node-pool {obj[0]}", e["message"], f"event on {obj}")
        # The pending pool-a pod got its condition and events only once shard a ran (checked
        # above), i.e. from shard a, which sees pool a's 2 nodes only.
        unsched_a = [e for e in events(ns)
                     if e["involvedObject"]["name"] == "a-big-0" and e["reason"] == "Unschedulable"]
        self.assertTrue(unsched_a, "no Unschedulable event on a-big-0")
        for e in unsched_a:
            self.assertIn("on 2 nodes", e["message"], "a-big-0's reasons count other pools' nodes")
        self.assertIn("on 2 nodes", pod_scheduled_false(pods(ns)["a-big-0"])["message"])
        self.assertEqual(event_problems(ns), [], "events")
        self.assert_snapshot_cache_held(a, b)


# --------------------------------------------------------------------------------------------
# 4. kill -9 while a cycle's writes are in flight
# --------------------------------------------------------------------------------------------

N_PODS = 300
N_NODES = 40
GPUS_PER_NODE = 8
KILL_AT = 40  # kill the first run once this many BindRequests are on the server


def settled_count(count, quiet: float = 1.0, timeout: float = 20.0) -> int:
    """count() once two reads `quiet` seconds apart agree."""
    deadline = time.monotonic() + timeout
    last = count()
    while time.monotonic() < deadline:
        time.sleep(quiet)
        now = count()
        if now == last:
            return now
        last = now
    return last


class KillMidCommit(SchedulerTestCase):
    NS = "e2e-kill"

    def test_restart_converges_without_duplicates(self):
        ns = self.NS
        names = [f"job-{i:03d}" for i in range(N_PODS)]
        t0 = time.monotonic()
        load([queue("kill-q"), *[node(f"kill-n{i:02d}", GPUS_PER_NODE) for i in range(N_NODES)],
              *single_pod_jobs(ns, "kill-q", names)])
        print(f"\n  loaded {N_PODS} pods in {time.monotonic() - t0:.1f}s", file=sys.stderr)
        watcher = Watcher(sl.R["BindRequest"].collection(ns))
        first = self.start("first", "--max-in-flight", "4", "--schedule-period", "200ms",
                           timeout=90)
        n = wait_for(f"{KILL_AT} BindRequests", lambda: (c := count_bind_requests(ns)) >= KILL_AT
                     and c, 60, interval=0.02, procs=[first])
        first.kill()
        first.wait(10)
        # Creates the dead process had sent (up to --max-in-flight) may still land on the server:
        # count once the number stops moving.
        seen_at_kill = settled_count(lambda: count_bind_requests(ns))
        print(f"  killed the first run at {n} BindRequests ({seen_at_kill} once it was dead)",
              file=sys.stderr)
        self.assertLess(seen_at_kill, N_PODS, "the first run finished before it was killed; "
                        "no write was interrupted")

        mport = free_port()
        second = self.start("second", "--max-in-flight", "4", "--schedule-period", "200ms",
                            "--verify-snapshot-cache", "--metrics-bind-address",
                            f"127.0.0.1:{mport}", timeout=90)
        wait_for(f"{N_PODS} BindRequests", lambda: count_bind_requests(ns) == N_PODS, 60,
                 procs=[second])
        # Two more cycles after the one that wrote (its commit ends with PodGroup patches).
        cycles = wait_for("/metrics", lambda: (g := try_http_get(mport, "/metrics")) and
                          metric(g[1], "kai_scheduling_cycles_total"), 20, procs=[second])
        wait_for("two more cycles", lambda: (g := try_http_get(mport, "/metrics")) and
                 metric(g[1], "kai_scheduling_cycles_total") >= cycles + 2, 30, procs=[second])
        got = try_http_get(mport, "/metrics")
        written = metric(got[1], "kai_bind_requests_created_total") if got else None
        print(f"  the second run wrote {written} BindRequests", file=sys.stderr)
        self.assertIsNotNone(written, "the second run's /metrics")
        # It synced after the kill: it writes exactly the missing ones, each once.
        self.assertEqual(written, N_PODS - seen_at_kill)
        rc = second.stop()
        log = second.log()
        self.assertEqual(rc, 0, f"second run after SIGTERM:\n{log[-2000:]}")

        brs = bind_requests(ns)
        ps = pods(ns)
        self.assertEqual(sorted(brs), names)
        used: dict[str, int] = {}
        for name, br in brs.items():
            self.assertEqual(br["spec"]["podName"], name)
            owners = br["metadata"].get("ownerReferences") or []
            self.assertEqual([o.get("uid") for o in owners], [ps[name]["metadata"]["uid"]],
                             f"{name}'s owner")
            node_name = br["spec"]["selectedNode"]
            used[node_name] = used.get(node_name, 0) + gpus_of(ps[name])
        over = {k: v for k, v in used.items() if v > GPUS_PER_NODE}
        self.assertFalse(over, f"nodes over their {GPUS_PER_NODE} GPUs: {over}")
        evs = watcher.stop()
        self.assertFalse([e for e in watcher.errors if not e.startswith("watch reconnect")],
                         watcher.errors)
        added: dict[str, int] = {}
        for t, name, _ in evs:
            if t == "ADDED":
                added[name] = added.get(name, 0) + 1
        self.assertEqual(sorted(added), names, "BindRequests seen created (watch)")
        self.assertEqual({k: v for k, v in added.items() if v > 1}, {}, "created twice")
        self.assertFalse([e for e in evs if e[0] == "DELETED"], "a BindRequest was deleted")
        failures = failure_lines(log)
        self.assertFalse(failures, "the second run logged failed writes:\n" + "\n".join(failures[:20]))
        self.assert_snapshot_cache_held(second)


def failure_line(line: str) -> bool:
    """A scheduler log line that reports a failed call or write (409s it accepted are silent)."""
    summary = re.search(r"cycle \d+: .*?(\d+) failed writes", line)
    if summary:
        return int(summary.group(1)) > 0
    return bool(re.search(r"\b(4\d\d|5\d\d)\b|exists already|failed|error", line, re.I))


def failure_lines(log: str) -> list[str]:
    # The scheduler's own records: TIME<TAB>LEVEL<TAB>scheduler<TAB>message.
    return [l for l in log.splitlines() if "\tscheduler\t" in l and
            "differs from a full build" not in l and failure_line(l)]


# --------------------------------------------------------------------------------------------
# 5. Endpoints
# --------------------------------------------------------------------------------------------


class Endpoints(SchedulerTestCase):
    # Names and a namespace longer than a short-string buffer: a view into a freed object's
    # strings shows in what the scheduler writes.
    NS = "e2e-endpoints-namespace"
    GANG, SOLO, HUGE = "gang-of-two-pods", "solo-job-long-name", "huge-job-long-name"

    def test_health_metrics_and_snapshot(self):
        ns, gang, solo, huge = self.NS, self.GANG, self.SOLO, self.HUGE
        bound = sorted([f"{gang}-0", f"{gang}-1", solo])
        load([queue("ep-q"), node("ep-n1", 8), node("ep-n2", 8),
              pod_group(ns, gang, "ep-q", 2), pod(ns, f"{gang}-0", gang, 4),
              pod(ns, f"{gang}-1", gang, 4), *single_pod_jobs(ns, "ep-q", [solo], 2),
              pod_group(ns, huge, "ep-q", 1), pod(ns, f"{huge}-0", huge, 16)])
        mport, hport, sport = free_port(), free_port(), free_port()
        p = self.start("endpoints", "--metrics-bind-address", f"127.0.0.1:{mport}",
                       "--health-probe-bind-address", f"127.0.0.1:{hport}",
                       "--snapshot-bind-address", f"127.0.0.1:{sport}",
                       "--schedule-period", "200ms", timeout=60)
        got = wait_for("/healthz", lambda: try_http_get(hport, "/healthz"), 20, procs=[p])
        self.assertEqual(got[0], 200, got)
        wait_for("/readyz 200", lambda: (r := try_http_get(hport, "/readyz")) and r[0] == 200, 30,
                 procs=[p])
        wait_for("BindRequests", lambda: sorted(bind_requests(ns)) == bound, 30, procs=[p])
        wait_for(f"{huge}-0's PodScheduled=False",
                 lambda: pod_scheduled_false(pods(ns)[f"{huge}-0"]), 20, procs=[p])
        time.sleep(1.0)  # more cycles after the writes: their view holds them

        status, text = http_get(mport, "/metrics")
        self.assertEqual(status, 200)
        self.assertIsNotNone(metric(text, "kai_e2e_scheduling_latency_milliseconds"), text[:2000])
        self.assertRegex(text, r'(?m)^kai_queue_fair_share_gpu\{[^}]*queue_name="ep-q"[^}]*\} \S+$')
        wait_for("the metrics to count the writes", lambda: metric(
            http_get(mport, "/metrics")[1], "kai_bind_requests_created_total") == len(bound), 20,
                 procs=[p])
        # Metrics and health are on separate ports here.
        self.assertEqual(http_get(hport, "/metrics")[0], 404)
        self.assertEqual(http_get(mport, "/healthz")[0], 404)

        # The snapshot is on its own (loopback) address only.
        self.assertEqual(http_get(hport, "/debug/snapshot")[0], 404)
        status, snap = http_get(sport, "/debug/snapshot")
        self.assertEqual(status, 200)
        docs = [d for d in yaml.safe_load_all(snap) if d]
        kinds = {d.get("kind") for d in docs}
        self.assertLessEqual({"Node", "Pod", "PodGroup", "Queue", "BindRequest"}, kinds)
        snap_file = self.workdir / "snapshot.yaml"
        snap_file.write_text(snap)

        # The scheduler's view of the same server now (a dry run: writes nothing).
        rc, out, log = self.run_once("dry-run", "--dry-run", "-o", "json")
        self.assertEqual(rc, 0, log[-2000:])
        view = json.loads(out)
        sim = subprocess.run([str(KAI_BIN), "simulate", "-f", str(snap_file), "-o", "json",
                              "--cycles", "1", "--now", view["now"]],
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(sim.returncode, 0, sim.stderr[-2000:])
        simulated = json.loads(sim.stdout)

        def statuses(doc):
            return sorted((q["namespace"], q["name"], q["status"], q.get("node") or "")
                          for q in doc["cycles"][0]["pods"])

        self.assertEqual(statuses(simulated), statuses(view))
        by_name = {s[1]: s for s in statuses(view)}
        self.assertEqual(by_name[f"{huge}-0"][2], "Pending")
        self.assertEqual({by_name[n][2] for n in bound}, {"Binding"})

        status, text = http_get(mport, "/metrics")
        self.assertEqual(metric(text, "kai_write_failures_total"), 0, p.log()[-2000:])
        self.assertIsNone(p.poll(), p.log()[-2000:])
        self.assertEqual(p.stop(), 0)
        self.assertEqual(event_problems(ns), [], f"events; scheduler log:\n{p.log()[-2000:]}")
        conds = (pod_groups(ns)[huge].get("status") or {}).get("schedulingConditions") or []
        # One condition for the pool, written when its message changed: cycle 1 judges the huge
        # job before the gang and the solo job take their GPUs ("short by 8"), the cycles after
        # it with them placed ("short by 10"); unchanged messages are not written again.
        self.assertEqual([c.get("nodePool") for c in conds], ["default"], conds)
        self.assertIn(conds[0].get("transitionID"), ("1", "2"), "written once per message")


# --------------------------------------------------------------------------------------------
# 5b. Optional watches: DRA (resource.k8s.io/v1) and NodeResourceTopology (a CRD)
# --------------------------------------------------------------------------------------------

NRT_CRD = pathlib.Path(__file__).resolve().parent / "fixtures" / "noderesourcetopologies.crd.yaml"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
NRT_CRD_NAME = "noderesourcetopologies.topology.node.k8s.io"
NRTS = "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies"
OPTIONAL_APIS = ["resource.k8s.io/v1 deviceclasses", "resource.k8s.io/v1 resourceclaims",
                 "resource.k8s.io/v1 resourceclaimtemplates", "resource.k8s.io/v1 resourceslices",
                 "topology.node.k8s.io/v1alpha2 noderesourcetopologies"]


def nrt_served() -> bool:
    try:
        CLIENT.get(NRTS, query={"limit": "1"})
        return True
    except sl.ApiError as e:
        if e.status == 404:
            return False
        raise


def install_nrt_crd() -> None:
    CLIENT.post(CRDS, yaml.safe_load(NRT_CRD.read_text()))
    wait_for("the NodeResourceTopology CRD served", nrt_served, 60)


def delete_nrt_crd() -> None:
    try:
        CLIENT.delete(f"{CRDS}/{NRT_CRD_NAME}")
    except sl.ApiError as e:
        if e.status != 404:
            raise
    wait_for("the NodeResourceTopology CRD gone", lambda: not nrt_served(), 60)


def numa_shard(name: str) -> dict:
    s = shard(name, "")
    s["spec"]["plugins"] = {"numa": {"enabled": True}}
    return s


def cpu_node(name: str, cpus: int = 8) -> dict:
    alloc = {"cpu": str(cpus), "memory": "64Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  "e2e/cpu-node": "true"}},
            "status": {"capacity": alloc, "allocatable": alloc, "conditions": READY}}


def node_topology(node_name: str, zone_cpus: int, zones: int = 2) -> dict:
    """A NodeResourceTopology: single-numa-node, pod scope, `zones` NUMA zones of zone_cpus."""
    cpu = str(zone_cpus)
    return {"apiVersion": "topology.node.k8s.io/v1alpha2", "kind": "NodeResourceTopology",
            "metadata": {"name": node_name},
            "attributes": [{"name": "topologyManagerPolicy", "value": "single-numa-node"},
                           {"name": "topologyManagerScope", "value": "pod"}],
            "zones": [{"name": f"zone-{i}", "type": "Node", "resources": [
                {"name": "cpu", "capacity": cpu, "allocatable": cpu, "available": cpu}]}
                for i in range(zones)]}


def guaranteed_pod(ns: str, name: str, pg: str, cpus: int) -> dict:
    """Requests equal to limits (QoS Guaranteed): the kubelet aligns its whole CPUs. On the
    nodes of cpu_node only (a node without a NodeResourceTopology would take it unaligned)."""
    res = {"cpu": str(cpus), "memory": "1Gi"}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "annotations": {"pod-group-name": pg}},
            "spec": {"schedulerName": "kai-scheduler", "nodeSelector": {"e2e/cpu-node": "true"},
                     "containers": [{"name": "main", "image": "busybox",
                                     "resources": {"requests": dict(res), "limits": dict(res)}}]}}


class OptionalWatches(SchedulerTestCase):
    NS = "e2e-optional-watches"

    def setUp(self):
        super().setUp()
        delete_nrt_crd()

    def tearDown(self):
        super().tearDown()
        delete_nrt_crd()

    def test_unserved_kinds_are_empty_and_a_crd_installed_later_is_watched(self):
        ns = self.NS
        load([numa_shard("numa"), queue("numa-q"), node("numa-gpu", 1), cpu_node("numa-small"),
              cpu_node("numa-good"), *single_pod_jobs(ns, "numa-q", ["plain"], 1)])
        mport = free_port()
        p = self.start("optional", "--shard", "numa", "--schedule-period", "200ms",
                       "--unserved-recheck-period", "1s", "--verify-snapshot-cache",
                       "--metrics-bind-address", f"127.0.0.1:{mport}", timeout=120)
        # Neither DRA v1 nor the CRD is served: the scheduler syncs and schedules regardless.
        wait_for("plain's BindRequest", lambda: "plain" in bind_requests(ns), 30, procs=[p])
        time.sleep(2.5)  # a few re-checks, which say nothing more
        log = p.log()
        for api in OPTIONAL_APIS:
            self.assertEqual(log.count(f"{api} not served"), 1, f"{api}:\n{log[-3000:]}")
        text = http_get(mport, "/metrics")[1]
        self.assertEqual(metric(text, "kai_informer_kinds_absent"), 5, text[-3000:])
        self.assertRegex(text, r'(?m)^kai_informer_kind_absent\{api_version="resource.k8s.io/v1",'
                               r'kind="ResourceSlice"\} 1$')
        self.assertGreaterEqual(metric(text, "kai_informer_lists_absent_total"), 10)

        # The CRD installed while the scheduler runs: the next re-check lists and watches it.
        install_nrt_crd()
        for name, zone_cpus in (("numa-small", 2), ("numa-good", 4)):
            CLIENT.post(NRTS, node_topology(name, zone_cpus))
        wait_for("the NodeResourceTopologies watched", lambda: metric(
            http_get(mport, "/metrics")[1], "kai_informer_kinds_absent") == 4, 30, procs=[p])
        self.assertEqual(p.log().count(
            "topology.node.k8s.io/v1alpha2 noderesourcetopologies is served now"), 1, p.log()[-3000:])
        time.sleep(0.5)  # a cycle applies the listed objects before the pod arrives

        # 3 whole CPUs on one NUMA zone: numa-small's 2-CPU zones cannot, numa-good's 4 can.
        load([pod_group(ns, "aligned", "numa-q", 1), guaranteed_pod(ns, "aligned-0", "aligned", 3)])
        br = wait_for("aligned-0's BindRequest", lambda: bind_requests(ns).get("aligned-0"), 30,
                      procs=[p])
        self.assertEqual(br["spec"]["selectedNode"], "numa-good", br["spec"])
        zones = br["spec"].get("predictedNUMAZones")
        self.assertEqual([z["zone"] for z in zones or []], ["zone-0"], br["spec"])
        self.assertEqual(zones[0]["amount"].get("cpu"), "3", zones)
        self.assertIsNone(p.poll(), p.log()[-3000:])
        self.assertEqual(p.stop(), 0)
        self.assert_snapshot_cache_held(p)
        self.assertNotRegex(p.log(), FORBIDDEN)


# --------------------------------------------------------------------------------------------
# 5b. Shard settings kai does not apply
# --------------------------------------------------------------------------------------------


def shard_condition(name: str, ctype: str = "SettingsApplied") -> dict | None:
    obj = CLIENT.get(sl.R["SchedulingShard"].item(name))
    return next((c for c in (obj.get("status") or {}).get("conditions") or []
                 if c.get("type") == ctype), None)


class ShardSettings(SchedulerTestCase):
    NS = "e2e-shard-settings"

    def test_unknown_names_are_reported_and_scheduling_goes_on(self):
        # KAI's chart example: a plugin and a scheduler flag kai does not know.
        ns = self.NS
        custom = shard("custom", "")
        custom["spec"].update({"args": {"v": "0"},
                               "plugins": {"mycustomplugin": {"enabled": True}},
                               "kValue": 1.5, "queueDepthPerAction": {"allocate": 10}})
        load([custom, queue("custom-q"), node("custom-n1", 2),
              *single_pod_jobs(ns, "custom-q", ["first"], 1)])
        mport = free_port()
        # Started as KAI's operator starts its scheduler (KAI's flags, `--name=value`, an empty
        # partition value), with KAI's client and logging flags.
        kai_args = ["--scheduler-conf=/etc/kai/scheduler-config.yaml",
                    "--scheduler-name=kai-scheduler", "--namespace=kai-scheduler",
                    "--nodepool-label-key=kai.scheduler/node-pool", "--partition-label-value=",
                    "--resource-reservation-app-label=kai-resource-reservation",
                    "--queue-label-key=kai.scheduler/queue", f"--listen-address=127.0.0.1:{mport}",
                    "--v=3", "--qps=50", "--burst=300"]
        p = self.start("custom", "--shard", "custom", "--schedule-period", "200ms", *kai_args,
                       timeout=90)
        wait_for("first's BindRequest", lambda: "first" in bind_requests(ns), 30, procs=[p])
        cond = wait_for("the SettingsApplied condition", lambda: shard_condition("custom"), 30,
                        procs=[p])
        self.assertEqual((cond["status"], cond["reason"]), ("False", "not_applied"), cond)
        for field in ("spec.plugins.mycustomplugin", "spec.args.v"):
            self.assertIn(field, cond["message"])
        self.assertNotIn("kValue", cond["message"])
        time.sleep(1.0)  # more cycles: each item is still logged once
        log = p.log()
        self.assertEqual(log.count('unknown plugin "mycustomplugin"'), 1, log[-3000:])
        self.assertEqual(log.count("spec.args.v: unknown scheduler argument"), 1, log[-3000:])
        self.assertIn("--scheduler-conf", log)  # warned: the file is not read
        text = http_get(mport, "/metrics")[1]
        self.assertEqual(metric(text, "kai_shard_settings_not_applied"), 2, text[-3000:])
        self.assertRegex(text, r'(?m)^kai_shard_setting_not_applied\{field="spec.args.v"\} 1$')

        # The names removed: the condition turns True, the metric 0; scheduling carried on.
        CLIENT.merge_patch(sl.R["SchedulingShard"].item("custom"),
                           {"spec": {"args": None, "plugins": None}})
        wait_for("SettingsApplied True", lambda: (shard_condition("custom") or {}).get("status")
                 == "True", 30, procs=[p])
        self.assertEqual(metric(http_get(mport, "/metrics")[1], "kai_shard_settings_not_applied"),
                         0)
        load(single_pod_jobs(ns, "custom-q", ["second"], 1))
        wait_for("second's BindRequest", lambda: "second" in bind_requests(ns), 30, procs=[p])
        self.assertIn("every SchedulingShard setting applied", p.log())
        self.assertIsNone(p.poll(), p.log()[-3000:])
        self.assertEqual(p.stop(), 0)


# --------------------------------------------------------------------------------------------
# 6. Bad configuration
# --------------------------------------------------------------------------------------------


class BadConfiguration(SchedulerTestCase):
    NS = "e2e-badconfig"

    def test_missing_kubeconfig_file(self):
        missing = str(self.workdir / "no-such-kubeconfig")
        rc, _, log = self.run_once("missing-kubeconfig", "--once", kubeconfig=missing, timeout=30)
        self.assertEqual(rc, 2, log)
        self.assertIn(missing, log)

    def test_missing_shard(self):
        rc, _, log = self.run_once("missing-shard", "--shard", "no-such-shard", "--once",
                                   timeout=30)
        self.assertEqual(rc, 2, log)
        self.assertIn("no-such-shard", log)

    def test_a_long_running_scheduler_waits_for_its_shard(self):
        # A fresh installation: kai controllers --create-defaults makes the shard after the CRDs.
        p = self.start("late-shard", "--shard", "late-shard", timeout=60)
        kube_server.wait_until("the wait", lambda: "waiting for it" in p.log(), 30)
        self.assertIsNone(p.p.poll(), p.log())
        SERVER.kubectl("create", "-f", "-", input=json.dumps({
            "apiVersion": "kai.scheduler/v1", "kind": "SchedulingShard",
            "metadata": {"name": "late-shard"}, "spec": {"partitionLabelValue": "late"}}))
        kube_server.wait_until("the shard found", lambda: "found SchedulingShard late-shard"
                               in p.log(), 30)
        self.assertEqual(p.stop(), 0, p.log())


if __name__ == "__main__":
    unittest.main()
