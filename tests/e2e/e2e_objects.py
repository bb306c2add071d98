"""Objects the e2e tests create: queues, GPU pods and GPU nodes, as a platform team writes them."""

from __future__ import annotations


def queue(name: str, parent: str | None, gpu_quota: int) -> dict:
    """A Queue with a GPU quota; CPU and memory unlimited."""
    spec = {"resources": {"gpu": {"quota": gpu_quota, "limit": -1, "overQuotaWeight": 1},
                          "cpu": {"quota": -1, "limit": -1, "overQuotaWeight": 1},
                          "memory": {"quota": -1, "limit": -1, "overQuotaWeight": 1}}}
    if parent:
        spec["parentQueue"] = parent
    return {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": name},
            "spec": spec}


def pod(name: str, ns: str, q: str, priority: str, gpus: str) -> dict:
    """A pod for kai-scheduler in queue `q` asking for whole GPUs."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": {"kai.scheduler/queue": q}},
            "spec": {"schedulerName": "kai-scheduler", "priorityClassName": priority,
                     "restartPolicy": "Never",
                     "containers": [{"name": "c", "image": "x", "resources": {
                         "requests": {"cpu": "1", "memory": "1Gi"},
                         "limits": {"nvidia.com/gpu": gpus}}}]}}


def gpu_node(name: str, gpus: int = 8) -> dict:
    """A Ready node with `gpus` GPUs, 64 CPUs and 512Gi."""
    alloc = {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"capacity": alloc, "allocatable": alloc,
                       "conditions": [{"type": "Ready", "status": "True"}]}}
