#!/usr/bin/env python3
"""KAI's scale suite (KAI's test/e2e/scale), run against kai on the cluster in a box.

    python3 bench/scale/run_scale.py --all                      # the twelve, KAI's shapes, 500 nodes
    python3 bench/scale/run_scale.py --scenario fill-scheduler-off --nodes 50
    python3 bench/scale/run_scale.py --smoke                    # every scenario, tiny, checks only

Each scenario gets a fresh box (tools/cluster/cluster.py up: kube-apiserver, etcd,
kube-controller-manager with its Job controller, kai's installation, simulated nodes labelled
type=kwok whose pods run until deleted, `kai run` without its scheduler), builds the workloads as
KAI's suite builds them (batch Jobs, one pod each, or distributed batch Jobs with
kai.scheduler/batch-min-member; the queue label on the pod template; KWOK's toleration and the
type=kwok node affinity), and times what KAI's suite times. KAI's suite turns its scheduler off
while it submits (the operator scales the Deployment to 0) and on again when the clock starts:
here the scheduler is a `kai scheduler` process this script stops and starts, the other kai
components (`kai run`: binder, pod grouper, controllers, admission) run throughout.

Results: a markdown table on stdout (and --table FILE) and KAI's results JSON (--out), the
structure of KAI's docs/scale-tests/example-results.json. See bench/README.md, "KAI's scale
suite".
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import datetime as dt
import json
import os
import pathlib
import random
import shutil
import signal
import string
import subprocess
import sys
import threading
import time
import traceback

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
import scenario_loader as sl  # noqa: E402

CLUSTER = REPO / "tools" / "cluster" / "cluster.py"
GPU = "nvidia.com/gpu"
QUEUE_LABEL = "kai.scheduler/queue"
BATCH_LABEL = "scale-test-batch"
APP = "engine-e2e"
META_ACCEPT = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"

# KAI's published figures (docs/scale-tests/example-results.json, 500 KWOK nodes x 8 GPUs).
KAI = {
    "topology-preferred": ("Allocate with preferred topology", 48.722995576,
                           "1 job x 512 pods x 2 GPUs, 512 nodes (4 zones x 8 blocks x 8 racks x 2)"),
    "topology-none": ("Allocate without preferred topology", 49.426854935,
                      "1 job x 512 pods x 2 GPUs, 512 nodes"),
    "fill-scheduler-off": ("Fill Cluster with single GPU Jobs", 397.770565662,
                           "4,000 one-GPU Jobs, 500 nodes"),
    "fill-scheduler-on": ("Fill Cluster with single GPU Jobs - scheduler is running while "
                          "submitting jobs", 460.527539676, "4,000 one-GPU Jobs, 500 nodes"),
    "fill-pending-background": ("Fill Cluster with single GPU Jobs with 400 pending tasks in "
                                "background", 398.070285147,
                                "4,000 one-GPU Jobs + 400 pending, 500 nodes"),
    "unschedulable-time": ("Average time to unschedulable for distributed job", 249.5,
                           "10 pods x 8 GPUs, 4,000 running, 10 samples"),
    "reclaim-large-single": ("Reclaim time for one very large job", 102.0,
                             "250 pods x 8 GPUs from 4,000 one-GPU Jobs"),
    "reclaim-latency-single": ("Measuring reclaim time for single GPU", 13.9281538813,
                               "1 one-GPU Job, 4,000 running, 10 samples"),
    "reclaim-many-single": ("Reclaim {n} single GPU Jobs", 694.491068786,
                            "4,000 one-GPU Jobs from 4,000"),
    "reclaim-distributed": ("Multi Node Reclaim for distributed jobs", 716.874118188,
                            "50 jobs x 10 pods x 5 GPUs from 4,000 one-GPU Jobs"),
    "consolidation": ("Consolidation to run multiple distributed jobs", 455.679944886,
                      "41 jobs x 10 pods x 6 GPUs, 1,500 one-GPU Jobs left on 500 nodes"),
    "reclaim-large-fullnode": ("Reclaim time for one very large job", 85.0,
                               "500 pods x 8 GPUs from 500 full-node Jobs"),
    "nccl-burst": ("NCCL Simulation on empty cluster", 5098.691694779,
                   "90 jobs of each size 1..256 pods x 8 GPUs (45,990 pods), 20-40 s each"),
}
ORDER = list(KAI)


def say(msg: str) -> None:
    sys.stderr.write(f"[scale {time.strftime('%H:%M:%S')}] {msg}\n")
    sys.stderr.flush()


def rand_name(n: int = 10) -> str:
    return "".join(random.choice(string.ascii_lowercase + string.digits) for _ in range(n))


def go_duration(sec: float) -> str:
    """Go's time.Duration String() form: 6m37.770565662s, 48.722995576s, 1h2m3s."""
    neg = sec < 0
    sec = abs(sec)
    h, rem = divmod(sec, 3600)
    m, s = divmod(rem, 60)
    out = ""
    if h >= 1:
        out += f"{int(h)}h"
    if h >= 1 or m >= 1:
        out += f"{int(m)}m"
    out += f"{s:.3f}".rstrip("0").rstrip(".") + "s"
    return ("-" if neg else "") + out


def human(sec: float) -> str:
    if sec >= 60:
        m, s = divmod(sec, 60)
        return f"{int(m)} min {s:.0f} s"
    return f"{sec:.1f} s"


def ts(text: str | None) -> float | None:
    if not text:
        return None
    return dt.datetime.strptime(text.replace("Z", "+0000").split(".")[0].replace("+0000", ""),
                                "%Y-%m-%dT%H:%M:%S").replace(tzinfo=dt.timezone.utc).timestamp()


# ---------------------------------------------------------------- API access


class Api:
    """Thread-local kept-alive clients (scenario_loader.Client is one connection)."""

    def __init__(self, kubeconfig: str):
        self.kubeconfig = kubeconfig
        self.local = threading.local()

    def c(self) -> sl.Client:
        cl = getattr(self.local, "c", None)
        if cl is None:
            cl = self.local.c = sl.Client(self.kubeconfig, timeout=120)
        return cl

    def m(self) -> sl.Client:
        cl = getattr(self.local, "m", None)
        if cl is None:
            cl = self.local.m = sl.Client(self.kubeconfig, timeout=120)
            cl.headers["Accept"] = META_ACCEPT
        return cl

    def get(self, path, query=None):
        return self.c().get(path, query=query)

    def post(self, path, body):
        for attempt in range(10):
            try:
                return self.c().post(path, body)
            except sl.ApiError as e:
                if e.status in (0, 429, 500, 503, 504) and attempt < 9:
                    time.sleep(0.2 * (attempt + 1))
                    continue
                raise

    def patch(self, path, body):
        return self.c().merge_patch(path, body)

    def delete(self, path, query=None):
        try:
            return self.c().delete(path, query=query)
        except sl.ApiError as e:
            if e.status != 404:
                raise

    def items(self, path, **query) -> list[dict]:
        query.setdefault("resourceVersion", "0")
        return self.c().get(path, query=query).get("items") or []

    def count(self, path, **query) -> int:
        """How many objects match, listing metadata only."""
        query.setdefault("resourceVersion", "0")
        return len(self.m().get(path, query=query).get("items") or [])

    def meta(self, path, **query) -> list[dict]:
        query.setdefault("resourceVersion", "0")
        return self.m().get(path, query=query).get("items") or []


def parallel(fn, items, workers: int = 8) -> list:
    with cf.ThreadPoolExecutor(workers) as ex:
        return list(ex.map(fn, items))


def pods_path(ns: str) -> str:
    return f"/api/v1/namespaces/{ns}/pods"


def jobs_path(ns: str) -> str:
    return f"/apis/batch/v1/namespaces/{ns}/jobs"


def pg_path(ns: str) -> str:
    return f"/apis/scheduling.run.ai/v2alpha2/namespaces/{ns}/podgroups"


QUEUES = "/apis/scheduling.run.ai/v2/queues"


# ---------------------------------------------------------------- the box and the scheduler


def proc_cpu(pid: int | None) -> float:
    if not pid:
        return 0.0
    try:
        f = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


class Box:
    def __init__(self, args, nodes: int, name: str):
        self.args = args
        self.nodes = nodes
        self.name = name
        self.dir = pathlib.Path(args.dir)
        self.kai = args.kai_copy
        self.sched: subprocess.Popen | None = None
        self.sched_starts = 0
        self.api: Api | None = None

    def cluster(self, *a, timeout=900) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(CLUSTER), *a, "--dir", str(self.dir)],
                              capture_output=True, text=True, timeout=timeout)

    def up(self) -> None:
        if (self.dir / "kube").exists():
            self.cluster("down")
        sim = f"--labels type=kwok --default-runtime forever --lease-interval " \
              f"{self.args.lease_interval} --stats-interval 30 --workers {self.args.simnodes_workers}"
        argv = ["up", "--nodes", str(self.nodes), "--gpus-per-node", str(self.args.gpus_per_node),
                "--kai", self.kai, "--kai-components", "controllers,scale-adjuster",
                "--simnodes-args", sim]
        if self.args.kcm_args:
            argv += ["--kcm-args", self.args.kcm_args]
        if self.args.no_admission:
            argv += ["--no-admission"]
        t = time.monotonic()
        p = self.cluster(*argv)
        if p.returncode != 0:
            raise RuntimeError(f"cluster up failed:\n{p.stderr[-3000:]}")
        env = {}
        for line in p.stdout.splitlines():
            if line.startswith("export "):
                k, _, v = line[7:].partition("=")
                env[k] = v
        self.kubeconfig = env["KUBECONFIG"]
        self.api = Api(self.kubeconfig)
        # KAI's scale environment (hack/setup-scale-test-env.sh): binder 100 concurrent binds,
        # pod grouper 50 concurrent reconciles (kai's clients have no QPS limit by default)
        self.extra = {}
        for comp, flags in (("binder", self.args.binder_args), ("podgrouper", self.args.podgrouper_args)):
            log = (self.dir / f"kai-{comp}.log").open("ab")
            self.extra[comp] = subprocess.Popen(
                [self.kai, comp, "--kubeconfig", self.kubeconfig, *flags.split()],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
            log.close()
        say(f"box up: {self.nodes} nodes x {self.args.gpus_per_node} GPUs in "
            f"{time.monotonic() - t:.0f}s ({self.dir})")

    def pids(self) -> dict[str, int | None]:
        def rec(p: pathlib.Path):
            try:
                return int(p.read_text().split()[0])
            except (OSError, ValueError, IndexError):
                return None
        return {"kube-apiserver": rec(self.dir / "kube" / "kube-apiserver.pid"),
                "etcd": rec(self.dir / "kube" / "etcd.pid"),
                "kube-controller-manager": rec(self.dir / "kube" / "kube-controller-manager.pid"),
                "kai run (controllers, admission, scale adjuster)": rec(self.dir / "kai-run.pid"),
                "kai binder": self.extra["binder"].pid if self.extra.get("binder") else None,
                "kai podgrouper": self.extra["podgrouper"].pid if self.extra.get("podgrouper") else None,
                "kai scheduler": self.sched.pid if self.sched else None,
                "simnodes": rec(self.dir / "simnodes.pid"),
                "this runner": os.getpid()}

    def cpu(self) -> dict[str, float]:
        return {k: proc_cpu(v) for k, v in self.pids().items()}

    def scheduler_on(self) -> None:
        if self.sched and self.sched.poll() is None:
            return
        self.sched_starts += 1
        log = (self.dir / "kai-scheduler.log").open("ab")
        extra = self.args.scheduler_args.split()
        # /debug/snapshot off unless --scheduler-args asks for it (to look at a cycle's world).
        snapshot = [] if any(a.startswith("--snapshot-bind-address") for a in extra) else [
            "--snapshot-bind-address", ""]
        self.sched = subprocess.Popen(
            [self.kai, "scheduler", "--kubeconfig", self.kubeconfig, "--shard", "default",
             *snapshot, *extra],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        log.close()

    def scheduler_off(self) -> None:
        if not self.sched:
            return
        if self.sched.poll() is None:
            self.sched.send_signal(signal.SIGTERM)
            try:
                self.sched.wait(30)
            except subprocess.TimeoutExpired:
                self.sched.kill()
                self.sched.wait()
        rc = self.sched.returncode
        if rc not in (0, -signal.SIGTERM):
            say(f"WARNING: kai scheduler exited with {rc}; see its log")
        self.sched = None

    def scheduler_alive(self) -> bool:
        return bool(self.sched and self.sched.poll() is None)

    def down(self, logs_to: pathlib.Path | None) -> None:
        self.scheduler_off()
        for comp, proc in (getattr(self, "extra", None) or {}).items():
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            elif proc.returncode:
                say(f"WARNING: kai {comp} had exited with {proc.returncode}")
        if logs_to:
            logs_to.mkdir(parents=True, exist_ok=True)
            for f in ("kai-run.log", "kai-scheduler.log", "kai-binder.log", "kai-podgrouper.log",
                      "simnodes.log",
                      "kube/kube-controller-manager.log", "kube/kube-apiserver.log"):
                src = self.dir / f
                if src.exists():
                    shutil.copy(src, logs_to / src.name)
        p = self.cluster("down")
        if p.returncode != 0:
            say(f"cluster down: {p.stderr[-1000:]}")


# ---------------------------------------------------------------- KAI's objects


def queue_obj(name: str, parent: str = "", gpu=(-1, 1, -1)) -> dict:
    def res(q, w, lim):
        return {"quota": q, "overQuotaWeight": w, "limit": lim}
    spec = {"resources": {"gpu": res(*gpu), "cpu": res(-1, 1, -1), "memory": res(-1, 1, -1)}}
    if parent:
        spec["parentQueue"] = parent
    return {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
            "metadata": {"name": name, "labels": {"app": APP}}, "spec": spec}


def ns_of(queue: str) -> str:
    return "kai-" + queue


def kwok_pod_spec(gpus: int) -> dict:
    """KAI's CreatePodObject + addKWOKTaintsAndAffinity (the tolerations are replaced)."""
    return {
        "containers": [{"name": "ubuntu-container", "image": "ubuntu",
                        "args": ["sleep", "infinity"], "imagePullPolicy": "IfNotPresent",
                        "resources": {"limits": {GPU: str(gpus)}}}],
        "terminationGracePeriodSeconds": 0,
        "schedulerName": "kai-scheduler",
        "restartPolicy": "Never",
        "tolerations": [{"key": "kwok.x-k8s.io/node", "value": "fake", "effect": "NoSchedule"}],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "type", "operator": "In", "values": ["kwok"]}]}]}}},
    }


def batch_job(queue: str, gpus: int, pod_labels: dict | None = None) -> dict:
    """KAI's rd.CreateBatchJobObject for KWOK: one pod, restartPolicy Never."""
    app = rand_name()
    labels = {"app": APP, QUEUE_LABEL: queue, "batch-job-app-name": app}
    labels.update(pod_labels or {})
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": rand_name(), "namespace": ns_of(queue),
                         "labels": {"app": APP, "batch-job-app-name": app}},
            "spec": {"template": {"metadata": {"labels": labels, "annotations": {}},
                                  "spec": kwok_pod_spec(gpus)}}}


def distributed_job(queue: str, gpus: int, pods: int, pod_labels: dict | None = None,
                    job_labels: dict | None = None, topology: dict | None = None,
                    annotations: dict | None = None) -> dict:
    """KAI's rd.SubmitDistributedBatchJob: parallelism = completions = pods, a gang through
    kai.scheduler/batch-min-member, topology annotations for the pod grouper."""
    j = batch_job(queue, gpus, pod_labels)
    j["spec"]["parallelism"] = pods
    j["spec"]["completions"] = pods
    ann = {"kai.scheduler/batch-min-member": str(pods)}
    if topology:
        ann["kai.scheduler/topology"] = topology["topology"]
        if topology.get("preferred"):
            ann["kai.scheduler/topology-preferred-placement"] = topology["preferred"]
    j["metadata"]["annotations"] = ann
    j["metadata"]["labels"].update(job_labels or {})
    if annotations:
        j["spec"]["template"]["metadata"]["annotations"].update(annotations)
    return j


# ---------------------------------------------------------------- a scenario's context


class Run:
    def __init__(self, args, box: Box):
        self.args = args
        self.box = box
        self.api = box.api
        self.g = args.gpus_per_node
        self.q = {}
        self.timeline: list[str] = []
        self.notes: list[str] = []

    # -- queues as KAI's BeforeAll makes them (names fixed, not random)
    def queues(self, sanity_gpu=(-1, 1, -1)) -> None:
        parent = "parent-scale"
        self.q = {"parent": parent, "filler": "filler-scale", "sanity": "sanity-scale",
                  "noquota": "no-quota-scale", "reclaim": "reclaim-single-scale",
                  "multinode": "reclaim-distributed-scale"}
        self.api.post(QUEUES, queue_obj(parent))
        for key, name in self.q.items():
            if key == "parent":
                continue
            gpu = {"noquota": (0, 0, 0), "sanity": sanity_gpu}.get(key, (-1, 1, -1))
            self.api.post(QUEUES, queue_obj(name, parent, gpu))
            try:
                self.api.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                     "metadata": {"name": ns_of(name)}})
            except sl.ApiError as e:
                if e.status != 409:
                    raise

    def cpu_mark(self) -> None:
        self._cpu0 = (time.time(), self.box.cpu())

    def cpu_done(self) -> None:
        w0, c0 = self._cpu0
        c1 = self.box.cpu()
        self.measured_cpu = {"wall_s": round(time.time() - w0, 1),
                             **{k: round(c1[k] - c0.get(k, 0), 1) for k in c1}}

    def set_sanity_gpu(self, quota, weight, limit) -> None:
        self.api.patch(f"{QUEUES}/{self.q['sanity']}", {"spec": {"resources": {"gpu": {
            "quota": quota, "overQuotaWeight": weight, "limit": limit}}}})

    def shard_args(self, args: dict) -> None:
        self.api.patch("/apis/kai.scheduler/v1/schedulingshards/default",
                       {"spec": {"args": args}})

    def create(self, jobs: list[dict]) -> list[dict]:
        return parallel(lambda j: self.api.post(jobs_path(j["metadata"]["namespace"]), j),
                        jobs, self.args.writers)

    def wait(self, what: str, fn, timeout: float, poll: float = 1.0):
        deadline = time.monotonic() + timeout
        while True:
            v = fn()
            if v:
                return v
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")
            time.sleep(poll)

    def wait_pods_exist(self, ns: str, selector: str, n: int, timeout: float = 1800) -> None:
        self.wait(f"{n} pods ({selector}) to exist", lambda: self.api.count(
            pods_path(ns), labelSelector=selector) >= n, timeout, self.args.poll)

    def wait_scheduled(self, queue: str, n: int, t0: float, timeout: float | None = None,
                       label: str = "", mark: bool = True) -> float:
        """KAI's waitForAllJobsToSchedule: exactly n pods of the queue, each PodScheduled=True;
        returns the latest PodScheduled transition (wall clock, seconds)."""
        ns, sel = ns_of(queue), f"{QUEUE_LABEL}={queue}"
        timeout = timeout or self.args.flow_timeout
        deadline = time.monotonic() + timeout
        if mark:
            self.cpu_mark()
        last_report = 0.0
        while True:
            unbound = self.api.count(pods_path(ns), labelSelector=sel, fieldSelector="spec.nodeName=")
            total = None
            if unbound == 0:
                total = self.api.count(pods_path(ns), labelSelector=sel)
                if total == n:
                    pods = self.api.items(pods_path(ns), labelSelector=sel)
                    times = [scheduled_at(p) for p in pods]
                    if len(pods) == n and all(t is not None for t in times):
                        self.cpu_done()
                        return max(times)
            now = time.monotonic()
            if now - last_report >= self.args.progress_every:
                last_report = now
                el = time.time() - t0
                line = f"{label} +{el:.0f}s: {n - unbound if total is None else total - unbound}" \
                       f"/{n} bound" + ("" if self.box.scheduler_alive() else " (scheduler off)")
                self.timeline.append(line)
                say(line)
            if not self.box.scheduler_alive() and self.box.sched_starts:
                raise RuntimeError("kai scheduler exited; see kai-scheduler.log")
            if now > deadline:
                raise TimeoutError(f"not all {n} pods of {queue} scheduled after {timeout:.0f}s "
                                   f"({unbound} unbound)")
            time.sleep(self.args.poll)

    # -- KAI's fillClusterWithJobs
    def fill(self, queue: str, gpus_per_job: int, scheduler_off: bool,
             extra_jobs: int = 0, label: str = "fill") -> tuple[float, float, int]:
        n = self.box.nodes * self.g // gpus_per_job
        t0 = None
        if scheduler_off:
            self.box.scheduler_off()
        else:  # running already, as in KAI's suite: start it and let it sync first
            if not self.box.scheduler_alive():
                self.box.scheduler_on()
                time.sleep(5)
            t0 = time.time()
            self.cpu_mark()
        c0 = time.time()
        self.create([batch_job(queue, gpus_per_job) for _ in range(n)])
        say(f"{label}: {n} Jobs created in {time.time() - c0:.1f}s")
        self.wait_pods_exist(ns_of(queue), f"{QUEUE_LABEL}={queue}", n)
        say(f"{label}: {n} pods exist {time.time() - c0:.1f}s after the first create")
        self.pods_made_s = time.time() - c0
        if scheduler_off:
            t0 = time.time()
            self.box.scheduler_on()
        end = self.wait_scheduled(queue, n, t0, label=label, mark=scheduler_off)
        return t0, end, n

    # -- KAI's distributedJobsScaleTestInternal (scheduler off while submitting)
    def distributed(self, queue: str, jobs: int, pods: int, gpus: int,
                    topology: dict | None = None, label: str = "distributed") -> tuple[float, float]:
        self.box.scheduler_off()
        batch = rand_name()
        bl = {BATCH_LABEL: batch}
        made = self.create([distributed_job(queue, gpus, pods, bl, bl, topology)
                            for _ in range(jobs)])
        self.wait_pods_exist(ns_of(queue), f"{BATCH_LABEL}={batch}", jobs * pods)
        uids = {j["metadata"]["uid"] for j in made}
        self.wait(f"{jobs} PodGroups", lambda: sum(
            1 for pg in self.api.meta(pg_path(ns_of(queue)))
            if any(o.get("uid") in uids for o in pg["metadata"].get("ownerReferences") or [])
        ) >= jobs, 600, self.args.poll)
        t0 = time.time()
        self.box.scheduler_on()
        end = self.wait_scheduled(queue, jobs * pods, t0, label=label)
        return t0, end

    def podgroup_of(self, job: dict, timeout: float = 120) -> dict:
        ns, uid = job["metadata"]["namespace"], job["metadata"]["uid"]

        def find():
            for pg in self.api.items(pg_path(ns)):
                if any(o.get("uid") == uid for o in pg["metadata"].get("ownerReferences") or []):
                    return pg
            return None
        return self.wait(f"the PodGroup of Job {job['metadata']['name']}", find, timeout, 0.25)


def scheduled_at(pod: dict) -> float | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "True":
            return ts(c.get("lastTransitionTime"))
    return None


# ---------------------------------------------------------------- the scenarios


class Shape:
    def __init__(self, args):
        self.nodes = args.nodes
        self.g = args.gpus_per_node
        self.ppd = args.pods_per_distributed_job
        self.samples = args.samples
        self.levels = [int(x) for x in args.topology_levels.split(",")]
        self.per_domain = args.topology_nodes_per_domain
        self.nccl_per_size = args.nccl_jobs_per_size
        self.nccl_runtime = args.nccl_runtime
        self.nccl_timeout = args.nccl_timeout


def topo_nodes(s: Shape) -> int:
    n = s.per_domain
    for c in s.levels:
        n *= c
    return n


def sc_topology(run: Run, s: Shape, preferred: bool) -> dict:
    api = run.api
    names = [("cloud.provider.com/topology-zone", "zone"), ("cloud.provider.com/topology-block",
                                                            "block"),
             ("cloud.provider.com/topology-rack", "rack")]
    api.post("/apis/kai.scheduler/v1alpha1/topologies", {
        "apiVersion": "kai.scheduler/v1alpha1", "kind": "Topology",
        "metadata": {"name": "e2e-topology-tree"},
        "spec": {"levels": [{"nodeLabel": k} for k, _ in names]}})
    # label the nodes: every combination of level values, per_domain nodes each (KAI's node pools)
    combos = [[]]
    for (key, short), count in zip(names, s.levels):
        combos = [c + [(key, f"{short}{j + 1}")] for c in combos for j in range(count)]
    nodes = sorted(n["metadata"]["name"] for n in api.meta("/api/v1/nodes"))
    patches = []
    for i, name in enumerate(nodes):
        labels = dict(combos[i // s.per_domain])
        labels["test"] = "topology-e2e"
        patches.append((name, labels))
    parallel(lambda p: api.patch(f"/api/v1/nodes/{p[0]}", {"metadata": {"labels": p[1]}}), patches)
    run.queues()
    total = len(nodes)
    topo = {"topology": "e2e-topology-tree",
            "preferred": "cloud.provider.com/topology-rack" if preferred else ""}
    t0, end = run.distributed(run.q["sanity"], 1, total, 2, topo if preferred else None,
                              label="topology")
    name = KAI["topology-preferred" if preferred else "topology-none"][0]
    ok = True
    if preferred:
        # where did the pods land: how many racks does the job span (KAI's test does not check)
        pods = api.items(pods_path(ns_of(run.q["sanity"])))
        lab = {n["metadata"]["name"]: n["metadata"].get("labels", {})
               for n in api.meta("/api/v1/nodes")}
        racks = {tuple(lab[p["spec"]["nodeName"]].get(k) for k, _ in names) for p in pods}
        run.notes.append(f"the job spans {len(racks)} racks of {len(combos)}")
    return {"name": name, "ok": ok, "secs": end - t0,
            "details": {"distributed jobs": 1, "nodes": total, "pods": total,
                        "time": go_duration(end - t0)}}


def sc_fill(run: Run, s: Shape, off: bool, background: bool) -> dict:
    run.queues()
    key = "fill-pending-background" if background else (
        "fill-scheduler-off" if off else "fill-scheduler-on")
    name = KAI[key][0]
    bg = 0
    if background:
        bg = max(1, 400 * s.nodes // 500)
        run.box.scheduler_on()
        run.create([batch_job(run.q["noquota"], 1) for _ in range(bg)])
        run.wait_pods_exist(ns_of(run.q["noquota"]), f"{QUEUE_LABEL}={run.q['noquota']}", bg)
        name = f"Fill Cluster with single GPU Jobs with {bg} pending tasks in background"
    t0, end, n = run.fill(run.q["sanity"], 1, off, label=key)
    still = 0
    if background:
        still = run.api.count(pods_path(ns_of(run.q["noquota"])), fieldSelector="spec.nodeName!=")
        if still:
            run.notes.append(f"{still} no-quota pods were bound (expected none)")
    return {"name": name, "ok": still == 0, "secs": end - t0,
            "details": {"nodes": s.nodes, "jobs": n, "time": go_duration(end - t0)},
            "extra": {"pods_made_s": round(run.pods_made_s, 1), "background": bg}}


def prepare_reclaim(run: Run, s: Shape, gpus_per_job: int = 1) -> int:
    """KAI's "Reclaim" BeforeAll (sanity: GPU quota 0, weight 0, no limit) and the BeforeEach
    fill of the sanity queue (scheduler off while submitting, then on)."""
    run.queues(sanity_gpu=(0, 0, -1))
    run.shard_args({"max-consolidation-preemptees": "0"})
    t0, end, n = run.fill(run.q["sanity"], gpus_per_job, True, label="setup fill")
    say(f"setup fill: {n} Jobs scheduled in {end - t0:.1f}s")
    return n


def sc_unschedulable(run: Run, s: Shape) -> dict:
    prepare_reclaim(run, s)
    quota = s.nodes * s.g - s.ppd * s.g + 1
    run.set_sanity_gpu(quota, 0, -1)
    total = 0.0
    samples = []
    run.cpu_mark()
    for i in range(s.samples):
        job = run.create([distributed_job(run.q["reclaim"], s.g, s.ppd)])[0]
        pg = run.podgroup_of(job)
        created = ts(pg["metadata"]["creationTimestamp"])
        run.wait_pods_exist(ns_of(run.q["reclaim"]), f"job-name={job['metadata']['name']}", s.ppd,
                            120)

        def cond():
            p = run.api.get(f"{pg_path(ns_of(run.q['reclaim']))}/{pg['metadata']['name']}")
            for c in (p.get("status") or {}).get("schedulingConditions") or []:
                if c.get("type") == "UnschedulableOnNodePool":
                    return ts(c.get("lastTransitionTime")) or -1
            if not run.box.scheduler_alive():
                raise RuntimeError("kai scheduler exited")
            return None
        t = run.wait("UnschedulableOnNodePool", cond, run.args.flow_timeout, 0.5)
        samples.append(t - created)
        total += t - created
        say(f"unschedulable sample {i + 1}: {t - created:.0f}s")
        run.api.delete(f"{jobs_path(ns_of(run.q['reclaim']))}/{job['metadata']['name']}")
    run.cpu_done()
    bound = run.api.count(pods_path(ns_of(run.q["reclaim"])), fieldSelector="spec.nodeName!=")
    run.notes.append(f"samples {', '.join(f'{x:.0f}' for x in samples)} s")
    if bound:
        run.notes.append(f"{bound} pods of the reclaiming queue were bound (expected none)")
    avg = total / s.samples
    return {"name": KAI["unschedulable-time"][0], "ok": bound == 0, "secs": avg,
            "details": {"nodes": s.nodes, "pods": s.ppd, "total requested gpus": s.ppd * s.g,
                        "average time to unschedulable (seconds)": avg}}


def sc_reclaim_large(run: Run, s: Shape, fullnode: bool) -> dict:
    prepare_reclaim(run, s, s.g if fullnode else 1)
    n = s.nodes if fullnode else s.nodes // 2
    q = run.q["reclaim"]
    run.cpu_mark()
    job = run.create([distributed_job(q, s.g, n)])[0]
    pg = run.podgroup_of(job)
    start = ts(pg["metadata"]["creationTimestamp"])
    ns = ns_of(q)

    def all_running():
        pods = run.api.items(pods_path(ns))
        if len(pods) != n or any((p.get("status") or {}).get("phase") != "Running" for p in pods):
            if not run.box.scheduler_alive():
                raise RuntimeError("kai scheduler exited")
            return None
        return pods
    pods = run.wait(f"{n} pods Running", all_running, run.args.flow_timeout, run.args.poll)
    run.cpu_done()
    end = max([start] + [scheduled_at(p) or start for p in pods])
    return {"name": KAI["reclaim-large-single"][0], "ok": True, "secs": end - start,
            "details": {"total requested gpus": float(n * s.g),
                        "time to reclaim (seconds)": end - start,
                        "number of pods": float(len(pods))}}


def sc_reclaim_latency(run: Run, s: Shape) -> dict:
    prepare_reclaim(run, s)
    q = run.q["reclaim"]
    total = 0.0
    samples = []
    for i in range(s.samples):
        t0 = time.time()
        run.create([batch_job(q, 1)])
        end = run.wait_scheduled(q, i + 1, t0, label=f"sample {i + 1}")
        samples.append(end - t0)
        total += end - t0
    run.notes.append("samples " + ", ".join(f"{x:.1f}" for x in samples) + " s")
    avg = total / s.samples
    return {"name": KAI["reclaim-latency-single"][0], "ok": True, "secs": avg,
            "details": {"running jobs": s.nodes * s.g,
                        "average time to reclaim single GPU (seconds)": avg}}


def sc_reclaim_many(run: Run, s: Shape) -> dict:
    prepare_reclaim(run, s)
    t0, end, n = run.fill(run.q["reclaim"], 1, True, label="reclaim-many")
    return {"name": f"Reclaim {n} single GPU Jobs", "ok": True, "secs": end - t0,
            "details": {"nodes": s.nodes, "jobs": n, "time": go_duration(end - t0)},
            "extra": {"pods_made_s": round(run.pods_made_s, 1)}}


def sc_reclaim_distributed(run: Run, s: Shape) -> dict:
    prepare_reclaim(run, s)
    gpp = int(min(s.g, s.g / 2.0 + 1))
    jobs = max(1, s.nodes // s.ppd)
    t0, end = run.distributed(run.q["multinode"], jobs, s.ppd, gpp, label="reclaim-distributed")
    return {"name": KAI["reclaim-distributed"][0], "ok": True, "secs": end - t0,
            "details": {"nodes": s.nodes, "pods": jobs * s.ppd, "distributed jobs": jobs,
                        "time": go_duration(end - t0)}}


def sc_consolidation(run: Run, s: Shape) -> dict:
    prepare_reclaim(run, s)
    # KAI's deleteJobsFromAllNodes: delete the Jobs of floor(min(G, G/2+1)) running pods a node
    per_node = int(min(s.g, s.g / 2.0 + 1))
    ns = ns_of(run.q["sanity"])
    sel = f"{QUEUE_LABEL}={run.q['sanity']}"
    # the fill ends at the last bind; the nodes mark the pods Running just after: wait for that,
    # else the Running pods listed below are fewer than the fill's
    n = s.nodes * s.g
    run.wait(f"{n} Running pods", lambda: run.api.count(
        pods_path(ns), labelSelector=sel, fieldSelector="status.phase=Running") >= n, 300,
        run.args.poll)
    pods = run.api.items(pods_path(ns), labelSelector=sel)
    done: dict[str, int] = {}
    victims = []
    for p in pods:
        if (p.get("status") or {}).get("phase") != "Running":
            continue
        node = p["spec"]["nodeName"]
        if done.get(node, 0) == per_node:
            continue
        victims.append(p["metadata"]["ownerReferences"][0]["name"])
        done[node] = done.get(node, 0) + 1
    parallel(lambda j: run.api.delete(f"{jobs_path(ns)}/{j}",
                                      query={"propagationPolicy": "Background"}), victims)
    say(f"consolidation: deleted {len(victims)} Jobs ({per_node} a node)")
    gpp = per_node
    jobs0 = s.nodes // s.ppd
    free = gpp * s.ppd * jobs0
    new_gpp = gpp + 1
    jobs = max(1, free // (new_gpp * s.ppd))
    # KAI's test sets spec.args max-number-consolidation-preemptees (a key KAI's scheduler does
    # not have); kai's (and KAI's) key is max-consolidation-preemptees: set what it meant.
    run.shard_args({"max-consolidation-preemptees": str(s.nodes * s.g)})
    t0, end = run.distributed(run.q["multinode"], jobs, s.ppd, new_gpp, label="consolidation")
    left = run.api.count(pods_path(ns), labelSelector=f"{QUEUE_LABEL}={run.q['sanity']}",
                         fieldSelector="status.phase=Running")
    run.notes.append(f"{len(victims)} Jobs deleted first; {left} one-GPU pods Running at the end")
    return {"name": KAI["consolidation"][0], "ok": True, "secs": end - t0,
            "details": {"nodes": s.nodes, "pods": jobs * s.ppd, "distributed jobs": jobs,
                        "time": go_duration(end - t0)}}


def sc_nccl(run: Run, s: Shape) -> dict:
    run.queues(sanity_gpu=(0, 0, -1))
    run.shard_args({"max-consolidation-preemptees": "0"})
    run.box.scheduler_on()
    q = run.q["sanity"]
    ns = ns_of(q)
    sizes = [x for x in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512) if x <= s.nodes]
    t0 = time.time()
    run.cpu_mark()
    batch = rand_name()
    pl = {"burst-test": "true", BATCH_LABEL: batch}
    jobs = []
    for size in sizes:
        for _ in range(s.nccl_per_size):
            jobs.append(distributed_job(q, s.g, size, pl, {BATCH_LABEL: batch},
                                        annotations={"simnodes.kai/runtime": s.nccl_runtime}))
    for j in jobs:  # KAI submits them one after another
        run.api.post(jobs_path(ns), j)
    total = sum(j["spec"]["parallelism"] for j in jobs)
    say(f"nccl: {len(jobs)} Jobs, {total} pods submitted in {time.time() - t0:.0f}s")
    run.wait_pods_exist(ns, f"{BATCH_LABEL}={batch}", total, s.nccl_timeout)
    say(f"nccl: all {total} pods exist at +{time.time() - t0:.0f}s")
    deadline = time.monotonic() + s.nccl_timeout
    last = 0.0
    while True:
        done = run.api.count(pods_path(ns), labelSelector=f"{BATCH_LABEL}={batch}",
                             fieldSelector="status.phase=Succeeded")
        pending = run.api.count(pods_path(ns), fieldSelector="status.phase=Pending")
        if done == total or pending == 0:
            break
        if not run.box.scheduler_alive():
            raise RuntimeError("kai scheduler exited")
        if time.monotonic() - last > run.args.progress_every:
            last = time.monotonic()
            line = f"nccl +{time.time() - t0:.0f}s: {done}/{total} completed, {pending} pending"
            run.timeline.append(line)
            say(line)
        if time.monotonic() > deadline:
            raise TimeoutError(f"nccl: {done}/{total} completed, {pending} pending at the timeout")
        time.sleep(run.args.poll)
    secs = time.time() - t0
    run.cpu_done()
    return {"name": KAI["nccl-burst"][0], "ok": True, "secs": secs,
            "details": {"nodes": s.nodes, "total pods": total, "completed pods": done,
                        "pending pods": pending, "time(seconds)": secs}}


SCENARIOS = {
    "topology-preferred": lambda r, s: sc_topology(r, s, True),
    "topology-none": lambda r, s: sc_topology(r, s, False),
    "fill-scheduler-off": lambda r, s: sc_fill(r, s, True, False),
    "fill-scheduler-on": lambda r, s: sc_fill(r, s, False, False),
    "fill-pending-background": lambda r, s: sc_fill(r, s, True, True),
    "unschedulable-time": sc_unschedulable,
    "reclaim-large-single": lambda r, s: sc_reclaim_large(r, s, False),
    "reclaim-latency-single": sc_reclaim_latency,
    "reclaim-many-single": sc_reclaim_many,
    "reclaim-distributed": sc_reclaim_distributed,
    "consolidation": sc_consolidation,
    "reclaim-large-fullnode": lambda r, s: sc_reclaim_large(r, s, True),
    "nccl-burst": sc_nccl,
}


def kai_shape(name: str, s: Shape, nodes: int) -> str:
    g = s.g
    if name.startswith("topology"):
        return f"1 job x {nodes} pods x 2 GPUs, {nodes} nodes ({' x '.join(map(str, s.levels))} x {s.per_domain})"
    if name.startswith("fill"):
        extra = f" + {max(1, 400 * nodes // 500)} pending" if name == "fill-pending-background" else ""
        return f"{nodes * g:,} one-GPU Jobs{extra}, {nodes} nodes"
    if name == "unschedulable-time":
        return f"{s.ppd} pods x {g} GPUs, {nodes * g:,} running, {s.samples} samples"
    if name == "reclaim-large-single":
        return f"{nodes // 2} pods x {g} GPUs from {nodes * g:,} one-GPU Jobs"
    if name == "reclaim-latency-single":
        return f"1 one-GPU Job, {nodes * g:,} running, {s.samples} samples"
    if name == "reclaim-many-single":
        return f"{nodes * g:,} one-GPU Jobs from {nodes * g:,}"
    if name == "reclaim-distributed":
        gpp = int(min(g, g / 2.0 + 1))
        return f"{max(1, nodes // s.ppd)} jobs x {s.ppd} pods x {gpp} GPUs from {nodes * g:,} one-GPU Jobs"
    if name == "consolidation":
        gpp = int(min(g, g / 2.0 + 1))
        jobs = max(1, gpp * s.ppd * (nodes // s.ppd) // ((gpp + 1) * s.ppd))
        return f"{jobs} jobs x {s.ppd} pods x {gpp + 1} GPUs, {(g - gpp) * nodes:,} one-GPU Jobs left on {nodes} nodes"
    if name == "reclaim-large-fullnode":
        return f"{nodes} pods x {g} GPUs from {nodes} full-node Jobs"
    if name == "nccl-burst":
        sizes = [x for x in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512) if x <= nodes]
        return (f"{s.nccl_per_size} jobs of each size 1..{sizes[-1]} pods x {g} GPUs "
                f"({s.nccl_per_size * sum(sizes):,} pods), {s.nccl_runtime} each, {nodes} nodes")
    return ""


def run_one(args, name: str, logs_root: pathlib.Path) -> dict:
    s = Shape(args)
    nodes = args.node_override.get(name, s.nodes)
    if name.startswith("topology"):
        nodes = topo_nodes(s)
    s.nodes = nodes
    box = Box(args, nodes, name)
    res = {"scenario": name, "ok": False, "secs": None, "shape": kai_shape(name, s, nodes)}
    load0 = os.getloadavg()
    t_start = time.time()
    try:
        box.up()
        run = Run(args, box)
        c0 = box.cpu()
        w0 = time.time()
        r = SCENARIOS[name](run, s)
        c1 = box.cpu()
        w1 = time.time()
        res.update(r)
        res["notes"] = run.notes
        res["timeline"] = run.timeline
        res["cpu_s"] = {k: round(c1[k] - c0.get(k, 0), 1) for k in c1}
        res["measured_cpu_s"] = getattr(run, "measured_cpu", None)
        res["scenario_wall_s"] = round(w1 - w0, 1)
    except Exception as e:  # noqa: BLE001 - the report says what failed
        traceback.print_exc()
        res["error"] = f"{type(e).__name__}: {e}"
        say(f"{name} FAILED: {res['error']}")
    finally:
        res["load"] = [round(x, 2) for x in load0] + [round(x, 2) for x in os.getloadavg()]
        res["wall_s"] = round(time.time() - t_start, 1)
        box.down(logs_root / name)
    say(f"{name}: {'ok' if res.get('ok') and 'error' not in res else 'FAILED'} "
        f"{res.get('secs') if res.get('secs') is None else round(res['secs'], 1)} s "
        f"(scenario wall {res['wall_s']} s)")
    return res


def table(results: list[dict], args) -> str:
    rows = ["| scenario | KAI's shape (500 nodes x 8 GPUs) | kai's shape | KAI | kai | KAI/kai | notes |",
            "|---|---|---|---|---|---|---|"]
    for r in results:
        name = r["scenario"]
        kai_name, kai_secs, kai_shape_s = KAI[name]
        if r.get("secs") is not None and "error" not in r:
            mine = human(r["secs"]) + ("" if r.get("ok") else " (check FAILED)")
            ratio = f"{kai_secs / r['secs']:.1f}x" if r["secs"] > 0 else "-"
        else:
            mine, ratio = "FAILED", "-"
        notes = "; ".join(r.get("notes") or [])
        if r.get("error"):
            notes = (notes + "; " if notes else "") + r["error"]
        rows.append(f"| {name} | {kai_shape_s} | {r['shape']} | {human(kai_secs)} | {mine} | "
                    f"{ratio} | {notes} |")
    return "\n".join(rows)


def git_rev() -> str:
    p = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True)
    return p.stdout.strip()


def write_json(results: list[dict], args, path: pathlib.Path) -> None:
    tests = []
    for r in results:
        ok = r.get("ok") and "error" not in r
        t = {"test_name": r.get("name") or KAI[r["scenario"]][0],
             "status": "success" if ok else "failure",
             "details": r.get("details") or {}}
        tests.append(t)
    doc = {
        "metadata": {
            "kai_scheduler_ref": "kai (C++ reimplementation)",
            "kai_commit_hash": git_rev(),
            "kwok_node_count": args.nodes,
            "cluster_node_count": 1,
            "test_focus": ",".join(r["scenario"] for r in results),
            "timestamp": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "simulated_nodes": "tools/simnodes/simnodes.py (not KWOK)",
            "machine": f"{os.cpu_count()} CPUs, shared; everything (API server, etcd, "
                       "controller-manager, kai, simulated nodes) on it",
            "service_resources": {"kai run + kai scheduler": {"limits": {}, "requests": {}}},
            "kai_runs": [{k: r.get(k) for k in ("scenario", "shape", "secs", "wall_s", "load",
                                                 "cpu_s", "measured_cpu_s", "timeline", "notes",
                                                 "error", "extra")}
                         for r in results],
        },
        "results": {"status": "success" if all(t["status"] == "success" for t in tests)
                    else "failure", "tests": tests},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", action="append", default=[], choices=ORDER)
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--smoke", action="store_true",
                    help="every scenario on 10 nodes with small shapes; checks success only")
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--gpus-per-node", type=int, default=8)
    ap.add_argument("--node-override", action="append", default=[],
                    help="SCENARIO=NODES: another node count for one scenario")
    ap.add_argument("--pods-per-distributed-job", type=int, default=10)
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--topology-levels", default="4,8,8", help="zones,blocks,racks")
    ap.add_argument("--topology-nodes-per-domain", type=int, default=2)
    ap.add_argument("--nccl-jobs-per-size", type=int, default=90)
    ap.add_argument("--nccl-runtime", default="20s-40s")
    ap.add_argument("--nccl-timeout", type=float, default=4 * 3600)
    ap.add_argument("--flow-timeout", type=float, default=90 * 60)
    ap.add_argument("--kai", default=str(REPO / "build" / "kai"))
    ap.add_argument("--kai-copy-dir", default="/tmp/scale-kai")
    ap.add_argument("--dir", default=f"/tmp/scale-kai/box-{os.getuid()}")
    ap.add_argument("--logs", default="/tmp/scale-kai/logs")
    ap.add_argument("--kcm-args", default="--kube-api-qps=200 --kube-api-burst=400",
                    help="controller-manager flags (default raises its API QPS from 20)")
    ap.add_argument("--scheduler-args", default="", help="more `kai scheduler` flags")
    ap.add_argument("--binder-args", default="--max-concurrent-reconciles 100 "
                    "--metrics-bind-address= --health-probe-bind-address=",
                    help="`kai binder` flags (default: KAI's scale setup, 100 binds at once)")
    ap.add_argument("--podgrouper-args", default="--max-concurrent-reconciles 50 "
                    "--metrics-bind-address= --health-probe-bind-address=",
                    help="`kai podgrouper` flags (default: KAI's scale setup, 50 at once)")
    ap.add_argument("--no-admission", action="store_true",
                    help="no kai admission webhooks in the box (a comparison: KAI's suite runs "
                    "with KAI's webhooks)")
    ap.add_argument("--lease-interval", type=int, default=60)
    ap.add_argument("--simnodes-workers", type=int, default=4)
    ap.add_argument("--writers", type=int, default=8, help="threads creating Jobs")
    ap.add_argument("--poll", type=float, default=3.0,
                    help="seconds between two checks (the times come from the pods' PodScheduled, not from when a check saw them)")
    ap.add_argument("--progress-every", type=float, default=15.0)
    ap.add_argument("--out", default="")
    ap.add_argument("--table", default="")
    args = ap.parse_args(argv)
    if args.smoke:
        args.nodes = 10
        args.pods_per_distributed_job = 5
        args.samples = 2
        args.topology_levels = "2,2,1"
        args.topology_nodes_per_domain = 2
        args.nccl_jobs_per_size = 1
        args.nccl_runtime = "2s-4s"
        args.flow_timeout = 300
        args.nccl_timeout = 300
        args.progress_every = 30
    names = args.scenario or (ORDER if (args.all or args.smoke) else [])
    if not names:
        ap.error("give --scenario NAME, --all or --smoke")
    args.node_override = dict((k, int(v)) for k, v in (o.split("=") for o in args.node_override))
    # a copy of the binary, so that a rebuild of build/kai does not change it mid-run
    copy_dir = pathlib.Path(args.kai_copy_dir)
    copy_dir.mkdir(parents=True, exist_ok=True)
    args.kai_copy = str(copy_dir / "kai")
    shutil.copy2(args.kai, args.kai_copy)
    logs_root = pathlib.Path(args.logs)
    say(f"load {os.getloadavg()}; scenarios {', '.join(names)}")
    t0 = time.time()
    results = []
    for name in names:
        results.append(run_one(args, name, logs_root))
        if args.out:
            write_json(results, args, pathlib.Path(args.out))
    say(f"suite done in {time.time() - t0:.0f}s; load {os.getloadavg()}")
    tab = table(results, args)
    print(tab)
    if args.table:
        pathlib.Path(args.table).write_text(tab + "\n")
    if args.out:
        write_json(results, args, pathlib.Path(args.out))
    failed = [r["scenario"] for r in results if not r.get("ok") or "error" in r]
    if failed:
        say(f"FAILED: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
