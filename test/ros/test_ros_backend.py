"""The node's ``backend`` parameter: the onnxruntime node answers as the torch engine does in-process.

The tiny upstream-format checkpoint is exported to ONNX once; a node in its own process runs it with
backend:=onnxruntime and is asked the backend tests' region question (b1) and segmentation (a1) over
ROS. The answers must equal what the torch engine gives for the same frames in this process: the same
text (greedy token ids decode to it) and the same mask RLE per frame. A second node shows that a bad
backend combination fails configure with the reason and leaves a node that configures with torch.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rynnec_ros.core.types import Frame, Request

from ..model.conftest import CHECKPOINT, Case

pytestmark = pytest.mark.ros
T0 = 20 * 10**9
NEW_TOKENS = 12  # the fixture cases' max_new_tokens


def _case(name: str) -> tuple[dict, list[np.ndarray], list[np.ndarray] | None]:
    case = Case(name)
    return case.meta, case.frames, case.masks


@pytest.fixture(scope="module")
def onnx_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from rynnec_ros.model.export.onnx_export import export_onnx

    out = tmp_path_factory.mktemp("onnx-tiny")
    export_onnx(CHECKPOINT, out)
    return out


@pytest.fixture(scope="module")
def ort_node(node_factory, onnx_dir):
    proc = node_factory(
        {
            "checkpoint": str(CHECKPOINT),
            "backend": "onnxruntime",
            "onnx_dir": str(onnx_dir),
            "qos_reliability": "reliable",
            "qos_depth": 20,
            "ingest_fps": 0.0,
            "sample_fps": 0.0,
            "max_new_tokens": NEW_TOKENS,
            "spatial_source": "model",
            "publish_overlay": False,
        },
        name="rynnec_ort",
    )
    yield proc
    assert proc.alive(), proc.output()


@pytest.fixture(scope="module")
def torch_engine():
    import torch

    from rynnec_ros.model.backends import load_engine

    torch.set_num_threads(2)
    return load_engine(CHECKPOINT, backend="torch")


@pytest.fixture(scope="module")
def ort_client(ort_node):
    from rynnec_ros.ros.client import CognitionClient

    with CognitionClient(node_name="rynnec_ort", client_name="test_backend_client") as c:
        assert c.wait_for_node(90.0), ort_node.output()
        yield c


@pytest.fixture(scope="module")
def stamps(ort_client) -> list[int]:
    _, frames, _ = _case("a1_video_qa_224x168")  # b1 has the same three frames
    s = [T0 + i * 10**9 for i in range(len(frames))]
    ort_client.publish_frames(frames, s)
    assert ort_client.wait_for_frames(s, 15.0), ort_client.buffered_stamps()
    return s


def test_onnxruntime_node_logs_backend_and_providers(ort_client, ort_node) -> None:
    log = ort_node.output()
    assert "on backend onnxruntime" in log, log
    # Every one of the nine graphs is listed under the provider ONNX Runtime really gave it.
    line = next(x for x in log.splitlines() if "on backend onnxruntime" in x)
    assert "CPUExecutionProvider: " in line and "CUDAExecutionProvider" not in line
    for graph in ("vision", "llm_prefill", "llm_decode", "lm_head", "sam2_decoder"):
        assert graph in line, line


def test_region_answer_over_ros_equals_torch_in_process(ort_client, stamps, torch_engine) -> None:
    from rynnec_ros.core.types import Region
    from rynnec_ros.ros.convert import stamp_to_ns

    meta, frames, masks = _case("b1_region_qa_224x168")
    assert masks is not None
    regions: dict[int, Region] = {}
    for mask, fi, obj in zip(masks, meta["mask_ids"], meta["mask_object_index"], strict=True):
        regions.setdefault(obj, Region(object_id=obj, masks={})).masks[fi] = mask
    got = ort_client.ask(meta["question"], [regions[k] for k in sorted(regions)], frame_stamps_ns=stamps,
                         max_new_tokens=NEW_TOKENS)
    assert [stamp_to_ns(s) for s in ort_client.last_response.frame_stamps] == stamps
    window = [Frame(rgb=f) for f in frames]
    want = torch_engine.answer(Request(meta["question"], window, [regions[k] for k in sorted(regions)],
                                       max_new_tokens=NEW_TOKENS))
    assert want.token_ids == meta["generated_ids"]  # the torch reference is upstream's answer
    assert got.source == "model"
    assert got.text == want.text and got.text.strip()


def test_segmentation_over_ros_equals_torch_in_process(ort_client, stamps, torch_engine) -> None:
    from rynnec_ros.core import masks as rle_codec

    meta, frames, _ = _case("a1_video_qa_224x168")
    got = ort_client.segment(meta["question"], frame_stamps_ns=stamps, object_id=3)
    res = ort_client.last_response
    want = torch_engine.segment(Request(meta["question"], [Frame(rgb=f) for f in frames],
                                        max_new_tokens=NEW_TOKENS))
    assert want.masks is not None and len(want.masks) == len(frames)
    assert got.text == want.text
    assert len(res.masks) == len(frames)
    for m, w, score in zip(res.masks, want.masks, want.mask_scores or [], strict=True):
        assert w is not None and 0.05 < w.mean() < 0.95  # real SAM2 masks, not empty or full
        rle = rle_codec.encode(w)
        assert list(m.size) == rle["size"]
        assert m.counts == rle["counts"]
        assert m.score == pytest.approx(score, abs=1e-4)


def test_new_image_at_a_seen_stamp_is_not_answered_from_cached_features(
    ort_client, stamps, torch_engine, ort_node
) -> None:
    """The engine caches features per frame key: a clock reset or a re-sent stamp must not reuse them."""
    meta, frames, _ = _case("a1_video_qa_224x168")
    question, t = meta["question"], stamps[-1]

    def ask_at_t() -> str:
        return ort_client.ask(question, frame_stamps_ns=[t], max_new_tokens=NEW_TOKENS).text

    fresh = [torch_engine.answer(Request(question, [Frame(rgb=f)], max_new_tokens=NEW_TOKENS)).text
             for f in frames]
    assert len(set(fresh)) == len(frames)  # the answers tell the three images apart
    assert ask_at_t() == fresh[2]  # frame 2's features are now cached for stamp t
    # Clock reset: stamps far behind (three, so the node believes the jump rather than dropping one
    # outlier) clear the buffer, then another image arrives with stamp t.
    back = t - 10 * 10**9
    new_timeline = [back, back + 10**8, back + 2 * 10**8]
    ort_client.publish_frames([frames[1]] * 3 + [frames[0]], [*new_timeline, t])
    assert ort_client.wait_for_frames([*new_timeline, t], 15.0)
    assert ort_client.buffered_stamps() == [*new_timeline, t]
    assert ask_at_t() == fresh[0]
    # A re-sent stamp with new pixels, no reset: the newer frame replaces the buffered one.
    ort_client.publish_frames([frames[1], frames[2]], [t, t + 10**9])
    assert ort_client.wait_for_frames([t + 10**9], 15.0)
    assert ask_at_t() == fresh[1]
    assert f"colour frame stamp {t} ns is already buffered: replacing" in ort_node.output()


def _lifecycle(client, node_name: str, transition_id: int | None) -> str:
    """Run a transition (None: none) and return the resulting state label, as a lifecycle manager would."""
    from lifecycle_msgs.msg import Transition
    from lifecycle_msgs.srv import ChangeState, GetState

    from rynnec_ros.ros.client import QUERY_RESEND_S

    if transition_id is not None:
        change = client.node.create_client(ChangeState, f"/{node_name}/change_state")
        client._call(change, ChangeState.Request(transition=Transition(id=transition_id)), 90.0)
    get = client.node.create_client(GetState, f"/{node_name}/get_state")
    return client._call(get, GetState.Request(), 10.0, QUERY_RESEND_S).current_state.label


def test_onnxruntime_without_onnx_dir_fails_configure_then_torch_configures(node_factory, onnx_dir) -> None:
    from lifecycle_msgs.msg import Transition

    from rynnec_ros.ros.client import CognitionClient

    name = "rynnec_cfg"
    node = node_factory({"checkpoint": str(CHECKPOINT), "backend": "onnxruntime", "ingest_fps": 0.0,
                         "qos_reliability": "reliable"}, name=name)  # autostart: configure at once
    with CognitionClient(node_name=name, client_name="test_backend_cfg_client") as client:
        assert _lifecycle(client, name, None) == "unconfigured", node.output()
        assert "configure failed: backend onnxruntime needs onnx_dir" in node.output()
        assert node.alive()
        assert client.set_parameters({"backend": "tensorrt"}) == [""]
        assert _lifecycle(client, name, Transition.TRANSITION_CONFIGURE) == "unconfigured"
        assert "backend tensorrt needs engine_dir" in node.output()
        # A provider this onnxruntime build cannot give fails configure instead of falling back to the CPU.
        cuda = {"backend": "onnxruntime", "onnx_dir": str(onnx_dir), "ort_provider": "cuda"}
        assert client.set_parameters(cuda) == ["", "", ""]
        assert _lifecycle(client, name, Transition.TRANSITION_CONFIGURE) == "unconfigured"
        assert "CUDAExecutionProvider is not available" in node.output()
        assert client.set_parameters({"ort_provider": ""}) == [""]
        (bad,) = client.set_parameters({"backend": "openvino"})
        assert "must be one of torch, onnxruntime, tensorrt" in bad
        assert client.set_parameters({"backend": "torch"}) == [""]  # onnx_dir is then ignored
        assert _lifecycle(client, name, Transition.TRANSITION_CONFIGURE) == "inactive"
        assert _lifecycle(client, name, Transition.TRANSITION_ACTIVATE) == "active"
        assert "on backend torch" in node.output()
        stamp = 40 * 10**9  # after the other node's frames: no time jump there
        client.publish_frames([np.full((32, 32, 3), 90, np.uint8)], [stamp])
        assert client.wait_for_frames([stamp], 15.0)
        assert isinstance(client.ask("What colour?", frame_stamps_ns=[stamp], max_new_tokens=2).text, str)
    assert node.alive()


def test_configure_refuses_a_model_that_does_not_fit_the_memory_limit(node_factory, tmp_path) -> None:
    """memory_limit_mb below what the tiny checkpoint needs (its weights, the K/V at max_visual_tokens, the
    buffer and cache limits, the stated allowance): configure fails before loading, naming each part, the
    node stays alive and unconfigured; raised above it (a fake device size), configure succeeds. With int4
    LLM weights the refusal gives the int4 sum, and with kv_cache int8 as well the sum with int8 K/V."""
    from lifecycle_msgs.msg import Transition

    from rynnec_ros.model import budget
    from rynnec_ros.ros.client import CognitionClient

    need = budget.estimate(CHECKPOINT, "float32", 256, 8, 64, 32)
    name = "rynnec_mem"
    node = node_factory({"checkpoint": str(CHECKPOINT), "ingest_fps": 0.0, "qos_reliability": "reliable",
                         "max_visual_tokens": 256, "max_new_tokens": 8, "buffer_max_mb": 64, "cache_mb": 32,
                         "memory_limit_mb": int(need.total_mb) - 1}, name=name)
    with CognitionClient(node_name=name, client_name="test_backend_mem_client") as client:
        assert _lifecycle(client, name, None) == "unconfigured", node.output()
        out = node.output()
        assert f"configure failed: the node would need {need.describe()}, more than the " \
               f"{int(need.total_mb) - 1} MB memory_limit_mb" in out, out[-2000:]
        assert "loaded " not in out  # refused before the engine was built
        assert node.alive()
        assert client.set_parameters({"memory_limit_mb": int(need.total_mb) + 1}) == [""]
        assert _lifecycle(client, name, Transition.TRANSITION_CONFIGURE) == "inactive", node.output()[-2000:]
        assert f"memory budget: {need.describe()}" in node.output()
        # int4 LLM graphs: the check counts their linears as the export stores them, before any graph loads
        need4 = budget.estimate(CHECKPOINT, "float32", 256, 8, 64, 32, weights="int4")
        assert need4.weights_mb < need.weights_mb
        assert _lifecycle(client, name, Transition.TRANSITION_CLEANUP) == "unconfigured"
        int4 = {"backend": "onnxruntime", "onnx_dir": str(tmp_path), "weights": "int4",
                "memory_limit_mb": int(need4.total_mb) - 1}
        assert client.set_parameters(int4) == ["", "", "", ""]
        assert _lifecycle(client, name, Transition.TRANSITION_CONFIGURE) == "unconfigured"
        out = node.output()
        assert f"the node would need {need4.describe()}, more than the " in out, out[-2000:]
        # an int8 K/V cache as well: the K/V term at one byte per element (a quarter of float32's) over
        # the window and the graph's 128 scratch rows (the tiny config's 2 query heads per kv head)
        need8 = budget.estimate(CHECKPOINT, "float32", 256, 8, 64, 32, weights="int4", kv_cache="int8")
        rows = need8.window_tokens
        assert need8.kv_mb * 4 == pytest.approx(need4.kv_mb * (rows + 128) / rows)
        kv8 = {"kv_cache": "int8", "memory_limit_mb": int(need8.total_mb) - 1}
        assert client.set_parameters(kv8) == ["", ""]
        assert _lifecycle(client, name, Transition.TRANSITION_CONFIGURE) == "unconfigured"
        out = node.output()
        assert f"the node would need {need8.describe()}, more than the " in out, out[-2000:]
        assert node.alive()
