"""The thin ROS 2 layer: the only package that imports rclpy or message types.

In a development checkout the Python sources are imported from the work tree while colcon installs only
the generated interfaces (``rynnec_ros.msg`` / ``rynnec_ros.srv``) under ``install/``; extending the
package path here lets both halves of the same-named package be imported together. On robots both live
in the same installed directory and this is a no-op.
"""

from __future__ import annotations

import pkgutil

import rynnec_ros

rynnec_ros.__path__ = pkgutil.extend_path(rynnec_ros.__path__, rynnec_ros.__name__)
