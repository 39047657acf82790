"""The ROS-free core every layer builds on: plain types and the ``Predictor`` protocol, the frame buffer,
the job queue, request-text checks, answer parsing, masks/RLE, transforms and the robot-server wire format.

Nothing here imports ROS, torch, the model, the geometry or anything above them (test/test_layers.py).
"""
