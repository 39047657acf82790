"""``manifest.json``: what an export directory holds, so backends and the TensorRT builder need no guessing.

Each graph lists its inputs with shapes whose dynamic dimensions are named (``"tokens"``,
``"past"``), and every named dimension has a (min, opt, max) range: the TensorRT optimisation
profiles are built from these ranges.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

MANIFEST = "manifest.json"
ORT_ONLY = {"llm_decode_gqa": "llm_decode"}
"""Graphs with ONNX Runtime contrib ops (``com.microsoft``) → the plain graph each stands for. TensorRT
cannot parse contrib ops, so the export writes these beside the plain graphs, the ``tensorrt`` builder
skips them and ONNX Runtime's CPU provider loads them instead of the plain ones."""


@dataclass
class TensorSpec:
    dtype: str
    shape: list[int | str]


@dataclass
class GraphSpec:
    file: str
    inputs: dict[str, TensorSpec]
    outputs: list[str]
    dims: dict[str, tuple[int, int, int]] = field(default_factory=dict)

    def profile(self) -> dict[str, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]]:
        """(min, opt, max) shape per input with every named dimension resolved from ``dims``."""
        shapes: dict[str, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = {}
        for name, spec in self.inputs.items():
            triple: list[list[int]] = [[], [], []]
            for dim in spec.shape:
                if isinstance(dim, str):
                    if dim not in self.dims:
                        raise ValueError(f"{self.file}: input {name} uses dimension {dim!r} without a range")
                    for k in range(3):
                        triple[k].append(int(self.dims[dim][k]))
                else:
                    for k in range(3):
                        triple[k].append(int(dim))
            shapes[name] = (tuple(triple[0]), tuple(triple[1]), tuple(triple[2]))
        return shapes


@dataclass
class Manifest:
    """``weights`` maps a weight precision (``int8``, ``int4``) to the graphs exported with those weights
    (the LLM graphs); every other graph is shared with the float32 export in ``graphs``. ``kv_cache``
    maps a cache precision (``int8``) to the fused decode graphs with that cache, one per weight precision
    ("" = float32 weights; ``export/kvcache.py``)."""

    graphs: dict[str, GraphSpec]
    info: dict[str, Any] = field(default_factory=dict)
    weights: dict[str, dict[str, GraphSpec]] = field(default_factory=dict)
    kv_cache: dict[str, dict[str, GraphSpec]] = field(default_factory=dict)

    def graph(self, name: str, weights: str = "") -> GraphSpec:
        """Graph ``name`` with ``weights`` ("" = as exported, float32); refuses a precision not exported."""
        if weights:
            if weights not in self.weights:
                have = sorted(self.weights) or "float32 only"
                raise ValueError(
                    f"this export has no {weights} weights (it has: {have}); "
                    f"re-run `rynnec-ros export onnx --weights {weights}`"
                )
            if name in self.weights[weights]:
                return self.weights[weights][name]
        return self.graphs[name]

    def kv_graph(self, kv_cache: str, weights: str = "") -> GraphSpec:
        """The fused decode graph with a ``kv_cache`` cache and ``weights``; refuses one not exported."""
        have = self.kv_cache.get(kv_cache, {})
        if weights not in have:
            flags = f"--kv-cache {kv_cache}" + (f" --weights {weights}" if weights else "")
            raise ValueError(
                f"this export has no fused decode graph with a {kv_cache} K/V cache and "
                f"{weights or 'float32'} weights; re-run `rynnec-ros export onnx {flags}`"
            )
        return have[weights]

    def with_weights(self, weights: str = "") -> dict[str, GraphSpec]:
        """Every graph, the ``weights`` variant where one exists."""
        return {name: self.graph(name, weights) for name in self.graphs}

    def save(self, out_dir: str | Path) -> Path:
        path = Path(out_dir) / MANIFEST
        path.write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(cls, directory: str | Path) -> Manifest:
        path = Path(directory) / MANIFEST
        if not path.is_file():
            raise FileNotFoundError(
                f"{path} not found: is {directory} an `rynnec-ros export onnx` directory?"
            )
        raw = json.loads(path.read_text(encoding="utf-8"))
        return cls(
            graphs=_graphs(raw["graphs"]),
            info=raw.get("info", {}),
            weights={w: _graphs(g) for w, g in raw.get("weights", {}).items()},
            kv_cache={c: _graphs(g) for c, g in raw.get("kv_cache", {}).items()},
        )


def _graphs(raw: dict[str, Any]) -> dict[str, GraphSpec]:
    return {
        name: GraphSpec(
            file=g["file"],
            inputs={k: TensorSpec(**v) for k, v in g["inputs"].items()},
            outputs=list(g["outputs"]),
            dims={k: (int(v[0]), int(v[1]), int(v[2])) for k, v in g.get("dims", {}).items()},
        )
        for name, g in raw.items()
    }
