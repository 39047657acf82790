"""Who answers a question: the geometry (depth + poses + masks) or the model. ROS-free.

``spatial_source`` decides: ``model`` always asks the model; ``geometry`` measures or fails with the
reason; ``auto`` measures when the question is a spatial task the geometry can answer from what the
frames carry, and asks the model otherwise. A question the model answers with ``options`` is decided by
the options' likelihoods, returned as probabilities. The node, the CLI and the evaluation all route
through here, so the decision is tested without ROS.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from rynnec_ros.core.parsing import parse_quantity
from rynnec_ros.core.types import Answer, Cancelled, Predictor, Request, RequestError
from rynnec_ros.spatial import confirm
from rynnec_ros.spatial.plan import SpatialPlan, Unanswerable

SOURCES = ("auto", "model", "geometry")


class Router:
    """Routes one Request to the geometry or the model and returns the Answer with its source set.

    ``confirm``: a free-text question's reading is measured only when the model, scoring it against its
    neighbours in the task grammar (``spatial.confirm``), reads it the same way (off by default: a second
    reader is only as good as the checkpoint's language model)."""

    def __init__(self, engine: Predictor, spatial: Any | None, source: str = "auto",
                 confirm: bool = False) -> None:
        if source not in SOURCES:
            raise ValueError(f"spatial_source must be one of {', '.join(SOURCES)}, got {source!r}")
        self.engine = engine
        self.spatial = spatial
        self.source = source
        self.confirm = confirm

    def answer(self, request: Request, on_token: Callable[[str], None] | None = None,
               should_stop: Callable[[], bool] = lambda: False) -> Answer:
        """The answer; regions given as prompts are segmented first, so the geometry and the model see
        the same masks, and ``Answer.prompted`` returns them."""
        request = self.engine.resolve_prompts(request)
        ans = self._answer(request, on_token, should_stop)
        ans.prompted = [r for r in request.regions if r.prompts]
        return ans

    def _answer(self, request: Request, on_token: Callable[[str], None] | None,
                should_stop: Callable[[], bool]) -> Answer:
        task: str | None = None
        why_model = ""
        if self.source != "model":
            if self.spatial is None:
                if self.source == "geometry":
                    raise RequestError("spatial_source=geometry but the geometry module is unavailable")
            else:
                geometry = self._geometry(request)
                if isinstance(geometry, Answer):
                    return geometry
                if geometry is not None:
                    task, why_model = geometry
        if should_stop():
            raise Cancelled()
        if request.options:
            ans = self._choose(request, on_token, should_stop)
        else:
            ans = self.engine.answer(request, on_token=on_token, should_stop=should_stop)
        ans.source = "model"
        ans.task = ans.task or task
        ans.reason = ans.reason or why_model
        ans.object_ids = [r.object_id for r in request.regions]
        return ans

    def _geometry(self, request: Request) -> Answer | tuple[str | None, str] | None:
        """The geometry's answer, or (spatial task name, why the geometry passed it on) for the model to
        answer (None: not a spatial question). Under ``auto`` the answer's ``reason`` says so: a planner
        that trusts measured distances can tell a model's guess from a measurement. A question read as a
        task but with words that reading does not use (``PARTLY_READ``) goes to the model with no task
        and the words it left unread: a measurement of another question would be a confident wrong
        answer.

        The request is read once (``plan``: task, slots, objects, coverage) and that plan is what the
        geometry measures; the request itself is left as it came. ``plan`` raises a RequestError only for
        a malformed structured task (the caller's error). In geometry-only mode anything it cannot measure
        fails with the geometry's reason, never a made-up number.
        """
        assert self.spatial is not None
        planned = self.spatial.plan(request)
        if isinstance(planned, Unanswerable):
            if planned.plan is None:
                if self.source == "geometry":
                    raise RequestError(planned.reason)
                return (None, f"answered by the model: {planned.reason}") if planned.partly_read else None
            name = planned.plan.task
            why = f"geometry cannot answer this {name} question: {planned.reason}"
            if self.source == "geometry":
                raise RequestError(why)
            return name, f"answered by the model: {why}"
        if self.confirm and not request.task:
            verdict = self._confirm(request, planned)
            if not verdict.agreed:
                if self.source == "geometry":
                    raise RequestError(verdict.reason(request.question))
                return None, f"answered by the model: {verdict.reason(request.question)}"
        t0 = time.monotonic()
        ans: Answer = self.spatial.solve(request, planned)
        ans.timings.setdefault("geometry", time.monotonic() - t0)
        return ans

    def _confirm(self, request: Request, planned: SpatialPlan) -> confirm.Confirmation:
        """The model's likelihood of the rules' reading against its neighbours (``spatial.confirm``), on
        the request's own frames and regions (the question names its objects through them)."""
        options = confirm.candidates(planned)
        scored = Request(confirm.prompt(request.question), request.frames, request.regions,
                         options=[" " + o for o in options])
        return confirm.judge(options, list(self.engine.score_options(scored)))

    def _choose(self, request: Request, on_token: Callable[[str], None] | None,
                should_stop: Callable[[], bool]) -> Answer:
        """The model's choice among ``request.options`` by their likelihood, with its probabilities.

        Each option's summed token log-likelihood as the answer to the question (EmbSpatial-Bench's
        likelihood strategy, Eq. 1; the engine's ``score_options``), softmax-normalised over the options.
        Parsing generated text for an option could name one the text does not mean, and gives no
        confidence; here the text is the chosen option itself, so index and text always agree.
        """
        t0 = time.monotonic()
        options = list(request.options or [])
        scores = np.asarray(self.engine.score_options(request, should_stop=should_stop), dtype=np.float64)
        if scores.shape != (len(options),) or not np.all(np.isfinite(scores)):
            raise ValueError(f"the engine scored {len(options)} options as {scores.tolist()}")
        probabilities = np.exp(scores - scores.max())
        probabilities /= probabilities.sum()
        best = int(np.argmax(scores))
        text = options[best]
        if on_token is not None:
            on_token(text)
        quantity = parse_quantity(text)
        return Answer(text=text, value=None if quantity is None else quantity[0],
                      unit=None if quantity is None else quantity[1], option_index=best,
                      option_probabilities=probabilities.tolist(),
                      timings={"score_options": (took := time.monotonic() - t0), "total": took})

    def segment(self, request: Request, on_token: Callable[[str], None] | None = None,
                should_stop: Callable[[], bool] = lambda: False) -> Answer:
        return self.engine.segment(request, on_token=on_token, should_stop=should_stop)
