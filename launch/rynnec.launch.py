"""Launch the rynnec_ros cognition node on a robot (ROS 2 Humble/Jazzy).

    ros2 launch rynnec_ros rynnec.launch.py checkpoint:=/models/RynnEC-2B namespace:=robot1 \
        color_topic:=/camera/color/image_raw params_file:=/path/to/my_params.yaml
    ros2 launch rynnec_ros rynnec.launch.py checkpoint:=/models/RynnEC-2B backend:=tensorrt \
        engine_dir:=/models/RynnEC-2B-trt dtype:=float16

The node is a lifecycle node; with autostart:=true (default) this file configures it (loads the model)
and activates it (subscribes to the camera) once it is up, so no lifecycle manager is needed.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, EmitEvent, RegisterEventHandler
from launch.conditions import IfCondition
from launch.events import matches_action
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import LifecycleNode
from launch_ros.event_handlers import OnStateTransition
from launch_ros.events.lifecycle import ChangeState
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare
from lifecycle_msgs.msg import Transition


def generate_launch_description() -> LaunchDescription:
    default_params = PathJoinSubstitution([FindPackageShare("rynnec_ros"), "config", "rynnec.yaml"])
    args = [
        DeclareLaunchArgument("namespace", default_value="", description="node namespace"),
        DeclareLaunchArgument("params_file", default_value=default_params, description="parameter YAML"),
        DeclareLaunchArgument("checkpoint", default_value="", description="RynnEC checkpoint directory"),
        DeclareLaunchArgument("device", default_value="cuda", description="cpu, cuda or cuda:N"),
        DeclareLaunchArgument("dtype", default_value="bfloat16", description="float32, float16, bfloat16"),
        DeclareLaunchArgument("backend", default_value="torch", description="torch, onnxruntime, tensorrt"),
        DeclareLaunchArgument("onnx_dir", default_value="", description="ONNX export (backend onnxruntime)"),
        DeclareLaunchArgument("engine_dir", default_value="", description="TensorRT engines (tensorrt)"),
        DeclareLaunchArgument("ort_provider", default_value="", description="cpu, cuda, tensorrt"),
        DeclareLaunchArgument("color_topic", default_value="/camera/color/image_raw"),
        DeclareLaunchArgument("depth_topic", default_value="", description="registered depth; empty = none"),
        DeclareLaunchArgument("camera_info_topic", default_value=""),
        DeclareLaunchArgument("world_frame", default_value="", description="e.g. map or odom; empty = none"),
        DeclareLaunchArgument("use_sim_time", default_value="false"),
        DeclareLaunchArgument("autostart", default_value="true", description="configure + activate"),
    ]
    node = LifecycleNode(
        package="rynnec_ros",
        executable="rynnec_node",
        name="rynnec",
        namespace=LaunchConfiguration("namespace"),
        output="screen",
        parameters=[
            LaunchConfiguration("params_file"),
            {
                "checkpoint": ParameterValue(LaunchConfiguration("checkpoint"), value_type=str),
                "device": ParameterValue(LaunchConfiguration("device"), value_type=str),
                "dtype": ParameterValue(LaunchConfiguration("dtype"), value_type=str),
                "backend": ParameterValue(LaunchConfiguration("backend"), value_type=str),
                "onnx_dir": ParameterValue(LaunchConfiguration("onnx_dir"), value_type=str),
                "engine_dir": ParameterValue(LaunchConfiguration("engine_dir"), value_type=str),
                "ort_provider": ParameterValue(LaunchConfiguration("ort_provider"), value_type=str),
                "color_topic": ParameterValue(LaunchConfiguration("color_topic"), value_type=str),
                "depth_topic": ParameterValue(LaunchConfiguration("depth_topic"), value_type=str),
                "camera_info_topic": ParameterValue(LaunchConfiguration("camera_info_topic"), value_type=str),
                "world_frame": ParameterValue(LaunchConfiguration("world_frame"), value_type=str),
                "use_sim_time": ParameterValue(LaunchConfiguration("use_sim_time"), value_type=bool),
            },
        ],
        # Namespaced robots keep TF under their namespace (the Nav2 convention).
        remappings=[("/tf", "tf"), ("/tf_static", "tf_static")],
    )
    autostart = IfCondition(LaunchConfiguration("autostart"))
    configure = EmitEvent(
        event=ChangeState(
            lifecycle_node_matcher=matches_action(node), transition_id=Transition.TRANSITION_CONFIGURE
        ),
        condition=autostart,
    )
    activate_when_configured = RegisterEventHandler(
        OnStateTransition(
            target_lifecycle_node=node,
            goal_state="inactive",
            entities=[
                EmitEvent(
                    event=ChangeState(
                        lifecycle_node_matcher=matches_action(node),
                        transition_id=Transition.TRANSITION_ACTIVATE,
                    )
                )
            ],
        ),
        condition=autostart,
    )
    return LaunchDescription([*args, node, activate_when_configured, configure])
