"""Each component stops writing the moment it loses its leader lease (docs/commands/README.md,
"Leader election").

Every test runs one kai component (or `kai run`) with --leader-elect and short lease periods
against the fake API server (fake_apiserver.py), gives it writes to do and slows them down (a
delay fault on its write paths), lets it take the Lease and start writing, then has another
identity take the Lease over (a PUT with a new holder and a fresh renewTime, as a rival elector
would). The component must exit with status 1, saying so, and no write of it may reach the server
after it observed the loss: the elector says how many writes its fence had let through when it
closed, and the server's request log must hold no more than that (the fence admits each try of
each write just before it is sent, so the count is exact, with no race on timestamps). Work must
be left over, so that a component that kept going would have written more.

    KAI_BIN=build/kai python3 tests/fakeapi/leader_fault_test.py
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "fake_apiserver.py")
KAI_BIN = os.environ.get("KAI_BIN", "")
WRITES = ("POST", "PUT", "PATCH", "DELETE")
IDENTITY = "kai-under-test"
LEASE_FLAGS = ["--leader-elect", "--leader-elect-identity", IDENTITY,
               "--leader-elect-lease-duration", "4s", "--leader-elect-renew-deadline", "3s",
               "--leader-elect-retry-period", "100ms"]


class FakeApi:
    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="kai-leader")
        self.proc = subprocess.Popen([sys.executable, SERVER, "--port", "0"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        m = re.fullmatch(r"PORT (\d+)\n", self.proc.stdout.readline())
        if not m:
            raise RuntimeError("fake_apiserver.py did not start")
        self.url = f"http://127.0.0.1:{m.group(1)}"
        self.kubeconfig = os.path.join(self.tmp, "kubeconfig")
        with open(self.kubeconfig, "w") as f:
            f.write(f"""apiVersion: v1
kind: Config
clusters: [{{name: fake, cluster: {{server: "{self.url}"}}}}]
users: [{{name: u, user: {{}}}}]
contexts: [{{name: fake, context: {{cluster: fake, user: u}}}}]
current-context: fake
""")

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(10)
        self.proc.stdout.close()

    def control(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())

    def create(self, *objects):
        self.control("POST", "/_control/objects",
                     {"ops": [{"op": "create", "object": o} for o in objects]})

    def fault(self, rule):
        self.control("POST", "/_control/faults", {"rules": [rule]})

    def objects(self, api_version, kind):
        return self.control("GET", f"/_control/objects?apiVersion={api_version}&kind={kind}")["items"]

    def writes(self):
        return [e for e in self.control("GET", "/_control/log")
                if e["method"] in WRITES and "/leases" not in e["path"]]

    def holder(self, lease):
        for item in self.objects("coordination.k8s.io/v1", "Lease"):
            if item["metadata"]["name"] == lease:
                return item["spec"].get("holderIdentity")
        return None

    def steal(self, lease):
        now = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
        self.control("POST", "/_control/objects", {"ops": [{"op": "update", "object": {
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": lease, "namespace": "kai-scheduler"},
            "spec": {"holderIdentity": "thief", "leaseDurationSeconds": 15, "renewTime": now}}}]})


def wait_for(what, pred, timeout=30.0):
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        if pred():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def pod(name, annotations=None, scheduler="kai-scheduler", ns="team", node=""):
    spec = {"schedulerName": scheduler,
            "containers": [{"name": "main", "image": "busybox",
                            "resources": {"requests": {"cpu": "100m"}}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "annotations": annotations or {}},
            "spec": spec, "status": {"phase": "Pending"}}


@unittest.skipUnless(KAI_BIN and os.access(KAI_BIN, os.X_OK), "KAI_BIN is not set")
class LeaderLossTest(unittest.TestCase):
    def setUp(self):
        self.api = FakeApi()
        self.proc = None

    def tearDown(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.proc:
            self.err_file.close()
        self.api.stop()

    def start(self, *args):
        self.err_path = os.path.join(self.api.tmp, "stderr")
        self.err_file = open(self.err_path, "w")
        self.proc = subprocess.Popen([KAI_BIN, *args, "--kubeconfig", self.api.kubeconfig],
                                     stdout=subprocess.DEVNULL, stderr=self.err_file)

    def stderr(self):
        with open(self.err_path) as f:
            return f.read()

    def lose_lease(self, lease, min_writes=1):
        """Steals `lease` once the component leads and wrote; returns (writes allowed, seen)."""
        wait_for("the component to lead", lambda: self.api.holder(lease) == IDENTITY)
        wait_for(f"{min_writes} writes", lambda: len(self.api.writes()) >= min_writes)
        self.api.steal(lease)
        try:
            rc = self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.fail("the component did not exit after losing its lease:\n" + self.stderr())
        err = self.stderr()
        self.assertEqual(rc, 1, err)
        self.assertIn("leader election lost: writes stopped", err)
        m = re.search(r"lost the lease \(held by thief\); writes stopped after (\d+) sent", err)
        self.assertTrue(m, err)
        allowed = int(m.group(1))
        seen = self.api.writes()
        self.assertGreater(allowed, 0, err)
        self.assertLessEqual(len(seen), allowed, [(e["method"], e["path"]) for e in seen])
        self.assertEqual(self.api.holder(lease), "thief")  # not taken back
        return allowed, seen

    def test_scheduler(self):
        n = 40
        alloc = {"cpu": "64", "memory": "512Gi", "pods": "110"}
        ready = [{"type": "Ready", "status": "True"}]
        unlimited = {"quota": -1, "limit": -1, "overQuotaWeight": 1}
        self.api.create(
            {"apiVersion": "v1", "kind": "Node",
             "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
             "status": {"capacity": alloc, "allocatable": alloc, "conditions": ready}},
            {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": "q"},
             "spec": {"resources": {"cpu": unlimited, "memory": unlimited, "gpu": unlimited}}},
            *[{"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
               "metadata": {"name": f"pg{i}", "namespace": "team"},
               "spec": {"queue": "q", "minMember": 1}} for i in range(n)],
            *[pod(f"p{i}", {"pod-group-name": f"pg{i}"}) for i in range(n)])
        self.api.fault({"method": "POST", "path": "/bindrequests$", "times": -1,
                        "action": {"delay_ms": 150}})
        self.start("scheduler", *LEASE_FLAGS, "--max-in-flight", "1")
        self.lose_lease("kai-scheduler", min_writes=3)
        made = self.api.objects("scheduling.run.ai/v1alpha2", "BindRequest")
        self.assertLess(len(made), n)

    def test_binder(self):
        n = 40
        self.api.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                         "status": {"allocatable": {"cpu": "100", "pods": "200"}}},
                        *[pod(f"p{i}") for i in range(n)],
                        *[{"apiVersion": "scheduling.run.ai/v1alpha2", "kind": "BindRequest",
                           "metadata": {"name": f"br{i}", "namespace": "team"},
                           "spec": {"podName": f"p{i}", "selectedNode": "n1",
                                    "receivedResourceType": "Regular"}} for i in range(n)])
        self.api.fault({"method": "POST", "path": "/binding$", "times": -1,
                        "action": {"delay_ms": 150}})
        self.start("binder", *LEASE_FLAGS, "--max-concurrent", "2")
        self.lose_lease("kai-binder", min_writes=3)
        bound = [p for p in self.api.objects("v1", "Pod") if p["spec"].get("nodeName")]
        self.assertLess(len(bound), n)  # work was left: it stopped, not finished

    def test_podgrouper(self):
        n = 40
        self.api.create(*[pod(f"p{i}") for i in range(n)])
        self.api.fault({"method": "*", "path": "/(podgroups|pods/[^/]+)$", "times": -1,
                        "action": {"delay_ms": 150}})
        self.start("podgrouper", *LEASE_FLAGS)
        self.lose_lease("kai-podgrouper", min_writes=3)
        self.assertLess(len(self.api.objects("scheduling.run.ai/v2alpha2", "PodGroup")), n)

    def test_controllers(self):
        n = 40
        self.api.create({"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
                         "metadata": {"name": "q"}, "spec": {}},
                        *[{"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
                           "metadata": {"name": f"pg{i}", "namespace": "team"},
                           "spec": {"queue": "q"}} for i in range(n)],
                        *[dict(pod(f"p{i}", {"pod-group-name": f"pg{i}"}, node="n1"),
                               status={"phase": "Running"}) for i in range(n)])
        self.api.fault({"method": "*", "path": "/status$", "times": -1,
                        "action": {"delay_ms": 150}})
        self.start("controllers", *LEASE_FLAGS)
        self.lose_lease("kai-controllers", min_writes=3)
        with_status = [g for g in self.api.objects("scheduling.run.ai/v2alpha2", "PodGroup")
                       if g.get("status")]
        self.assertLess(len(with_status), n)

    def test_scale_adjuster(self):
        n = 30
        conds = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]
        self.api.create(*[dict(pod(f"f{i}", {"gpu-fraction": "0.5"}),
                               status={"phase": "Pending", "conditions": conds})
                          for i in range(n)])
        self.api.fault({"method": "POST", "path": "/pods$", "times": -1,
                        "action": {"delay_ms": 150}})
        self.start("scale-adjuster", *LEASE_FLAGS)
        self.lose_lease("7n7h49uc.kai.scheduler", min_writes=2)
        scaling = [p for p in self.api.objects("v1", "Pod")
                   if p["metadata"]["namespace"] == "kai-scale-adjust"]
        self.assertLess(len(scaling), n)

    def test_kai_run(self):
        # The pod grouper inside `kai run`: its loss ends the whole process (status 1).
        n = 40
        self.api.create(*[pod(f"p{i}") for i in range(n)])
        self.api.fault({"method": "*", "path": "/(podgroups|pods/[^/]+)$", "times": -1,
                        "action": {"delay_ms": 150}})
        self.start("run", "--components", "podgrouper", *LEASE_FLAGS)
        self.lose_lease("kai-podgrouper", min_writes=3)
        self.assertIn("podgrouper exited with status 1", self.stderr())
        self.assertLess(len(self.api.objects("scheduling.run.ai/v2alpha2", "PodGroup")), n)

    def test_clean_stop_releases_the_lease(self):
        self.api.create(pod("p0"))
        self.start("podgrouper", *LEASE_FLAGS)
        wait_for("the component to lead", lambda: self.api.holder("kai-podgrouper") == IDENTITY)
        self.proc.send_signal(signal.SIGTERM)
        self.assertEqual(self.proc.wait(30), 0, self.stderr())
        lease = [l for l in self.api.objects("coordination.k8s.io/v1", "Lease")][0]
        self.assertEqual(lease["spec"].get("holderIdentity"), "")
        self.assertEqual(lease["spec"].get("leaseDurationSeconds"), 1)


if __name__ == "__main__":
    unittest.main(verbosity=2)
