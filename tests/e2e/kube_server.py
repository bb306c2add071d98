"""Start and stop a throw-away kube-apiserver for the e2e tests.

Uses the shared scripts ../shared/tools/kube-apiserver/{start,stop}.sh (see their README). A
test module calls `require_apiserver()` (raises unittest.SkipTest when the binary is not built)
and `Server.start()` / `server.stop()`.
"""

from __future__ import annotations

import os
import pathlib
import shlex
import subprocess
import unittest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
TOOLS = pathlib.Path(os.environ.get("KAI_KUBE_TEST_TOOLS",
                                    REPO_ROOT.parent / "shared" / "tools" / "kube-apiserver"))
APISERVER = pathlib.Path(os.environ.get("KUBE_TEST_BIN_DIR", "/opt/kube-test/bin")) / "kube-apiserver"
SKIP_MESSAGE = "kube-apiserver not built: see ../shared/tools/kube-apiserver/README.md"


def require_apiserver() -> None:
    if not APISERVER.is_file() or not (TOOLS / "start.sh").is_file():
        raise unittest.SkipTest(SKIP_MESSAGE)


class Server:
    """One etcd + kube-apiserver started by start.sh; `env` holds its exported variables."""

    def __init__(self, env: dict[str, str]):
        self.env = env
        self.dir = env["KUBE_TEST_DIR"]
        self.kubeconfig = env["KUBECONFIG"]

    @classmethod
    def start(cls, *args: str, timeout: float = 300) -> "Server":
        p = subprocess.run(["bash", str(TOOLS / "start.sh"), "--timeout", "240", *args],
                           capture_output=True, text=True, timeout=timeout)
        if p.returncode != 0:
            raise RuntimeError(f"start.sh failed (rc {p.returncode}):\n{p.stderr[-3000:]}")
        env = {}
        for line in p.stdout.splitlines():
            line = line.strip()
            if line.startswith("export "):
                k, _, v = line[len("export "):].partition("=")
                env[k] = shlex.split(v)[0] if v else ""
        if "KUBECONFIG" not in env or "KUBE_TEST_DIR" not in env:
            raise RuntimeError(f"start.sh printed no KUBECONFIG/KUBE_TEST_DIR:\n{p.stdout}")
        return cls(env)

    def stop(self) -> None:
        subprocess.run(["bash", str(TOOLS / "stop.sh"), self.dir], capture_output=True, text=True,
                       timeout=120)

    def kubectl(self, *args: str, input: str | None = None, check: bool = True,
                timeout: float = 300) -> subprocess.CompletedProcess:
        env = dict(os.environ, KUBECONFIG=self.kubeconfig)
        p = subprocess.run(["kubectl", *args], input=input, capture_output=True, text=True,
                           env=env, timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed (rc {p.returncode}):\n"
                                 f"{p.stdout[-2000:]}\n{p.stderr[-4000:]}")
        return p
