#!/usr/bin/env python3
"""`kai podgrouper` on a real kube-apiserver: workloads of several kinds (a batch Job, a bare pod,
a PyTorchJob, a JobSet, a Grove PodCliqueSet and a custom kind a Karta describes, through
stand-in CRDs, from the fixtures of tests/podgrouper/ and made here) with the pods their controllers would make (no controller runs here: the test makes them,
owner references and all); the pod grouper gives each pod its PodGroup, as KAI's does, and
`kai scheduler --once` then schedules the gangs whole. A pod owned by a kind no API serves is
reported and left alone, and the pod grouper keeps running.

    python3 tests/e2e/podgrouper_test.py        (KAI_BIN: the kai binary; default build/kai)
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kube_server  # noqa: E402
import scenario_loader as sl  # noqa: E402

REPO = kube_server.REPO_ROOT
KAI_BIN = pathlib.Path(os.environ.get("KAI_BIN", REPO / "build" / "kai"))
FIXTURES = REPO / "tests" / "podgrouper"
PG_PATH = "/apis/scheduling.run.ai/v2alpha2/namespaces/{ns}/podgroups"

SERVER: kube_server.Server | None = None
CLIENT: sl.Client | None = None
TMP: tempfile.TemporaryDirectory | None = None
GROUPER: subprocess.Popen | None = None
LOG: pathlib.Path | None = None


def wait_for(what: str, fn, timeout: float = 30.0):
    return kube_server.wait_until(what, fn, timeout, (OSError, sl.ApiError), LOG)


def create(obj: dict) -> dict:
    """Creates any object through kubectl; returns it as the server has it (its uid)."""
    for k in ("uid", "resourceVersion", "creationTimestamp"):
        obj["metadata"].pop(k, None)
    obj.pop("status", None)
    out = SERVER.kubectl("create", "-f", "-", "-o", "json", input=json.dumps(obj))
    return json.loads(out.stdout)


def load_with_owners(objs: list[dict]) -> dict[tuple[str, str], dict]:
    """Creates objects in order, pointing each owner reference at the owner's new uid."""
    made: dict[tuple[str, str], dict] = {}
    for o in objs:
        for ref in o["metadata"].get("ownerReferences") or []:
            owner = made.get((ref["kind"], ref["name"]))
            if owner is not None:
                ref["uid"] = owner["metadata"]["uid"]
        got = create(o)
        made[(got["kind"], got["metadata"]["name"])] = got
    return made


def fixture(file: str, keep) -> list[dict]:
    return [o for o in sl.read_objects(FIXTURES / file) if keep(o)]


def owned_by(o: dict, names: set[str]) -> bool:
    return o["metadata"]["name"] in names or any(
        r["name"] in names for r in o["metadata"].get("ownerReferences") or [])


def setUpModule():
    global SERVER, CLIENT, TMP, GROUPER, LOG
    kube_server.require_apiserver()
    if not KAI_BIN.is_file():
        raise unittest.SkipTest(f"{KAI_BIN} not built")
    TMP = tempfile.TemporaryDirectory(prefix="kai-podgrouper-e2e-")
    SERVER = kube_server.Server.start()
    try:
        CLIENT = sl.Client(SERVER.kubeconfig)
        sl.Loader(CLIENT).ensure_crds()
        sl.Loader(CLIENT, crds_dir=pathlib.Path(__file__).parent / "workload_crds").ensure_crds()
        for ns in ("research", "pg"):
            CLIENT.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                               "metadata": {"name": ns}})
        LOG = pathlib.Path(TMP.name) / "podgrouper.log"
        with LOG.open("w") as log:
            GROUPER = subprocess.Popen([str(KAI_BIN), "podgrouper", "--kubeconfig",
                                        SERVER.kubeconfig], stdout=subprocess.DEVNULL, stderr=log)
    except BaseException:
        tearDownModule()
        raise


def tearDownModule():
    kube_server.stop_process(GROUPER)
    if os.environ.get("KAI_E2E_VERBOSE") and LOG is not None and LOG.exists():
        sys.stderr.write(LOG.read_text()[-4000:])
    kube_server.release(CLIENT, SERVER, TMP)


def pod_group_of(ns: str, pod: str) -> dict:
    """The PodGroup the pod's pod-group-name annotation names, once both exist."""
    def find():
        p = CLIENT.get(f"/api/v1/namespaces/{ns}/pods/{pod}")
        name = (p["metadata"].get("annotations") or {}).get("pod-group-name")
        return name and CLIENT.get(PG_PATH.format(ns=ns) + "/" + name)
    return wait_for(f"the PodGroup of {ns}/{pod}", find)


def gpu_pod(name: str, owner: dict | None = None, ns: str = "pg") -> dict:
    md = {"name": name, "namespace": ns}
    if owner:
        md["ownerReferences"] = [{"apiVersion": owner["apiVersion"], "kind": owner["kind"],
                                  "name": owner["metadata"]["name"],
                                  "uid": owner["metadata"]["uid"], "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md,
            "spec": {"schedulerName": "kai-scheduler", "restartPolicy": "Never",
                     "containers": [{"name": "c", "image": "x",
                                     "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}


def make_queue_and_node(queue: str, node: str) -> None:
    """An unlimited queue and a ready node of 8 GPUs."""
    CLIENT.post("/apis/scheduling.run.ai/v2/queues", {
        "apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": queue},
        "spec": {"resources": {r: {"quota": -1, "limit": -1, "overQuotaWeight": 1}
                               for r in ("gpu", "cpu", "memory")}}})
    alloc = {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": "8"}
    CLIENT.post("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node},
                                  "status": {"capacity": alloc, "allocatable": alloc,
                                             "conditions": [{"type": "Ready", "status": "True"}]}})


class Workloads(unittest.TestCase):
    def test_pytorchjob_gang_with_master_and_worker_sub_groups(self):
        made = load_with_owners(fixture("pytorch.yaml", lambda o: owned_by(o, {"bert"})))
        job_uid = made[("PyTorchJob", "bert")]["metadata"]["uid"]
        pg = pod_group_of("research", "bert-worker-2")
        self.assertEqual(pg["metadata"]["name"], f"pg-bert-{job_uid}")
        self.assertEqual(pg["spec"]["queue"], "research")
        self.assertEqual(pg["spec"]["priorityClassName"], "train")
        subs = {s["name"]: s["minMember"] for s in pg["spec"]["subGroups"]}
        self.assertEqual(subs, {"master": 1, "worker": 3})
        self.assertEqual(pg["metadata"]["ownerReferences"][0]["uid"], job_uid)
        master = CLIENT.get("/api/v1/namespaces/research/pods/bert-master-0")
        self.assertEqual(master["metadata"]["labels"].get("kai.scheduler/subgroup-name"), "master")

    def test_gangs_of_a_pytorchjob_and_a_jobset_are_scheduled_whole(self):
        ns = "gangs"
        CLIENT.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                           "metadata": {"name": ns}})
        make_queue_and_node("gang-q", "gang-node")
        labels = {"kai.scheduler/queue": "gang-q"}
        template = {"spec": {"schedulerName": "kai-scheduler", "restartPolicy": "Never",
                             "containers": [{"name": "c", "image": "x"}]}}
        ddp = create({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
                      "metadata": {"name": "ddp", "namespace": ns, "labels": labels},
                      "spec": {"pytorchReplicaSpecs": {
                          "Master": {"replicas": 1, "template": template},
                          "Worker": {"replicas": 2, "template": template}}}})
        pods = []
        for role, i in (("master", 0), ("worker", 0), ("worker", 1)):
            p = gpu_pod(f"ddp-{role}-{i}", ddp, ns)
            p["metadata"]["labels"] = {"training.kubeflow.org/job-name": "ddp",
                                       "training.kubeflow.org/replica-type": role,
                                       "training.kubeflow.org/replica-index": str(i)}
            pods.append(create(p)["metadata"]["name"])
        sweep = create({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                        "metadata": {"name": "sweep", "namespace": ns, "labels": labels},
                        "spec": {"replicatedJobs": [{"name": "workers", "replicas": 1, "template": {
                            "spec": {"parallelism": 2, "completions": 2, "template": template}}}]}})
        js = {"jobset.sigs.k8s.io/jobset-name": "sweep",
              "jobset.sigs.k8s.io/replicatedjob-name": "workers",
              "jobset.sigs.k8s.io/job-index": "0"}
        job = create({"apiVersion": "batch/v1", "kind": "Job",
                      "metadata": {"name": "sweep-workers-0", "namespace": ns, "labels": js,
                                   "ownerReferences": gpu_pod("x", sweep)["metadata"]["ownerReferences"]},
                      "spec": {"parallelism": 2, "completions": 2, "template": template}})
        for i in range(2):
            p = gpu_pod(f"sweep-workers-0-{i}", job, ns)
            p["metadata"]["labels"] = dict(js, **{"jobset.sigs.k8s.io/replicatedjob-replicas": "1",
                                                  "batch.kubernetes.io/job-name": "sweep-workers-0"})
            pods.append(create(p)["metadata"]["name"])
        ddp_pg = pod_group_of(ns, "ddp-worker-1")
        self.assertEqual(ddp_pg["metadata"]["name"], f"pg-ddp-{ddp['metadata']['uid']}")
        self.assertEqual(ddp_pg["spec"]["queue"], "gang-q")
        self.assertEqual({s["name"]: s["minMember"] for s in ddp_pg["spec"]["subGroups"]},
                         {"master": 1, "worker": 2})
        sweep_pg = pod_group_of(ns, "sweep-workers-0-1")
        self.assertEqual(sweep_pg["metadata"]["name"], f"pg-sweep-{sweep['metadata']['uid']}")
        leaves = {s["name"]: s.get("minMember") for s in sweep_pg["spec"]["subGroups"]}
        self.assertEqual(leaves.get("workers-replica-0"), 2, sweep_pg["spec"])
        for name in pods:
            pod_group_of(ns, name)  # every pod annotated
        out = subprocess.run([str(KAI_BIN), "scheduler", "--kubeconfig", SERVER.kubeconfig,
                              "--once", "-o", "json"], capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr[-2000:])
        brs = CLIENT.get(f"/apis/scheduling.run.ai/v1alpha2/namespaces/{ns}/bindrequests")["items"]
        self.assertEqual(sorted(b["spec"]["podName"] for b in brs), sorted(pods))

    def test_jobset_sub_group_per_replica(self):
        made = load_with_owners(fixture("jobset.yaml", lambda o: owned_by(
            o, {"trainer", "trainer-workers-0", "trainer-workers-1"}) and o["metadata"].get(
            "namespace") == "research"))
        pods = [n for (k, n) in made if k == "Pod"]
        self.assertTrue(pods, "the fixture has trainer pods")
        pg = pod_group_of("research", pods[0])
        uid = made[("JobSet", "trainer")]["metadata"]["uid"]
        self.assertEqual(pg["metadata"]["name"], f"pg-trainer-{uid}")
        names = {s["name"] for s in pg["spec"]["subGroups"]}
        self.assertIn("workers", names)

    def test_a_job_and_a_bare_pod_are_grouped_and_then_scheduled(self):
        make_queue_and_node("team", "pg-node")
        job = create({"apiVersion": "batch/v1", "kind": "Job",
                      "metadata": {"name": "train", "namespace": "pg",
                                   "labels": {"kai.scheduler/queue": "team"}},
                      "spec": {"parallelism": 2, "template": {"spec": {
                          "restartPolicy": "Never", "schedulerName": "kai-scheduler",
                          "containers": [{"name": "c", "image": "x"}]}}}})
        for i in range(2):
            create(gpu_pod(f"train-{i}", job))
        bare = create(dict(gpu_pod("solo"), metadata={"name": "solo", "namespace": "pg",
                                                       "labels": {"kai.scheduler/queue": "team"}}))
        pg = pod_group_of("pg", "train-0")
        self.assertEqual(pg["metadata"]["name"], f"pg-train-{job['metadata']['uid']}")
        self.assertEqual(pg["spec"]["queue"], "team")
        self.assertEqual(pod_group_of("pg", "train-1")["metadata"]["name"], pg["metadata"]["name"])
        solo = pod_group_of("pg", "solo")
        self.assertEqual(solo["metadata"]["name"], f"pg-solo-{bare['metadata']['uid']}")
        out = subprocess.run([str(KAI_BIN), "scheduler", "--kubeconfig", SERVER.kubeconfig,
                              "--once", "-o", "json"], capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr[-2000:])
        brs = CLIENT.get("/apis/scheduling.run.ai/v1alpha2/namespaces/pg/bindrequests")["items"]
        self.assertEqual(sorted(b["spec"]["podName"] for b in brs), ["solo", "train-0", "train-1"])

    def test_grove_podcliqueset_is_grouped_by_its_podgang(self):
        CLIENT.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                           "metadata": {"name": "grove"}})
        labels = {"kai.scheduler/queue": "team"}
        pcs = create({"apiVersion": "grove.io/v1alpha1", "kind": "PodCliqueSet",
                      "metadata": {"name": "serve", "namespace": "grove",
                                   "labels": dict(labels, tier="web")},
                      "spec": {"replicas": 1}})
        refs = [{"namespace": "grove", "name": n} for n in ("serve-0-prefill-0", "serve-0-decode-0")]
        gang = create({"apiVersion": "scheduler.grove.io/v1alpha1", "kind": "PodGang",
                       "metadata": {"name": "serve-0", "namespace": "grove",
                                    "annotations": {"grove.io/topology-name": "dc"}},
                       "spec": {"priorityClassName": "inference",
                                "topologyConstraintGroupConfigs": [
                                    {"name": "both", "podGroupNames": ["serve-0-prefill",
                                                                       "serve-0-decode"],
                                     "topologyConstraint": {"packConstraint": {"required": "rack"}}}],
                                "podgroups": [
                                    {"name": "serve-0-prefill", "minReplicas": 1,
                                     "podReferences": refs[:1]},
                                    {"name": "serve-0-decode", "minReplicas": 1,
                                     "podReferences": refs[1:]}]}})
        for role in ("prefill", "decode"):
            clique = create({"apiVersion": "grove.io/v1alpha1", "kind": "PodClique",
                             "metadata": {"name": f"serve-0-{role}", "namespace": "grove",
                                          "ownerReferences": gpu_pod("x", pcs)["metadata"][
                                              "ownerReferences"]},
                             "spec": {"replicas": 1}})
            p = gpu_pod(f"serve-0-{role}-0", clique, "grove")
            p["metadata"]["labels"] = dict(labels, **{"grove.io/podgang": "serve-0"})
            create(p)
        pg = pod_group_of("grove", "serve-0-decode-0")
        self.assertEqual(pg["metadata"]["name"], f"pg-serve-0-{gang['metadata']['uid']}")
        self.assertEqual(pg["metadata"]["ownerReferences"][0]["kind"], "PodGang")
        self.assertEqual(pg["spec"]["queue"], "team")
        self.assertEqual(pg["spec"]["priorityClassName"], "inference")
        self.assertEqual(pg["spec"]["minMember"], 2)
        self.assertEqual(pg["metadata"]["labels"].get("tier"), "web")  # from the PodCliqueSet
        subs = {s["name"]: s for s in pg["spec"]["subGroups"]}
        self.assertEqual(subs["both"].get("minSubGroup"), 2, subs)
        self.assertEqual(subs["both"]["topologyConstraint"].get("requiredTopologyLevel"), "rack")
        self.assertEqual(subs["serve-0-prefill"].get("parent"), "both")
        self.assertEqual(subs["serve-0-decode"].get("minMember"), 1)
        self.assertEqual(pod_group_of("grove", "serve-0-prefill-0")["metadata"]["name"],
                         pg["metadata"]["name"])
        for role in ("prefill", "decode"):
            got = wait_for(f"the SubGroup label of serve-0-{role}-0", lambda: (CLIENT.get(
                f"/api/v1/namespaces/grove/pods/serve-0-{role}-0")["metadata"].get("labels") or {}).get(
                "kai.scheduler/subgroup-name"))
            self.assertEqual(got, f"serve-0-{role}")

    def test_a_custom_kind_is_grouped_by_its_karta_and_scheduled_whole(self):
        make_queue_and_node("karta-q", "karta-node")
        CLIENT.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                           "metadata": {"name": "karta"}})
        role_key = '.metadata.labels["e2e.example.com/role"]'
        components = [{"name": role, "ownerRef": "customjob",
                       "specDefinition": {"podTemplateSpecPath": f".spec.{role}.template"},
                       "scaleDefinition": {"replicasPath": f".spec.{role}.replicas"},
                       "podSelector": {"componentTypeSelector": {"keyPath": role_key,
                                                                 "value": role}}}
                      for role in ("coordinator", "worker")]
        create({"apiVersion": "run.ai/v1alpha1", "kind": "Karta",
                "metadata": {"name": "e2e-example-com-v1-customjob", "labels": {
                    "run.ai/karta-group": "e2e.example.com", "run.ai/karta-version": "v1",
                    "run.ai/karta-kind": "CustomJob"}},
                "spec": {"structureDefinition": {
                    "rootComponent": {"name": "customjob",
                                      "kind": {"group": "e2e.example.com", "version": "v1",
                                               "kind": "CustomJob"},
                                      "statusDefinition": {"statusMappings": {}}},
                    "childComponents": components},
                    "optimizationInstructions": {"gangScheduling": {"podGroup": {
                        "name": "customjob",
                        "subGroups": [{"componentName": "coordinator"},
                                      {"componentName": "worker"}]}}}}})
        # The pod grouper lists Kartas from the API server's watch cache: wait until it has it.
        wait_for("the Karta in the watch cache", lambda: CLIENT.get(
            "/apis/run.ai/v1alpha1/kartas?resourceVersion=0")["items"] or None)
        job = create({"apiVersion": "e2e.example.com/v1", "kind": "CustomJob",
                      "metadata": {"name": "cj", "namespace": "karta",
                                   "labels": {"kai.scheduler/queue": "karta-q"}},
                      "spec": {"coordinator": {"replicas": 1, "template": {"spec": {}}},
                               "worker": {"replicas": 2, "template": {"spec": {}}}}})
        pods = {"cj-coordinator-0": "coordinator", "cj-worker-0": "worker",
                "cj-worker-1": "worker"}
        for name, role in pods.items():
            p = gpu_pod(name, job, "karta")
            p["metadata"]["labels"] = {"e2e.example.com/role": role}
            create(p)
        uid = job["metadata"]["uid"]
        pg = pod_group_of("karta", "cj-worker-1")
        self.assertEqual(pg["metadata"]["name"], f"pg-{uid}-customjob")
        self.assertEqual(pg["metadata"]["ownerReferences"][0]["kind"], "CustomJob")
        self.assertEqual(pg["metadata"]["ownerReferences"][0]["uid"], uid)
        self.assertEqual(pg["spec"]["queue"], "karta-q")
        self.assertEqual(pg["spec"].get("minSubGroup"), 2)
        self.assertIsNone(pg["spec"].get("minMember"), pg["spec"])
        self.assertEqual({s["name"]: s.get("minMember") for s in pg["spec"]["subGroups"]},
                         {"coordinator": 1, "worker": 2})
        for name, role in pods.items():
            self.assertEqual(pod_group_of("karta", name)["metadata"]["name"], pg["metadata"]["name"])
            got = wait_for(f"the SubGroup label of {name}", lambda: (CLIENT.get(
                f"/api/v1/namespaces/karta/pods/{name}")["metadata"].get("labels") or {}).get(
                "kai.scheduler/subgroup-name"))
            self.assertEqual(got, role)
        out = subprocess.run([str(KAI_BIN), "scheduler", "--kubeconfig", SERVER.kubeconfig,
                              "--once", "-o", "json"], capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr[-2000:])
        brs = CLIENT.get("/apis/scheduling.run.ai/v1alpha2/namespaces/karta/bindrequests")["items"]
        self.assertEqual(sorted(b["spec"]["podName"] for b in brs), sorted(pods))

    def test_an_owner_no_api_serves_is_reported_and_left_alone(self):
        p = gpu_pod("widget-pod")
        p["metadata"]["ownerReferences"] = [{"apiVersion": "example.com/v1", "kind": "Widget",
                                             "name": "w", "uid": "0000", "controller": True}]
        create(p)
        wait_for("the missing kind reported", lambda: "Widget" in LOG.read_text())
        self.assertIsNone(GROUPER.poll(), "the pod grouper exited")
        got = CLIENT.get("/api/v1/namespaces/pg/pods/widget-pod")
        self.assertNotIn("pod-group-name", got["metadata"].get("annotations") or {})
        # KAI's PodGrouperWarning on the pod, once: the retries fail the same way.
        def warnings():
            events = CLIENT.get("/api/v1/namespaces/pg/events")["items"]
            return [e for e in events if e["involvedObject"]["name"] == "widget-pod"
                    and e["reason"] == "PodGrouperWarning"]
        found = wait_for("a PodGrouperWarning event", lambda: warnings() or None)
        self.assertEqual(found[0]["type"], "Warning")
        self.assertEqual(found[0]["involvedObject"]["uid"], got["metadata"]["uid"])
        self.assertIn("Widget", found[0]["message"])
        time.sleep(3)  # retries at 1 s, 2 s: the same failure, no new event
        self.assertEqual(len(warnings()), 1, [e["message"] for e in warnings()])


if __name__ == "__main__":
    unittest.main(verbosity=2)
