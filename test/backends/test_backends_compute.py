"""``GraphCompute`` refuses a host model with an unloaded tensor that no graph computes.

The graph backends load only the host tensors (``loader.HOST_PREFIXES``) into a meta skeleton; every
other tensor must belong to a module one of the graphs computes. The graphs here are never run (the
check comes before any call), so plain callables stand in for them.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from rynnec_ros.model.backends.graphs import COMPUTED_BY, GraphCompute
from rynnec_ros.model.loader import load_model

from .conftest import CHECKPOINT


def _graphs() -> dict[str, object]:
    def graph(feeds: dict[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
        raise AssertionError("no graph runs while the compute is built")

    return {**{name: graph for name in COMPUTED_BY}, "llm_prefill": None}


def test_graph_compute_drops_what_its_graphs_compute() -> None:
    model = load_model(CHECKPOINT, graph_backed=True)
    compute = GraphCompute(model, _graphs(), torch.float32, torch.device("cpu"))
    # the checkpoint's 2 decoder layers (test/fixtures config) are graphs now: none is left in the model
    assert len(model.model.layers) == 0
    assert not [n for n, t in [*model.named_parameters(), *model.named_buffers()] if t.is_meta]
    assert compute.has_seg_head and compute.decoder.layers == 2


def test_unloaded_host_tensor_is_refused() -> None:
    model = load_model(CHECKPOINT, graph_backed=True)
    # a host tensor the loader did not fill: no graph computes the token embedding
    shape = model.model.embed_tokens.weight.shape
    model.model.embed_tokens.weight = nn.Parameter(torch.empty(shape, device="meta"))
    with pytest.raises(ValueError, match=r"never loaded: \['model\.embed_tokens\.weight'\]"):
        GraphCompute(model, _graphs(), torch.float32, torch.device("cpu"))
