#!/usr/bin/env python3
"""KAI's components' command-line flags, and whether kai's commands take each of them.

    python3 scripts/kai_flags.py --kai-mirror DIR --write FILE     extract KAI's flags into FILE
    python3 scripts/kai_flags.py --kai-mirror DIR --check FILE     extract again, compare (77: no
                                                                   mirror)
    python3 scripts/kai_flags.py --kai BINARY --check-kai FILE --table docs/kai-flags.md

Extraction reads, at the mirror's HEAD, each component's option files (the names of the
`fs.XxxVar(&x, "name", ...)`, `flag.Xxx("name", ...)` calls) and adds the flags its main
registers on Go's flag set and parses: controller-runtime's logger flags (zap.Options.BindFlags:
--zap-devel, --zap-encoder, --zap-log-level, --zap-stacktrace-level, --zap-time-encoding) and its
--kubeconfig (ctrl.GetConfigOrDie, registered by controller-runtime's config package).

FILE: a header of `#` lines (the KAI commit among them as `# kai-commit: SHA`), then one line
`KAI-COMPONENT KAI-COMMAND FLAG` a flag.

--check-kai: every flag of FILE is one `kai COMMAND --help` lists, or a row of docs/kai-flags.md
marks it refused; and docs/kai-flags.md has a row for each flag under its component's heading.
Prints one line per problem; exit status 0 when there is none, 1 otherwise, 2 on bad usage.
ctest: lint.kai_flags (the mirror, skipped without it) and lint.kai_flags_help.
"""
from __future__ import annotations

import argparse
import pathlib
import re
import subprocess
import sys

# KAI component -> (kai command, KAI source files with its flags).
COMPONENTS = {
    "scheduler": ("scheduler", ["cmd/scheduler/app/options/options.go",
                                "cmd/scheduler/app/server.go", "cmd/scheduler/main.go"]),
    "binder": ("binder", ["cmd/binder/app/options.go", "cmd/binder/app/app.go",
                          "cmd/binder/main.go"]),
    "podgrouper": ("podgrouper", ["cmd/podgrouper/app/options.go", "cmd/podgrouper/app/app.go",
                                  "cmd/podgrouper/main.go"]),
    "admission": ("admission", ["cmd/admission/app/options.go", "cmd/admission/app/app.go",
                                "cmd/admission/main.go"]),
    "queuecontroller": ("controllers", ["cmd/queuecontroller/app/options.go",
                                        "cmd/queuecontroller/main.go"]),
    "podgroupcontroller": ("controllers", ["cmd/podgroupcontroller/app/options.go",
                                           "cmd/podgroupcontroller/main.go"]),
    "nodescaleadjuster": ("scale-adjuster", ["cmd/nodescaleadjuster/app/options.go",
                                             "cmd/nodescaleadjuster/app/app.go",
                                             "cmd/nodescaleadjuster/main.go"]),
    "resourcereservation": ("resource-reservation", ["cmd/resourcereservation/app/app.go",
                                                     "cmd/resourcereservation/main.go"]),
    "operator": ("operator", ["cmd/operator/config/options.go", "cmd/operator/app/app.go",
                              "cmd/operator/main.go"]),
    "numaplacementexporter": ("numa-exporter", ["cmd/numa-placement-exporter/app/options.go",
                                                "cmd/numa-placement-exporter/app/app.go",
                                                "cmd/numa-placement-exporter/main.go"]),
}
ZAP_FLAGS = ["zap-devel", "zap-encoder", "zap-log-level", "zap-stacktrace-level",
             "zap-time-encoding"]
TYPES = r"(?:Bool|String|Int|Int64|Uint|Float64|Duration|StringSlice|StringArray)"
VAR_CALL = re.compile(r"\b\w+\." + TYPES + r"?Var\(\s*&?[\w.\[\]]+\s*,\s*\"([a-z0-9-]+)\"")
VALUE_CALL = re.compile(r"\b\w+\." + TYPES + r"\(\s*\"([a-z0-9-]+)\"")
GO_FLAGS_PARSED = re.compile(r"\bflag\.Parse\(\)|AddGoFlagSet\(flag\.CommandLine\)")
ZAP_BOUND = re.compile(r"zap\.Options\{")
KUBECONFIG = re.compile(r"GetConfigOrDie\(\)")
LINE = re.compile(r"^(\S+) (\S+) ([a-z0-9-]+)$")
HELP_FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9-]*)")


def git_show(mirror: pathlib.Path, path: str) -> str | None:
    r = subprocess.run(["git", "-C", str(mirror), "show", "HEAD:" + path], capture_output=True,
                       text=True)
    return r.stdout if r.returncode == 0 else None


def component_flags(mirror: pathlib.Path, files: list[str]) -> list[str]:
    texts = [t for t in (git_show(mirror, f) for f in files) if t is not None]
    names: list[str] = []
    for text in texts:
        names += VAR_CALL.findall(text) + VALUE_CALL.findall(text)
    joined = "\n".join(texts)
    if GO_FLAGS_PARSED.search(joined):
        if ZAP_BOUND.search(joined):
            names += ZAP_FLAGS
        if KUBECONFIG.search(joined):
            names.append("kubeconfig")
    return sorted(set(names))


def extract(mirror: pathlib.Path) -> tuple[str, list[tuple[str, str, str]]]:
    commit = subprocess.run(["git", "-C", str(mirror), "rev-parse", "HEAD"], capture_output=True,
                            text=True, check=True).stdout.strip()
    rows = []
    for component, (command, files) in COMPONENTS.items():
        rows += [(component, command, f) for f in component_flags(mirror, files)]
    return commit, rows


def render(commit: str, rows: list[tuple[str, str, str]]) -> str:
    head = ["# The command-line flags of KAI's components (scripts/kai_flags.py --write).",
            f"# kai-commit: {commit}",
            "# KAI-COMPONENT KAI-COMMAND FLAG"]
    return "\n".join(head + [" ".join(r) for r in rows]) + "\n"


def read_rows(path: pathlib.Path) -> list[tuple[str, str, str]]:
    rows = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        m = LINE.match(line)
        if not m:
            sys.exit(f"{path}:{n}: expected KAI-COMPONENT KAI-COMMAND FLAG, got {line!r}")
        rows.append((m.group(1), m.group(2), m.group(3)))
    return rows


def table_rows(path: pathlib.Path) -> dict[str, dict[str, str]]:
    """docs/kai-flags.md: per `## component` heading, each row's flag -> its kai column."""
    out: dict[str, dict[str, str]] = {}
    section = None
    for line in path.read_text().splitlines():
        h = re.match(r"^## `?([a-z]+)`?", line)
        if h:
            section = out.setdefault(h.group(1), {})
            continue
        row = re.match(r"^\|\s*`--([a-z0-9-]+)`\s*\|\s*([^|]*)\|", line)
        if row and section is not None:
            section[row.group(1)] = row.group(2).strip().lower()
    return out


def help_flags(kai: str, command: str) -> set[str]:
    r = subprocess.run([kai, command, "--help"], capture_output=True, text=True)
    return set(HELP_FLAG.findall(r.stdout))


def check_kai(kai: str, flags_file: pathlib.Path, table: pathlib.Path) -> list[str]:
    problems = []
    rows = read_rows(flags_file)
    documented = table_rows(table)
    helps: dict[str, set[str]] = {}
    for component, command, flag in rows:
        if command not in helps:
            helps[command] = help_flags(kai, command)
        kind = documented.get(component, {}).get(flag)
        if kind is None:
            problems.append(f"{table}: no row for --{flag} under ## {component}")
        refused = kind is not None and kind.startswith("refused")
        if flag not in helps[command] and not refused:
            problems.append(f"kai {command} --help lacks --{flag} (KAI's {component}), and "
                            f"{table} does not mark it refused")
        if refused and flag in helps[command]:
            problems.append(f"{table} marks --{flag} of {component} refused, but kai {command} "
                            "--help lists it")
    return problems


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kai-mirror", type=pathlib.Path)
    p.add_argument("--write", type=pathlib.Path)
    p.add_argument("--check", type=pathlib.Path)
    p.add_argument("--kai")
    p.add_argument("--check-kai", type=pathlib.Path)
    p.add_argument("--table", type=pathlib.Path)
    a = p.parse_args()
    if a.check_kai:
        if not a.kai or not a.table:
            p.error("--check-kai needs --kai and --table")
        problems = check_kai(a.kai, a.check_kai, a.table)
        for line in problems:
            print(line)
        return 1 if problems else 0
    if not a.kai_mirror or not (a.write or a.check):
        p.error("give --kai-mirror with --write or --check, or --check-kai")
    if not (a.kai_mirror / "HEAD").exists() and not (a.kai_mirror / ".git").exists():
        print(f"skipped: no KAI mirror at {a.kai_mirror}")
        return 77
    commit, rows = extract(a.kai_mirror)
    text = render(commit, rows)
    if a.write:
        a.write.write_text(text)
        return 0
    stored = read_rows(a.check)
    if stored != rows:
        for r in sorted(set(rows) - set(stored)):
            print(f"{a.check}: KAI has {' '.join(r)}, not in the file (run --write)")
        for r in sorted(set(stored) - set(rows)):
            print(f"{a.check}: {' '.join(r)} is no longer KAI's (run --write)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
