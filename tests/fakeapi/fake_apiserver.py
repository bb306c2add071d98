#!/usr/bin/env python3
"""A fault-injecting fake Kubernetes API server for kai's client tests.

Standard library only. Serves a generic in-memory store over plain HTTP/1.1 with the real API
server's paths, list paging, selectors, watches (replay, bookmarks, 410 Expired) and write
semantics, plus a control API under /_control/ that scripts the store and injects faults.
See README.md next to this file for the exact contract.
"""

import argparse
import base64
import collections
import copy
import datetime
import json
import os
import queue
import random
import re
import select
import signal
import socket
import sys
import threading
import time
import traceback
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


# --------------------------------------------------------------------------------------------
# Resource table


class Resource:
    def __init__(self, group, version, plural, kind, namespaced, has_status, generation=False):
        self.group = group
        self.version = version
        self.plural = plural
        self.kind = kind
        self.namespaced = namespaced
        self.has_status = has_status
        self.generation = generation  # metadata.generation is kept (1 on create, bumped on spec change)

    @property
    def api_version(self):
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self):
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def __repr__(self):
        return f"Resource({self.api_version} {self.plural})"


RESOURCES = [
    Resource("", "v1", "nodes", "Node", False, True),
    Resource("", "v1", "pods", "Pod", True, True, generation=True),
    Resource("", "v1", "events", "Event", True, False),
    Resource("", "v1", "configmaps", "ConfigMap", True, False),
    Resource("", "v1", "namespaces", "Namespace", False, True),
    Resource("scheduling.run.ai", "v2", "queues", "Queue", False, True, generation=True),
    Resource("scheduling.run.ai", "v2alpha2", "podgroups", "PodGroup", True, True, generation=True),
    Resource("scheduling.run.ai", "v1alpha2", "bindrequests", "BindRequest", True, True,
             generation=True),
    Resource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, False),
    Resource("kai.scheduler", "v1alpha1", "topologies", "Topology", False, True, generation=True),
    Resource("kai.scheduler", "v1", "schedulingshards", "SchedulingShard", False, True,
             generation=True),
    Resource("coordination.k8s.io", "v1", "leases", "Lease", True, False),
    Resource("events.k8s.io", "v1", "events", "Event", True, False),
    Resource("resource.k8s.io", "v1", "deviceclasses", "DeviceClass", False, False),
    Resource("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", True, True),
    Resource("resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate", True,
             False),
    Resource("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", False, False),
    Resource("topology.node.k8s.io", "v1alpha2", "noderesourcetopologies", "NodeResourceTopology",
             False, False),
    Resource("", "v1", "persistentvolumes", "PersistentVolume", False, True),
    Resource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, True),
    Resource("storage.k8s.io", "v1", "storageclasses", "StorageClass", False, False),
    Resource("storage.k8s.io", "v1", "csinodes", "CSINode", False, False),
]
BY_PATH = {(r.group, r.version, r.plural): r for r in RESOURCES}
BY_KIND = {(r.api_version, r.kind): r for r in RESOURCES}
CRD_GROUPS = {"scheduling.run.ai", "kai.scheduler"}

REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}

WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


class ApiError(Exception):
    def __init__(self, code, message, reason=None, details=None, headers=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason or REASONS.get(code, "Unknown")
        self.details = details
        self.headers = headers or {}

    def status(self):
        st = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
              "message": self.message, "reason": self.reason, "code": self.code}
        if self.details:
            st["details"] = self.details
        return st


def not_found(res, name):
    return ApiError(404, f'{res.qualified} "{name}" not found', "NotFound",
                    {"name": name, "group": res.group, "kind": res.plural})


def already_exists(res, name):
    return ApiError(409, f'{res.qualified} "{name}" already exists', "AlreadyExists",
                    {"name": name, "group": res.group, "kind": res.plural})


def conflict(res, name, why="the object has been modified; please apply your changes to the "
                            "latest version and try again"):
    return ApiError(409, f'Operation cannot be fulfilled on {res.qualified} "{name}": {why}',
                    "Conflict", {"name": name, "group": res.group, "kind": res.plural})


def now_rfc3339():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def dumps(obj):
    return json.dumps(obj, separators=(",", ":"))


# --------------------------------------------------------------------------------------------
# Patches


class PatchError(Exception):
    pass


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            result.pop(k, None)
        else:
            result[k] = merge_patch(result.get(k), v)
    return result


def _strip_directives(value):
    if isinstance(value, dict):
        return {k: _strip_directives(v) for k, v in value.items() if not k.startswith("$")}
    if isinstance(value, list):
        return [_strip_directives(v) for v in value]
    return value


def _is_condition_list(v):
    return isinstance(v, list) and all(isinstance(e, dict) and "type" in e for e in v)


def strategic_merge_patch(target, patch):
    """Merge patch, except that lists under a key named "conditions" merge by "type"
    (an element {"type": T, "$patch": "delete"} removes T); "$..." directive keys are ignored."""
    if not isinstance(patch, dict):
        return _strip_directives(copy.deepcopy(patch))
    result = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if k.startswith("$"):
            continue
        if v is None:
            result.pop(k, None)
        elif k == "conditions" and _is_condition_list(v):
            old = result.get(k)
            merged = [copy.deepcopy(e) for e in old] if _is_condition_list(old) else []
            for elem in v:
                idx = next((i for i, e in enumerate(merged) if e.get("type") == elem["type"]), None)
                if elem.get("$patch") == "delete":
                    if idx is not None:
                        merged.pop(idx)
                elif idx is not None:
                    merged[idx] = strategic_merge_patch(merged[idx], elem)
                else:
                    merged.append(_strip_directives(copy.deepcopy(elem)))
            result[k] = merged
        else:
            result[k] = strategic_merge_patch(result.get(k), v)
    return result


def _pointer(path):
    if not isinstance(path, str):
        raise PatchError("path must be a string")
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"invalid JSON pointer {path!r}")
    return [t.replace("~1", "/").replace("~0", "~") for t in path[1:].split("/")]


def _list_index(lst, tok, allow_end):
    if tok == "-" and allow_end:
        return len(lst)
    if not re.fullmatch(r"0|[1-9][0-9]*", tok):
        raise PatchError(f"invalid array index {tok!r}")
    i = int(tok)
    if i > len(lst) or (i == len(lst) and not allow_end):
        raise PatchError(f"array index {i} out of range")
    return i


def _walk(doc, tokens):
    cur = doc
    for t in tokens:
        if isinstance(cur, dict):
            if t not in cur:
                raise PatchError(f"path element {t!r} not found")
            cur = cur[t]
        elif isinstance(cur, list):
            cur = cur[_list_index(cur, t, False)]
        else:
            raise PatchError(f"cannot descend into a scalar at {t!r}")
    return cur


def _jp_add(doc, tokens, value):
    if not tokens:
        return value
    parent = _walk(doc, tokens[:-1])
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_list_index(parent, last, True), value)
    else:
        raise PatchError("parent is not a container")
    return doc


def _jp_remove(doc, tokens):
    if not tokens:
        raise PatchError("cannot remove the whole document")
    parent = _walk(doc, tokens[:-1])
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"path element {last!r} not found")
        return parent.pop(last)
    if isinstance(parent, list):
        return parent.pop(_list_index(parent, last, False))
    raise PatchError("parent is not a container")


def _json_equal(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def json_patch(doc, ops):
    """RFC 6902: add, remove, replace, move, copy, test. Raises PatchError."""
    if not isinstance(ops, list):
        raise PatchError("a JSON patch must be an array of operations")
    doc = copy.deepcopy(doc)
    for op in ops:
        if not isinstance(op, dict):
            raise PatchError("a JSON patch operation must be an object")
        kind = op.get("op")
        tokens = _pointer(op.get("path"))
        if kind in ("add", "replace", "test") and "value" not in op:
            raise PatchError(f"{kind} needs a value")
        if kind == "add":
            doc = _jp_add(doc, tokens, copy.deepcopy(op["value"]))
        elif kind == "remove":
            _jp_remove(doc, tokens)
        elif kind == "replace":
            if not tokens:
                doc = copy.deepcopy(op["value"])
            else:
                _walk(doc, tokens)  # must exist
                parent = _walk(doc, tokens[:-1])
                if isinstance(parent, dict):
                    parent[tokens[-1]] = copy.deepcopy(op["value"])
                else:
                    parent[_list_index(parent, tokens[-1], False)] = copy.deepcopy(op["value"])
        elif kind in ("move", "copy"):
            src = _pointer(op.get("from"))
            if kind == "move":
                if tokens[:len(src)] == src and len(tokens) > len(src):
                    raise PatchError("cannot move a value into one of its children")
                value = _jp_remove(doc, src)
            else:
                value = copy.deepcopy(_walk(doc, src))
            doc = _jp_add(doc, tokens, value)
        elif kind == "test":
            if not _json_equal(_walk(doc, tokens), op["value"]):
                raise PatchError(f"test failed at {op.get('path')!r}")
        else:
            raise PatchError(f"unknown JSON patch operation {kind!r}")
    return doc


# --------------------------------------------------------------------------------------------
# Selectors

_LABEL_KEY = r"[A-Za-z0-9][A-Za-z0-9._/-]*"
_LABEL_VAL = r"[A-Za-z0-9._-]*"


def _split_top(s):
    parts, depth, cur = [], 0, []
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def parse_label_selector(s):
    """Returns a predicate on a labels dict. Supports k=v, k==v, k!=v, k, !k, k in (a,b),
    k notin (a,b), comma-separated (AND)."""
    reqs = []
    for term in _split_top(s or ""):
        m = re.fullmatch(rf"({_LABEL_KEY})\s+(in|notin)\s+\(([^()]*)\)", term)
        if m:
            key, op = m.group(1), m.group(2)
            vals = {v.strip() for v in m.group(3).split(",") if v.strip()}
            if op == "in":
                reqs.append(lambda L, k=key, vs=vals: k in L and L[k] in vs)
            else:
                reqs.append(lambda L, k=key, vs=vals: k not in L or L[k] not in vs)
            continue
        m = re.fullmatch(rf"!\s*({_LABEL_KEY})", term)
        if m:
            reqs.append(lambda L, k=m.group(1): k not in L)
            continue
        m = re.fullmatch(rf"({_LABEL_KEY})\s*(!=|==|=)\s*({_LABEL_VAL})", term)
        if m:
            key, op, val = m.groups()
            if op == "!=":
                reqs.append(lambda L, k=key, v=val: L.get(k) != v)
            else:
                reqs.append(lambda L, k=key, v=val: k in L and L[k] == v)
            continue
        m = re.fullmatch(_LABEL_KEY, term)
        if m:
            reqs.append(lambda L, k=term: k in L)
            continue
        raise ApiError(400, f"unable to parse requirement: invalid label selector term {term!r}")
    return lambda labels: all(r(labels or {}) for r in reqs)


def _field_value(obj, path):
    cur = obj
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return ""
        cur = cur[part]
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    if isinstance(cur, (dict, list)):
        return dumps(cur)
    return str(cur)


def parse_field_selector(s):
    """Returns a predicate on an object. Terms path=v, path==v, path!=v, comma-separated (AND);
    any dotted path works, a missing field reads as the empty string."""
    reqs = []
    for term in _split_top(s or ""):
        m = re.fullmatch(r"([A-Za-z0-9_.]+)\s*(!=|==|=)\s*(.*)", term)
        if not m:
            raise ApiError(400, f"invalid field selector term {term!r}")
        path, op, val = m.group(1), m.group(2), m.group(3).strip()
        if op == "!=":
            reqs.append(lambda o, p=path, v=val: _field_value(o, p) != v)
        else:
            reqs.append(lambda o, p=path, v=val: _field_value(o, p) == v)
    return lambda obj: all(r(obj) for r in reqs)


# --------------------------------------------------------------------------------------------
# Store

Event = collections.namedtuple("Event", "rv res type obj prev")


class Watcher:
    def __init__(self, res, path, start_rv, bookmarks):
        self.res = res
        self.path = path
        self.start_rv = start_rv
        self.bookmarks = bookmarks
        self.q = queue.Queue()


def _meta(obj):
    m = obj.get("metadata")
    if not isinstance(m, dict):
        m = {}
        obj["metadata"] = m
    return m


def _without_rv(obj):
    o = dict(obj)
    m = dict(o.get("metadata") or {})
    m.pop("resourceVersion", None)
    m.pop("managedFields", None)
    o["metadata"] = m
    return o


def _spec_part(obj):
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def _ordered(res, obj):
    """apiVersion, kind, metadata first (just for readable output)."""
    out = {"apiVersion": res.api_version, "kind": res.kind, "metadata": obj.get("metadata") or {}}
    for k, v in obj.items():
        if k not in out:
            out[k] = v
    return out


class Store:
    def __init__(self, history_limit):
        self.lock = threading.RLock()
        self.objects = {r: {} for r in RESOURCES}  # res -> {(ns, name): obj}
        self.rv = 1
        self.compacted_rv = 1  # watches from an RV below this get 410 Expired
        self.history = collections.deque()
        self.history_limit = max(1, history_limit)
        self.watchers = set()

    # ---- primitives (caller holds the lock; objects passed in are owned by the store) ----

    def _record(self, res, etype, obj, prev):
        ev = Event(self.rv, res, etype, obj, prev)
        self.history.append(ev)
        while len(self.history) > self.history_limit:
            self.compacted_rv = self.history.popleft().rv
        for w in self.watchers:
            if w.res is res:
                w.q.put(("EVENT", ev))

    def _bump(self, obj):
        self.rv += 1
        _meta(obj)["resourceVersion"] = str(self.rv)

    def _put_new(self, res, key, obj):
        obj = _ordered(res, obj)
        self._bump(obj)
        self.objects[res][key] = obj
        self._record(res, "ADDED", obj, None)
        return obj

    def _put_update(self, res, key, obj):
        """Stores obj over the current object; removes it instead when it is being deleted and no
        finalizers remain. Returns the stored (or last) state."""
        prev = self.objects[res][key]
        obj = _ordered(res, obj)
        meta = _meta(obj)
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            return self._remove(res, key, obj)
        self._bump(obj)
        self.objects[res][key] = obj
        self._record(res, "MODIFIED", obj, prev)
        return obj

    def _remove(self, res, key, last=None):
        prev = self.objects[res].pop(key)
        obj = copy.deepcopy(_ordered(res, last if last is not None else prev))
        self._bump(obj)
        self._record(res, "DELETED", obj, prev)
        return obj

    @staticmethod
    def _key(res, ns, name):
        return (ns if res.namespaced else "", name)

    # ---- reads ----

    def get(self, res, ns, name):
        with self.lock:
            obj = self.objects[res].get(self._key(res, ns, name))
            if obj is None:
                raise not_found(res, name)
            return obj

    def state_at(self, res, rv):
        """The objects of res as they were at rv (needs the history since rv)."""
        objs = dict(self.objects[res])
        for ev in reversed(self.history):
            if ev.rv <= rv:
                break
            if ev.res is not res:
                continue
            m = ev.obj["metadata"]
            key = self._key(res, m.get("namespace", ""), m["name"])
            if ev.prev is None:
                objs.pop(key, None)
            else:
                objs[key] = ev.prev
        return objs

    def list(self, res, ns, query):
        label = parse_label_selector(query.get("labelSelector", ""))
        field = parse_field_selector(query.get("fieldSelector", ""))
        limit_s = query.get("limit", "") or "0"
        try:
            limit = int(limit_s)
        except ValueError:
            raise ApiError(400, f"invalid limit {limit_s!r}")
        token = query.get("continue", "")
        with self.lock:
            if token:
                try:
                    t = json.loads(base64.urlsafe_b64decode(token.encode() + b"==").decode())
                    at_rv, start = int(t["rv"]), tuple(t["start"])
                except Exception:
                    raise ApiError(400, f"invalid continue token {token!r}")
                if at_rv < self.compacted_rv:
                    raise ApiError(
                        410,
                        "The provided continue parameter is too old to display a consistent list "
                        "result. You can start a new list without the continue parameter.",
                        "Expired")
                objs = self.state_at(res, at_rv)
            else:
                at_rv, start = self.rv, None
                objs = self.objects[res]
            keys = sorted(k for k in objs if start is None or k > start)
            items, more = [], False
            last_key = None
            for k in keys:
                obj = objs[k]
                if ns is not None and k[0] != ns:
                    continue
                if not label((obj.get("metadata") or {}).get("labels")) or not field(obj):
                    continue
                if limit > 0 and len(items) >= limit:
                    more = True
                    break
                items.append(obj)
                last_key = k
            meta = {"resourceVersion": str(at_rv)}
            if more:
                meta["continue"] = base64.urlsafe_b64encode(
                    dumps({"rv": at_rv, "start": list(last_key)}).encode()).decode().rstrip("=")
            return {"kind": res.kind + "List", "apiVersion": res.api_version, "metadata": meta,
                    "items": items}

    # ---- API writes ----

    def _check_body(self, res, body):
        if not isinstance(body, dict):
            raise ApiError(400, "the request body must be a JSON object")
        kind, av = body.get("kind"), body.get("apiVersion")
        if (kind and kind != res.kind) or (av and av != res.api_version):
            raise ApiError(400, f"the body is a {av} {kind}, not a {res.api_version} {res.kind}")

    def create(self, res, ns, body):
        self._check_body(res, body)
        obj = copy.deepcopy(body)
        meta = _meta(obj)
        if res.namespaced:
            if meta.get("namespace") and meta["namespace"] != ns:
                raise ApiError(400, "the namespace of the provided object does not match the "
                                    "namespace sent on the request")
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        with self.lock:
            if not meta.get("name"):
                gen = meta.get("generateName")
                if not gen:
                    raise ApiError(422, f"{res.kind} is invalid: metadata.name: Required value: "
                                        "name or generateName is required")
                while True:
                    name = gen + "".join(random.choice("bcdfghjklmnpqrstvwxz2456789")
                                         for _ in range(5))
                    if self._key(res, ns, name) not in self.objects[res]:
                        break
                meta["name"] = name
            key = self._key(res, ns, meta["name"])
            if key in self.objects[res]:
                raise already_exists(res, meta["name"])
            for f in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds",
                      "managedFields"):
                meta.pop(f, None)
            meta["uid"] = str(uuid.uuid4())
            meta["creationTimestamp"] = now_rfc3339()
            if res.generation:
                meta["generation"] = 1
            if res.plural == "pods" and not res.group:
                obj["status"] = {"phase": "Pending"}
            elif res.plural == "namespaces" and not res.group:
                obj["status"] = {"phase": "Active"}
            elif res.has_status and res.group in CRD_GROUPS:
                obj.pop("status", None)
            return self._put_new(res, key, obj)

    def _finish_update(self, res, key, old, new):
        """Common tail of PUT/PATCH (main resource or status). new is owned here."""
        meta, ometa = _meta(new), old["metadata"]
        rv = meta.get("resourceVersion")
        if rv not in (None, "") and rv != ometa.get("resourceVersion"):
            raise conflict(res, ometa["name"])
        if meta.get("uid") not in (None, "") and meta["uid"] != ometa.get("uid"):
            raise conflict(res, ometa["name"],
                           f"Precondition failed: UID in precondition: {meta['uid']}, "
                           f"UID in object meta: {ometa.get('uid')}")
        if meta.get("name") not in (None, "") and meta["name"] != ometa["name"]:
            raise ApiError(400, f"the name of the object ({meta['name']}) does not match the "
                                f"name on the URL ({ometa['name']})")
        if res.namespaced and meta.get("namespace") not in (None, "") and \
                meta["namespace"] != ometa.get("namespace"):
            raise ApiError(400, "the namespace of the provided object does not match the "
                                "namespace sent on the request")
        # Fields the API server owns.
        meta["name"] = ometa["name"]
        if res.namespaced:
            meta["namespace"] = ometa["namespace"]
        else:
            meta.pop("namespace", None)
        for f in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
                  "generation"):
            if f in ometa:
                meta[f] = ometa[f]
            else:
                meta.pop(f, None)
        meta["resourceVersion"] = ometa.get("resourceVersion")
        new["apiVersion"], new["kind"] = res.api_version, res.kind
        if _without_rv(new) == _without_rv(old):
            return old  # a no-op write: no new resourceVersion, no event (like the real server)
        if res.generation and _spec_part(new) != _spec_part(old):
            meta["generation"] = int(ometa.get("generation") or 0) + 1
        return self._put_update(res, key, new)

    def update(self, res, ns, name, body, status_only):
        self._check_body(res, body)
        with self.lock:
            key = self._key(res, ns, name)
            old = self.objects[res].get(key)
            if old is None:
                raise not_found(res, name)
            return self._apply_update(res, key, old, copy.deepcopy(body), status_only)

    def _apply_update(self, res, key, old, new, status_only):
        if status_only:
            body_meta = new.get("metadata") or {}
            result = copy.deepcopy(old)
            rmeta = result["metadata"]
            # Only .status counts; the body's preconditions and name are still checked.
            for f in ("resourceVersion", "uid"):
                rmeta.pop(f, None)
            for f in ("resourceVersion", "uid", "name", "namespace"):
                if f in body_meta:
                    rmeta[f] = body_meta[f]
            if "status" in new:
                result["status"] = new["status"]
            else:
                result.pop("status", None)
            new = result
        elif res.has_status:
            if "status" in old:
                new["status"] = copy.deepcopy(old["status"])
            else:
                new.pop("status", None)
        return self._finish_update(res, key, old, new)

    def patch(self, res, ns, name, content_type, body_bytes, status_only):
        try:
            patch = json.loads(body_bytes or b"null")
        except ValueError as e:
            raise ApiError(400, f"the patch is not valid JSON: {e}")
        ct = (content_type or "").split(";")[0].strip().lower()
        with self.lock:
            key = self._key(res, ns, name)
            old = self.objects[res].get(key)
            if old is None:
                raise not_found(res, name)
            if ct == "application/merge-patch+json":
                if not isinstance(patch, dict):
                    raise ApiError(400, "a merge patch must be a JSON object")
                new = merge_patch(old, patch)
            elif ct == "application/strategic-merge-patch+json":
                if not isinstance(patch, dict):
                    raise ApiError(400, "a strategic merge patch must be a JSON object")
                new = strategic_merge_patch(old, patch)
            elif ct == "application/json-patch+json":
                try:
                    new = json_patch(old, patch)
                except PatchError as e:
                    raise ApiError(422, f"the JSON patch could not be applied: {e}", "Invalid")
            else:
                raise ApiError(415, f"the server does not support the patch type {ct!r}",
                               "UnsupportedMediaType")
            if not isinstance(new, dict):
                raise ApiError(422, "the patched object is not a JSON object", "Invalid")
            new = copy.deepcopy(new)
            if not isinstance(new.get("metadata"), dict):
                new["metadata"] = {}
            if status_only:
                # Only .status of the patched object counts; preconditions still do.
                result = copy.deepcopy(old)
                rmeta, nmeta = result["metadata"], new["metadata"]
                for f in ("resourceVersion", "uid"):
                    if f in nmeta:
                        rmeta[f] = nmeta[f]
                    else:
                        rmeta.pop(f, None)
                if "status" in new:
                    result["status"] = new["status"]
                else:
                    result.pop("status", None)
                new = result
            elif res.has_status:
                if "status" in old:
                    new["status"] = copy.deepcopy(old["status"])
                else:
                    new.pop("status", None)
            return self._finish_update(res, key, old, new)

    def delete(self, res, ns, name, opts, grace_query):
        if opts is not None and not isinstance(opts, dict):
            raise ApiError(400, "DeleteOptions must be a JSON object")
        opts = opts or {}
        pre = opts.get("preconditions") or {}
        grace = opts.get("gracePeriodSeconds", grace_query)
        with self.lock:
            key = self._key(res, ns, name)
            old = self.objects[res].get(key)
            if old is None:
                raise not_found(res, name)
            ometa = old["metadata"]
            if pre.get("uid") and pre["uid"] != ometa.get("uid"):
                raise conflict(res, name, f"Precondition failed: UID in precondition: "
                                          f"{pre['uid']}, UID in object meta: {ometa.get('uid')}")
            if pre.get("resourceVersion") and pre["resourceVersion"] != ometa.get("resourceVersion"):
                raise conflict(res, name, f"Precondition failed: ResourceVersion in precondition: "
                                          f"{pre['resourceVersion']}, ResourceVersion in object "
                                          f"meta: {ometa.get('resourceVersion')}")
            if ometa.get("finalizers"):
                if ometa.get("deletionTimestamp"):
                    return old
                new = copy.deepcopy(old)
                new["metadata"]["deletionTimestamp"] = now_rfc3339()
                new["metadata"]["deletionGracePeriodSeconds"] = int(grace or 0)
                if res.generation:
                    new["metadata"]["generation"] = int(ometa.get("generation") or 0) + 1
                return self._put_update(res, key, new)
            return self._remove(res, key)

    def bind(self, ns, pod_name, body):
        pods = BY_PATH[("", "v1", "pods")]
        if not isinstance(body, dict):
            raise ApiError(400, "the request body must be a v1 Binding")
        if body.get("kind") not in (None, "Binding"):
            raise ApiError(400, f"the body is a {body.get('kind')}, not a Binding")
        bmeta = body.get("metadata") or {}
        if bmeta.get("name") and pod_name and bmeta["name"] != pod_name:
            raise ApiError(400, f"the name of the binding ({bmeta['name']}) does not match the "
                                f"pod name on the URL ({pod_name})")
        pod_name = pod_name or bmeta.get("name")
        if not pod_name:
            raise ApiError(400, "the Binding has no metadata.name")
        target = body.get("target") or {}
        node = target.get("name")
        if not node:
            raise ApiError(400, "the Binding has no target.name")
        with self.lock:
            key = (ns, pod_name)
            old = self.objects[pods].get(key)
            if old is None:
                raise not_found(pods, pod_name)
            if bmeta.get("uid") and bmeta["uid"] != old["metadata"].get("uid"):
                raise conflict(pods, pod_name, "the UID of the binding does not match the pod's")
            if old["metadata"].get("deletionTimestamp"):
                raise conflict(pods, pod_name, f"pod {pod_name} is being deleted, cannot be "
                                               "assigned to a host")
            assigned = (old.get("spec") or {}).get("nodeName")
            if assigned:
                raise conflict(pods, pod_name, f'pod {pod_name} is already assigned to node '
                                               f'"{assigned}"')
            new = copy.deepcopy(old)
            new.setdefault("spec", {})["nodeName"] = node
            if bmeta.get("annotations"):
                new["metadata"].setdefault("annotations", {}).update(bmeta["annotations"])
            conds = new.setdefault("status", {}).setdefault("conditions", [])
            conds[:] = [c for c in conds if c.get("type") != "PodScheduled"]
            conds.append({"type": "PodScheduled", "status": "True",
                          "lastTransitionTime": now_rfc3339()})
            self._put_update(pods, key, new)
            return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                    "code": 201}

    # ---- control writes ----

    def control_op(self, op, obj):
        if not isinstance(obj, dict):
            raise ApiError(400, "object must be a JSON object")
        res = BY_KIND.get((obj.get("apiVersion"), obj.get("kind")))
        if res is None:
            raise ApiError(400, f"unknown apiVersion/kind {obj.get('apiVersion')}/{obj.get('kind')}")
        obj = copy.deepcopy(obj)
        meta = _meta(obj)
        if res.namespaced:
            meta["namespace"] = meta.get("namespace") or "default"
        else:
            meta.pop("namespace", None)
        with self.lock:
            if not meta.get("name") and meta.get("generateName") and op == "create":
                meta["name"] = meta["generateName"] + uuid.uuid4().hex[:5]
            name = meta.get("name")
            if not name:
                raise ApiError(400, "object has no metadata.name")
            key = self._key(res, meta.get("namespace"), name)
            old = self.objects[res].get(key)
            if op == "apply":
                op = "update" if old is not None else "create"
            if op == "create":
                if old is not None:
                    raise already_exists(res, name)
                meta.setdefault("uid", str(uuid.uuid4()))
                meta.setdefault("creationTimestamp", now_rfc3339())
                if res.generation:
                    meta.setdefault("generation", 1)
                return self._put_new(res, key, obj)
            if op == "update":
                if old is None:
                    raise not_found(res, name)
                for f in ("uid", "creationTimestamp"):
                    if f not in meta and f in old["metadata"]:
                        meta[f] = old["metadata"][f]
                return self._put_update(res, key, obj)
            if op == "delete":
                if old is None:
                    raise not_found(res, name)
                return self._remove(res, key)
            raise ApiError(400, f"unknown op {op!r} (create, update, apply, delete)")

    def compact(self):
        with self.lock:
            self.history.clear()
            self.compacted_rv = self.rv
            return self.rv

    def broadcast(self, item, only_bookmarks=False):
        with self.lock:
            n = 0
            for w in self.watchers:
                if only_bookmarks and not w.bookmarks:
                    continue
                w.q.put(item)
                n += 1
            return n


# --------------------------------------------------------------------------------------------
# Faults and the request log

ACTIONS = ("status", "delay_ms", "truncate_after_bytes", "drop_after_events", "hang",
           "apply_then_status")


class Faults:
    def __init__(self):
        self.lock = threading.Lock()
        self.rules = []

    def add(self, rules):
        if not isinstance(rules, list):
            raise ApiError(400, "rules must be a list")
        parsed = []
        for r in rules:
            if not isinstance(r, dict):
                raise ApiError(400, "a rule must be an object")
            action = r.get("action")
            if not isinstance(action, dict):
                raise ApiError(400, "a rule needs an action object")
            names = [a for a in ACTIONS if a in action]
            if len(names) != 1:
                raise ApiError(400, f"an action needs exactly one of {', '.join(ACTIONS)}")
            for k in ("status", "retry_after", "delay_ms", "truncate_after_bytes",
                      "drop_after_events", "hang_seconds", "apply_then_status"):
                v = action.get(k)
                if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                    raise ApiError(400, f"action.{k} must be a number")
            for k in ("status", "apply_then_status"):
                if k in action and not 100 <= action[k] <= 599:
                    raise ApiError(400, f"action.{k} must be an HTTP status code")
            try:
                path_re = re.compile(r.get("path") or "")
                query_re = re.compile(r.get("query") or "")
            except re.error as e:
                raise ApiError(400, f"bad regex: {e}")
            times = r.get("times", 1)
            if not isinstance(times, int):
                raise ApiError(400, "times must be an integer")
            method = (r.get("method") or "*").upper()
            watch = r.get("watch")
            if watch not in (None, True, False):
                raise ApiError(400, "watch must be true, false or null")
            parsed.append({"method": method, "path": r.get("path") or "", "query": r.get("query") or "",
                           "watch": watch, "times": times, "action": action,
                           "_name": names[0], "_path": path_re, "_query": query_re})
        with self.lock:
            self.rules.extend(parsed)
        return len(parsed)

    def clear(self):
        with self.lock:
            self.rules = []

    def take(self, method, path, query, is_watch):
        with self.lock:
            for r in self.rules:
                if r["times"] == 0:
                    continue
                if r["method"] != "*" and r["method"] != method:
                    continue
                if r["watch"] is not None and r["watch"] != is_watch:
                    continue
                if not r["_path"].search(path) or not r["_query"].search(query):
                    continue
                if r["times"] > 0:
                    r["times"] -= 1
                return r["_name"], r["action"]
        return None, None

    def dump(self):
        with self.lock:
            return [{k: v for k, v in r.items() if not k.startswith("_")} for r in self.rules]


class State:
    def __init__(self, args):
        self.store = Store(args.history_limit)
        self.faults = Faults()
        self.bookmark_interval = args.bookmark_interval
        self.verbose = args.verbose
        self.log_lock = threading.Lock()
        self.log = []


# --------------------------------------------------------------------------------------------
# HTTP


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kai-fake-apiserver/1"

    def log_message(self, fmt, *args):
        if self.server.state.verbose:
            sys.stderr.write("fake-apiserver: " + (fmt % args) + "\n")

    def do_GET(self):
        self._handle("GET")

    def do_POST(self):
        self._handle("POST")

    def do_PUT(self):
        self._handle("PUT")

    def do_PATCH(self):
        self._handle("PATCH")

    def do_DELETE(self):
        self._handle("DELETE")

    # ---- plumbing ----

    def _read_body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            out = b""
            while True:
                line = self.rfile.readline()
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def _set_status(self, code):
        if self._entry is not None:
            with self.server.state.log_lock:
                self._entry["status"] = code

    def _send(self, code, body, content_type="application/json", headers=None):
        if isinstance(body, (dict, list)):
            body = dumps(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        self._set_status(code)
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, str(v))
        self.end_headers()
        if self._truncate is not None:
            self.wfile.write(body[:max(0, self._truncate)])
            self._abort()
            return
        self.wfile.write(body)

    def _send_error(self, err):
        self._send(err.code, err.status(), headers=err.headers)

    def _abort(self):
        """Close the connection now (FIN), whatever is left unsent."""
        self.close_connection = True
        try:
            self.wfile.flush()
        except OSError:
            pass
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _client_gone(self):
        try:
            r, _, _ = select.select([self.connection], [], [], 0)
            if not r:
                return False
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _write_chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    # ---- dispatch ----

    def _handle(self, method):
        self._entry = None
        self._truncate = None
        try:
            self._handle_inner(method)
        except OSError:
            self.close_connection = True  # the client went away
        except Exception as e:  # a bug in this server: say so, loudly
            traceback.print_exc()
            self.close_connection = True
            try:
                self._send_error(ApiError(500, f"fake apiserver bug: {e!r}"))
            except OSError:
                pass

    def _handle_inner(self, method):
        url = urlsplit(self.path)
        path, raw_query = url.path, url.query
        query = {k: v[-1] for k, v in parse_qs(raw_query, keep_blank_values=True).items()}
        try:
            body = self._read_body()
        except (ValueError, OSError):
            self.close_connection = True
            return
        if path == "/_control" or path.startswith("/_control/"):
            try:
                self._control(method, path, query, body)
            except ApiError as e:
                self._send_error(e)
            return

        state = self.server.state
        is_watch = method == "GET" and query.get("watch", "").lower() in ("1", "true")
        try:
            parsed_body = json.loads(body) if body else None
        except ValueError:
            parsed_body = body.decode("utf-8", "replace")
        self._entry = {"method": method, "path": path, "query": raw_query, "status": None,
                       "content_type": self.headers.get("Content-Type"), "fault": None,
                       "watch": is_watch, "body": parsed_body}
        with state.log_lock:
            state.log.append(self._entry)

        name, action = state.faults.take(method, path, raw_query, is_watch)
        drop_after = None
        apply_then = None
        if name is not None:
            with state.log_lock:
                self._entry["fault"] = name
            if name == "status":
                code = int(action["status"])
                headers = {}
                if action.get("retry_after") is not None:
                    headers["Retry-After"] = action["retry_after"]
                err = ApiError(code, action.get("message") or f"injected fault: HTTP {code}",
                               headers=headers)
                if action.get("retry_after") is not None:
                    err.details = {"retryAfterSeconds": int(action["retry_after"])}
                self._send_error(err)
                return
            if name == "hang":
                self._hang(float(action.get("hang_seconds", 120)))
                return
            if name == "delay_ms":
                time.sleep(float(action["delay_ms"]) / 1000.0)
            elif name == "truncate_after_bytes" and not is_watch:
                self._truncate = int(action["truncate_after_bytes"])
            elif name == "drop_after_events" and is_watch:
                drop_after = int(action["drop_after_events"])
            elif name == "apply_then_status":
                apply_then = int(action["apply_then_status"])

        try:
            result = self._api(method, path, query, body, parsed_body, is_watch, drop_after)
        except ApiError as e:  # not applied: the client hears the real error
            self._send_error(e)
            return
        if result is None:  # a watch, already answered
            return
        code, obj = result
        if apply_then is not None:
            self._send_error(ApiError(apply_then, f"injected fault: HTTP {apply_then} after "
                                                  "applying the request"))
            return
        self._send(code, obj)

    def _hang(self, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                r, _, _ = select.select([self.connection], [], [], 0.25)
                if r and self.connection.recv(1, socket.MSG_PEEK) == b"":
                    break
            except OSError:
                break
        self._abort()

    def _route(self, path):
        parts = [p for p in path.split("/") if p]
        if parts[:2] == ["api", "v1"]:
            group, version, rest = "", "v1", parts[2:]
        elif len(parts) >= 3 and parts[0] == "apis":
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            raise ApiError(404, f"the server could not find the requested resource ({path})")
        ns = None
        if len(rest) >= 3 and rest[0] == "namespaces" and (
                (group, version, rest[2]) in BY_PATH or (not group and rest[2] == "bindings")):
            ns, rest = rest[1], rest[2:]
        if ns is not None and not group and rest[0] == "bindings" and len(rest) == 1:
            return "bindings", ns, None, None
        if not rest or len(rest) > 3:
            raise ApiError(404, f"the server could not find the requested resource ({path})")
        res = BY_PATH.get((group, version, rest[0]))
        if res is None or (ns is not None and not res.namespaced):
            raise ApiError(404, f"the server could not find the requested resource ({path})")
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        if res.namespaced and ns is None and name is not None:
            raise ApiError(404, f"the server could not find the requested resource ({path})")
        return res, ns, name, sub

    def _discovery(self, path):
        """The APIResourceList of a served group version (GET /api/v1, /apis/G/V), or None."""
        parts = [p for p in path.split("/") if p]
        if parts == ["api", "v1"]:
            group, version = "", "v1"
        elif len(parts) == 3 and parts[0] == "apis":
            group, version = parts[1], parts[2]
        else:
            return None
        served = [r for r in RESOURCES if r.group == group and r.version == version]
        if not served:
            return None
        return {"kind": "APIResourceList", "apiVersion": "v1",
                "groupVersion": f"{group}/{version}" if group else version,
                "resources": [{"name": r.plural, "kind": r.kind, "namespaced": r.namespaced,
                               "verbs": ["create", "delete", "get", "list", "patch", "update",
                                         "watch"]} for r in served]}

    def _api(self, method, path, query, body, parsed, is_watch, drop_after):
        store = self.server.state.store
        if method == "GET" and not is_watch:
            listing = self._discovery(path)
            if listing is not None:
                return 200, listing
        res, ns, name, sub = self._route(path)
        if isinstance(parsed, str):
            if method in ("POST", "PUT") or (method == "DELETE" and parsed.strip()):
                raise ApiError(400, "the request body is not valid JSON")
        if res == "bindings":
            if method != "POST":
                raise ApiError(405, f"method {method} is not allowed on bindings")
            return 201, store.bind(ns, None, parsed)
        if name is None:
            if method == "GET":
                if is_watch:
                    self._watch(res, ns, path, query, drop_after)
                    return None
                return 200, store.list(res, ns, query)
            if method == "POST":
                if res.namespaced and ns is None:
                    raise ApiError(405, f"POST on all-namespace {res.plural} is not allowed")
                return 201, store.create(res, ns, parsed)
            raise ApiError(405, f"method {method} is not allowed on a collection")
        if sub is None:
            if method == "GET":
                return 200, store.get(res, ns, name)
            if method == "PUT":
                return 200, store.update(res, ns, name, parsed, False)
            if method == "PATCH":
                return 200, store.patch(res, ns, name, self.headers.get("Content-Type"), body,
                                        False)
            if method == "DELETE":
                grace = query.get("gracePeriodSeconds")
                try:
                    grace = int(grace) if grace not in (None, "") else None
                except ValueError:
                    raise ApiError(400, f"invalid gracePeriodSeconds {grace!r}")
                return 200, store.delete(res, ns, name, parsed, grace)
            raise ApiError(405, f"method {method} is not allowed")
        if sub == "status" and res.has_status:
            if method == "GET":
                return 200, store.get(res, ns, name)
            if method == "PUT":
                return 200, store.update(res, ns, name, parsed, True)
            if method == "PATCH":
                return 200, store.patch(res, ns, name, self.headers.get("Content-Type"), body,
                                        True)
            raise ApiError(405, f"method {method} is not allowed on status")
        if sub == "binding" and res.plural == "pods" and not res.group:
            if method != "POST":
                raise ApiError(405, f"method {method} is not allowed on pods/binding")
            return 201, store.bind(ns, name, parsed)
        raise ApiError(404, f"the server could not find the requested resource ({path})")

    # ---- watch ----

    def _watch(self, res, ns, path, query, drop_after):
        state = self.server.state
        store = state.store
        label = parse_label_selector(query.get("labelSelector", ""))
        field = parse_field_selector(query.get("fieldSelector", ""))
        bookmarks = query.get("allowWatchBookmarks", "").lower() in ("1", "true")
        try:
            timeout = float(query.get("timeoutSeconds") or 300)
        except ValueError:
            raise ApiError(400, "invalid timeoutSeconds")
        rv_param = query.get("resourceVersion", "")
        start_rv = None
        if rv_param not in ("", "0"):
            try:
                start_rv = int(rv_param)
            except ValueError:
                raise ApiError(400, f"invalid resourceVersion {rv_param!r}")

        def matches(obj):
            if obj is None:
                return False
            meta = obj.get("metadata") or {}
            if ns is not None and meta.get("namespace") != ns:
                return False
            return label(meta.get("labels")) and field(obj)

        def convert(ev):
            if ev.type == "ADDED":
                return ("ADDED", ev.obj) if matches(ev.obj) else None
            if ev.type == "DELETED":
                return ("DELETED", ev.obj) if matches(ev.prev) else None
            now_m, was_m = matches(ev.obj), matches(ev.prev)
            if now_m and was_m:
                return ("MODIFIED", ev.obj)
            if now_m:
                return ("ADDED", ev.obj)
            if was_m:
                gone = copy.deepcopy(ev.prev)
                gone["metadata"]["resourceVersion"] = str(ev.rv)
                return ("DELETED", gone)
            return None

        watcher = Watcher(res, path, rv_param, bookmarks)
        expired = None
        replay = []
        with store.lock:
            if start_rv is not None:
                if start_rv < store.compacted_rv:
                    expired = f"too old resource version: {start_rv} ({store.compacted_rv})"
                else:
                    replay = [ev for ev in store.history if ev.rv > start_rv and ev.res is res]
            if expired is None:
                store.watchers.add(watcher)
        try:
            self._set_status(200)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Cache-Control", "no-cache, private")
            self.end_headers()
            if expired is not None:
                self._write_chunk((dumps({"type": "ERROR", "object": {
                    "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "code": 410, "reason": "Expired", "message": expired}}) + "\n").encode())
                self._write_chunk(b"")
                return
            sent = 0
            if drop_after is not None and drop_after <= 0:
                self._abort()
                return

            def deliver(ev):
                nonlocal sent
                if start_rv is not None and ev.rv <= start_rv:
                    return False  # a watch from a future RV starts after it
                out = convert(ev)
                if out is None:
                    return False
                self._write_chunk((dumps({"type": out[0], "object": out[1]}) + "\n").encode())
                sent += 1
                if drop_after is not None and sent >= drop_after:
                    self._abort()
                    return True
                return False

            for ev in replay:
                if deliver(ev):
                    return
            interval = max(0.01, float(state.bookmark_interval))
            deadline = time.monotonic() + timeout
            next_bm = time.monotonic() + interval if bookmarks else float("inf")
            while True:
                now = time.monotonic()
                if now >= deadline:
                    break
                if now >= next_bm:
                    with store.lock:  # queued behind every event up to the current RV
                        watcher.q.put(("BOOKMARK", store.rv))
                    next_bm = now + interval
                wait = max(0.0, min(deadline, next_bm, now + 0.5) - now)
                try:
                    kind, val = watcher.q.get(timeout=wait)
                except queue.Empty:
                    if self._client_gone():
                        self.close_connection = True
                        return
                    continue
                if kind == "EVENT":
                    if deliver(val):
                        return
                elif kind == "BOOKMARK":
                    self._write_chunk((dumps({"type": "BOOKMARK", "object": {
                        "kind": res.kind, "apiVersion": res.api_version,
                        "metadata": {"resourceVersion": str(val)}}}) + "\n").encode())
                elif kind == "CLOSE":
                    break
            with store.lock:  # gone from the count before the client sees the end
                store.watchers.discard(watcher)
            self._write_chunk(b"")
        except OSError:
            self.close_connection = True
        finally:
            with store.lock:
                store.watchers.discard(watcher)

    # ---- control API ----

    def _control(self, method, path, query, body):
        state = self.server.state
        store = state.store
        try:
            data = json.loads(body) if body else {}
        except ValueError:
            raise ApiError(400, "the control request body is not valid JSON")
        if not isinstance(data, dict):
            raise ApiError(400, "the control request body must be a JSON object")
        route = path[len("/_control/"):].strip("/") if path.startswith("/_control/") else ""
        if route == "healthz" and method == "GET":
            self._send(200, "ok", "text/plain")
            return
        if route == "objects" and method == "GET":
            res = BY_KIND.get((query.get("apiVersion"), query.get("kind")))
            if res is None:
                raise ApiError(400, f"unknown apiVersion/kind {query.get('apiVersion')}/"
                                    f"{query.get('kind')}")
            with store.lock:
                items = [store.objects[res][k] for k in sorted(store.objects[res])]
                ns = query.get("namespace")
                if ns:
                    items = [o for o in items if o["metadata"].get("namespace") == ns]
                payload = {"resourceVersion": str(store.rv), "items": items}
            self._send(200, payload)
            return
        if route == "objects" and method == "POST":
            ops = data.get("ops") if "ops" in data else [data]
            if not isinstance(ops, list):
                raise ApiError(400, "ops must be a list")
            out = []
            with store.lock:
                for i, op in enumerate(ops):
                    if not isinstance(op, dict):
                        raise ApiError(400, f"op {i} is not an object")
                    try:
                        out.append(store.control_op(op.get("op"), op.get("object")))
                    except ApiError as e:
                        e.message = f"op {i} ({op.get('op')}): {e.message}"
                        raise
                payload = {"resourceVersion": str(store.rv), "objects": out}
            self._send(200, payload)
            return
        if route == "compact" and method == "POST":
            self._send(200, {"resourceVersion": str(store.compact())})
            return
        if route == "bookmark" and method == "POST":
            with store.lock:
                n = store.broadcast(("BOOKMARK", store.rv), only_bookmarks=True)
                payload = {"resourceVersion": str(store.rv), "watches": n}
            self._send(200, payload)
            return
        if route == "close-watches" and method == "POST":
            self._send(200, {"watches": store.broadcast(("CLOSE", None))})
            return
        if route == "watches" and method == "GET":
            with store.lock:
                ws = [{"path": w.path, "resourceVersion": w.start_rv, "bookmarks": w.bookmarks}
                      for w in store.watchers]
            self._send(200, {"count": len(ws), "watches": ws})
            return
        if route == "faults":
            if method == "POST":
                n = state.faults.add(data.get("rules"))
                self._send(200, {"added": n, "rules": state.faults.dump()})
                return
            if method == "DELETE":
                state.faults.clear()
                self._send(200, {"rules": []})
                return
            if method == "GET":
                self._send(200, {"rules": state.faults.dump()})
                return
        if route == "log":
            if method == "GET":
                with state.log_lock:
                    entries = [dict(e) for e in state.log]
                self._send(200, entries)
                return
            if method == "DELETE":
                with state.log_lock:
                    state.log.clear()
                self._send(200, [])
                return
        raise ApiError(404, f"no control endpoint {method} {path}")


class Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 128

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], OSError) and not self.state.verbose:
            return  # a client that went away mid-request
        super().handle_error(request, client_address)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Fault-injecting fake Kubernetes API server")
    ap.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0: pick a free one)")
    ap.add_argument("--port-file", help="write the port number here (atomically)")
    ap.add_argument("--history-limit", type=int, default=1000,
                    help="watch events kept for replay (older RVs get 410 Expired)")
    ap.add_argument("--bookmark-interval", type=float, default=1.0,
                    help="seconds between bookmarks on watches with allowWatchBookmarks")
    ap.add_argument("--verbose", action="store_true", help="log every request on stderr")
    args = ap.parse_args(argv)

    server = Server(("127.0.0.1", args.port), Handler)
    server.state = State(args)
    port = server.server_address[1]
    if args.port_file:
        tmp = f"{args.port_file}.tmp.{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(f"{port}\n")
        os.replace(tmp, args.port_file)
    print(f"PORT {port}", flush=True)

    def on_signal(signum, frame):
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        server.serve_forever(poll_interval=0.05)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
