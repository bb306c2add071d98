#!/usr/bin/env python3
"""kai's Helm chart (deploy/helm/kai-scheduler) with helm itself, no cluster:

- `helm lint --strict` passes, with the chart's values and with each of KAI's values files.
- `helm template` matches the golden files (tests/helm/golden/), for the chart's defaults and for
  the install-time values KAI v0.18 documents. KAI_UPDATE_GOLDEN=1 rewrites them.
- KAI's own values files (tests/helm/kai-values/) render, and every key in them either changes
  what the chart renders or is listed, with its reason, in docs/helm.md's table of the values kai
  ignores (and nothing is listed there that kai does use). A key counts as used when setting it
  to another value changes the rendered objects.
- The chart's CRDs are deploy/crds/'s, and its operator RBAC is deploy/operator/operator.yaml's.

    python3 tests/helm/chart_test.py [-v]      (helm: $HELM, .tools/bin/helm, or on PATH)

Skips, saying "helm not installed", without helm (python3 scripts/install_helm.py installs it).
"""

from __future__ import annotations

import copy
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import unittest

import yaml

REPO = pathlib.Path(__file__).resolve().parent.parent.parent
CHART = REPO / "deploy" / "helm" / "kai-scheduler"
HERE = pathlib.Path(__file__).resolve().parent
GOLDEN = HERE / "golden"
KAI_VALUES = HERE / "kai-values"
DOC = REPO / "docs" / "helm.md"
sys.path.insert(0, str(REPO / "scripts"))
from install_helm import find_helm  # noqa: E402

INSTALL_V018 = ["--set", "global.gpuSharingMode=HamiCore", "--set", "global.clusterAutoscaling=true",
                "--set", "admission.gpuFractionRuntimeClassName=null"]


HELM = find_helm()


def helm(*args: str) -> str:
    p = subprocess.run([HELM, *args], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError(f"helm {' '.join(args)}: rc {p.returncode}\n{p.stdout}{p.stderr}")
    return p.stdout


def template(*args: str) -> str:
    return helm("template", "kai-scheduler", str(CHART), "-n", "kai-scheduler", *args)


def objects(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if d]


def leaves(tree, prefix: str = ""):
    """Every leaf key path of a values tree; an empty map or list is a leaf."""
    if isinstance(tree, dict) and tree:
        for k, v in tree.items():
            yield from leaves(v, f"{prefix}.{k}" if prefix else str(k))
    else:
        yield prefix, tree


def probe_value(v):
    """Another value of the same kind, to see whether the chart reads a key."""
    if isinstance(v, bool):
        return not v
    if isinstance(v, (int, float)):
        return v + 7
    if isinstance(v, str):
        return {"off": "on", "on": "off"}.get(v, v + "probe" if v else "probe")
    if isinstance(v, list):
        return [{"name": "probe", "key": "probe", "operator": "Exists"}]
    if isinstance(v, dict):
        return {"probe": "probe"}
    return "probe"  # null


def set_path(tree: dict, path: str, value) -> None:
    keys = path.split(".")
    for k in keys[:-1]:
        tree = tree.setdefault(k, {})
    tree[keys[-1]] = value


def covers(documented: str, key: str) -> bool:
    """Whether a documented key (a path, `*` standing for one segment) is `key` or above it."""
    pattern = r"\.".join("[^.]+" if seg == "*" else re.escape(seg)
                          for seg in documented.split("."))
    return re.fullmatch(pattern + r"(\..+)?", key) is not None


def documented_ignored() -> dict[str, str]:
    """docs/helm.md's table: | `key` | why |, under the heading about ignored values."""
    text = DOC.read_text()
    section = text.split("## Values kai ignores", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([^`]+)` \| (.+?) \|$", section, re.M)
    return dict(rows)


class Chart(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if HELM is None:
            raise unittest.SkipTest("helm not installed (python3 scripts/install_helm.py)")

    def test_lint_with_each_values_file(self):
        helm("lint", "--strict", str(CHART))
        for f in sorted(KAI_VALUES.glob("*.yaml")):
            with self.subTest(values=f.name):
                helm("lint", "--strict", str(CHART), "-f", str(f))

    def test_golden_renders(self):
        cases = {"default.yaml": [], "install-v0.18.yaml": INSTALL_V018}
        for name, args in cases.items():
            with self.subTest(golden=name):
                got = template(*args)
                path = GOLDEN / name
                if os.environ.get("KAI_UPDATE_GOLDEN") == "1":
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(got)
                self.assertEqual(got, path.read_text(),
                                 f"{path} differs (KAI_UPDATE_GOLDEN=1 rewrites it)")

    def test_install_time_values_reach_the_config(self):
        cfg = next(o for o in objects(template(*INSTALL_V018)) if o["kind"] == "Config")
        self.assertTrue(cfg["spec"]["admission"]["gpuSharing"])
        self.assertEqual(cfg["spec"]["admission"]["gpuFractionRuntimeClassName"], "")
        self.assertTrue(cfg["spec"]["nodeScaleAdjuster"]["service"]["enabled"])
        default = next(o for o in objects(template()) if o["kind"] == "Config")
        self.assertFalse(default["spec"]["admission"]["gpuSharing"])  # off unless enabled
        self.assertFalse(default["spec"]["nodeScaleAdjuster"]["service"]["enabled"])
        self.assertEqual(default["spec"]["admission"]["gpuFractionRuntimeClassName"], "nvidia")

    def test_fips_mode_tags_every_image_and_runs_the_operator_in_it(self):
        def render(*args):
            objs = objects(template(*args))
            op = next(o for o in objs if o["kind"] == "Deployment"
                      and o["metadata"]["name"] == "kai-operator")
            cfg = next(o for o in objs if o["kind"] == "Config")
            return op["spec"]["template"]["spec"]["containers"][0], cfg["spec"]

        container, spec = render("--set", "global.fipsMode=on", "--set", "global.tag=v1.2.3",
                                 "--set", "scheduler.image.tag=v9.9.9")
        self.assertTrue(container["image"].endswith(":v1.2.3-fips"), container["image"])
        self.assertIn("--fips-mode", container["args"])
        image_args = [a for a in container["args"] if a.startswith("--image=")]
        self.assertTrue(image_args and image_args[0].endswith(":v1.2.3-fips"), image_args)
        self.assertEqual(spec["scheduler"]["service"]["image"]["tag"], "v9.9.9-fips")
        self.assertEqual(spec["binder"]["service"]["image"]["tag"], "v1.2.3-fips")
        container, spec = render()
        self.assertNotIn("--fips-mode", container["args"])
        self.assertFalse(container["image"].endswith("-fips"), container["image"])
        self.assertFalse(spec["binder"]["service"]["image"]["tag"].endswith("-fips"))

    def test_kais_example_shard(self):
        out = objects(template("-f", str(KAI_VALUES / "custom-plugins-actions-values.yaml")))
        shard = next(o for o in out if o["kind"] == "SchedulingShard")
        self.assertEqual(shard["spec"]["placementStrategy"], {"gpu": "spread", "cpu": "spread"})
        self.assertEqual(shard["spec"]["plugins"]["mycustomplugin"]["arguments"]["customKey"],
                         "customValue")
        self.assertFalse(shard["spec"]["actions"]["consolidation"]["enabled"])

    def test_queues_and_shard_are_kept_and_queues_made_on_install_only(self):
        out = objects(template())
        queues = {o["metadata"]["name"]: o for o in out if o["kind"] == "Queue"}
        self.assertEqual(set(queues), {"default-parent-queue", "default-queue"})
        self.assertEqual(queues["default-queue"]["spec"]["parentQueue"], "default-parent-queue")
        for o in [*queues.values(), *(o for o in out if o["kind"] == "SchedulingShard")]:
            self.assertEqual(o["metadata"]["annotations"]["helm.sh/resource-policy"], "keep")
        upgrade = objects(template("--is-upgrade"))
        self.assertFalse([o for o in upgrade if o["kind"] == "Queue"])

    def test_every_kai_value_is_used_or_documented_as_ignored(self):
        documented = documented_ignored()
        ignored: set[str] = set()
        with tempfile.TemporaryDirectory() as tmp:
            for f in sorted(KAI_VALUES.glob("*.yaml")):
                base_values = yaml.safe_load(f.read_text())
                base = template("-f", str(f))
                for path, value in leaves(base_values):
                    probe = copy.deepcopy(base_values)
                    set_path(probe, path, probe_value(value))
                    pf = pathlib.Path(tmp) / "probe.yaml"
                    pf.write_text(yaml.safe_dump(probe))
                    if template("-f", str(pf)) == base:
                        ignored.add(path)
        undocumented = sorted(k for k in ignored if not any(covers(d, k) for d in documented))
        stale = sorted(d for d in documented if not any(covers(d, k) for k in ignored))
        print("\nKAI values kai's chart ignores:\n  " + "\n  ".join(sorted(ignored)),
              file=sys.stderr)
        self.assertEqual(undocumented, [], "ignored but not in docs/helm.md's table")
        self.assertEqual(stale, [], "in docs/helm.md's table but used by the chart")

    def test_crds_are_deploys(self):
        mine = {p.name: p.read_text() for p in (CHART / "crds").glob("*.yaml")}
        theirs = {p.name: p.read_text() for p in (REPO / "deploy" / "crds").glob("*.yaml")}
        self.assertEqual(mine, theirs, "deploy/helm/kai-scheduler/crds/ and deploy/crds/ differ: "
                         "cp deploy/crds/*.yaml deploy/helm/kai-scheduler/crds/")

    def test_operator_rbac_is_deploys(self):
        def role(docs):
            return next(o for o in docs if o["kind"] == "ClusterRole"
                        and o["metadata"]["name"] == "kai-operator")["rules"]
        deployed = objects((REPO / "deploy" / "operator" / "operator.yaml").read_text())
        self.assertEqual(role(objects(template())), role(deployed))


if __name__ == "__main__":
    unittest.main()
