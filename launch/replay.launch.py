"""Replay a recorded rosbag2 bag into the cognition node (robots and workstations with launch).

    ros2 launch rynnec_ros replay.launch.py bag:=/data/kitchen_bag checkpoint:=/models/RynnEC-2B device:=cuda
    ros2 launch rynnec_ros replay.launch.py bag:=/data/bag camera:=/camera/camera depth:=depth/image_rect_raw

Starts the node (rynnec.launch.py, with use_sim_time) and the package's rclpy bag player, which
publishes the bag at its recorded rate, with its recorded QoS and /clock; ``ros2 bag play --clock``
works the same way. Topic defaults are those realsense-ros (4.54 and later) records:
``/camera/camera/color/image_raw``, ``/camera/camera/aligned_depth_to_color/image_raw`` (16UC1 mm,
registered to colour) and ``/camera/camera/color/camera_info``; older drivers and other cameras: set
``camera`` (the driver's namespace) and the relative ``color``/``depth``/``camera_info`` names.
"""

from launch import LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

from rynnec_ros.ros.launch_params import UNSET, camera_topics

# Node parameters forwarded unchanged to rynnec.launch.py (unset: the params file's value).
_FORWARDED = ("checkpoint", "device", "dtype", "backend", "onnx_dir", "engine_dir", "color_transport")


def _node_and_player(context: LaunchContext) -> list:
    topics = camera_topics(*(LaunchConfiguration(n).perform(context) for n in ("camera", "color", "depth",
                                                                                  "camera_info")))
    node = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(
            PathJoinSubstitution([FindPackageShare("rynnec_ros"), "launch", "rynnec.launch.py"])
        ),
        launch_arguments={
            **{name: LaunchConfiguration(name) for name in _FORWARDED},
            "params_file": LaunchConfiguration("params_file"),
            "world_frame": LaunchConfiguration("world_frame"),
            "color_topic": topics["color"],
            "depth_topic": topics["depth"],
            "camera_info_topic": topics["camera_info"],
            "use_sim_time": "true",
        }.items(),
    )
    player = Node(
        package="rynnec_ros",
        executable="rynnec_replay",
        name="rynnec_replay",
        output="screen",
        arguments=[LaunchConfiguration("bag"), "--rate", LaunchConfiguration("rate"), "--clock",
                   "--wait-for", topics["color"]],
    )
    return [node, player]


def generate_launch_description() -> LaunchDescription:
    default_params = PathJoinSubstitution([FindPackageShare("rynnec_ros"), "config", "rynnec.yaml"])
    args = [
        DeclareLaunchArgument("bag", description="rosbag2 directory (sqlite3 or MCAP)"),
        DeclareLaunchArgument("rate", default_value="1.0"),
        DeclareLaunchArgument("params_file", default_value=default_params, description="parameter YAML"),
        DeclareLaunchArgument("camera", default_value="/camera/camera",
                              description="camera driver namespace (realsense-ros >= 4.54: /camera/camera)"),
        DeclareLaunchArgument("color", default_value="color/image_raw", description="relative to camera"),
        DeclareLaunchArgument("depth", default_value="aligned_depth_to_color/image_raw",
                              description="depth registered to colour, relative to camera; empty = none"),
        DeclareLaunchArgument("camera_info", default_value="color/camera_info",
                              description="relative to camera"),
        DeclareLaunchArgument("world_frame", default_value="odom",
                              description="fixed frame of the bag's /tf"),
        *[DeclareLaunchArgument(name, default_value=UNSET, description="unset: params_file's value")
          for name in _FORWARDED],
    ]
    return LaunchDescription([*args, OpaqueFunction(function=_node_and_player)])
