"""The robot install as docs/install.md writes it: rosdep keys, the pip step, colcon's install layout.

Expected values come from outside this repository:
- rosdep keys and released ROS packages: ``test/data/rosdep_keys.yaml``, read verbatim from
  github.com/ros/rosdistro (``rosdep/python.yaml``, ``{humble,jazzy}/distribution.yaml``; commit noted there);
- the install layout: ament_cmake's conventions (``lib/<pkg>/`` holds what ``ros2 run`` and launch_ros'
  ``ExecutableInPackage`` start, ``share/<pkg>/`` the launch and config files);
- the argument shape: launch_ros ``actions/node.py`` (Humble and Jazzy are identical there) appends
  ``--ros-args -r __node:=NAME`` after the executable's own arguments.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
ROSDEP = yaml.safe_load((REPO / "test" / "data" / "rosdep_keys.yaml").read_text())
DEP_TAGS = ("depend", "build_depend", "buildtool_depend", "exec_depend", "test_depend", "build_export_depend")


def _package_deps() -> dict[str, set[str]]:
    root = ET.parse(REPO / "package.xml").getroot()
    return {tag: {e.text.strip() for e in root.findall(tag)} for tag in DEP_TAGS}


def _all_deps() -> set[str]:
    return set().union(*_package_deps().values())


def test_every_dependency_is_a_rosdep_key_that_exists_on_humble_and_jazzy() -> None:
    python_keys = ROSDEP["ubuntu"]
    for dep in sorted(_all_deps()):
        if dep.startswith("python3-"):
            assert dep in python_keys, f"{dep} is no rosdep key of rosdep/python.yaml (or refresh snapshot)"
            entry = python_keys[dep]
            # A per-release mapping must not null out Jammy (Humble) or Noble (Jazzy).
            if isinstance(entry, dict) and "pip" not in entry:
                for release in ("jammy", "noble"):
                    assert entry.get(release, entry.get("*")), (dep, release)
        else:
            for distro in ("humble", "jazzy"):
                assert dep in ROSDEP["ros_packages"][distro], f"{dep} is not released for {distro}"


def _imported_top_modules(paths: list[Path]) -> set[str]:
    names: set[str] = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
    return names


def test_every_imported_ros_package_is_declared_and_nothing_unused() -> None:
    sources = [
        *(REPO / "rynnec_ros").rglob("*.py"),
        *(REPO / "launch").glob("*.py"),
        *(REPO / "scripts" / "ros").iterdir(),
    ]
    known_ros = set(ROSDEP["ros_packages"]["humble"]) | {"cv_bridge", "message_filters"}
    imported = _imported_top_modules(sources) & known_ros
    declared = _all_deps()
    assert imported <= declared, f"imported but not in package.xml: {sorted(imported - declared)}"
    assert "rcl_interfaces" in imported  # the node's parameter services
    assert not {"cv_bridge", "message_filters", "tf2_ros"} & imported  # one tested path: no optional branches
    assert not {"cv_bridge", "message_filters", "tf2_ros"} & declared, "unused packages must not be required"


def test_pip_keys_are_what_the_documented_pip_step_installs() -> None:
    pip_keys = {d for d in _all_deps() if d.endswith("-pip")}
    assert pip_keys == {"python3-rosbags-pip", "python3-transformers-pip"}
    doc = (REPO / "docs" / "install.md").read_text()
    skip = re.search(r'--skip-keys "([^"]+)"', doc)
    assert skip and set(skip.group(1).split()) == pip_keys  # rosdep's pip cannot install under PEP 668
    robot_reqs = {
        re.split(r"[<>=!~\[ ]", line)[0].lower()
        for line in (REPO / "requirements-robot.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    for key in pip_keys:
        packages = ROSDEP["ubuntu"][key]["pip"]["packages"]
        assert set(packages) <= robot_reqs, (key, packages)
    assert "torch" not in robot_reqs  # per platform: NVIDIA's JetPack wheel must never be replaced
    assert "--system-site-packages" in doc and "python3 -m venv" in doc


def test_sam2_installs_on_every_robot_target() -> None:
    """SAM 2 is Meta's sam2 package (rynnec_ros/model/sam2.py), so every documented robot install has its
    pip step, and the package's own metadata asks for nothing a robot lacks: Python >= 3.10 (Humble and
    JetPack 6 run 3.10) and, besides torch/torchvision (``--no-deps``: the platform's torch stays, and
    nothing the engine uses imports torchvision), packages that package.xml (apt) or the robot pip step
    provide."""
    import importlib.metadata

    step = ("SAM2_BUILD_CUDA=0 pip install --no-deps --no-build-isolation "
            "-r src/rynnec_ros/requirements-sam2.txt")
    assert (REPO / "docs" / "install.md").read_text().count(step) == 2  # x86-64 (Humble, Jazzy), Jetson
    assert step in (REPO / "README.md").read_text()
    lines = (REPO / "requirements-sam2.txt").read_text().splitlines()
    assert [x for x in lines if x.strip() and not x.startswith("#")] == ["sam2==1.1.0"]
    try:
        meta = importlib.metadata.metadata("sam2")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("sam2 is not in this venv (the Python 3.10 one has no torch either)")
    assert meta["Version"] == "1.1.0" and meta["Requires-Python"] == ">=3.10.0"
    required = [r for r in meta.get_all("Requires-Dist") or [] if "extra ==" not in r]
    needs = {re.split(r"[<>=!~ ;\[]", r)[0].lower() for r in required}
    robot_reqs = {
        re.split(r"[<>=!~\[ ]", line)[0].lower()
        for line in (REPO / "requirements-robot.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    apt = {"numpy": "python3-numpy", "pillow": "python3-pil", "tqdm": "python3-tqdm"}
    assert set(apt.values()) <= _all_deps()
    assert needs - {"torch", "torchvision"} <= robot_reqs | set(apt), needs


def test_robot_constraints_keep_numpy_1() -> None:
    """Ubuntu 22.04 ships numpy 1.21 and Humble's/JetPack 6's compiled modules are built against numpy 1.x;
    opencv-python 4.12.0.88 (the first 4.12) declares ``numpy>=2`` for Python >= 3.9 in its wheel metadata."""
    lines = [x.split("#")[0].strip() for x in (REPO / "constraints-robot.txt").read_text().splitlines()]
    assert "numpy<2" in lines
    assert "opencv-python<4.12" in lines and "opencv-python-headless<4.12" in lines


def test_models_directory_is_never_installed() -> None:
    cmake = (REPO / "CMakeLists.txt").read_text()
    code = "\n".join(line.split("#")[0] for line in cmake.splitlines())
    assert not re.search(r"install\s*\(\s*DIRECTORY[^)]*\bmodels\b", code)


def _env_without_worktree() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and Path(p).resolve() != REPO
    )
    return env


@pytest.mark.ros
@pytest.mark.slow
@pytest.mark.robot_build
def test_colcon_build_with_robot_options(tmp_path: Path) -> None:
    """colcon build as on a robot (Python sources installed, BUILD_TESTING default), then run what
    launch_ros runs, with only the install space on the path: the work tree is not importable."""
    pytest.importorskip("rclpy")
    if shutil.which("colcon") is None:
        pytest.skip("colcon is not installed")
    src = tmp_path / "src" / "rynnec_ros"
    src.mkdir(parents=True)
    for name in (
        "CMakeLists.txt",
        "package.xml",
        "msg",
        "srv",
        "action",
        "launch",
        "config",
        "rynnec_ros",
        "scripts",
    ):
        (shutil.copytree if (REPO / name).is_dir() else shutil.copy)(REPO / name, src / name)
    (src / "models").mkdir()
    (src / "models" / "RynnEC-2B.safetensors").write_bytes(b"\0" * 1024)  # stands for a multi-GB checkpoint
    env = _env_without_worktree()
    prefix = os.environ.get("VIRTUAL_ENV", sys.prefix)
    env.update(
        AMENT_PREFIX_PATH=os.pathsep.join(filter(None, [prefix, env.get("AMENT_PREFIX_PATH", "")])),
        CMAKE_PREFIX_PATH=prefix,
    )
    env.pop("COLCON_PREFIX_PATH", None)
    build = subprocess.run(
        [
            "colcon",
            "--log-base",
            str(tmp_path / "log"),
            "build",
            "--base-paths",
            str(tmp_path / "src"),
            "--build-base",
            str(tmp_path / "build"),
            "--install-base",
            str(tmp_path / "install"),
            "--executor",
            "sequential",
            "--cmake-args",
            f"-DPython3_EXECUTABLE={sys.executable}",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    pkg = tmp_path / "install" / "rynnec_ros"
    for exe in ("rynnec_node", "rynnec_replay"):
        assert os.access(pkg / "lib" / "rynnec_ros" / exe, os.X_OK), exe
    site = next(pkg.glob("lib/python3*/site-packages/rynnec_ros"))
    assert (site / "srv" / "__init__.py").is_file() and (site / "ros" / "node.py").is_file()
    assert (pkg / "share" / "rynnec_ros" / "launch" / "rynnec.launch.py").is_file()
    assert not list(pkg.rglob("*.safetensors")) and not (pkg / "share" / "rynnec_ros" / "models").exists()

    # What launch_ros runs: the installed executable, its arguments, then --ros-args -r __node:=NAME.
    run_env = dict(env, PYTHONPATH=os.pathsep.join([str(site.parent), env.get("PYTHONPATH", "")]))
    ran = subprocess.run(
        [str(pkg / "lib" / "rynnec_ros" / "rynnec_replay"), "--help", "--ros-args", "-r", "__node:=player"],
        env=run_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0 and "--rate" in ran.stdout, ran.stderr
    # The command docs/ros.md tells robot users to type: colcon's setup puts <prefix>/bin on PATH.
    cli = subprocess.run([str(pkg / "bin" / "rynnec-ros"), "--help"], env=run_env, capture_output=True,
                         text=True, timeout=120)
    assert cli.returncode == 0 and "gen-scene" in cli.stdout, cli.stderr
    code = "import rynnec_ros.ros.node\nfrom rynnec_ros.srv import AskQuestion\nprint(rynnec_ros.__file__)"
    imported = subprocess.run(
        [sys.executable, "-c", code],
        env=run_env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert imported.returncode == 0, imported.stderr
    assert Path(imported.stdout.strip()).is_relative_to(pkg)


@pytest.mark.ros
def test_srv_import_works_first_in_the_documented_shell(tmp_path: Path) -> None:
    """``. scripts/env.sh`` then a planner's first line, in a fresh interpreter (nothing imported before)."""
    pytest.importorskip("rclpy")
    distro = os.environ.get("RYNNEC_ROS_DISTRO", "kilted")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "AMENT_PREFIX_PATH", "VIRTUAL_ENV")}
    env["RYNNEC_ROS_DISTRO"] = distro
    first_lines = (
        "from rynnec_ros.srv import AskQuestion; from rynnec_ros.msg import Region; "
        "print(AskQuestion.Request())"
    )
    script = f". {REPO}/scripts/env.sh && cd {tmp_path} && python -c '{first_lines}'"
    done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "AskQuestion_Request" in done.stdout
