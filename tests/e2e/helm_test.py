#!/usr/bin/env python3
"""kai's Helm chart installed on a real kube-apiserver with the real kube-controller-manager,
as KAI's install steps say, with `kai operator` run as a local process on the installed
ServiceAccount's token, with the arguments of the Deployment the chart made:

- `helm upgrade -i kai-scheduler <chart> -n kai-scheduler --create-namespace`: the CRDs, the
  operator, kai-config, the default shard and KAI's default queues; the operator then deploys
  every component (`kubectl -n kai-scheduler get deployments`) and sets kai-config's conditions.
- The install-time values KAI v0.18 documents (`global.gpuSharingMode=HamiCore`,
  `global.clusterAutoscaling=true`, `admission.gpuFractionRuntimeClassName=null`) turn GPU
  sharing and the node scale adjuster on and the runtime class off.
- KAI's example values (custom plugins and actions) reach the default shard.
- `helm uninstall` removes kai-config and, through the garbage collector, what the operator made;
  the CRDs, the Queues and the shard stay.

    python3 tests/e2e/helm_test.py [-v]    (KAI_BIN: the kai binary; HELM: helm, else .tools/bin)

Skips when /opt/kube-test/bin/kube-apiserver or kube-controller-manager is not built, or when
helm is not installed (python3 scripts/install_helm.py).
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kube_server  # noqa: E402
import scenario_loader as sl  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent.parent / "scripts"))
from install_helm import find_helm  # noqa: E402

REPO = kube_server.REPO_ROOT
KAI_BIN = pathlib.Path(os.environ.get("KAI_BIN", REPO / "build" / "kai"))
CHART = REPO / "deploy" / "helm" / "kai-scheduler"
KAI_EXAMPLE = REPO / "tests" / "helm" / "kai-values" / "custom-plugins-actions-values.yaml"
NS = "kai-scheduler"
DEPLOYMENTS = f"/apis/apps/v1/namespaces/{NS}/deployments"
QUEUES = "/apis/scheduling.run.ai/v2/queues"
CONFIG = "/apis/kai.scheduler/v1/configs/kai-config"
SHARD = "/apis/kai.scheduler/v1/schedulingshards/default"
INSTALL_V018 = ["--set", "global.gpuSharingMode=HamiCore", "--set", "global.clusterAutoscaling=true",
                "--set", "admission.gpuFractionRuntimeClassName=null"]
COMPONENTS = ("kai-binder", "kai-podgrouper", "kai-controllers", "kai-admission",
              "kai-scheduler-default")
FORBIDDEN = re.compile(r"\b403\b|Forbidden", re.I)


HELM = find_helm()
SERVER: kube_server.Server | None = None
CLIENT: sl.Client | None = None
TMP: tempfile.TemporaryDirectory | None = None
SA_KUBECONFIG = ""
LOGS: list[str] = []


def setUpModule():
    global SERVER, CLIENT, TMP
    kube_server.require_apiserver()
    kube_server.require_controller_manager()
    if HELM is None:
        raise unittest.SkipTest("helm not installed (python3 scripts/install_helm.py)")
    if not KAI_BIN.is_file():
        raise unittest.SkipTest(f"{KAI_BIN} not built")
    TMP = tempfile.TemporaryDirectory(prefix="kai-helm-e2e-")
    SERVER = kube_server.Server.start("--controller-manager")
    CLIENT = sl.Client(SERVER.kubeconfig)


def tearDownModule():
    kube_server.release(CLIENT, SERVER, TMP)


def helm(*args: str) -> str:
    p = subprocess.run([HELM, *args, "--kubeconfig", SERVER.kubeconfig], capture_output=True,
                       text=True, timeout=300)
    if p.returncode != 0:
        raise AssertionError(f"helm {' '.join(args)}: rc {p.returncode}\n{p.stdout}{p.stderr}")
    return p.stdout


def install(*values: str) -> None:
    helm("upgrade", "-i", "kai-scheduler", str(CHART), "-n", NS, "--create-namespace", *values)


def get(path: str) -> dict | None:
    try:
        return CLIENT.get(path)
    except sl.ApiError as e:
        if e.status == 404:
            return None
        raise


def run_operator_as_installed() -> str:
    """One pass of `kai operator` with the installed Deployment's arguments, as its
    ServiceAccount; its servers off (the ports are the test machine's)."""
    global SA_KUBECONFIG
    if not SA_KUBECONFIG:
        SA_KUBECONFIG = SERVER.token_kubeconfig(NS, "kai-operator",
                                                pathlib.Path(TMP.name) / "operator.kc")
    container = get(f"{DEPLOYMENTS}/kai-operator")["spec"]["template"]["spec"]["containers"][0]
    args = [a for a in container["args"]
            if not a.startswith(("--metrics-bind-address", "--health-probe-bind-address"))]
    args += ["--metrics-bind-address=", "--health-probe-bind-address=", "--once",
             "--kubeconfig", SA_KUBECONFIG]
    p = subprocess.run([str(KAI_BIN), *args], capture_output=True, text=True, timeout=120)
    LOGS.append(p.stderr)
    if p.returncode != 0:
        raise AssertionError(f"kai {' '.join(args)}: rc {p.returncode}\n{p.stderr[-4000:]}")
    return p.stderr


def args_of(name: str) -> list[str]:
    return get(f"{DEPLOYMENTS}/{name}")["spec"]["template"]["spec"]["containers"][0]["args"]


def conditions(obj: dict) -> dict[str, dict]:
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions", [])}


class Helm(unittest.TestCase):
    def test_a_install_as_kai_documents(self):
        install()
        crds = {c["metadata"]["name"] for c in CLIENT.get(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")["items"]}
        for crd in ("queues.scheduling.run.ai", "podgroups.scheduling.run.ai",
                    "bindrequests.scheduling.run.ai", "configs.kai.scheduler",
                    "schedulingshards.kai.scheduler", "topologies.kai.scheduler"):
            self.assertIn(crd, crds)
        queues = {q["metadata"]["name"]: q for q in CLIENT.get(QUEUES)["items"]}
        self.assertEqual(queues["default-queue"]["spec"]["parentQueue"], "default-parent-queue")
        self.assertIn("default-parent-queue", queues)
        self.assertIsNotNone(get(SHARD))
        run_operator_as_installed()
        names = {d["metadata"]["name"] for d in CLIENT.get(DEPLOYMENTS)["items"]}
        for want in ("kai-operator", *COMPONENTS):
            self.assertIn(want, names)
        self.assertNotIn("kai-scale-adjuster", names)  # global.clusterAutoscaling: false
        admission = args_of("kai-admission")
        self.assertIn("--gpu-sharing-enabled=false", admission)  # KAI's chart default
        self.assertIn("--gpu-fraction-runtime-class-name=nvidia", admission)
        cond = conditions(get(CONFIG))
        self.assertEqual(cond["Deployed"]["status"], "True", cond)
        self.assertEqual(cond["Available"]["status"], "False", cond)  # no kubelet runs pods
        self.assertIn("Reconciling", cond)
        self.assertEqual(conditions(get(SHARD))["Deployed"]["status"], "True")

    def test_b_kais_install_time_values(self):
        install(*INSTALL_V018)
        run_operator_as_installed()
        self.assertIsNotNone(get(f"{DEPLOYMENTS}/kai-scale-adjuster"))
        admission = args_of("kai-admission")
        self.assertIn("--gpu-sharing-enabled=true", admission)
        self.assertIn("--gpu-fraction-runtime-class-name=", admission)

    def test_c_kais_example_values_reach_the_shard(self):
        install("-f", str(KAI_EXAMPLE))
        spec = get(SHARD)["spec"]
        self.assertEqual(spec["placementStrategy"]["gpu"], "spread")
        self.assertEqual(spec["plugins"]["mycustomplugin"]["priority"], 1050)
        self.assertFalse(spec["actions"]["consolidation"]["enabled"])
        run_operator_as_installed()
        self.assertIsNone(get(f"{DEPLOYMENTS}/kai-scale-adjuster"))  # back to the default

    def test_d_uninstall_keeps_crds_queues_and_the_shard(self):
        helm("uninstall", "kai-scheduler", "-n", NS)
        self.assertIsNone(get(CONFIG))
        kube_server.wait_until("the operator's Deployments collected", lambda: not any(
            d["metadata"]["name"] in COMPONENTS for d in CLIENT.get(DEPLOYMENTS)["items"]),
            90, errors=(OSError, sl.ApiError))
        self.assertIsNone(get(f"{DEPLOYMENTS}/kai-operator"))
        self.assertIsNotNone(get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                                 "queues.scheduling.run.ai"))
        self.assertIsNotNone(get(f"{QUEUES}/default-queue"))
        self.assertIsNotNone(get(SHARD))

    def test_z_no_call_was_refused(self):
        for log in LOGS:
            self.assertIsNone(FORBIDDEN.search(log), log[-3000:])


if __name__ == "__main__":
    unittest.main()
