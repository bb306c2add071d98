#!/usr/bin/env python3
"""The whole installation on a real kube-apiserver with RBAC enforced: `kai install --print |
kubectl apply -f -` is accepted in one pass; then every component runs as a local process with
its installed ServiceAccount's token (there is no kubelet to run the Deployments), the webhooks
are reached through the installed Service (the API server routes to an Endpoints object this test
writes, `--enable-aggregator-routing`), and a queue tree with jobs of each priority class is
grouped, scheduled, bound and reported. No component may be refused a call.

    python3 tests/e2e/install_test.py        (KAI_BIN: the kai binary; default build/kai)
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

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kube_server  # noqa: E402
from e2e_objects import gpu_node, pod, queue  # noqa: E402
import scenario_loader as sl  # noqa: E402

REPO = kube_server.REPO_ROOT
KAI_BIN = pathlib.Path(os.environ.get("KAI_BIN", REPO / "build" / "kai"))
NS = "kai-scheduler"

SERVER: kube_server.Server | None = None
CLIENT: sl.Client | None = None
TMP: tempfile.TemporaryDirectory | None = None
PROCS: dict[str, subprocess.Popen] = {}
LOGS: dict[str, pathlib.Path] = {}
PORTS: dict[str, int] = {}
APPLY: subprocess.CompletedProcess | None = None


def free_port() -> int:
    return kube_server.free_port("")  # the webhook Endpoints name a non-loopback address


def host_ip() -> str:
    """A non-loopback address of this machine (Endpoints may not name 127.0.0.0/8)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing address
        return s.getsockname()[0]


def wait_for(what: str, fn, timeout: float = 60.0):
    return kube_server.wait_until(what, fn, timeout, (OSError, sl.ApiError))


# The components, as the Deployments of deploy/install/ run them, with local addresses.
def component_args(tls: pathlib.Path) -> dict[str, list[str]]:
    def ports(name: str) -> list[str]:
        PORTS[name] = free_port()
        return [f"--metrics-bind-address=127.0.0.1:{PORTS[name]}"]
    return {
        "scheduler": ["scheduler", "--shard=default", "--leader-elect", *ports("scheduler")],
        "binder": ["binder", "--leader-elect", *ports("binder")],
        "podgrouper": ["podgrouper", "--leader-elect", *ports("podgrouper")],
        "controllers": ["controllers", "--leader-elect", "--create-defaults", *ports("controllers"),
                        f"--health-probe-bind-address=127.0.0.1:{free_port()}"],
        "scale-adjuster": ["scale-adjuster", "--leader-elect", *ports("scale-adjuster")],
        "admission": ["admission", f"--bind-address=0.0.0.0:{PORTS.setdefault('admission', free_port())}",
                      f"--tls-cert-file={tls / 'tls.crt'}", f"--tls-key-file={tls / 'tls.key'}"],
    }


ACCOUNTS = {"scheduler": "kai-scheduler", "binder": "kai-binder", "podgrouper": "kai-podgrouper",
            "admission": "kai-admission", "controllers": "kai-controllers",
            "scale-adjuster": "kai-scale-adjuster"}


def setUpModule():
    global SERVER, CLIENT, TMP, APPLY
    kube_server.require_apiserver()
    if not KAI_BIN.is_file():
        raise unittest.SkipTest(f"{KAI_BIN} not built")
    TMP = tempfile.TemporaryDirectory(prefix="kai-install-e2e-")
    SERVER = kube_server.Server.start("--", "--enable-aggregator-routing=true")
    try:
        CLIENT = sl.Client(SERVER.kubeconfig)
        tmp = pathlib.Path(TMP.name)
        stream = subprocess.run([str(KAI_BIN), "install", "--print", "--tls-dir", str(tmp / "tls"),
                                 "--image", "registry.example.com/kai:e2e"],
                                capture_output=True, text=True, timeout=60, check=True).stdout
        (tmp / "install.yaml").write_text(stream)
        APPLY = SERVER.kubectl("apply", "-f", "-", input=stream, check=False)
        if APPLY.returncode != 0:
            return  # test_apply_is_accepted_in_one_pass says why
        start_components(tmp)
    except BaseException:
        tearDownModule()
        raise


def start_components(tmp: pathlib.Path) -> None:
    # The webhook Service's endpoint: this machine, where `kai admission` listens.
    CLIENT.post(f"/api/v1/namespaces/{NS}/endpoints", {
        "apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "kai-admission"},
        "subsets": [{"addresses": [{"ip": host_ip()}],
                     "ports": [{"name": "https", "port": PORTS.setdefault("admission", free_port())}]}]})
    for name, args in component_args(tmp / "tls").items():
        kubeconfig = SERVER.token_kubeconfig(NS, ACCOUNTS[name], tmp / f"{name}.kubeconfig")
        LOGS[name] = tmp / f"{name}.log"
        with LOGS[name].open("w") as log:
            PROCS[name] = subprocess.Popen([str(KAI_BIN), *args, "--kubeconfig", kubeconfig],
                                           stdout=subprocess.DEVNULL, stderr=log)
    wait_for("kai admission serving", lambda: "serving on" in LOGS["admission"].read_text())


def tearDownModule():
    for p in PROCS.values():
        kube_server.stop_process(p)
    if os.environ.get("KAI_E2E_VERBOSE"):
        for name, log in LOGS.items():
            if log.exists():
                sys.stderr.write(f"--- {name}\n{log.read_text()[-3000:]}")
    kube_server.release(CLIENT, SERVER, TMP)


def metrics(name: str) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{PORTS[name]}/metrics", timeout=5) as r:
        return r.read().decode()






class Install(unittest.TestCase):
    def test_apply_is_accepted_in_one_pass(self):
        self.assertEqual(APPLY.returncode, 0, APPLY.stderr[-3000:])
        deployments = CLIENT.get(f"/apis/apps/v1/namespaces/{NS}/deployments")["items"]
        names = {d["metadata"]["name"] for d in deployments}
        self.assertTrue({"kai-scheduler", "kai-binder", "kai-podgrouper", "kai-admission"} <= names,
                        names)
        for d in deployments:
            c = d["spec"]["template"]["spec"]["containers"][0]
            self.assertEqual(c["image"], "registry.example.com/kai:e2e", d["metadata"]["name"])
        pcs = {p["metadata"]["name"]: p["value"] for p in CLIENT.get(
            "/apis/scheduling.k8s.io/v1/priorityclasses")["items"]}
        self.assertEqual({k: pcs.get(k) for k in ("train", "build-preemptible", "build",
                                                  "inference")},
                         {"train": 50, "build-preemptible": 75, "build": 100, "inference": 125})
        ca = (pathlib.Path(TMP.name) / "tls" / "ca.crt").read_bytes()
        vwc = CLIENT.get("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/"
                         "kai-admission")
        import base64
        self.assertEqual(base64.b64decode(vwc["webhooks"][0]["clientConfig"]["caBundle"]), ca)
        self.assertEqual(vwc["webhooks"][0]["clientConfig"]["service"]["name"], "kai-admission")

    def test_admission_is_available_and_scoped_and_the_namespaces_are_pod_security_labelled(self):
        # What the server kept (a field it did not know, e.g. matchConditions with the feature
        # off, would be dropped silently): the pod hooks only for kai's scheduler's pods.
        hooks = {}
        for kind in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
            got = CLIENT.get(f"/apis/admissionregistration.k8s.io/v1/{kind}/kai-admission")
            hooks.update({h["name"]: h for h in got["webhooks"]})
        for name in ("pods.mutate.kai.scheduler", "pods.validate.kai.scheduler"):
            self.assertEqual(hooks[name]["matchConditions"],
                             [{"name": "scheduler-name-match",
                               "expression": "object.spec.schedulerName == 'kai-scheduler'"}])
            self.assertEqual(hooks[name]["failurePolicy"], "Fail")
        self.assertEqual(hooks["pods.mutate.kai.scheduler"]["reinvocationPolicy"], "IfNeeded")
        d = CLIENT.get(f"/apis/apps/v1/namespaces/{NS}/deployments/kai-admission")
        self.assertEqual(d["spec"]["replicas"], 2)
        spread = d["spec"]["template"]["spec"]["topologySpreadConstraints"][0]
        self.assertEqual(spread["topologyKey"], "kubernetes.io/hostname")
        self.assertIn("readinessProbe", d["spec"]["template"]["spec"]["containers"][0])
        pdb = CLIENT.get(f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets/kai-admission")
        self.assertEqual(pdb["spec"]["minAvailable"], 1)
        self.assertEqual(pdb["spec"]["selector"]["matchLabels"],
                         d["spec"]["selector"]["matchLabels"])
        levels = {ns: CLIENT.get(f"/api/v1/namespaces/{ns}")["metadata"]["labels"].get(
            "pod-security.kubernetes.io/enforce")
            for ns in ("kai-scheduler", "kai-resource-reservation", "kai-scale-adjust")}
        self.assertEqual(levels, {"kai-scheduler": "restricted",
                                  "kai-resource-reservation": "restricted",
                                  "kai-scale-adjust": "restricted"})
        # Every installed Deployment's pods pass the level their namespace enforces (a dry run
        # of each pod template through the server's PodSecurity admission).
        for dep in CLIENT.get(f"/apis/apps/v1/namespaces/{NS}/deployments")["items"]:
            tpl = dep["spec"]["template"]
            CLIENT.post(f"/api/v1/namespaces/{NS}/pods",
                        {"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": f"psa-{dep['metadata']['name']}"},
                         "spec": tpl["spec"]}, query={"dryRun": "All"})

    def test_a_second_print_with_the_same_tls_dir_changes_nothing(self):
        tmp = pathlib.Path(TMP.name)
        again = subprocess.run([str(KAI_BIN), "install", "--print", "--tls-dir", str(tmp / "tls"),
                                "--image", "registry.example.com/kai:e2e"],
                               capture_output=True, text=True, timeout=60, check=True).stdout
        self.assertEqual(again, (tmp / "install.yaml").read_text())
        diff = SERVER.kubectl("diff", "-f", "-", input=again, check=False)
        self.assertEqual(diff.returncode, 0, diff.stdout[-3000:] + diff.stderr[-2000:])

    def test_admission_role_is_exactly_what_the_server_calls(self):
        by = kube_server.rbac_objects(REPO / "deploy" / "rbac" / "admission.yaml")
        self.assertEqual(kube_server.rbac_rules(by[("ClusterRole", "kai-admission")]),
                         {("scheduling.run.ai", "queues", "get"),
                          ("scheduling.run.ai", "queues", "list"), ("", "pods", "list")})
        by = kube_server.rbac_objects(REPO / "deploy" / "rbac" / "podgrouper.yaml")
        self.assertEqual(kube_server.rbac_rules(by[("Role", "kai-podgrouper-leader-election")]),
                         {("coordination.k8s.io", "leases", v) for v in ("get", "create", "update")})

    def test_a_bad_image_is_refused_naming_the_flag(self):
        p = subprocess.run([str(KAI_BIN), "install", "--print", "--image", "a b"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 1)
        self.assertIn('--image: "a b" is not an image reference', p.stderr)


class Components(unittest.TestCase):
    """Every component with its installed account: webhooks, grouping, scheduling, binding."""

    @classmethod
    def setUpClass(cls):
        if APPLY is None or APPLY.returncode != 0:
            raise unittest.SkipTest("the installation was not applied")
        for n in ("gpu-1", "gpu-2"):
            CLIENT.post("/api/v1/nodes", gpu_node(n))
        # The queue tree goes through the validating webhook (the Service routes to kai admission).
        for q in (queue("research", None, 16), queue("team-a", "research", 8),
                  queue("team-b", "research", 8)):
            SERVER.kubectl("create", "-f", "-", input=json.dumps(q))
        SERVER.kubectl("create", "namespace", "ml")
        cls.jobs = {"train-a": ("team-a", "train", "4"), "infer-a": ("team-a", "inference", "2"),
                    "build-b": ("team-b", "build", "2"), "train-b": ("team-b", "train", "4")}
        for name, (q, prio, gpus) in cls.jobs.items():
            SERVER.kubectl("create", "-f", "-", input=json.dumps(pod(name, "ml", q, prio, gpus)))

    def test_every_pod_is_grouped_scheduled_and_bound(self):
        def bound():
            pods = CLIENT.get("/api/v1/namespaces/ml/pods")["items"]
            done = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in pods}
            return all(done.get(n) for n in self.jobs) and done
        nodes = wait_for("every pod bound", bound, 90)
        self.assertEqual(set(nodes), set(self.jobs))
        pgs = CLIENT.get("/apis/scheduling.run.ai/v2alpha2/namespaces/ml/podgroups")["items"]
        by_queue = sorted((pg["spec"]["queue"], pg["spec"]["priorityClassName"]) for pg in pgs)
        self.assertEqual(by_queue, sorted((q, p) for q, p, _ in self.jobs.values()))

    def test_controllers_created_the_default_queues_and_shard(self):
        names = wait_for("the default queues", lambda: {
            q["metadata"]["name"] for q in CLIENT.get("/apis/scheduling.run.ai/v2/queues")["items"]
        } >= {"default-parent-queue", "default-queue"})
        self.assertTrue(names)
        CLIENT.get("/apis/kai.scheduler/v1/schedulingshards/default")
        self.assertIn("created the default SchedulingShard default",
                      LOGS["controllers"].read_text())

    def test_the_webhook_refuses_a_queue_whose_parent_is_missing(self):
        p = SERVER.kubectl("create", "-f", "-", input=json.dumps(queue("orphan", "nope", 1)),
                           check=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("nope", p.stderr)

    def test_scheduler_metrics_show_the_queues(self):
        text = wait_for("the scheduler's queue metrics",
                        lambda: 'queue_name="team-a"' in metrics("scheduler") and
                        metrics("scheduler"))
        # Labels by name, as Prometheus' Go client writes them: queue_name comes last.
        self.assertRegex(text, r'kai_queue_fair_share_gpu\{[^}]*queue_name="team-a"\} [0-9.]+')
        self.assertRegex(text, r'kai_queue_allocation_gpu\{[^}]*queue_name="team-a"\} 6\b')
        self.assertIn("kai_podgrouper_pods_grouped_total", metrics("podgrouper"))
        self.assertIn('kai_binder_binds_total{result="succeeded"}', metrics("binder"))
        allocated = r'kai_queue_allocated_gpus\{[^}]*queue_name="team-a"[^}]*\} 6\b'
        ctl = wait_for("the controllers' queue metrics",
                       lambda: re.search(allocated, metrics("controllers")) and
                       metrics("controllers"))
        self.assertRegex(ctl, allocated)

    def test_statuses_of_podgroups_and_queues(self):
        def status():  # both team-a jobs counted (the first bind may be reported alone)
            q = CLIENT.get("/apis/scheduling.run.ai/v2/queues/team-a").get("status") or {}
            return q.get("allocated", {}).get("nvidia.com/gpu") == "6" and q
        q = wait_for("team-a's status", status, 60)
        self.assertEqual(q["allocated"].get("nvidia.com/gpu"), "6", q)
        self.assertEqual(q["allocatedNonPreemptible"].get("nvidia.com/gpu"), "2", q)
        research = wait_for("research's children", lambda: (CLIENT.get(
            "/apis/scheduling.run.ai/v2/queues/research").get("status") or {}).get("childQueues"))
        self.assertEqual(sorted(research), ["team-a", "team-b"])

    def test_zz_no_component_was_refused_a_call(self):
        time.sleep(1)
        for name, log in LOGS.items():
            text = log.read_text()
            self.assertIsNone(re.search(r"\b403\b|forbidden", text), f"{name}:\n{text[-3000:]}")
            self.assertIsNone(PROCS[name].poll(), f"{name} exited:\n{text[-3000:]}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
