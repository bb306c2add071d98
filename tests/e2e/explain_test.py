#!/usr/bin/env python3
"""`kai explain --kubeconfig` against a real kube-apiserver: the examples of examples/explain are
loaded into the server (the scenario loader writes their statuses too), and the live answer must
be the one the same objects give from files, suggestion for suggestion.

    python3 tests/e2e/explain_test.py        (KAI_BIN: the kai binary; default build/kai)
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kube_server  # noqa: E402
import scenario_loader as sl  # noqa: E402

REPO = kube_server.REPO_ROOT
KAI_BIN = pathlib.Path(os.environ.get("KAI_BIN", REPO / "build" / "kai"))
NOW = "2025-01-01T12:00:00Z"
CASES = {"quota.yaml": "ml/ex-q-research-gang", "topology.yaml": "ml/ex-t-allreduce",
         "fragmentation.yaml": "ml/ex-f-pretrain"}

def setUpModule():
    kube_server.require_apiserver()
    if not KAI_BIN.is_file():
        raise unittest.SkipTest(f"{KAI_BIN} not built")


def explain(*source: str, target: str) -> dict:
    p = subprocess.run([str(KAI_BIN), "explain", *source, "--now", NOW, "-o", "json",
                        "podgroup", target], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError(f"kai explain {' '.join(source)} failed ({p.returncode}):\n{p.stderr}")
    return json.loads(p.stdout)


def suggestions(answer: dict) -> list:
    """The verified changes, each with its kind, description, change and outcome."""
    return answer["suggestions"]


class LiveExplain(unittest.TestCase):
    """Each example on a server of its own (together, their nodes would make room for each other)."""

    def test_the_live_answer_is_the_files_answer(self):
        for f, target in CASES.items():
            with self.subTest(example=f):
                path = REPO / "examples" / "explain" / f
                server = kube_server.Server.start()
                client = sl.Client(server.kubeconfig)
                try:
                    loader = sl.Loader(client)
                    loader.ensure_crds()
                    result = loader.load(sl.read_objects(path))
                    self.assertTrue(result.ok, f"{f} did not load: {result}")
                    live = explain("--kubeconfig", server.kubeconfig, target=target)
                finally:
                    kube_server.release(client, server)
                files = explain("-f", str(path), target=target)
                self.assertTrue(suggestions(live), json.dumps(live)[:2000])
                self.assertEqual(suggestions(live), suggestions(files))


if __name__ == "__main__":
    unittest.main(verbosity=2)
