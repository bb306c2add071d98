#!/usr/bin/env python3
"""Writes tests/scenarios/dra/<case>/ (scenario.yaml, expected.yaml, meta.yaml) for the KAI DRA
integration tests, reproducing their harness (test_utils_builder.go getDRAObjects, the fake jobs,
nodes and queues) the way /work/shared/scenarios/FORMAT.md describes, and prints INDEX entries.

Usage: scripts/gen_dra_scenarios.py [--index]   (run from the repository root)
"""
import os
import sys

import yaml

NOW = "2025-01-01T12:00:00Z"
COMMIT = "HEAD of kai-scheduler/KAI-Scheduler mirror (2026-12)"
MAXINT = 9223372036854775807
ROOT = os.path.join("tests", "scenarios", "dra")
SHARD = yaml.safe_load(open(os.path.join(os.path.dirname(__file__), "dra_scenarios_shard.yaml")))


def minutes_before(n):
    return f"2025-01-01T{11 - (n - 1) // 60:02d}:{(60 - n) % 60:02d}:00Z" if n else NOW


def fix(name):
    return name.replace("_", "-")


def queue_doc(name, quota, weight, limit, parent="default", created=0):
    return {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
            "metadata": {"name": name, "creationTimestamp": f"2025-01-01T11:{created:02d}:00Z"},
            "spec": {"displayName": name, **({"parentQueue": parent} if parent else {}),
                     "resources": {"gpu": {"quota": quota, "overQuotaWeight": weight, "limit": limit},
                                   "cpu": {"quota": -1, "overQuotaWeight": 1, "limit": -1},
                                   "memory": {"quota": -1, "overQuotaWeight": 1, "limit": -1}}}}


def node_doc(name, cpu=None):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {
                "nvidia.com/gpu.count": "0", "nvidia.com/gpu.memory": "100",
                "node-role.kubernetes.io/mig-enabled": "false", "nvidia.com/mig.strategy": "",
                "kai.scheduler/type": name}},
            "status": {"capacity": {"cpu": "30000", "memory": "30G", "nvidia.com/gpu": "0",
                                    "pods": "110"},
                       "allocatable": {"cpu": str(cpu or 20000), "memory": "20G",
                                       "nvidia.com/gpu": "0", "pods": "110"}}}


def class_doc(name):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": name}, "spec": {}}


def slice_doc(s, pool_counts):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": s["name"]},
            "spec": {"driver": "nvidia.com/gpu",
                     "pool": {"name": s["node"], "resourceSliceCount": pool_counts[s["node"]]},
                     "nodeName": s["node"],
                     "devices": [{"name": str(i), "capacity": {"gpu": {"value": "1"}}}
                                 for i in range(s["count"])]}}


def claim_doc(c):
    doc = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
           "metadata": {"name": c["name"], "namespace": "test"},
           "spec": {"devices": {"requests": [{"name": "request", "exactly": {
               "deviceClassName": c["class"], "allocationMode": "ExactCount",
               "count": c["count"]}}]}}}
    if c.get("queue"):
        doc["metadata"]["labels"] = {"kai.scheduler/queue": c["queue"]}
    status = {}
    if c.get("allocated"):
        status["allocation"] = {"devices": {"results": [
            {"request": c.get("alloc_request", "request"), "driver": "nvidia.com/gpu",
             "pool": pool, "device": dev} for pool, dev in c["allocated"]]}}
    if c.get("reserved_for"):
        status["reservedFor"] = [{"resource": "pods", "name": fix(n), "uid": fix(n)}
                                 for n in c["reserved_for"]]
    if c.get("random_reserved"):
        status["reservedFor"] = [{"resource": "pods", "name": f"pod-{i}", "uid": f"uid-{i}"}
                                 for i in range(c["random_reserved"])]
    if status:
        doc["status"] = status
    return doc


def priority_name(p):
    return {50: "train", 75: "interactive-preemptible", 100: "build", 125: "inference"}.get(
        p, f"priority-{p}")


def job_docs(jobs):
    order = sorted(range(len(jobs)), key=lambda i: -jobs[i].get("priority", 0))
    created = {}
    for rank, i in enumerate(order):
        created[i] = minutes_before(len(jobs) - rank)
    docs = []
    for i, j in enumerate(jobs):
        name = fix(j["name"])
        running = any(t.get("state") == "Running" for t in j["tasks"])
        pg = {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
              "metadata": {"name": name, "namespace": "test", "creationTimestamp": created[i],
                           "labels": {"kai.scheduler/queue": j["queue"]}},
              "spec": {"queue": j["queue"], "priorityClassName": priority_name(j.get("priority", 0)),
                       "minMember": len(j["tasks"])}}
        if j.get("preemptibility"):
            pg["spec"]["preemptibility"] = j["preemptibility"]
        if running:
            pg["metadata"]["annotations"] = {"kai.scheduler/last-start-timestamp": "2025-01-01T11:59:00Z"}
        docs.append(pg)
        for k, t in enumerate(j["tasks"]):
            docs.append(pod_doc(name, k, j, t, created[i]))
    return docs


def pod_doc(job, k, j, t, created):
    name = f"{job}-{k}"
    cpu = str(j.get("cpu", 1))
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "test", "uid": name, "creationTimestamp": created,
                        "labels": {"kai.scheduler/queue": j["queue"], "job-name": name},
                        "annotations": {"pod-group-name": job}},
           "spec": {"schedulerName": "kai-scheduler", "containers": [{
               "name": "main", "image": "busybox",
               "resources": {"requests": {"cpu": cpu, "memory": "1G", "nvidia.com/gpu": "0"},
                             "limits": {"nvidia.com/gpu": "0"}}}]},
           "status": {"phase": "Pending"}}
    if t.get("claims"):
        pod["spec"]["resourceClaims"] = [{"name": c, "resourceClaimName": c} for c in t["claims"]]
    if t.get("affinity"):
        pod["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "kai.scheduler/type", "operator": "In", "values": t["affinity"]}]}]}}}
    if t.get("state") == "Running":
        pod["spec"]["nodeName"] = t["node"]
        pod["status"]["phase"] = "Running"
        pod["metadata"]["annotations"]["received-resource-type"] = "Regular"
    return pod


def scenario(case):
    docs = [SHARD]
    prios = sorted({j.get("priority", 0) for j in case["jobs"]})
    for p in prios:
        docs.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                     "metadata": {"name": priority_name(p)}, "value": p, "globalDefault": False,
                     "preemptionPolicy": "PreemptLowerPriority"})
    for n, cpu in case["nodes"].items():
        docs.append(node_doc(n, cpu))
    docs.append(queue_doc("default", -1, -1, -1, parent=None))
    for i, q in enumerate(case["queues"]):
        docs.append(queue_doc(q["name"], q.get("deserved", 0), q.get("weight", 0),
                              q.get("limit", -1), created=i))
    docs += job_docs(case["jobs"])
    docs += [class_doc(c) for c in case["classes"]]
    pool_counts = {}
    for s in case["slices"]:
        pool_counts[s["node"]] = pool_counts.get(s["node"], 0) + 1
    docs += [slice_doc(s, pool_counts) for s in case["slices"]]
    docs += [claim_doc(c) for c in case["claims"]]
    return docs


def expected(case):
    jobs = {}
    for name, e in case["expect"].items():
        jobs[fix(name)] = {"status": e[0], **({"node": e[1]} if len(e) > 1 else {})}
    b = case.get("bounds", (0, 0, 0))
    return {"cycles": {"until_match": case.get("until", 1), "after_match": case.get("after", 1),
                       "sleep_between_cycles": "0s"},
            "jobs": jobs,
            "cache_calls_per_cycle": {"binds": {"max": b[0]}, "evictions": {"max": b[1]},
                                      "pipelines": {"max": b[2]}}}


def meta(case):
    return {"source": {"repo": "kai-scheduler/KAI-Scheduler", "commit": COMMIT, "file": case["file"],
                       "test_function": case["func"], "case_index_in_file": case["index"]},
            "name": case["name"], "category": "integration-dra", "now": NOW,
            "features": ["dra"] + case.get("features", []),
            "actions": ["allocate", "consolidation", "reclaim", "preempt", "stalegangeviction"],
            "mode": "integration", "predicates_plugin_loaded": True, "plugins": "harness-default",
            "notes": case.get("notes", [])}


A = "pkg/scheduler/actions/integration_tests/allocate/allocate_dra_test.go"
S = "pkg/scheduler/actions/integration_tests/allocate/allocate_shared_dra_test.go"
O = "pkg/scheduler/actions/integration_tests/reclaim/reclaim_dra_overflow_test.go"
R = "pkg/scheduler/actions/integration_tests/reclaim/reclaim_gpu_dra_test.go"
Q1 = [{"name": "queue1", "deserved": 1}]
GPU = ["nvidia.com/gpu"]


def one_pod(claims=("claim-0",), **job):
    return [{"name": "pending_job0", "queue": "queue1", "priority": 50,
             "tasks": [{"claims": list(claims)}], **job}]


def claim(name="claim-0", count=1, queue="queue1", cls="nvidia.com/gpu", **kw):
    return {"name": name, "class": cls, "count": count, "queue": queue, **kw}


def slice_(node="node0", count=1):
    return {"name": f"{node}-gpu", "node": node, "count": count}


CASES = [
    dict(dir="allocate-no-claim", file=A, func="TestDRAAllocation", index=0,
         name="Simple pod with no resource claim",
         jobs=[{"name": "pending_job0", "queue": "queue1", "priority": 50, "tasks": [{}]}],
         nodes={"node0": None}, queues=Q1, classes=[], slices=[], claims=[],
         expect={"pending_job0": ("Running",)}, bounds=(1, 0, 0)),
    dict(dir="allocate-claim-with-queue-label", file=A, func="TestDRAAllocation", index=1,
         name="Simple pod with simple resource claim with correct queue label",
         jobs=one_pod(), nodes={"node0": None}, queues=Q1, classes=GPU, slices=[slice_()],
         claims=[claim()], expect={"pending_job0": ("Running", "node0")}, bounds=(1, 0, 0),
         notes=["Go runs 10 rounds (a cache race in its DRA manager); one suffices here."]),
    dict(dir="allocate-claim-too-many-devices", file=A, func="TestDRAAllocation", index=2,
         name="Simple pod with simple resource claim - requesting too many devices",
         jobs=one_pod(), nodes={"node0": None}, queues=Q1, classes=GPU, slices=[slice_()],
         claims=[claim(count=2)], expect={"pending_job0": ("Pending",)}, bounds=(1, 0, 0)),
    dict(dir="allocate-shared-claim-binds-one-node", file=A, func="TestDRAAllocation", index=3,
         name="2 pods requesting node-bound device, can't schedule on same node",
         jobs=[{"name": "pending_job0", "queue": "queue1", "priority": 50, "cpu": 1000,
                "tasks": [{"claims": ["claim-0"]}, {"claims": ["claim-0"]}]}],
         nodes={"node0": 1000, "node1": 1000}, queues=Q1, classes=GPU,
         slices=[slice_("node0"), slice_("node1")], claims=[claim()],
         expect={"pending_job0": ("Pending",)}, bounds=(1, 0, 0)),
    dict(dir="allocate-claims-on-separate-nodes", file=A, func="TestDRAAllocation", index=4,
         name="2 simple pods with simple resource claims, allocating on separate nodes",
         jobs=[{"name": "pending_job0", "queue": "queue1", "priority": 50,
                "tasks": [{"claims": ["claim-0"]}]},
               {"name": "pending_job1", "queue": "queue1", "priority": 50,
                "tasks": [{"claims": ["claim-1"]}]}],
         nodes={"node0": None, "node1": None}, queues=Q1, classes=GPU,
         slices=[slice_("node0"), slice_("node1")], claims=[claim(), claim("claim-1")],
         expect={"pending_job0": ("Running", "node0"), "pending_job1": ("Running", "node1")},
         bounds=(2, 0, 0)),
    dict(dir="allocate-claim-at-max-consumers", file=A, func="TestDRAAllocation", index=5,
         name="Exactly at claim max consumers limit",
         jobs=one_pod(), nodes={"node0": None}, queues=Q1, classes=GPU, slices=[slice_()],
         claims=[claim(random_reserved=255)], expect={"pending_job0": ("Running", "node0")},
         bounds=(2, 0, 0)),
    dict(dir="allocate-claim-partially-over-max-consumers", file=A, func="TestDRAAllocation",
         index=6, name="Partially over claim max consumers limit",
         jobs=[{"name": "pending_job0", "queue": "queue1", "priority": 50,
                "tasks": [{"claims": ["claim-0"]}] * 3}],
         nodes={"node0": None}, queues=Q1, classes=GPU, slices=[slice_()],
         claims=[claim(random_reserved=254)], expect={"pending_job0": ("Pending",)}),
    dict(dir="allocate-claim-over-max-consumers", file=A, func="TestDRAAllocation", index=7,
         name="Claim already reached max consumers limit",
         jobs=one_pod(), nodes={"node0": None}, queues=Q1, classes=GPU, slices=[slice_()],
         claims=[claim(random_reserved=256)], expect={"pending_job0": ("Pending",)}),
    dict(dir="allocate-shared-claim-without-queue-label", file=A, func="TestDRAAllocation",
         index=8, name="Shared claim with no queue label - blocked from scheduling",
         jobs=one_pod(("claim-no-label",)), nodes={"node0": None}, queues=Q1, classes=GPU,
         slices=[slice_()], claims=[claim("claim-no-label", queue=None)],
         expect={"pending_job0": ("Pending",)}),
    dict(dir="allocate-shared-claim-wrong-queue-label", file=A, func="TestDRAAllocation",
         index=9, name="Shared claim with wrong queue label - blocked from scheduling",
         jobs=one_pod(("claim-wrong-queue",)), nodes={"node0": None}, queues=Q1, classes=GPU,
         slices=[slice_()], claims=[claim("claim-wrong-queue", queue="different-queue")],
         expect={"pending_job0": ("Pending",)}),
    dict(dir="allocate-claim-over-quota-non-preemptible", file=A, func="TestDRAAllocation",
         index=10, name="pod with simple resource claim - requests over quota as non-preemptable",
         jobs=one_pod(priority=0, preemptibility="non-preemptible"), nodes={"node0": None},
         queues=Q1, classes=GPU, slices=[slice_(count=2)], claims=[claim(count=2)],
         expect={"pending_job0": ("Pending",)}, bounds=(1, 0, 0)),
    dict(dir="allocate-claim-over-limit", file=A, func="TestDRAAllocation", index=11,
         name="pod with simple resource claim - requests over limit",
         jobs=one_pod(priority=0, preemptibility="preemptible"), nodes={"node0": None},
         queues=[{"name": "queue1", "deserved": 1, "limit": 1}], classes=GPU,
         slices=[slice_(count=2)], claims=[claim(count=2)],
         expect={"pending_job0": ("Pending",)}, bounds=(1, 0, 0)),
    dict(dir="allocate-non-gpu-claim-ignores-gpu-limit", file=A, func="TestDRAAllocation",
         index=12, name="pod with simple resource claim - non gpu claims doesn't count for gpu limit",
         jobs=one_pod(priority=0, preemptibility="preemptible"), nodes={"node0": None},
         queues=[{"name": "queue1", "deserved": 1, "limit": 1}], classes=["other-device-class"],
         slices=[slice_(count=2)], claims=[claim(count=2, cls="other-device-class", queue=None)],
         expect={"pending_job0": ("Running",)}, bounds=(1, 0, 0),
         notes=["KAI's harness gives every slice the driver nvidia.com/gpu whatever the class: "
                "node0 has 2 DRA GPUs; the claim's class has no 'gpu' in its name, so it is not "
                "counted against the queue's GPU limit."]),
    dict(dir="shared-device-does-not-block-cpu-pod", file=S,
         func="TestSharedDRADeviceDoesNotBlockCPUOnlyPod", index=0,
         name="shared DRA device does not block CPU-only pod",
         jobs=[{"name": "shared_dra_job0", "queue": "queue1", "priority": 50,
                "tasks": [{"state": "Running", "node": "node0", "claims": ["shared-claim"]}]},
               {"name": "shared_dra_job1", "queue": "queue1", "priority": 50,
                "tasks": [{"state": "Running", "node": "node0", "claims": ["shared-claim"]}]},
               {"name": "cpu_only_job", "queue": "queue1", "priority": 50,
                "tasks": [{"affinity": ["node0"]}]}],
         nodes={"node0": None}, queues=Q1, classes=GPU, slices=[slice_()],
         claims=[claim("shared-claim", allocated=[("node0", "0")],
                       reserved_for=["shared_dra_job0-0", "shared_dra_job1-0"])],
         expect={"shared_dra_job0": ("Running", "node0"), "shared_dra_job1": ("Running", "node0"),
                 "cpu_only_job": ("Running", "node0")}, bounds=(1, 0, 0)),
    dict(dir="pending-pod-uses-shared-device", file=S, func="TestPendingPodCanUseSharedDRADevice",
         index=0, name="pending pod can use shared DRA device",
         jobs=[{"name": "running_shared_dra_job", "queue": "queue1", "priority": 50,
                "tasks": [{"state": "Running", "node": "node0", "claims": ["shared-claim"]}]},
               {"name": "pending_shared_dra_job", "queue": "queue1", "priority": 50,
                "tasks": [{"affinity": ["node0"], "claims": ["shared-claim"]}]}],
         nodes={"node0": None}, queues=Q1, classes=GPU, slices=[slice_()],
         claims=[claim("shared-claim", allocated=[("node0", "0")],
                       reserved_for=["running_shared_dra_job-0", "pending_shared_dra_job-0"])],
         expect={"running_shared_dra_job": ("Running", "node0"),
                 "pending_shared_dra_job": ("Running", "node0")}, bounds=(1, 0, 0)),
    dict(dir="reclaim-overflow-does-not-block-queue", file=O,
         func="TestDRAOverflowDoesNotBlockReclaimInSameQueue", index=0,
         name="overflowing DRA request does not block reclaim for a valid request in the same queue",
         jobs=[{"name": "valid-job", "queue": "reclaiming-queue", "priority": 50,
                "tasks": [{"claims": ["valid-claim"]}]},
               {"name": "overflow-job", "queue": "reclaiming-queue", "priority": 50,
                "tasks": [{"claims": ["overflow-claim-0", "overflow-claim-1"]}]},
               {"name": "victim-job", "queue": "victim-queue", "priority": 50,
                "tasks": [{"state": "Running", "node": "node0", "claims": ["victim-claim"]}]}],
         nodes={"node0": None},
         queues=[{"name": "reclaiming-queue", "deserved": 2, "weight": 1},
                 {"name": "victim-queue", "weight": 1}],
         classes=GPU, slices=[slice_(count=2)],
         claims=[claim("valid-claim", count=2, queue="reclaiming-queue"),
                 claim("overflow-claim-0", count=MAXINT, queue="reclaiming-queue"),
                 claim("overflow-claim-1", count=MAXINT, queue="reclaiming-queue"),
                 claim("victim-claim", count=2, queue="victim-queue",
                       allocated=[("node0", "0"), ("node0", "1")], alloc_request="victim-claim",
                       reserved_for=["victim-job-0"])],
         expect={"valid-job": ("Running", "node0"), "overflow-job": ("Pending",),
                 "victim-job": ("Pending",)}, bounds=(1, 1, 1), until=2),
]


def reclaim_claim(name, count, queue, devices, pod):
    return claim(name, count=count, queue=queue, allocated=devices, alloc_request=name,
                 reserved_for=[pod])


CASES += [
    dict(dir="reclaim-gpu-under-fair-share", file=R, func="getReclaimGpuDRATestsMetadata", index=0,
         name="queue0 is under fair share, queue1 is over fair share - reclaim",
         jobs=[{"name": "q0_job0", "queue": "queue0", "priority": 50,
                "tasks": [{"state": "Running", "node": "node0", "claims": ["claim-q0-job0"]}]},
               {"name": "q0_job1", "queue": "queue0", "priority": 50,
                "tasks": [{"state": "Running", "node": "node0", "claims": ["claim-q0-job1"]}]},
               {"name": "q0_job2", "queue": "queue0", "priority": 50,
                "tasks": [{"claims": ["claim-q0-job2"]}]},
               {"name": "q1_job0", "queue": "queue1", "priority": 50,
                "tasks": [{"state": "Running", "node": "node0", "claims": ["claim-q1-job0"]}]},
               {"name": "q1_job1", "queue": "queue1", "priority": 50,
                "tasks": [{"state": "Running", "node": "node0", "claims": ["claim-q1-job1"]}]}],
         nodes={"node0": None},
         queues=[{"name": "queue0", "deserved": 2, "weight": 6},
                 {"name": "queue1", "deserved": 4, "weight": 2}],
         classes=GPU, slices=[slice_(count=8)],
         claims=[reclaim_claim("claim-q0-job0", 2, "queue0", [("node0", "0"), ("node0", "1")],
                               "q0_job0-0"),
                 reclaim_claim("claim-q0-job1", 1, "queue0", [("node0", "2")], "q0_job1-0"),
                 claim("claim-q0-job2", queue="queue0"),
                 reclaim_claim("claim-q1-job0", 4, "queue1",
                               [("node0", str(d)) for d in range(3, 7)], "q1_job0-0"),
                 reclaim_claim("claim-q1-job1", 1, "queue1", [("node0", "7")], "q1_job1-0")],
         expect={"q0_job0": ("Running", "node0"), "q0_job1": ("Running", "node0"),
                 "q0_job2": ("Running", "node0"), "q1_job0": ("Running", "node0"),
                 "q1_job1": ("Pending",)}, bounds=(1, 1, 1), until=2),
    dict(dir="reclaim-gpu-one-running-one-pending", file=R, func="getReclaimGpuDRATestsMetadata",
         index=1, name="1 train job running for queue0, 1 train job pending for queue1 - reclaim",
         jobs=[{"name": "running_job0", "queue": "queue0", "priority": 50,
                "tasks": [{"state": "Running", "node": "node0", "claims": ["claim-running-job0"]}]},
               {"name": "pending_job0", "queue": "queue1", "priority": 50,
                "tasks": [{"claims": ["claim-pending-job0"]}]}],
         nodes={"node0": None},
         queues=[{"name": "queue0", "deserved": 1, "weight": 1},
                 {"name": "queue1", "deserved": 1, "weight": 1}],
         classes=GPU, slices=[slice_(count=2)],
         claims=[reclaim_claim("claim-running-job0", 2, "queue0", [("node0", "0"), ("node0", "1")],
                               "running_job0-0"),
                 claim("claim-pending-job0", queue="queue1")],
         expect={"running_job0": ("Pending",), "pending_job0": ("Running", "node0")},
         bounds=(1, 1, 1), until=2),
    dict(dir="reclaim-gpu-deserved-met-no-reclaim", file=R, func="getReclaimGpuDRATestsMetadata",
         index=2,
         name="2 jobs running for queue0 on 3 GPUs, 1 job running for queue1 on 1 GPU, 1 pending "
              "job for queue1, deserved of queue1 is 1 -  don't reclaim",
         jobs=[{"name": "running_job0", "queue": "queue0", "priority": 50,
                "tasks": [{"state": "Running", "node": "node1", "claims": ["claim-running-job0"]}]},
               {"name": "running_job1", "queue": "queue0", "priority": 50,
                "tasks": [{"state": "Running", "node": "node0", "claims": ["claim-running-job1"]}]},
               {"name": "running_job2", "queue": "queue1", "priority": 50,
                "tasks": [{"state": "Running", "node": "node1", "claims": ["claim-running-job2"]}]},
               {"name": "pending_job0", "queue": "queue1", "priority": 50,
                "tasks": [{"claims": ["claim-pending-job0"]}]}],
         nodes={"node0": None, "node1": None},
         queues=[{"name": "queue0", "deserved": 2, "weight": 2},
                 {"name": "queue1", "deserved": 1, "weight": 1}],
         classes=GPU, slices=[slice_("node0", 2), slice_("node1", 2)],
         claims=[reclaim_claim("claim-running-job0", 1, "queue0", [("node1", "0")],
                               "running_job0-0"),
                 reclaim_claim("claim-running-job1", 2, "queue0", [("node0", "0"), ("node0", "1")],
                               "running_job1-0"),
                 reclaim_claim("claim-running-job2", 1, "queue1", [("node1", "1")],
                               "running_job2-0"),
                 claim("claim-pending-job0", queue="queue1")],
         expect={"running_job0": ("Running", "node1"), "running_job1": ("Running", "node0"),
                 "running_job2": ("Running", "node1"), "pending_job0": ("Pending",)},
         bounds=(0, 0, 0), until=2),
]


def dump_all(path, docs):
    with open(path, "w") as f:
        yaml.safe_dump_all(docs, f, sort_keys=False)


def main():
    only = set(sys.argv[1:]) - {"--index"}
    index = []
    for case in CASES:
        if only and case["dir"] not in only:
            continue
        d = os.path.join(ROOT, case["dir"])
        os.makedirs(d, exist_ok=True)
        dump_all(os.path.join(d, "scenario.yaml"), scenario(case))
        dump_all(os.path.join(d, "expected.yaml"), [expected(case)])
        dump_all(os.path.join(d, "meta.yaml"), [meta(case)])
        index.append({"dir": "dra/" + case["dir"], "name": case["name"],
                      "features": ["dra"], "mode": "integration"})
    if "--index" in sys.argv:
        print(yaml.safe_dump(index, sort_keys=False), end="")


if __name__ == "__main__":
    main()
