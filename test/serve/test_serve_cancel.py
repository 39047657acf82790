"""Black-box tests of cancelling questions and of the per-client limit on the site server.

Written from the interfaces only: docs/serving.md ("Cancelling a question, and questions in flight per
client", "Faults", "Limits"), ``rynnec_ros/core/wire.py`` (``encode_request`` with ``client`` and
``request_id``, ``encode_cancel``; response kinds ``token`` / ``answer`` / ``error`` / ``cancelled``) and
the public engine API of the remote backend (``RemoteEngine.answer(..., should_stop=...)`` raising
``Cancelled``).

One real ``rynnec-ros serve`` per module on loopback, with the endless checkpoint (it decodes until
``max_new_tokens``), so a question of 8000 tokens is as long as these tests need. The decode speed is
measured first (a 200-token question) and the bounds that depend on the CPU scale with it; what does not
depend on the CPU (an acknowledgement, a refusal) has one fixed generous bound, ``ACK_S``, like
``REJECT_S`` in the attack tests.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rynnec_ros.core import wire
from rynnec_ros.core.types import Cancelled, Frame, Request

from .conftest import ServerProcess
from .test_serve_attacks import REJECT_S, _bytes_input, ask, health_frames, upload

grpcclient = pytest.importorskip("tritonclient.grpc")

ACK_S = REJECT_S
"""A cancel's acknowledgement and a refusal are checks, not model work: 10 s is far above any CPU's time."""
LONG_TOKENS = 8000
"""A question far longer than any test waits (within wire.MAX_NEW_TOKENS)."""
PROBE_TOKENS = 200
"""The question whose decode time gives the speed the CPU-dependent bounds scale with."""
SHORT_TOKENS = 5
FIRST_TOKENS_S = 120.0
"""Most time a question may take to stream its first tokens (start-up, vision, prefill on a loaded CPU)."""
QUIET_S = 3.0
"""How long a question that must not be refused is watched: a refusal comes in milliseconds."""
SETTLE_S = 2.0
"""Time given to questions just sent to reach the server and queue (a gRPC hop on loopback)."""
CANCELLED = "cancelled by the client"
"""docs/serving.md: "The cancelled question then ends at once with exactly one `error` response whose
message is `cancelled by the client`"."""
DEFAULT_CLIENT_LIMIT = 4
"""docs/serving.md: "`--max-client-questions` (default 4)"; ServerProcess does not pass it."""


# ------------------------------------------------------------------------------------ the client


class Stream:
    """One ``rynnec_ask`` request on its own gRPC stream, every response recorded as it arrives.

    The callback runs on tritonclient's stream thread; ``wait_tokens`` / ``wait_done`` block the test
    until the stream has streamed that much or has ended (Triton's final-response flag, or an error).
    """

    def __init__(self, url: str, body: bytes, client: str = "", rid: str = "") -> None:
        self.client_name = client
        self.rid = rid
        self.tokens: list[tuple[float, str]] = []
        self.final: list[tuple[float, str, dict[str, Any]]] = []
        """(time, kind, body) of every non-token response: exactly one for a well-behaved server."""
        self.triton_error: str | None = None
        self.ended_at: float | None = None
        self._cond = threading.Condition()
        self.t0 = time.monotonic()
        self._grpc = grpcclient.InferenceServerClient(url)
        self._grpc.start_stream(callback=self._on_response)
        self._grpc.async_stream_infer(
            wire.ASK_MODEL, [_bytes_input("request", [body])], enable_empty_final_response=True
        )

    @classmethod
    def question(cls, site: Site, client: str, rid: str, max_new_tokens: int) -> Stream:
        body = wire.encode_request(
            "answer", site.request(max_new_tokens), site.keys, stream=True, client=client, request_id=rid
        )
        return cls(site.url, body, client, rid)

    def _on_response(self, result: Any, error: Any) -> None:
        now = time.monotonic()
        with self._cond:
            if error is not None:
                self.triton_error = str(error)
                self.ended_at = now
            else:
                response = result.get_response()
                if response.outputs:
                    kind = result.as_numpy("kind")[0].decode()
                    doc = json.loads(bytes(result.as_numpy("body")[0]).decode())
                    if kind == "token":
                        self.tokens.append((now, doc["text"]))
                    else:
                        self.final.append((now, kind, doc))
                flag = response.parameters.get("triton_final_response")
                if flag is not None and flag.bool_param:
                    self.ended_at = now
            self._cond.notify_all()

    @property
    def done(self) -> bool:
        with self._cond:
            return self.ended_at is not None

    def n_tokens(self) -> int:
        with self._cond:
            return len(self.tokens)

    def wait_tokens(self, n: int, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: len(self.tokens) >= n or self.ended_at is not None, timeout)

    def wait_done(self, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self.ended_at is not None, timeout)

    def kinds(self) -> list[str]:
        with self._cond:
            return [k for _, k, _ in self.final]

    def message(self) -> str:
        """The ``error`` response's message ('' when there is none)."""
        with self._cond:
            for _, kind, doc in self.final:
                if kind == "error":
                    return str(doc.get("message", doc))
        return ""

    def describe(self) -> str:
        with self._cond:
            return (f"client={self.client_name!r} id={self.rid!r} tokens={len(self.tokens)} "
                    f"final={[(k, d) for _, k, d in self.final]} triton_error={self.triton_error!r} "
                    f"ended={self.ended_at is not None}")

    def close(self) -> None:
        self._grpc.stop_stream(cancel_requests=not self.done)
        self._grpc.close()


@dataclass
class Ack:
    """What one cancel request got back."""

    final: list[tuple[str, dict[str, Any]]]
    tokens: int
    triton_error: str | None
    timed_out: bool
    elapsed: float


def cancel(url: str, rid: str, client: str) -> Ack:
    """A cancel of ``client``'s question ``rid``, on a stream of its own."""
    out = ask(url, wire.encode_cancel(rid, client), ACK_S, token="")
    return Ack(
        final=[(kind, json.loads(body)) for kind, body in out.final],
        tokens=len(out.tokens),
        triton_error=out.triton_error,
        timed_out=out.timed_out,
        elapsed=out.elapsed,
    )


def assert_ack(ack: Ack, rid: str, found: bool) -> None:
    """docs/serving.md: a cancel "is answered with exactly one response of kind `cancelled` and body
    `{"id": ID, "found": true}` when that client's question `ID` was in flight (queued or decoding),
    `false` otherwise"; "A cancel is answered at once, also while questions wait for the engine"."""
    assert ack.triton_error is None and not ack.timed_out, ack
    assert ack.tokens == 0, ack
    assert ack.final == [("cancelled", {"id": rid, "found": found})], ack
    assert ack.elapsed < ACK_S, ack


def assert_cancelled(stream: Stream) -> None:
    """docs/serving.md: "The cancelled question then ends with exactly one `error` response whose message
    is `cancelled by the client`"."""
    assert stream.triton_error is None, stream.describe()
    assert stream.kinds() == ["error"], stream.describe()
    assert stream.message() == CANCELLED, stream.describe()


# ------------------------------------------------------------------------------------ the site


class Site:
    """The module's server (endless checkpoint), its uploaded frames and its measured decode speed."""

    def __init__(self, checkpoint: Path, log: Path) -> None:
        self.server = ServerProcess(checkpoint, log)
        self.server.start()
        self.keys = ["cancel-0", "cancel-1"]
        assert upload(self.url, self.keys, health_frames(), token="") == 2
        self.tok_per_s = 0.0
        self.probe_s = 0.0
        self.engine_decode_s = 0.0

    @property
    def url(self) -> str:
        return self.server.url

    def request(self, max_new_tokens: int) -> Request:
        return Request(question="<video>\nTell me everything.", frames=[], max_new_tokens=max_new_tokens)

    def decode_s(self, tokens: int) -> float:
        """Time the engine needs to decode ``tokens`` tokens at the speed measured."""
        return tokens / self.tok_per_s

    def measure(self) -> None:
        """Decode speed: a 200-token question, from its first streamed token to its answer."""
        s = Stream.question(self, "probe", "probe-0", PROBE_TOKENS)
        try:
            assert s.wait_done(FIRST_TOKENS_S + 600), s.describe()
            assert s.kinds() == ["answer"], s.describe()
            answer = wire.decode_answer(json.dumps(s.final[0][2]).encode())
            # conftest: the endless checkpoint "Generates until max_new_tokens"
            assert len(answer.token_ids) == PROBE_TOKENS, answer
            # the slower of two clocks: the client's, from the first streamed token to the answer (a
            # starved client receives tokens in bursts, which makes it look faster), and the engine's own
            # decode time (types.Answer: "timings holds seconds per stage (..., decode, ...)")
            client_s = s.final[0][0] - s.tokens[0][0]
            self.engine_decode_s = float(answer.timings.get("decode", 0.0))
            self.probe_s = max(client_s, self.engine_decode_s)
            self.tok_per_s = PROBE_TOKENS / max(self.probe_s, 1e-3)
        finally:
            s.close()

    def short_question(self, client: str) -> tuple[float, list[str]]:
        """(seconds, response kinds) of a short question from ``client``: how soon the engine is free."""
        body = wire.encode_request(
            "answer", self.request(SHORT_TOKENS), self.keys, stream=True, client=client,
            request_id=f"{client}-short",
        )
        out = ask(self.url, body, FIRST_TOKENS_S, token="")
        assert out.triton_error is None and not out.timed_out, out
        return out.elapsed, [k for k, _ in out.final]

    def assert_engine_free(self, client: str, tokens_done: int) -> tuple[float, float]:
        """A short question from ``client`` is answered promptly after a cancel, not after the rest of the
        cancelled decode; (its seconds, the rest of that decode's seconds at the measured speed)."""
        remaining_s = self.decode_s(LONG_TOKENS - tokens_done)
        short_s, kinds = self.short_question(client)
        assert kinds == ["answer"]
        assert short_s < min(ACK_S, 0.5 * remaining_s), (short_s, remaining_s)
        return short_s, remaining_s


@pytest.fixture(scope="module")
def site(endless_checkpoint: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    s = Site(endless_checkpoint, tmp_path_factory.mktemp("cancel") / "server.log")
    try:
        s.measure()
        yield s
    finally:
        s.server.stop()


@contextlib.contextmanager
def streams(url: str) -> Iterator[list[Stream]]:
    """Streams a test opens; whatever is still in flight at the end is cancelled and every stream closed,
    so one failing test does not leave the engine busy for the next."""
    opened: list[Stream] = []
    try:
        yield opened
    finally:
        for s in opened:
            if not s.done and s.rid:
                with contextlib.suppress(Exception):
                    cancel(url, s.rid, s.client_name)
        for s in opened:
            s.wait_done(ACK_S)
            s.close()


def start_long(site: Site, opened: list[Stream], client: str, rid: str) -> Stream:
    s = Stream.question(site, client, rid, LONG_TOKENS)
    opened.append(s)
    return s


# ------------------------------------------------------------------------------------ the tests


@pytest.mark.timeout(600)
def test_decode_speed_is_measured(site: Site) -> None:
    """The probe decoded 200 tokens; its speed scales the bounds below (reported in the output)."""
    print(f"\ndecode: {site.tok_per_s:.0f} tok/s ({PROBE_TOKENS} tokens in {site.probe_s:.2f} s; the "
          f"engine's own decode timing {site.engine_decode_s:.2f} s); "
          f"{LONG_TOKENS} tokens would take {site.decode_s(LONG_TOKENS):.1f} s")
    assert site.tok_per_s > 0


@pytest.mark.timeout(600)
def test_cancel_stops_a_streaming_question(site: Site) -> None:
    """A long streamed question cancelled after its first tokens, on a separate stream by the same client
    and id: one ``cancelled`` ``found: true`` at once, the question ends with one ``cancelled by the
    client`` error long before its 8000 tokens, and the engine is free for the next question."""
    with streams(site.url) as opened:
        q = start_long(site, opened, "robot-1", "t1-long")
        assert q.wait_tokens(3, FIRST_TOKENS_S), q.describe()
        assert not q.done, q.describe()
        t_cancel = time.monotonic()
        ack = cancel(site.url, "t1-long", "robot-1")
        assert_ack(ack, "t1-long", found=True)
        # docs: "its engine work stops at the next decode step": the stream ends within the ack bound
        assert q.wait_done(ACK_S), q.describe()
        assert q.ended_at is not None
        stopped_s = q.ended_at - t_cancel
        assert_cancelled(q)
        # long before the 8000 tokens: few of them streamed, and far less time than their decode takes
        assert q.n_tokens() < LONG_TOKENS // 4, q.describe()
        decoding_s = q.ended_at - q.tokens[0][0]
        assert decoding_s < 0.5 * site.decode_s(LONG_TOKENS), (decoding_s, site.decode_s(LONG_TOKENS))
        # docs: `false` for a question that is no longer in flight ("finished")
        assert_ack(cancel(site.url, "t1-long", "robot-1"), "t1-long", found=False)
    # the engine is free: a short question is answered promptly, not after the rest of the decode
    short_s, remaining_s = site.assert_engine_free("robot-2", len(q.tokens))
    print(f"\nack {ack.elapsed * 1000:.0f} ms; question ended {stopped_s * 1000:.0f} ms after the cancel "
          f"was sent, after {len(q.tokens)} tokens; next short question {short_s:.2f} s "
          f"(the rest of the decode: {remaining_s:.1f} s)")


@pytest.mark.timeout(600)
def test_cancel_of_unknown_or_foreign_id_is_not_found(site: Site) -> None:
    """docs: `false` "otherwise (finished, never sent, or another client's: an id only names a question of
    the client that sent it)". Neither cancel touches the question in flight, which keeps decoding."""
    with streams(site.url) as opened:
        q = start_long(site, opened, "robot-owner", "t2-long")
        assert q.wait_tokens(3, FIRST_TOKENS_S), q.describe()
        assert_ack(cancel(site.url, "t2-never-sent", "robot-owner"), "t2-never-sent", found=False)
        assert_ack(cancel(site.url, "t2-long", "robot-other"), "t2-long", found=False)
        assert_ack(cancel(site.url, "t2-long", ""), "t2-long", found=False)  # no client is not the owner
        # unaffected: still in flight and still streaming tokens
        seen = q.n_tokens()
        assert q.wait_tokens(seen + 5, ACK_S + site.decode_s(5)), q.describe()
        assert not q.done and q.kinds() == [], q.describe()
        # clean up, properly: the owner's cancel finds it
        assert_ack(cancel(site.url, "t2-long", "robot-owner"), "t2-long", found=True)
        assert q.wait_done(ACK_S), q.describe()
        assert_cancelled(q)


@pytest.mark.timeout(600)
def test_cancel_of_a_queued_question(site: Site) -> None:
    """A question waiting for the engine behind another client's long question: docs "`found: true` when
    that client's question `ID` was in flight (queued or decoding)" and "A cancel is answered at once,
    also while questions wait for the engine"; docs "The cancelled question then ends at once with exactly
    one `error` response whose message is `cancelled by the client`, also when it is still waiting for the
    engine": it ends while the other client's question still decodes, having never decoded."""
    with streams(site.url) as opened:
        a = start_long(site, opened, "robot-a3", "t3-a")
        assert a.wait_tokens(3, FIRST_TOKENS_S), a.describe()
        b = start_long(site, opened, "robot-b3", "t3-b")
        time.sleep(SETTLE_S)  # let it reach the server and queue behind a
        # docs: "The engine answers one question at a time": b waits while a decodes
        assert b.n_tokens() == 0 and not b.done, b.describe()
        t_cancel = time.monotonic()
        ack = cancel(site.url, "t3-b", "robot-b3")
        assert_ack(ack, "t3-b", found=True)
        ended_while_queued = b.wait_done(ACK_S)
        assert ended_while_queued, b.describe()
        assert not a.done, a.describe()  # the other client's question goes on
        assert_ack(cancel(site.url, "t3-a", "robot-a3"), "t3-a", found=True)
        assert a.wait_done(ACK_S), a.describe()
        assert_cancelled(a)
        assert b.wait_done(ACK_S), b.describe()
        assert_cancelled(b)
        assert b.n_tokens() == 0, b.describe()  # cancelled before the engine reached it: never decoded
        assert b.ended_at is not None
        b_end_s = b.ended_at - t_cancel
    print(f"\nack of the queued question's cancel: {ack.elapsed * 1000:.0f} ms; the queued question ended "
          f"{b_end_s:.2f} s after its cancel, while still queued")


def assert_not_refused(s: Stream) -> None:
    """A question the server accepted: nothing final during ``QUIET_S`` (a refusal takes milliseconds),
    or an answer."""
    s.wait_done(QUIET_S)
    assert s.triton_error is None, s.describe()
    assert s.kinds() in ([], ["answer"]), s.describe()


def assert_refused(s: Stream, message: str) -> None:
    """docs: "one more is refused at once with one `error`"."""
    assert s.wait_done(ACK_S), s.describe()
    assert s.ended_at is not None and s.ended_at - s.t0 < ACK_S, s.describe()
    assert s.triton_error is None and s.n_tokens() == 0, s.describe()
    assert s.kinds() == ["error"], s.describe()
    assert s.message() == message, s.describe()


@pytest.mark.timeout(600)
def test_per_client_limit(site: Site) -> None:
    """docs: "One client may have at most `--max-client-questions` (default 4) questions in flight; one
    more is refused at once with one `error`: `client 'NAME' already has 4 questions in flight, the
    server's limit (--max-client-questions 4); ask again once one is answered`." Another client is not
    refused; once one of the four has ended, the client may ask again."""
    name = "greedy"
    limit_msg = (
        f"client '{name}' already has {DEFAULT_CLIENT_LIMIT} questions in flight, the server's limit "
        f"(--max-client-questions {DEFAULT_CLIENT_LIMIT}); ask again once one is answered"
    )
    with streams(site.url) as opened:
        q0 = start_long(site, opened, name, "t4-q0")
        assert q0.wait_tokens(3, FIRST_TOKENS_S), q0.describe()
        q1, q2, q3 = (start_long(site, opened, name, f"t4-q{i}") for i in (1, 2, 3))
        time.sleep(SETTLE_S)  # four in flight: q0 decoding, q1..q3 queued
        for s in (q0, q1, q2, q3):
            assert not s.done, s.describe()
        t5 = time.monotonic()
        q4 = start_long(site, opened, name, "t4-q4")  # the 5th: refused at once
        assert_refused(q4, limit_msg)
        refused_s = (q4.ended_at or t5) - t5

        # another client is not refused (queued behind greedy's questions, answered once they end)
        polite = Stream.question(site, "polite", "t4-polite", SHORT_TOKENS)
        opened.append(polite)
        assert_not_refused(polite)

        # one of the four ends (the decoding one, cancelled: it stops at its next decode step) ...
        assert_ack(cancel(site.url, "t4-q0", name), "t4-q0", found=True)
        assert q0.wait_done(ACK_S), q0.describe()
        assert_cancelled(q0)
        # ... and the client may ask again ("ask again once one is answered")
        q5 = start_long(site, opened, name, "t4-q5")
        assert_not_refused(q5)

        for s in (q1, q2, q3, q5):
            assert not s.done, s.describe()
            assert_ack(cancel(site.url, s.rid, name), s.rid, found=True)
        for s in (q1, q2, q3, q5):
            assert s.wait_done(ACK_S), s.describe()
            assert_cancelled(s)
        # the other client's question is answered once the engine is free
        assert polite.wait_done(FIRST_TOKENS_S), polite.describe()
        assert polite.kinds() == ["answer"], polite.describe()
        # every stream ended with exactly one final response
        for s in opened:
            assert s.done and s.triton_error is None and len(s.kinds()) == 1, s.describe()
    print(f"\nthe 5th question was refused in {refused_s * 1000:.0f} ms")


@pytest.mark.timeout(600)
def test_a_second_question_with_an_id_in_flight_is_refused(site: Site) -> None:
    """docs: "A second question with the id of one in flight is refused (`bad request: question id 'ID' is
    already in flight for this client`)", with the limit's one `error` ("one more is refused at once with one
    `error`"); the refusal leaves the first question with that id in flight, and the same id from another
    client is that client's own question ("an id only names a question of the client that sent it")."""
    name = "dupper"
    with streams(site.url) as opened:
        q0 = start_long(site, opened, name, "t4d-q0")
        assert q0.wait_tokens(3, FIRST_TOKENS_S), q0.describe()
        q1 = start_long(site, opened, name, "t4d-q1")
        time.sleep(SETTLE_S)  # two in flight (q0 decoding, q1 queued), below the limit of 4
        assert not q0.done and not q1.done, (q0.describe(), q1.describe())
        for rid in ("t4d-q1", "t4d-q0"):  # a queued one's id, then the decoding one's
            dup = start_long(site, opened, name, rid)
            assert_refused(dup, f"bad request: question id '{rid}' is already in flight for this client")
        other = start_long(site, opened, "dupper-twin", "t4d-q1")  # another client, same id: accepted
        assert_not_refused(other)
        # the refusals dropped neither original: their owner's cancels find them
        for s in (q1, q0, other):
            assert not s.done, s.describe()
            assert_ack(cancel(site.url, s.rid, s.client_name), s.rid, found=True)
        for s in (q0, q1, other):
            assert s.wait_done(ACK_S), s.describe()
            assert_cancelled(s)


@pytest.mark.timeout(600)
def test_remote_engine_should_stop_cancels_the_server_decode(site: Site) -> None:
    """docs "Faults": "`should_stop` (a cancelled goal, a client that gave up) stops the server's decode
    too: the robot sends a cancel of its question ..., waits for its acknowledgement (at most 2 s,
    `CANCEL_ACK_S`) and raises `Cancelled`". The proof that the decode stopped: another robot's short
    question is answered far sooner than the rest of the cancelled decode would take."""
    from rynnec_ros.model.backends.remote import RemoteEngine

    rng = np.random.default_rng(5)
    frames = [Frame(rgb=rng.integers(0, 256, (48, 64, 3), dtype=np.uint8), key=f"t5-{i}") for i in range(2)]
    request = Request(question="<video>\nTell me everything.", frames=frames, max_new_tokens=LONG_TOKENS)
    robot = RemoteEngine(site.url, client_name="robot-a")
    streamed = [0]
    stop_at: list[float] = []

    def on_token(_: str) -> None:
        streamed[0] += 1

    def should_stop() -> bool:
        if streamed[0] >= 5:
            if not stop_at:
                stop_at.append(time.monotonic())
            return True
        return False

    try:
        t0 = time.monotonic()
        with pytest.raises(Cancelled):
            robot.answer(request, on_token=on_token, should_stop=should_stop)
        raised = time.monotonic()
    finally:
        robot.close()
    assert stop_at, "should_stop never turned true"
    raise_s = raised - stop_at[0]
    assert raise_s < ACK_S, raise_s  # CANCEL_ACK_S (2 s) and a margin
    assert raised - t0 < FIRST_TOKENS_S + ACK_S
    short_s, remaining_s = site.assert_engine_free("robot-b", streamed[0])
    print(f"\nCancelled raised {raise_s * 1000:.0f} ms after should_stop turned true ({streamed[0]} tokens); "
          f"another robot's short question then took {short_s:.2f} s "
          f"(rest of the decode: {remaining_s:.1f} s)")


@pytest.mark.timeout(600)
def test_burst_of_questions_and_cancels(site: Site) -> None:
    """Ten clients' long questions and, together, the ten cancels: docs "exactly one response of kind
    `cancelled`" for each cancel (`found: true`: each question is in flight, decoding or queued), and
    "exactly one `error` response whose message is `cancelled by the client`" for each question."""
    n = 10
    with streams(site.url) as opened:
        qs = [start_long(site, opened, f"burst-{i}", f"t6-{i}") for i in range(n)]
        deadline = time.monotonic() + FIRST_TOKENS_S
        while not any(q.n_tokens() for q in qs) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert any(q.n_tokens() for q in qs), [q.describe() for q in qs]
        time.sleep(SETTLE_S)  # every question has reached the server (one decodes, nine queue)
        assert not any(q.done for q in qs), [q.describe() for q in qs]
        barrier = threading.Barrier(n)
        acks: list[Ack | BaseException | None] = [None] * n

        def send(i: int) -> None:
            try:
                barrier.wait(timeout=30)
                acks[i] = cancel(site.url, f"t6-{i}", f"burst-{i}")
            except BaseException as exc:
                acks[i] = exc

        threads = [threading.Thread(target=send, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=ACK_S + 60)
        assert not any(t.is_alive() for t in threads), "a cancel hung"
        for i, ack in enumerate(acks):
            assert isinstance(ack, Ack), ack
            assert_ack(ack, f"t6-{i}", found=True)
        for q in qs:
            assert q.wait_done(ACK_S), q.describe()
            assert_cancelled(q)
        slowest = max(a.elapsed for a in acks if isinstance(a, Ack))
    short_s, kinds = site.short_question("burst-after")
    assert kinds == ["answer"]
    assert short_s < ACK_S, short_s
    print(f"\nslowest of {n} concurrent acks: {slowest * 1000:.0f} ms; next short question {short_s:.2f} s")


