#!/usr/bin/env python3
"""A cluster in a box: a real kube-apiserver + kube-controller-manager, kai's objects, simulated
GPU nodes and `kai run`, all on this machine.

    python3 tools/cluster/cluster.py up [--nodes 4] [--gpus-per-node 8]   # prints export lines
    python3 tools/cluster/cluster.py status
    python3 tools/cluster/cluster.py down

`up` starts, in order: etcd + kube-apiserver + kube-controller-manager (the shared
tools/kube-apiserver/start.sh --controller-manager), kai's installation (`kai install --print`
without its Deployments and webhook configurations: kai runs here as a local process), the
simulated nodes (tools/simnodes/simnodes.py) and `kai run` (scheduler, binder, pod grouper,
controllers, scale adjuster in one process). It waits until each is ready, writes everything
(pids, logs, kubeconfig) to the state dir, and prints `export KUBECONFIG=...` on stdout.
`down` stops what `up` started, by the recorded pid and start time (never by name), and removes
the state dir. A failed `up` stops whatever it had started. See docs/cluster-in-a-box.md.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time

import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
SIMNODES = REPO / "tools" / "simnodes" / "simnodes.py"
DEFAULT_TOOLS = REPO.parent / "shared" / "tools" / "kube-apiserver"
DEFAULT_DIR = pathlib.Path(os.environ.get("TMPDIR", "/tmp")) / f"kai-cluster-{os.getuid()}"
# What `kai install --print` holds that does not belong here: kai runs as a local process (no
# Deployments); without `kai admission` (--no-admission) the webhooks would refuse kai's pods.
DEPLOYMENTS = {"Deployment"}
WEBHOOKS = {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}
ADMISSION_SERVICE = ("kai-scheduler", "kai-admission")
PROCESSES = ["kai-run", "simnodes"]  # stopped in this order, before the API server


class UpError(Exception):
    pass


def say(msg: str) -> None:
    sys.stderr.write(f"[cluster] {msg}\n")
    sys.stderr.flush()


# ---- processes, by recorded pid and start time ----


def start_time(pid: int) -> str | None:
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return None if fields[0] == "Z" else fields[19]


def record(state: pathlib.Path, name: str, pid: int) -> None:
    st = start_time(pid)
    if st is None:
        raise UpError(f"{name} exited at once; see {state / (name + '.log')}")
    (state / f"{name}.pid").write_text(f"{pid} {st}\n")


def alive(state: pathlib.Path, name: str) -> int | None:
    """The recorded pid of `name` when that very process still runs."""
    try:
        pid_s, st = (state / f"{name}.pid").read_text().split()
        pid = int(pid_s)
    except (OSError, ValueError):
        return None
    return pid if start_time(pid) == st else None


def stop(state: pathlib.Path, name: str, grace: float = 15.0) -> None:
    pid = alive(state, name)
    if pid is not None:
        say(f"stopping {name} (pid {pid})")
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while alive(state, name) and time.monotonic() < deadline:
            time.sleep(0.1)
        if alive(state, name):
            say(f"{name} still up after {grace:.0f}s; sending KILL")
            os.kill(pid, signal.SIGKILL)
            while alive(state, name):
                time.sleep(0.1)
    (state / f"{name}.pid").unlink(missing_ok=True)


def spawn(state: pathlib.Path, name: str, argv: list[str], env: dict[str, str]) -> int:
    """Starts `argv` in a session of its own (it outlives this command), logging to NAME.log."""
    with (state / f"{name}.log").open("ab") as log:
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env,
                             start_new_session=True)
    record(state, name, p.pid)
    return p.pid


def wait(what: str, fn, timeout: float, state: pathlib.Path, name: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if fn():
            return
        if alive(state, name) is None:
            raise UpError(f"{name} exited while waiting for {what}; its log:\n{tail(state, name)}")
        time.sleep(0.2)
    raise UpError(f"timed out after {timeout:.0f}s waiting for {what}; {name}'s log:\n"
                  f"{tail(state, name)}")


def tail(state: pathlib.Path, name: str, chars: int = 3000) -> str:
    try:
        return (state / f"{name}.log").read_text(errors="replace")[-chars:]
    except OSError:
        return ""


# ---- the steps of up ----


def kai_binary(arg: str | None) -> str:
    for cand in (arg, os.environ.get("KAI_BIN"), str(REPO / "build" / "kai"), shutil.which("kai")):
        if cand and os.access(cand, os.X_OK) and pathlib.Path(cand).is_file():
            return str(pathlib.Path(cand).resolve())
    raise UpError("no kai binary: build it (cmake --build build --target kai), or give --kai PATH "
                  "or KAI_BIN")


def check_kube(tools: pathlib.Path, bin_dir: pathlib.Path) -> None:
    if not (tools / "start.sh").is_file():
        raise UpError(f"{tools}/start.sh not found: give --kube-tools DIR (the shared "
                      "tools/kube-apiserver folder) or KAI_KUBE_TEST_TOOLS")
    for b in ("kube-apiserver", "kube-controller-manager"):
        if not (bin_dir / b).is_file():
            raise UpError(f"{bin_dir / b} missing: build it with {tools}/build.sh "
                          "--with-controller-manager GIT_DIR (see its README.md)")


def start_kube(state: pathlib.Path, tools: pathlib.Path) -> dict[str, str]:
    """etcd, kube-apiserver and kube-controller-manager; the API server calls webhooks at a
    Service's endpoint address (--enable-aggregator-routing: there is no kube-proxy)."""
    kube_dir = state / "kube"
    p = subprocess.run(["bash", str(tools / "start.sh"), "--controller-manager", "--dir",
                        str(kube_dir), "--timeout", "240", "--",
                        "--enable-aggregator-routing=true"], capture_output=True, text=True,
                       timeout=300)
    (state / "kube-start.log").write_text(p.stderr)
    if p.returncode != 0:
        raise UpError(f"start.sh failed (rc {p.returncode}):\n{p.stderr[-3000:]}")
    env = {}
    for line in p.stdout.splitlines():
        if line.startswith("export "):
            k, _, v = line[len("export "):].partition("=")
            env[k] = shlex.split(v)[0] if v else ""
    if "KUBECONFIG" not in env:
        raise UpError(f"start.sh printed no KUBECONFIG:\n{p.stdout}")
    return env


def restart_kcm(state: pathlib.Path, extra: list[str]) -> None:
    """Restarts the kube-controller-manager start.sh started, with its own flags and `extra`
    after them (the later flag wins), recorded in the same pid file, so that stop.sh stops it."""
    kube_dir = state / "kube"
    pidfile = kube_dir / "kube-controller-manager.pid"
    try:
        pid_s, st = pidfile.read_text().split()
        pid = int(pid_s)
        argv = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
    except (OSError, ValueError) as e:
        raise UpError(f"--kcm-args: no running kube-controller-manager recorded in {pidfile}: {e}")
    if start_time(pid) != st:
        raise UpError(f"--kcm-args: the kube-controller-manager of {pidfile} is not running")
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 15
    while start_time(pid) == st and time.monotonic() < deadline:
        time.sleep(0.1)
    if start_time(pid) == st:
        os.kill(pid, signal.SIGKILL)
        while start_time(pid) == st:
            time.sleep(0.1)
    with (kube_dir / "kube-controller-manager.log").open("ab") as log:
        p = subprocess.Popen([a.decode() for a in argv] + extra, stdin=subprocess.DEVNULL,
                             stdout=log, stderr=log, start_new_session=True)
    time.sleep(0.5)
    new_st = start_time(p.pid)
    if new_st is None:
        raise UpError("kube-controller-manager exited at once with --kcm-args "
                      f"{' '.join(extra)}; see {kube_dir / 'kube-controller-manager.log'}")
    pidfile.write_text(f"{p.pid} {new_st}\n")
    say(f"kube-controller-manager restarted with {' '.join(extra)}")


def kubectl(kubeconfig: str, *args: str, stdin: str | None = None) -> str:
    p = subprocess.run(["kubectl", "--kubeconfig", kubeconfig, *args], input=stdin,
                       capture_output=True, text=True, timeout=180)
    if p.returncode != 0:
        raise UpError(f"kubectl {' '.join(args)} failed:\n{p.stderr[-3000:]}")
    return p.stdout


def host_ip() -> str | None:
    """A non-loopback address of this machine (an Endpoints object may not name 127.0.0.0/8),
    None when there is none."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # sends nothing: picks the outgoing address
            ip = s.getsockname()[0]
    except OSError:
        return None
    return None if ip.startswith("127.") else ip


def install_kai(state: pathlib.Path, kai: str, kubeconfig: str, admission: bool) -> None:
    """`kai install --print` less its Deployments (and webhooks without admission); the
    admission Service loses its selector, so that the endpoints controller leaves the Endpoints
    `up` writes (this machine) alone."""
    stream = subprocess.run([kai, "install", "--print", "--tls-dir", str(state / "tls")],
                            capture_output=True, text=True, timeout=60)
    if stream.returncode != 0:
        raise UpError(f"kai install --print failed:\n{stream.stderr[-2000:]}")
    left_out = DEPLOYMENTS | (set() if admission else WEBHOOKS)
    docs = [d for d in yaml.safe_load_all(stream.stdout) if d and d.get("kind") not in left_out]
    for d in docs:
        md = d.get("metadata") or {}
        if d["kind"] == "Service" and (md.get("namespace"), md.get("name")) == ADMISSION_SERVICE:
            d["spec"].pop("selector", None)
    # What the NVIDIA GPU operator installs and the admission webhook names on GPU pods.
    docs.append({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                 "metadata": {"name": "nvidia"}, "handler": "nvidia"})
    text = yaml.safe_dump_all(docs)
    (state / "install.yaml").write_text(text)
    kubectl(kubeconfig, "apply", "-f", "-", stdin=text)
    kubectl(kubeconfig, "wait", "--for=condition=Established", "--timeout=60s", "crd", "--all")


def start_simnodes(state: pathlib.Path, kubeconfig: str, args: argparse.Namespace) -> None:
    ready = state / "simnodes.ready"
    ready.unlink(missing_ok=True)
    argv = [sys.executable, str(SIMNODES), "--kubeconfig", kubeconfig, "--nodes", str(args.nodes),
            "--gpus-per-node", str(args.gpus_per_node), "--ready-file", str(ready),
            *shlex.split(args.simnodes_args)]
    spawn(state, "simnodes", argv, dict(os.environ))
    wait("the simulated nodes registered", ready.exists, 120, state, "simnodes")
    say(f"simnodes: {args.nodes} nodes x {args.gpus_per_node} GPUs registered "
        f"(log {state / 'simnodes.log'})")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def admission_endpoint(kubeconfig: str, ip: str, port: int) -> None:
    """The admission Service's endpoint: `kai run` on this machine."""
    ns, name = ADMISSION_SERVICE
    ep = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": name, "namespace": ns},
          "subsets": [{"addresses": [{"ip": ip}], "ports": [{"name": "https", "port": port}]}]}
    kubectl(kubeconfig, "apply", "-f", "-", stdin=json.dumps(ep))


def start_kai(state: pathlib.Path, kai: str, kubeconfig: str, args: argparse.Namespace,
              ip: str | None) -> None:
    components = args.kai_components
    argv = [kai, "run", "--kubeconfig", kubeconfig, "--shard", "default", "--create-defaults",
            "--snapshot-bind-address", ""]
    if ip:
        port = free_port()
        admission_endpoint(kubeconfig, ip, port)
        components += ",admission"
        argv += [f"--admission-bind-address=0.0.0.0:{port}",
                 f"--tls-cert-file={state / 'tls' / 'tls.crt'}",
                 f"--tls-key-file={state / 'tls' / 'tls.key'}"]
    argv += ["--components", components, *shlex.split(args.kai_args)]
    spawn(state, "kai-run", argv, dict(os.environ))
    if ip:
        wait("kai admission serving", lambda: "serving on" in tail(state, "kai-run", 100000), 60,
             state, "kai-run")

    def defaults_made() -> bool:
        p = subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "get", "queue",
                            "default-queue", "-o", "name"], capture_output=True, text=True)
        return p.returncode == 0
    wait("kai run's controllers to create the default queues", defaults_made, 120, state, "kai-run")
    say(f"kai run is up (log {state / 'kai-run.log'})")


def up(args: argparse.Namespace) -> int:
    state = pathlib.Path(args.dir).resolve()
    if state.exists() and any(alive(state, n) for n in PROCESSES) or (state / "kube").exists():
        say(f"{state} holds a cluster already: `down` it first (or give another --dir)")
        return 1
    try:
        kai = kai_binary(args.kai)
        tools = pathlib.Path(args.kube_tools).resolve()
        check_kube(tools, pathlib.Path(args.kube_bin))
        state.mkdir(parents=True, exist_ok=True)
        state.chmod(0o700)
        t0 = time.monotonic()
        say("starting etcd, kube-apiserver and kube-controller-manager")
        env = start_kube(state, tools)
        kubeconfig = env["KUBECONFIG"]
        if args.kcm_args:
            restart_kcm(state, shlex.split(args.kcm_args))
        ip = None if args.no_admission else host_ip()
        if not args.no_admission and ip is None:
            say("no non-loopback address for the webhooks' endpoint: running without admission")
        say("installing kai's CRDs, namespaces, RBAC, priority classes" +
            (" and webhooks" if ip else ""))
        install_kai(state, kai, kubeconfig, ip is not None)
        start_simnodes(state, kubeconfig, args)
        start_kai(state, kai, kubeconfig, args, ip)
    except (UpError, subprocess.TimeoutExpired, OSError) as e:
        say(f"up failed: {e}")
        if state.exists():
            teardown(state, pathlib.Path(args.kube_tools), keep=True)
            say(f"stopped what was started; logs kept in {state}")
        return 1
    (state / "env").write_text(f"export KUBECONFIG={kubeconfig}\nexport KAI_CLUSTER_DIR={state}\n")
    say(f"ready in {time.monotonic() - t0:.1f}s; stop with: {sys.argv[0]} down --dir {state}")
    print(f"export KUBECONFIG={kubeconfig}")
    print(f"export KAI_CLUSTER_DIR={state}")
    return 0


def teardown(state: pathlib.Path, tools: pathlib.Path, keep: bool) -> None:
    for name in PROCESSES:
        stop(state, name)
    if (state / "kube").is_dir():
        p = subprocess.run(["bash", str(tools / "stop.sh"), str(state / "kube")] +
                           (["--keep"] if keep else []), capture_output=True, text=True,
                           timeout=120)
        if p.returncode != 0:
            say(f"stop.sh: {p.stderr.strip()[-1000:]}")
    if not keep:
        shutil.rmtree(state, ignore_errors=True)


def down(args: argparse.Namespace) -> int:
    state = pathlib.Path(args.dir).resolve()
    if not state.is_dir():
        say(f"{state}: no cluster there")
        return 0
    teardown(state, pathlib.Path(args.kube_tools).resolve(), args.keep)
    say(f"stopped; {'kept' if args.keep else 'removed'} {state}")
    return 0


def status(args: argparse.Namespace) -> int:
    state = pathlib.Path(args.dir).resolve()
    if not (state / "kube").is_dir():
        print(f"no cluster in {state}")
        return 1
    running = 0
    for name in PROCESSES:
        pid = alive(state, name)
        print(f"{name}: {'running (pid %d)' % pid if pid else 'not running'}")
        running += pid is not None
    p = subprocess.run(["bash", str(pathlib.Path(args.kube_tools) / "start.sh"), "--status",
                        str(state / "kube")], capture_output=True, text=True)
    print((p.stdout or p.stderr).strip())
    if (state / "env").exists():
        print((state / "env").read_text().strip())
    return 0 if running == len(PROCESSES) and p.returncode == 0 else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="cluster.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=("up", "down", "status"))
    ap.add_argument("--dir", default=os.environ.get("KAI_CLUSTER_DIR", str(DEFAULT_DIR)),
                    help=f"state dir (default $KAI_CLUSTER_DIR or {DEFAULT_DIR})")
    ap.add_argument("--kube-tools",
                    default=os.environ.get("KAI_KUBE_TEST_TOOLS", str(DEFAULT_TOOLS)),
                    help="the shared tools/kube-apiserver folder (default ../shared/tools/"
                    "kube-apiserver next to the checkout, or $KAI_KUBE_TEST_TOOLS)")
    ap.add_argument("--kube-bin", default=os.environ.get("KUBE_TEST_BIN_DIR", "/opt/kube-test/bin"))
    ap.add_argument("--kai", help="the kai binary (default $KAI_BIN, build/kai, or kai on PATH)")
    ap.add_argument("--nodes", type=int, default=4)
    ap.add_argument("--gpus-per-node", type=int, default=8)
    ap.add_argument("--simnodes-args", default="", help="more simnodes flags, one string")
    ap.add_argument("--kai-args", default="", help="more `kai run` flags, one string")
    ap.add_argument("--kcm-args", default="",
                    help="up: more kube-controller-manager flags, one string (e.g. "
                    "\"--kube-api-qps=200 --kube-api-burst=400\"); it is restarted with them")
    ap.add_argument("--kai-components", default="scheduler,binder,podgrouper,controllers,"
                    "scale-adjuster", help="up: the components `kai run` runs (admission is "
                    "added unless --no-admission); leave some out to run them yourself, e.g. a "
                    "`kai scheduler` started and stopped by a benchmark")
    ap.add_argument("--no-admission", action="store_true",
                    help="up: no webhooks and no `kai admission` (GPU-sharing pods then fail to "
                    "bind: nothing gives them their shared-GPU ConfigMap)")
    ap.add_argument("--keep", action="store_true", help="down: keep the state dir (logs)")
    args = ap.parse_args(argv)
    return {"up": up, "down": down, "status": status}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
