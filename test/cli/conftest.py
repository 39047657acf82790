"""Black-box tests through the real ROS 2 Jazzy command line (issue 20, item 2).

These tests do what a robot engineer does after reading README.md ("On a robot") and docs/ros.md: build a
colcon workspace holding this package, source it, and drive the node only with `ros2 launch`, `ros2
lifecycle`, `ros2 param`, `ros2 service call`, `ros2 action send_goal`, `ros2 topic echo` and `ros2 run`.
Expected behaviour comes from the documents a user reads (README.md, docs/ros.md, docs/spatial.md, the
srv/action/msg files, the launch files' ``--show-args``) and from the generator's scene model, never from
the node's source.

The tools are the Jazzy sources in ``../shared/ros-tools`` (launch, launch_ros, ros2cli), installed into
the Jazzy venv by scripts/cli_phase.sh, which also sets RYNNEC_CLI_TESTS=1. Without that variable these
modules are not collected at all (the Kilted and Jazzy main runs must not pick them up); with it but
without ``ros2`` on PATH or without ../shared/ros-tools, every test skips with that reason.

Each launched node runs in a ROS domain of its own, claimed with the same flock scheme (and lock folder)
as test/ros/conftest.py, so a concurrent test/ros run on this machine never shares a graph with it.
"""

from __future__ import annotations

import ast
import contextlib
import fcntl
import json
import os
import random
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
# The tree copied into the workspace: this work tree, or another checkout (a git work tree) to check
# these tests against another revision.
SOURCE = Path(os.environ.get("RYNNEC_CLI_SOURCE", REPO))
ROS_TOOLS = REPO.parent / "shared" / "ros-tools"
# Set by scripts/cli_phase.sh: the stand-in for /opt/ros/jazzy/setup.bash that ros-tools/install.sh writes.
TOOLS_SETUP = Path(os.environ.get("RYNNEC_ROS_TOOLS_SETUP", REPO / "build" / "ros-tools" / "setup.bash"))

if os.environ.get("RYNNEC_CLI_TESTS") != "1":
    # Not the CLI phase (scripts/cli_phase.sh): these modules are not even collected.
    collect_ignore_glob = ["test_*.py"]


def _skip_reason() -> str | None:
    if not (ROS_TOOLS / "install.sh").is_file():
        return f"no {ROS_TOOLS} (the ROS 2 Jazzy command-line sources): the real-CLI tests need it"
    if shutil.which("ros2") is None:
        return "`ros2` is not on PATH: run these tests through scripts/cli_phase.sh"
    if not TOOLS_SETUP.is_file():
        return f"no {TOOLS_SETUP}: run `bash ../shared/ros-tools/install.sh .venv-jazzy build/ros-tools`"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = _skip_reason()
    if reason is None:
        return
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.skip(reason=reason))


# --------------------------------------------------------------------------------------------------------
# ROS domains (copied from test/conftest.py: the same range and lock folder, so the two never collide)

DOMAINS = range(101, 216)
_LOCK_DIR = Path(tempfile.gettempdir()) / "rynnec_ros-test-domains"


@contextlib.contextmanager
def claim_domain() -> Iterator[int]:
    """A ROS_DOMAIN_ID no other test run on this machine holds meanwhile (an flock per domain)."""
    _LOCK_DIR.mkdir(exist_ok=True)
    start = random.randrange(len(DOMAINS))
    for i in range(len(DOMAINS)):
        domain = DOMAINS[(start + i) % len(DOMAINS)]
        fh = (_LOCK_DIR / f"{domain}.lock").open("a")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            continue
        try:
            yield domain
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
            fh.close()
        return
    raise RuntimeError(f"every ROS domain in {DOMAINS} is held by another test run")


# --------------------------------------------------------------------------------------------------------
# Reading what the ros2 tools print

# rcl's two warnings about ROS_LOCALHOST_ONLY on Jazzy: noise in every printed output.
_NOISE = re.compile(r"^.*(ROS_LOCALHOST_ONLY is deprecated|'localhost_only' is enabled).*\n?", re.M)


def parse_repr(text: str) -> Any:
    """A message as `ros2 service call` prints it (``pkg.srv.X_Response(field=value, ...)``) as dicts.

    ros2service prints the response object's repr: nested constructor calls with Python literals, ``nan``,
    and ``array([...], dtype=...)`` / ``array('d', [...])`` for fixed-size and numeric sequences. Parsed
    with ``ast`` (never evaluated), so no generated message class is needed here.
    """

    def value(node: ast.expr) -> Any:
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            if name.split(".")[-1] == "array":
                seq = node.args[1] if isinstance(node.args[0], ast.Constant) else node.args[0]
                return value(seq)
            return {kw.arg: value(kw.value) for kw in node.keywords}
        if isinstance(node, (ast.List, ast.Tuple)):
            return [value(e) for e in node.elts]
        if isinstance(node, ast.Name) and node.id in ("nan", "inf"):
            return float(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -value(node.operand)
        if isinstance(node, ast.Constant):
            return node.value
        raise ValueError(f"unexpected element in a printed message: {ast.unparse(node)}")

    return value(ast.parse(text.strip(), mode="eval").body)


def parse_action_output(text: str) -> tuple[list[dict[str, Any]], dict[str, Any], str]:
    """Feedback messages, the result and the final status from `ros2 action send_goal --feedback`.

    ros2action prints ``Feedback:`` / ``Result:`` each followed by the message as YAML whose first line
    is indented by four spaces, and ends with ``Goal finished with status: STATUS``.
    """
    import yaml

    parts = re.split(r"(?m)^(Feedback:|Result:|Goal finished with status: \w+)\s*$", text)
    feedback: list[dict[str, Any]] = []
    result: dict[str, Any] = {}
    status = ""
    for marker, body in zip(parts[1::2], parts[2::2], strict=True):
        if marker.startswith("Goal finished"):
            status = marker.rsplit(" ", 1)[1]
            continue
        msg = yaml.safe_load(body.strip("\n").lstrip())
        if marker == "Feedback:":
            feedback.append(msg)
        else:
            result = msg
    return feedback, result, status


def stamp_ns(t: dict[str, int]) -> int:
    return int(t["sec"]) * 1_000_000_000 + int(t["nanosec"])


def stamps_yaml(stamps_ns: list[int]) -> str:
    """``builtin_interfaces/Time[]`` in the YAML a `ros2 service call` request takes."""
    return "[" + ", ".join(f"{{sec: {s // 10**9}, nanosec: {s % 10**9}}}" for s in stamps_ns) + "]"


def wait_until(check: Callable[[], Any], timeout: float, what: str, period: float = 1.0) -> Any:
    """Poll ``check`` until it returns something truthy (then return it); fail naming ``what``."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        last = check()
        if last:
            return last
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not reached within {timeout:.0f} s (last: {last!r})")
        time.sleep(period)


# --------------------------------------------------------------------------------------------------------
# The workspace, as README.md's robot section builds it


@dataclass
class Workspace:
    root: Path
    env: dict[str, str]  # a shell after `. <ros-tools>/setup.bash && . WS/install/setup.bash`
    log_dir: Path


def _fresh_shell_env() -> dict[str, str]:
    """This process's environment without what a sourced ROS / venv / repo shell adds: a new terminal."""
    env = dict(os.environ)
    for key in ("PYTHONPATH", "AMENT_PREFIX_PATH", "CMAKE_PREFIX_PATH", "COLCON_PREFIX_PATH", "VIRTUAL_ENV",
                "LD_LIBRARY_PATH", "ROS_DISTRO", "ROS_VERSION", "ROS_PYTHON_VERSION", "ROS_DOMAIN_ID",
                "RYNNEC_CLI_TESTS", "_ROS_WHEELS_BOOTSTRAP_COMPLETE"):
        # (the ROS wheels' start-up hook sets LD_LIBRARY_PATH and that guard, then re-executes python)
        env.pop(key, None)
    venv_bin = str(Path(os.environ.get("VIRTUAL_ENV", "/nonexistent")) / "bin")
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p and p != venv_bin)
    return env


def _sh(script: str, env: dict[str, str], log: Path, timeout: float) -> None:
    """Run a bash script (logged); fail with the end of its log."""
    with log.open("w") as fh:
        rc = subprocess.run(["bash", "-c", script], env=env, stdout=fh, stderr=subprocess.STDOUT,
                            timeout=timeout).returncode
    if rc != 0:
        raise AssertionError(f"exit {rc}:\n$ {script}\n{log.read_text()[-6000:]}")


@pytest.fixture(scope="session")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """A colcon workspace with this work tree in src/rynnec_ros, built the README's way, once per session.

    README.md "On a robot", step by step: `source /opt/ros/$ROS_DISTRO/setup.bash` is `. <ros-tools>/
    setup.bash` (the stand-in install.sh writes); `git clone` is a copy of the git-tracked files as they
    are in the work tree (uncommitted edits included, so the current tree is tested); the venv is the
    Jazzy venv (linked as WS/venv, where the README creates it, with the README's COLCON_IGNORE). Skipped:
    `rosdep install` and the two `pip install` lines, because this machine has no network and no rosdep
    and .venv-jazzy already holds torch and every Python dependency (it stands in for the robot's system
    packages plus its venv); the ROS packages rosdep would add that the stand-in lacks, vision_msgs and
    foxglove_msgs, are built from vendor/ into an underlay. Then `colcon build --packages-select
    rynnec_ros` and `. install/setup.bash`.
    """
    if _skip_reason():
        pytest.skip(_skip_reason() or "")
    ws = tmp_path_factory.mktemp("ws")
    src = ws / "src" / "rynnec_ros"
    files = subprocess.run(["git", "-C", str(SOURCE), "ls-files", "-z"], capture_output=True, check=True
                           ).stdout.decode().split("\0")
    for name in filter(None, files):
        path = SOURCE / name
        if path.is_file():  # a tracked file deleted in the work tree is gone from the "clone" too
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, src / name)
    venv = Path(os.environ["VIRTUAL_ENV"]) if "VIRTUAL_ENV" in os.environ else REPO / ".venv-jazzy"
    (ws / "venv").symlink_to(venv)
    fresh = _fresh_shell_env()
    log_dir = ws / "logs"
    log_dir.mkdir()
    # `rosdep install` would bring the ROS packages package.xml names; of those the stand-in ROS lacks
    # only vision_msgs and foxglove_msgs (no wheels), so their vendored definitions (vendor/README.md: the
    # same fields, hence the same type hashes) are built into an underlay the way the apt packages would
    # sit under the workspace.
    _sh(f"set -e; . '{TOOLS_SETUP}'; cd '{ws}'; mkdir -p deps; "
        "cp -r src/rynnec_ros/vendor/vision_msgs src/rynnec_ros/vendor/foxglove_msgs deps/; "
        "colcon build --base-paths deps --build-base build-deps --install-base install-deps",
        fresh, log_dir / "colcon-deps.log", timeout=900)
    _sh(f"set -e; . '{TOOLS_SETUP}'; . '{ws}/install-deps/setup.bash'; cd '{ws}'; touch venv/COLCON_IGNORE; "
        "colcon build --packages-select rynnec_ros", fresh, log_dir / "colcon-build.log", timeout=900)
    dump = subprocess.run(
        ["bash", "-c", f". '{TOOLS_SETUP}' && . '{ws}/install-deps/setup.bash' && "
         f". '{ws}/install/setup.bash' && env -0"],
        env=fresh, capture_output=True, check=True, timeout=120,
    ).stdout.decode()
    env = dict(line.split("=", 1) for line in dump.split("\0") if "=" in line)
    env.update(ROS_LOG_DIR=str(log_dir / "ros"), OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    # The node must run the copy colcon installed, not the work tree (.venv-jazzy has `pip install -e .`).
    where = subprocess.run(["python3", "-c", "import rynnec_ros; print(rynnec_ros.__file__)"], env=env,
                           cwd=ws, capture_output=True, text=True, timeout=120)
    assert Path(where.stdout.strip()).is_relative_to(ws / "install"), (
        f"the sourced workspace imports rynnec_ros from {where.stdout.strip()!r}, not {ws}/install "
        f"{where.stderr}")
    return Workspace(ws, env, log_dir)


# --------------------------------------------------------------------------------------------------------
# Test inputs made with the repo's own tools (set-up, not the subject of the tests)


def _repo_tool(*args: str, log: Path, timeout: float = 600) -> str:
    """`rynnec-ros ...` from the repo's Jazzy venv (the developer command, not the installed package)."""
    env = dict(_fresh_shell_env(), PYTHONPATH=str(REPO), OMP_NUM_THREADS="2")
    proc = subprocess.run([str(REPO / ".venv-jazzy" / "bin" / "python"), "-m", "rynnec_ros.cli", *args],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
    log.write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        raise AssertionError(f"rynnec-ros {' '.join(args)} exited {proc.returncode}:\n"
                             f"{proc.stdout}{proc.stderr}")
    return proc.stdout


@pytest.fixture(scope="session")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`rynnec-ros make-segmenting-checkpoint DIR`: a tiny random checkpoint whose decoding emits [SEG]."""
    base = tmp_path_factory.mktemp("ckpt")
    _repo_tool("make-segmenting-checkpoint", str(base / "seg-tiny"), log=base / "make.log")
    return base / "seg-tiny"


@dataclass
class Scene:
    """A `rynnec-ros gen-scene` output: bag/ plus scene.json (the generator's scene model)."""

    root: Path
    storage: str

    @property
    def bag(self) -> Path:
        return self.root / "bag"

    def model(self) -> dict[str, Any]:
        return json.loads((self.root / "scene.json").read_text())

    def images(self) -> list[tuple[str, int, int, int, str]]:
        """(topic, header stamp ns, height, width, frame_id) of every sensor_msgs/Image, read with rosbags."""
        from rosbags.rosbag2 import Reader
        from rosbags.typesys import Stores, get_typestore

        store = get_typestore(Stores.ROS2_JAZZY)
        out = []
        with Reader(self.bag) as reader:
            conns = [c for c in reader.connections if c.msgtype == "sensor_msgs/msg/Image"]
            for conn, _, raw in reader.messages(connections=conns):
                msg: Any = store.deserialize_cdr(raw, conn.msgtype)
                out.append((conn.topic, stamp_ns({"sec": msg.header.stamp.sec,
                                                  "nanosec": msg.header.stamp.nanosec}),
                            msg.height, msg.width, msg.header.frame_id))
        return out

    def color_topic(self) -> str:
        topics = {t for t, *_ in self.images() if "color" in t}
        assert len(topics) == 1, f"expected one colour topic in {self.bag}, got {topics}"
        return topics.pop()

    def color_stamps(self) -> list[int]:
        topic = self.color_topic()
        return sorted(s for t, s, *_ in self.images() if t == topic)


@pytest.fixture(scope="session")
def scenes(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Scene]:
    """`rynnec-ros gen-scene --out DIR --seed 0 --storage S`, generated once per storage."""
    base = tmp_path_factory.mktemp("scenes")
    made: dict[str, Scene] = {}
    help_text = _repo_tool("gen-scene", "--help", log=base / "help.log")

    def make(storage: str) -> Scene:
        if storage not in made:
            if "--storage" not in help_text:
                if storage == "mcap":
                    pytest.skip("`rynnec-ros gen-scene` has no --storage option yet: no MCAP bag to replay")
                args: list[str] = []
            else:
                args = ["--storage", storage]
            root = base / storage
            _repo_tool("gen-scene", "--out", str(root), "--seed", "0", *args, log=base / f"{storage}.log")
            made[storage] = Scene(root, storage)
        return made[storage]

    return make


# --------------------------------------------------------------------------------------------------------
# Running ros2 commands


class Launch:
    """One `ros2 launch ...` process, as typed in a terminal (its own process group, like a shell job)."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path, log: Path):
        self.args = args
        self.log = log
        self._fh = log.open("w")
        self.proc = subprocess.Popen(["ros2", "launch", *args], env=env, cwd=cwd, stdout=self._fh,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.returncode: int | None = None

    def output(self) -> str:
        return _NOISE.sub("", self.log.read_text(errors="replace"))

    def alive(self) -> bool:
        return self.proc.poll() is None

    def processes(self) -> list[Any]:
        """The launch process and everything it started (psutil.Process objects)."""
        import psutil

        try:
            root = psutil.Process(self.proc.pid)
            return [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def ctrl_c(self, timeout: float = 60) -> int:
        """What Ctrl-C in the terminal does: SIGINT to the job's process group; wait for the exit code."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGINT)
        self.returncode = self.proc.wait(timeout)
        return self.returncode

    def stop(self) -> None:
        """Ctrl-C, then SIGKILL for whatever of this launch's process group is still there."""
        if self.alive():
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.ctrl_c(30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        if self.alive():
            self.proc.wait(10)
        self._fh.close()


_ACTIVE: list[Launch] = []  # launches whose output a failing test report shows


@dataclass
class Ros2:
    """The `ros2` command in one ROS domain of a sourced workspace.

    Every call and its output is printed: pytest shows it for a failing test.
    """

    ws: Workspace
    domain: int
    launches: list[Launch] = field(default_factory=list)

    @property
    def env(self) -> dict[str, str]:
        return dict(self.ws.env, ROS_DOMAIN_ID=str(self.domain), ROS_LOCALHOST_ONLY="1",
                    ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")

    def run(self, *args: str, timeout: float = 120, check: bool = True, exe: str = "ros2"
            ) -> subprocess.CompletedProcess[str]:
        cmd = [exe, *args]
        shown = " ".join(repr(a) if (" " in a or not a) else a for a in cmd)
        t0 = time.monotonic()
        try:
            proc = subprocess.run(cmd, env=self.env, cwd=self.ws.root, capture_output=True, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raw = exc.stdout or b""
            out = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
            print(f"$ {shown}\n[timed out after {timeout:.0f} s]\n{out}")
            raise AssertionError(f"`{shown}` did not finish within {timeout:.0f} s; output:\n{out}") from None
        proc.stderr = _NOISE.sub("", proc.stderr)
        took = time.monotonic() - t0
        print(f"$ {shown}   [exit {proc.returncode}, {took:.1f} s]\n{proc.stdout}{proc.stderr}")
        if check and proc.returncode != 0:
            raise AssertionError(f"`{shown}` exited {proc.returncode}:\n{proc.stdout}{proc.stderr}")
        return proc

    def service_call(self, service: str, srv_type: str, request: str = "{}", timeout: float = 180
                     ) -> dict[str, Any]:
        """`ros2 service call SERVICE TYPE REQUEST`, the printed response parsed into a dict."""
        out = self.run("service", "call", service, srv_type, request, timeout=timeout).stdout
        assert "response:" in out, f"no response printed:\n{out}"
        return parse_repr(out.rsplit("response:", 1)[1])

    def lifecycle_state(self, node: str) -> str:
        """The label `ros2 lifecycle get NODE` prints ("active [3]" -> "active"); "" if not reachable."""
        proc = self.run("lifecycle", "get", node, timeout=60, check=False)
        return proc.stdout.split()[0] if proc.returncode == 0 and proc.stdout.strip() else ""

    def param_get(self, node: str, name: str) -> str:
        """What `ros2 param get NODE NAME` prints, e.g. "Double value is: 3.0"."""
        return self.run("param", "get", node, name, timeout=60).stdout.strip()

    def launch(self, *args: str) -> Launch:
        log = self.ws.log_dir / f"launch-{self.domain}-{len(self.launches)}.log"
        launch = Launch(list(args), self.env, self.ws.root, log)
        self.launches.append(launch)
        _ACTIVE.append(launch)
        print(f"$ ros2 launch {' '.join(args)}   [pid {launch.proc.pid}, domain {self.domain}]")
        return launch

    def wait_active(self, node: str, launch: Launch, timeout: float = 240) -> None:
        """Poll `ros2 lifecycle get` until the launch's autostart has the node active."""

        def check() -> bool:
            assert launch.alive(), f"ros2 launch exited {launch.proc.returncode}:\n{launch.output()[-6000:]}"
            return self.lifecycle_state(node) == "active"

        wait_until(check, timeout, f"{node} active after `ros2 launch`", period=2)

    def close(self) -> None:
        for launch in self.launches:
            launch.stop()
            if launch in _ACTIVE:
                _ACTIVE.remove(launch)
        # The CLI calls above started a ros2 daemon for this domain; a user's would stay, ours must not.
        with contextlib.suppress(AssertionError):
            self.run("daemon", "stop", timeout=60, check=False)


@contextlib.contextmanager
def ros2_domain(ws: Workspace) -> Iterator[Ros2]:
    """A `ros2` command line in a fresh ROS domain; its launches and daemon are stopped at the end."""
    with claim_domain() as domain:
        ros = Ros2(ws, domain)
        try:
            yield ros
        finally:
            ros.close()


@pytest.fixture
def ros2(workspace: Workspace) -> Iterator[Ros2]:
    """A `ros2` command line of its own (own domain) for one test."""
    with ros2_domain(workspace) as ros:
        yield ros


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failing test's report carries the output of every `ros2 launch` still running (the node's log)."""
    report = yield
    if report.failed:
        for launch in _ACTIVE:
            report.sections.append((f"ros2 launch {' '.join(launch.args)[:120]}", launch.output()[-12000:]))
    return report
