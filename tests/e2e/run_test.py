#!/usr/bin/env python3
"""`kai run` on a real kube-apiserver: scheduler, binder, pod grouper, controllers and scale
adjuster in one process, sharing one client and one watch cache. A queue tree and jobs of each
priority class are grouped, scheduled, bound and reported, and the API server's own gauge of
open watches shows one watch per kind for the whole process (the components alone would open
one each: the scheduler, binder, pod grouper, controllers and scale adjuster all watch pods).

    python3 tests/e2e/run_test.py        (KAI_BIN: the kai binary; default build/kai)
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kube_server  # noqa: E402
from e2e_objects import gpu_node, pod, queue  # noqa: E402
import scenario_loader as sl  # noqa: E402

REPO = kube_server.REPO_ROOT
KAI_BIN = pathlib.Path(os.environ.get("KAI_BIN", REPO / "build" / "kai"))
COMPONENTS = ["scheduler", "binder", "podgrouper", "controllers", "scale-adjuster"]

SERVER: kube_server.Server | None = None
CLIENT: sl.Client | None = None
TMP: tempfile.TemporaryDirectory | None = None
PROC: subprocess.Popen | None = None
LOG: pathlib.Path | None = None
PORT = 0
BASELINE: dict[str, float] = {}  # the API server's own watches (its informers), before kai run
JOBS = {"train-a": ("team-a", "train", "4"), "infer-a": ("team-a", "inference", "2"),
        "build-b": ("team-b", "build", "2"), "train-b": ("team-b", "train", "4")}


free_port_block = kube_server.free_port_block


def wait_for(what: str, fn, timeout: float = 60.0):
    return kube_server.wait_until(what, fn, timeout, (OSError, sl.ApiError), log=LOG)






def setUpModule():
    global SERVER, CLIENT, TMP, PROC, LOG, PORT, BASELINE
    kube_server.require_apiserver()
    if not KAI_BIN.is_file():
        raise unittest.SkipTest(f"{KAI_BIN} not built")
    TMP = tempfile.TemporaryDirectory(prefix="kai-run-e2e-")
    SERVER = kube_server.Server.start()
    try:
        CLIENT = sl.Client(SERVER.kubeconfig)
        SERVER.install_kai_basics()
        SERVER.kubectl("create", "namespace", "ml")
        for n in ("gpu-1", "gpu-2"):
            CLIENT.post("/api/v1/nodes", gpu_node(n))
        BASELINE = SERVER.open_watches()
        PORT = free_port_block(len(COMPONENTS))
        LOG = pathlib.Path(TMP.name) / "run.log"
        with LOG.open("w") as log:
            PROC = subprocess.Popen(
                [str(KAI_BIN), "run", "--kubeconfig", SERVER.kubeconfig,
                 "--components", ",".join(COMPONENTS), "--shard", "default", "--create-defaults",
                 f"--metrics-bind-address=127.0.0.1:{PORT}"],
                stdout=subprocess.DEVNULL, stderr=log)
        for q in (queue("research", None, 16), queue("team-a", "research", 8),
                  queue("team-b", "research", 8)):
            CLIENT.post("/apis/scheduling.run.ai/v2/queues", q)
        for name, (q, prio, gpus) in JOBS.items():
            CLIENT.post("/api/v1/namespaces/ml/pods", pod(name, "ml", q, prio, gpus))
    except BaseException:
        tearDownModule()
        raise


def tearDownModule():
    kube_server.stop_process(PROC)
    if os.environ.get("KAI_E2E_VERBOSE") and LOG is not None and LOG.exists():
        sys.stderr.write(f"--- kai run\n{LOG.read_text()[-5000:]}")
    kube_server.release(CLIENT, SERVER, TMP)


def metrics(component: str) -> str:
    port = PORT + ["scheduler", "binder", "podgrouper", "controllers",
                   "scale-adjuster"].index(component)
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        return r.read().decode()


class Run(unittest.TestCase):
    def test_every_pod_is_grouped_scheduled_and_bound(self):
        def bound():
            pods = CLIENT.get("/api/v1/namespaces/ml/pods")["items"]
            done = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in pods}
            return all(done.get(n) for n in JOBS) and done
        nodes = wait_for("every pod bound", bound, 120)
        self.assertEqual(set(nodes), set(JOBS))
        pgs = CLIENT.get("/apis/scheduling.run.ai/v2alpha2/namespaces/ml/podgroups")["items"]
        by_queue = sorted((pg["spec"]["queue"], pg["spec"]["priorityClassName"]) for pg in pgs)
        self.assertEqual(by_queue, sorted((q, p) for q, p, _ in JOBS.values()))

    def test_controllers_report_statuses_and_created_the_defaults(self):
        def status():
            q = CLIENT.get("/apis/scheduling.run.ai/v2/queues/team-a").get("status") or {}
            return q.get("allocated", {}).get("nvidia.com/gpu") == "6" and q
        q = wait_for("team-a's status", status, 120)
        self.assertEqual(q["allocatedNonPreemptible"].get("nvidia.com/gpu"), "2", q)
        CLIENT.get("/apis/kai.scheduler/v1/schedulingshards/default")
        names = {x["metadata"]["name"] for x in CLIENT.get("/apis/scheduling.run.ai/v2/queues")["items"]}
        self.assertTrue({"default-parent-queue", "default-queue"} <= names, names)
        allocated = r'kai_queue_allocated_gpus\{[^}]*queue_name="team-a"[^}]*\} 6\b'
        self.assertRegex(wait_for("the controllers' queue metrics",
                                  lambda: re.search(allocated, metrics("controllers")) and
                                  metrics("controllers")), allocated)

    def test_one_watch_per_kind_for_the_whole_process(self):
        wait_for("every pod bound", lambda: all(
            p["spec"].get("nodeName") for p in CLIENT.get("/api/v1/namespaces/ml/pods")["items"]),
            120)
        def ours():
            w = SERVER.open_watches()
            return {r: n - BASELINE.get(r, 0.0) for r, n in w.items() if n != BASELINE.get(r, 0.0)}
        watches = wait_for("the process's watches open",
                           lambda: (w := ours()).get("pods") and w.get("queues") and w)
        for resource in ("pods", "nodes", "queues", "podgroups", "bindrequests", "priorityclasses"):
            self.assertEqual(watches.get(resource), 1.0, f"{resource}: {watches}")
        self.assertNotIn("watching on its own", LOG.read_text())
        self.assertIn("kai_binder_binds_total", metrics("binder"))

    def test_zz_no_call_was_refused_and_the_process_runs(self):
        time.sleep(1)
        text = LOG.read_text()
        self.assertIsNone(re.search(r"\b403\b|forbidden", text), text[-3000:])
        self.assertIsNone(PROC.poll(), f"kai run exited:\n{text[-3000:]}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
