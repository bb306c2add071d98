"""Start and stop a throw-away kube-apiserver for the e2e tests.

Uses the shared scripts ../shared/tools/kube-apiserver/{start,stop}.sh (see their README). A
test module calls `require_apiserver()` (raises unittest.SkipTest when the binary is not built)
and `Server.start()` / `server.stop()`.
"""

from __future__ import annotations

import base64
import os
import pathlib
import random
import shlex
import socket
import subprocess
import threading
import time
import unittest

import yaml

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
TOOLS = pathlib.Path(os.environ.get("KAI_KUBE_TEST_TOOLS",
                                    REPO_ROOT.parent / "shared" / "tools" / "kube-apiserver"))
APISERVER = pathlib.Path(os.environ.get("KUBE_TEST_BIN_DIR", "/opt/kube-test/bin")) / "kube-apiserver"
CONTROLLER_MANAGER = APISERVER.parent / "kube-controller-manager"
SKIP_MESSAGE = "kube-apiserver not built: see ../shared/tools/kube-apiserver/README.md"


def require_apiserver() -> None:
    if not APISERVER.is_file() or not (TOOLS / "start.sh").is_file():
        raise unittest.SkipTest(SKIP_MESSAGE)


def require_controller_manager() -> None:
    """For a test that starts the server with `Server.start("--controller-manager")` (the Job,
    ReplicaSet, garbage-collection... controllers): skips, as require_apiserver, where it is not
    built (build.sh --with-controller-manager)."""
    require_apiserver()
    if not CONTROLLER_MANAGER.is_file():
        raise unittest.SkipTest(SKIP_MESSAGE + " (kube-apiserver not built with "
                                "--with-controller-manager: kube-controller-manager is missing)")


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = pathlib.Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def free_port_block(n: int = 1, host: str = "127.0.0.1") -> int:
    """The first of n consecutive ports that are free now, chosen below the kernel's ephemeral
    range: a port the kernel hands out (bind to 0) can be taken by any outgoing connection -- kai's
    own to the API server among them -- between this check and the server's bind."""
    low, _ = _ephemeral_range()
    rng = random.Random()
    for _ in range(200):
        first = rng.randrange(10000, max(10001, low - n))
        socks = []
        try:
            for p in range(first, first + n):
                s = socket.socket()
                socks.append(s)
                s.bind((host, p))
            return first
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError(f"no block of {n} free ports below {low}")


def free_port(host: str = "127.0.0.1") -> int:
    return free_port_block(1, host)


def wait_until(what: str, fn, timeout: float = 30.0, errors: tuple = (OSError,),
               log: pathlib.Path | None = None, interval: float = 0.2):
    """fn()'s first truthy answer within `timeout` s (the `errors` it raises count as "not yet");
    else an AssertionError naming `what`, the last answer and the tail of `log`."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = fn()
            if last:
                return last
        except errors as e:
            last = e
        time.sleep(interval)
    tail = log.read_text()[-3000:] if log is not None and log.exists() else ""
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})" +
                         (f"; {log.name}:\n{tail}" if tail else ""))


def stop_process(p) -> None:
    """SIGTERM to a process still running, and its end awaited."""
    if p is not None and p.poll() is None:
        p.terminate()
        p.wait(timeout=10)


def release(client=None, server: "Server | None" = None, tmp=None) -> None:
    """A test module's teardown: closes the client, stops the server and removes the temporary
    folder (each may be None)."""
    if client is not None:
        client.close()
    if server is not None:
        server.stop()
    if tmp is not None:
        tmp.cleanup()


def rbac_objects(path: pathlib.Path) -> dict:
    """The objects of an RBAC manifest by (kind, name)."""
    return {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(path.read_text()) if d}


def rbac_rules(obj: dict) -> set[tuple[str, str, str]]:
    """(apiGroup, resource, verb) for every rule of a Role or ClusterRole."""
    return {(g, res, v) for r in obj["rules"] for g in r["apiGroups"] for res in r["resources"]
            for v in r["verbs"]}


class Poller(threading.Thread):
    """A daemon thread that calls step() every `interval` seconds until stop_polling(); `errors`
    a step raises count as "try again" (a fake kubelet's API calls)."""

    def __init__(self, interval: float, errors: tuple = (OSError,)):
        super().__init__(daemon=True)
        self.interval = interval
        self.errors = errors
        self.stopping = threading.Event()

    def step(self) -> None:
        raise NotImplementedError

    def run(self):
        while not self.stopping.is_set():
            try:
                self.step()
            except self.errors:
                pass
            time.sleep(self.interval)

    def stop_polling(self) -> None:
        self.stopping.set()
        self.join(timeout=5)


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

    def install_kai_basics(self) -> None:
        """kai's CRDs (established), KAI's priority classes and the kai-scheduler namespace."""
        self.kubectl("apply", "-f", str(REPO_ROOT / "deploy" / "crds"))
        self.kubectl("wait", "--for=condition=Established", "--timeout=60s", "crd", "--all")
        self.kubectl("apply", "-f", str(REPO_ROOT / "deploy" / "install" / "priorityclasses.yaml"))
        self.kubectl("create", "namespace", "kai-scheduler")

    def token_kubeconfig(self, namespace: str, account: str, path: pathlib.Path) -> str:
        """Writes a kubeconfig at `path` that authenticates as ServiceAccount namespace/account
        (a one-hour token from `kubectl create token`; the account must exist)."""
        token = self.kubectl("create", "token", account, "-n", namespace,
                             "--duration", "1h").stdout.strip()
        if not token:
            raise AssertionError(f"kubectl create token {account} -n {namespace} gave no token")
        admin = yaml.safe_load(pathlib.Path(self.kubeconfig).read_text())
        ctx = next(c["context"] for c in admin["contexts"] if c["name"] == admin["current-context"])
        cluster = next(c["cluster"] for c in admin["clusters"] if c["name"] == ctx["cluster"])
        ca = cluster.get("certificate-authority-data") or base64.b64encode(
            pathlib.Path(cluster["certificate-authority"]).read_bytes()).decode()
        cfg = {"apiVersion": "v1", "kind": "Config", "current-context": account,
               "clusters": [{"name": "kube-test", "cluster": {
                   "server": cluster["server"], "certificate-authority-data": ca}}],
               "users": [{"name": account, "user": {"token": token}}],
               "contexts": [{"name": account, "context": {"cluster": "kube-test", "user": account}}]}
        path.write_text(yaml.safe_dump(cfg))
        path.chmod(0o600)
        return str(path)

    def open_watches(self) -> dict[str, float]:
        """The server's gauge of open WATCH requests (apiserver_longrunning_requests), summed by
        resource; the server's own informers' watches included."""
        out: dict[str, float] = {}
        for line in self.kubectl("get", "--raw", "/metrics").stdout.splitlines():
            if line.startswith("apiserver_longrunning_requests{") and 'verb="WATCH"' in line:
                resource = line.split('resource="', 1)[1].split('"', 1)[0]
                out[resource] = out.get(resource, 0.0) + float(line.rsplit(" ", 1)[1])
        return out

    def can_i(self, verb: str, resource: str, user: str, namespace: str) -> str:
        """`kubectl auth can-i` as `user`: "yes" or "no"."""
        return self.kubectl("auth", "can-i", verb, resource, "--as", user, "-n", namespace,
                            check=False).stdout.strip()

    def kubectl(self, *args: str, input: str | None = None, check: bool = True,
                timeout: float = 300) -> subprocess.CompletedProcess:
        env = dict(os.environ, KUBECONFIG=self.kubeconfig)
        p = subprocess.run(["kubectl", *args], input=input, capture_output=True, text=True,
                           env=env, timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed (rc {p.returncode}):\n"
                                 f"{p.stdout[-2000:]}\n{p.stderr[-4000:]}")
        return p
