#!/usr/bin/env python3
"""The Dockerfile's runtime stage installs every shared library the kai binary loads.

No container runtime is needed: the libraries `ldd` lists for the built binary are mapped to their
Debian packages (dpkg -S), and each must be one the runtime stage names or one of their
dependencies (apt-cache depends --recurse). A package missing there is an image that cannot start.

    python3 tests/image/runtime_libs_test.py   (KAI_BIN: the kai binary; default build/kai)
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import unittest

REPO = pathlib.Path(__file__).resolve().parents[2]
KAI_BIN = pathlib.Path(os.environ.get("KAI_BIN", REPO / "build" / "kai"))


def runtime_packages() -> list[str]:
    """The packages of the Dockerfile's last stage's apt-get install."""
    text = (REPO / "Dockerfile").read_text()
    last = text.rsplit("\nFROM ", 1)[1]
    install = re.search(r"apt-get install(.*?)(?:>|&&|$)", last.replace("\\\n", " "), re.S)
    return [w for w in install.group(1).split() if not w.startswith("-")]


def owner(lib: str) -> str | None:
    real = os.path.realpath(lib)
    for path in (lib, real, "/usr" + lib, lib.removeprefix("/usr"), real.removeprefix("/usr")):
        p = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
        if p.returncode == 0:
            return p.stdout.split(":", 1)[0]
    return None


def closure(packages: list[str]) -> set[str]:
    p = subprocess.run(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests",
                        "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances",
                        *packages], capture_output=True, text=True, check=True)
    return {line.strip().split(":")[0] for line in p.stdout.splitlines()
            if line and not line.startswith(" ")}


@unittest.skipIf(shutil.which("dpkg") is None or shutil.which("apt-cache") is None,
                 "not a Debian system (dpkg, apt-cache)")
class RuntimeLibraries(unittest.TestCase):
    def test_the_runtime_stage_provides_every_library_of_the_binary(self):
        self.assertTrue(KAI_BIN.is_file(), f"{KAI_BIN} not built")
        ldd = subprocess.run(["ldd", str(KAI_BIN)], capture_output=True, text=True, check=True)
        libs = re.findall(r"=> (/\S+)", ldd.stdout)
        self.assertTrue(libs)
        wanted = runtime_packages()
        self.assertIn("libcurl4", wanted)
        have = closure(wanted) | set(wanted)
        missing = {lib: owner(lib) for lib in libs if owner(lib) not in have}
        self.assertEqual(missing, {}, f"the runtime stage installs {wanted}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
