"""Black-box attacks on the site server (``rynnec-ros serve``), written from its interfaces only.

What the server is expected to do comes from outside its code: docs/serving.md (two Triton models,
``rynnec_frames`` uploads frames and ``rynnec_ask`` answers by frame key, decoupled and streamed; Triton
checks the access token; SIGTERM shuts Triton down), ``rynnec_ros/core/wire.py`` (tensor names, the JSON
request body, run-length encoded masks, response kinds ``token`` / ``answer`` / ``error`` / ``missing``),
the models' metadata as Triton reports it to any client (``rynnec_frames``: ``keys`` BYTES[-1] and ``rgb``
UINT8[-1, -1, -1, 3] in, ``stored`` INT32[1] out; ``rynnec_ask``: ``request`` BYTES[1] in, ``kind`` and
``body`` BYTES[1] out), and the project's rules: bad input gets a clear error, every accepted request
exactly one answer, and no input takes the service down or leaks the server's internals.

Every attack is one request against a real server on loopback (one per module, shared), followed by
the same valid upload and question that was asked before the first attack: the answer must be identical.
The bounds (10 s for a rejection, +500 MB of resident memory, 20 s to stop) are deliberately generous
so that they hold on any CPU: a rejection is a check of the request, not model work.

Safety net for the shared test machine: each server process gets an address-space limit of its size
at start plus 4 GiB, so a server that does materialise a 10^10-pixel mask fails the memory and message
checks below instead of taking the machine's memory. A correct server never comes near it.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import resource
import signal
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rynnec_ros.core import wire
from rynnec_ros.core.types import Region, Request

from .conftest import ServerProcess

grpcclient = pytest.importorskip("tritonclient.grpc")
from tritonclient.utils import InferenceServerException  # noqa: E402  (after the skip above)

CHECKPOINT = Path(__file__).resolve().parents[1] / "data" / "rynnec-tiny" / "checkpoint"
TOKEN = "attack-site-token"
HEADERS = {wire.GRPC_TOKEN_HEADER: TOKEN}
REJECT_S = 10.0
"""A rejection checks the request; 10 s is far above any CPU's time for that and below a long prefill."""
MEMORY_BOUND = 500 << 20
"""Most extra resident memory (all server processes together) one rejected request may cost."""
STOP_S = 20.0
SAFETY_HEADROOM = 4 << 30
HEALTH_WAIT_S = 120.0
TRACEBACK_MARKERS = ("Traceback", 'File "', '.py"')
FRAME_H, FRAME_W = 48, 64
UPLOAD_MB, STORE_MB = 64, 128
"""The module's server runs with ``--max-upload-mb 64 --store-mb 128`` (docs/serving.md, Limits): the
smallest upload budget robots accept, so the memory attacks below need only tens of MB each."""


# ------------------------------------------------------------------------------------ processes


def session_pids(sid: int) -> list[int]:
    """Every live process of the server's session (serve, tritonserver, backend stubs, helpers)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[3]) == sid and fields[0] != "Z":  # field 6 of proc(5) is the session id
            pids.append(int(entry))
    return pids


def cmdline(pid: int) -> str:
    """What a process runs, for a failure message."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:160]
    except OSError:
        return "?"


def status_kb(pid: int, key: str) -> int:
    """A ``VmXxx`` field of /proc/PID/status in kB (0 once the process is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def limit_address_space(sid: int) -> None:
    """The safety net of the module docstring: size now + 4 GiB per server process."""
    for pid in session_pids(sid):
        limit = status_kb(pid, "VmSize") * 1024 + SAFETY_HEADROOM
        with contextlib.suppress(ProcessLookupError):
            resource.prlimit(pid, resource.RLIMIT_AS, (limit, limit))


class PeakMemory:
    """Peak resident memory of the server's processes during a block, over what they held before.

    psutil is not in the test environment; /proc gives the same numbers (VmRSS, and VmHWM, the peak,
    which writing ``5`` to ``clear_refs`` resets to the current size, proc(5)), and the peak catches
    a transient allocation that a before/after comparison would miss.
    """

    def __init__(self, sid: int) -> None:
        self.sid = sid
        self.before = 0
        self.growth = 0

    def __enter__(self) -> PeakMemory:
        self.pids = session_pids(self.sid)
        for pid in self.pids:
            with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                Path(f"/proc/{pid}/clear_refs").write_text("5")
        self.before = sum(status_kb(pid, "VmRSS") for pid in self.pids) * 1024
        return self

    def __exit__(self, *exc: object) -> None:
        peak = sum(status_kb(pid, "VmHWM") for pid in self.pids) * 1024
        self.growth = peak - self.before


# ------------------------------------------------------------------------------------ the client


def _bytes_input(name: str, values: list[bytes]) -> Any:
    tensor = grpcclient.InferInput(name, [len(values)], "BYTES")
    tensor.set_data_from_numpy(np.array(values, dtype=object))
    return tensor


def _rgb_input(rgb: np.ndarray, shape: list[int] | None = None) -> Any:
    """``rgb`` as sent; ``shape`` overrides the declared shape (the bytes stay those of ``rgb``)."""
    tensor = grpcclient.InferInput("rgb", list(rgb.shape), "UINT8")
    tensor.set_data_from_numpy(rgb)
    if shape is not None:
        tensor.set_shape(shape)
    return tensor


def infer_frames(url: str, inputs: list[Any], token: str = TOKEN) -> int:
    """One ``rynnec_frames`` call from a new client; returns ``stored``."""
    client = grpcclient.InferenceServerClient(url)
    try:
        headers = {wire.GRPC_TOKEN_HEADER: token} if token else None
        result = client.infer(wire.FRAMES_MODEL, inputs, headers=headers)
        return int(result.as_numpy("stored")[0])
    finally:
        client.close()


def upload(url: str, keys: list[str], rgb: np.ndarray, token: str = TOKEN) -> int:
    return infer_frames(url, [_bytes_input("keys", [k.encode() for k in keys]), _rgb_input(rgb)], token)


@dataclass
class AskOutcome:
    """Everything one ``rynnec_ask`` stream returned, in order."""

    tokens: list[str] = field(default_factory=list)
    final: list[tuple[str, str]] = field(default_factory=list)
    """(kind, body) of every non-token response: exactly one for a well-behaved server."""
    triton_error: str | None = None
    timed_out: bool = False
    elapsed: float = 0.0

    def reason(self) -> str:
        """The error text a client sees: Triton's, or the ``error`` response's message."""
        if self.triton_error is not None:
            return self.triton_error
        for kind, body in self.final:
            if kind == "error":
                with contextlib.suppress(ValueError):
                    doc = json.loads(body)
                    if isinstance(doc, dict) and isinstance(doc.get("message"), str):
                        return doc["message"]
                return body
        return ""

    def rejected(self) -> bool:
        """A refusal: Triton's error, or one ``error`` response and nothing else."""
        if self.triton_error is not None:
            return True
        return [k for k, _ in self.final] == ["error"]


def ask(url: str, body: bytes | list[bytes], wait_s: float, token: str = TOKEN) -> AskOutcome:
    """One ``rynnec_ask`` request on its own stream, waited for at most ``wait_s``.

    ``body`` as a list sends that many request elements (a wrong shape). A stream still open after
    ``wait_s`` is cancelled and reported as timed out.
    """
    bodies = body if isinstance(body, list) else [body]
    events: queue.Queue[tuple[Any, Any]] = queue.Queue()
    client = grpcclient.InferenceServerClient(url)
    out = AskOutcome()
    t0 = time.monotonic()
    headers = {wire.GRPC_TOKEN_HEADER: token} if token else None
    client.start_stream(callback=lambda result, error: events.put((result, error)), headers=headers)
    try:
        tensor = _bytes_input("request", bodies)
        with contextlib.suppress(InferenceServerException):
            # tritonclient raises here when the stream has already ended (Triton refuses a bad token as
            # the stream opens); the server's reason is the error its callback received, read below
            client.async_stream_infer(wire.ASK_MODEL, [tensor], enable_empty_final_response=True)
        while True:
            remaining = wait_s - (time.monotonic() - t0)
            try:
                result, error = events.get(timeout=max(remaining, 0.0))
            except queue.Empty:
                out.timed_out = True
                break
            if error is not None:
                out.triton_error = str(error)
                break
            response = result.get_response()
            if response.outputs:
                kind = result.as_numpy("kind")[0].decode()
                text = bytes(result.as_numpy("body")[0]).decode()
                if kind == "token":
                    out.tokens.append(json.loads(text)["text"])
                else:
                    out.final.append((kind, text))
            flag = response.parameters.get("triton_final_response")
            if flag is not None and flag.bool_param:
                break
    finally:
        out.elapsed = time.monotonic() - t0
        client.stop_stream(cancel_requests=out.timed_out)
        client.close()
    return out


def assert_clean(message: str) -> None:
    """An error a client reads names the problem, not the server's source (no Python traceback)."""
    assert message.strip(), "the error says nothing"
    for marker in TRACEBACK_MARKERS:
        assert marker not in message, f"error leaks a traceback ({marker!r}): {message[:2000]}"


# ------------------------------------------------------------------------------------ the site


def health_frames() -> np.ndarray:
    return np.random.default_rng(7).integers(0, 256, (2, FRAME_H, FRAME_W, 3), dtype=np.uint8)


def health_request() -> Request:
    """A region question (RLE mask on frame 1): it exercises upload, masks, decoding and streaming."""
    mask = np.zeros((FRAME_H, FRAME_W), bool)
    mask[10:30, 12:40] = True
    return Request(
        question="<video>\nWhat is <object0> doing?",
        frames=[],
        regions=[Region(0, {1: mask})],
        max_new_tokens=6,
    )


def health_record(url: str) -> dict[str, Any]:
    """Fresh keys, a new client: the upload is real, then the question; what a robot would get."""
    keys = [f"health-{uuid.uuid4().hex}-{i}" for i in range(2)]
    assert upload(url, keys, health_frames()) == 2
    body = wire.encode_request("answer", health_request(), keys, stream=True)
    outcome = ask(url, body, HEALTH_WAIT_S)
    assert outcome.triton_error is None and not outcome.timed_out, outcome
    assert [k for k, _ in outcome.final] == ["answer"], outcome.final
    answer = wire.decode_answer(outcome.final[0][1].encode())
    return {
        "text": answer.text,
        "token_ids": answer.token_ids,
        "object_ids": answer.object_ids,
        "streamed": "".join(outcome.tokens),
    }


class Site:
    """The module's server, its answer to the health request before any attack, and a restart rule.

    An attack that leaves the server busy (a question it did not reject) or dead taints it; the next
    test starts a fresh one, so one failure does not cascade into every later test's health check.
    """

    def __init__(self, log: Path) -> None:
        self.server = ServerProcess(CHECKPOINT, log, TOKEN,
                                    ("--max-upload-mb", str(UPLOAD_MB), "--store-mb", str(STORE_MB)))
        self.tainted = False
        self.start()
        self.baseline = health_record(self.server.url)

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def sid(self) -> int:
        assert self.server.proc is not None
        return self.server.proc.pid

    def start(self) -> None:
        self.server.start()
        limit_address_space(self.sid)

    def ensure_up(self) -> None:
        if self.tainted or self.server.proc is None or self.server.proc.poll() is not None:
            self.server.kill()
            self.start()
            self.tainted = False

    def assert_healthy(self) -> None:
        """Alive, and the same upload + question as before the attack gives the identical answer."""
        self.tainted = True
        assert self.server.proc is not None and self.server.proc.poll() is None, "the server died"
        assert health_record(self.url) == self.baseline
        self.tainted = False


@pytest.fixture(scope="module")
def module_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    if not CHECKPOINT.exists():
        pytest.skip(f"no tiny checkpoint at {CHECKPOINT}")
    site = Site(tmp_path_factory.mktemp("attack") / "server.log")
    yield site
    site.server.stop()


@pytest.fixture
def site(module_site: Site) -> Site:
    module_site.ensure_up()
    return module_site


def ask_body(
    question: str = "<video>\nWhat is <object0> doing?",
    regions: Any = None,
    stream: bool = False,
    keys: list[str] | None = None,
) -> bytes:
    """A request body in the documented shape (wire.encode_request's keys), with arbitrary content."""
    doc = {
        "op": "answer",
        "question": question,
        "keys": keys if keys is not None else ["attack-0", "attack-1"],
        "regions": regions if regions is not None else [],
        "options": None,
        "task": None,
        "max_new_tokens": 6,
        "stream": stream,
    }
    return json.dumps(doc).encode()


def region(rle: dict[str, Any], object_id: int = 0, frame: int = 0) -> dict[str, Any]:
    return {"object_id": object_id, "label": "", "masks": [{"frame": frame, "rle": rle}]}


def attack_frames(site: Site) -> list[str]:
    """The frames the attack questions name, uploaded under their keys (so only the attack is bad)."""
    keys = ["attack-0", "attack-1"]
    assert upload(site.url, keys, health_frames()) == 2
    return keys


def asked(site: Site, body: bytes | list[bytes], wait_s: float = REJECT_S) -> AskOutcome:
    """Send one attack question; a server still busy with it afterwards is restarted by the next test."""
    outcome = ask(site.url, body, wait_s)
    if outcome.timed_out:
        site.tainted = True
    return outcome


# ------------------------------------------------------------------------- 1. frame dimensions


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("rgb", "shape", "keys"),
    [
        pytest.param(np.zeros((1, 4, 4, 3), np.uint8), [1, -4, 4, 3], ["neg"], id="negative-height"),
        pytest.param(np.zeros((1, 0, 0, 3), np.uint8), None, ["zero"], id="zero-height-width"),
        pytest.param(np.zeros((0, 4, 4, 3), np.uint8), None, [], id="zero-frames-no-keys"),
        pytest.param(np.zeros((1, 4, 4, 3), np.uint8), [1, 8, 8, 3], ["short"], id="bytes-short-of-shape"),
        pytest.param(
            np.zeros((1, 4, 4, 3), np.uint8), [1, 100000, 100000, 3], ["huge"], id="absurd-100000x100000"
        ),
        pytest.param(np.zeros((1, 4, 4, 3), np.uint8), None, ["k0", "k1"], id="two-keys-one-frame"),
    ],
)
def test_bad_frame_dimensions_get_a_clear_error(
    site: Site, rgb: np.ndarray, shape: list[int] | None, keys: list[str]
) -> None:
    """A frame upload whose dimensions are impossible (negative, empty, bytes ≠ H×W×3, 3·10^10 bytes
    declared, keys ≠ frames) is refused with an error naming the input, not stored; later uploads
    from another client and the health question work as before (interface: rgb is N×H×W×3 uint8 for
    N keys)."""
    with pytest.raises(InferenceServerException) as err:
        infer_frames(site.url, [_bytes_input("keys", [k.encode() for k in keys]), _rgb_input(rgb, shape)])
    message = str(err.value)
    assert_clean(message)
    assert any(w in message.lower() for w in ("rgb", "frame", "key", "size", "shape")), message
    site.assert_healthy()


# ------------------------------------------------------------------------------ 2. huge RLE masks


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "rle",
    [
        pytest.param({"size": [100000, 100000], "counts": [0, 100000 * 100000]}, id="size-1e10-consistent"),
        pytest.param({"size": [100000, 100000], "counts": [7, 5]}, id="size-1e10-short-counts"),
        pytest.param({"size": [FRAME_H, FRAME_W], "counts": [10**12]}, id="counts-beyond-frame"),
    ],
)
def test_huge_rle_region_is_rejected_quickly_within_memory(site: Site, rle: dict[str, Any]) -> None:
    """A region mask whose RLE declares 10^10 pixels (a 48×64 frame has 3072), or counts that add up
    to 10^12, is refused with a reason about the mask in well under 10 s, and the server's resident
    memory never grows by more than 500 MB meanwhile (a decoded 10^10-pixel mask is 10 GB: the size
    must be checked against the frame before anything is allocated; wire.py: masks are H×W of the
    frame). A MemoryError is not a reason: it means the server tried."""
    keys = attack_frames(site)
    with PeakMemory(site.sid) as mem:
        outcome = asked(site, ask_body(regions=[region(rle)], keys=keys))
    assert not outcome.timed_out, f"no answer in {REJECT_S:g} s"
    assert outcome.rejected(), outcome
    reason = outcome.reason()
    assert_clean(reason)
    assert "mask" in reason.lower() or "rle" in reason.lower(), reason
    assert "memory" not in reason.lower() and "allocate" not in reason.lower(), reason
    assert outcome.elapsed < REJECT_S
    assert mem.growth < MEMORY_BOUND, f"server memory grew by {mem.growth >> 20} MB"
    site.assert_healthy()


# --------------------------------------------------------------------------- 3. huge questions


def long_question(chars: int) -> str:
    """A question of exactly ``chars`` characters of ordinary words (tokenises like real text)."""
    filler = "Is the red cup to the left of the plate on the kitchen table? "
    text = "<video>\n" + filler * (chars // len(filler) + 1)
    return text[:chars]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("chars", [65_536, 262_144])
def test_huge_question_is_rejected_fast(site: Site, chars: int, stream: bool) -> None:
    """Questions of 64 Ki and 256 Ki characters are refused before any model work, with a reason
    about the question, in well under 10 s, without the memory growing by 500 MB (the robot node
    refuses questions over max_question_chars, 4096 by default, docs/ros.md; the site server faces
    every robot of a site and must not spend minutes of prefill on one oversized question)."""
    keys = attack_frames(site)
    with PeakMemory(site.sid) as mem:
        outcome = asked(site, ask_body(question=long_question(chars), stream=stream, keys=keys))
    assert not outcome.timed_out, f"no answer in {REJECT_S:g} s (the server is working on it)"
    assert outcome.rejected(), f"accepted: {outcome.final[:1]}"
    reason = outcome.reason()
    assert_clean(reason)
    assert any(w in reason.lower() for w in ("question", "char", "long")), reason
    assert not outcome.tokens, "tokens streamed for a rejected question"
    assert outcome.elapsed < REJECT_S
    assert mem.growth < MEMORY_BOUND, f"server memory grew by {mem.growth >> 20} MB"
    site.assert_healthy()


# ------------------------------------------------------------------------------ 4. many regions


@pytest.mark.timeout(300)
def test_three_thousand_regions_are_rejected_with_a_reason(site: Site) -> None:
    """3,000 regions in one question (each a valid full-frame mask) are refused with a reason naming
    the regions: no prompt holds 3,000 object tokens sensibly, and the node itself refuses too many
    regions (docs/ros.md, 'too many regions/options')."""
    keys = attack_frames(site)
    full = {"size": [FRAME_H, FRAME_W], "counts": [0, FRAME_H * FRAME_W]}
    regions = [region(full, object_id=i) for i in range(3000)]
    outcome = asked(site, ask_body(question="<video>\nWhat is <object0>?", regions=regions, keys=keys), 60.0)
    assert not outcome.timed_out, "no answer in 60 s"
    assert outcome.rejected(), f"accepted: {outcome.final[0][1][:200] if outcome.final else outcome}"
    reason = outcome.reason()
    assert_clean(reason)
    assert "region" in reason.lower(), reason
    site.assert_healthy()


# ---------------------------------------------------------------------- 5. malformed requests


def _frames_missing_keys() -> list[Any]:
    return [_rgb_input(np.zeros((1, 4, 4, 3), np.uint8))]


def _frames_missing_rgb() -> list[Any]:
    return [_bytes_input("keys", [b"k"])]


def _frames_float_rgb() -> list[Any]:
    rgb = grpcclient.InferInput("rgb", [1, 4, 4, 3], "FP32")
    rgb.set_data_from_numpy(np.zeros((1, 4, 4, 3), np.float32))
    return [_bytes_input("keys", [b"k"]), rgb]


def _frames_int_keys() -> list[Any]:
    keys = grpcclient.InferInput("keys", [1], "INT32")
    keys.set_data_from_numpy(np.array([7], np.int32))
    return [keys, _rgb_input(np.zeros((1, 4, 4, 3), np.uint8))]


def _frames_garbage_key() -> list[Any]:
    return [_bytes_input("keys", [b"\xff\xfe\x00garbage"]), _rgb_input(np.zeros((1, 4, 4, 3), np.uint8))]


def _frames_rank3() -> list[Any]:
    rgb = np.zeros((4, 4, 3), np.uint8)
    tensor = grpcclient.InferInput("rgb", [4, 4, 3], "UINT8")
    tensor.set_data_from_numpy(rgb)
    return [_bytes_input("keys", [b"k"]), tensor]


def _frames_four_channels() -> list[Any]:
    return [_bytes_input("keys", [b"k"]), _rgb_input(np.zeros((1, 4, 4, 4), np.uint8))]


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "build",
    [
        _frames_missing_keys,
        _frames_missing_rgb,
        _frames_float_rgb,
        _frames_int_keys,
        _frames_garbage_key,
        _frames_rank3,
        _frames_four_channels,
    ],
    ids=[
        "missing-keys",
        "missing-rgb",
        "rgb-float32",
        "keys-int32",
        "key-not-utf8",
        "rgb-rank3",
        "rgb-4-channels",
    ],
)
def test_malformed_frame_upload_errors_carry_no_traceback(site: Site, build: Any) -> None:
    """Missing inputs, wrong dtypes, wrong ranks and a key that is not UTF-8 (keys are strings: a
    question names them in JSON, wire.py) are refused; the error names the input, not the server's
    source lines."""
    with pytest.raises(InferenceServerException) as err:
        infer_frames(site.url, build())
    assert_clean(str(err.value))
    site.assert_healthy()


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"\xff\xfe\x00 not utf-8", id="not-utf8"),
        pytest.param(b"{not json", id="not-json"),
        pytest.param(b"[]", id="json-list"),
        pytest.param(b'{"op": "answer", "question": "q", "max_new_tokens": 3}', id="missing-keys"),
        pytest.param(b'{"op": "answer", "question": "q", "keys": [1], "max_new_tokens": 3}', id="keys-int"),
        pytest.param(
            b'{"op": "answer", "question": "q", "keys": ["attack-0"], "max_new_tokens": "3"}',
            id="max-new-tokens-str",
        ),
        pytest.param(ask_body(regions="everything"), id="regions-string"),
        pytest.param(ask_body(regions=[{"label": "x", "masks": []}]), id="region-no-object-id"),
        pytest.param(ask_body(regions=[{"object_id": 0, "masks": [{"frame": 0}]}]), id="mask-no-rle"),
        pytest.param(
            ask_body(regions=[region({"size": [FRAME_H, FRAME_W], "counts": ["a", "b"]})]),
            id="counts-strings",
        ),
        pytest.param(
            ask_body(regions=[region({"size": [FRAME_H, FRAME_W], "counts": [-1, 3073]})]),
            id="counts-negative",
        ),
        pytest.param(ask_body(regions=[region({"size": "big", "counts": [1]})]), id="size-string"),
        pytest.param(
            ask_body(regions=[region({"size": [FRAME_H, FRAME_W], "counts": [0, 3072]}, frame=99)]),
            id="mask-frame-99",
        ),
        pytest.param([b"{}", b"{}"], id="two-request-elements"),
    ],
)
def test_malformed_question_errors_carry_no_traceback(site: Site, body: bytes | list[bytes]) -> None:
    """Bodies that are not the documented JSON (wire.decode_request's checks and the region/RLE
    shape of wire.encode_request) get exactly one error, whose text has no Python traceback."""
    attack_frames(site)
    outcome = asked(site, body)
    assert not outcome.timed_out, f"no answer in {REJECT_S:g} s"
    assert outcome.rejected(), outcome
    assert_clean(outcome.reason())
    site.assert_healthy()


# ------------------------------------------------------- 6. memory one robot can make the server hold


FULL_HD = (1080, 1920, 3)
FULL_HD_BYTES = 1080 * 1920 * 3  # 6,220,800 bytes a frame


@pytest.mark.timeout(300)
def test_an_upload_over_the_byte_budget_is_refused_and_stores_nothing(site: Site) -> None:
    """docs/serving.md, Limits: one upload carries at most --max-upload-mb of pixels (N·H·W·3 bytes).
    11 Full HD frames are 68,428,800 bytes, over 64 MiB = 67,108,864 (worked by hand): refused with the
    numbers, nothing stored (a question naming one of its keys gets ``missing``)."""
    keys = [f"budget-{i}" for i in range(11)]
    rgb = np.zeros((11, *FULL_HD), np.uint8)
    with PeakMemory(site.sid) as mem, pytest.raises(InferenceServerException) as err:
        upload(site.url, keys, rgb)
    message = str(err.value)
    assert_clean(message)
    assert "68428800 bytes in one upload, more than the limit 67108864" in message, message
    assert mem.growth < MEMORY_BOUND, f"server memory grew by {mem.growth >> 20} MB"
    outcome = ask(site.url, ask_body(keys=keys[:1]), HEALTH_WAIT_S)
    assert [k for k, _ in outcome.final] == ["missing"], outcome
    site.assert_healthy()


@pytest.mark.timeout(300)
def test_a_flood_of_uploads_keeps_only_what_the_store_budget_holds(site: Site) -> None:
    """docs/serving.md, Limits: the server keeps at most --store-mb of uploaded frames, least recently used
    first out. 80 Full HD uploads (498 MB) into a 128 MiB store: floor(134,217,728 / 6,220,800) = 21
    frames fit (worked by hand), so the 21 newest are held and the first 59 answer ``missing``; the
    resident memory of all the server's processes grows by the store's budget and what passing uploads
    cost (Triton's, the stub's and PyTriton's buffers and their allocators: 89 MB measured here over 40
    uploads, so 200 MB are allowed), far below the 498 MB sent."""
    keys = [f"flood-{uuid.uuid4().hex}-{i}" for i in range(80)]
    frame = np.zeros((1, *FULL_HD), np.uint8)
    with PeakMemory(site.sid) as mem:
        for i, k in enumerate(keys):
            frame[0, 0, 0, 0] = i  # distinct frames
            assert upload(site.url, [k], frame) == 1
    held = (STORE_MB << 20) // FULL_HD_BYTES
    assert held == 21
    outcome = ask(site.url, ask_body(keys=[keys[0], keys[58], keys[59], keys[-1]]), HEALTH_WAIT_S)
    assert outcome.final and outcome.final[0][0] == "missing", outcome
    assert json.loads(outcome.final[0][1])["keys"] == [keys[0], keys[58]], outcome
    assert mem.growth < (STORE_MB + 200) << 20, f"server memory grew by {mem.growth >> 20} MB"
    site.assert_healthy()


@pytest.mark.timeout(600)
def test_a_robot_sends_a_window_larger_than_one_upload_in_several(site: Site) -> None:
    """The remote backend (what robots run) splits a window's frames into uploads of at most 64 MiB
    (docs/serving.md), so a server at the smallest --max-upload-mb still answers a question about
    12 Full HD frames (74,649,600 bytes, more than one upload may carry)."""
    from rynnec_ros.core.types import Frame
    from rynnec_ros.model.backends.remote import RemoteEngine

    rng = np.random.default_rng(3)
    frames = [Frame(rgb=rng.integers(0, 256, FULL_HD, dtype=np.uint8), key=f"window-{i}") for i in range(12)]
    robot = RemoteEngine(site.url, token=TOKEN, client_name="robot-window")
    try:
        answer = robot.answer(Request(question="<video>\nWhat do you see?", frames=frames, max_new_tokens=2))
    finally:
        robot.close()
    assert answer.token_ids, answer
    site.assert_healthy()


# ------------------------------------------------------------------------------- 7. SIGTERM


@pytest.mark.timeout(300)
def test_sigterm_stops_the_server_cleanly(server_factory: Any) -> None:
    """SIGTERM after a served question: the process exits within 20 s, every process of its session
    (tritonserver, its stubs) is gone, and the log shows no forced shutdown ('Exit timeout expired':
    Triton gave up waiting for in-flight work) and no C++ abort ('terminate called')
    (docs/serving.md: SIGTERM shuts Triton down)."""
    server: ServerProcess = server_factory(CHECKPOINT, token=TOKEN)
    server.start()
    assert server.proc is not None
    health_record(server.url)
    sid = server.proc.pid
    t0 = time.monotonic()
    os.kill(sid, signal.SIGTERM)
    try:
        code = server.proc.wait(timeout=STOP_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running {STOP_S:g} s after SIGTERM:\n{server.log.read_text()[-3000:]}")
    while session_pids(sid) and time.monotonic() - t0 < STOP_S:
        time.sleep(0.2)
    log = server.log.read_text()
    problems = [f"left running: {pid} {cmdline(pid)}" for pid in session_pids(sid)]
    problems += [
        f"log says {marker!r}" for marker in ("Exit timeout expired", "terminate called") if marker in log
    ]
    if code not in (0, -signal.SIGTERM):
        problems.append(f"exit status {code}")
    assert not problems, "; ".join(problems) + "\n" + log[-3000:]


# ------------------------------------------------------------------------------- 8. the token


def _http_infer(site: Site, token: str | None) -> int:
    """HTTP status of a valid ``rynnec_frames`` upload through Triton's HTTP endpoint (KServe v2 JSON)."""
    doc = {
        "inputs": [
            {"name": "keys", "shape": [1], "datatype": "BYTES", "data": ["http-key"]},
            {"name": "rgb", "shape": [1, 1, 1, 3], "datatype": "UINT8", "data": [1, 2, 3]},
        ]
    }
    url = f"http://127.0.0.1:{site.server.http_port}/v2/models/{wire.FRAMES_MODEL}/infer"
    req = urllib.request.Request(url, data=json.dumps(doc).encode(), method="POST")
    if token is not None:
        req.add_header(wire.TOKEN_HEADER, token)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as err:
        return int(err.code)


@pytest.mark.timeout(300)
def test_wrong_or_missing_token_is_refused_on_every_path(site: Site) -> None:
    """A wrong or missing token is refused by Triton on upload and question, over gRPC and HTTP, and
    a refused upload stores nothing: a question naming its key with the right token gets ``missing``
    (docs/serving.md: Triton rejects inference without the token). test_serve_fleet covers only the
    remote backend failing to connect without a token."""
    frame = np.full((1, FRAME_H, FRAME_W, 3), 9, np.uint8)
    for token in ("wrong-token", ""):
        with pytest.raises(InferenceServerException) as err:
            upload(site.url, ["token-attack"], frame, token=token)
        assert_clean(str(err.value))
        outcome = ask(site.url, ask_body(keys=["token-attack"]), REJECT_S, token=token)
        assert outcome.triton_error is not None and not outcome.final, outcome
        assert _http_infer(site, token or None) in (401, 403)
    assert _http_infer(site, TOKEN) == 200
    outcome = ask(site.url, ask_body(keys=["token-attack"]), HEALTH_WAIT_S)
    assert [k for k, _ in outcome.final] == ["missing"], outcome
    site.assert_healthy()
