#!/usr/bin/env python3
"""Hostile input against every kai server, on a real kube-apiserver (issue 34, item 10).

`kai run` serves every component at once: the admission webhooks (HTTPS), each component's
/metrics and /healthz ports, and the scheduler's /debug/snapshot (loopback). Each attack goes to
every server it applies to: a gzip bomb (1 MB inflating to ~1 GB), a body far above the limit
(with Content-Length, and chunked), header flooding, 200 idle connections plus 50 clients dripping
header bytes (slowloris), malformed AdmissionReviews, wrong content types, and deep JSON (a
`kai admission` of its own). After each attack the process is alive, its peak memory (VmHWM) has
grown by less than MAX_GROWTH_MB over its own peak once serving and idle (the idle peak depends on
the machine: a preloaded library or another allocator moves it, an attack does not), and /healthz
answers within a second: during the slow-client attack too.
Loopback only; every loop is bounded; the test stops what it starts.

    python3 tests/e2e/hostile_test.py        (KAI_BIN: the kai binary; default build/kai)
"""

from __future__ import annotations

import json
import os
import pathlib
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import unittest
import zlib
from dataclasses import dataclass

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kube_server  # noqa: E402
import scenario_loader as sl  # noqa: E402
from admission_test import make_certs  # noqa: E402
from kube_server import free_port, free_port_block  # noqa: E402

REPO = kube_server.REPO_ROOT
KAI_BIN = pathlib.Path(os.environ.get("KAI_BIN", REPO / "build" / "kai"))
COMPONENTS = ["scheduler", "binder", "podgrouper", "controllers", "scale-adjuster"]
MAX_GROWTH_MB = 150    # growth of a kai process's peak resident memory, through every attack
HEALTH_WITHIN_S = 1.0  # /healthz's answer, after and during each attack

SERVER: kube_server.Server | None = None
CLIENT: sl.Client | None = None
TMP: tempfile.TemporaryDirectory | None = None
PROC: subprocess.Popen | None = None
LOG: pathlib.Path | None = None
TLS: ssl.SSLContext | None = None
REPORT: list[str] = []
IDLE_PEAK_MB: dict[int, float] = {}  # pid -> VmHWM once serving, before any attack


@dataclass
class Target:
    name: str
    port: int
    tls: bool
    path: str         # the route attacked
    health_port: int  # where /healthz is asked (the same server for admission)
    health_tls: bool


TARGETS: list[Target] = []


def gzip_bomb() -> bytes:
    """~1 GB of zeros, gzip-compressed (about 1 MB)."""
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(16 << 20)
    return b"".join([c.compress(zeros) for _ in range(64)] + [c.flush()])


def connect(port: int, tls: bool, timeout: float = 5.0) -> socket.socket:
    raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    return TLS.wrap_socket(raw, server_hostname="127.0.0.1") if tls else raw


def read_status(s: socket.socket) -> int | None:
    """The response's status code; None when the server closed or reset without one."""
    data = b""
    try:
        while b"\r\n" not in data and len(data) < 4096:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except (OSError, ssl.SSLError):
        pass
    if not data.startswith(b"HTTP/1.1 "):
        return None
    return int(data[9:12])


def send_all(s: socket.socket, parts) -> None:
    """Sends the parts until the server stops reading (it may refuse early and close)."""
    try:
        for p in parts:
            s.sendall(p)
    except (OSError, ssl.SSLError):
        pass


def request(t: Target, head: str, body_parts=()) -> int | None:
    with connect(t.port, t.tls) as s:
        send_all(s, [head.encode()])
        send_all(s, body_parts)
        return read_status(s)


def head(method: str, path: str, extra: str = "") -> str:
    return f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}\r\n"


def peak_rss_mb(pid: int) -> float:
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmHWM for pid {pid}")


def memory_detail(pid: int) -> str:
    """Where a process's memory is (for a failure message): its rollup and largest mappings."""
    try:
        rollup = pathlib.Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:6]
        sizes, name = [], ""
        for line in pathlib.Path(f"/proc/{pid}/smaps").read_text().splitlines():
            parts = line.split()
            if parts and "-" in parts[0] and not parts[0].endswith(":"):
                name = " ".join(parts[5:]) or "[anon]"
            elif parts and parts[0] == "Rss:":
                sizes.append((int(parts[1]), name))
        top = sorted(sizes, reverse=True)[:6]
        preload = os.environ.get("LD_PRELOAD", "")
        return (f"; LD_PRELOAD={preload!r}; " + ", ".join(" ".join(r.split()) for r in rollup) +
                "; largest: " + ", ".join(f"{kb // 1024} MB {n}" for kb, n in top))
    except OSError as e:
        return f"; no memory detail ({e})"


def remember_idle_peak(proc: subprocess.Popen) -> None:
    IDLE_PEAK_MB[proc.pid] = peak_rss_mb(proc.pid)


def healthz_seconds(port: int, tls: bool) -> float:
    """Seconds /healthz took to answer 200 (fails past HEALTH_WITHIN_S)."""
    start = time.monotonic()
    with connect(port, tls, timeout=HEALTH_WITHIN_S) as s:
        s.sendall(head("GET", "/healthz", "Connection: close\r\n").encode())
        status = read_status(s)
    took = time.monotonic() - start
    if status != 200 or took > HEALTH_WITHIN_S:
        raise AssertionError(f"/healthz on {port}: status {status} after {took:.3f}s")
    return took


def setUpModule():
    global SERVER, CLIENT, TMP, PROC, LOG, TLS
    kube_server.require_apiserver()
    if not KAI_BIN.is_file():
        raise unittest.SkipTest(f"{KAI_BIN} not built")
    TMP = tempfile.TemporaryDirectory(prefix="kai-hostile-e2e-")
    d = pathlib.Path(TMP.name)
    make_certs(d, "serving", 1)
    TLS = ssl.create_default_context(cafile=str(d / "ca.crt"))
    SERVER = kube_server.Server.start()
    try:
        CLIENT = sl.Client(SERVER.kubeconfig)
        SERVER.kubectl("apply", "-f", str(REPO / "deploy" / "crds"))
        SERVER.kubectl("wait", "--for=condition=Established", "--timeout=60s", "crd", "--all")
        SERVER.kubectl("apply", "-f", str(REPO / "deploy" / "install" / "priorityclasses.yaml"))
        SERVER.kubectl("create", "namespace", "kai-scheduler")
        metrics, health = free_port_block(len(COMPONENTS)), free_port_block(len(COMPONENTS))
        admission, snapshot = free_port(), free_port()
        LOG = d / "run.log"
        with LOG.open("w") as log:
            PROC = subprocess.Popen(
                [str(KAI_BIN), "run", "--kubeconfig", SERVER.kubeconfig,
                 "--components", ",".join(COMPONENTS + ["admission"]), "--shard", "default",
                 "--create-defaults", f"--metrics-bind-address=127.0.0.1:{metrics}",
                 f"--health-probe-bind-address=127.0.0.1:{health}",
                 f"--snapshot-bind-address=127.0.0.1:{snapshot}",
                 f"--admission-bind-address=127.0.0.1:{admission}",
                 "--tls-cert-file", str(d / "serving.crt"), "--tls-key-file",
                 str(d / "serving.key")],
                stdout=subprocess.DEVNULL, stderr=log)
        TARGETS.append(Target("admission", admission, True, "/validate-pod", admission, True))
        for i, c in enumerate(COMPONENTS):
            TARGETS.append(Target(f"{c}/metrics", metrics + i, False, "/metrics", health + i, False))
            TARGETS.append(Target(f"{c}/health", health + i, False, "/healthz", health + i, False))
        TARGETS.append(Target("scheduler/snapshot", snapshot, False, "/debug/snapshot",
                              health, False))
        for t in TARGETS:
            kube_server.wait_until(f"{t.name} serving", lambda: healthz_seconds(t.health_port, t.health_tls),
                                   60, (OSError, ssl.SSLError, AssertionError), LOG)
            kube_server.wait_until(f"{t.name} listening", lambda: connect(t.port, t.tls).close() or True,
                                   60, (OSError, ssl.SSLError), LOG)
        remember_idle_peak(PROC)
    except BaseException:
        tearDownModule()
        raise


def tearDownModule():
    kube_server.stop_process(PROC)
    if REPORT:
        sys.stderr.write("\n" + "\n".join(REPORT) + "\n")
    if os.environ.get("KAI_E2E_VERBOSE") and LOG is not None and LOG.exists():
        sys.stderr.write(f"--- kai run\n{LOG.read_text()[-5000:]}")
    kube_server.release(CLIENT, SERVER, TMP)


class Survival(unittest.TestCase):
    def survived(self, attack: str, t: Target, outcome, proc: subprocess.Popen | None = None):
        """The process is alive, its peak within MAX_GROWTH_MB of its idle peak, and /healthz
        answers in time."""
        proc = proc or PROC
        self.assertIsNone(proc.poll(), f"{attack} on {t.name}: the process exited "
                                       f"({proc.returncode}); {LOG.read_text()[-2000:]}")
        rss, idle = peak_rss_mb(proc.pid), IDLE_PEAK_MB[proc.pid]
        self.assertLess(rss - idle, MAX_GROWTH_MB,
                        f"{attack} on {t.name}: peak RSS {rss:.0f} MB, {idle:.0f} MB when idle"
                        + memory_detail(proc.pid))
        took = healthz_seconds(t.health_port, t.health_tls)
        REPORT.append(f"hostile: {attack:<22} {t.name:<24} -> {str(outcome):<5} alive, "
                      f"peak RSS {rss:5.1f} MB (idle {idle:5.1f}), /healthz {took * 1000:5.1f} ms")


class Hostile(Survival):
    def test_1_gzip_bomb(self):
        bomb = gzip_bomb()
        self.assertLess(len(bomb), 2 << 20)
        for t in TARGETS:
            extra = (f"Content-Type: application/json\r\nContent-Encoding: gzip\r\n"
                     f"Content-Length: {len(bomb)}\r\n")
            status = request(t, head("POST" if t.tls else "GET", t.path, extra), [bomb])
            self.assertIn(status, (415, None), t.name)
            self.survived("gzip bomb", t, status)

    def test_2_body_far_above_the_limit(self):
        mb = bytes(1 << 20)
        method = {True: "POST", False: "GET"}
        for t in TARGETS:
            # 1 GB announced: refused from the header alone.
            extra = "Content-Type: application/json\r\nContent-Length: 1073741824\r\n"
            status = request(t, head(method[t.tls], t.path, extra))
            self.assertEqual(status, 413, t.name)
            self.survived("Content-Length 1 GB", t, status)
            # 64 MB streamed chunked: cut off at the route's cap.
            extra = "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
            chunks = (b"%x\r\n" % len(mb) + mb + b"\r\n" for _ in range(64))
            status = request(t, head(method[t.tls], t.path, extra), chunks)
            self.assertIn(status, (413, None), t.name)
            self.survived("chunked 64 MB", t, status)

    def test_3_header_flood(self):
        for t in TARGETS:
            lines = (b"X-Flood-%d: %s\r\n" % (i, b"a" * 100) for i in range(100_000))  # ~10 MB
            with connect(t.port, t.tls) as s:
                send_all(s, [f"GET {t.path} HTTP/1.1\r\nHost: x\r\n".encode()])
                send_all(s, lines)
                status = read_status(s)
            self.assertIn(status, (431, None), t.name)
            self.survived("header flood", t, status)

    def test_4_slow_clients(self):
        for t in TARGETS:
            held: list[socket.socket] = []
            try:
                for _ in range(200):
                    held.append(socket.create_connection(("127.0.0.1", t.port), timeout=5))
                slow = []
                for _ in range(50):
                    s = socket.create_connection(("127.0.0.1", t.port), timeout=5)
                    held.append(s)
                    slow.append(s)
                    if not t.tls:
                        s.sendall(f"GET {t.path} HTTP/1.1\r\nX-a: ".encode())
                worst = 0.0
                for _ in range(6):  # 3 s of dripping, /healthz asked every half second
                    for s in slow:
                        send_all(s, [b"\x16" if t.tls else b"a"])
                    worst = max(worst, healthz_seconds(t.health_port, t.health_tls))
                    time.sleep(0.5)
            finally:
                for s in held:
                    s.close()
            self.survived("250 slow clients", t, f"{worst * 1000:.0f}ms")

    def test_5_wrong_content_types_and_methods(self):
        for t in TARGETS:
            if t.tls:
                body = b'{"kind":"AdmissionReview"}'
                for ctype in ("text/plain", "application/x-www-form-urlencoded", ""):
                    extra = (f"Content-Type: {ctype}\r\n" if ctype else "") + \
                        f"Content-Length: {len(body)}\r\n"
                    status = request(t, head("POST", t.path, extra), [body])
                    self.assertEqual(status, 415, f"{t.name} {ctype!r}")
                self.assertEqual(request(t, head("GET", t.path)), 405)
            else:
                extra = "Content-Type: application/json\r\nContent-Length: 2\r\n"
                self.assertEqual(request(t, head("POST", t.path, extra), [b"{}"]), 405, t.name)
                self.assertEqual(request(t, head("GET", "/nope")), 404, t.name)
            self.survived("wrong types, methods", t, "ok")

    def test_6_malformed_admission_reviews(self):
        t = TARGETS[0]
        bodies = {
            "not JSON": b"{{{ not json",
            "not an object": b"[1, 2, 3]",
            "wrong kind": json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "Pod",
                                      "request": {"uid": "1"}}).encode(),
            "no request": json.dumps({"apiVersion": "admission.k8s.io/v1",
                                      "kind": "AdmissionReview"}).encode(),
            "request not object": json.dumps({"apiVersion": "admission.k8s.io/v1",
                                              "kind": "AdmissionReview",
                                              "request": "x"}).encode(),
            "empty": b"",
        }
        for path in ("/mutate-pod", "/validate-pod", "/validate-queue", "/validate-podgroup"):
            for what, body in bodies.items():
                extra = f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                status = request(t, head("POST", path, extra), [body])
                self.assertEqual(status, 400, f"{path}: {what}")
        self.survived("malformed reviews", t, 400)


class DeepJson(Survival):
    """400 KB of '[' and 100,000 nested objects to a `kai admission` of its own: doc::ParseJson
    is iterative and stops at 256 levels, so each is a 400 naming the limit."""

    def test_deep_json_is_a_400_not_a_crash(self):
        d = pathlib.Path(TMP.name)
        port = free_port()
        log = d / "admission.log"
        with log.open("w") as f:
            proc = subprocess.Popen(
                [str(KAI_BIN), "admission", "--bind-address", f"127.0.0.1:{port}",
                 "--tls-cert-file", str(d / "serving.crt"), "--tls-key-file",
                 str(d / "serving.key"), "--kubeconfig", SERVER.kubeconfig],
                stdout=subprocess.DEVNULL, stderr=f)
        try:
            t = Target("admission (alone)", port, True, "/validate-pod", port, True)
            kube_server.wait_until("kai admission serving", lambda: healthz_seconds(port, True),
                                   30, (OSError, ssl.SSLError, AssertionError), log)
            remember_idle_peak(proc)
            for body in (b"[" * 400_000, b'{"a":' * 100_000):
                extra = f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                status = request(t, head("POST", t.path, extra), [body])
                self.assertEqual(status, 400)
                self.survived("deep JSON", t, status, proc)
        finally:
            kube_server.stop_process(proc)


if __name__ == "__main__":
    unittest.main(verbosity=2)
