"""Run serialized TensorRT engines with torch CUDA tensors as I/O (no extra copies, no pycuda)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


def _torch_dtype(trt_dtype: Any) -> Any:
    import tensorrt as trt
    import torch

    table = {
        trt.float32: torch.float32,
        trt.float16: torch.float16,
        trt.int32: torch.int32,
        trt.int8: torch.int8,
        trt.bool: torch.bool,
    }
    for trt_name, torch_dtype in (
        ("int64", torch.int64),
        ("bfloat16", torch.bfloat16),
        ("uint8", torch.uint8),
    ):
        if hasattr(trt, trt_name):  # newer TensorRT versions only
            table[getattr(trt, trt_name)] = torch_dtype
    try:
        return table[trt_dtype]
    except KeyError:
        raise ValueError(f"unsupported TensorRT tensor dtype {trt_dtype}") from None


class TrtGraph:
    """One TensorRT engine; ``__call__`` takes and returns torch tensors on the engine's CUDA device.

    Inputs are cast to the dtype the engine declares, so the caller can keep the torch engine's
    dtypes; shapes are set per call, within the optimisation profile the engine was built with.
    """

    def __init__(self, engine_path: str | Path, device: str = "cuda") -> None:
        import tensorrt as trt
        import torch

        self.path = Path(engine_path)
        if not self.path.is_file():
            raise FileNotFoundError(f"TensorRT engine not found: {self.path}")
        self.device = torch.device(device)
        if self.device.type != "cuda":
            raise ValueError(f"TensorRT engines run on CUDA devices only, got device={device!r}")
        self._logger = trt.Logger(trt.Logger.WARNING)
        self._runtime = trt.Runtime(self._logger)
        self.engine = self._runtime.deserialize_cuda_engine(self.path.read_bytes())
        if self.engine is None:
            raise RuntimeError(
                f"TensorRT could not deserialize {self.path} (built with another TensorRT "
                "version or for another GPU? rebuild with `rynnec-ros export tensorrt`)"
            )
        self.context = self.engine.create_execution_context()
        names = [self.engine.get_tensor_name(i) for i in range(self.engine.num_io_tensors)]
        is_input = {n: self.engine.get_tensor_mode(n) == trt.TensorIOMode.INPUT for n in names}
        self.input_names = [n for n in names if is_input[n]]
        self.output_names = [n for n in names if not is_input[n]]
        self.dtypes = {n: _torch_dtype(self.engine.get_tensor_dtype(n)) for n in names}
        self.active_provider = "TensorRT"

    def run_bound(self, inputs: Mapping[str, Any], outputs: Mapping[str, Any]) -> None:
        """Run with inputs read from and outputs written into the given CUDA tensors (views allowed, if
        contiguous): the decode graph's KV cache is read and written in place this way."""
        import torch

        for name in self.input_names + self.output_names:
            t = inputs.get(name) if name in self.input_names else outputs.get(name)
            if t is None:
                raise ValueError(f"{self.path.name}: missing binding {name!r}")
            if t.device != self.device or t.dtype != self.dtypes[name] or not t.is_contiguous():
                want = f"a contiguous {self.dtypes[name]} tensor on {self.device}"
                raise ValueError(f"{self.path.name}: {name} must be {want}")
            if name in self.input_names and not self.context.set_input_shape(name, tuple(t.shape)):
                raise ValueError(
                    f"{self.path.name}: input {name} shape {tuple(t.shape)} is outside the "
                    "engine's optimisation profile; rebuild with larger --max-* limits"
                )
            self.context.set_tensor_address(name, t.data_ptr())
        for name in self.output_names:
            shape, bound = tuple(self.context.get_tensor_shape(name)), tuple(outputs[name].shape)
            if shape != bound:
                raise ValueError(f"{self.path.name}: output {name} is {shape}, bound {bound}")
        stream = torch.cuda.current_stream(self.device)
        if not self.context.execute_async_v3(stream.cuda_stream):
            raise RuntimeError(f"TensorRT execution of {self.path.name} failed")

    def __call__(self, feeds: Mapping[str, Any], device: Any = None) -> dict[str, Any]:
        import torch

        keep: list[torch.Tensor] = []
        for name in self.input_names:
            if name not in feeds:
                raise ValueError(f"{self.path.name}: missing input {name!r}")
            t = torch.as_tensor(feeds[name]).to(self.device, self.dtypes[name]).contiguous()
            keep.append(t)
            if not self.context.set_input_shape(name, tuple(t.shape)):
                raise ValueError(
                    f"{self.path.name}: input {name} shape {tuple(t.shape)} is outside the "
                    "engine's optimisation profile; rebuild with larger --max-* limits"
                )
            self.context.set_tensor_address(name, t.data_ptr())
        outs: dict[str, torch.Tensor] = {}
        for name in self.output_names:
            shape = tuple(self.context.get_tensor_shape(name))
            out = torch.empty(shape, dtype=self.dtypes[name], device=self.device)
            outs[name] = out
            self.context.set_tensor_address(name, out.data_ptr())
        stream = torch.cuda.current_stream(self.device)
        if not self.context.execute_async_v3(stream.cuda_stream):
            raise RuntimeError(f"TensorRT execution of {self.path.name} failed")
        target = torch.device(device) if device is not None else self.device
        return {k: v.to(target) for k, v in outs.items()}
