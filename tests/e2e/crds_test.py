#!/usr/bin/env python3
"""kai's CRDs (deploy/crds/) on a real kube-apiserver.

    python3 tests/e2e/crds_test.py [-v]

Starts its own kube-apiserver (../shared/tools/kube-apiserver/start.sh) and checks that
`kubectl apply -f deploy/crds/` installs the CRDs and they become Established with KAI's names,
scopes, versions and subresources; that every Queue, PodGroup, BindRequest, Topology and
SchedulingShard in the YAML files under ../shared/scenarios, tests/scenarios and examples is
accepted by `kubectl apply --dry-run=server` (strict field validation, as kubectl does by default);
that tests/e2e/fixtures/kai-objects.yaml (objects setting nearly every field KAI has, Config
included) is accepted; and that what KAI's CRDs reject for being invalid is rejected too.

With KAI_CRDS_DIR=<KAI checkout>/deployments/kai-scheduler/crds it also compares the schemas with
KAI's: every field of KAI's schema must be in kai's with the same type (or inside an open,
x-kubernetes-preserve-unknown-fields part), and kai's may not validate anything KAI's does not
(a few widenings are listed in ALLOWED_WIDER and ALLOWED_DIFFERENT).

Skips when /opt/kube-test/bin/kube-apiserver is not built.
"""

from __future__ import annotations

import glob
import json
import os
import pathlib
import sys
import unittest

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kube_server  # noqa: E402
import scenario_loader as sl  # noqa: E402

REPO = kube_server.REPO_ROOT
CRDS_DIR = REPO / "deploy" / "crds"
FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures" / "kai-objects.yaml"
SCENARIO_ROOTS = [REPO.parent / "shared" / "scenarios", REPO / "tests" / "scenarios", REPO / "examples"]
CHECKED_KINDS = {"Queue", "PodGroup", "BindRequest", "Topology", "SchedulingShard"}

# Scenario files whose objects the API refuses because the file is wrong, not the CRD. The test
# prints them; it fails only on other rejections. Fix the file, then remove its line here.
KNOWN_REJECTED: dict[str, str] = {}

# name -> (group, kind, plural, singular, shortNames, scope, [(version, served, storage)], status)
EXPECTED_CRDS = {
    "queues.scheduling.run.ai": ("scheduling.run.ai", "Queue", "queues", "queue", [], "Cluster",
                                 [("v2", True, True)], True),
    "podgroups.scheduling.run.ai": ("scheduling.run.ai", "PodGroup", "podgroups", "podgroup", ["pg"],
                                    "Namespaced", [("v2alpha2", True, True)], True),
    "bindrequests.scheduling.run.ai": ("scheduling.run.ai", "BindRequest", "bindrequests", "bindrequest",
                                       [], "Namespaced", [("v1alpha2", True, True)], True),
    "topologies.kai.scheduler": ("kai.scheduler", "Topology", "topologies", "topology", [], "Cluster",
                                 [("v1alpha1", True, True)], False),
    "schedulingshards.kai.scheduler": ("kai.scheduler", "SchedulingShard", "schedulingshards",
                                       "schedulingshard", [], "Cluster", [("v1", True, True)], True),
    "configs.kai.scheduler": ("kai.scheduler", "Config", "configs", "config", [], "Cluster",
                              [("v1", True, True)], True),
}

# Objects KAI's CRDs refuse (schema validation); kai's must refuse them as well.
INVALID = [
    ("negative minMember", {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
                            "metadata": {"name": "bad-min", "namespace": "default"},
                            "spec": {"minMember": -1}}),
    ("unknown preemptibility", {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
                                "metadata": {"name": "bad-pre", "namespace": "default"},
                                "spec": {"preemptibility": "sometimes"}}),
    ("sub-group name not a DNS label", {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
                                        "metadata": {"name": "bad-sg", "namespace": "default"},
                                        "spec": {"subGroups": [{"name": "Workers_A", "minMember": 1}]}}),
    ("sub-group without name", {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
                                "metadata": {"name": "bad-sg2", "namespace": "default"},
                                "spec": {"subGroups": [{"minMember": 1}]}}),
    ("unknown spec field", {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
                            "metadata": {"name": "bad-field"}, "spec": {"resourceQuota": {"gpu": 1}}}),
    ("quota as a string", {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
                           "metadata": {"name": "bad-type"}, "spec": {"resources": {"gpu": {"quota": "1"}}}}),
    ("topology without spec", {"apiVersion": "kai.scheduler/v1alpha1", "kind": "Topology",
                               "metadata": {"name": "bad-t0"}}),
    ("topology without levels", {"apiVersion": "kai.scheduler/v1alpha1", "kind": "Topology",
                                 "metadata": {"name": "bad-t1"}, "spec": {"levels": []}}),
    ("duplicate topology label", {"apiVersion": "kai.scheduler/v1alpha1", "kind": "Topology",
                                  "metadata": {"name": "bad-t2"},
                                  "spec": {"levels": [{"nodeLabel": "rack"}, {"nodeLabel": "rack"}]}}),
    ("hostname not the last level", {"apiVersion": "kai.scheduler/v1alpha1", "kind": "Topology",
                                     "metadata": {"name": "bad-t3"},
                                     "spec": {"levels": [{"nodeLabel": "kubernetes.io/hostname"},
                                                         {"nodeLabel": "rack"}]}}),
    ("17 topology levels", {"apiVersion": "kai.scheduler/v1alpha1", "kind": "Topology",
                            "metadata": {"name": "bad-t4"},
                            "spec": {"levels": [{"nodeLabel": f"l{i}"} for i in range(17)]}}),
    ("usageDBConfig without clientType", {"apiVersion": "kai.scheduler/v1", "kind": "SchedulingShard",
                                          "metadata": {"name": "bad-s1"},
                                          "spec": {"usageDBConfig": {"connectionString": "x"}}}),
    ("goMemLimitRatio 0", {"apiVersion": "kai.scheduler/v1", "kind": "SchedulingShard",
                           "metadata": {"name": "bad-s2"}, "spec": {"goMemLimitRatio": 0}}),
    ("bad windowSize", {"apiVersion": "kai.scheduler/v1", "kind": "SchedulingShard",
                        "metadata": {"name": "bad-s3"},
                        "spec": {"usageDBConfig": {"clientType": "prometheus",
                                                   "usageParams": {"windowSize": "1 week"}}}}),
    ("NUMA zone without amount", {"apiVersion": "scheduling.run.ai/v1alpha2", "kind": "BindRequest",
                                  "metadata": {"name": "bad-b1", "namespace": "default"},
                                  "spec": {"predictedNUMAZones": [{"zone": "0"}]}}),
]

SERVER: kube_server.Server | None = None


def setUpModule():
    global SERVER
    kube_server.require_apiserver()
    SERVER = kube_server.Server.start()


def tearDownModule():
    if SERVER is not None:
        SERVER.stop()


def rel(path: str | os.PathLike) -> str:
    p = pathlib.Path(path).resolve()
    for root, name in ((REPO, ""), (REPO.parent / "shared", "../shared/")):
        try:
            return name + str(p.relative_to(root))
        except ValueError:
            pass
    return str(p)


def scenario_objects() -> list[tuple[str, dict]]:
    """(file, object) for every object of CHECKED_KINDS in the scenario roots."""
    out = []
    for root in SCENARIO_ROOTS:
        for f in sorted(glob.glob(str(root / "**" / "*.yaml"), recursive=True)):
            try:
                with open(f) as fh:
                    docs = list(yaml.safe_load_all(fh))
            except yaml.YAMLError:
                continue
            for d in docs:
                items = d.get("items") if isinstance(d, dict) and d.get("kind") == "List" else [d]
                for o in items or []:
                    if isinstance(o, dict) and o.get("kind") in CHECKED_KINDS:
                        out.append((rel(f), o))
    return out


def canonical(o: dict) -> str:
    return json.dumps(o, sort_keys=True, default=sl._json_default)


class CrdsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        SERVER.kubectl("apply", "-f", str(CRDS_DIR))
        SERVER.kubectl("wait", "--for", "condition=established", "--timeout=120s",
                       *[f"crd/{n}" for n in EXPECTED_CRDS])
        cls.client = sl.Client(SERVER.kubeconfig)
        # every namespace the checked objects use must exist for a namespaced dry run
        namespaces = {"default"}
        for _, o in scenario_objects() + [("", x) for x in yaml.safe_load_all(FIXTURES.read_text())]:
            if o.get("kind") in ("PodGroup", "BindRequest"):
                namespaces.add((o.get("metadata") or {}).get("namespace") or "default")
        for ns in sorted(namespaces):
            try:
                cls.client.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                       "metadata": {"name": ns}})
            except sl.ApiError as e:
                if e.status != 409:
                    raise

    @classmethod
    def tearDownClass(cls):
        cls.client.close()

    def dry_run(self, o: dict) -> str | None:
        """What `kubectl apply --dry-run=server` sends for a new object: a create with
        dryRun=All and strict field validation. Returns the server's refusal, or None."""
        loader = sl.Loader(self.client, None)
        r = loader.resource_for(o["apiVersion"], o["kind"])
        if r is None:
            return f"no kind {o['kind']} in {o['apiVersion']}"
        md = o.get("metadata") or {}
        ns = (md.get("namespace") or "default") if r.namespaced else None
        body = json.loads(canonical(o))
        try:
            self.client.post(r.collection(ns), body, query={"dryRun": "All", "fieldValidation": "Strict"})
        except sl.ApiError as e:
            return str(e)
        return None

    def test_crds_established_with_kai_names(self):
        out = json.loads(SERVER.kubectl("get", "crd", "-o", "json").stdout)
        got = {c["metadata"]["name"]: c for c in out["items"]}
        for name, (group, kind, plural, singular, short, scope, versions, status) in EXPECTED_CRDS.items():
            with self.subTest(crd=name):
                self.assertIn(name, got)
                spec = got[name]["spec"]
                conds = {c["type"]: c["status"] for c in got[name]["status"]["conditions"]}
                self.assertEqual(conds.get("Established"), "True")
                self.assertEqual(conds.get("NamesAccepted"), "True")
                self.assertEqual(spec["group"], group)
                self.assertEqual(spec["names"]["kind"], kind)
                self.assertEqual(spec["names"]["listKind"], kind + "List")
                self.assertEqual(spec["names"]["plural"], plural)
                self.assertEqual(spec["names"]["singular"], singular)
                self.assertEqual(spec["names"].get("shortNames", []), short)
                self.assertEqual(spec["scope"], scope)
                self.assertEqual([(v["name"], v["served"], v["storage"]) for v in spec["versions"]], versions)
                for v in spec["versions"]:
                    self.assertEqual("status" in (v.get("subresources") or {}), status, v["name"])
        names = sorted(p.name for p in CRDS_DIR.glob("*.yaml"))
        self.assertEqual(names, sorted(f"{n}.yaml" for n in EXPECTED_CRDS))

    def test_scenario_objects_accepted(self):
        objs = scenario_objects()
        self.assertGreater(len(objs), 100, "no scenario objects found")
        by_content: dict[str, tuple[dict, list[str]]] = {}
        for f, o in objs:
            by_content.setdefault(canonical(o), (o, []))[1].append(f)
        rejected: dict[str, list[str]] = {}  # file -> refusals
        accepted = []
        for o, files in by_content.values():
            err = self.dry_run(o)
            if err is None:
                accepted.append(o)
            else:
                for f in sorted(set(files)):
                    rejected.setdefault(f, []).append(f"{sl.obj_ref(o)}: {err}")
        # the same objects through kubectl itself, in one stream
        p = SERVER.kubectl("apply", "--dry-run=server", "-f", "-", input=yaml.safe_dump_all(accepted),
                           check=False)
        self.assertEqual(p.returncode, 0, f"kubectl apply --dry-run=server refused:\n{p.stderr[-4000:]}")
        self.assertEqual(len([ln for ln in p.stdout.splitlines() if "(server dry run)" in ln]), len(accepted))
        print(f"\n  dry run: {len(objs)} objects ({len(by_content)} distinct) from "
              f"{len({f for f, _ in objs})} files; {len(accepted)} distinct accepted", file=sys.stderr)
        unexpected = {}
        for f, errs in sorted(rejected.items()):
            if f in KNOWN_REJECTED:
                print(f"  known rejection, {f} ({KNOWN_REJECTED[f]}): {len(errs)} objects, e.g. "
                      f"{errs[0][:300]}", file=sys.stderr)
            else:
                unexpected[f] = errs
        for f in sorted(set(KNOWN_REJECTED) - set(rejected)):
            print(f"  note: {f} is accepted now; remove it from KNOWN_REJECTED", file=sys.stderr)
        self.assertFalse(unexpected, "objects refused:\n" + "\n".join(
            f"{f}:\n    " + "\n    ".join(e[:600] for e in errs) for f, errs in unexpected.items()))

    def test_fixtures_accepted(self):
        p = SERVER.kubectl("apply", "--dry-run=server", "-f", str(FIXTURES), check=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        docs = [d for d in yaml.safe_load_all(FIXTURES.read_text()) if d]
        self.assertEqual({d["kind"] for d in docs}, CHECKED_KINDS | {"Config"})
        self.assertEqual(p.stdout.count("(server dry run)"), len(docs))

    def test_fixture_fields_survive(self):
        """Nothing of a full object is pruned: what the server returns holds every field sent."""
        for o in yaml.safe_load_all(FIXTURES.read_text()):
            if not o:
                continue
            with self.subTest(obj=sl.obj_ref(o)):
                r = sl.Loader(self.client, None).resource_for(o["apiVersion"], o["kind"])
                md = o.get("metadata") or {}
                ns = (md.get("namespace") or "default") if r.namespaced else None
                got = self.client.post(r.collection(ns), json.loads(canonical(o)),
                                       query={"dryRun": "All", "fieldValidation": "Strict"})
                want = json.loads(canonical(o.get("spec") or {}))
                self.assertEqual(_quantities_normalised(got.get("spec") or {}), _quantities_normalised(want))

    def test_status_subresource(self):
        o = {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": "status-check"},
             "spec": {"resources": {"gpu": {"quota": 1, "overQuotaWeight": 1, "limit": -1}}},
             "status": {"childQueues": ["x"]}}
        created = self.client.post("/apis/scheduling.run.ai/v2/queues", o)
        self.assertNotIn("childQueues", created.get("status") or {}, "status must be dropped on create")
        got = self.client.merge_patch("/apis/scheduling.run.ai/v2/queues/status-check/status",
                                      {"status": {"childQueues": ["x"], "allocated": {"nvidia.com/gpu": "1"}}})
        self.assertEqual(got["status"]["childQueues"], ["x"])
        self.client.delete("/apis/scheduling.run.ai/v2/queues/status-check")

    def test_invalid_objects_refused(self):
        for why, o in INVALID:
            with self.subTest(why):
                self.assertIsNotNone(self.dry_run(o), f"{why}: accepted")
        # a valid update of a Topology may change aliases only
        t = {"apiVersion": "kai.scheduler/v1alpha1", "kind": "Topology", "metadata": {"name": "immutable"},
             "spec": {"levels": [{"nodeLabel": "zone"}, {"nodeLabel": "rack", "alias": "r"}]}}
        base = "/apis/kai.scheduler/v1alpha1/topologies"
        self.client.post(base, t)
        try:
            self.client.merge_patch(f"{base}/immutable", {"spec": {"levels": [
                {"nodeLabel": "zone"}, {"nodeLabel": "rack", "alias": "rk"}]}})
            with self.assertRaises(sl.ApiError):
                self.client.merge_patch(f"{base}/immutable", {"spec": {"levels": [
                    {"nodeLabel": "zone"}, {"nodeLabel": "rack2"}]}})
            with self.assertRaises(sl.ApiError):
                self.client.merge_patch(f"{base}/immutable", {"spec": {"levels": [{"nodeLabel": "zone"}]}})
        finally:
            self.client.delete(f"{base}/immutable")


def _quantities_normalised(v):
    """The server keeps int-or-string quantities as sent; only YAML/JSON number forms differ."""
    if isinstance(v, dict):
        return {k: _quantities_normalised(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_quantities_normalised(x) for x in v]
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


# ---------------------------------------------------------------------------------------------
# Schema comparison with KAI's CRDs (KAI_CRDS_DIR)
# ---------------------------------------------------------------------------------------------

VALIDATION_KEYS = ("enum", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "pattern",
                   "minLength", "maxLength", "minItems", "maxItems", "required", "x-kubernetes-validations",
                   "format")
# Validation kai's CRDs have that KAI's lack or differ in, on purpose (path -> why).
ALLOWED_WIDER = {
    "podgroups.scheduling.run.ai/v2alpha2:.spec.preemptibility.enum":
        "adds semi-preemptible (KAI's semi-preemptible design, implemented by kai)",
}
ALLOWED_DIFFERENT = {
    "topologies.kai.scheduler/v1alpha1:.spec.levels.x-kubernetes-validations":
        "same three rules, written so that Kubernetes 1.28's CEL cost limit accepts them",
}


def _schema_diff(kai: dict, ours: dict, path: str, out: list[str], key: str) -> None:
    if ours.get("x-kubernetes-preserve-unknown-fields") and not ours.get("properties") \
            and not ours.get("additionalProperties") and not ours.get("items"):
        return  # open: anything KAI has fits
    kt, ot = kai.get("type"), ours.get("type")
    if kai.get("x-kubernetes-int-or-string") != ours.get("x-kubernetes-int-or-string") or \
            (kt != ot and not kai.get("x-kubernetes-int-or-string")):
        out.append(f"{key}:{path}: type {kt!r} (int-or-string {kai.get('x-kubernetes-int-or-string')}) in KAI, "
                   f"{ot!r} (int-or-string {ours.get('x-kubernetes-int-or-string')}) in kai")
        return
    for v in VALIDATION_KEYS:
        if v == "format":
            continue
        kv, ov = kai.get(v), ours.get(v)
        if ov is None or ov == kv:
            continue
        where = f"{key}:{path}.{v}"
        if where in ALLOWED_DIFFERENT:
            continue
        if v == "enum" and kv is not None and set(kv) <= set(ov) and where in ALLOWED_WIDER:
            continue
        if v == "required" and kv is not None and set(ov) <= set(kv):
            continue
        out.append(f"{where}: kai validates {ov!r}, KAI {kv!r}")
    kp, op = kai.get("properties") or {}, ours.get("properties") or {}
    for name, sub in kp.items():
        if name in op:
            _schema_diff(sub, op[name], f"{path}.{name}", out, key)
        elif not ours.get("x-kubernetes-preserve-unknown-fields"):
            out.append(f"{key}:{path}.{name}: in KAI's schema, missing in kai's")
    if isinstance(kai.get("additionalProperties"), dict):
        if isinstance(ours.get("additionalProperties"), dict):
            _schema_diff(kai["additionalProperties"], ours["additionalProperties"], f"{path}.*", out, key)
        elif not ours.get("x-kubernetes-preserve-unknown-fields"):
            out.append(f"{key}:{path}: a map in KAI, not in kai")
    if isinstance(kai.get("items"), dict):
        if isinstance(ours.get("items"), dict):
            _schema_diff(kai["items"], ours["items"], f"{path}[]", out, key)
        else:
            out.append(f"{key}:{path}: a list in KAI, not in kai")


def load_crds(d: pathlib.Path) -> dict[str, dict]:
    out = {}
    for f in sorted(d.glob("*.yaml")):
        for c in yaml.safe_load_all(f.read_text()):
            if isinstance(c, dict) and c.get("kind") == "CustomResourceDefinition":
                out[c["metadata"]["name"]] = c
    return out


@unittest.skipUnless(os.environ.get("KAI_CRDS_DIR"), "set KAI_CRDS_DIR to KAI's deployments/kai-scheduler/crds")
class SchemaMatchesKaiTest(unittest.TestCase):
    def test_schema_matches_kai(self):
        kai = load_crds(pathlib.Path(os.environ["KAI_CRDS_DIR"]))
        ours = load_crds(CRDS_DIR)
        self.assertEqual(sorted(kai), sorted(ours))
        diffs: list[str] = []
        for name, kc in kai.items():
            oc = ours[name]
            for f in ("group", "scope"):
                if kc["spec"][f] != oc["spec"][f]:
                    diffs.append(f"{name}: {f} {kc['spec'][f]!r} vs {oc['spec'][f]!r}")
            if kc["spec"]["names"] != oc["spec"]["names"]:
                diffs.append(f"{name}: names {kc['spec']['names']} vs {oc['spec']['names']}")
            ov = {v["name"]: v for v in oc["spec"]["versions"]}
            for kv in kc["spec"]["versions"]:
                v = ov.get(kv["name"])
                if v is None:
                    diffs.append(f"{name}: version {kv['name']} missing")
                    continue
                for f in ("served", "storage"):
                    if kv.get(f) != v.get(f):
                        diffs.append(f"{name}/{kv['name']}: {f} differs")
                if bool((kv.get("subresources") or {}).get("status") is not None) != \
                        bool((v.get("subresources") or {}).get("status") is not None):
                    diffs.append(f"{name}/{kv['name']}: status subresource differs")
                for col in kv.get("additionalPrinterColumns") or []:
                    if col not in (v.get("additionalPrinterColumns") or []):
                        diffs.append(f"{name}/{kv['name']}: printer column {col['name']} missing")
                _schema_diff(kv["schema"]["openAPIV3Schema"], v["schema"]["openAPIV3Schema"], "", diffs,
                             f"{name}/{kv['name']}")
        self.assertFalse(diffs, "\n".join(diffs))


if __name__ == "__main__":
    unittest.main()
