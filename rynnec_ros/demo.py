"""The scripted planner of the demo: what a robot's task planner does with the cognition node.

It replays a generated RGB-D scene (gen-scene) into the running node, then asks three things over ROS:
a region question about an object given by its masks, a referring segmentation, and a spatial
question that the node routes to geometry (depth + intrinsics + TF poses). Answers are printed as
JSON and the node's ~/overlay images are saved as PNGs.

Before asking, it checks over ~/list_frames that the node buffered every frame the questions name
(``replay_until_buffered``): a replay can lose frames on the way (the first messages of the player's new
DDS writers while the node's readers are still matching them, a full subscription queue on a loaded
machine), and a question about such a frame would only fail with "not a buffered frame". Lost frames
are sent again by replaying the bag under stamps later than everything the node holds; if they still do
not arrive, the planner stops with the missing stamps and what the node has.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rynnec_ros.core import masks as rle_codec

SPATIAL_TASK_PREFERENCE = ("distance_to_camera", "object_height", "height_from_ground", "center_distance")


def _answer_dict(ans: Any) -> dict[str, Any]:
    return {
        "text": ans.text,
        "value": ans.value,
        "unit": ans.unit,
        "option_index": ans.option_index,
        "source": ans.source,
        "task": ans.task,
        "reading": ans.reading,
        "object_ids": ans.object_ids,
        "reason": ans.reason,
        "timings_s": {k: round(v, 4) for k, v in ans.timings.items()},
    }


def replay_until_buffered(
    client: Any,
    player: Any,
    needed_ns: Sequence[int],
    timeout_s: float = 10.0,
    resends: int = 2,
    log: Callable[[str], None] = print,
) -> int:
    """Replay the bag and make sure the node buffered every frame of ``needed_ns``; returns the offset
    (ns) to add to the bag's stamps: 0 when the first replay arrived whole.

    ``client`` is a ``CognitionClient``, ``player`` a ``BagReplayer`` on the client's node. When
    ``~/list_frames`` still lacks a needed stamp after ``timeout_s``, the bag is replayed again (at most
    ``resends`` times) with every stamp shifted after everything the node holds or was sent, never
    under its own stamps: a re-sent frame more than ``time_jump_back_s`` older than the newest buffered
    one is a jump back that the buffer drops however often it comes. Raises ``FramesNotBuffered``
    (missing stamps, what the node holds) when the last replay is still incomplete.
    """
    from rynnec_ros.ros.client import RESEND_GAP_NS, FramesNotBuffered, describe_stamps

    needed = sorted({int(s) for s in needed_ns})
    offset = 0
    n = player.run()
    for attempt in range(resends + 1):
        if player.acked is False:
            log(f"[planner] not every replayed message was acknowledged by the node (replay {attempt + 1})")
        want = [s + offset for s in needed]
        try:
            client.require_frames(want, timeout_s)
        except FramesNotBuffered as exc:
            if attempt == resends:
                raise FramesNotBuffered(
                    exc.missing, exc.buffered, timeout_s,
                    f" (the bag was replayed {resends + 1} times, {n} messages; the node log says more)"
                ) from None
            lo, hi = player.stamp_range_ns() or (needed[0], needed[-1])
            offset = max([hi + offset, *exc.buffered]) + RESEND_GAP_NS - lo
            log(f"[planner] the node did not buffer {describe_stamps(exc.missing)} within {timeout_s:.0f} s "
                f"(it holds {describe_stamps(exc.buffered)}): replaying the bag again with every stamp "
                f"{offset / 1e9:.1f} s later, after everything it holds")
            n = player.run(stamp_offset_ns=offset)
            continue
        return offset
    raise AssertionError("unreachable")


def run_planner_demo(scene: Path, out: Path, namespace: str, timeout_s: float, untrained: bool) -> int:
    import cv2
    import rclpy  # noqa: F401  (fail early with a clear ImportError when ROS is missing)
    from sensor_msgs.msg import Image

    from rynnec_ros.core.images import image_to_rgb
    from rynnec_ros.core.types import Region
    from rynnec_ros.ros.client import CognitionClient, FramesNotBuffered
    from rynnec_ros.ros.replay import BagReplayer

    out.mkdir(parents=True, exist_ok=True)
    masks_doc = json.loads((scene / "masks.json").read_text())
    questions = json.loads((scene / "questions.json").read_text())["questions"]
    results: dict[str, Any] = {}
    overlays: list[Path] = []
    lock = threading.Lock()

    with CognitionClient(node_namespace=namespace, client_name="rynnec_planner_demo") as client:
        base = f"{namespace.rstrip('/')}/rynnec" if namespace else "/rynnec"
        base = base if base.startswith("/") else "/" + base

        def save_overlay(msg: Image) -> None:
            with lock:
                path = out / f"overlay_{len(overlays):02d}.png"
                cv2.imwrite(str(path), cv2.cvtColor(image_to_rgb(msg), cv2.COLOR_RGB2BGR))
                overlays.append(path)

        client.node.create_subscription(Image, f"{base}/overlay", save_overlay, 10)
        print(f"[planner] waiting for the node's services under {base} ...")
        if not client.wait_for_node(120.0):
            print("[planner] the node did not come up")
            return 1
        # The questions, chosen first: the planner checks that the node buffered their frames.
        # 1. Region question: the first object, by its masks on the frames where it is visible.
        obj = masks_doc["objects"][0]
        stamps = sorted(int(s) for s in obj["masks"])[:3]
        # 3. A spatial question with its objects; the node answers it from geometry when it can.
        by_task = {q["task"]: q for q in reversed(questions) if q["objects"]}
        sq = next((by_task[t] for t in SPATIAL_TASK_PREFERENCE if t in by_task), None)
        frames = [] if sq is None else [int(s) for s in sq["frames"]]

        player = BagReplayer(client.node, scene / "bag", rate=4.0)
        player.wait_for_subscribers(
            ["/camera/color/image_raw", "/camera/depth/image_raw", "/camera/color/camera_info", "/tf"], 30.0
        )
        try:
            offset = replay_until_buffered(client, player, stamps + frames, timeout_s=10.0)
        except FramesNotBuffered as exc:
            print(f"[planner] error: {exc}")
            return 1
        time.sleep(1.0)
        later = f" (under stamps {offset / 1e9:.1f} s later)" if offset else ""
        print(f"[planner] replayed {player.published} messages from {scene / 'bag'}; the node buffered "
              f"every frame the questions name{later}")
        stamps = [s + offset for s in stamps]
        frames = [s + offset for s in frames]

        region = Region(object_id=int(obj["object_id"]), label=obj["label"],
                        masks={i: rle_codec.decode(obj["masks"][str(s - offset)])
                               for i, s in enumerate(stamps)})
        q1 = "What is <object0>? Describe its colour and what it is used for."
        print(f"[planner] region question (streamed over ~/ask_stream): {q1}\n[planner] ", end="")
        a1 = client.ask_stream(q1, lambda piece: print(piece, end="", flush=True), [region],
                               frame_stamps_ns=stamps, timeout_s=timeout_s, wait_frames_s=5.0)
        print()
        results["region_question"] = {"question": q1, "object": obj["label"], **_answer_dict(a1)}

        # 2. Referring segmentation over the buffered window (the last replay's, after a re-send).
        expr = f"the {obj['label']}"
        window = None
        if offset:
            lo, hi = player.stamp_range_ns() or (min(stamps), max(stamps))
            window = (lo + offset, hi + offset)
        a2 = client.segment(expr, timeout_s=timeout_s, object_id=int(obj["object_id"]), window_ns=window)
        per_frame = [None if m is None else int(m.sum()) for m in a2.masks or []]
        results["segmentation"] = {
            "expression": expr, "text": a2.text, "frames": client.last_frame_stamps_ns,
            "mask_pixels": per_frame, "scores": [round(s, 3) for s in a2.mask_scores or []],
        }

        if sq is not None:
            index = {s - offset: i for i, s in enumerate(frames)}
            regions = [
                Region(object_id=int(o["object_id"]), label=o["label"],
                       masks={index[int(s)]: rle_codec.decode(r)
                              for s, r in o["masks"].items() if int(s) in index})
                for o in sq["objects"]
            ]
            a3 = client.ask(sq["question"], regions, options=sq.get("options"), frame_stamps_ns=frames,
                            timeout_s=timeout_s, wait_frames_s=5.0)
            results["spatial_question"] = {
                "question": sq["question"],
                "ground_truth": {"value": sq.get("value"), "unit": sq.get("unit")},
                **_answer_dict(a3),
            }
        time.sleep(1.0)

    (out / "answers.json").write_text(json.dumps(results, indent=2, default=str))
    print(json.dumps(results, indent=2, default=str))
    print(f"[planner] overlay PNGs: {', '.join(str(p) for p in overlays) or 'none received'}")
    print(f"[planner] answers saved to {out / 'answers.json'}")
    if untrained:
        print(
            "[planner] NOTE: the checkpoint is a tiny RANDOM model, so its text answers and masks are "
            "untrained noise; the geometry answer (source=geometry) is real. Set RYNNEC_CHECKPOINT to a "
            "RynnEC-2B/7B directory for meaningful model answers."
        )
    return 0
