"""Tests of fake_apiserver.py through real HTTP. Run:
    python3 -m unittest discover -s tests/fakeapi -v
Each test starts its own server subprocess on a free port."""

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request
from urllib.parse import quote

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "fake_apiserver.py")
PODS = "/api/v1/namespaces/ns/pods"


class Aborted(Exception):
    """The watch stream ended without the terminating zero-length chunk."""


class Watch:
    """A watch read off a raw socket, so that the chunked framing itself is checked."""

    def __init__(self, port, path, timeout=5.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\n"
                          f"Accept: application/json\r\n\r\n".encode())
        self.buf = b""
        self.lines = []
        self.done = False
        head = self._until(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        self.status = int(lines[0].split()[1])
        self.headers = {k.strip().lower(): v.strip()
                        for k, v in (l.split(":", 1) for l in lines[1:] if l)}
        self.pending = b""

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise Aborted("connection closed")
        self.buf += data

    def _until(self, sep):
        while sep not in self.buf:
            self._fill()
        head, self.buf = self.buf.split(sep, 1)
        return head

    def _exact(self, n):
        while len(self.buf) < n:
            self._fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def next(self, timeout=5.0):
        """The next event (a dict); None after a clean end; raises Aborted or socket.timeout."""
        self.sock.settimeout(timeout)
        while b"\n" not in self.pending:
            if self.done:
                return None
            size = int(self._until(b"\r\n").split(b";")[0], 16)
            if size == 0:
                self._exact(2)
                self.done = True
                continue
            self.pending += self._exact(size)
            self._exact(2)
        line, self.pending = self.pending.split(b"\n", 1)
        return json.loads(line)

    def rest(self, timeout=5.0):
        out = []
        while True:
            ev = self.next(timeout)
            if ev is None:
                return out
            out.append(ev)

    def close(self):
        self.sock.close()


class FakeApi:
    def __init__(self, *args):
        self.tmp = tempfile.mkdtemp(prefix="fakeapi")
        self.port_file = os.path.join(self.tmp, "port")
        self.stderr = open(os.path.join(self.tmp, "stderr"), "w+")
        self.proc = subprocess.Popen(
            [sys.executable, SERVER, "--port", "0", "--port-file", self.port_file, *args],
            stdout=subprocess.PIPE, stderr=self.stderr, text=True)
        line = self.proc.stdout.readline()
        m = re.fullmatch(r"PORT (\d+)\n", line)
        if not m:
            self.proc.wait(10)
            self.stderr.seek(0)
            raise RuntimeError(f"server did not start: {line!r} {self.stderr.read()}")
        self.port = int(m.group(1))
        with open(self.port_file) as f:
            self.file_port = int(f.read().strip())

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            rc = "timeout"
        self.proc.stdout.close()
        self.stderr.seek(0)
        self.stderr_text = self.stderr.read()
        self.stderr.close()
        for f in os.listdir(self.tmp):
            os.unlink(os.path.join(self.tmp, f))
        os.rmdir(self.tmp)
        return rc

    def request(self, method, path, body=None, ctype="application/json", timeout=10,
                headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            data = None
            hdrs = {"Authorization": "Bearer anything", **(headers or {})}
            if body is not None:
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                hdrs["Content-Type"] = ctype
            conn.request(method, path, body=data, headers=hdrs)
            resp = conn.getresponse()
            raw = resp.read()
            ct = resp.getheader("Content-Type") or ""
            obj = json.loads(raw) if raw and ct.startswith("application/json") else raw
            return resp.status, resp, obj
        finally:
            conn.close()

    def ok(self, method, path, body=None, ctype="application/json"):
        status, _, obj = self.request(method, path, body, ctype)
        if status >= 300:
            raise AssertionError(f"{method} {path} -> {status} {obj}")
        return obj

    def control(self, method, route, body=None):
        return self.ok(method, "/_control/" + route, body)

    def faults(self, *rules):
        return self.control("POST", "faults", {"rules": list(rules)})

    def watch(self, path, timeout=5.0):
        w = Watch(self.port, path, timeout)
        self.watches.append(w)
        return w

    def wait_watches(self, n, timeout=5.0, exact=False):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            count = self.control("GET", "watches")["count"]
            if count == n or (count > n and not exact):
                return
            time.sleep(0.02)
        raise AssertionError(f"not {n} watches open")


def pod(name, ns="ns", labels=None, spec=None, **meta):
    m = {"name": name, "namespace": ns, **meta}
    if labels:
        m["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": m,
            "spec": spec or {"containers": [{"name": "c", "image": "i"}]}}


def rv(obj):
    return int(obj["metadata"]["resourceVersion"])


class Base(unittest.TestCase):
    server_args = ()

    def setUp(self):
        self.servers = []
        self.api = self.start(*self.server_args)

    def start(self, *args):
        api = FakeApi(*args)
        api.watches = []
        self.servers.append(api)
        return api

    def tearDown(self):
        for api in self.servers:
            for w in api.watches:
                w.close()
            self.assertEqual(api.stop(), 0, "the server must exit cleanly on SIGTERM")
            self.assertEqual(api.stderr_text, "", "the server must not complain")

    def assertStatus(self, obj, code, reason=None):
        self.assertEqual(obj["kind"], "Status")
        self.assertEqual(obj["apiVersion"], "v1")
        self.assertEqual(obj["status"], "Failure")
        self.assertEqual(obj["code"], code)
        self.assertIsInstance(obj["message"], str)
        if reason:
            self.assertEqual(obj["reason"], reason)

    def create_pods(self, n, **kw):
        return [self.api.ok("POST", PODS, pod(f"p{i}", **kw)) for i in range(1, n + 1)]


class TestBasics(Base):
    def test_port_file_and_stdout(self):
        self.assertEqual(self.api.port, self.api.file_port)
        self.assertEqual(self.api.request("GET", "/_control/healthz")[2], b"ok")
        self.assertFalse([f for f in os.listdir(self.api.tmp) if f not in ("port", "stderr")],
                         "no temp file left")

    def test_create_get_and_metadata(self):
        created = self.api.ok("POST", PODS, pod("p1"))
        m = created["metadata"]
        self.assertEqual((created["kind"], created["apiVersion"]), ("Pod", "v1"))
        self.assertRegex(m["uid"], r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$")
        self.assertRegex(m["creationTimestamp"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        self.assertEqual(m["namespace"], "ns")
        got = self.api.ok("GET", PODS + "/p1")
        self.assertEqual(got, created)
        second = self.api.ok("POST", PODS, pod("p2"))
        self.assertEqual(rv(second), rv(created) + 1)
        status, _, err = self.api.request("POST", PODS, pod("p1"))
        self.assertEqual(status, 409)
        self.assertStatus(err, 409, "AlreadyExists")
        gen = self.api.ok("POST", PODS, {"metadata": {"generateName": "worker-"}, "spec": {}})
        self.assertRegex(gen["metadata"]["name"], r"^worker-[a-z0-9]{5}$")
        status, _, err = self.api.request("GET", PODS + "/nope")
        self.assertEqual(status, 404)
        self.assertStatus(err, 404, "NotFound")

    def test_unknown_paths_are_404_status(self):
        for path in ("/api/v1/widgets", "/apis/nope.io/v1/things", "/api/v1/pods/p1",
                     "/api/v1/namespaces/ns/nodes", "/healthzz", "/api/v1/namespaces/ns/pods/p/x/y"):
            status, _, err = self.api.request("GET", path)
            self.assertEqual(status, 404, path)
            self.assertStatus(err, 404, "NotFound")

    def test_all_resources_and_paths(self):
        cases = [
            ("/api/v1/nodes", "Node", "v1", None),
            ("/api/v1/namespaces", "Namespace", "v1", None),
            ("/api/v1/namespaces/ns/events", "Event", "v1", "ns"),
            ("/api/v1/namespaces/ns/configmaps", "ConfigMap", "v1", "ns"),
            ("/apis/scheduling.run.ai/v2/queues", "Queue", "scheduling.run.ai/v2", None),
            ("/apis/scheduling.run.ai/v2alpha2/namespaces/ns/podgroups", "PodGroup",
             "scheduling.run.ai/v2alpha2", "ns"),
            ("/apis/scheduling.run.ai/v1alpha2/namespaces/ns/bindrequests", "BindRequest",
             "scheduling.run.ai/v1alpha2", "ns"),
            ("/apis/scheduling.k8s.io/v1/priorityclasses", "PriorityClass", "scheduling.k8s.io/v1",
             None),
            ("/apis/kai.scheduler/v1alpha1/topologies", "Topology", "kai.scheduler/v1alpha1", None),
            ("/apis/kai.scheduler/v1/schedulingshards", "SchedulingShard", "kai.scheduler/v1", None),
            ("/apis/coordination.k8s.io/v1/namespaces/ns/leases", "Lease", "coordination.k8s.io/v1",
             "ns"),
            ("/apis/events.k8s.io/v1/namespaces/ns/events", "Event", "events.k8s.io/v1", "ns"),
        ]
        for coll, kind, av, ns in cases:
            obj = self.api.ok("POST", coll, {"metadata": {"name": "x"}, "spec": {"a": 1}})
            self.assertEqual((obj["kind"], obj["apiVersion"]), (kind, av), coll)
            self.assertEqual(obj["metadata"].get("namespace"), ns, coll)
            self.assertEqual(self.api.ok("GET", coll + "/x")["metadata"]["uid"], obj["metadata"]["uid"])
            lst = self.api.ok("GET", coll)
            self.assertEqual((lst["kind"], lst["apiVersion"]), (kind + "List", av))
            self.assertEqual([i["metadata"]["name"] for i in lst["items"]], ["x"])
        # All-namespaces lists of namespaced resources.
        lst = self.api.ok("GET", "/apis/scheduling.run.ai/v2alpha2/podgroups")
        self.assertEqual(len(lst["items"]), 1)
        status, _, _ = self.api.request("PUT", "/apis/scheduling.run.ai/v2/queues/x/status",
                                        {"metadata": {"name": "x"}, "status": {"a": 1}})
        self.assertEqual(status, 200)

    def test_core_and_events_api_groups_are_separate(self):
        self.api.ok("POST", "/api/v1/namespaces/ns/events", {"metadata": {"name": "e"}})
        self.assertEqual(self.api.ok("GET", "/apis/events.k8s.io/v1/events")["items"], [])


class TestList(Base):
    def test_paging_is_consistent_with_first_page(self):
        self.create_pods(5)
        first = self.api.ok("GET", PODS + "?limit=2")
        list_rv = first["metadata"]["resourceVersion"]
        self.assertEqual([p["metadata"]["name"] for p in first["items"]], ["p1", "p2"])
        token = first["metadata"]["continue"]
        # Writes between pages must not show up in later pages.
        self.api.ok("POST", PODS, pod("p25"))
        self.api.ok("DELETE", PODS + "/p5")
        self.api.ok("PATCH", PODS + "/p3", {"metadata": {"labels": {"changed": "yes"}}},
                    "application/merge-patch+json")
        second = self.api.ok("GET", PODS + "?limit=2&continue=" + quote(token))
        self.assertEqual(second["metadata"]["resourceVersion"], list_rv)
        self.assertEqual([p["metadata"]["name"] for p in second["items"]], ["p3", "p4"])
        self.assertNotIn("labels", second["items"][0]["metadata"])
        third = self.api.ok("GET", PODS + "?limit=2&continue=" + quote(second["metadata"]["continue"]))
        self.assertEqual(third["metadata"]["resourceVersion"], list_rv)
        self.assertEqual([p["metadata"]["name"] for p in third["items"]], ["p5"])
        self.assertNotIn("continue", third["metadata"])
        # A fresh list sees the present.
        now = self.api.ok("GET", PODS)
        self.assertEqual([p["metadata"]["name"] for p in now["items"]], ["p1", "p2", "p25", "p3", "p4"])
        self.assertGreater(int(now["metadata"]["resourceVersion"]), int(list_rv))
        # Once compacted, the token is expired.
        self.api.control("POST", "compact")
        status, _, err = self.api.request("GET", PODS + "?limit=2&continue=" + quote(token))
        self.assertEqual(status, 410)
        self.assertStatus(err, 410, "Expired")

    def test_list_sorted_across_namespaces(self):
        for ns, name in (("b", "x"), ("a", "y"), ("a", "b")):
            self.api.ok("POST", f"/api/v1/namespaces/{ns}/pods", pod(name, ns=ns))
        items = self.api.ok("GET", "/api/v1/pods")["items"]
        self.assertEqual([(p["metadata"]["namespace"], p["metadata"]["name"]) for p in items],
                         [("a", "b"), ("a", "y"), ("b", "x")])
        self.assertEqual(len(self.api.ok("GET", "/api/v1/namespaces/a/pods")["items"]), 2)

    def test_label_selectors(self):
        self.api.ok("POST", PODS, pod("ab", labels={"a": "b"}))
        self.api.ok("POST", PODS, pod("ac", labels={"a": "c", "x": "1"}))
        self.api.ok("POST", PODS, pod("none"))

        def names(sel):
            return [p["metadata"]["name"]
                    for p in self.api.ok("GET", PODS + "?labelSelector=" + quote(sel))["items"]]
        self.assertEqual(names("a=b"), ["ab"])
        self.assertEqual(names("a==b"), ["ab"])
        self.assertEqual(names("a!=b"), ["ac", "none"])
        self.assertEqual(names("a"), ["ab", "ac"])
        self.assertEqual(names("!a"), ["none"])
        self.assertEqual(names("a,x=1"), ["ac"])
        self.assertEqual(names("a=c,!x"), [])
        self.assertEqual(names("a in (b,c)"), ["ab", "ac"])
        self.assertEqual(names("a notin (b)"), ["ac", "none"])
        self.assertEqual(names(""), ["ab", "ac", "none"])
        status, _, err = self.api.request("GET", PODS + "?labelSelector=" + quote("a=b=c"))
        self.assertEqual(status, 400)
        self.assertStatus(err, 400, "BadRequest")

    def test_field_selectors(self):
        self.api.ok("POST", PODS, pod("a", spec={"schedulerName": "kai", "nodeName": "n1"}))
        self.api.ok("POST", PODS, pod("b", spec={"schedulerName": "kai"}))
        self.api.ok("POST", "/api/v1/namespaces/other/pods", pod("c", ns="other",
                                                                 spec={"schedulerName": "default"}))

        def names(sel, path="/api/v1/pods"):
            return [p["metadata"]["name"]
                    for p in self.api.ok("GET", path + "?fieldSelector=" + quote(sel))["items"]]
        self.assertEqual(names("spec.schedulerName=kai"), ["a", "b"])
        self.assertEqual(names("spec.nodeName=n1"), ["a"])
        self.assertEqual(names("spec.nodeName="), ["b", "c"])
        self.assertEqual(names("spec.nodeName!="), ["a"])
        self.assertEqual(names("metadata.name=c"), ["c"])
        self.assertEqual(names("metadata.namespace=ns"), ["a", "b"])
        self.assertEqual(names("spec.schedulerName=kai,spec.nodeName="), ["b"])
        self.assertEqual(names("status.phase=Pending"), ["a", "b", "c"])
        self.assertEqual(names("spec.schedulerName=kai", PODS + "?limit=1&x=") , ["a"])

    def test_limit_with_selector_fills_pages(self):
        for i in range(6):
            self.api.ok("POST", PODS, pod(f"p{i}", labels={"even": str(i % 2 == 0).lower()}))
        page = self.api.ok("GET", PODS + "?limit=2&labelSelector=even%3Dtrue")
        self.assertEqual([p["metadata"]["name"] for p in page["items"]], ["p0", "p2"])
        page = self.api.ok("GET", PODS + "?limit=2&labelSelector=even%3Dtrue&continue="
                           + quote(page["metadata"]["continue"]))
        self.assertEqual([p["metadata"]["name"] for p in page["items"]], ["p4"])
        self.assertNotIn("continue", page["metadata"])


class TestWatch(Base):
    def test_replay_then_live(self):
        p1, p2, p3 = self.create_pods(3)
        w = self.api.watch(PODS + f"?watch=1&resourceVersion={rv(p1)}")
        self.assertEqual(w.status, 200)
        self.assertEqual(w.headers["transfer-encoding"], "chunked")
        self.assertTrue(w.headers["content-type"].startswith("application/json"))
        ev = w.next()
        self.assertEqual((ev["type"], ev["object"]["metadata"]["name"]), ("ADDED", "p2"))
        self.assertEqual(ev["object"]["kind"], "Pod")
        self.assertEqual(w.next()["object"]["metadata"]["name"], "p3")
        p4 = self.api.ok("POST", PODS, pod("p4"))
        ev = w.next()
        self.assertEqual((ev["type"], rv(ev["object"])), ("ADDED", rv(p4)))
        self.api.ok("PATCH", PODS + "/p4", {"metadata": {"labels": {"k": "v"}}},
                    "application/merge-patch+json")
        ev = w.next()
        self.assertEqual(ev["type"], "MODIFIED")
        self.assertEqual(ev["object"]["metadata"]["labels"], {"k": "v"})
        deleted = self.api.ok("DELETE", PODS + "/p4")
        ev = w.next()
        self.assertEqual(ev["type"], "DELETED")
        self.assertEqual(ev["object"]["metadata"]["labels"], {"k": "v"})
        self.assertEqual(rv(ev["object"]), rv(deleted))
        self.assertGreater(rv(deleted), rv(p4) + 1)
        # Other namespaces and other resources do not show up.
        self.api.ok("POST", "/api/v1/namespaces/other/pods", pod("o", ns="other"))
        self.api.ok("POST", "/api/v1/nodes", {"metadata": {"name": "n"}})
        self.api.ok("POST", PODS, pod("p5"))
        self.assertEqual(w.next()["object"]["metadata"]["name"], "p5")

    def test_rv_zero_or_absent_is_live_only(self):
        self.create_pods(2)
        for q in ("?watch=true&resourceVersion=0", "?watch=1"):
            w = self.api.watch(PODS + q)
            self.api.wait_watches(1)
            self.api.ok("POST", PODS, pod("live" + str(len(q))))
            ev = w.next()
            self.assertEqual((ev["type"], ev["object"]["metadata"]["name"]), ("ADDED", "live" + str(len(q))))
            w.close()
            self.api.wait_watches(0, exact=True)  # the server notices the closed watch

    def test_watch_from_a_future_rv(self):
        now = int(self.api.ok("GET", PODS)["metadata"]["resourceVersion"])
        w = self.api.watch(PODS + f"?watch=1&resourceVersion={now + 2}")
        self.api.wait_watches(1)
        self.create_pods(3)
        ev = w.next()
        self.assertEqual((ev["object"]["metadata"]["name"], rv(ev["object"])), ("p3", now + 3))

    def test_all_namespaces_watch_and_selector_transitions(self):
        start = self.api.ok("GET", "/api/v1/pods")["metadata"]["resourceVersion"]
        w = self.api.watch(f"/api/v1/pods?watch=1&resourceVersion={start}&labelSelector=app%3Dx")
        self.api.ok("POST", "/api/v1/namespaces/a/pods", pod("p", ns="a", labels={"app": "x"}))
        self.api.ok("POST", "/api/v1/namespaces/b/pods", pod("q", ns="b", labels={"app": "y"}))
        mp = "application/merge-patch+json"
        self.api.ok("PATCH", "/api/v1/namespaces/a/pods/p", {"metadata": {"labels": {"app": "z"}}}, mp)
        self.api.ok("PATCH", "/api/v1/namespaces/b/pods/q", {"metadata": {"labels": {"app": "x"}}}, mp)
        evs = [w.next() for _ in range(3)]
        self.assertEqual([(e["type"], e["object"]["metadata"]["name"]) for e in evs],
                         [("ADDED", "p"), ("DELETED", "p"), ("ADDED", "q")])
        self.assertEqual(evs[1]["object"]["metadata"]["labels"], {"app": "x"})  # last matching state

    def test_field_selector_watch(self):
        w = self.api.watch(PODS + "?watch=1&fieldSelector=spec.nodeName%3D")
        self.api.wait_watches(1)
        self.api.ok("POST", PODS, pod("p"))
        self.assertEqual(w.next()["type"], "ADDED")
        self.api.ok("POST", PODS + "/p/binding", {"target": {"kind": "Node", "name": "n1"}})
        self.assertEqual(w.next()["type"], "DELETED")

    def test_periodic_bookmarks(self):
        api = self.start("--bookmark-interval", "0.2")
        created = api.ok("POST", PODS, pod("p"))
        w2 = api.watch(PODS + f"?watch=1&resourceVersion={rv(created)}&timeoutSeconds=1")
        w = api.watch(PODS + f"?watch=1&resourceVersion={rv(created)}&allowWatchBookmarks=true")
        t0 = time.monotonic()
        ev = w.next(timeout=3)
        self.assertEqual(ev["type"], "BOOKMARK")
        self.assertLess(time.monotonic() - t0, 2)
        self.assertEqual(ev["object"], {"kind": "Pod", "apiVersion": "v1",
                                        "metadata": {"resourceVersion": str(rv(created))}})
        api.ok("POST", "/api/v1/nodes", {"metadata": {"name": "n"}})  # another resource bumps RV
        for _ in range(5):
            ev = w.next(timeout=3)
            if rv(ev["object"]) == rv(created) + 1:
                break
        self.assertEqual(ev["type"], "BOOKMARK")
        self.assertEqual(rv(ev["object"]), rv(created) + 1)
        # No bookmarks without allowWatchBookmarks (w2 ran alongside for its 1 s).
        self.assertEqual([e["type"] for e in w2.rest(timeout=3)], [])

    def test_bookmark_on_request(self):
        api = self.start("--bookmark-interval", "100")
        w = api.watch(PODS + "?watch=1&allowWatchBookmarks=1")
        plain = api.watch(PODS + "?watch=1")
        api.wait_watches(2)
        api.ok("POST", PODS, pod("p"))
        out = api.control("POST", "bookmark")
        self.assertEqual(out["watches"], 1)
        self.assertEqual(w.next()["type"], "ADDED")
        ev = w.next()
        self.assertEqual(ev["type"], "BOOKMARK")
        self.assertEqual(ev["object"]["metadata"]["resourceVersion"], out["resourceVersion"])
        api.control("POST", "close-watches")
        self.assertEqual([e["type"] for e in plain.rest(timeout=3)], ["ADDED"])

    def test_expired_in_stream_after_compaction(self):
        p1, _ = self.create_pods(2)
        self.api.control("POST", "compact")
        w = self.api.watch(PODS + f"?watch=1&resourceVersion={rv(p1)}")
        self.assertEqual(w.status, 200)
        events = w.rest()
        self.assertEqual(len(events), 1)
        ev = events[0]
        self.assertEqual(ev["type"], "ERROR")
        self.assertEqual(ev["object"]["code"], 410)
        self.assertEqual(ev["object"]["reason"], "Expired")
        self.assertEqual(ev["object"]["kind"], "Status")
        self.assertRegex(ev["object"]["message"], rf"^too old resource version: {rv(p1)} \(\d+\)$")
        # The current RV is still fine.
        now = self.api.ok("GET", PODS)["metadata"]["resourceVersion"]
        w = self.api.watch(PODS + f"?watch=1&resourceVersion={now}")
        self.api.wait_watches(1)
        self.api.ok("POST", PODS, pod("p9"))
        self.assertEqual(w.next()["type"], "ADDED")

    def test_history_limit(self):
        api = self.start("--history-limit", "3")
        objs = [api.ok("POST", PODS, pod(f"p{i}")) for i in range(5)]
        w = api.watch(PODS + f"?watch=1&resourceVersion={rv(objs[0])}")
        self.assertEqual(w.rest()[0]["type"], "ERROR")
        w = api.watch(PODS + f"?watch=1&resourceVersion={rv(objs[1])}")
        self.assertEqual([w.next()["object"]["metadata"]["name"] for _ in range(3)], ["p2", "p3", "p4"])

    def test_timeout_seconds_and_close_watches(self):
        t0 = time.monotonic()
        w = self.api.watch(PODS + "?watch=1&timeoutSeconds=1")
        self.assertEqual(w.rest(timeout=5), [])
        self.assertGreater(time.monotonic() - t0, 0.9)
        ws = [self.api.watch(PODS + "?watch=1"), self.api.watch("/api/v1/nodes?watch=1")]
        self.api.wait_watches(2)
        self.assertEqual(self.api.control("POST", "close-watches")["watches"], 2)
        for w in ws:
            self.assertEqual(w.rest(timeout=3), [])  # clean end: terminating chunk seen
        self.assertEqual(self.api.control("GET", "watches")["count"], 0)

    def test_watch_and_requests_on_one_connection_pool(self):
        # A watch does not block other requests (threaded server).
        w = self.api.watch(PODS + "?watch=1")
        self.api.wait_watches(1)
        for i in range(5):
            self.api.ok("POST", PODS, pod(f"c{i}"))
        self.assertEqual([w.next()["object"]["metadata"]["name"] for _ in range(5)],
                         [f"c{i}" for i in range(5)])


class TestFaults(Base):
    def test_429_with_retry_after(self):
        self.api.faults({"method": "GET", "path": "/pods$", "action": {"status": 429, "retry_after": 2}})
        status, resp, err = self.api.request("GET", PODS)
        self.assertEqual(status, 429)
        self.assertEqual(resp.getheader("Retry-After"), "2")
        self.assertStatus(err, 429, "TooManyRequests")
        self.assertEqual(err["details"]["retryAfterSeconds"], 2)
        self.assertEqual(self.api.request("GET", PODS)[0], 200)  # times defaults to 1

    def test_5xx_and_times(self):
        self.api.faults({"method": "*", "path": "/pods", "times": 2, "action": {"status": 500}},
                        {"method": "GET", "path": "/nodes", "times": -1, "action": {"status": 503}},
                        {"method": "GET", "path": "/queues", "action": {"status": 504}})
        codes = [self.api.request("GET", PODS)[0] for _ in range(3)]
        self.assertEqual(codes, [500, 500, 200])
        status, _, err = self.api.request("GET", "/api/v1/pods")
        self.assertEqual(status, 200)
        for _ in range(3):
            status, _, err = self.api.request("GET", "/api/v1/nodes")
            self.assertEqual(status, 503)
            self.assertStatus(err, 503, "ServiceUnavailable")
        status, _, err = self.api.request("GET", "/apis/scheduling.run.ai/v2/queues")
        self.assertStatus(err, 504, "Timeout")
        rules = self.api.control("GET", "faults")["rules"]
        self.assertEqual([r["times"] for r in rules], [0, -1, 0])
        self.api.control("DELETE", "faults")
        self.assertEqual(self.api.request("GET", "/api/v1/nodes")[0], 200)

    def test_409_on_write_is_not_applied(self):
        self.api.faults({"method": "POST", "path": "/pods$", "action": {"status": 409}})
        status, _, err = self.api.request("POST", PODS, pod("p"))
        self.assertEqual(status, 409)
        self.assertStatus(err, 409, "Conflict")
        self.assertEqual(self.api.request("GET", PODS + "/p")[0], 404)
        self.assertEqual(self.api.control("GET", "objects?apiVersion=v1&kind=Pod")["items"], [])

    def test_apply_then_status(self):
        self.api.faults({"method": "POST", "path": "/pods$", "action": {"apply_then_status": 500}})
        status, _, err = self.api.request("POST", PODS, pod("p"))
        self.assertEqual(status, 500)
        self.assertStatus(err, 500, "InternalError")
        self.assertEqual(self.api.request("GET", PODS + "/p")[0], 200)
        status, _, err = self.api.request("POST", PODS, pod("p"))
        self.assertStatus(err, 409, "AlreadyExists")
        # A retried binding must not bind twice.
        self.api.faults({"method": "POST", "path": "/binding$", "action": {"apply_then_status": 500}})
        binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
                   "target": {"kind": "Node", "name": "n1"}}
        self.assertEqual(self.api.request("POST", PODS + "/p/binding", binding)[0], 500)
        self.assertEqual(self.api.ok("GET", PODS + "/p")["spec"]["nodeName"], "n1")
        status, _, err = self.api.request("POST", PODS + "/p/binding", binding)
        self.assertStatus(err, 409, "Conflict")
        log = self.api.control("GET", "log")
        self.assertEqual([e["fault"] for e in log if e["method"] == "POST"],
                         ["apply_then_status", None, "apply_then_status", None])

    def test_410_list_and_plain_410_watch(self):
        self.api.faults({"method": "GET", "path": "/pods$", "watch": False, "action": {"status": 410}},
                        {"method": "GET", "path": "/pods$", "watch": True, "action": {"status": 410}})
        status, _, err = self.api.request("GET", PODS)
        self.assertStatus(err, 410, "Expired")
        status, resp, err = self.api.request("GET", PODS + "?watch=1&resourceVersion=1")
        self.assertEqual(status, 410)
        self.assertStatus(err, 410, "Expired")
        self.assertIsNotNone(resp.getheader("Content-Length"))

    def test_delay(self):
        self.api.faults({"method": "GET", "path": "/nodes$", "action": {"delay_ms": 400}})
        t0 = time.monotonic()
        self.assertEqual(self.api.request("GET", "/api/v1/nodes")[0], 200)
        self.assertGreaterEqual(time.monotonic() - t0, 0.4)
        t0 = time.monotonic()
        self.api.request("GET", "/api/v1/nodes")
        self.assertLess(time.monotonic() - t0, 0.39)

    def test_truncate_after_bytes(self):
        self.create_pods(3)
        full = json.dumps(self.api.ok("GET", PODS)).encode()
        self.api.faults({"method": "GET", "path": "/pods$", "action": {"truncate_after_bytes": 20}})
        conn = http.client.HTTPConnection("127.0.0.1", self.api.port, timeout=5)
        conn.request("GET", PODS)
        resp = conn.getresponse()
        self.assertEqual(resp.status, 200)
        self.assertGreater(int(resp.getheader("Content-Length")), 20)
        with self.assertRaises(http.client.IncompleteRead) as cm:
            resp.read()
        self.assertEqual(len(cm.exception.partial), 20)
        conn.close()
        self.assertGreater(len(full), 20)
        self.assertEqual(self.api.request("GET", PODS)[0], 200)

    def test_drop_after_events(self):
        p1 = self.create_pods(4)[0]
        self.api.faults({"method": "GET", "path": "/pods$", "watch": True,
                         "action": {"drop_after_events": 2}})
        w = self.api.watch(PODS + f"?watch=1&resourceVersion={rv(p1)}")
        self.assertEqual([w.next()["object"]["metadata"]["name"] for _ in range(2)], ["p2", "p3"])
        with self.assertRaises(Aborted):
            w.next(timeout=3)
        # Live events count too; and the next watch is normal.
        self.api.faults({"path": "/pods$", "watch": True, "action": {"drop_after_events": 1}})
        w = self.api.watch(PODS + "?watch=1")
        self.api.wait_watches(1)
        self.api.ok("POST", PODS, pod("p9"))
        self.assertEqual(w.next()["object"]["metadata"]["name"], "p9")
        with self.assertRaises(Aborted):
            w.next(timeout=3)
        w = self.api.watch(PODS + f"?watch=1&resourceVersion={rv(p1)}")
        self.api.wait_watches(1)
        self.api.control("POST", "close-watches")
        self.assertEqual(len(w.rest()), 4)

    def test_hang(self):
        self.api.faults({"method": "GET", "path": "/nodes$", "action": {"hang": True}})
        t0 = time.monotonic()
        with self.assertRaises(socket.timeout):
            self.api.request("GET", "/api/v1/nodes", timeout=0.5)
        self.assertLess(time.monotonic() - t0, 2)
        self.assertEqual(self.api.request("GET", "/api/v1/nodes")[0], 200)
        log = self.api.control("GET", "log")
        self.assertEqual(log[0]["fault"], "hang")
        self.assertIsNone(log[0]["status"])
        # A short hang_seconds closes the connection without an answer.
        self.api.faults({"path": "/nodes$", "action": {"hang": True, "hang_seconds": 0.3}})
        with self.assertRaises((http.client.RemoteDisconnected, ConnectionResetError)):
            self.api.request("GET", "/api/v1/nodes", timeout=5)

    def test_rule_matching(self):
        self.api.faults({"method": "POST", "path": "/pods$", "times": -1, "action": {"status": 500}},
                        {"method": "GET", "path": "^/api/v1/nodes$", "watch": True, "action": {"status": 503}},
                        {"method": "GET", "path": "/configmaps", "query": "limit=", "action": {"status": 500}})
        self.assertEqual(self.api.request("GET", PODS)[0], 200)        # method differs
        self.assertEqual(self.api.request("POST", PODS, pod("a"))[0], 500)
        self.assertEqual(self.api.request("GET", "/api/v1/nodes")[0], 200)  # not a watch
        w = self.api.watch("/api/v1/nodes?watch=true")
        self.assertEqual(w.status, 503)
        self.assertEqual(self.api.request("GET", "/api/v1/namespaces/ns/configmaps")[0], 200)
        self.assertEqual(self.api.request("GET", "/api/v1/namespaces/ns/configmaps?limit=5")[0], 500)
        # Control requests are never faulted.
        self.api.faults({"method": "*", "path": "", "times": -1, "action": {"status": 500}})
        self.assertEqual(self.api.request("GET", "/_control/healthz")[0], 200)
        status, _, err = self.api.request("POST", "/_control/faults",
                                          {"rules": [{"path": "(", "action": {"status": 500}}]})
        self.assertEqual(status, 400)

    def test_request_log(self):
        self.api.ok("POST", PODS, pod("p"))
        self.api.ok("PATCH", PODS + "/p", {"metadata": {"labels": {"a": "b"}}},
                    "application/merge-patch+json")
        self.api.faults({"path": "/nodes", "action": {"status": 500}})
        self.api.request("GET", "/api/v1/nodes?limit=5&labelSelector=a")
        log = self.api.control("GET", "log")
        self.assertEqual([(e["method"], e["path"], e["status"], e["fault"]) for e in log],
                         [("POST", PODS, 201, None), ("PATCH", PODS + "/p", 200, None),
                          ("GET", "/api/v1/nodes", 500, "status")])
        self.assertEqual(log[1]["content_type"], "application/merge-patch+json")
        self.assertEqual(log[2]["query"], "limit=5&labelSelector=a")
        self.assertEqual(log[0]["body"]["metadata"]["name"], "p")
        self.api.control("DELETE", "log")
        self.assertEqual(self.api.control("GET", "log"), [])


class TestWrites(Base):
    MP = "application/merge-patch+json"
    SMP = "application/strategic-merge-patch+json"
    JP = "application/json-patch+json"

    def test_merge_patch(self):
        self.api.ok("POST", PODS, pod("p", labels={"a": "1", "b": "2"}))
        out = self.api.ok("PATCH", PODS + "/p",
                          {"metadata": {"labels": {"a": None, "c": "3"}}, "spec": {"priority": 5}}, self.MP)
        self.assertEqual(out["metadata"]["labels"], {"b": "2", "c": "3"})
        self.assertEqual(out["spec"]["priority"], 5)
        self.assertEqual(out["spec"]["containers"], [{"name": "c", "image": "i"}])
        self.assertEqual(self.api.ok("GET", PODS + "/p"), out)
        status, _, err = self.api.request("PATCH", PODS + "/p", {"a": 1}, "application/json")
        self.assertStatus(err, 415, "UnsupportedMediaType")
        status, _, err = self.api.request("PATCH", PODS + "/nope", {"a": 1}, self.MP)
        self.assertStatus(err, 404, "NotFound")

    def test_strategic_merge_patch_conditions(self):
        self.api.ok("POST", "/api/v1/nodes", {"metadata": {"name": "n"}, "status": {"conditions": [
            {"type": "Ready", "status": "False"}, {"type": "DiskPressure", "status": "False"}]}})
        out = self.api.ok("PATCH", "/api/v1/nodes/n/status", {"status": {"conditions": [
            {"type": "Ready", "status": "True", "reason": "KubeletReady"},
            {"type": "PIDPressure", "status": "False"}]},
            "$setElementOrder/conditions": [{"type": "Ready"}]}, self.SMP)
        self.assertEqual(out["status"]["conditions"], [
            {"type": "Ready", "status": "True", "reason": "KubeletReady"},
            {"type": "DiskPressure", "status": "False"},
            {"type": "PIDPressure", "status": "False"}])
        out = self.api.ok("PATCH", "/api/v1/nodes/n/status", {"status": {"conditions": [
            {"type": "DiskPressure", "$patch": "delete"}]}}, self.SMP)
        self.assertEqual([c["type"] for c in out["status"]["conditions"]], ["Ready", "PIDPressure"])
        # Other lists are replaced; labels merge like a merge patch.
        out = self.api.ok("PATCH", "/api/v1/nodes/n", {"metadata": {"labels": {"x": "y"}},
                                                        "spec": {"taints": [{"key": "k"}]}}, self.SMP)
        self.assertEqual(out["metadata"]["labels"], {"x": "y"})
        out = self.api.ok("PATCH", "/api/v1/nodes/n", {"spec": {"taints": [{"key": "j"}]}}, self.SMP)
        self.assertEqual(out["spec"]["taints"], [{"key": "j"}])

    def test_json_patch(self):
        self.api.ok("POST", PODS, pod("p", labels={"a": "1"}))
        out = self.api.ok("PATCH", PODS + "/p", [
            {"op": "test", "path": "/metadata/labels/a", "value": "1"},
            {"op": "add", "path": "/metadata/labels/b~1c", "value": "2"},
            {"op": "replace", "path": "/metadata/labels/a", "value": "9"},
            {"op": "add", "path": "/spec/containers/-", "value": {"name": "d"}},
            {"op": "remove", "path": "/spec/containers/0"},
            {"op": "add", "path": "/metadata/finalizers", "value": ["f"]},
        ], self.JP)
        self.assertEqual(out["metadata"]["labels"], {"a": "9", "b/c": "2"})
        self.assertEqual(out["spec"]["containers"], [{"name": "d"}])
        self.assertEqual(out["metadata"]["finalizers"], ["f"])
        before = self.api.ok("GET", PODS + "/p")
        status, _, err = self.api.request("PATCH", PODS + "/p", [
            {"op": "replace", "path": "/metadata/labels/a", "value": "0"},
            {"op": "test", "path": "/metadata/labels/a", "value": "1"}], self.JP)
        self.assertEqual(status, 422)
        self.assertStatus(err, 422, "Invalid")
        status, _, err = self.api.request("PATCH", PODS + "/p", [
            {"op": "remove", "path": "/metadata/nope"}], self.JP)
        self.assertEqual(status, 422)
        self.assertEqual(self.api.ok("GET", PODS + "/p"), before)

    def test_put_and_patch_conflicts(self):
        created = self.api.ok("POST", PODS, pod("p"))
        upd = json.loads(json.dumps(created))
        upd["metadata"]["labels"] = {"v": "1"}
        out = self.api.ok("PUT", PODS + "/p", upd)
        self.assertEqual(rv(out), rv(created) + 1)
        status, _, err = self.api.request("PUT", PODS + "/p", upd)  # stale RV
        self.assertEqual(status, 409)
        self.assertStatus(err, 409, "Conflict")
        self.assertEqual(err["details"]["name"], "p")
        del upd["metadata"]["resourceVersion"]
        upd["metadata"]["labels"] = {"v": "2"}
        out2 = self.api.ok("PUT", PODS + "/p", upd)  # unconditional
        self.assertEqual(out2["metadata"]["labels"], {"v": "2"})
        self.assertEqual(out2["metadata"]["uid"], created["metadata"]["uid"])
        self.assertEqual(self.api.ok("PUT", PODS + "/p", out2), out2)  # no-op: RV unchanged
        status, _, err = self.api.request("PATCH", PODS + "/p", {"metadata": {
            "resourceVersion": created["metadata"]["resourceVersion"], "labels": {"v": "3"}}}, self.MP)
        self.assertStatus(err, 409, "Conflict")
        status, _, err = self.api.request("PUT", PODS + "/nope", pod("nope"))
        self.assertStatus(err, 404, "NotFound")
        status, _, err = self.api.request("PUT", PODS + "/p", pod("other"))
        self.assertStatus(err, 400, "BadRequest")

    def test_delete_with_finalizers(self):
        created = self.api.ok("POST", PODS, pod("p", finalizers=["kai/x"]))
        w = self.api.watch(PODS + f"?watch=1&resourceVersion={rv(created)}")
        out = self.api.ok("DELETE", PODS + "/p", {"kind": "DeleteOptions", "apiVersion": "v1",
                                                  "gracePeriodSeconds": 30})
        self.assertRegex(out["metadata"]["deletionTimestamp"], r"Z$")
        self.assertEqual(out["metadata"]["deletionGracePeriodSeconds"], 30)
        ev = w.next()
        self.assertEqual(ev["type"], "MODIFIED")
        self.assertIn("deletionTimestamp", ev["object"]["metadata"])
        self.assertEqual(self.api.ok("GET", PODS + "/p")["metadata"]["deletionTimestamp"],
                         out["metadata"]["deletionTimestamp"])
        self.assertEqual(self.api.ok("DELETE", PODS + "/p"), out)  # again: no change
        gone = self.api.ok("PATCH", PODS + "/p", {"metadata": {"finalizers": None}}, self.MP)
        ev = w.next()
        self.assertEqual(ev["type"], "DELETED")
        self.assertEqual(rv(ev["object"]), rv(gone))
        self.assertEqual(self.api.request("GET", PODS + "/p")[0], 404)

    def test_delete_preconditions(self):
        created = self.api.ok("POST", PODS, pod("p"))
        status, _, err = self.api.request("DELETE", PODS + "/p", {"preconditions": {"uid": "other"}})
        self.assertStatus(err, 409, "Conflict")
        status, _, err = self.api.request("DELETE", PODS + "/p", {"preconditions": {"resourceVersion": "1"}})
        self.assertStatus(err, 409, "Conflict")
        out = self.api.ok("DELETE", PODS + "/p?gracePeriodSeconds=0",
                          {"preconditions": {"uid": created["metadata"]["uid"],
                                             "resourceVersion": created["metadata"]["resourceVersion"]}})
        self.assertEqual(out["metadata"]["uid"], created["metadata"]["uid"])
        self.assertEqual(self.api.request("GET", PODS + "/p")[0], 404)
        self.assertStatus(self.api.request("DELETE", PODS + "/p")[2], 404, "NotFound")

    def test_status_subresource(self):
        created = self.api.ok("POST", PODS, dict(pod("p"), status={"phase": "Running"}))
        self.assertEqual(created["status"], {"phase": "Pending"})
        upd = json.loads(json.dumps(created))
        upd["status"] = {"phase": "Failed"}
        upd["spec"]["priority"] = 3
        out = self.api.ok("PUT", PODS + "/p", upd)
        self.assertEqual(out["status"], {"phase": "Pending"})  # main resource ignores status
        self.assertEqual(out["spec"]["priority"], 3)
        upd = json.loads(json.dumps(out))
        upd["status"] = {"phase": "Running"}
        upd["spec"]["priority"] = 99
        upd["metadata"]["labels"] = {"ignored": "yes"}
        out2 = self.api.ok("PUT", PODS + "/p/status", upd)
        self.assertEqual(out2["status"], {"phase": "Running"})
        self.assertEqual(out2["spec"]["priority"], 3)
        self.assertNotIn("labels", out2["metadata"])
        self.assertStatus(self.api.request("PUT", PODS + "/p/status", upd)[2], 409, "Conflict")
        out3 = self.api.ok("PATCH", PODS + "/p/status", {"status": {"phase": "Succeeded"},
                                                        "spec": {"priority": 1}}, self.MP)
        self.assertEqual((out3["status"]["phase"], out3["spec"]["priority"]), ("Succeeded", 3))
        out4 = self.api.ok("PATCH", PODS + "/p", {"status": {"phase": "Unknown"}}, self.MP)
        self.assertEqual(out4["status"]["phase"], "Succeeded")
        self.assertEqual(rv(out4), rv(out3))  # nothing changed: no write
        self.assertEqual(self.api.ok("GET", PODS + "/p/status"), out4)
        # CRDs: create drops status, status only through /status, generation follows spec.
        pgs = "/apis/scheduling.run.ai/v2alpha2/namespaces/ns/podgroups"
        pg = self.api.ok("POST", pgs, {"metadata": {"name": "g"}, "spec": {"minMember": 2},
                                       "status": {"phase": "Running"}})
        self.assertNotIn("status", pg)
        self.assertEqual(pg["metadata"]["generation"], 1)
        pg = self.api.ok("PATCH", pgs + "/g/status", {"status": {"phase": "Running"}}, self.MP)
        self.assertEqual((pg["status"], pg["metadata"]["generation"]), ({"phase": "Running"}, 1))
        pg = self.api.ok("PATCH", pgs + "/g", {"spec": {"minMember": 3}, "status": None}, self.MP)
        self.assertEqual((pg["status"], pg["metadata"]["generation"]), ({"phase": "Running"}, 2))
        # A resource without a status subresource.
        self.assertEqual(self.api.request("GET", "/api/v1/namespaces/ns/configmaps/x/status")[0], 404)

    def test_binding(self):
        self.api.ok("POST", PODS, pod("p"))
        status, _, out = self.api.request("POST", PODS + "/p/binding", {
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p", "namespace": "ns"},
            "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"}})
        self.assertEqual(status, 201)
        self.assertEqual((out["kind"], out["status"]), ("Status", "Success"))
        got = self.api.ok("GET", PODS + "/p")
        self.assertEqual(got["spec"]["nodeName"], "node-1")
        self.assertIn({"type": "PodScheduled", "status": "True"},
                      [{k: c[k] for k in ("type", "status")} for c in got["status"]["conditions"]])
        status, _, err = self.api.request("POST", PODS + "/p/binding",
                                          {"target": {"kind": "Node", "name": "node-2"}})
        self.assertEqual(status, 409)
        self.assertStatus(err, 409, "Conflict")
        self.assertEqual(self.api.ok("GET", PODS + "/p")["spec"]["nodeName"], "node-1")
        self.assertStatus(self.api.request("POST", PODS + "/nope/binding",
                                           {"target": {"name": "n"}})[2], 404, "NotFound")
        self.api.ok("POST", PODS, pod("q"))
        self.api.ok("POST", "/api/v1/namespaces/ns/bindings",
                    {"metadata": {"name": "q"}, "target": {"kind": "Node", "name": "node-3"}})
        self.assertEqual(self.api.ok("GET", PODS + "/q")["spec"]["nodeName"], "node-3")


class TestControl(Base):
    def test_objects_ops_and_events(self):
        w = self.api.watch("/apis/scheduling.run.ai/v2/queues?watch=1")
        self.api.wait_watches(1)
        q = {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
             "metadata": {"name": "q1"}, "spec": {}, "status": {"allocated": {"gpu": 1}}}
        out = self.api.control("POST", "objects", {"op": "create", "object": q})
        made = out["objects"][0]
        self.assertEqual(made["status"], {"allocated": {"gpu": 1}})  # control keeps status
        self.assertEqual(out["resourceVersion"], made["metadata"]["resourceVersion"])
        self.assertIn("uid", made["metadata"])
        q2 = json.loads(json.dumps(q))
        q2["status"] = {"allocated": {"gpu": 2}}
        self.api.faults({"method": "*", "path": "", "times": -1, "action": {"status": 500}})
        out = self.api.control("POST", "objects", {"ops": [
            {"op": "update", "object": q2},
            {"op": "create", "object": pod("p", ns="team")},
            {"op": "create", "object": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
                                        "status": {"allocatable": {"cpu": "4"}}}},
        ]})
        self.assertEqual(out["objects"][0]["metadata"]["uid"], made["metadata"]["uid"])
        self.assertEqual(out["objects"][0]["status"], {"allocated": {"gpu": 2}})
        self.api.control("POST", "objects", {"op": "delete", "object": q2})
        self.assertEqual([e["type"] for e in (w.next(), w.next(), w.next())],
                         ["ADDED", "MODIFIED", "DELETED"])
        self.api.control("DELETE", "faults")
        nodes = self.api.control("GET", "objects?apiVersion=v1&kind=Node")
        self.assertEqual(nodes["items"][0]["status"], {"allocatable": {"cpu": "4"}})
        self.assertEqual(nodes["resourceVersion"], self.api.ok("GET", "/api/v1/nodes")["metadata"]["resourceVersion"])
        pods = self.api.control("GET", "objects?apiVersion=v1&kind=Pod")["items"]
        self.assertEqual([(p["metadata"]["namespace"], p["metadata"]["name"]) for p in pods], [("team", "p")])
        self.assertFalse([e for e in self.api.control("GET", "log")
                          if e["path"].startswith("/_control")])  # control requests are not logged
        # Errors: unknown kind, create over an existing object (earlier ops of a batch stay).
        status, _, err = self.api.request("POST", "/_control/objects", {"op": "create", "object": {
            "apiVersion": "v9", "kind": "Nope", "metadata": {"name": "x"}}})
        self.assertEqual(status, 400)
        status, _, err = self.api.request("POST", "/_control/objects", {"ops": [
            {"op": "create", "object": pod("new", ns="team")},
            {"op": "create", "object": pod("p", ns="team")}]})
        self.assertStatus(err, 409, "AlreadyExists")
        self.assertEqual(self.api.request("GET", "/api/v1/namespaces/team/pods/new")[0], 200)

    def test_control_update_can_finish_a_deletion(self):
        p = pod("p", finalizers=["f"])
        self.api.control("POST", "objects", {"op": "create", "object": p})
        dt = self.api.ok("DELETE", PODS + "/p")
        self.assertIn("deletionTimestamp", dt["metadata"])
        dt["metadata"]["finalizers"] = []
        self.api.control("POST", "objects", {"op": "update", "object": dt})
        self.assertEqual(self.api.request("GET", PODS + "/p")[0], 404)

    def test_compact_and_healthz(self):
        self.create_pods(2)
        out = self.api.control("POST", "compact")
        self.assertEqual(out["resourceVersion"], self.api.ok("GET", PODS)["metadata"]["resourceVersion"])
        status, resp, body = self.api.request("GET", "/_control/healthz")
        self.assertEqual((status, body), (200, b"ok"))
        self.assertEqual(self.api.request("GET", "/_control/nope")[0], 404)


if __name__ == "__main__":
    unittest.main()
