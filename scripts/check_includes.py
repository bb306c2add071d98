#!/usr/bin/env python3
"""The include rule of docs/design.md ("layers point down only"), checked on src/kai.

    scripts/check_includes.py <src dir> <allowlist>

Scans every library file under <src dir>/kai (headers and sources; unit tests, *_test.cc, and
the test support of src/kai/testing/ may include anything) for `#include "kai/<dir>/..."` lines
that a rule below forbids. The allowlist names the violations that exist today and are being
removed, one per line, `<file> <included header>` (paths as printed below; `#` starts a comment).
Fails (exit 1) on a violation the list does not name, and on a list entry that is no longer a
violation, so the list can only shrink. ctest: lint.include_layers.
"""
import pathlib
import re
import sys

# The front ends: they do I/O and sit on top of the pure core (libkai).
FRONT_ENDS = {"cmd", "scheduler", "informer", "io", "binder", "reservation", "serve", "webhook",
              "podgrouperd", "controllersd", "scaleadjusterd", "run"}
# The core's own layers, bottom up; each rule below forbids an include upwards.
LOWEST = {"util", "resource", "model"}
ABOVE_MODEL = {"k8s", "snapshot", "framework", "plugins", "actions", "builtin", "explain", "sim",
               "usage", "podgrouper", "controllers", "scaleadjuster", "install"}
# The scheduler's own layers, which the pod grouper (owner chains -> PodGroups) does not need.
SCHEDULING = {"snapshot", "framework", "plugins", "actions", "builtin", "explain", "sim", "usage"}
# The Kubernetes client of k8s/: I/O, part of the front ends' library (kaikube).
K8S_CLIENT = {"kai/k8s/http.h", "kai/k8s/kubeconfig.h", "kai/k8s/api_client.h"}

# (including directories, included directories, why)
RULES = [
    (LOWEST, ABOVE_MODEL, "util, resource and model are the bottom layers"),
    ({"k8s"}, SCHEDULING | {"podgrouper"}, "k8s (decoding) sits below the snapshot and the pod grouper"),
    ({"podgrouper"}, SCHEDULING,
     "the pod grouper reads Kubernetes objects (k8s/, model/), not the scheduler's layers"),
    (SCHEDULING, {"podgrouper"}, "the scheduler's layers do not include the pod grouper"),
    ({"snapshot"}, {"k8s"}, "the snapshot reads the model, not the decoder (k8s/)"),
    ({"snapshot"}, {"framework", "plugins", "actions", "builtin", "sim"},
     "the snapshot sits below the framework"),
    ({"framework"}, {"plugins", "actions", "builtin", "sim"},
     "the framework sits below plugins and actions (they meet through the session's hooks)"),
    ({"actions"}, {"plugins", "builtin", "sim"},
     "actions never include plugins (they meet through the session's hooks)"),
    ({"plugins"}, {"actions", "builtin", "sim"},
     "plugins never include actions (they meet through the session's hooks)"),
]
INCLUDE = re.compile(r'^\s*#\s*include\s*["<](kai/([a-z0-9_]+)/[^">]+)[">]')
# Libraries only the front ends link (kaikube): the core never includes them.
FRONT_END_LIBRARIES = re.compile(r'^\s*#\s*include\s*<((prometheus|boost)/[^>]+)>')


def library_files(src):
    for path in sorted((src / "kai").rglob("*")):
        if path.suffix not in (".h", ".cc") or path.name.endswith("_test.cc"):
            continue
        rel = path.relative_to(src.parent)
        if rel.parts[2] == "testing":
            continue
        yield path, str(rel)


def violations(src):
    found = {}
    for path, rel in library_files(src):
        layer = pathlib.PurePath(rel).parts[2]
        for line in path.read_text(errors="replace").splitlines():
            lib = FRONT_END_LIBRARIES.match(line)
            if lib and layer not in FRONT_ENDS:
                found[(rel, lib.group(1))] = (lib.group(2) + " is linked by the front ends only "
                                              "(the core records plain numbers)")
            m = INCLUDE.match(line)
            if not m:
                continue
            header, target = m.group(1), m.group(2)
            if target == layer:
                continue
            why = None
            if layer not in FRONT_ENDS and target in FRONT_ENDS:
                why = "only the front ends include " + ", ".join(f"{f}/" for f in sorted(FRONT_ENDS))
            elif layer not in FRONT_ENDS and header in K8S_CLIENT:
                why = "the Kubernetes client (I/O) is for the front ends only"
            for froms, tos, reason in RULES:
                if why is None and layer in froms and target in tos:
                    why = reason
            if why:
                found[(rel, header)] = why
    return found


def read_allowlist(path):
    entries = set()
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            parts = line.split()
            if len(parts) != 2:
                sys.exit(f"{path}: expected '<file> <header>', got: {raw}")
            entries.add((parts[0], parts[1]))
    return entries


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, allowlist = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    found = violations(src)
    allowed = read_allowlist(allowlist)
    failed = False
    for key in sorted(found.keys() - allowed):
        print(f"{key[0]}: includes {key[1]}: {found[key]}")
        failed = True
    for key in sorted(allowed - found.keys()):
        print(f"{allowlist}: '{key[0]} {key[1]}' is no longer a violation: remove the line")
        failed = True
    if not failed:
        print(f"include layers: ok ({len(found)} allowed violations left in {allowlist.name})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
