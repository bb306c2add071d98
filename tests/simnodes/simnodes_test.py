#!/usr/bin/env python3
"""tools/simnodes/simnodes.py without an API server: its parsers, and its kubelet state machine
driven by pod events, with the API calls it decides recorded by a fake client.

    python3 tests/simnodes/simnodes_test.py
"""

from __future__ import annotations

import http.server
import json
import os
import pathlib
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools" / "simnodes"))
import simnodes  # noqa: E402


class FakeClient:
    """Records every call; answers a POST with the object and a uid."""

    def __init__(self):
        self.calls: list[tuple[str, str, dict | None, str]] = []

    def request(self, method, path, body=None, query=None, content_type="application/json"):
        self.calls.append((method, path, body, content_type))
        return dict(body or {}, metadata=dict((body or {}).get("metadata") or {}, uid="u-" + path))

    def post(self, path, body, **kw):
        return self.request("POST", path, body)

    def merge_patch(self, path, body, **kw):
        return self.request("PATCH", path, body, content_type="application/merge-patch+json")

    def delete(self, path, **kw):
        return self.request("DELETE", path)


class FakeWorkers:
    """Runs each call at once on one fake client."""

    def __init__(self):
        self.client = FakeClient()
        self.calls = self.errors = 0

    def submit(self, key, fn):
        fn(self.client)

    def drain(self):
        pass

    def stop(self):
        pass


def pod(name: str, node: str, gpus: int = 1, ns: str = "ml", restart: str = "Never",
        annotations: dict | None = None, uid: str = "") -> dict:
    return {"metadata": {"name": name, "namespace": ns, "uid": uid or f"uid-{name}",
                         "annotations": annotations or {}},
            "spec": {"nodeName": node, "restartPolicy": restart,
                     "containers": [{"name": "main", "resources": {
                         "requests": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": str(gpus)}}}]},
            "status": {"phase": "Pending"}}


class Parsing(unittest.TestCase):
    def test_durations_ranges_and_quantities(self):
        self.assertEqual(simnodes.parse_duration("1m30s"), 90)
        self.assertEqual(simnodes.parse_duration("250ms"), 0.25)
        self.assertEqual(simnodes.parse_duration("forever"), simnodes.FOREVER)
        self.assertEqual(simnodes.parse_range("20s-40s"), (20, 40))
        self.assertEqual(simnodes.parse_range("5"), (5, 5))
        self.assertRaises(ValueError, simnodes.parse_duration, "5 minutes")
        self.assertRaises(ValueError, simnodes.parse_range, "40s-20s")
        self.assertEqual(simnodes.parse_quantity("500m"), 0.5)
        self.assertEqual(simnodes.parse_quantity("2Gi"), 2 * 2**30)
        self.assertEqual(simnodes.parse_quantity("1e3"), 1000)
        self.assertRaises(ValueError, simnodes.parse_quantity, "3Qi")
        self.assertEqual(simnodes.parse_labels("a=1, b=2"), {"a": "1", "b": "2"})

    def test_requests_sum_containers_and_take_the_largest_init_container(self):
        p = pod("p", "n")
        p["spec"]["containers"].append({"name": "side", "resources": {"requests": {"cpu": "500m"}}})
        p["spec"]["initContainers"] = [{"name": "init", "resources": {"requests": {"cpu": "4"}}}]
        self.assertEqual(simnodes.pod_requests(p)["cpu"], 4)
        self.assertEqual(simnodes.pod_requests(p)["nvidia.com/gpu"], 1)


class Kubelet(unittest.TestCase):
    def setUp(self):
        args = simnodes.parse_args(["--nodes", "2", "--gpus-per-node", "2",
                                    "--default-runtime", "0s", "--name-prefix", "n-"])
        self.workers = FakeWorkers()
        self.logs: list[str] = []
        self.sim = simnodes.SimNodes(args, self.logs.append, self.workers)
        self.sim.register()
        self.calls = self.workers.client.calls

    def status_patches(self, name: str) -> list[dict]:
        return [body["status"] for m, path, body, _ in self.calls
                if m == "PATCH" and path == f"/api/v1/namespaces/ml/pods/{name}/status"]

    def feed(self, p: dict) -> None:
        self.sim.handle("pod", p)
        self.sim.fire_timers()
        self.sim.fire_timers()

    def test_nodes_and_leases_are_registered(self):
        nodes = [b for m, path, b, _ in self.calls if path == "/api/v1/nodes"]
        self.assertEqual([n["metadata"]["name"] for n in nodes], ["n-000", "n-001"])
        labels = nodes[0]["metadata"]["labels"]
        self.assertEqual(labels["nvidia.com/gpu.count"], "2")
        self.assertIn("nvidia.com/gpu.product", labels)
        self.assertEqual(nodes[0]["status"]["allocatable"]["nvidia.com/gpu"], "2")
        leases = [b for m, path, b, _ in self.calls if path.endswith("/kube-node-lease/leases")]
        self.assertEqual([x["spec"]["holderIdentity"] for x in leases], ["n-000", "n-001"])

    def test_a_job_pod_runs_then_succeeds(self):
        self.feed(pod("a", "n-000"))
        running, done = self.status_patches("a")
        self.assertEqual(running["phase"], "Running")
        self.assertTrue(running["podIP"].startswith("10.64.0."))
        self.assertIn("running", running["containerStatuses"][0]["state"])
        self.assertEqual({c["type"] for c in running["conditions"]},
                         {"Initialized", "ContainersReady", "Ready"})
        self.assertEqual(done["phase"], "Succeeded")
        self.assertEqual(done["containerStatuses"][0]["state"]["terminated"]["exitCode"], 0)
        self.assertEqual(self.sim.nodes["n-000"].used["nvidia.com/gpu"], 0)

    def test_restart_policy_always_restarts_a_failed_container(self):
        self.feed(pod("svc", "n-000", restart="Always",
                      annotations={"simnodes.kai/runtime": "0s", "simnodes.kai/outcome": "fail"}))
        restarted = self.status_patches("svc")[1]
        self.assertEqual(restarted["phase"], "Running")
        self.assertEqual(restarted["containerStatuses"][0]["restartCount"], 1)
        last = restarted["containerStatuses"][0]["lastState"]
        self.assertEqual(last["terminated"]["exitCode"], 1)

    def test_restart_policy_always_runs_forever_without_an_annotation(self):
        self.feed(pod("svc", "n-000", restart="Always"))
        self.assertEqual([s["phase"] for s in self.status_patches("svc")], ["Running"])

    def test_a_pod_that_does_not_fit_is_refused_as_a_kubelet_does(self):
        self.feed(pod("big", "n-001", gpus=2, annotations={"simnodes.kai/runtime": "forever"}))
        self.feed(pod("extra", "n-001", gpus=1))
        refused = self.status_patches("extra")
        self.assertEqual(refused[0]["phase"], "Failed")
        self.assertEqual(refused[0]["reason"], "OutOfnvidia.com/gpu")
        self.feed(pod("extra", "n-001", gpus=1))  # seen again before its status came back
        self.assertEqual(len(self.status_patches("extra")), 1)

    def test_a_deleted_pod_is_failed_and_deleted_with_grace_zero(self):
        p = pod("gone", "n-000", annotations={"simnodes.kai/runtime": "forever"})
        self.feed(p)
        p["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        self.feed(p)
        self.assertEqual(self.status_patches("gone")[-1]["phase"], "Failed")
        deletes = [b for m, path, b, _ in self.calls if m == "DELETE"]
        self.assertEqual(deletes, [{"apiVersion": "v1", "kind": "DeleteOptions",
                                    "gracePeriodSeconds": 0, "preconditions": {"uid": "uid-gone"}}])
        self.assertEqual(self.sim.nodes["n-000"].used["nvidia.com/gpu"], 0)
        self.feed(p)  # the same deletion seen again: no second delete
        self.assertEqual(len([c for c in self.calls if c[0] == "DELETE"]), 1)

    def test_reservation_pods_get_distinct_gpus(self):
        for name in ("gpu-reservation-a", "gpu-reservation-b"):
            self.feed(pod(name, "n-000", ns="kai-resource-reservation"))
        ids = [b["metadata"]["annotations"]["run.ai/reserve_for_gpu_index"]
               for m, path, b, _ in self.calls
               if m == "PATCH" and path.startswith("/api/v1/namespaces/kai-resource-reservation/")
               and not path.endswith("/status")]
        self.assertEqual(len(ids), 2)
        self.assertNotEqual(ids[0], ids[1])
        self.assertTrue(all(i.startswith("GPU-") for i in ids))

    def test_a_relist_forgets_pods_that_are_gone(self):
        self.feed(pod("a", "n-000", annotations={"simnodes.kai/runtime": "forever"}))
        self.assertEqual(self.sim.nodes["n-000"].used["nvidia.com/gpu"], 1)
        self.sim.handle("relist", [])
        self.assertEqual(self.sim.nodes["n-000"].used["nvidia.com/gpu"], 0)
        self.assertEqual(self.sim.nodes["n-000"].free_gpus, [0, 1])

    def test_pods_of_other_nodes_are_left_alone(self):
        self.feed(pod("elsewhere", "real-node-1"))
        self.assertEqual(self.status_patches("elsewhere"), [])


class FakeApi(http.server.BaseHTTPRequestHandler):
    """Pods: the first list answers resourceVersion 5 with pod a; a watch from 5 answers 410
    Gone (an ERROR event); the next list answers resourceVersion 9 with pod b only; a watch from 9
    sends b's deletion and ends (the server closing it); later watches stay silent."""

    requests: list[str] = []

    def do_GET(self):
        FakeApi.requests.append(self.path)
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        lists = sum(1 for r in FakeApi.requests if "watch=1" not in r)
        if "watch" not in query:
            rv, names = ("5", ["a"]) if lists == 1 else ("9", ["b"])
            body = {"metadata": {"resourceVersion": rv},
                    "items": [pod(n, "n-000", annotations={"simnodes.kai/runtime": "forever"})
                              for n in names]}
            return self.answer([body])
        rv = query["resourceVersion"][0]
        if rv == "5":
            return self.answer([{"type": "ERROR", "object": {"kind": "Status", "code": 410}}])
        if rv == "9":
            gone = pod("b", "n-000")
            gone["metadata"]["resourceVersion"] = "10"
            return self.answer([{"type": "DELETED", "object": gone}])
        time.sleep(0.5)
        return self.answer([])

    def answer(self, lines: list[dict]):
        data = b"".join(json.dumps(x).encode() + b"\n" for x in lines)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


class Watch(unittest.TestCase):
    def test_410_gone_lists_again_and_a_closed_watch_resumes_from_the_last_version(self):
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeApi)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.shutdown)
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            f.write(f"""apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "http://127.0.0.1:{server.server_port}"}}}}]
users: [{{name: u, user: {{}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u}}}}]
current-context: x
""")
        self.addCleanup(os.unlink, f.name)
        args = simnodes.parse_args(["--kubeconfig", f.name, "--nodes", "1"])
        sim = simnodes.SimNodes(args, lambda m: None, FakeWorkers())
        watcher = threading.Thread(target=sim.watch_loop, daemon=True)
        watcher.start()
        got = []
        while len(got) < 3:
            got.append(sim.events.get(timeout=10))
        deadline = time.monotonic() + 10
        while len([r for r in FakeApi.requests if "watch=1" in r]) < 3:
            self.assertLess(time.monotonic(), deadline, FakeApi.requests)
            time.sleep(0.05)
        sim.stop.set()
        self.assertEqual([k for k, _ in got], ["relist", "relist", "gone"])
        self.assertEqual([p["metadata"]["name"] for p in got[0][1]], ["a"])
        self.assertEqual([p["metadata"]["name"] for p in got[1][1]], ["b"])
        watches = [r for r in FakeApi.requests if "watch=1" in r]
        self.assertIn("resourceVersion=10", watches[2])  # after the server closed it
        self.assertTrue(all("fieldSelector=spec.nodeName%21%3D" in r for r in FakeApi.requests))


if __name__ == "__main__":
    unittest.main(verbosity=2)
