#!/usr/bin/env python3
"""Real controllers' workloads, end to end, on the cluster in a box (tools/cluster/cluster.py up):
a real kube-apiserver and kube-controller-manager, kai's installation, `kai run`, and 4 simulated
nodes of 8 GPUs (tools/simnodes/simnodes.py) that run the pods kai binds.

- A batch Job (parallelism 2, completions 4) runs and completes; a Deployment and a StatefulSet
  get every replica Running and Ready; a CronJob's Job runs; a PyTorchJob, written as users
  write it, whose pods the test creates as its operator would, is grouped and scheduled whole.
- GPU sharing: two half-GPU pods (kai admission registered as a webhook) share one GPU held by
  the binder's reservation pod, which the simulated node gives a GPU id.
- Reclaim: a Job of an over-quota queue fills the cluster; a Job of a queue within its quota
  arrives; kai evicts the borrower's pods (DisruptionTarget set), the Job controller replaces
  them without counting a failure (its podFailurePolicy ignores DisruptionTarget), and both Jobs
  complete.
- Volumes and ports: a Job's claim on a local PersistentVolume (WaitForFirstConsumer) takes its
  pod to that volume's node and is bound there; the fifth pod of a Deployment on a host port
  waits, its reason naming the port, with one pod on each of the 4 nodes.
- All along, a checker lists the bound pods every 0.5 s: no node ever holds more GPUs in
  non-terminal pods than it has.

    python3 tests/e2e/workloads_test.py        (KAI_BIN: the kai binary; default build/kai)
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kube_server  # noqa: E402
from e2e_objects import queue  # noqa: E402
import scenario_loader as sl  # noqa: E402

REPO = kube_server.REPO_ROOT
KAI_BIN = pathlib.Path(os.environ.get("KAI_BIN", REPO / "build" / "kai"))
CLUSTER = REPO / "tools" / "cluster" / "cluster.py"
NODES, GPUS = 4, 8
NS = "work"
GPU = "nvidia.com/gpu"

TMP: pathlib.Path | None = None
STATE: pathlib.Path | None = None
CLIENT: sl.Client | None = None
CHECKER: "OverCommitChecker | None" = None
RECORDER: "DeletionRecorder | None" = None


def cluster(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(CLUSTER), *args, "--dir", str(STATE),
                           "--kube-tools", str(kube_server.TOOLS)],
                          capture_output=True, text=True, timeout=600)


def setUpModule():
    global TMP, STATE, CLIENT, CHECKER, RECORDER
    kube_server.require_controller_manager()
    if not KAI_BIN.is_file():
        raise unittest.SkipTest(f"{KAI_BIN} not built")
    TMP = pathlib.Path(tempfile.mkdtemp(prefix="kai-workloads-e2e-"))
    STATE = TMP / "cluster"
    try:
        up = cluster("up", "--kai", str(KAI_BIN), "--nodes", str(NODES), "--gpus-per-node",
                     str(GPUS), "--simnodes-args", "--default-runtime 5s --stats-interval 10")
        if up.returncode != 0:
            raise RuntimeError(f"cluster.py up failed (rc {up.returncode}):\n{up.stderr[-4000:]}")
        kubeconfig = next(line.split("=", 1)[1] for line in up.stdout.splitlines()
                          if line.startswith("export KUBECONFIG="))
        CLIENT = sl.Client(kubeconfig)
        sl.Loader(CLIENT, crds_dir=pathlib.Path(__file__).parent / "workload_crds").ensure_crds()
        CLIENT.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                           "metadata": {"name": NS}})
        for name, quota in (("team", 16), ("borrower", 0), ("owner", 16)):
            CLIENT.post("/apis/scheduling.run.ai/v2/queues", queue(name, None, quota))
        CHECKER = OverCommitChecker(kubeconfig)
        CHECKER.start()
        RECORDER = DeletionRecorder(kubeconfig)
        RECORDER.start()
    except BaseException:
        tearDownModule()
        raise


def tearDownModule():
    for t in (CHECKER, RECORDER):
        if t is not None:
            t.stop()
    if os.environ.get("KAI_E2E_VERBOSE") and STATE is not None:
        for name in ("kai-run", "simnodes"):
            log = STATE / f"{name}.log"
            if log.exists():
                sys.stderr.write(f"--- {name}\n{log.read_text()[-5000:]}\n")
    keep = bool(os.environ.get("KAI_E2E_KEEP"))
    if STATE is not None and STATE.exists():
        down = cluster("down", *(["--keep"] if keep else []))
        if down.returncode != 0:
            sys.stderr.write(f"cluster.py down failed:\n{down.stderr}")
    if keep and STATE is not None:
        sys.stderr.write(f"KAI_E2E_KEEP: logs kept in {STATE}\n")
    kube_server.release(CLIENT)
    if TMP is not None and not keep:
        shutil.rmtree(TMP, ignore_errors=True)


def wait_for(what: str, fn, timeout: float = 60.0):
    log = STATE / "kai-run.log" if STATE is not None else None
    return kube_server.wait_until(what, fn, timeout, (OSError, sl.ApiError), log=log, interval=0.3)


def over_committed(allocatable: dict[str, int], bound: list[dict]) -> tuple[int, list[str]]:
    """(GPUs held in the cluster, one line per node holding more than it has), counting the GPU
    requests of the bound pods that are not Succeeded or Failed (a pod being deleted holds its
    GPUs until its containers stop)."""
    used: dict[str, list[tuple[str, int]]] = {}
    for p in bound:
        if (p.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        gpus = sum(int((c.get("resources") or {}).get("requests", {}).get(GPU, "0"))
                   for c in p["spec"]["containers"])
        if gpus:
            used.setdefault(p["spec"]["nodeName"], []).append(
                (f"{p['metadata']['namespace']}/{p['metadata']['name']}", gpus))
    found = [f"{node}: {sum(g for _, g in held)} GPUs > {allocatable.get(node, 0)}: {held}"
             for node, held in used.items() if sum(g for _, g in held) > allocatable.get(node, 0)]
    return sum(g for held in used.values() for _, g in held), found


class OverCommitChecker(kube_server.Poller):
    """Every 0.5 s: the GPUs of the non-terminal pods bound to each node, against the node's
    allocatable. Every moment a node holds more is kept in `violations`."""

    def __init__(self, kubeconfig: str):
        super().__init__(0.5, (sl.ApiError, OSError))
        self.client = sl.Client(kubeconfig)
        self.allocatable: dict[str, int] = {}
        self.violations: list[str] = []
        self.polls = 0
        self.peak = 0  # the most GPUs in use in the whole cluster at one poll

    def step(self):
        if not self.allocatable:
            for n in self.client.get("/api/v1/nodes")["items"]:
                self.allocatable[n["metadata"]["name"]] = int(
                    n["status"]["allocatable"].get(GPU, "0"))
        pods = self.client.get("/api/v1/pods", query={"fieldSelector": "spec.nodeName!="})
        in_use, found = over_committed(self.allocatable, pods["items"])
        self.peak = max(self.peak, in_use)
        self.violations += [f"{time.strftime('%H:%M:%S')} {v}" for v in found]
        self.polls += 1

    def stop(self):
        self.stop_polling()
        self.client.close()


class DeletionRecorder(threading.Thread):
    """Watches the test namespace's pods; keeps each pod as it was when first seen being deleted
    (the kubelet's view: kai's DisruptionTarget condition is on it by then)."""

    def __init__(self, kubeconfig: str):
        super().__init__(daemon=True)
        self.client = sl.Client(kubeconfig)
        self.seen: dict[str, dict] = {}
        self.lock = threading.Lock()
        self.stopping = threading.Event()

    def run(self):
        path = f"/api/v1/namespaces/{NS}/pods"
        rv = ""
        while not self.stopping.is_set():
            try:
                rv = rv or self.client.get(path)["metadata"]["resourceVersion"]
                for ev in self.client.watch(path, {"resourceVersion": rv}, timeout=30):
                    p = ev.get("object") or {}
                    if ev.get("type") == "ERROR":
                        rv = ""  # 410: list again
                        break
                    rv = p.get("metadata", {}).get("resourceVersion", rv)
                    if ev.get("type") in ("MODIFIED", "DELETED") and \
                            p.get("metadata", {}).get("deletionTimestamp"):
                        with self.lock:
                            self.seen.setdefault(p["metadata"]["uid"], p)
                    if self.stopping.is_set():
                        return
            except (sl.ApiError, OSError, ValueError):
                time.sleep(0.2)

    def deleted(self) -> dict[str, dict]:
        with self.lock:
            return dict(self.seen)

    def stop(self):
        self.stopping.set()
        self.join(timeout=10)
        self.client.close()


# ---- workloads, as users write them ----


def template(name: str, runtime: str | None, gpus: int = 1, restart: str = "Never") -> dict:
    ann = {"simnodes.kai/runtime": runtime} if runtime else {}
    return {"metadata": {"labels": {"app": name}, "annotations": ann},
            "spec": {"schedulerName": "kai-scheduler", "restartPolicy": restart,
                     "containers": [{"name": "main", "image": "registry.example.com/train:1",
                                     "resources": {"requests": {"cpu": "1", "memory": "2Gi"},
                                                   "limits": {GPU: str(gpus)}}}]}}


def meta(name: str, q: str) -> dict:
    return {"name": name, "namespace": NS, "labels": {"kai.scheduler/queue": q}}


def batch_job(name: str, q: str, parallelism: int, completions: int, runtime: str,
              ignore_disruptions: bool = False) -> dict:
    spec = {"parallelism": parallelism, "completions": completions, "backoffLimit": 0,
            "template": template(name, runtime)}
    if ignore_disruptions:
        spec["podFailurePolicy"] = {"rules": [{"action": "Ignore", "onPodConditions": [
            {"type": "DisruptionTarget"}]}]}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta(name, q), "spec": spec}


def post(group_version: str, plural: str, obj: dict) -> dict:
    base = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
    return CLIENT.post(f"{base}/namespaces/{NS}/{plural}", obj)


def get(group_version: str, plural: str, name: str) -> dict:
    base = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
    return CLIENT.get(f"{base}/namespaces/{NS}/{plural}/{name}")


def pods(selector: str) -> list[dict]:
    return CLIENT.get(f"/api/v1/namespaces/{NS}/pods",
                      query={"labelSelector": selector}).get("items") or []


def condition(obj: dict, kind: str) -> dict | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or []
                 if c["type"] == kind and c["status"] == "True"), None)


def job_done(name: str) -> dict | None:
    j = get("batch/v1", "jobs", name)
    if condition(j, "Failed"):
        raise AssertionError(f"Job {name} failed: {j['status']}")
    return j if condition(j, "Complete") else None


def sim_node(pod: dict) -> bool:
    return pod["spec"].get("nodeName", "").startswith("sim-node-")


class Workloads(unittest.TestCase):
    """In order: everyday workloads, reclaim, then the over-commit checker's verdict."""

    def test_0_the_checker_sees_an_over_committed_node(self):
        def bound(name: str, node: str, gpus: int, phase: str) -> dict:
            return {"metadata": {"namespace": NS, "name": name},
                    "spec": {"nodeName": node, "containers": [
                        {"resources": {"requests": {GPU: str(gpus)}}}]},
                    "status": {"phase": phase}}
        pods_ = [bound("a", "n1", 6, "Running"), bound("b", "n1", 2, "Pending"),
                 bound("done", "n1", 8, "Succeeded")]
        self.assertEqual(over_committed({"n1": 8}, pods_), (8, []))
        in_use, found = over_committed({"n1": 8}, pods_ + [bound("c", "n1", 1, "Running")])
        self.assertEqual(in_use, 9)
        self.assertEqual(len(found), 1, found)
        self.assertTrue(found[0].startswith("n1: 9 GPUs > 8"), found)

    def test_a_job_deployment_statefulset_cronjob_and_pytorchjob(self):
        """Everything at once in queue `team`; the CronJob's first run waits for the next
        minute."""
        self.addCleanup(self.remove_long_running)
        post("batch/v1", "jobs", batch_job("batch", "team", 2, 4, "3s"))
        post("apps/v1", "deployments", {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("serve", "team"),
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "serve"}},
                     "template": template("serve", None, restart="Always")}})
        post("v1", "services", {"apiVersion": "v1", "kind": "Service",
                                "metadata": {"name": "db", "namespace": NS},
                                "spec": {"clusterIP": "None", "selector": {"app": "db"},
                                         "ports": [{"port": 5432}]}})
        post("apps/v1", "statefulsets", {
            "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta("db", "team"),
            "spec": {"replicas": 2, "serviceName": "db",
                     "selector": {"matchLabels": {"app": "db"}},
                     "template": template("db", None, restart="Always")}})
        post("batch/v1", "cronjobs", {
            "apiVersion": "batch/v1", "kind": "CronJob", "metadata": meta("nightly", "team"),
            "spec": {"schedule": "* * * * *", "concurrencyPolicy": "Forbid",
                     # The queue label goes on the Jobs: KAI groups a CronJob's pods under their
                     # Job and reads the queue there, not on the CronJob.
                     "jobTemplate": {"metadata": {"labels": {"kai.scheduler/queue": "team"}},
                                     "spec": {"backoffLimit": 0,
                                              "template": template("nightly", "2s")}}}})
        ddp_pods = self.pytorchjob()

        done = wait_for("Job batch complete", lambda: job_done("batch"), 60)
        self.assertEqual(done["status"].get("succeeded"), 4, done["status"])
        self.assertEqual(done["status"].get("failed", 0), 0, done["status"])
        ran = pods("job-name=batch")
        self.assertTrue(all(sim_node(p) and p["status"]["phase"] == "Succeeded" for p in ran),
                        [(p["metadata"]["name"], p["spec"].get("nodeName")) for p in ran])

        dep = wait_for("Deployment serve available", lambda: (
            d := get("apps/v1", "deployments", "serve"))["status"].get("availableReplicas") == 2
            and d, 60)
        self.assertEqual(dep["status"].get("readyReplicas"), 2)
        sts = wait_for("StatefulSet db ready", lambda: (s := get(
            "apps/v1", "statefulsets", "db"))["status"].get("readyReplicas") == 2 and s, 60)
        self.assertEqual(sorted(p["metadata"]["name"] for p in pods("app=db")), ["db-0", "db-1"])
        for p in pods("app in (serve,db)"):
            self.assertEqual(p["status"]["phase"], "Running", p["metadata"]["name"])
            self.assertTrue(condition(p, "Ready"), p["metadata"]["name"])
            self.assertTrue(sim_node(p) and p["status"].get("podIP"), p["metadata"]["name"])
        # The pod grouper took the queue from the owners' labels.
        pgs = CLIENT.get(f"/apis/scheduling.run.ai/v2alpha2/namespaces/{NS}/podgroups")["items"]
        self.assertTrue(pgs and all(pg["spec"]["queue"] == "team" for pg in pgs),
                        [(pg["metadata"]["name"], pg["spec"]["queue"]) for pg in pgs])
        # KAI v0.18: the Deployment's replicas share one PodGroup, owned by the Deployment.
        serve_groups = {p["metadata"].get("annotations", {}).get("pod-group-name")
                        for p in pods("app=serve")}
        self.assertEqual(len(serve_groups), 1, serve_groups)
        serve_pg = [pg for pg in pgs if pg["metadata"]["name"] in serve_groups]
        self.assertEqual([o["kind"] for o in serve_pg[0]["metadata"]["ownerReferences"]],
                         ["Deployment"], serve_pg)
        self.assertEqual(sts["status"].get("currentReplicas"), 2)

        def ddp_running():
            got = [CLIENT.get(f"/api/v1/namespaces/{NS}/pods/{n}") for n in ddp_pods]
            return all((p.get("status") or {}).get("phase") in ("Running", "Succeeded")
                       for p in got) and got
        ddp = wait_for("the PyTorchJob's pods running", ddp_running, 60)
        groups = {(p["metadata"].get("annotations") or {}).get("pod-group-name") for p in ddp}
        self.assertEqual(len(groups), 1, groups)
        pg = CLIENT.get(f"/apis/scheduling.run.ai/v2alpha2/namespaces/{NS}/podgroups/"
                        f"{groups.pop()}")
        self.assertEqual(pg["spec"]["minMember"], 3, pg["spec"])

        def cron_job_done():
            owned = [j for j in CLIENT.get(f"/apis/batch/v1/namespaces/{NS}/jobs")["items"]
                     if any(r["kind"] == "CronJob"
                            for r in j["metadata"].get("ownerReferences") or [])]
            return next((j for j in owned if condition(j, "Complete")), None)
        cj = wait_for("the CronJob's Job complete", cron_job_done, 90)
        self.assertEqual(cj["status"].get("succeeded"), 1, cj["status"])

    @staticmethod
    def remove_long_running() -> None:
        """Makes room for the reclaim test: the CronJob, Deployment and StatefulSet go, their
        pods deleted by the garbage collector and confirmed by the simulated kubelets."""
        for path in (f"/apis/batch/v1/namespaces/{NS}/cronjobs/nightly",
                     f"/apis/apps/v1/namespaces/{NS}/deployments/serve",
                     f"/apis/apps/v1/namespaces/{NS}/statefulsets/db"):
            try:
                CLIENT.delete(path, query={"propagationPolicy": "Background"})
            except sl.ApiError as e:
                if e.status != 404:
                    raise
        wait_for("the Deployment's, StatefulSet's and CronJob's pods gone", lambda: not [
            p for p in pods("app in (serve,db,nightly)")
            if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")], 60)

    def pytorchjob(self) -> list[str]:
        """A PyTorchJob as users write it, and the pods its operator would make (none runs)."""
        job = post("kubeflow.org/v1", "pytorchjobs", {
            "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": meta("ddp", "team"),
            "spec": {"pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "restartPolicy": "Never",
                           "template": template("ddp", "5s")},
                "Worker": {"replicas": 2, "restartPolicy": "Never",
                           "template": template("ddp", "5s")}}}})
        owner = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": "ddp",
                 "uid": job["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
        names = []
        for role, i in (("master", 0), ("worker", 0), ("worker", 1)):
            p = template("ddp", "5s")
            p["metadata"].update(name=f"ddp-{role}-{i}", namespace=NS, ownerReferences=[owner])
            p["metadata"]["labels"].update({"training.kubeflow.org/job-name": "ddp",
                                            "training.kubeflow.org/replica-type": role,
                                            "training.kubeflow.org/replica-index": str(i)})
            post("v1", "pods", dict(p, apiVersion="v1", kind="Pod"))
            names.append(p["metadata"]["name"])
        return names

    def test_b_reclaimed_pods_are_replaced_and_both_jobs_complete(self):
        """`borrower` (quota 0) fills all 32 GPUs; `owner` (quota 16) then asks for a gang of
        16 (kai.scheduler/batch-min-member), reclaimed for in one go.

        Kubernetes 1.28's Job controller counts an ignored failure in its pod-failure backoff
        (10 s doubling per failure since the Job's last success), so the replacements come once
        the borrower's first pods succeed: its runtime (15 s) outlasts the reclaim."""
        post("batch/v1", "jobs", batch_job("borrow", "borrower", 32, 32, "15s",
                                           ignore_disruptions=True))
        wait_for("the borrower holding every GPU", lambda: sum(
            1 for p in pods("job-name=borrow")
            if (p.get("status") or {}).get("phase") == "Running") == NODES * GPUS, 60)
        first = {p["metadata"]["uid"] for p in pods("job-name=borrow")}
        claim = batch_job("claim", "owner", 16, 16, "5s")
        claim["metadata"]["annotations"] = {"kai.scheduler/batch-min-member": "16"}
        post("batch/v1", "jobs", claim)

        done = wait_for("Job claim complete", lambda: job_done("claim"), 60)
        self.assertEqual(done["status"].get("succeeded"), 16, done["status"])
        evicted = {uid: p for uid, p in RECORDER.deleted().items() if uid in first}
        self.assertEqual(len(evicted), 16, "kai reclaimed the borrower's over-quota half")
        for p in evicted.values():
            c = condition(p, "DisruptionTarget")
            self.assertTrue(c and c["reason"] == "PreemptionByScheduler",
                            (p["metadata"]["name"], p["status"].get("conditions")))

        done = wait_for("Job borrow complete", lambda: job_done("borrow"), 90)
        self.assertEqual(done["status"].get("succeeded"), 32, done["status"])
        self.assertEqual(done["status"].get("failed", 0), 0, done["status"])
        replacements = [p for p in pods("job-name=borrow") if p["metadata"]["uid"] not in first]
        self.assertEqual(len(replacements), 16, "one replacement per evicted pod")
        self.assertTrue(all(p["status"]["phase"] == "Succeeded" and sim_node(p)
                            for p in replacements))

    def test_c_gpu_sharing_through_a_reservation_pod(self):
        """Two half-GPU pods (through kai admission) share one GPU: the binder's reservation pod
        gets its GPU id from the simulated node; it goes once both pods are deleted."""
        for name in ("half-a", "half-b"):
            p = template("half", "forever")
            p["metadata"].update(name=name, namespace=NS, labels={"kai.scheduler/queue": "team"})
            p["metadata"]["annotations"]["gpu-fraction"] = "0.5"
            del p["spec"]["containers"][0]["resources"]["limits"]
            post("v1", "pods", dict(p, apiVersion="v1", kind="Pod"))
        running = wait_for("both half-GPU pods running", lambda: (r := [
            CLIENT.get(f"/api/v1/namespaces/{NS}/pods/{n}") for n in ("half-a", "half-b")]) and all(
            (p.get("status") or {}).get("phase") == "Running" for p in r) and r, 60)
        groups = {p["metadata"]["labels"].get("runai-gpu-group") for p in running}
        self.assertEqual(len(groups), 1, groups)
        self.assertEqual(len({p["spec"]["nodeName"] for p in running}), 1)
        holders = CLIENT.get("/api/v1/namespaces/kai-resource-reservation/pods")["items"]
        self.assertEqual(len(holders), 1, [h["metadata"]["name"] for h in holders])
        gpu = holders[0]["metadata"]["annotations"].get("run.ai/reserve_for_gpu_index", "")
        self.assertTrue(gpu.startswith("GPU-"), holders[0]["metadata"])
        self.assertEqual(holders[0]["spec"]["nodeName"], running[0]["spec"]["nodeName"])
        for name in ("half-a", "half-b"):
            CLIENT.delete(f"/api/v1/namespaces/{NS}/pods/{name}")
        wait_for("the reservation pod released", lambda: not CLIENT.get(
            "/api/v1/namespaces/kai-resource-reservation/pods")["items"], 60)

    def test_d_local_volumes_and_host_ports(self):
        """A Job's pod mounting a WaitForFirstConsumer claim goes to the one node its free
        local PersistentVolume is on; the binder gives the volume to the claim (claimRef) and the
        real volume controller binds them. A Deployment of 5 pods on host port 9000 gets 4
        nodes; the fifth waits with a reason naming the port."""
        CLIENT.post("/apis/storage.k8s.io/v1/storageclasses", {
            "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": "local-disks"}, "provisioner": "kubernetes.io/no-provisioner",
            "volumeBindingMode": "WaitForFirstConsumer"})
        target = f"sim-node-{NODES - 2:03d}"
        for name, node, size in (("disk-small", "sim-node-000", "1Gi"),
                                 ("disk-big", target, "20Gi")):
            CLIENT.post("/api/v1/persistentvolumes", {
                "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
                "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"],
                         "storageClassName": "local-disks",
                         "persistentVolumeReclaimPolicy": "Retain",
                         "local": {"path": "/mnt/disks/" + name},
                         "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                             {"key": "kubernetes.io/hostname", "operator": "In",
                              "values": [node]}]}]}}}})
        post("v1", "persistentvolumeclaims", {
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "scratch", "namespace": NS},
            "spec": {"storageClassName": "local-disks", "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "5Gi"}}}})
        job = batch_job("uses-disk", "team", 1, 1, "2s")
        job["spec"]["template"]["spec"]["volumes"] = [
            {"name": "data", "persistentVolumeClaim": {"claimName": "scratch"}}]
        post("batch/v1", "jobs", job)
        wait_for("Job uses-disk complete", lambda: job_done("uses-disk"), 60)
        ran = pods("job-name=uses-disk")
        self.assertEqual([p["spec"]["nodeName"] for p in ran], [target])
        claim = wait_for("the claim bound", lambda: (c := get(
            "v1", "persistentvolumeclaims", "scratch"))["status"].get("phase") == "Bound" and c, 30)
        self.assertEqual(claim["spec"]["volumeName"], "disk-big")

        web = template("web", None, gpus=0, restart="Always")
        web["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "100m"}}
        web["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 9000}]
        post("apps/v1", "deployments", {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("web", "team"),
            "spec": {"replicas": NODES + 1, "selector": {"matchLabels": {"app": "web"}},
                     "template": web}})
        running = wait_for("one web pod Running per node", lambda: (r := [
            p for p in pods("app=web") if (p.get("status") or {}).get("phase") == "Running"])
            and len(r) == NODES and r, 60)
        self.assertEqual(len({p["spec"]["nodeName"] for p in running}), NODES)

        def waiting_on_the_port():
            for p in pods("app=web"):
                for c in (p.get("status") or {}).get("conditions") or []:
                    if c["type"] == "PodScheduled" and c["status"] == "False" and \
                            "host port 9000/TCP" in c.get("message", ""):
                        return p
            return None
        left = wait_for("the fifth web pod waiting on port 9000", waiting_on_the_port, 30)
        self.assertFalse(left["spec"].get("nodeName"), left["metadata"]["name"])
        CLIENT.delete(f"/apis/apps/v1/namespaces/{NS}/deployments/web",
                      query={"propagationPolicy": "Background"})

    def test_zz_no_node_was_ever_over_committed(self):
        self.assertGreater(CHECKER.polls, 20, "the checker ran")
        self.assertGreaterEqual(CHECKER.peak, NODES * GPUS, "the cluster was full at a poll")
        self.assertEqual(CHECKER.violations, [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
