"""rynnec_ros: embodied cognition for ROS 2 robots with the RynnEC video MLLM.

Only ``rynnec_ros.ros`` imports rclpy; everything else (engine, geometry, evaluation) is ROS-free.

In a development checkout (``. scripts/env.sh``) the Python sources are imported from the work tree while
colcon installs the generated interfaces (``rynnec_ros.msg``/``.srv``/``.action``) into a second
``rynnec_ros`` directory under ``install/``. Extending the package path here, at the first import, makes
``from rynnec_ros.srv import AskQuestion`` work on its own, as a planner's first line does; on robots
both halves share one installed directory and this changes nothing.

It also sets ``OMP_WAIT_POLICY=PASSIVE`` for torch's OpenMP threads unless the environment already chose
a policy; OpenMP reads it once, when torch is first imported, so it has to happen here, before any module
of the package imports torch. With libgomp's default a thread that reaches the end of a parallel region
spins waiting for the others. On a CPU shared with other processes (a robot's other nodes, a 2-core CI
box) the thread it waits for is often not running, and the spinning one keeps its core busy instead of
letting it run: every small parallel region of a decode step (one SDPA call per layer) then costs up to a
scheduler time slice instead of ~0.1 ms. ONNX Runtime's threads do not spin either
(``session.intra_op.allow_spinning`` 0 in ``model/backends/ort.py``). Measurements: docs/acceleration.md,
"Decode at long contexts".
"""

import os
import pkgutil

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__path__ = pkgutil.extend_path(__path__, __name__)

__version__ = "0.1.0"
