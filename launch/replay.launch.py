"""Replay a recorded rosbag2 bag into the cognition node (robots and workstations with launch).

    ros2 launch rynnec_ros replay.launch.py bag:=/data/kitchen_bag checkpoint:=/models/RynnEC-2B

Starts the node (rynnec.launch.py, with use_sim_time) and the package's rclpy bag player, which
publishes the bag at its recorded rate with /clock; ``ros2 bag play --clock`` works the same way.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description() -> LaunchDescription:
    args = [
        DeclareLaunchArgument("bag", description="rosbag2 directory (sqlite3 or MCAP)"),
        DeclareLaunchArgument("rate", default_value="1.0"),
        DeclareLaunchArgument("checkpoint", default_value=""),
        DeclareLaunchArgument("device", default_value="cuda"),
        DeclareLaunchArgument("world_frame", default_value="odom"),
        DeclareLaunchArgument("backend", default_value="torch", description="torch, onnxruntime, tensorrt"),
        DeclareLaunchArgument("onnx_dir", default_value=""),
        DeclareLaunchArgument("engine_dir", default_value=""),
    ]
    node = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(
            PathJoinSubstitution([FindPackageShare("rynnec_ros"), "launch", "rynnec.launch.py"])
        ),
        launch_arguments={
            "checkpoint": LaunchConfiguration("checkpoint"),
            "device": LaunchConfiguration("device"),
            "depth_topic": "/camera/depth/image_raw",
            "camera_info_topic": "/camera/color/camera_info",
            "world_frame": LaunchConfiguration("world_frame"),
            "backend": LaunchConfiguration("backend"),
            "onnx_dir": LaunchConfiguration("onnx_dir"),
            "engine_dir": LaunchConfiguration("engine_dir"),
            "use_sim_time": "true",
        }.items(),
    )
    player = Node(
        package="rynnec_ros",
        executable="rynnec_replay",
        name="rynnec_replay",
        output="screen",
        arguments=[LaunchConfiguration("bag"), "--rate", LaunchConfiguration("rate"), "--clock",
                   "--wait-for", "/camera/color/image_raw", "/tf"],
    )
    return LaunchDescription([*args, node, player])
