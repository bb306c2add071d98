#!/usr/bin/env python3
"""Put a scenario's world onto a real kube-apiserver, and dump what the server holds.

    python3 tests/e2e/scenario_loader.py --kubeconfig K --scenario DIR_OR_FILE [--dump OUT.yaml]
    python3 tests/e2e/scenario_loader.py --kubeconfig K --dump OUT.yaml          # dump only
    python3 tests/e2e/scenario_loader.py --kubeconfig K --clear [--scenario ...]  # empty first

A scenario is a multi-document YAML stream of Kubernetes objects (../shared/scenarios/FORMAT.md):
a file, or a directory holding scenario.yaml (a directory without one: every *.yaml in it except
expected.yaml, meta.yaml and INDEX.yaml). `kind: List` documents are expanded.

Loading creates, in this order: kai's CRDs (from deploy/crds/, only those not installed), the
namespaces the objects use, PriorityClasses, Queues (parents before children), Topologies,
SchedulingShards and Configs, Nodes (status kept on create, else patched through the status
subresource), PodGroups, objects of other kinds, then Pods and BindRequests in the order of their
metadata.creationTimestamp (objects without one last, in file order). The server sets its own
uid and creationTimestamp; the creation order is what is kept.

Pods are created without spec.nodeName and status, bound through pods/binding when the scenario
gives a nodeName, then get their status through the status subresource. A pod with
metadata.deletionTimestamp is created with the finalizer kai.test/hold and deleted (grace period
0), so that the server holds it with a deletionTimestamp (Releasing) until the finalizer goes;
`--clear` removes it. Objects of kinds with a status subresource get their status the same way.

Every refusal of the server is reported naming the object and the step, and loading goes on;
the exit code is 1 when anything failed (2 for a usage error or an unreachable server).

`--dump OUT.yaml` writes every Node, Pod, PodGroup, Queue, PriorityClass, Topology,
SchedulingShard and BindRequest the server holds as one multi-document YAML stream (managedFields
left out), which `kai simulate -f OUT.yaml` reads. Timestamps in it are the server's (wall clock),
not the scenario's.

Only the Python standard library and PyYAML are needed; the server is spoken to directly over
HTTPS with one kept-alive connection (kubectl is not used).
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import http.client
import json
import os
import pathlib
import ssl
import sys
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Iterable

import yaml

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
DEFAULT_CRDS_DIR = REPO_ROOT / "deploy" / "crds"
HOLD_FINALIZER = "kai.test/hold"
SCENARIO_SIDE_FILES = {"expected.yaml", "meta.yaml", "INDEX.yaml"}


# --------------------------------------------------------------------------------------------
# API client
# --------------------------------------------------------------------------------------------


class ApiError(Exception):
    """A request the server answered with an error status (or could not be sent)."""

    def __init__(self, status: int, reason: str, message: str):
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message


def _b64file(data: str, suffix: str, keep: list) -> str:
    f = tempfile.NamedTemporaryFile(prefix="kai-e2e-", suffix=suffix, delete=False)
    f.write(base64.b64decode(data))
    f.close()
    keep.append(f.name)
    return f.name


class Client:
    """A minimal Kubernetes REST client: kubeconfig, one kept-alive HTTPS connection, JSON."""

    def __init__(self, kubeconfig: str | os.PathLike, timeout: float = 30.0):
        path = pathlib.Path(kubeconfig)
        cfg = yaml.safe_load(path.read_text())
        base = path.resolve().parent
        ctx_name = cfg.get("current-context")
        contexts = {c["name"]: c["context"] for c in cfg.get("contexts") or []}
        if not contexts:
            raise ValueError(f"{path}: no contexts")
        ctx = contexts.get(ctx_name) or next(iter(contexts.values()))
        cluster = {c["name"]: c["cluster"] for c in cfg.get("clusters") or []}[ctx["cluster"]]
        user = {u["name"]: u.get("user") or {} for u in cfg.get("users") or []}.get(ctx.get("user"), {})

        def rel(p: str) -> str:
            return str(p if os.path.isabs(p) else base / p)

        self._tmp: list[str] = []
        url = urllib.parse.urlsplit(cluster["server"])
        self.scheme = url.scheme
        self.host = url.hostname
        self.port = url.port or (443 if url.scheme == "https" else 80)
        self.prefix = url.path.rstrip("/")
        self.timeout = timeout
        self.headers = {"Accept": "application/json", "User-Agent": "kai-e2e-scenario-loader"}
        self.ssl_ctx = None
        if self.scheme == "https":
            if cluster.get("insecure-skip-tls-verify"):
                ctx_ssl = ssl._create_unverified_context()
            elif cluster.get("certificate-authority-data"):
                ctx_ssl = ssl.create_default_context(
                    cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
            elif cluster.get("certificate-authority"):
                ctx_ssl = ssl.create_default_context(cafile=rel(cluster["certificate-authority"]))
            else:
                ctx_ssl = ssl.create_default_context()
            cert = user.get("client-certificate") and rel(user["client-certificate"])
            key = user.get("client-key") and rel(user["client-key"])
            if user.get("client-certificate-data"):
                cert = _b64file(user["client-certificate-data"], ".crt", self._tmp)
            if user.get("client-key-data"):
                key = _b64file(user["client-key-data"], ".key", self._tmp)
            if cert:
                ctx_ssl.load_cert_chain(cert, key)
            self.ssl_ctx = ctx_ssl
        token = user.get("token")
        if not token and user.get("tokenFile"):
            token = pathlib.Path(rel(user["tokenFile"])).read_text().strip()
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        elif user.get("username"):
            basic = base64.b64encode(f"{user['username']}:{user.get('password', '')}".encode()).decode()
            self.headers["Authorization"] = f"Basic {basic}"
        self._conn: http.client.HTTPConnection | None = None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        for p in self._tmp:
            try:
                os.unlink(p)
            except OSError:
                pass
        self._tmp = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _connect(self) -> http.client.HTTPConnection:
        if self._conn is None:
            if self.scheme == "https":
                self._conn = http.client.HTTPSConnection(self.host, self.port, timeout=self.timeout,
                                                         context=self.ssl_ctx)
            else:
                self._conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        return self._conn

    def request(self, method: str, path: str, body: Any = None, query: dict | None = None,
                content_type: str = "application/json") -> Any:
        """Send one request; return the decoded JSON answer or raise ApiError."""
        url = self.prefix + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        data = None
        headers = dict(self.headers)
        if body is not None:
            data = json.dumps(body, default=_json_default).encode()
            headers["Content-Type"] = content_type
        for attempt in range(2):
            conn = self._connect()
            try:
                conn.request(method, url, body=data, headers=headers)
                resp = conn.getresponse()
                raw = resp.read()
                break
            except (http.client.HTTPException, ConnectionError, OSError) as e:
                self._conn.close()
                self._conn = None
                if attempt == 1:
                    raise ApiError(0, "ConnectionFailed", f"{method} {url}: {e}") from e
        try:
            obj = json.loads(raw) if raw else None
        except ValueError:
            obj = None
        if resp.status >= 400:
            if isinstance(obj, dict) and obj.get("kind") == "Status":
                raise ApiError(resp.status, obj.get("reason") or resp.reason, obj.get("message") or "")
            raise ApiError(resp.status, resp.reason, raw.decode(errors="replace")[:500])
        return obj

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def watch(self, path: str, query: dict | None = None, timeout: float = 600.0):
        """Yields the events ({"type", "object"}) of a watch on `path`, on a connection of its
        own, until the server ends the watch or `timeout` seconds pass without a line."""
        q = dict(query or {}, watch="1", allowWatchBookmarks="false")
        url = self.prefix + path + "?" + urllib.parse.urlencode(q)
        if self.scheme == "https":
            conn = http.client.HTTPSConnection(self.host, self.port, timeout=timeout,
                                               context=self.ssl_ctx)
        else:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            conn.request("GET", url, headers=dict(self.headers))
            resp = conn.getresponse()
            if resp.status >= 400:
                raise ApiError(resp.status, resp.reason, resp.read().decode(errors="replace")[:500])
            while True:
                line = resp.readline()
                if not line:
                    return
                if line.strip():
                    yield json.loads(line)
        finally:
            conn.close()

    def post(self, path, body, **kw):
        return self.request("POST", path, body, **kw)

    def merge_patch(self, path, body, **kw):
        return self.request("PATCH", path, body, content_type="application/merge-patch+json", **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)


def _json_default(v):
    if isinstance(v, dt.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=dt.timezone.utc)
        return v.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(v, dt.date):
        return v.isoformat()
    raise TypeError(f"not JSON serialisable: {type(v).__name__}")


# --------------------------------------------------------------------------------------------
# Kinds
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Resource:
    api_version: str
    kind: str
    plural: str
    namespaced: bool
    has_status: bool  # a status subresource: status is dropped on create, set through it

    def base(self) -> str:
        return ("/api/" if "/" not in self.api_version else "/apis/") + self.api_version

    def collection(self, namespace: str | None = None) -> str:
        if self.namespaced and namespace:
            return f"{self.base()}/namespaces/{namespace}/{self.plural}"
        return f"{self.base()}/{self.plural}"

    def item(self, name: str, namespace: str | None = None) -> str:
        return f"{self.collection(namespace)}/{urllib.parse.quote(name, safe='')}"


KNOWN = [
    Resource("v1", "Namespace", "namespaces", False, True),
    Resource("scheduling.k8s.io/v1", "PriorityClass", "priorityclasses", False, False),
    Resource("scheduling.run.ai/v2", "Queue", "queues", False, True),
    Resource("kai.scheduler/v1alpha1", "Topology", "topologies", False, False),
    Resource("kai.scheduler/v1", "SchedulingShard", "schedulingshards", False, True),
    Resource("kai.scheduler/v1", "Config", "configs", False, True),
    Resource("v1", "Node", "nodes", False, True),
    Resource("scheduling.run.ai/v2alpha2", "PodGroup", "podgroups", True, True),
    Resource("v1", "Pod", "pods", True, True),
    Resource("scheduling.run.ai/v1alpha2", "BindRequest", "bindrequests", True, True),
    Resource("storage.k8s.io/v1", "StorageClass", "storageclasses", False, False),
    Resource("storage.k8s.io/v1", "CSINode", "csinodes", False, False),
    Resource("v1", "PersistentVolume", "persistentvolumes", False, True),
    Resource("v1", "PersistentVolumeClaim", "persistentvolumeclaims", True, True),
]
KNOWN_BY_KEY = {(r.api_version, r.kind): r for r in KNOWN}
R = {r.kind: r for r in KNOWN}

# Phase of each kind in the creation order; kinds not listed go to OTHER_PHASE.
PHASE = {"Namespace": 1, "PriorityClass": 2, "Queue": 3, "Topology": 4, "SchedulingShard": 5,
         "Config": 5, "StorageClass": 5, "Node": 6, "CSINode": 6, "PersistentVolume": 6,
         "PersistentVolumeClaim": 7, "PodGroup": 7, "Pod": 9, "BindRequest": 9}
OTHER_PHASE = 8

# What --dump writes, in this order (the order of ../shared/scenarios/FORMAT.md §2).
DUMP_KINDS = ["SchedulingShard", "PriorityClass", "Topology", "Node", "Queue", "PodGroup", "Pod",
              "BindRequest", "StorageClass", "CSINode", "PersistentVolume",
              "PersistentVolumeClaim"]
# What --clear deletes (namespaces are never deleted: nothing would finalize them).
CLEAR_KINDS = ["BindRequest", "Pod", "PodGroup", "PersistentVolumeClaim", "PersistentVolume",
               "CSINode", "StorageClass", "Node", "SchedulingShard", "Config", "Topology",
               "Queue", "PriorityClass"]


def obj_ref(obj: dict) -> str:
    md = obj.get("metadata") or {}
    name = md.get("name", "<no name>")
    ns = md.get("namespace")
    return f"{obj.get('kind', '<no kind>')} {ns + '/' if ns else ''}{name}"


# --------------------------------------------------------------------------------------------
# Reading scenarios
# --------------------------------------------------------------------------------------------


def scenario_files(path: str | os.PathLike) -> list[pathlib.Path]:
    p = pathlib.Path(path)
    if p.is_dir():
        if (p / "scenario.yaml").is_file():
            return [p / "scenario.yaml"]
        files = sorted(f for f in p.iterdir()
                       if f.suffix in (".yaml", ".yml") and f.name not in SCENARIO_SIDE_FILES)
        if not files:
            raise FileNotFoundError(f"{p}: no scenario.yaml and no YAML files")
        return files
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no such file or directory")
    return [p]


# API groups the e2e server (kube-apiserver 1.28 with kai's CRDs) does not serve: DRA's
# resource.k8s.io v1/v1beta1/v1beta2 (1.28 has only v1alpha2, behind a feature gate; it also drops
# a pod's spec.resourceClaims without that gate) and the NodeResourceTopology CRD (not installed).
UNSERVED_GROUPS = ("resource.k8s.io/", "topology.node.k8s.io/")


def unserved_kinds(objs: list[dict]) -> list[str]:
    """The kinds of objs ("ResourceClaim resource.k8s.io/v1") in groups the e2e server lacks."""
    return sorted({f"{o.get('kind')} {o.get('apiVersion')}" for o in objs
                   if str(o.get("apiVersion", "")).startswith(UNSERVED_GROUPS)})


def read_objects(path: str | os.PathLike, warn=None) -> list[dict]:
    """The Kubernetes objects of a scenario (file or directory), in stream order."""
    out: list[dict] = []
    for f in scenario_files(path):
        with open(f) as fh:
            for i, doc in enumerate(yaml.safe_load_all(fh)):
                if doc is None:
                    continue
                if not isinstance(doc, dict) or "kind" not in doc or "apiVersion" not in doc:
                    if warn:
                        warn(f"{f}: document {i}: not a Kubernetes object, skipped")
                    continue
                if doc["kind"].endswith("List") and isinstance(doc.get("items"), list):
                    out.extend(x for x in doc["items"] if isinstance(x, dict))
                else:
                    out.append(doc)
    return out


def _timestamp(v) -> dt.datetime | None:
    if v is None:
        return None
    if isinstance(v, dt.datetime):
        return v if v.tzinfo else v.replace(tzinfo=dt.timezone.utc)
    s = str(v).strip()
    if s.endswith("Z"):
        s = s[:-1] + "+00:00"
    try:
        t = dt.datetime.fromisoformat(s)
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=dt.timezone.utc)


def order_objects(objs: list[dict]) -> list[dict]:
    """Objects in creation order (see the module doc)."""
    phases: dict[int, list[tuple[int, dict]]] = {}
    for idx, o in enumerate(objs):
        phases.setdefault(PHASE.get(o.get("kind"), OTHER_PHASE), []).append((idx, o))
    out: list[dict] = []
    for ph in sorted(phases):
        items = phases[ph]
        if ph == PHASE["Queue"]:
            out.extend(_queues_parents_first([o for _, o in items]))
        elif ph == PHASE["Pod"]:
            def key(t):
                idx, o = t
                ts = _timestamp((o.get("metadata") or {}).get("creationTimestamp"))
                return (0, ts, idx) if ts else (1, dt.datetime.min.replace(tzinfo=dt.timezone.utc), idx)
            out.extend(o for _, o in sorted(items, key=key))
        else:
            out.extend(o for _, o in items)
    return out


def _queues_parents_first(queues: list[dict]) -> list[dict]:
    names = {(q.get("metadata") or {}).get("name") for q in queues}
    done: set = set()
    out: list[dict] = []
    pending = list(queues)
    while pending:
        rest = []
        for q in pending:
            parent = (q.get("spec") or {}).get("parentQueue")
            if not parent or parent not in names or parent in done:
                out.append(q)
                done.add((q.get("metadata") or {}).get("name"))
            else:
                rest.append(q)
        if len(rest) == len(pending):  # a cycle: keep file order
            out.extend(rest)
            break
        pending = rest
    return out


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------


@dataclass
class LoadResult:
    created: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures


class Loader:
    def __init__(self, client: Client, crds_dir: str | os.PathLike | None = DEFAULT_CRDS_DIR,
                 log=None):
        self.c = client
        self.crds_dir = pathlib.Path(crds_dir) if crds_dir else None
        self.log = log or (lambda msg: None)
        self._discovered: dict[tuple[str, str], Resource | None] = {}

    # ---- CRDs ----

    def ensure_crds(self, timeout: float = 60.0) -> list[str]:
        """Create the CRDs of crds_dir that the server lacks; wait until they are served."""
        if not self.crds_dir or not self.crds_dir.is_dir():
            return []
        base = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        created: list[dict] = []
        for f in sorted(self.crds_dir.glob("*.yaml")):
            for crd in yaml.safe_load_all(f.read_text()):
                if not isinstance(crd, dict) or crd.get("kind") != "CustomResourceDefinition":
                    continue
                name = crd["metadata"]["name"]
                try:
                    self.c.get(f"{base}/{name}")
                    continue
                except ApiError as e:
                    if e.status != 404:
                        raise
                try:
                    self.c.post(base, crd)
                except ApiError as e:
                    if e.status != 409:
                        raise ApiError(e.status, e.reason, f"CRD {name} from {f}: {e.message}")
                created.append(crd)
        deadline = time.monotonic() + timeout
        for crd in created:
            name = crd["metadata"]["name"]
            while True:
                cur = self.c.get(f"{base}/{name}")
                conds = {c["type"]: c["status"] for c in (cur.get("status") or {}).get("conditions") or []}
                if conds.get("Established") == "True":
                    break
                if time.monotonic() > deadline:
                    raise ApiError(0, "Timeout", f"CRD {name} not Established after {timeout}s: {conds}")
                time.sleep(0.1)
            spec = crd["spec"]
            version = next(v["name"] for v in spec["versions"] if v.get("storage"))
            path = f"/apis/{spec['group']}/{version}/{spec['names']['plural']}"
            while True:  # the handler can lag the condition by a moment
                try:
                    self.c.get(path, query={"limit": "1"})
                    break
                except ApiError as e:
                    if e.status != 404 or time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
        if created:
            self._discovered.clear()
        return [c["metadata"]["name"] for c in created]

    # ---- resources ----

    def resource_for(self, api_version: str, kind: str) -> Resource | None:
        key = (api_version, kind)
        if key in KNOWN_BY_KEY:
            return KNOWN_BY_KEY[key]
        if key not in self._discovered:
            path = ("/api/" if "/" not in api_version else "/apis/") + api_version
            found = None
            try:
                lst = self.c.get(path)
                names = {r["name"] for r in lst.get("resources") or []}
                for r in lst.get("resources") or []:
                    if r.get("kind") == kind and "/" not in r["name"]:
                        found = Resource(api_version, kind, r["name"], bool(r.get("namespaced")),
                                         f"{r['name']}/status" in names)
                        break
            except ApiError as e:
                if e.status != 404:
                    raise
            self._discovered[key] = found
        return self._discovered[key]

    # ---- the load ----

    def load(self, objs: list[dict]) -> LoadResult:
        res = LoadResult()
        try:
            installed = self.ensure_crds()
            if installed:
                self.log(f"installed CRDs: {', '.join(installed)}")
        except ApiError as e:
            res.failures.append(f"installing CRDs: {e}")
        ordered = order_objects(objs)
        self._namespaces(ordered, res)
        for o in ordered:
            if o.get("kind") == "Namespace":
                continue  # done by _namespaces
            try:
                self._one(o, res)
            except ApiError as e:
                res.failures.append(f"{obj_ref(o)}: {e}")
        return res

    def _namespaces(self, ordered: list[dict], res: LoadResult) -> None:
        wanted: dict[str, dict] = {}
        for o in ordered:
            if o.get("kind") == "Namespace":
                wanted[o["metadata"]["name"]] = o
        for o in ordered:
            if o.get("kind") == "Namespace":
                continue
            r = self.resource_for(o.get("apiVersion", ""), o.get("kind", ""))
            if r is not None and r.namespaced:
                ns = (o.get("metadata") or {}).get("namespace") or "default"
                wanted.setdefault(ns, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        for name, o in wanted.items():
            body = _clean_for_create(o)
            body.pop("status", None)
            try:
                self.c.post(R["Namespace"].collection(), body)
                res.created.append(f"Namespace {name}")
            except ApiError as e:
                if e.status != 409:
                    res.failures.append(f"Namespace {name}: create: {e}")

    def _one(self, o: dict, res: LoadResult) -> None:
        ref = obj_ref(o)
        r = self.resource_for(o.get("apiVersion", ""), o.get("kind", ""))
        if r is None:
            res.failures.append(f"{ref}: the server serves no kind {o.get('kind')} in {o.get('apiVersion')}")
            return
        md = o.get("metadata") or {}
        ns = (md.get("namespace") or "default") if r.namespaced else None
        name = md.get("name")
        if not name:
            res.failures.append(f"{ref}: no metadata.name")
            return
        body = _clean_for_create(o)
        if r.namespaced:
            body["metadata"]["namespace"] = ns
        status = o.get("status") or None
        node_name = None
        releasing = bool(md.get("deletionTimestamp"))
        if r.kind == "Pod":
            spec = body.setdefault("spec", {})
            node_name = spec.pop("nodeName", None)
            body.pop("status", None)
        elif r.has_status and r.kind != "Node":
            body.pop("status", None)
        if releasing:
            fins = body["metadata"].setdefault("finalizers", [])
            if HOLD_FINALIZER not in fins:
                fins.append(HOLD_FINALIZER)
        try:
            created = self.c.post(r.collection(ns), body)
        except ApiError as e:
            res.failures.append(f"{ref}: create: {e}")
            return
        res.created.append(ref)
        if node_name:
            binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name, "namespace": ns},
                       "target": {"apiVersion": "v1", "kind": "Node", "name": node_name}}
            try:
                self.c.post(r.item(name, ns) + "/binding", binding)
            except ApiError as e:
                res.failures.append(f"{ref}: bind to node {node_name}: {e}")
        if status and r.has_status:
            if r.kind == "Node" and _status_kept(status, (created or {}).get("status") or {}):
                pass
            else:
                try:
                    self.c.merge_patch(r.item(name, ns) + "/status", {"status": status})
                except ApiError as e:
                    res.failures.append(f"{ref}: set status: {e}")
        if releasing:
            try:
                self.c.delete(r.item(name, ns), query={"gracePeriodSeconds": "0"})
            except ApiError as e:
                res.failures.append(f"{ref}: delete (to set deletionTimestamp): {e}")


def _status_kept(sent: dict, got: dict) -> bool:
    return all(k in got for k in sent)


_SERVER_OWNED_METADATA = ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp",
                          "deletionGracePeriodSeconds", "generation", "managedFields", "selfLink")


def _clean_for_create(o: dict) -> dict:
    body = json.loads(json.dumps(o, default=_json_default))
    md = body.setdefault("metadata", {})
    for k in _SERVER_OWNED_METADATA:
        md.pop(k, None)
    return body


# --------------------------------------------------------------------------------------------
# Dump and clear
# --------------------------------------------------------------------------------------------


def list_kind(client: Client, r: Resource) -> list[dict] | None:
    """Every object of the kind (apiVersion and kind set, managedFields left out), or None when
    the server does not serve the kind."""
    try:
        lst = client.get(r.collection())
    except ApiError as e:
        if e.status == 404:
            return None
        raise
    items = []
    for it in lst.get("items") or []:
        it = {"apiVersion": r.api_version, "kind": r.kind, **{k: v for k, v in it.items()
                                                             if k not in ("apiVersion", "kind")}}
        (it.get("metadata") or {}).pop("managedFields", None)
        items.append(it)
    items.sort(key=lambda x: ((x["metadata"].get("namespace") or ""), x["metadata"]["name"]))
    return items


def dump(client: Client, kinds: Iterable[str] = DUMP_KINDS) -> list[dict]:
    out: list[dict] = []
    for k in kinds:
        out.extend(list_kind(client, R[k]) or [])
    return out


def write_dump(objs: list[dict], path: str | os.PathLike) -> None:
    with open(path, "w") as fh:
        fh.write("# Written by tests/e2e/scenario_loader.py --dump: the objects a kube-apiserver held.\n")
        yaml.safe_dump_all(objs, fh, sort_keys=False, default_flow_style=False)


def clear(client: Client, kinds: Iterable[str] = CLEAR_KINDS) -> list[str]:
    """Delete every object of the kinds (pods forced, finalizers removed); system-* priority
    classes and namespaces stay. Returns errors."""
    errors: list[str] = []
    for k in kinds:
        r = R[k]
        items = list_kind(client, r)
        if not items:
            continue
        for it in items:
            md = it["metadata"]
            if md.get("finalizers"):
                try:
                    client.merge_patch(r.item(md["name"], md.get("namespace")), {"metadata": {"finalizers": None}})
                except ApiError as e:
                    if e.status != 404:
                        errors.append(f"{obj_ref(it)}: remove finalizers: {e}")
        if k == "PriorityClass":
            for it in items:
                name = it["metadata"]["name"]
                if name.startswith("system-"):
                    continue
                try:
                    client.delete(r.item(name))
                except ApiError as e:
                    if e.status != 404:
                        errors.append(f"{obj_ref(it)}: delete: {e}")
            continue
        namespaces = sorted({it["metadata"].get("namespace") for it in items}) if r.namespaced else [None]
        for ns in namespaces:
            try:
                client.delete(r.collection(ns), query={"gracePeriodSeconds": "0"})
            except ApiError as e:
                errors.append(f"{k} {ns or ''}: delete collection: {e}")
    return errors


# --------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kubeconfig", default=os.environ.get("KUBECONFIG"),
                    help="kubeconfig of the server (default $KUBECONFIG)")
    ap.add_argument("--scenario", action="append", default=[],
                    help="scenario directory (holding scenario.yaml) or YAML file; repeatable")
    ap.add_argument("--dump", metavar="OUT.yaml", help="afterwards, write what the server holds")
    ap.add_argument("--clear", action="store_true",
                    help="first delete every Node, Pod, PodGroup, Queue, PriorityClass, Topology, "
                         "SchedulingShard, Config and BindRequest on the server")
    ap.add_argument("--crds", default=str(DEFAULT_CRDS_DIR),
                    help="CRDs to install when missing (default deploy/crds); '' installs none")
    ap.add_argument("-q", "--quiet", action="store_true", help="print failures only")
    a = ap.parse_args(argv)
    if not a.kubeconfig:
        ap.error("no --kubeconfig and no $KUBECONFIG")
    if not (a.scenario or a.dump or a.clear):
        ap.error("nothing to do: give --scenario, --dump or --clear")

    def say(msg):
        if not a.quiet:
            print(msg, file=sys.stderr)

    objs: list[dict] = []
    warnings: list[str] = []
    try:
        for s in a.scenario:
            objs.extend(read_objects(s, warn=warnings.append))
    except (OSError, yaml.YAMLError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    failures: list[str] = []
    try:
        with Client(a.kubeconfig) as c:
            try:
                c.get("/version")
            except ApiError as e:
                print(f"error: cannot reach the server of {a.kubeconfig}: {e}", file=sys.stderr)
                return 2
            if a.clear:
                errs = clear(c)
                failures.extend(f"clear: {e}" for e in errs)
                say(f"cleared the server{' with errors' if errs else ''}")
            if a.scenario:
                res = Loader(c, a.crds or None, log=say).load(objs)
                failures.extend(res.failures)
                say(f"created {len(res.created)} objects from {len(objs)} scenario objects; "
                    f"{len(res.failures)} failed")
            if a.dump:
                held = dump(c)
                write_dump(held, a.dump)
                say(f"wrote {len(held)} objects to {a.dump}")
    except (OSError, ValueError, KeyError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for f in failures:
        print(f"error: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
