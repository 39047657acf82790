"""``rynnec-ros`` subcommands of the ROS layer: node, replay, planner-demo, make-segmenting-checkpoint.

rclpy and the message packages are imported inside the command functions so ``rynnec-ros --help``
works where ROS is not installed.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    n = subparsers.add_parser("node", help="run the cognition lifecycle node (configured and activated)")
    n.add_argument("--params-file", type=Path, help="ROS parameter YAML (see config/rynnec.yaml)")
    n.add_argument("-p", "--param", action="append", default=[], metavar="NAME:=VALUE",
                   help="set one parameter, e.g. -p checkpoint:=/models/RynnEC-2B (repeatable)")
    n.add_argument("--namespace", default="", help="node namespace")
    n.add_argument("--name", default="rynnec", help="node name")
    n.add_argument("--no-autostart", action="store_true",
                   help="stay unconfigured and wait for a lifecycle manager")
    n.set_defaults(func=_node)

    r = subparsers.add_parser("replay", help="publish a rosbag2 bag (sqlite3 or MCAP) at its recorded rate")
    r.add_argument("bag", type=Path)
    r.add_argument("--rate", type=float, default=1.0, help="playback speed factor")
    r.add_argument("--loop", action="store_true", help="start again at the end (stamps jump back)")
    r.add_argument("--loops", type=int, default=None, help="with --loop: stop after this many passes")
    r.add_argument("--clock", action="store_true", help="publish /clock from bag time (use_sim_time)")
    r.add_argument("--topics", nargs="+", help="only these topics")
    r.add_argument("--wait-for", metavar="TOPIC", nargs="+",
                   help="wait until each TOPIC has a subscriber before playing")
    r.add_argument("--wait-s", type=float, default=30.0, help="longest wait for --wait-for")
    r.set_defaults(func=_replay)

    d = subparsers.add_parser(
        "planner-demo",
        help="scripted planner: replay a generated scene, ask a region question, a segmentation and a "
        "spatial question of the running node, print the answers and save overlay PNGs",
    )
    d.add_argument("--scene", type=Path, required=True, help="directory written by gen-scene")
    d.add_argument("--out", type=Path, required=True, help="where overlay PNGs and answers.json go")
    d.add_argument("--namespace", default="")
    d.add_argument("--timeout", type=float, default=300.0, help="seconds per request")
    d.add_argument("--untrained", action="store_true", help="say that the checkpoint is random")
    d.set_defaults(func=_planner_demo)

    m = subparsers.add_parser(
        "make-segmenting-checkpoint",
        help="random tiny checkpoint whose decoding emits [SEG] (tests/demo of the mask path)",
    )
    m.add_argument("dir", type=Path)
    m.add_argument("--size", choices=["tiny", "small"], default="tiny")
    m.add_argument("--seed", type=int, default=0)
    m.set_defaults(func=_make_seg)


def _node(args: argparse.Namespace) -> int:
    from rynnec_ros.ros.process import run

    ros_args = ["rynnec-ros", "--ros-args", "-r", f"__node:={args.name}"]
    if args.namespace:
        ros_args += ["-r", f"__ns:={'/' + args.namespace.strip('/')}"]
    if args.params_file:
        if not args.params_file.is_file():
            raise SystemExit(f"parameter file {args.params_file} does not exist")
        ros_args += ["--params-file", str(args.params_file)]
    for item in args.param:
        if ":=" not in item:
            raise SystemExit(f"-p expects NAME:=VALUE, got '{item}'")
        ros_args += ["-p", item]
    return run(ros_args, autostart=not args.no_autostart)


def _replay(args: argparse.Namespace, ros_args: list[str] | None = None) -> int:
    """Replay ``args.bag``; ``ros_args`` (a full argv with ``--ros-args ...``) go to ``rclpy.init``.

    Handing rclpy the launch-produced argv is what applies ``-r __node:=NAME`` and topic remappings to
    the player node, exactly as for any other ROS executable.
    """
    import rclpy

    from rynnec_ros.ros.replay import BagReplayer

    rclpy.init(args=ros_args)
    node = rclpy.create_node("rynnec_replay")
    try:
        player = BagReplayer(node, args.bag, rate=args.rate, loop=args.loop, clock=args.clock,
                             topics=args.topics, max_loops=args.loops)
        if args.wait_for and not player.wait_for_subscribers(args.wait_for, args.wait_s):
            print(f"no subscriber on {args.wait_for} after {args.wait_s} s; playing anyway")
        count = player.run()
        print(f"published {count} messages from {args.bag} ({player.loops} pass(es))", flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


def replay_main(argv: list[str]) -> int:
    """``ros2 run rynnec_ros rynnec_replay`` / launch_ros: argv may carry ``--ros-args ... [--]``.

    launch_ros' ``Node`` always appends ``--ros-args`` (and ``-r __node:=NAME``, ``--params-file F``,
    ``-r FROM:=TO``) after the executable's own arguments; rclpy's ``remove_ros_args`` strips exactly the
    span rcl treats as ROS arguments, so argparse sees only the tool's options.
    """
    from rclpy.utilities import remove_ros_args

    parser = argparse.ArgumentParser(prog="rynnec_replay")
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    args = parser.parse_args(["replay", *remove_ros_args(argv)[1:]])
    return _replay(args, ros_args=list(argv))


def _planner_demo(args: argparse.Namespace) -> int:
    from rynnec_ros.demo import run_planner_demo

    return run_planner_demo(args.scene, args.out, args.namespace, args.timeout, args.untrained)


def _make_seg(args: argparse.Namespace) -> int:
    from rynnec_ros.fixtures.checkpoints import make_segmenting_checkpoint

    print(make_segmenting_checkpoint(args.dir, size=args.size, seed=args.seed))
    return 0
