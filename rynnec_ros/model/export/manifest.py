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
    graphs: dict[str, GraphSpec]
    info: dict[str, Any] = field(default_factory=dict)

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
        graphs = {
            name: GraphSpec(
                file=g["file"],
                inputs={k: TensorSpec(**v) for k, v in g["inputs"].items()},
                outputs=list(g["outputs"]),
                dims={k: (int(v[0]), int(v[1]), int(v[2])) for k, v in g.get("dims", {}).items()},
            )
            for name, g in raw["graphs"].items()
        }
        return cls(graphs=graphs, info=raw.get("info", {}))
