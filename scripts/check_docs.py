#!/usr/bin/env python3
"""Checks that the README and the docs hold against the code and the built binary.

    python3 scripts/check_docs.py <repo root> <path to the kai binary>

- Links: every relative link (`[text](path)`, `![alt](path)`) in README.md, docs/**/*.md,
  bench/README.md, bench/RESULTS.md, examples/README.md and tests/e2e/README.md names a file or
  directory that exists (the part before any `#`; code spans and fenced blocks are not links).
- Commands: every `kai <command>` in the code of README.md and docs/commands/*.md (code spans and
  fenced blocks) is a command `kai --help` lists; the commands of src/kai/cmd/main.cc's table are
  exactly those `kai --help` lists, and each has its page docs/commands/<command>.md.
- Flags: every flag a command's page names in its "Usage" section (the synopsis and the flag
  table) is one `kai <command> --help` lists, and every flag `kai <command> --help` lists is on
  the page.
- Examples: every `build/kai ...` command in README.md's ```sh blocks, and every offline one
  (simulate, queues, explain, whatif without a cluster or a report directory) in the ```sh blocks
  of docs/commands/*.md, runs from the repository root with exit status 0.
- Length: README.md has at most 220 lines.

Prints one line per problem; exit status 0 when there is none, 1 otherwise, 2 on bad usage.
ctest: lint.docs.
"""
from __future__ import annotations

import pathlib
import re
import shlex
import subprocess
import sys

README_MAX_LINES = 220
LINKED_DOCS = ["README.md", "docs/**/*.md", "bench/README.md", "bench/RESULTS.md",
               "examples/README.md", "tests/e2e/README.md"]
OFFLINE = {"simulate", "queues", "explain", "whatif"}
EXAMPLE_TIMEOUT_S = 120

FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
KAI_COMMAND = re.compile(r"(?<![\w.-])kai[ \t]+([a-z][a-z0-9-]*)")
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*[a-z0-9]|-[a-z])(?![\w-])")


class Problems:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.checks = 0

    def check(self, ok: bool, message: str) -> None:
        self.checks += 1
        if not ok:
            self.lines.append(message)


def split_markdown(text: str) -> tuple[list[tuple[int, str]], list[tuple[int, str, str]]]:
    """(prose lines with their numbers, fenced blocks as (first line number, info, body))."""
    prose, blocks = [], []
    fence, info, start, body = None, "", 0, []
    for n, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if fence is None:
            if m:
                fence, info, start, body = m.group(1), line.strip()[3:].strip(), n, []
            else:
                prose.append((n, line))
        elif m and line.strip().startswith(fence):
            blocks.append((start, info, "\n".join(body)))
            fence = None
        else:
            body.append(line)
    return prose, blocks


def code_of(text: str) -> list[str]:
    """Every code span and fenced block of a markdown text."""
    prose, blocks = split_markdown(text)
    joined = "\n".join(line for _, line in prose)
    return [m.group(2) for m in CODE_SPAN.finditer(joined)] + [b for _, _, b in blocks]


def markdown_files(root: pathlib.Path, patterns: list[str]) -> list[pathlib.Path]:
    files: list[pathlib.Path] = []
    for p in patterns:
        files.extend(sorted(root.glob(p)) if "*" in p else [root / p])
    return files


def check_links(root: pathlib.Path, problems: Problems) -> None:
    for path in markdown_files(root, LINKED_DOCS):
        if not path.is_file():
            problems.check(False, f"{path.relative_to(root)}: missing")
            continue
        prose, _ = split_markdown(path.read_text())
        for n, line in prose:
            line = CODE_SPAN.sub("", line)
            for m in LINK.finditer(line):
                target = m.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                    continue  # http(s):, mailto:, an anchor on the same page
                file_part = target.split("#", 1)[0]
                resolved = (path.parent / file_part).resolve()
                problems.check(resolved.exists(),
                               f"{path.relative_to(root)}:{n}: link to {target}: no such file")


def help_text(kai: pathlib.Path, *args: str) -> str:
    r = subprocess.run([str(kai), *args, "--help"], capture_output=True, text=True, timeout=30)
    return r.stdout + r.stderr


def help_flags(help_out: str) -> set[str]:
    """The flags of a CLI11 help: the first word of each option line ("  -o,--output TEXT ...")."""
    flags: set[str] = set()
    for line in help_out.splitlines():
        m = re.match(r"^\s{1,4}(-\S+)", line)
        if m:
            flags.update(FLAG.findall(m.group(1)))
    return flags


def listed_commands(help_out: str) -> set[str]:
    """The subcommands a CLI11 help lists (the indented names after "Subcommands:")."""
    names, inside = set(), False
    for line in help_out.splitlines():
        if re.match(r"^\s*subcommands:\s*$", line, re.I):
            inside = True
        elif inside:
            m = re.match(r"^\s+([a-z][a-z0-9-]*)(\s|$)", line)
            if m:
                names.add(m.group(1))
            elif line.strip():
                inside = False
    return names


def table_commands(root: pathlib.Path) -> dict[str, str]:
    """Command name -> the file of src/kai/cmd that declares it, for main.cc's table."""
    cmd = root / "src" / "kai" / "cmd"
    makers = re.findall(r"&kai::cmd::(Make\w+Command)", (cmd / "main.cc").read_text())
    out: dict[str, str] = {}
    for maker in makers:
        for src in sorted(cmd.glob("*.cc")):
            text = src.read_text()
            if not re.search(rf"\b{maker}\(\)\s*\{{", text):
                continue
            names = re.findall(r'add_subcommand\(\s*"([a-z][a-z0-9-]*)"', text)
            out[names[0] if len(names) == 1 else f"<{maker}: {len(names)} subcommands>"] = src.name
    return out


def usage_section(text: str) -> str:
    m = re.search(r"^## Usage\s*$(.*?)(?=^## |\Z)", text, re.M | re.S)
    return m.group(1) if m else ""


def documented_flags(usage: str) -> set[str]:
    """The flags of a page's Usage section: its code blocks and the first column of its table."""
    flags: set[str] = set()
    for _, _, block in split_markdown(usage)[1]:
        flags.update(FLAG.findall(block))
    for line in usage.splitlines():
        if line.startswith("|"):
            first = line.split("|")[1]
            for code in CODE_SPAN.findall(first):
                flags.update(FLAG.findall(code[1]))
    return flags


def check_commands(root: pathlib.Path, kai: pathlib.Path, problems: Problems) -> set[str]:
    known = listed_commands(help_text(kai))
    problems.check(bool(known), f"{kai} --help: no subcommands found")
    table = table_commands(root)
    problems.check(set(table) == known,
                   f"src/kai/cmd/main.cc's commands {sorted(table)} differ from `kai --help`'s "
                   f"{sorted(known)}")
    for name in sorted(set(table) | known):
        page = root / "docs" / "commands" / f"{name}.md"
        problems.check(page.is_file(), f"kai {name}: no page docs/commands/{name}.md")
    pages = [root / "README.md"] + sorted((root / "docs" / "commands").glob("*.md"))
    for path in pages:
        for code in code_of(path.read_text()):
            for word in KAI_COMMAND.findall(code):
                problems.check(word in known, f"{path.relative_to(root)}: `kai {word}`: "
                                              f"not a command of `kai --help`")
    for name in sorted(known):
        page = root / "docs" / "commands" / f"{name}.md"
        if not page.is_file():
            continue
        usage = usage_section(page.read_text())
        problems.check(bool(usage), f"docs/commands/{name}.md: no \"## Usage\" section")
        in_help = help_flags(help_text(kai, name)) - {"-h", "--help"}
        on_page = documented_flags(usage)
        for flag in sorted(on_page - in_help):
            problems.check(False, f"docs/commands/{name}.md: {flag}: not a flag of `kai {name}`")
        for flag in sorted(in_help - on_page):
            problems.check(False, f"docs/commands/{name}.md: {flag} (`kai {name} --help`) is "
                                  f"not in its Usage section")
        problems.checks += len(on_page | in_help)
    return known


def example_commands(path: pathlib.Path, offline_only: bool) -> list[tuple[int, list[str]]]:
    """`build/kai ...` commands of the ```sh blocks, as argument lists (build/kai first)."""
    out = []
    _, blocks = split_markdown(path.read_text())
    for start, info, body in blocks:
        if info not in ("sh", "bash"):
            continue
        logical = re.sub(r"\\\n\s*", " ", body)
        for i, line in enumerate(logical.splitlines()):
            line = line.split(" #", 1)[0]
            for segment in re.split(r"&&|\|\||[|;]", line):
                words = shlex.split(segment, comments=True)
                if not words or words[0] != "build/kai":
                    continue
                if offline_only and (len(words) < 2 or words[1] not in OFFLINE or
                                     any(w.startswith(("--kubeconfig", "--report")) for w in words)):
                    continue
                out.append((start + 1 + i, words))
    return out


def check_examples(root: pathlib.Path, kai: pathlib.Path, problems: Problems) -> None:
    runs = [(root / "README.md", c) for c in example_commands(root / "README.md", False)]
    problems.check(any(w[1] == "simulate" for _, (_, w) in runs),
                   "README.md: no `build/kai simulate ...` example in a ```sh block")
    for page in sorted((root / "docs" / "commands").glob("*.md")):
        runs += [(page, c) for c in example_commands(page, True)]
    for path, (n, words) in runs:
        where = f"{path.relative_to(root)}:{n}: {' '.join(words)}"
        try:
            r = subprocess.run([str(kai), *words[1:]], cwd=root, capture_output=True, text=True,
                               timeout=EXAMPLE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            problems.check(False, f"{where}: still running after {EXAMPLE_TIMEOUT_S} s")
            continue
        tail = (r.stderr.strip().splitlines() or [""])[-1]
        problems.check(r.returncode == 0, f"{where}: exit status {r.returncode} ({tail})")


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    root, kai = pathlib.Path(argv[1]).resolve(), pathlib.Path(argv[2]).resolve()
    if not (root / "README.md").is_file() or not kai.is_file():
        print(f"check_docs: need a repository root and the kai binary: {root}, {kai}",
              file=sys.stderr)
        return 2
    problems = Problems()
    readme_lines = len((root / "README.md").read_text().splitlines())
    problems.check(readme_lines <= README_MAX_LINES,
                   f"README.md: {readme_lines} lines, more than {README_MAX_LINES}")
    check_links(root, problems)
    check_commands(root, kai, problems)
    check_examples(root, kai, problems)
    for line in problems.lines:
        print(line)
    print(f"check_docs: {problems.checks} checks, {len(problems.lines)} problems")
    return 1 if problems.lines else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
