"""A planner step that acts on an answer only when the model is sure, asks again when it is not, and
hands the question to a person when asking again did not help.

    ask  ->  confidence >= threshold ?  act
         ->  else ask again on more frames (up to --retries times)  ->  still unsure ?  ask a human

``Answer.confidence`` is the chosen option's probability for a question with options (the options'
likelihoods, EmbSpatial-Bench's strategy) and the geometric-mean probability of the generated tokens
(``exp(mean_token_logprob)``) for a free answer. A geometric answer (``source == "geometry"``) was
measured, not generated: it is acted on as measured here, and carries its ``uncertainty`` (for a choice
also ``margin_m`` and ``confidence`` = Φ(margin / σ)) for a planner that sets a threshold on those. A
refusal or failure goes to a human with the node's reason.

Run against a running node with camera frames (see examples/ask_tree.py for the other two shells):

    python examples/ask_or_escalate.py --question "Is the mug left or right of the laptop?" \\
        --option left --option right --threshold 0.7

Exit code 0 when the planner may act, 1 when a human must answer.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from rynnec_ros.core.types import Answer
from rynnec_ros.ros.client import CognitionClient


@dataclass
class Decision:
    """What the planner does next: ``act`` on ``answer``, or ``ask_human`` because of ``why``.
    ``attempts`` holds every answer the node gave, in order (the last is ``answer``)."""

    act: bool
    answer: Answer | None
    why: str
    attempts: list[Answer] = field(default_factory=list)


def decide(client: CognitionClient, question: str, options: Sequence[str] | None = None,
           threshold: float = 0.6, retries: int = 1, max_frames: int = 8, max_new_tokens: int = 64,
           timeout_s: float = 60.0) -> Decision:
    """Ask, and ask again on twice the frames while the answer's confidence is below ``threshold``."""
    attempts: list[Answer] = []
    frames = max_frames
    for _ in range(retries + 1):
        try:
            ans = client.ask(question, options=options, max_frames=frames, max_new_tokens=max_new_tokens,
                             timeout_s=timeout_s)
        except (RuntimeError, TimeoutError) as exc:  # the node's reason: a person reads it
            return Decision(False, attempts[-1] if attempts else None, f"the node could not answer: {exc}",
                            attempts)
        attempts.append(ans)
        if ans.source == "geometry":
            return Decision(True, ans, f"measured ({ans.reading})", attempts)
        if ans.confidence is None:
            return Decision(False, ans, "the answer carries no confidence", attempts)
        if ans.confidence >= threshold:
            return Decision(True, ans, f"confidence {ans.confidence:.2f} >= {threshold:.2f}", attempts)
        frames *= 2  # a second look at more of the window
    best = max(attempts, key=lambda a: a.confidence or 0.0)
    return Decision(False, best, f"confidence stayed below {threshold:.2f} over {len(attempts)} asks: "
                    + ", ".join(f"{a.confidence:.2f}" for a in attempts), attempts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--question", default="Is there a cup on the table?")
    ap.add_argument("--option", action="append", help="an answer option (repeat); none = a free answer")
    ap.add_argument("--threshold", type=float, default=0.6)
    ap.add_argument("--retries", type=int, default=1)
    ap.add_argument("--namespace", default="", help="the node's namespace")
    ap.add_argument("--node-name", default="rynnec")
    args = ap.parse_args(argv)
    with CognitionClient(node_namespace=args.namespace, node_name=args.node_name,
                         client_name="ask_or_escalate_example") as client:
        if not client.wait_for_node(60.0):
            print("the cognition node is not active", file=sys.stderr)
            return 2
        decision = decide(client, args.question, args.option, args.threshold, args.retries)
    text = decision.answer.text if decision.answer is not None else ""
    print(f"{'act on' if decision.act else 'ask a human about'} {args.question!r}: {text!r} ({decision.why})")
    return 0 if decision.act else 1


if __name__ == "__main__":
    sys.exit(main())
