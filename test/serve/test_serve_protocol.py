"""The robot/server wire format without a server: masks, requests, answers, and the bind rule."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from rynnec_ros.core import wire
from rynnec_ros.core.types import Answer, Frame, Region, Request


def test_request_travels_as_keys_and_rle_masks() -> None:
    frames = [Frame(rgb=np.zeros((4, 5, 3), np.uint8)) for _ in range(3)]
    m = np.zeros((4, 5), bool)
    m[1:3, 2:4] = True
    per_frame = Region(7, [None, m, None])  # the engine's per-frame form
    req = Request(question="<video>\n<object0>?", frames=frames, regions=[per_frame], options=["a"], task="t")
    body = wire.encode_request("answer", req, ["k0", "k1", "k2"], stream=True)
    assert len(body) < 1000  # keys, not pixels
    doc = wire.decode_request(body)
    assert doc["keys"] == ["k0", "k1", "k2"] and doc["stream"] and doc["options"] == ["a"]
    (region,) = wire.regions_from_wire(doc["regions"])
    assert region.object_id == 7 and list(region.masks) == [1]
    assert np.array_equal(region.masks[1], m)


@pytest.mark.parametrize(
    "doc",
    [
        b"[]",
        b'{"op": "rm -rf"}',
        b'{"op": "answer", "question": 1}',
        b'{"op": "answer", "question": "q", "keys": [], "max_new_tokens": 4}',
    ],
)
def test_server_rejects_malformed_requests(doc: bytes) -> None:
    with pytest.raises(ValueError):
        wire.decode_request(doc)


def test_answer_round_trips_with_masks() -> None:
    m = np.eye(4, dtype=bool)
    ans = Answer(text="x", token_ids=[1, 2], masks=[m, None], mask_scores=[0.5, 0.1], value=2.0, unit="m")
    back = wire.decode_answer(wire.encode_answer(ans))
    assert back.text == "x" and back.token_ids == [1, 2] and back.value == 2.0 and back.masks[1] is None
    assert np.array_equal(back.masks[0], m)


def test_the_token_comes_from_a_file_or_the_environment(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("RYNNEC_SERVER_TOKEN", "from-env")
    assert wire.read_token() == ("from-env", "")
    assert wire.read_token("", "OTHER_UNSET_VARIABLE_X") == ("", "")
    path = tmp_path / "site.token"
    path.write_text("from-file\n")
    path.chmod(0o600)
    assert wire.read_token(str(path)) == ("from-file", "")
    path.chmod(0o640)  # group-readable: used, with ssh's kind of warning, never the token in it
    token, warning = wire.read_token(str(path))
    assert token == "from-file" and "mode 640" in warning and "from-file" not in warning
    with pytest.raises(ValueError, match=r"cannot read the token file .*missing"):
        wire.read_token(str(tmp_path / "missing"))


def test_off_loopback_needs_a_token() -> None:
    wire.check_bind("127.0.0.1", "")
    wire.check_bind("::1", "")
    wire.check_bind("0.0.0.0", "secret")
    with pytest.raises(ValueError, match="--token"):
        wire.check_bind("0.0.0.0", "")
    out = subprocess.run(
        [sys.executable, "-m", "rynnec_ros.cli", "serve", "--checkpoint", "x", "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "--token" in out.stderr


def test_serve_and_bench_serve_are_commands() -> None:
    from rynnec_ros.cli import build_parser

    args = build_parser().parse_args(["serve", "--checkpoint", "ck", "--port", "9001"])
    assert args.host == "127.0.0.1" and args.port == 9001 and args.token == ""
    assert build_parser().parse_args(["bench", "serve", "--out", "r.json"]).robots == "1,2,4,8"
