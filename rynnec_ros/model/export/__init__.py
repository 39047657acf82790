"""Export of the RynnEC compute graphs to ONNX and their compilation to TensorRT engines."""
