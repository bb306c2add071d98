#!/usr/bin/env python3
"""Decision parity: `kai scheduler --once` on a real kube-apiserver against `kai simulate` on a
dump of the same server state.

    python3 tests/e2e/parity_test.py [-v]          # every scenario
    KAI_PARITY_FILTER=allocate python3 tests/e2e/parity_test.py   # scenarios whose path matches

For each scenario of ../shared/scenarios and tests/scenarios (one kube-apiserver for the run,
everything cleared between scenarios):
1. the scenario's world is put on the server (scenario_loader.py: nodes, queues, PodGroups,
   pods with their nodes and phases, BindRequests; creation order follows the timestamps);
2. the server's objects are dumped (what it held before the cycle);
3. `kai scheduler --once -o json` runs one cycle against the server and writes its decisions;
4. `kai simulate -o json --cycles 1 --now <the scheduler's "now">` runs on the dump;
5. both documents must be equal (every pod's status, node, GPU groups and reasons, every node's
   and queue's figures);
6. every decision must be on the server: a BindRequest for each pod the cycle bound (its node and
   GPU groups), each evicted pod deleted or terminating, each pending pod of kai's with the
   PodScheduled=False condition, or its PodGroup a NotReady event (KAI's: a gang with too few
   pods to schedule gets that instead).
Skips when /opt/kube-test/bin/kube-apiserver is not built.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kube_server  # noqa: E402
import scenario_loader as sl  # noqa: E402

REPO = kube_server.REPO_ROOT
KAI_BIN = pathlib.Path(os.environ.get("KAI_BIN", REPO / "build" / "kai"))

# Scenarios a server cannot hold as the scenario states them, with why. The loader's own test
# (loader_test.py) checks that every other scenario loads unchanged.
CANNOT_HOLD: dict[str, str] = {}

SERVER: kube_server.Server | None = None


def setUpModule():
    global SERVER
    kube_server.require_apiserver()
    if not KAI_BIN.is_file():
        raise unittest.SkipTest(f"{KAI_BIN} not built")
    SERVER = kube_server.Server.start()


def tearDownModule():
    if SERVER is not None:
        SERVER.stop()


def scenarios() -> list[pathlib.Path]:
    out = []
    for root in (REPO.parent / "shared" / "scenarios", REPO / "tests" / "scenarios"):
        out.extend(sorted(p.parent for p in root.glob("**/scenario.yaml")))
    flt = os.environ.get("KAI_PARITY_FILTER", "")
    return [p for p in out if flt in str(p)]


def rel(p: pathlib.Path) -> str:
    p = p.resolve()
    try:
        return str(p.relative_to(REPO))
    except ValueError:
        return "../shared/" + str(p.relative_to(REPO.parent / "shared"))


def key(md: dict) -> str:
    return f"{md.get('namespace') or 'default'}/{md['name']}"


def run(cmd: list[str], env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)


class Parity(unittest.TestCase):
    maxDiff = 4000

    def check_scenario(self, scenario: pathlib.Path, client: sl.Client, loader: sl.Loader,
                       tmp: pathlib.Path) -> str | None:
        """Returns None when the scenario passes, else what differs."""
        errs = sl.clear(client)
        if errs:
            return "clear: " + "; ".join(errs[:3])
        objs = sl.read_objects(scenario)
        res = loader.load(objs)
        if not res.ok:
            return "load: " + "; ".join(res.failures[:3])
        before = sl.dump(client)
        dump_path = tmp / "dump.yaml"
        sl.write_dump(before, dump_path)
        shards = [o["metadata"]["name"] for o in before if o["kind"] == "SchedulingShard"]
        env = dict(os.environ, KUBECONFIG=SERVER.kubeconfig)
        cmd = [str(KAI_BIN), "scheduler", "--once", "-o", "json"]
        if shards:
            cmd += ["--shard", shards[0]]
        live = run(cmd, env=env)
        if live.returncode != 0:
            return f"kai scheduler --once exited {live.returncode}: {live.stderr[-1500:]}"
        got = json.loads(live.stdout)
        now = got.pop("now")
        sim = run([str(KAI_BIN), "simulate", "-f", str(dump_path), "-o", "json", "--cycles", "1",
                   "--now", now])
        if sim.returncode != 0:
            return f"kai simulate on the dump exited {sim.returncode}: {sim.stderr[-1500:]}"
        want = json.loads(sim.stdout)
        # The scheduler does not watch Failed pods (KAI's informer filters them out; they hold
        # nothing); the simulator lists every pod of the dump.
        for c in want["cycles"]:
            c["pods"] = [p for p in c["pods"] if p["status"] != "Failed"]
        if got != want:
            return "decisions differ:\n" + first_difference(got, want)
        return self.check_written(client, before, got["cycles"][0], live.stderr)

    def check_written(self, client: sl.Client, before: list[dict], cycle: dict,
                      log: str) -> str | None:
        pods_before = {key(o["metadata"]): o for o in before if o["kind"] == "Pod"}
        brs_before = {key(o["metadata"]) for o in before if o["kind"] == "BindRequest"}
        after = sl.dump(client, ["Pod", "BindRequest"])
        pods_after = {key(o["metadata"]): o for o in after if o["kind"] == "Pod"}
        brs_after = {key(o["metadata"]): o for o in after if o["kind"] == "BindRequest"}
        problems = []
        for p in cycle["pods"]:
            k = f"{p['namespace']}/{p['name']}"
            old = pods_before.get(k, {})
            was_placed = bool((old.get("spec") or {}).get("nodeName")) or k in brs_before
            deleting = bool((old.get("metadata") or {}).get("deletionTimestamp"))
            if p["status"] == "Binding" and not was_placed:
                br = brs_after.get(k)
                if not br:
                    problems.append(f"{k}: bound to {p['node']} but no BindRequest on the server")
                    continue
                spec = br["spec"]
                if spec.get("selectedNode") != p["node"]:
                    problems.append(f"{k}: BindRequest node {spec.get('selectedNode')} != {p['node']}")
                if sorted(spec.get("selectedGPUGroups") or []) != sorted(p["gpuGroups"] or []):
                    problems.append(f"{k}: BindRequest GPU groups {spec.get('selectedGPUGroups')}"
                                    f" != {p['gpuGroups']}")
            elif p["status"] in ("Releasing", "Pending", "Pipelined") and was_placed and not deleting:
                now = pods_after.get(k)
                if now and not now["metadata"].get("deletionTimestamp") and \
                        now["metadata"].get("uid") == old["metadata"].get("uid"):
                    problems.append(f"{k}: evicted ({p['status']}) but still on the server")
            elif p["status"] == "Pending" and p.get("podGroup") and p.get("reasons") and \
                    (old.get("spec") or {}).get("schedulerName") == "kai-scheduler":
                now = pods_after.get(k) or {}
                conds = (now.get("status") or {}).get("conditions") or []
                if not any(c.get("type") == "PodScheduled" and c.get("status") == "False"
                           for c in conds) and \
                        not self.not_ready(client, before, p["namespace"], p["podGroup"]):
                    problems.append(f"{k}: pending but no PodScheduled=False condition"
                                    " (nor a NotReady event on its PodGroup)")
        if problems:
            return "not on the server:\n  " + "\n  ".join(problems[:10]) + "\nscheduler log:\n" + \
                log[-1500:]
        return None

    @staticmethod
    def not_ready(client: sl.Client, before: list[dict], ns: str, group: str) -> bool:
        """Whether the PodGroup got KAI's NotReady event: its pods then get no condition."""
        uids = {o["metadata"].get("uid") for o in before if o["kind"] == "PodGroup"
                and o["metadata"].get("namespace") == ns and o["metadata"]["name"] == group}
        events = client.get(f"/api/v1/namespaces/{ns}/events").get("items") or []
        return any(e.get("reason") == "NotReady" and
                   (e.get("involvedObject") or {}).get("uid") in uids for e in events)

    def test_every_scenario(self):
        client = sl.Client(SERVER.kubeconfig)
        loader = sl.Loader(client)
        loader.ensure_crds()
        failures, passed, skipped = [], 0, []
        with tempfile.TemporaryDirectory() as d:
            for sc in scenarios():
                name = rel(sc)
                if name in CANNOT_HOLD:
                    skipped.append(name)
                    continue
                if kinds := sl.unserved_kinds(sl.read_objects(sc)):
                    CANNOT_HOLD[name] = "the test server does not serve " + ", ".join(kinds[:3])
                    skipped.append(name)
                    continue
                why = self.check_scenario(sc, client, loader, pathlib.Path(d))
                if why:
                    failures.append(f"{name}: {why}")
                    print(f"FAIL {name}\n{why[:3000]}", file=sys.stderr)
                else:
                    passed += 1
        print(f"parity: {passed} scenarios equal and written, {len(failures)} differ, "
              f"{len(skipped)} cannot be held", file=sys.stderr)
        for s in skipped:
            print(f"  cannot be held: {s}: {CANNOT_HOLD[s]}", file=sys.stderr)
        self.assertFalse(failures, "\n".join(f[:2000] for f in failures[:10]))


def first_difference(a, b, path="") -> str:
    if type(a) is not type(b):
        return f"{path}: {json.dumps(a)[:300]} != {json.dumps(b)[:300]}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                return first_difference(a.get(k), b.get(k), f"{path}.{k}")
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                label = x.get("name", i) if isinstance(x, dict) else i
                return first_difference(x, y, f"{path}[{label}]")
    return f"{path}: scheduler {json.dumps(a)[:300]} != simulate {json.dumps(b)[:300]}"


if __name__ == "__main__":
    unittest.main()
