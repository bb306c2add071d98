#!/usr/bin/env python3
"""The include rules of docs/design.md ("layers point down only"), checked on src/kai.

    scripts/check_includes.py <src dir> <allowlist>

src/kai has four roots, each one CMake library (CMakeLists.txt), and the rules are paths:

    core/       includes core/ only                 (kaicore: the pure decisions)
    kube/       includes core/ and kube/            (kaikube: client, informers, servers, runtime)
    daemons/X/  includes core/, kube/ and daemons/X (kaidaemons: one folder per kai component)
    cmd/        includes anything                   (kaicmd and the binary)

Inside core/, its own layers point down as RULES says. Unit tests (*_test.cc) and the test
support of src/kai/testing/ may include anything. The allowlist names violations accepted for
now, one per line, `<file> <included header>`; the check fails on a violation the list does not
name and on a listed line that is no longer a violation, so the list can only shrink.
ctest: lint.include_layers.
"""
import pathlib
import re
import sys

# The core's own layers (folders of core/), bottom up; each rule forbids an include upwards.
LOWEST = {"util", "resource", "model"}
ABOVE_MODEL = {"k8s", "snapshot", "framework", "plugins", "actions", "builtin", "explain", "sim",
               "usage", "whatif", "podgrouper", "controllers", "scaleadjuster", "install",
               "admission", "operator", "numaexporter"}
# The scheduler's own layers, which the pod grouper (owner chains -> PodGroups) does not need.
SCHEDULING = {"snapshot", "framework", "plugins", "actions", "builtin", "explain", "sim", "usage"}

# (including folders of core/, included folders of core/, why)
CORE_RULES = [
    (LOWEST, ABOVE_MODEL, "util, resource and model are the bottom layers"),
    ({"k8s"}, SCHEDULING | {"podgrouper"},
     "k8s (decoding) sits below the snapshot and the pod grouper"),
    ({"podgrouper"}, SCHEDULING,
     "the pod grouper reads Kubernetes objects (k8s/, model/), not the scheduler's layers"),
    (SCHEDULING, {"podgrouper"}, "the scheduler's layers do not include the pod grouper"),
    ({"numaexporter"}, SCHEDULING | {"podgrouper", "operator"},
     "the NUMA placement exporter reads pod-resources answers and pods, not the scheduler's layers"),
    (SCHEDULING | {"podgrouper", "install", "admission"}, {"operator"},
     "the operator renders the other components' objects; nothing below it includes it"),
    ({"snapshot"}, {"k8s"}, "the snapshot reads the model, not the decoder (k8s/)"),
    ({"snapshot"}, {"framework", "plugins", "actions", "builtin", "sim", "explain"},
     "the snapshot sits below the framework"),
    ({"framework"}, {"plugins", "actions", "builtin", "sim", "explain"},
     "the framework sits below plugins, actions and explain (they meet through the session's hooks)"),
    ({"actions"}, {"plugins", "builtin", "sim", "explain"},
     "actions never include plugins (they meet through the session's hooks)"),
    ({"plugins"}, {"actions", "builtin", "sim", "explain"},
     "plugins never include actions (they meet through the session's hooks)"),
]
INCLUDE = re.compile(r'^\s*#\s*include\s*["<](kai/([^">]+))[">]')
# Libraries that do I/O, log or export metrics: the core never includes them.
IO_LIBRARIES = re.compile(r'^\s*#\s*include\s*<((prometheus|boost|spdlog|curl|openssl|grpcpp|grpc|google)/[^>]+)>')


def library_files(src):
    for path in sorted((src / "kai").rglob("*")):
        if path.suffix not in (".h", ".cc") or path.name.endswith("_test.cc"):
            continue
        rel = path.relative_to(src)  # kai/<root>/...
        if rel.parts[1] == "testing":
            continue
        yield path, rel


def place(parts):
    """(root, folder) of a path under kai/: ("core", "snapshot"), ("daemons", "binder"), ..."""
    root = parts[0]
    folder = parts[1] if len(parts) > 2 else ""
    return root, folder


def path_rule(root, folder, target_root, target_folder):
    if root == "cmd" or target_root == root == "core" and folder == target_folder:
        return None
    if root == "core" and target_root != "core":
        return "core/ includes core/ only (the decisions are pure)"
    if root == "kube" and target_root not in ("core", "kube"):
        return "kube/ includes core/ and kube/ only"
    if root == "daemons" and target_root == "daemons" and target_folder != folder:
        return "a daemon includes core/, kube/ and its own folder, never another daemon"
    if root == "daemons" and target_root == "cmd":
        return "a daemon never includes cmd/"
    if target_root == "testing":
        return "only tests include src/kai/testing/"
    return None


def core_rule(folder, target_folder):
    if folder == target_folder:
        return None
    for froms, tos, reason in CORE_RULES:
        if folder in froms and target_folder in tos:
            return reason
    return None


def violations(src):
    found = {}
    for path, rel in library_files(src):
        root, folder = place(rel.parts[1:])
        for line in path.read_text(errors="replace").splitlines():
            lib = IO_LIBRARIES.match(line)
            if lib and root == "core":
                found[(str(path), lib.group(1))] = (lib.group(2) + " does I/O, logs or exports "
                                                   "metrics: kube/ and above only")
            m = INCLUDE.match(line)
            if not m:
                continue
            header = m.group(1)
            target_root, target_folder = place(pathlib.PurePath(m.group(2)).parts)
            why = path_rule(root, folder, target_root, target_folder)
            if why is None and root == target_root == "core":
                why = core_rule(folder, target_folder)
            if why:
                found[(str(path), header)] = why
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
        print(f"include rules: ok ({len(found)} allowed violations left in {allowlist.name})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
