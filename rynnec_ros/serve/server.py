"""``rynnec-ros serve``: one RynnEC engine behind Triton Inference Server, for all robots of a site.

PyTriton starts the ``tritonserver`` binary it ships and binds two Python models to this process:

* ``rynnec_frames``: robots upload each frame of a window once (raw uint8 pixels under a wire key);
* ``rynnec_ask`` (decoupled): a question about frames by key, answered with streamed ``token``
  responses and a final ``answer`` (or ``error``/``missing``) response; or a cancel of a question in
  flight, answered with one ``cancelled`` response.

Both models share one in-process engine and so its work reuse: vision features per frame key and the
prompt-prefix KV of recent windows survive across requests from one robot. Vision encoding is batched
across robots (docs/serving.md, "What is and is not batched"): PyTriton hands concurrent questions to
``ask`` at once, each in its own worker thread here; ``VisionBatcher`` gathers the questions that
arrive within a few milliseconds of each other and encodes all their uncached frames in shared
vision-tower calls (``RynnEC.encode_windows``). One client (a robot, by the name its requests carry) may
have ``max_client_questions`` questions in flight; more are refused at once, so one robot's burst does
not queue every other robot behind it. Prefill and decode stay one question at a time (the
engine's lock; decoding is single-sequence). Uploads run on their own model and overlap with a question
in progress.

Python 3.11 note: PyTriton runs its model proxy inside Triton's ``triton_python_backend_stub``, which is
linked against ``libpython3.11.so.1.0`` by name and finds the *system* one first (Debian: 3.11.2) while
importing the stdlib of the interpreter that started it (here pyenv 3.11.7). 3.11.7's
``multiprocessing/resource_tracker.py`` calls ``RLock._recursion_count()``, which 3.11.2's C ``RLock``
lacks, hence ``AttributeError: '_thread.RLock' object has no attribute '_recursion_count'``.
``_stub_library_path`` puts this interpreter's own libpython first, which fixes it on any minor version.

Bad input (docs/serving.md, "Limits"): every request is checked before it costs model time or memory,
and every refusal is one line naming the bad input. Uploads are checked inside Triton's Python backend
stub (``guard.py``, installed by ``install_guard``), because PyTriton's proxy fails on zero-size tensors
before this process sees them and turns any error of a non-decoupled model into a Python traceback;
questions are checked here (``wire.decode_request``, then the masks against their frames).

Shutdown: SIGTERM and SIGINT only set an event; the main thread then stops the engine's work in
progress (``should_stop``), and stops Triton (``Triton.stop``: SIGINT to tritonserver, which unloads
both models and waits for their stubs, then PyTriton closes its proxies) and returns, so the process
exits 0 with no tritonserver, backend stub or resource-tracker process left.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import sysconfig
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rynnec_ros.core import wire
from rynnec_ros.core.lru import LRU
from rynnec_ros.core.types import Answer, Cancelled, Frame, Request, RequestError
from rynnec_ros.serve import guard

LOG = logging.getLogger("rynnec_ros.serve")

_DONE = object()
_TURN_POLL_S = 0.05
"""How often a question waiting for the engine checks whether it was cancelled."""
Turn = Callable[[Callable[[], bool]], contextlib.AbstractContextManager[None]]
"""Waits for the engine's turn while watching a ``should_stop`` (raising ``Cancelled``), then holds it."""


EXIT_TIMEOUT_S = 10
"""How long tritonserver waits on SIGINT for in-flight requests and for its models to unload (measured:
about 2 s to unload both models on an idle 2-core machine; work in progress is stopped first)."""
DEFAULT_MAX_REQUEST_S = 300.0
"""Engine time a question may take on the server (``--max-request-s``): a generous bound, not a measured
one; it only has to end a runaway decode so that the other robots get the engine back."""
CANCELLED = "cancelled by the client"
"""The error a question cancelled by its client ends with (docs/serving.md)."""
DEFAULT_MAX_CLIENT_QUESTIONS = 4
"""Questions one client may have in flight (``--max-client-questions``). The engine answers one question
at a time, so more from one robot only queue in front of the others'; the remote backend sends one at a
time per engine, so 4 leaves room for a node's service, action and a planner's retries."""
DEFAULT_STORE_BYTES = 2 << 30
"""Uploaded frames kept, in bytes (``--store-mb``, 2 GiB): all 512 of ``--store-frames`` at 720p, 86
frames of 4K UHD (a 30-frame 4K window each for two robots); the frame count alone would let 4K uploads
hold 12.7 GB."""


def run_request(
    engine: Any,
    op: str,
    request: Request,
    on_token: Callable[[str], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Answer | list[float]:
    """The one place the server calls the engine: the Request/Answer API every backend has."""
    if op == "segment":
        if request.regions:
            raise RequestError("segment takes no regions: the expression names the object")
        seg: Answer = engine.segment(request, on_token=on_token, should_stop=should_stop)
        seg.task = request.task
        return seg
    if op == "score":
        return list(engine.score_options(request, should_stop=should_stop))
    ans: Answer = engine.answer(request, on_token=on_token, should_stop=should_stop)
    ans.task = request.task
    return ans


class FrameStore:
    """Uploaded frames by wire key, least recently used dropped first (robots re-upload on ``missing``).

    Bounded in frames and in bytes: the bytes bound is what the server's memory for frames comes to,
    whatever sizes the robots send (512 frames of 4K UHD would be 12.7 GB)."""

    def __init__(self, capacity: int, max_bytes: int = DEFAULT_STORE_BYTES) -> None:
        if capacity < 1:
            raise ValueError(f"frame store capacity must be >= 1, got {capacity}")
        if max_bytes < 1:
            raise ValueError(f"frame store bytes must be >= 1, got {max_bytes}")
        self.capacity = capacity
        self.max_bytes = max_bytes
        self._frames: LRU[str, np.ndarray] = LRU(capacity)
        self._lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        """Bytes of the frames held (a sum over at most ``capacity`` arrays)."""
        with self._lock:
            return self._held()

    def _held(self) -> int:
        return sum(f.nbytes for f in self._frames.values())

    def put(self, key: str, rgb: np.ndarray) -> None:
        """Store ``rgb`` as the newest frame, then drop the oldest until both bounds hold. A frame larger
        than the whole budget is refused (the upload's check keeps them smaller)."""
        if rgb.nbytes > self.max_bytes:
            raise ValueError(f"a frame of {rgb.nbytes} bytes is larger than the frame store's "
                             f"{self.max_bytes}")
        with self._lock:
            self._frames.put(key, rgb)
            held = self._held()
            while held > self.max_bytes:
                _, dropped = self._frames.popitem(last=False)
                held -= dropped.nbytes

    def get(self, keys: list[str]) -> tuple[list[np.ndarray], list[str]]:
        """The frames for ``keys`` (touched), and the keys the store does not hold."""
        with self._lock:
            missing = [k for k in keys if k not in self._frames]
            if missing:
                return [], missing
            return [self._frames[k] for k in keys if self._frames.touch(k)], []


def _response(kind: str, body: dict[str, Any] | bytes) -> list[dict[str, np.ndarray]]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return [{"kind": np.array([kind.encode()], dtype=object), "body": np.array([data], dtype=object)}]


class VisionBatcher:
    """Encodes together the frames of questions that arrive within ``window_s`` of each other.

    The first question of a round waits ``window_s`` for others (several robots' questions arriving
    together), then one ``engine.encode_windows`` call encodes every uncached frame of the round,
    batched by frame size, and each question of the round finds its features cached. It only moves
    work earlier: a failure here is logged and left to each question's own call, which reports it.
    ``window_s`` 0 turns it off.
    """

    def __init__(self, engine: Any, window_s: float = 0.01, turn: Turn | None = None) -> None:
        self._engine = engine
        self._window_s = window_s
        self._turn: Turn = turn or (lambda _stop: contextlib.nullcontext())
        """Waits for the engine watching a question's ``should_stop`` (``RynnECModels._engine_turn``)."""
        self._lock = threading.Lock()
        self._round: list[list[Frame]] | None = None
        self._done = threading.Event()
        self.rounds = 0  # rounds that encoded something, and how many windows and frames they held
        self.windows = 0
        self.frames = 0

    def encode(self, frames: list[Frame], should_stop: Callable[[], bool] = lambda: False) -> None:
        """Encode ``frames`` with the round's other questions' frames; ``Cancelled`` when ``should_stop``
        turns true while this question waits for the round or, leading it, for the engine."""
        if self._window_s <= 0:
            return
        with self._lock:
            leader = self._round is None
            if leader:
                self._round, self._done = [frames], threading.Event()
            else:
                assert self._round is not None
                self._round.append(frames)
            done = self._done
        if not leader:
            while not done.wait(_TURN_POLL_S):
                if should_stop():
                    raise Cancelled("stopped while waiting for the batch round")
            return
        time.sleep(self._window_s)
        with self._lock:
            windows, self._round = self._round or [], None
        try:
            with self._turn(should_stop):
                encoded = int(self._engine.encode_windows(windows))
            with self._lock:
                if encoded:
                    self.rounds += 1
                    self.windows += len(windows)
                    self.frames += encoded
        except Cancelled:  # the leader was cancelled: the others encode their own frames
            raise
        except Exception:  # the questions' own calls see the same input and answer with the reason
            LOG.warning("batched vision encoding failed; each question encodes its own frames", exc_info=True)
        finally:
            done.set()


@dataclass
class _Flight:
    """A question in flight: whose it is, its id, and what stops it."""

    client: str
    id: str
    stop: threading.Event = field(default_factory=threading.Event)
    reason: str = ""
    """Why ``stop`` was set by a request (a cancel), for the question's error; '' otherwise."""


class RynnECModels:
    """The two Triton models' inference functions over one engine and one frame store."""

    def __init__(
        self,
        engine: Any,
        store: FrameStore,
        batch_window_s: float = 0.01,
        max_image_pixels: int = wire.MAX_IMAGE_PIXELS,
        max_request_s: float = DEFAULT_MAX_REQUEST_S,
        max_client_questions: int = DEFAULT_MAX_CLIENT_QUESTIONS,
        max_upload_bytes: int = wire.MAX_UPLOAD_BYTES,
    ) -> None:
        smallest = max(wire.UPLOAD_CHUNK_BYTES, 3 * int(max_image_pixels))
        if max_upload_bytes < smallest:
            raise ValueError(f"max_upload_bytes must be >= {smallest} (what a robot sends in one upload: "
                             f"{wire.UPLOAD_CHUNK_BYTES} bytes, or one frame of max_image_pixels), "
                             f"got {max_upload_bytes}")
        if store.max_bytes < max_upload_bytes:
            raise ValueError(f"the frame store ({store.max_bytes} bytes) must hold one whole upload "
                             f"({max_upload_bytes} bytes)")
        if not max_request_s > 0:
            raise ValueError(f"max_request_s must be > 0, got {max_request_s}")
        if max_client_questions < 1:
            raise ValueError(f"max_client_questions must be >= 1, got {max_client_questions}")
        self.engine = engine
        self.store = store
        self._turn = threading.Lock()
        """Held by the question the engine works on (see ``_engine_turn``)."""
        self.batcher = VisionBatcher(engine, batch_window_s, self._engine_turn)
        self.max_image_pixels = int(max_image_pixels)
        self.max_upload_bytes = int(max_upload_bytes)
        """Pixel bytes one frame upload may carry: the memory one request can make the server hold."""
        self.max_request_s = float(max_request_s)
        """Engine time one question may take: past it the decode stops and the robot gets an error."""
        self.max_client_questions = int(max_client_questions)
        """Questions one client may have in flight (running or waiting for the engine) at once."""
        self.stopping = threading.Event()
        """Set on shutdown: work in progress stops at its next check, new questions are refused."""
        self._flights: list[_Flight] = []
        self._flights_lock = threading.Lock()

    def guard_limits(self) -> dict[str, int]:
        """What ``guard.check_upload`` enforces, here and in the Triton stub (``rynnec_guard.json``)."""
        return {
            "max_pixels": self.max_image_pixels,
            "max_frames": wire.MAX_FRAMES,
            "max_key_chars": wire.MAX_KEY_CHARS,
            "max_upload_bytes": self.max_upload_bytes,
        }

    def upload(self, requests: list[Any]) -> list[dict[str, np.ndarray]]:
        """Store each request's frames under its keys; the stub's guard has refused bad uploads already
        (the same ``check_upload`` runs again here, in case this runs without the guard)."""
        lim = self.guard_limits()
        checked = []
        for r in requests:
            names = set(r.keys())  # a PyTriton Request: a mapping without .get
            reason = guard.check_upload(
                r["keys"] if "keys" in names else None,
                r["rgb"] if "rgb" in names else None,
                lim["max_pixels"],
                lim["max_frames"],
                lim["max_key_chars"],
                lim["max_upload_bytes"],
            )
            if reason is not None:
                raise RequestError(reason)
            keys = [bytes(k).decode("utf-8") for k in np.asarray(r["keys"], dtype=object).ravel()]
            checked.append((keys, r["rgb"]))
        out = []
        for keys, rgb in checked:  # nothing is stored unless every request of the call is good
            for k, f in zip(keys, rgb, strict=True):
                # a copy: PyTriton hands inputs over in shared memory it reuses once this call returns
                self.store.put(k, np.array(f, copy=True))
            out.append({"stored": np.array([len(keys)], dtype=np.int32)})
        return out

    async def ask(self, requests: list[Any]) -> AsyncIterator[list[dict[str, np.ndarray]]]:
        """Each request (batching disabled): stream its tokens, then its answer; or answer a cancel.

        An async generator, so that PyTriton's event loop (one per model, shared by every request in
        flight) is never blocked: PyTriton iterates a plain generator inside that loop, and a question
        waiting there for the engine held back every other robot's tokens, refusals and cancels until
        the question in progress ended (measured: a malformed request refused in 19 ms alone took
        1.1 s behind a second question waiting on a 3,000-token decode)."""
        for r in requests:
            try:
                element = np.asarray(r["request"], dtype=object).ravel()
                if element.shape != (1,) or not isinstance(element[0], (bytes, np.bytes_)):
                    raise RequestError(f"input 'request' must be one BYTES element, got {element.shape[0]}")
                body = bytes(element[0])
            except (KeyError, ValueError) as exc:
                yield _response("error", {"type": "ValueError", "message": f"bad request: {exc}"})
                continue
            async for response in self._ask_one(body):
                yield response

    async def _ask_one(self, body: bytes) -> AsyncIterator[list[dict[str, np.ndarray]]]:
        if self.stopping.is_set():
            yield _response("error", {"type": "RuntimeError", "message": "the server is shutting down"})
            return
        # decoding a body (up to MAX_REQUEST_BYTES of JSON and MAX_MASK_PIXELS of masks) runs off the loop
        kind, out = await asyncio.to_thread(self._read, body)
        if kind != "request":
            yield _response(kind, out)
            return
        doc, request = out
        client, qid = str(doc.get("client", "")), str(doc.get("id", ""))
        flight, refusal = self._admit(client, qid)
        if flight is None:
            yield _response("error", {"type": "RuntimeError", "message": refusal})
            return
        async for response in self._run(doc["op"], request, bool(doc.get("stream")), flight):
            yield response

    def _read(self, body: bytes) -> tuple[str, Any]:
        """``("request", (doc, Request))``, a cancel's reply, or the ``error``/``missing`` response."""
        try:
            doc = wire.decode_request(body)
            if doc["op"] == wire.CANCEL_OP:
                found = self._cancel(str(doc.get("client", "")), doc["id"])
                return "cancelled", {"id": doc["id"], "found": found}
            rgbs, missing = self.store.get(doc["keys"])
            if missing:
                return "missing", {"keys": missing}
            regions = wire.regions_from_wire(doc.get("regions"), [f.shape[:2] for f in rgbs], None)
            for k, region in enumerate(regions):
                for i, mask in region.frame_masks(len(rgbs)).items():
                    if not mask.any():
                        raise RequestError(f"region {k} mask on frame {i} is empty")
            request = Request(
                question=doc["question"],
                frames=[Frame(rgb=f, key=k) for f, k in zip(rgbs, doc["keys"], strict=True)],
                regions=regions,
                options=doc.get("options"),
                task=doc.get("task"),
                max_new_tokens=doc["max_new_tokens"],
            )
        except RequestError as exc:
            return "error", {"type": "ValueError", "message": f"bad request: {exc}"}
        except Exception as exc:  # never a traceback to the client; the log has it
            LOG.exception("could not read a request")
            return "error", {"type": "ValueError", "message": f"bad request: {type(exc).__name__}"}
        return "request", (doc, request)

    def _admit(self, client: str, qid: str) -> tuple[_Flight | None, str]:
        """Register a question in flight, or say why not: the client is at its limit, or reuses an id.
        A question counts against its client until its worker thread ends, just before its final
        response, so a client that has its answer (or its cancel's error) may ask again."""
        with self._flights_lock:
            mine = [f for f in self._flights if f.client == client]
            if qid and any(f.id == qid and not f.stop.is_set() for f in mine):
                return None, f"bad request: question id {qid!r} is already in flight for this client"
            if len(mine) >= self.max_client_questions:
                who = f"client {client!r}" if client else "a client that sends no name"
                return None, (
                    f"{who} already has {len(mine)} questions in flight, the server's limit "
                    f"(--max-client-questions {self.max_client_questions}); ask again once one is answered"
                )
            flight = _Flight(client, qid)
            self._flights.append(flight)
            return flight, ""

    @contextlib.contextmanager
    def _engine_turn(self, should_stop: Callable[[], bool]) -> Iterator[None]:
        """Wait for the engine (one question at a time) while watching ``should_stop``: a question
        cancelled while it waits leaves the queue within ``_TURN_POLL_S`` instead of when the question
        in progress ends (the engine's own lock cannot be left while waiting)."""
        while not self._turn.acquire(timeout=_TURN_POLL_S):
            if should_stop():
                raise Cancelled("stopped while waiting for the engine")
        try:
            if should_stop():
                raise Cancelled("stopped before the engine")
            yield
        finally:
            self._turn.release()

    def _release(self, flight: _Flight) -> None:
        with self._flights_lock:
            self._flights.remove(flight)

    def _cancel(self, client: str, qid: str) -> bool:
        """Stop ``client``'s question ``qid`` and end its stream; whether it was still unanswered and not
        stopped (ids are the client's own)."""
        with self._flights_lock:
            found = [f for f in self._flights if f.client == client and f.id == qid and not f.stop.is_set()]
            for f in found:
                f.reason = CANCELLED
                f.stop.set()
        return bool(found)

    async def _run(
        self, op: str, request: Request, stream: bool, flight: _Flight
    ) -> AsyncIterator[list[dict[str, np.ndarray]]]:
        """Run the engine in a worker thread and yield its tokens as they come, without blocking the loop.

        The engine stops at its next ``should_stop`` check when the server shuts down, when the question
        has run ``max_request_s``, when its client cancels it (``wire.CANCEL_OP``), or when this
        generator is closed before the answer (PyTriton cancels its task on shutdown or when a response
        cannot be sent): a decode left running would hold the engine, one question at a time, from every
        other robot until its ``max_new_tokens``.
        """
        loop = asyncio.get_running_loop()
        events: asyncio.Queue[Any] = asyncio.Queue()

        def put(item: Any) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is gone: PyTriton is shutting down
                loop.call_soon_threadsafe(events.put_nowait, item)

        on_token = (lambda text: put(("token", text))) if stream and op != "score" else None
        deadline = time.monotonic() + self.max_request_s

        def should_stop() -> bool:
            return self.stopping.is_set() or flight.stop.is_set() or time.monotonic() > deadline

        def outcome() -> tuple[str, Any]:
            try:
                self.batcher.encode(list(request.frames or []), should_stop)
                with self._engine_turn(should_stop):
                    result = run_request(self.engine, op, request, on_token, should_stop)
                if isinstance(result, Answer):
                    return "answer", wire.encode_answer(result)
                return "scores", {"scores": [float(s) for s in result]}
            except Cancelled:
                limit = f"the question ran past the server's {self.max_request_s:g} s limit (--max-request-s)"
                why = "the server is shutting down" if self.stopping.is_set() else flight.reason or limit
                return "error", {"type": "RuntimeError", "message": why}
            except RequestError as exc:
                return "error", {"type": "ValueError", "message": str(exc)}
            except Exception as exc:  # reported to the robot, logged here
                LOG.exception("engine failed")
                return "error", {"type": "RuntimeError", "message": f"{type(exc).__name__}: {exc}"}

        def work() -> None:
            final = outcome()
            self._release(flight)  # before the final response: a client that has it may ask again
            put(final)
            put(_DONE)

        threading.Thread(target=work, name="rynnec-engine", daemon=True).start()
        try:
            while (item := await events.get()) is not _DONE:
                kind, body = item
                yield _response(kind, {"text": body} if kind == "token" else body)
        finally:
            flight.stop.set()  # closed early (GeneratorExit, task cancelled): stop the decode; else a no-op


def install_guard(model_store: Path, limits: dict[str, int]) -> None:
    """Put ``guard.py`` in front of PyTriton's proxy in both models' generated directories.

    With a local model store ``Triton.bind`` writes each model as ``<store>/<name>/1/{model.py, data.py,
    ...}`` (PyTriton 0.7's ``Model.generate_model``); tritonserver loads them when ``Triton.run`` starts
    it. The proxy's ``model.py`` becomes ``pytriton_proxy.py`` and the guard, which extends it, becomes
    ``model.py``."""
    source = Path(guard.__file__).read_text(encoding="utf-8")
    for name in (wire.FRAMES_MODEL, wire.ASK_MODEL):
        version = model_store / name / "1"
        proxy = version / "model.py"
        if not proxy.is_file() or (version / f"{guard.PROXY_MODULE}.py").exists():
            raise RuntimeError(f"PyTriton did not generate {proxy} as 0.7 does; cannot install the guard")
        proxy.rename(version / f"{guard.PROXY_MODULE}.py")
        (version / "model.py").write_text(source, encoding="utf-8")
        (version / guard.LIMITS_FILE).write_text(json.dumps(limits), encoding="utf-8")


def _stub_library_path() -> str:
    """LD_LIBRARY_PATH for tritonserver: this interpreter's libpython first, then PyTriton's bundled libs.

    See the module docstring (``RLock._recursion_count``). PyTriton only finds its bundled libraries
    itself when installed in a site-packages directory, hence the explicit path.
    """
    import pytriton

    libs = Path(pytriton.__file__).resolve().parent.parent / "nvidia_pytriton.libs"
    parts = [sysconfig.get_config_var("LIBDIR") or "", str(libs), os.environ.get("LD_LIBRARY_PATH", "")]
    return ":".join(p for p in parts if p)


def warm_up(engine: Any) -> None:
    """One tiny question: the first request of a fresh engine pays one-off costs (weights paged in,
    kernels initialised) that would otherwise land on whichever robot asks first."""
    warm = Frame(rgb=np.zeros((64, 64, 3), np.uint8), key=("serve", "warm-up"))
    run_request(engine, "answer", Request(question="<video>\nwarm-up", frames=[warm], max_new_tokens=2))


def serve(
    engine: Any,
    host: str = "127.0.0.1",
    port: int = wire.DEFAULT_PORT,
    http_port: int = wire.DEFAULT_PORT - 1,
    token: str = "",
    store_frames: int = 512,
    store_bytes: int = DEFAULT_STORE_BYTES,
    ready: Callable[[], None] | None = None,
    batch_window_s: float = 0.01,
    max_image_pixels: int = wire.MAX_IMAGE_PIXELS,
    max_request_s: float = DEFAULT_MAX_REQUEST_S,
    max_client_questions: int = DEFAULT_MAX_CLIENT_QUESTIONS,
    max_upload_bytes: int = wire.MAX_UPLOAD_BYTES,
) -> int:
    """Host ``engine`` on Triton until SIGINT/SIGTERM; ``ready`` runs once the models are loaded.

    ``batch_window_s``: how long the first of several concurrent questions waits for the others before
    their frames are encoded together (``VisionBatcher``); 0 = no cross-robot batching.
    ``max_image_pixels``: the most pixels (H×W) of an uploaded frame. ``max_request_s``: the engine time
    one question may take. ``max_client_questions``: the questions one client may have in flight.
    ``store_frames``/``store_bytes``: the uploaded frames kept; ``max_upload_bytes``: the pixel bytes of one
    upload. Returns the exit status: 0 after a signal, 1 when Triton stopped by itself.
    """
    wire.check_bind(host, token)
    if max_image_pixels < 1:
        raise ValueError(f"max_image_pixels must be >= 1, got {max_image_pixels}")
    store = FrameStore(store_frames, store_bytes)
    models = RynnECModels(
        engine, store, batch_window_s, max_image_pixels, max_request_s, max_client_questions, max_upload_bytes
    )
    stop = threading.Event()
    signals = (signal.SIGTERM, signal.SIGINT)
    previous = {s: signal.signal(s, lambda signum, _frame: _on_signal(stop, signum)) for s in signals}
    try:
        return _serve(models, host, port, http_port, token, ready, stop)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _on_signal(stop: threading.Event, signum: int) -> None:
    """Signal handler (main thread): only note it; the main loop stops Triton outside the handler."""
    if not stop.is_set():
        LOG.info("%s received: stopping", signal.Signals(signum).name)
    stop.set()


def _serve(
    models: RynnECModels,
    host: str,
    port: int,
    http_port: int,
    token: str,
    ready: Callable[[], None] | None,
    stop: threading.Event,
) -> int:
    warm_up(models.engine)
    if stop.is_set():
        return 0
    os.environ["LD_LIBRARY_PATH"] = _stub_library_path()
    from pytriton.model_config import ModelConfig, Tensor
    from pytriton.triton import (
        DEFAULT_PROTECTED_ENDPOINTS,
        Triton,
        TritonConfig,
        TritonLifecyclePolicy,
        TritonSecurityConfig,
    )
    from pytriton.utils.workspace import Workspace

    config = TritonConfig(
        grpc_address=host,
        grpc_port=port,
        http_address=host,
        http_port=http_port,
        allow_metrics=False,
        exit_timeout_secs=EXIT_TIMEOUT_S,
    )
    # PyTriton guards the admin endpoints (model repository, shared memory, ...) with a token, random
    # when none is given; a site token also guards inference and model configs. Health and metadata
    # stay open: PyTriton's own start-up checks poll them without the header.
    security = TritonSecurityConfig(
        access_token=token or None,
        restricted_endpoints=[*DEFAULT_PROTECTED_ENDPOINTS, "inference", "model-config"] if token else None,
    )
    text = {"dtype": bytes, "shape": (1,)}
    # The models are written to a model store on disk at bind and tritonserver loads them when it starts
    # (PyTriton's Vertex AI policy), so that the guard can be put in front of the proxy in between.
    workspace = Workspace()
    policy = TritonLifecyclePolicy(launch_triton_on_startup=False, local_model_store=True)
    triton = Triton(
        config=config, workspace=workspace, triton_lifecycle_policy=policy, security_config=security
    )
    try:
        triton.bind(
            model_name=wire.FRAMES_MODEL,
            infer_func=models.upload,
            inputs=[
                Tensor(name="keys", dtype=bytes, shape=(-1,)),
                Tensor(name="rgb", dtype=np.uint8, shape=(-1, -1, -1, 3)),
            ],
            outputs=[Tensor(name="stored", dtype=np.int32, shape=(1,))],
            config=ModelConfig(batching=False),
            strict=True,
        )
        triton.bind(
            model_name=wire.ASK_MODEL,
            infer_func=models.ask,
            inputs=[Tensor(name="request", **text)],
            outputs=[Tensor(name="kind", **text), Tensor(name="body", **text)],
            config=ModelConfig(batching=False, decoupled=True),
        )
        install_guard(workspace.model_store_path, models.guard_limits())
        triton.run()
        LOG.info("serving %s on %s:%d (gRPC), %s:%d (HTTP)", wire.ASK_MODEL, host, port, host, http_port)
        if ready is not None and not stop.is_set():
            ready()
        while not stop.wait(0.5):
            if not triton.is_alive():
                LOG.error("Triton stopped by itself; shutting down")
                return 1
        return 0
    finally:
        models.stopping.set()  # work in progress ends at its next should_stop check
        triton.stop()  # from the main thread: SIGINT to tritonserver, wait for it, close the proxies
