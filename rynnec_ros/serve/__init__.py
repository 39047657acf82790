"""Site inference server: the RynnEC engine hosted by Triton Inference Server (via PyTriton).

``rynnec_ros.core.wire`` is the wire format both sides share (no torch, no Triton, no ROS); ``server``
runs in the
server's Python environment (``requirements-serve.txt``); the robots' side is the ``remote`` engine
backend (``rynnec_ros.model.backends.remote``), which speaks Triton's standard gRPC client.
"""
