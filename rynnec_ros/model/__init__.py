"""The RynnEC model and its inference engine (ROS-free).

``from rynnec_ros.model import RynnEC`` is the public entry point; torch is imported lazily so that
``import rynnec_ros.model`` stays cheap for tools that only need the CLI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .engine import RynnEC

__all__ = ["RynnEC"]


def __getattr__(name: str) -> Any:
    if name == "RynnEC":
        from .engine import RynnEC

        return RynnEC
    raise AttributeError(name)
