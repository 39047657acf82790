"""Launch the rynnec_ros cognition node on a robot (ROS 2 Humble/Jazzy).

    ros2 launch rynnec_ros rynnec.launch.py checkpoint:=/models/RynnEC-2B device:=cuda namespace:=robot1 \
        color_topic:=/camera/camera/color/image_raw params_file:=/path/to/my_params.yaml
    ros2 launch rynnec_ros rynnec.launch.py checkpoint:=/models/RynnEC-2B backend:=tensorrt \
        engine_dir:=/models/RynnEC-2B-trt device:=cuda dtype:=float16

Parameters come from ``params_file`` (default: the package's config/rynnec.yaml); a launch argument
given on the command line overrides that parameter, and one left unset (empty) leaves the file's value
(rynnec_ros/ros/launch_params.py); one given empty (``world_frame:=''``) sets the empty string. The
node is a lifecycle node; with autostart:=true (default) this file configures it (loads the model) and
activates it (subscribes to the camera) once, when it is up, so no lifecycle manager is needed; later
transitions (``ros2 lifecycle set /rynnec deactivate``) are the operator's.
"""

from launch import LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, EmitEvent, OpaqueFunction, RegisterEventHandler
from launch.conditions import IfCondition
from launch.events import matches_action
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import LifecycleNode
from launch_ros.event_handlers import OnStateTransition
from launch_ros.events.lifecycle import ChangeState
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare
from lifecycle_msgs.msg import Transition

from rynnec_ros.ros.launch_params import LAUNCH_PARAMETERS, UNSET, node_parameters


def _node_and_lifecycle(context: LaunchContext) -> list:
    """The node with its parameters resolved now that the launch arguments are known."""
    values = {name: LaunchConfiguration(name).perform(context) for name in LAUNCH_PARAMETERS}
    params = node_parameters(LaunchConfiguration("params_file").perform(context), values)
    # Strings stay strings (a checkpoint named "1" is not an int): launch_ros YAML-parses bare values.
    typed = [
        p if isinstance(p, str)
        else {k: ParameterValue(v, value_type=str) if isinstance(v, str) else v for k, v in p.items()}
        for p in params
    ]
    node = LifecycleNode(
        package="rynnec_ros",
        executable="rynnec_node",
        name="rynnec",
        namespace=LaunchConfiguration("namespace"),
        output="screen",
        parameters=typed,
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
    # Once, after the first configure: without start_state and handle_once the handler also fired on
    # deactivate (active -> deactivating -> inactive) and on every later configure, so an operator's
    # `ros2 lifecycle set /rynnec deactivate` was undone at once.
    activate_when_configured = RegisterEventHandler(
        OnStateTransition(
            target_lifecycle_node=node,
            start_state="configuring",
            goal_state="inactive",
            handle_once=True,
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
    return [node, activate_when_configured, configure]


def generate_launch_description() -> LaunchDescription:
    default_params = PathJoinSubstitution([FindPackageShare("rynnec_ros"), "config", "rynnec.yaml"])
    args = [
        DeclareLaunchArgument("namespace", default_value="", description="node namespace"),
        DeclareLaunchArgument("params_file", default_value=default_params, description="parameter YAML"),
        *[
            DeclareLaunchArgument(name, default_value=UNSET, description=f"{text}; unset: params_file's")
            for name, (_, text) in LAUNCH_PARAMETERS.items()
        ],
        DeclareLaunchArgument("autostart", default_value="true", description="configure + activate"),
    ]
    return LaunchDescription([*args, OpaqueFunction(function=_node_and_lifecycle)])
