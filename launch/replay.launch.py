"""Replay a recorded rosbag2 bag into the cognition node (robots and workstations with launch).

    ros2 launch rynnec_ros replay.launch.py bag:=/data/kitchen_bag checkpoint:=/models/RynnEC-2B device:=cuda
    ros2 launch rynnec_ros replay.launch.py bag:=/data/bag camera:=/camera/camera depth:=depth/image_rect_raw

Starts the node (rynnec.launch.py, with use_sim_time) and the package's rclpy bag player, which
publishes the bag at its recorded rate, with its recorded QoS and /clock; ``ros2 bag play --clock``
works the same way. Topics left unset are read from the bag: its colour ``Image`` topic, its depth
topic (``aligned_depth_to_color`` preferred) and the ``CameraInfo`` beside the colour; a bag where that
is ambiguous, or a topic the bag does not hold, stops the launch with the bag's topics and the argument
to set. ``camera:=NS`` instead takes realsense-ros' relative names under the driver namespace NS
(``color/image_raw``, ``aligned_depth_to_color/image_raw``, ``color/camera_info``).

A local bag can be delivered completely, so the camera subscriptions default to reliable with a deep
queue here (``qos_reliability``, ``qos_depth``) unless the command line or ``params_file`` sets them. The
player waits for the node's subscriptions before the first message and for every reliable message to be
acknowledged before it exits; the node's timers run on the steady clock, so its /diagnostics and request
time-outs go on after /clock stops.
"""

from launch import LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

from rynnec_ros.ros.launch_params import UNSET, bag_camera_topics, file_parameters, with_defaults
from rynnec_ros.ros.replay import bag_topics

# Node parameters forwarded unchanged to rynnec.launch.py (unset: the params file's value).
_FORWARDED = ("checkpoint", "device", "dtype", "backend", "onnx_dir", "engine_dir", "color_transport",
              "qos_reliability", "qos_depth", "world_frame")
# This launch file's own values for those, used only where neither the command line nor params_file
# sets them: a local bag is replayed reliably, a queue of 30 rides out a busy node, and poses come from
# the bag's /tf in odom (what gen-scene and most robots record).
_REPLAY_DEFAULTS = {"qos_reliability": "reliable", "qos_depth": "30", "world_frame": "odom"}


def _node_and_player(context: LaunchContext) -> list:
    def arg(name: str) -> str:
        return LaunchConfiguration(name).perform(context)

    bag = arg("bag")
    in_bag = bag_topics(bag)  # a path that is not a bag directory stops here, saying what was expected
    topics = bag_camera_topics(in_bag, arg("camera"), arg("color"), arg("depth"), arg("camera_info"))
    params_file = arg("params_file")
    in_file = file_parameters(params_file)
    forwarded = with_defaults(in_file, {n: arg(n) for n in _FORWARDED}, _REPLAY_DEFAULTS)
    node = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(
            PathJoinSubstitution([FindPackageShare("rynnec_ros"), "launch", "rynnec.launch.py"])
        ),
        launch_arguments={
            **forwarded,
            "params_file": params_file,
            "color_topic": topics["color"],
            "depth_topic": topics["depth"],
            "camera_info_topic": topics["camera_info"],
            "use_sim_time": "true",
        }.items(),
    )
    wait_for = [t for t in topics.values() if t]
    world_frame = forwarded["world_frame"]
    if world_frame == UNSET:  # with_defaults left it: the file sets it
        world_frame = str(in_file["world_frame"])
    if world_frame and "/tf" in in_bag:
        wait_for.append("/tf")
    player = Node(
        package="rynnec_ros",
        executable="rynnec_replay",
        name="rynnec_replay",
        output="screen",
        arguments=[bag, "--rate", arg("rate"), "--clock", "--wait-for", *wait_for],
    )
    return [node, player]


def generate_launch_description() -> LaunchDescription:
    args = [
        DeclareLaunchArgument("bag", description="rosbag2 directory (MCAP or sqlite3)"),
        DeclareLaunchArgument("rate", default_value="1.0"),
        # Empty: the node's declared defaults (those of config/rynnec.yaml) with this file's replay defaults.
        DeclareLaunchArgument("params_file", default_value="",
                              description="parameter YAML; empty: the node's defaults"),
        DeclareLaunchArgument("camera", default_value="",
                              description="camera driver namespace (realsense-ros >= 4.54: /camera/camera); "
                              "empty: topics read from the bag"),
        DeclareLaunchArgument("color", default_value="", description="colour topic (relative to camera); "
                              "empty: the bag's"),
        DeclareLaunchArgument("depth", default_value="",
                              description="depth registered to colour (relative to camera); "
                              "empty: the bag's; none: no depth"),
        DeclareLaunchArgument("camera_info", default_value="",
                              description="relative to camera; empty: the bag's"),
        *[DeclareLaunchArgument(name, default_value=UNSET,
                                description="unset: params_file's value"
                                + (f", else {_REPLAY_DEFAULTS[name]}" if name in _REPLAY_DEFAULTS else ""))
          for name in _FORWARDED],
    ]
    return LaunchDescription([*args, OpaqueFunction(function=_node_and_player)])
