"""Message <-> numpy conversions: encodings, depth units, boxes, compressed images (masks: test_masks.py)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

pytestmark = pytest.mark.ros


def _image(arr: np.ndarray, encoding: str, pad: int = 0, bigendian: bool = False):
    from sensor_msgs.msg import Image

    h, w = arr.shape[:2]
    row = arr.reshape(h, -1).view(np.uint8)
    if bigendian:
        row = arr.astype(arr.dtype.newbyteorder(">")).reshape(h, -1).view(np.uint8)
    data = np.concatenate([row, np.zeros((h, pad), np.uint8)], axis=1)
    return Image(height=h, width=w, encoding=encoding, step=data.shape[1], is_bigendian=int(bigendian),
                 data=data.tobytes())


def test_colour_encodings_become_rgb_with_step_padding() -> None:
    from rynnec_ros.core.images import image_to_rgb

    rgb = np.random.default_rng(0).integers(0, 256, (5, 7, 3), dtype=np.uint8)
    assert np.array_equal(image_to_rgb(_image(rgb, "rgb8", pad=3)), rgb)
    assert np.array_equal(image_to_rgb(_image(rgb[:, :, ::-1].copy(), "bgr8")), rgb)
    rgba = np.dstack([rgb, np.full((5, 7), 9, np.uint8)])
    assert np.array_equal(image_to_rgb(_image(rgba, "rgba8")), rgb)
    gray = rgb[:, :, 0].copy()
    assert np.array_equal(image_to_rgb(_image(gray, "mono8")), np.dstack([gray] * 3))


@pytest.mark.parametrize(
    ("encoding", "step", "data_len", "reason"),
    [
        ("yuv422", 21, 105, "unsupported colour encoding"),
        ("rgb8", 10, 105, "step 10 is smaller"),
        ("rgb8", 21, 50, "expected step\\*height"),
    ],
)
def test_bad_images_raise_value_error(encoding, step, data_len, reason) -> None:
    from sensor_msgs.msg import Image

    from rynnec_ros.core.images import image_to_rgb

    msg = Image(height=5, width=7, encoding=encoding, step=step, data=bytes(data_len))
    with pytest.raises(ValueError, match=reason):
        image_to_rgb(msg)


def test_depth_units_and_invalid_values() -> None:
    from rynnec_ros.core.images import image_to_depth

    mm = np.array([[0, 1500], [65535, 10]], np.uint16)
    d = image_to_depth(_image(mm, "16UC1"))
    assert np.isnan(d[0, 0]) and d[0, 1] == pytest.approx(1.5) and d[1, 1] == pytest.approx(0.01)
    assert image_to_depth(_image(mm, "16UC1", bigendian=True))[0, 1] == pytest.approx(1.5)
    m = np.array([[np.nan, np.inf], [-1.0, 2.5]], np.float32)
    d = image_to_depth(_image(m, "32FC1"))
    assert np.isnan(d[0]).all() and np.isnan(d[1, 0]) and d[1, 1] == 2.5
    with pytest.raises(ValueError, match="unsupported depth encoding"):
        image_to_depth(_image(m, "rgb8"))


def test_mask_bbox_is_the_tight_pixel_box() -> None:
    from rynnec_ros.ros.convert import mask_bbox

    mask = np.zeros((30, 40), bool)
    mask[5:12, 8:30] = True
    bbox = mask_bbox(mask)
    assert (bbox.x_offset, bbox.y_offset, bbox.width, bbox.height) == (8, 5, 22, 7)


def test_compressed_image_and_camera_info() -> None:
    from sensor_msgs.msg import CameraInfo, CompressedImage

    from rynnec_ros.ros.convert import camera_info_k, compressed_to_rgb

    rgb = np.zeros((8, 10, 3), np.uint8)
    rgb[:, :5] = (255, 0, 0)
    ok, png = cv2.imencode(".png", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))
    assert ok
    assert np.array_equal(compressed_to_rgb(CompressedImage(format="png", data=png.tobytes()), 1 << 24), rgb)
    with pytest.raises(ValueError, match="cannot decode"):
        compressed_to_rgb(CompressedImage(format="jpeg", data=b"not a jpeg"), 1 << 24)
    info = CameraInfo(k=[500.0, 0, 320, 0, 500.0, 240, 0, 0, 1])
    assert camera_info_k(info)[0, 2] == 320
    with pytest.raises(ValueError, match="not a valid intrinsics"):
        camera_info_k(CameraInfo())


def test_stamps_round_trip() -> None:
    from rynnec_ros.ros.convert import ns_to_stamp, stamp_to_ns

    assert stamp_to_ns(ns_to_stamp(1_700_000_000_123_456_789)) == 1_700_000_000_123_456_789
    with pytest.raises(ValueError, match="negative"):
        ns_to_stamp(-1)
