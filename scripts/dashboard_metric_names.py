#!/usr/bin/env python3
"""Every metric name the PromQL expressions of Grafana dashboards use, one per line, sorted.

    scripts/dashboard_metric_names.py DASHBOARD.json...          print the names
    scripts/dashboard_metric_names.py --kai-mirror GIT_DIR        KAI's docs/metrics dashboards
    scripts/dashboard_metric_names.py --check FILE [sources]      compare with a checked-in list

A dashboard's expressions are the strings under "expr" (panel targets) and "query" or
"definition" (template variables). A name is an identifier of PromQL that is neither a function,
an aggregation, a keyword, a label name (inside {...}, after by/without/on/ignoring) nor a
Grafana variable ($name); histogram series (_bucket, _sum, _count) name their histogram's
family and are listed as written. --check exits 1, printing the difference, when the names
differ from FILE's (its '#' lines are comments); with --kai-mirror it reads the dashboards at
the commit FILE's '# kai-commit SHA' line records, and skips (exit 77, saying so) when the mirror
is absent. ctest: lint.dashboard_metric_names.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import subprocess
import sys

KAI_DASHBOARDS = "docs/metrics/grafana"
FUNCTIONS = {
    "abs", "absent", "absent_over_time", "avg_over_time", "ceil", "changes", "clamp", "clamp_max",
    "clamp_min", "count_over_time", "day_of_month", "day_of_week", "delta", "deriv", "exp",
    "floor", "histogram_quantile", "holt_winters", "hour", "idelta", "increase", "irate",
    "label_join", "label_replace", "label_values", "ln", "log10", "log2", "max_over_time",
    "min_over_time", "minute", "month", "predict_linear", "quantile_over_time", "rate",
    "resets", "round", "scalar", "sgn", "sort", "sort_desc", "sqrt", "stddev_over_time",
    "stdvar_over_time", "sum_over_time", "time", "timestamp", "vector", "year",
    "last_over_time", "present_over_time", "query_result", "metrics", "label_names",
}
AGGREGATIONS = {"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count",
                "count_values", "bottomk", "topk", "quantile"}
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "offset", "bool",
            "and", "or", "unless", "inf", "nan"}
IDENT = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")


def expressions(node) -> list[str]:
    out = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("expr", "query", "definition") and isinstance(value, str):
                out.append(value)
            else:
                out.extend(expressions(value))
    elif isinstance(node, list):
        for value in node:
            out.extend(expressions(value))
    return out


def strip(expr: str) -> str:
    """The expression without strings, label matchers, grouping label lists and durations."""
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    expr = re.sub(r"\{[^}]*\}", " ", expr)
    expr = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", expr)
    expr = re.sub(r"\[[^\]]*\]", " ", expr)
    return re.sub(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?", " ", expr)


def names_in(expr: str) -> set[str]:
    found = set()
    text = strip(expr)
    # label_values(metric, label) names a label second: only its first argument is a metric.
    text = re.sub(r"label_values\s*\(([^,()]*),[^)]*\)", r"(\1)", text)
    for m in IDENT.finditer(text):
        word = m.group(0)
        before = text[:m.start()].rstrip()
        after = text[m.end():].lstrip()
        if word.lower() in KEYWORDS or word in FUNCTIONS | AGGREGATIONS:
            continue
        if before.endswith(".") or (before and before[-1].isdigit()):
            continue  # part of a number such as 1e9
        if re.fullmatch(r"\d+[smhdwy]?", word) or word in ("e",):
            continue
        if after.startswith("("):
            continue  # an unknown function
        found.add(word)
    return found


def dashboard_names(texts: list[str]) -> set[str]:
    names = set()
    for text in texts:
        for expr in expressions(json.loads(text)):
            names |= names_in(expr)
    return {n for n in names if n != "prometheus"}  # a datasource query, not a metric


def kai_mirror_texts(git_dir: str, commit: str = "HEAD") -> tuple[str, list[str]]:
    def git(*args):
        return subprocess.run(["git", "-C", git_dir, *args], capture_output=True, text=True,
                              check=True).stdout
    commit = git("rev-parse", commit).strip()
    files = [f for f in git("ls-tree", "-r", "--name-only", commit, KAI_DASHBOARDS).split()
             if f.endswith(".json")]
    return commit, [git("show", f"{commit}:{f}") for f in files]


def recorded_commit(path: pathlib.Path) -> str:
    """The KAI commit a list records ('# kai-commit SHA'); HEAD when none."""
    for line in path.read_text().splitlines():
        if line.startswith("# kai-commit "):
            return line.split()[2]
    return "HEAD"


def listed(path: pathlib.Path) -> set[str]:
    return {line.split()[0] for line in path.read_text().splitlines()
            if line.strip() and not line.startswith("#")}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dashboards", nargs="*")
    p.add_argument("--kai-mirror", help="KAI's bare git directory")
    p.add_argument("--check", help="the checked-in list to compare with")
    a = p.parse_args()
    texts = [pathlib.Path(d).read_text() for d in a.dashboards]
    commit = None
    if a.kai_mirror:
        if not pathlib.Path(a.kai_mirror).exists():
            print(f"skipped: the KAI mirror {a.kai_mirror} is absent")
            return 77
        # A list is compared at the commit it records, so that KAI's newer dashboards do not fail
        # the check before the list is extracted again (and its header says from where).
        at = recorded_commit(pathlib.Path(a.check)) if a.check else "HEAD"
        commit, more = kai_mirror_texts(a.kai_mirror, at)
        texts += more
    names = sorted(dashboard_names(texts))
    if not a.check:
        if commit:
            print(f"# kai-commit {commit}")
        print("\n".join(names))
        return 0
    want = listed(pathlib.Path(a.check))
    missing, extra = sorted(set(names) - want), sorted(want - set(names))
    if missing or extra:
        print(f"{a.check} differs from the dashboards"
              + (f" (KAI commit {commit})" if commit else "") + ":")
        for n in missing:
            print(f"  + {n}  (in the dashboards, not in the file)")
        for n in extra:
            print(f"  - {n}  (in the file, not in the dashboards)")
        return 1
    print(f"{len(names)} names match {a.check}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
