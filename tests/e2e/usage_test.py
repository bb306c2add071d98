#!/usr/bin/env python3
"""Time-based fair share on a live cluster: `kai scheduler --usage-dir` on a real kube-apiserver.

    python3 tests/e2e/usage_test.py [-v]
    KAI_BIN=/path/to/kai python3 tests/e2e/usage_test.py -v

- Recorded: the scheduler (its ServiceAccount's token, a SchedulingShard with usageDBConfig)
  binds pods, records what each queue holds and saves the history under --usage-dir; on SIGTERM
  it saves again. A restart reloads the history (the old intervals are still there), and
  `kai queues --kubeconfig --usage-dir` shows the recorded usage. No 403 anywhere.
- Corrupt: a truncated history is set aside as usage-history.corrupt-<time> with a log line
  naming the file and what is wrong, and counted in /metrics; `kai queues --usage-dir` refuses it.
- LiveQueues: `kai queues --kubeconfig` prints exactly what `kai queues -f` prints for the same
  objects.
- Prometheus: `--usage-prometheus-url` to a fake Prometheus (http.server) that reports one queue
  as having used the whole cluster: the other queue gets more of the GPUs; a Prometheus that does
  not answer is logged and scheduling goes on.

Skips when /opt/kube-test/bin/kube-apiserver is not built.
"""

from __future__ import annotations

import http.server
import json
import pathlib
import re
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import scheduler_test as st  # noqa: E402  (its helpers and its module fixture)
import scenario_loader as sl  # noqa: E402

SHARD = "usage-shard"


def setUpModule():
    st.setUpModule()


def tearDownModule():
    st.tearDownModule()


def usage_shard(connection: str = "") -> dict:
    db = {"clientType": "prometheus", "usageParams": {"windowSize": "1h"}}
    if connection:
        db["connectionString"] = connection
    return {"apiVersion": "kai.scheduler/v1", "kind": "SchedulingShard",
            "metadata": {"name": SHARD},
            "spec": {"partitionLabelValue": "", "usageDBConfig": db}}


def world(ns: str) -> list[dict]:
    """Two queues on 16 GPUs: busy runs 4 GPUs and asks for 8 more; idle asks for nothing."""
    return [usage_shard(), st.queue("busy"), st.queue("idle"), st.node("n1", 8), st.node("n2", 8),
            st.pod_group(ns, "run", "busy"), st.running(st.pod(ns, "run-0", "run", 4), "n2"),
            *st.single_pod_jobs(ns, "busy", [f"b{i}" for i in range(4)], 2)]


def over_quota_queue(name: str) -> dict:
    """No GPU quota: every GPU it gets is over quota, where usage counts (kai-semantics §3.8)."""
    q = st.queue(name)
    q["spec"]["resources"]["gpu"]["quota"] = 0
    return q


def kai(*args: str, timeout: float = 60):
    import subprocess
    return subprocess.run([str(st.KAI_BIN), *args], capture_output=True, text=True,
                          timeout=timeout)


def queue_usage(out: str) -> dict[str, float]:
    """GPU usage per queue from `kai queues -o json`."""
    return {q["name"]: q["resources"]["nvidia.com/gpu"]["usage"]
            for q in json.loads(out)["queues"]}


def history_records(path: pathlib.Path) -> list[list[str]]:
    lines = path.read_text().splitlines()
    return [ln.split() for ln in lines[1:]]


class UsageCase(st.SchedulerTestCase):
    NS = "e2e-usage"

    def sa_kubeconfig(self) -> str:
        st.SERVER.kubectl("apply", "-f", str(st.RBAC))
        return st.SERVER.token_kubeconfig("kai-scheduler", "kai-scheduler",
                                          self.workdir / "sa.kubeconfig")

    def run_scheduler(self, name: str, usage_dir: pathlib.Path, *args: str,
                      kubeconfig: str | None = None, cycles: int = 0, seconds: float = 0):
        """Starts a scheduler with the usage dir; with `seconds`, stops it (SIGTERM) after them."""
        p = self.start(name, "--shard", SHARD, "--usage-dir", str(usage_dir),
                       "--usage-save-interval", "500ms", "--schedule-period", "200ms",
                       *(["--max-cycles", str(cycles)] if cycles else []), *args,
                       kubeconfig=kubeconfig, timeout=60)
        if seconds:
            time.sleep(seconds)
            rc = p.stop()
            self.assertEqual(rc, 0, f"{name} after SIGTERM:\n{p.log()[-3000:]}")
        return p


class Recorded(UsageCase):
    def test_history_is_saved_reloaded_and_shown(self):
        ns = self.NS
        kc = self.sa_kubeconfig()
        st.load(world(ns))
        d = self.workdir / "usage"
        f = d / "usage-history"
        p = self.run_scheduler("first", d, kubeconfig=kc)
        st.wait_for("the BindRequests", lambda: len(st.bind_requests(ns)) == 4, 30, procs=[p])
        st.wait_for("the history file", f.exists, 30, procs=[p])
        time.sleep(2.0)
        self.assertEqual(p.stop(), 0, p.log()[-3000:])
        log = p.log()
        self.assertNotRegex(log, st.FORBIDDEN, "the ServiceAccount lacks a right")
        self.assertRegex(f.read_text().splitlines()[0], r"^kai-usage-history 1 \d+ [0-9a-f]{16}$")
        self.assertFalse(list(d.glob("*.tmp")), "a temporary file was left")
        first = [r for r in history_records(f) if r[0] == "queue" and r[1] == "busy"]
        self.assertTrue(first, f"no interval of queue busy:\n{f.read_text()}")
        # busy holds 4 GPUs running + 8 bound: 12000 milli-GPU at the end.
        self.assertEqual(first[-1][6], "12000", f.read_text())
        self.assertFalse([r for r in history_records(f) if r[0] == "queue" and r[1] == "idle"])
        start0 = int(first[0][2])

        q = kai("queues", "--kubeconfig", st.SERVER.kubeconfig, "--shard", SHARD,
                "--usage-dir", str(d), "-o", "json")
        self.assertEqual(q.returncode, 0, q.stderr)
        u = queue_usage(q.stdout)
        self.assertGreater(u["busy"], 0.2, q.stdout)  # 4 to 12 of 16 GPUs the whole time
        self.assertLessEqual(u["busy"], 0.75 + 1e-9, q.stdout)
        self.assertEqual(u["idle"], 0.0)

        # A restart reloads the history: the first run's intervals are still in the file.
        p2 = self.run_scheduler("second", d, kubeconfig=kc, seconds=2.0)
        self.assertNotIn("set aside", p2.log())
        again = [r for r in history_records(f) if r[0] == "queue" and r[1] == "busy"]
        self.assertEqual(int(again[0][2]), start0, f"the restart lost the history:\n{f.read_text()}")
        self.assertGreater(int(again[-1][2]) + int(again[-1][3]), int(first[-1][2]) + int(first[-1][3]))
        self.assertNotRegex(p2.log(), st.FORBIDDEN)


class Corrupt(UsageCase):
    def test_a_truncated_history_is_set_aside_and_reported(self):
        ns = self.NS
        st.load(world(ns))
        d = self.workdir / "usage"
        f = d / "usage-history"
        self.run_scheduler("first", d, seconds=2.0)
        text = f.read_bytes()
        f.write_bytes(text[: len(text) // 2])  # a crash mid-write, as a torn file looks
        (d / "usage-history.tmp").write_bytes(text[:10])  # and the temp file it left

        q = kai("queues", "--kubeconfig", st.SERVER.kubeconfig, "--usage-dir", str(d))
        self.assertEqual(q.returncode, 2, q.stdout + q.stderr)
        self.assertIn(f"{f}: checksum mismatch", q.stderr)

        port = st.free_port()
        p = self.run_scheduler("second", d, "--metrics-bind-address", f"127.0.0.1:{port}")
        st.wait_for("the new history file", f.exists, 30, procs=[p])
        status, metrics = st.wait_for("/metrics", lambda: st.try_http_get(port, "/metrics"), 20,
                                      procs=[p])
        self.assertEqual(st.metric(metrics, "kai_usage_history_corrupt_files_total"), 1.0)
        self.assertEqual(p.stop(), 0)
        log = p.log()
        m = re.search(r"usage history (\S+): checksum mismatch.*; set aside as (\S+), ", log)
        self.assertIsNotNone(m, f"no log line naming the corrupt file:\n{log[-3000:]}")
        self.assertEqual(m.group(1), str(f))
        aside = pathlib.Path(m.group(2))
        self.assertRegex(aside.name, r"^usage-history\.corrupt-\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        self.assertEqual(aside.read_bytes(), text[: len(text) // 2], "the corrupt file was changed")
        self.assertIn("removed", log)
        self.assertFalse((d / "usage-history.tmp").exists())
        self.assertTrue(f.read_text().startswith("kai-usage-history 1 "))


class LiveQueues(UsageCase):
    def test_live_output_equals_the_manifests_output(self):
        ns = self.NS
        objs = world(ns)
        st.load(objs)
        manifests = self.workdir / "world.yaml"
        manifests.write_text(yaml.safe_dump_all(objs))
        now = "2026-06-01T00:00:00Z"
        for fmt in ("table", "json"):
            files = kai("queues", "-f", str(manifests), "--now", now, "-o", fmt)
            live = kai("queues", "--kubeconfig", st.SERVER.kubeconfig, "--shard", SHARD,
                       "--now", now, "-o", fmt)
            self.assertEqual(files.returncode, 0, files.stderr)
            self.assertEqual(live.returncode, 0, live.stderr)
            self.assertEqual(live.stdout, files.stdout)
            self.assertIn("busy", live.stdout)
        both = kai("queues", "-f", str(manifests), "--kubeconfig", st.SERVER.kubeconfig)
        self.assertEqual(both.returncode, 2)
        self.assertIn("-f or --kubeconfig", both.stderr)


class FakePrometheus:
    """Answers /api/v1/query: capacity 16 GPUs (cpu, memory likewise from the nodes), queue
    `busy` used all 16 GPUs' worth; or, with `fail`, HTTP 503."""

    def __init__(self, fail: bool = False):
        self.queries: list[str] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                q = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)["query"][0]
                outer.queries.append(q)
                if fail:
                    self.send_response(503)
                    self.end_headers()
                    return
                result = []
                if "kube_node_status_capacity" in q:
                    result = [{"metric": {}, "value": [0, "16"]}]
                elif "kai_queue_allocated_gpus" in q:
                    result = [{"metric": {"queue_name": "busy"}, "value": [0, "16"]}]
                body = json.dumps({"status": "success",
                                   "data": {"resultType": "vector", "result": result}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Prometheus(UsageCase):
    """The shard's usageDBConfig names the fake Prometheus (clientType prometheus,
    connectionString), as KAI's would."""

    def world(self, url: str) -> list[dict]:
        ns = self.NS
        return [usage_shard(url), over_quota_queue("busy"), over_quota_queue("idle"),
                st.node("n1", 8),
                st.node("n2", 8),
                *st.single_pod_jobs(ns, "busy", [f"b{i}" for i in range(8)], 2),
                *st.single_pod_jobs(ns, "idle", [f"i{i}" for i in range(8)], 2)]

    def placed(self, out: str) -> dict[str, int]:
        counts = {"busy": 0, "idle": 0}
        for c in json.loads(out)["cycles"]:
            for p in c["pods"]:
                if p.get("node"):
                    counts[p["queue"]] += 1
        return counts

    def dry_run(self, *args: str) -> tuple[str, str]:
        rc, out, log = self.run_once("dry", "--shard", SHARD, "--dry-run", "-o", "json", *args)
        self.assertEqual(rc, 0, log[-3000:])
        return out, log

    def test_prometheus_usage_shifts_the_fair_share(self):
        prom = FakePrometheus()
        try:
            st.load(self.world(prom.url))
            # --usage-dir wins over the shard's Prometheus: an empty history, an even split.
            even, _ = self.dry_run("--usage-dir", str(self.workdir / "empty"))
            self.assertEqual(self.placed(even), {"busy": 4, "idle": 4}, even[:2000])
            self.assertEqual(prom.queries, [])
            out, log = self.dry_run()
        finally:
            prom.close()
        placed = self.placed(out)
        self.assertGreater(placed["idle"], placed["busy"], f"{placed}\n{log[-2000:]}")
        self.assertIn("sum_over_time((kai_queue_allocated_gpus)[1h:60s])", prom.queries)
        self.assertIn('sum_over_time((sum(kube_node_status_capacity{resource="nvidia_com_gpu"}))'
                      '[1h:60s])', prom.queries)

    def test_a_failing_prometheus_is_logged_and_scheduling_goes_on(self):
        prom = FakePrometheus(fail=True)
        try:
            st.load(self.world(prom.url))
            out, log = self.dry_run()
        finally:
            prom.close()
        self.assertEqual(self.placed(out), {"busy": 4, "idle": 4})
        self.assertIn(f"usage from {prom.url}: ", log)


if __name__ == "__main__":
    unittest.main()
