"""Lifecycle transitions of the node, driven over its lifecycle services like a lifecycle manager does."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.ros


def _change(client, transition_id: int) -> bool:
    from lifecycle_msgs.msg import Transition
    from lifecycle_msgs.srv import ChangeState

    cli = _lc_client(client, ChangeState, "change_state")
    res = client._call(cli, ChangeState.Request(transition=Transition(id=transition_id)), 60.0)
    return bool(res.success)


def _state(client) -> str:
    from lifecycle_msgs.srv import GetState

    from rynnec_ros.ros.client import QUERY_RESEND_S

    cli = _lc_client(client, GetState, "get_state")
    return client._call(cli, GetState.Request(), 10.0, QUERY_RESEND_S).current_state.label


def _lc_client(client, kind, name: str):
    # Kept on the test's CognitionClient: a service client dies with the node that created it.
    made = client.__dict__.setdefault("_lifecycle_clients", {})
    if name not in made:
        made[name] = client.node.create_client(kind, f"/rynnec/{name}")
        assert made[name].wait_for_service(timeout_sec=30.0)
    return made[name]


def test_lifecycle_configure_activate_deactivate_cleanup_shutdown(
    node_factory, tmp_path, segmenting_checkpoint
) -> None:
    from lifecycle_msgs.msg import Transition
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters

    from rynnec_ros.ros.client import CognitionClient

    missing = tmp_path / "no-such-checkpoint"
    node = node_factory({"checkpoint": str(missing), "qos_reliability": "reliable", "ingest_fps": 0.0},
                        autostart=False)
    with CognitionClient(client_name="test_lifecycle_client") as client:
        assert _state(client) == "unconfigured"
        # A checkpoint that does not exist: configure fails with the reason logged, node stays up.
        assert not _change(client, Transition.TRANSITION_CONFIGURE)
        assert _state(client) == "unconfigured"
        assert "cannot load checkpoint" in node.output()

        setp = client.node.create_client(SetParameters, "/rynnec/set_parameters")
        value = ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=str(segmenting_checkpoint))
        req = SetParameters.Request(parameters=[Parameter(name="checkpoint", value=value)])
        res = client._call(setp, req, 10)
        assert res.results[0].successful

        assert _change(client, Transition.TRANSITION_CONFIGURE)
        assert _state(client) == "inactive"
        assert client.wait_for_node(30.0, active=False)
        with pytest.raises(RuntimeError, match="not active"):
            client.ask("anyone there?")

        assert _change(client, Transition.TRANSITION_ACTIVATE)
        assert _state(client) == "active"
        stamp = 7 * 10**9
        client.publish_frames([np.full((32, 32, 3), 200, np.uint8)], [stamp])
        assert client.wait_for_frames([stamp], 15.0)
        ans = client.ask("What colour?", frame_stamps_ns=[stamp], max_new_tokens=2)
        assert isinstance(ans.text, str)

        assert _change(client, Transition.TRANSITION_DEACTIVATE)
        assert _state(client) == "inactive"
        with pytest.raises(RuntimeError, match="not active"):
            client.ask("still there?")
        assert _change(client, Transition.TRANSITION_CLEANUP)
        assert _state(client) == "unconfigured"
        # Configure again: the engine reloads and the old buffer is gone.
        assert _change(client, Transition.TRANSITION_CONFIGURE)
        assert _change(client, Transition.TRANSITION_ACTIVATE)
        assert client.buffered_stamps() == []
        with pytest.raises(RuntimeError, match="empty"):
            client.ask("anything buffered?")
        assert _change(client, Transition.TRANSITION_ACTIVE_SHUTDOWN)
    # Finalized is the end of a lifecycle node's life: the process exits by itself, cleanly (issue 11).
    assert node.proc.wait(timeout=5) == 0, node.output()
    assert "Traceback" not in node.output()


def test_the_site_token_is_never_a_readable_parameter(node_factory, tmp_path) -> None:
    """Issue 25: any peer on the domain can `ros2 param get /rynnec server_token`. The token comes from
    the file server_token_file names (or server_token_env's variable); setting server_token is refused
    without echoing it, and neither the log nor a parameter ever holds the token."""
    from lifecycle_msgs.msg import Transition
    from rcl_interfaces.srv import GetParameters

    from rynnec_ros.ros.client import CognitionClient

    secret = "s3cret-site-token-8f2c"
    token_file = tmp_path / "site.token"
    params = {"checkpoint": "RynnEC-2B", "backend": "remote", "server_url": "127.0.0.1:9",
              "server_connect_timeout_s": 1.0,
              "server_token_file": str(tmp_path / "missing.token")}
    node = node_factory(params, autostart=False, name="rynnec")
    with CognitionClient(client_name="test_token_client") as client:
        assert not _change(client, Transition.TRANSITION_CONFIGURE)
        assert f"cannot read the token file {tmp_path / 'missing.token'}" in node.output()

        token_file.write_text(secret + "\n")
        token_file.chmod(0o644)
        assert client.set_parameters({"server_token_file": str(token_file)}) == [""]
        assert not _change(client, Transition.TRANSITION_CONFIGURE)  # nothing listens on port 9
        assert "can be read by other users (mode 644)" in node.output()

        (reason,) = client.set_parameters({"server_token": secret})
        assert "must not be set" in reason and secret not in reason
        get = client.node.create_client(GetParameters, "/rynnec/get_parameters")
        values = client._call(get, GetParameters.Request(names=["server_token", "server_token_file"]), 10.0)
        assert [v.string_value for v in values.values] == ["", str(token_file)]
        assert secret not in node.output()
