"""Black-box attacks on the node's camera/TF subscriptions (issue 11): topic input must never kill the
process, oversize images must not be buffered as they are, and one bad stamp must not wipe the buffer.

Written from the topic types (sensor_msgs/Image, CompressedImage, CameraInfo, tf2_msgs/TFMessage),
srv/ListFrames.srv, srv/AskQuestion.srv, docs/ros.md and issue 11 -- not from the node's validation code.
Every phase ends with the same health check: the process is alive, ``~/list_frames`` answers (with
well-formed stamps only), and a normal frame followed by a normal ask still succeeds.
"""

from __future__ import annotations

import itertools
import math
import struct
import threading
import time
import zlib

import numpy as np
import pytest

from .peer import Peer

pytestmark = pytest.mark.ros

H, W = 24, 32
GOOD_T0_S = 1000  # the "good" timeline every health check continues (stamps advance, never repeat)
_good = itertools.count()


def _time(sec: int, nanosec: int = 0):
    from builtin_interfaces.msg import Time

    return Time(sec=int(sec), nanosec=int(nanosec))


def _ns(t) -> int:
    return int(t.sec) * 10**9 + int(t.nanosec)


def _good_stamp():
    k = next(_good)
    ns = GOOD_T0_S * 10**9 + k * 100_000_000
    return _time(ns // 10**9, ns % 10**9)


def _image(h: int, w: int, enc: str, step: int, data: bytes, stamp, frame_id: str = "cam"):
    from sensor_msgs.msg import Image

    msg = Image(height=h, width=w, encoding=enc, is_bigendian=0, step=step)
    msg.data = data
    msg.header.stamp = stamp
    msg.header.frame_id = frame_id
    return msg


def _rgb(stamp, h: int = H, w: int = W, seed: int = 0):
    rgb = np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)
    return _image(h, w, "rgb8", w * 3, rgb.tobytes(), stamp)


def _png_msg(stamp, h: int = H, w: int = W):
    import cv2
    from sensor_msgs.msg import CompressedImage

    bgr = np.random.default_rng(1).integers(0, 256, (h, w, 3), dtype=np.uint8)
    msg = CompressedImage(format="png", data=cv2.imencode(".png", bgr)[1].tobytes())
    msg.header.stamp = stamp
    msg.header.frame_id = "cam"
    return msg


def _depth_msg(stamp, h: int = H, w: int = W, value: float = 2.0):
    d = np.full((h, w), value, np.float32)
    return _image(h, w, "32FC1", w * 4, d.tobytes(), stamp)


def _info(h: int = H, w: int = W, k=None):
    from sensor_msgs.msg import CameraInfo

    msg = CameraInfo(height=h, width=w)
    msg.k = [float(x) for x in (k if k is not None else [40.0, 0, w / 2, 0, 40.0, h / 2, 0, 0, 1])]
    msg.header.frame_id = "cam"
    return msg


def _tf(child: str, parent: str, q, t=(0.0, 0.0, 1.0), stamp=None):
    from geometry_msgs.msg import TransformStamped

    tr = TransformStamped()
    tr.header.frame_id, tr.child_frame_id = parent, child
    if stamp is not None:
        tr.header.stamp = stamp
    tr.transform.translation.x, tr.transform.translation.y, tr.transform.translation.z = (float(v) for v in t)
    (tr.transform.rotation.x, tr.transform.rotation.y, tr.transform.rotation.z,
     tr.transform.rotation.w) = (float(v) for v in q)
    return tr


# --------------------------------------------------------------------------------------------------
# Nodes: A (raw colour + depth + camera_info + TF), B (compressed colour, same depth/info/TF), C (stamps)
# --------------------------------------------------------------------------------------------------
class _Target:
    def __init__(self, name: str, proc, color_topic: str, kind: str, topics: list[str]) -> None:
        self.name, self.proc, self.color_topic, self.kind, self.topics = name, proc, color_topic, kind, topics

    def srv(self, s: str) -> str:
        return f"/{self.name}/{s}"


@pytest.fixture(scope="module")
def peer():
    p = Peer("attack_topics_peer")
    yield p
    p.close()


def _wait_subscribed(peer, t: _Target, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        subs = {topic: peer.node.get_subscriptions_info_by_topic(topic) for topic in t.topics}
        missing = [topic for topic, infos in subs.items() if not any(i.node_name == t.name for i in infos)]
        if not missing:
            return
        assert t.proc.alive(), f"{t.name} died while starting:\n{_tail(t)}"
        assert time.monotonic() < deadline, f"{t.name} never subscribed {missing}\n{_tail(t)}"
        time.sleep(0.1)


class _Pool:
    """The module's nodes; one that died in an earlier test is started again (and that test has failed),
    so every test fails for its own reason rather than because an earlier attack killed the process."""

    def __init__(self, factory, checkpoint, peer) -> None:
        self.factory, self.checkpoint, self.peer = factory, checkpoint, peer
        self.targets: dict[str, _Target] = {}
        self.specs = {
            "rynnec": ("/atk/color", "raw", {"color_topic": "/atk/color"}),
            "rynnec_c": ("/atk/ccolor/compressed", "compressed",
                         {"color_topic": "/atk/ccolor", "color_transport": "compressed"}),
        }

    def get(self, name: str) -> _Target:
        from sensor_msgs.msg import CameraInfo
        from tf2_msgs.msg import TFMessage

        t = self.targets.get(name)
        if t is not None and t.proc.alive():
            # An earlier attack may have left a poisoned buffer behind that only a query trips over.
            if _list(self.peer, t) is not None and t.proc.alive():
                return t
            t.proc.stop()
        color, kind, extra = self.specs[name]
        params = {
            "checkpoint": str(self.checkpoint), "qos_reliability": "reliable", "qos_depth": 20,
            "depth_topic": "/atk/depth", "camera_info_topic": "/atk/info", "world_frame": "map",
            "ingest_fps": 0.0, "max_new_tokens": 1, "max_frames_per_query": 2, **extra,
        }
        t = _Target(name, self.factory(params, name=name), color, kind,
                    [color, "/atk/depth", "/atk/info", "/tf", "/tf_static"])
        self.targets[name] = t
        _wait_subscribed(self.peer, t)
        _await_first_listing(self.peer, t)
        # A sane camera: intrinsics and a valid pose map -> cam.
        self.peer.pub(CameraInfo, "/atk/info").publish(_info())
        self.peer.pub(TFMessage, "/tf_static", latched=True).publish(
            TFMessage(transforms=[_tf("cam", "map", (0.0, 0.0, 0.0, 1.0))]))
        _healthy(self.peer, t)
        return t


@pytest.fixture(scope="module")
def pool(node_factory, segmenting_checkpoint, peer):
    from sensor_msgs.msg import CameraInfo, CompressedImage, Image
    from tf2_msgs.msg import TFMessage

    topics = [(Image, "/atk/color", False), (CompressedImage, "/atk/ccolor/compressed", False),
              (Image, "/atk/depth", False), (CameraInfo, "/atk/info", False),
              (TFMessage, "/tf", False), (TFMessage, "/tf_static", True)]
    for kind, topic, latched in topics:
        peer.pub(kind, topic, latched=latched)
    return _Pool(node_factory, segmenting_checkpoint, peer)


@pytest.fixture
def nodes(pool):
    return pool.get("rynnec"), pool.get("rynnec_c")


def _list(peer, t: _Target, timeout: float = 10.0):
    from rynnec_ros.srv import ListFrames

    return peer.call(ListFrames, t.srv("list_frames"), ListFrames.Request(), timeout)


def _await_first_listing(peer, t: _Target, timeout: float = 60.0) -> None:
    """Set-up, not an attack: a freshly started node's first ``~/list_frames`` reply can be lost while it
    has not yet matched the peer's reply reader (the cached client of the node it replaced), so ask on
    fresh clients until one answers. The health checks that follow are never retried."""
    from rynnec_ros.srv import ListFrames

    deadline = time.monotonic() + timeout
    while _list(peer, t, timeout=5.0) is None:
        assert t.proc.alive(), f"{t.name} died while starting:\n{_tail(t)}"
        assert time.monotonic() < deadline, f"{t.name}: ~/list_frames never answered\n{_tail(t)}"
        peer.forget(ListFrames, t.srv("list_frames"))


def _tail(t: _Target) -> str:
    return t.proc.output()[-4000:]


def _assert_listing(peer, t: _Target):
    assert t.proc.alive(), f"{t.name} died (rc={t.proc.proc.poll()}):\n{_tail(t)}"
    res = _list(peer, t)
    assert res is not None, f"{t.name}: ~/list_frames did not answer\n{_tail(t)}"
    # builtin_interfaces/Time: "nanosec ... valid in the range [0, 1e9)"; frame stamps the node reports
    # back must be valid times (and ns >= 0: issue 11, a sec=-5 frame crashed list_frames).
    bad = [(s.sec, s.nanosec) for s in res.stamps if s.sec < 0 or s.nanosec >= 10**9]
    assert not bad, f"{t.name}: list_frames reports invalid stamps {bad}"
    return res


def _publish_good(peer, t: _Target, stamp) -> None:
    from sensor_msgs.msg import CompressedImage, Image

    if t.kind == "raw":
        peer.pub(Image, t.color_topic).publish(_rgb(stamp))
    else:
        peer.pub(CompressedImage, t.color_topic).publish(_png_msg(stamp))
    peer.pub(Image, "/atk/depth").publish(_depth_msg(stamp))


def _healthy(peer, t: _Target, ask: bool = True, timeout: float = 15.0) -> int:
    """Process alive, list_frames answers, a normal frame is buffered and a normal ask about it succeeds.

    Normal frames keep coming (advancing stamps, at most 60 of them / 15 s) until one is buffered, so a
    node that needs several consecutive frames before it accepts a new timeline passes too (issue 11:
    "Decide on evidence (several consecutive frames ...)"). Returns the buffered stamp (ns).
    """
    from rynnec_ros.srv import AskQuestion

    _assert_listing(peer, t)
    deadline = time.monotonic() + timeout
    sent: list[int] = []
    for _ in range(int(timeout * 4)):
        stamp = _good_stamp()
        _publish_good(peer, t, stamp)
        sent.append(_ns(stamp))
        time.sleep(0.05)
        res = _assert_listing(peer, t)
        have = {_ns(s) for s in res.stamps} & set(sent)
        if have:
            break
        assert time.monotonic() < deadline, \
            f"{t.name}: no normal frame buffered again within {timeout} s\n{_tail(t)}"
    else:
        pytest.fail(f"{t.name}: {len(sent)} normal frames sent, none buffered\n{_tail(t)}")
    got = max(have)
    if ask:
        req = AskQuestion.Request(question="What is in the picture?", max_new_tokens=1,
                                  frame_stamps=[_time(got // 10**9, got % 10**9)])
        ans = peer.call(AskQuestion, t.srv("ask"), req, 60.0)
        assert ans is not None, f"{t.name}: normal ask got no response\n{_tail(t)}"
        assert ans.success, f"{t.name}: normal ask failed: {ans.message!r}\n{_tail(t)}"
    return got


def _buffered_mb(peer, t: _Target, timeout: float = 5.0) -> float | None:
    """buffered_mb from the node's /diagnostics (docs/ros.md: "buffer size/bytes/resets"), None if absent."""
    from diagnostic_msgs.msg import DiagnosticArray

    got: list[float] = []
    ev = threading.Event()

    def cb(msg) -> None:
        for st in msg.status:
            if st.name.endswith(f"/{t.name}"):
                for kv in st.values:
                    if kv.key in ("buffered_mb", "buffer_mb"):
                        got.append(float(kv.value))
                        ev.set()

    sub = peer.node.create_subscription(DiagnosticArray, "/diagnostics", cb, 10)
    try:
        ev.wait(timeout)
    finally:
        peer.node.destroy_subscription(sub)
    return got[-1] if got else None


def _settle(peer, t: _Target, seconds: float = 0.5) -> None:
    time.sleep(seconds)
    _assert_listing(peer, t)


# --------------------------------------------------------------------------------------------------
# 1. Topic input never kills the process
# --------------------------------------------------------------------------------------------------
def test_negative_and_out_of_range_header_stamps(nodes, peer) -> None:
    """Issue 11: "A colour image stamped sec=-5 is buffered, and the next list_frames call raises
    ValueError: negative stamp ... the node exits with code 1". Also nanosec >= 1e9 (outside the range
    builtin_interfaces/Time allows) and the int32/uint32 extremes, on every stamped topic."""
    from sensor_msgs.msg import CameraInfo, CompressedImage, Image
    from tf2_msgs.msg import TFMessage

    a, b = nodes
    bad = [_time(-5), _time(-(2**31)), _time(12, 10**9), _time(13, 4_294_967_295),
           _time(2**31 - 1, 4_294_967_295)]
    for st in bad:
        peer.pub(Image, a.color_topic).publish(_rgb(st))
        peer.pub(CompressedImage, b.color_topic).publish(_png_msg(st))
        peer.pub(Image, "/atk/depth").publish(_depth_msg(st))
        info = _info()
        info.header.stamp = st
        peer.pub(CameraInfo, "/atk/info").publish(info)
        peer.pub(TFMessage, "/tf").publish(TFMessage(transforms=[_tf("cam", "map", (0, 0, 0, 1), stamp=st)]))
        time.sleep(0.05)
        for t in nodes:
            _assert_listing(peer, t)
    for t in nodes:
        _settle(peer, t)
        _healthy(peer, t)


def _sof0_jpeg(h: int, w: int) -> bytes:
    """SOI + SOF0 (baseline, 8-bit, 3 components) claiming h x w, + EOI: a header with no image behind it."""
    sof = struct.pack(">BHHB", 8, h, w, 3) + b"\x01\x11\x00\x02\x11\x00\x03\x11\x00"
    return b"\xff\xd8" + b"\xff\xc0" + struct.pack(">H", len(sof) + 2) + sof + b"\xff\xd9"


def _jpeg_claiming(h: int, w: int) -> bytes:
    """A real 8x8 baseline JPEG (DQT, DHT, SOS, scan data) whose SOF0 height/width bytes are patched to
    h x w: a decoder reads the whole header and sees the claimed size before any pixel."""
    import cv2

    data = bytearray(cv2.imencode(".jpg", np.zeros((8, 8, 3), np.uint8))[1].tobytes())
    i = data.find(b"\xff\xc0")
    assert i > 0
    data[i + 5:i + 9] = struct.pack(">HH", h, w)  # FFC0, length (2), precision (1), height, width
    return bytes(data)


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def _png_bomb(side: int) -> bytes:
    """A valid 1-bit greyscale PNG of side x side zero pixels: ~32 MB of scanlines, ~30 KB compressed."""
    ihdr = struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0)
    row = b"\x00" * (1 + (side + 7) // 8)
    comp = zlib.compressobj(9)
    idat = b"".join(comp.compress(row * 1000) for _ in range(side // 1000))
    idat += comp.compress(row * (side % 1000))
    idat += comp.flush()
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", ihdr) + _png_chunk(b"IDAT", idat)
            + _png_chunk(b"IEND", b""))


def _stamp_at(ns: int):
    return _time(ns // 10**9, ns % 10**9)


def test_jpeg_header_claiming_65500_square_does_not_kill_the_node(nodes, peer) -> None:
    """Issue 11: "A CompressedImage whose JPEG header claims 65500x65500 makes cv2.imdecode raise an OpenCV
    assertion inside _on_color, and the node exits"."""
    from sensor_msgs.msg import CompressedImage

    _, b = nodes
    for fmt, data in itertools.product(("jpeg", "rgb8; jpeg compressed bgr8", ""),
                                       (_sof0_jpeg(65500, 65500), _jpeg_claiming(65500, 65500))):
        st = _good_stamp()
        msg = CompressedImage(format=fmt, data=data)
        msg.header.stamp = st
        peer.pub(CompressedImage, b.color_topic).publish(msg)
        _settle(peer, b, 0.3)
        assert _ns(st) not in {_ns(s) for s in _assert_listing(peer, b).stamps}
    _healthy(peer, b)


def _assert_not_buffered_as_is(peer, t: _Target, stamp_ns: int, mb_before: float | None, pixels: int,
                               what: str) -> None:
    """Issue 11: "Put a size limit on decoded images ..., downscale or refuse with a diagnostic". Either
    the frame is not buffered, or it was downscaled: /diagnostics buffered_mb grew by far less than the
    decoded frame's own size."""
    listed = {_ns(s) for s in _assert_listing(peer, t).stamps}
    if stamp_ns not in listed:
        return
    mb_after = _buffered_mb(peer, t)
    size_mb = pixels * 3 / 2**20
    assert mb_before is not None and mb_after is not None, f"{what} buffered, and no buffered_mb to check it"
    assert mb_after - mb_before < size_mb / 4, (
        f"{what} buffered as is: buffered_mb {mb_before} -> {mb_after} (frame alone ~{size_mb:.0f} MB)")


def test_png_bomb_16000_square_is_not_buffered_as_is(nodes, peer) -> None:
    """Issue 11: "a 16000x16000 JPEG 'bomb' is decoded and buffered" -- here as a ~30 KB PNG."""
    from sensor_msgs.msg import CompressedImage

    _, b = nodes
    _healthy(peer, b, ask=False)
    before = _buffered_mb(peer, b)
    data = _png_bomb(16000)
    assert len(data) < 200_000
    st = _good_stamp()
    msg = CompressedImage(format="png", data=data)
    msg.header.stamp = st
    peer.pub(CompressedImage, b.color_topic).publish(msg)
    # Frames are handled in order: once a later normal frame is buffered, the bomb has been dealt with.
    # (A node that decodes it blindly needs a while for 256 Mpixel; 40 s bounds that.)
    _healthy(peer, b, ask=False, timeout=40.0)
    _assert_not_buffered_as_is(peer, b, _ns(st), before, 16000 * 16000, "16000x16000 PNG bomb")
    _healthy(peer, b)


def test_8k_raw_frame_is_not_buffered_as_is(nodes, peer) -> None:
    """Issue 11: "an 8K (7680x4320) colour frame is buffered as is"."""
    from sensor_msgs.msg import Image

    a, _ = nodes
    _healthy(peer, a, ask=False)
    before = _buffered_mb(peer, a)
    h8, w8 = 4320, 7680
    st = _good_stamp()
    # The 33 MB frame comes from a camera of its own (its own DDS participant, as a driver would be), and
    # that camera then sends a normal frame: one reliable writer delivers in order, so once the normal
    # frame is listed the 8K one has been handled. A Jazzy CI run whose checking peer also wrote the 8K
    # frame got no ~/list_frames reply from that peer again, from this node or from any restarted one.
    with Peer("attack_topics_8k_camera") as camera:
        pub = camera.pub(Image, a.color_topic)
        _wait_subscribed(camera, a)  # the camera's own graph view has matched the node's subscriptions
        pub.publish(_image(h8, w8, "rgb8", w8 * 3, bytes(h8 * w8 * 3), st))
        after = _good_stamp()
        pub.publish(_rgb(after))
        peer.pub(Image, "/atk/depth").publish(_depth_msg(after))
        deadline = time.monotonic() + 60
        while _ns(after) not in {_ns(s) for s in _assert_listing(peer, a).stamps}:
            assert time.monotonic() < deadline, f"no normal frame buffered after the 8K one\n{_tail(a)}"
            time.sleep(0.25)
    _healthy(peer, a, ask=False, timeout=30.0)
    _assert_not_buffered_as_is(peer, a, _ns(st), before, h8 * w8, "8K raw frame")
    _healthy(peer, a)


def test_raw_images_whose_data_is_not_step_times_height_are_not_buffered(nodes, peer) -> None:
    """sensor_msgs/Image: "uint8[] data # actual matrix data, size is (step * rows)". Issue 11 "Wrong
    successes": "so is a colour image with extra data" [accepted]; "exact data-length checks for every
    image form"."""
    from sensor_msgs.msg import Image

    a, _ = nodes
    _healthy(peer, a, ask=False)
    pub = peer.pub(Image, a.color_topic)
    exact = H * W * 3
    cases = {
        "longer by one row": (H, W, W * 3, exact + W * 3),
        "longer by 1 byte": (H, W, W * 3, exact + 1),
        "shorter by 1 byte": (H, W, W * 3, exact - 1),
        "empty data": (H, W, W * 3, 0),
        "step < width*3": (H, W, W * 3 - 3, (W * 3 - 3) * H),
        "step 0": (H, W, 0, exact),
        "step 2^32-1": (H, W, 2**32 - 1, exact),
        "height 2^32-1": (2**32 - 1, W, W * 3, exact),
        "width 2^31, step wraps": (H, 2**31, (2**31 * 3) % 2**32, exact),
        "zero size with data": (0, 0, 0, 12),
    }
    stamps = {}
    for what, (h, w, step, n) in cases.items():
        st = _good_stamp()
        stamps[what] = _ns(st)
        pub.publish(_image(h, w, "rgb8", step, bytes(n), st))
        time.sleep(0.02)
    ok = _healthy(peer, a)  # sent after all of them: once it is buffered, the others have been handled
    listed = {_ns(s) for s in _assert_listing(peer, a).stamps}
    accepted = [what for what, ns in stamps.items() if ns in listed]
    assert ok in listed
    assert not accepted, f"malformed raw images were buffered: {accepted}"


def test_odd_encodings_do_not_kill_the_node(nodes, peer) -> None:
    """docs/ros.md: colour is rgb8, bgr8, rgba8, bgra8 or mono8; "unknown encodings ... never kill the
    node". Real encodings the node does not list, with data of the size they imply, and nonsense ones."""
    from sensor_msgs.msg import Image

    a, _ = nodes
    pub = peer.pub(Image, a.color_topic)
    real = {"mono16": 2, "rgb16": 6, "bgra16": 8, "yuv422": 2, "yuv422_yuy2": 2, "bayer_rggb8": 1,
            "bayer_bggr16": 2, "16UC1": 2, "32FC1": 4, "32FC3": 12, "64FC1": 8, "8UC3": 3, "8SC4": 4,
            "16SC2": 4, "nv21": 1, "uyvy": 2}
    # (Not "RGB8": accepting an encoding case-insensitively is lenient, not wrong. No embedded NULs: DDS
    # strings end at the first NUL, so "rgb8\x00" arrives as "rgb8".)
    nonsense = ["", "rgb8 ", " rgb8", "jpeg", "png", "ümlaut", "x" * 5000, "8UC0", "8UC999", "rgb9", "rgb"]
    stamps = {}
    for enc, bpp in real.items():
        st = _good_stamp()
        pub.publish(_image(H, W, enc, W * bpp, bytes(H * W * bpp), st))
        time.sleep(0.01)
    for enc in nonsense:
        st = _good_stamp()
        stamps[enc] = _ns(st)
        pub.publish(_image(H, W, enc, W * 3, bytes(H * W * 3), st))
        time.sleep(0.01)
    for bigendian in (1, 255):  # rgb8 flagged big-endian: 8-bit data, harmless either way
        msg = _image(H, W, "rgb8", W * 3, bytes(H * W * 3), _good_stamp())
        msg.is_bigendian = bigendian
        pub.publish(msg)
    _healthy(peer, a)
    listed = {_ns(s) for s in _assert_listing(peer, a).stamps}
    wrong = [repr(e[:20]) for e, ns in stamps.items() if ns in listed]
    assert not wrong, f"frames with a nonsense encoding were buffered: {wrong}"


def test_nan_inf_depth_and_depth_of_another_size(nodes, peer) -> None:
    """docs/ros.md: "NaN/inf depth (becomes unknown)" never kills the node; depth is "registered to
    colour", so a depth image of another size cannot be used as is."""
    from sensor_msgs.msg import Image

    a, _ = nodes
    pub_c = peer.pub(Image, a.color_topic)
    pub_d = peer.pub(Image, "/atk/depth")
    for d in (np.full((H, W), np.nan, np.float32), np.full((H, W), np.inf, np.float32),
              np.full((H, W), -np.inf, np.float32), np.full((H, W), -1.0, np.float32),
              np.full((H, W), 3.4e38, np.float32)):
        st = _good_stamp()
        pub_c.publish(_rgb(st))
        pub_d.publish(_image(H, W, "32FC1", W * 4, d.tobytes(), st))
        time.sleep(0.02)
    st = _good_stamp()
    pub_c.publish(_rgb(st))
    for h, w in ((H * 2, W * 2), (H, W + 1), (1, 1), (0, 0), (H // 2, W)):
        pub_d.publish(_image(h, w, "32FC1", w * 4, np.full((h, w), 1.0, np.float32).tobytes(), st))
        pub_d.publish(_image(h, w, "16UC1", w * 2, np.full((h, w), 1000, np.uint16).tobytes(), st))
    for enc, step, n in (("32FC1", W * 4, H * W * 4 - 1), ("32FC1", W * 4, H * W * 4 + 4),
                         ("16UC1", W * 2, 3), ("16UC1", 1, H * W * 2), ("32FC1", 0, 0)):
        pub_d.publish(_image(H, W, enc, step, bytes(n), st))
    _settle(peer, a)
    for t in nodes:
        _healthy(peer, t)


def test_camera_info_with_nan_k_and_tf_with_nan_quaternions(nodes, peer) -> None:
    """CameraInfo K with NaN/inf/zeros and TF rotations that are NaN, zero-norm or huge, on /tf and
    /tf_static: the node survives, and a spatial question about a masked region gets an answer or a
    reason (docs/ros.md "Bad input never kills the node"; "Engine exceptions are ... `internal error`")."""
    from pycocotools import mask as mask_util
    from rynnec_ros.msg import Region, RegionMask
    from rynnec_ros.srv import AskQuestion
    from sensor_msgs.msg import CameraInfo
    from tf2_msgs.msg import TFMessage

    nan, inf = float("nan"), float("inf")
    pub_i = peer.pub(CameraInfo, "/atk/info")
    for k in ([nan] * 9, [inf] * 9, [0.0] * 9, [40.0, 0, nan, 0, 40.0, inf, 0, 0, 1],
              [-40.0, 0, 16, 0, -40.0, 12, 0, 0, 0], [1e308, 0, 16, 0, 1e308, 12, 0, 0, 1]):
        pub_i.publish(_info(k=k))
        info = _info(k=[40.0, 0, 16, 0, 40.0, 12, 0, 0, 1])
        info.d = [nan] * 5
        info.p = [nan] * 12
        info.r = [inf] * 9
        pub_i.publish(info)
    pub_i.publish(_info(h=0, w=0))
    pub_i.publish(_info(h=2**32 - 1, w=2**32 - 1))
    for topic, latched in (("/tf", False), ("/tf_static", True)):
        pub = peer.pub(TFMessage, topic, latched=latched)
        for q, t in (((nan, nan, nan, nan), (0, 0, 1)), ((0, 0, 0, 0), (0, 0, 1)),
                     ((1e300, 1e300, 0, 0), (0, 0, 1)), ((0, 0, 0, 1), (nan, inf, -inf)),
                     ((inf, 0, 0, 1), (0, 0, 1))):
            pub.publish(TFMessage(transforms=[_tf("cam", "map", q, t, stamp=_good_stamp())]))
        pub.publish(TFMessage(transforms=[_tf("cam", "cam", (0, 0, 0, 1)), _tf("", "", (0, 0, 0, 1)),
                                          _tf("map", "cam", (nan, 0, 0, 1))]))
    _settle(peer, nodes[0])
    for t in nodes:
        got = _healthy(peer, t)
        mask = np.zeros((H, W), np.uint8, order="F")
        mask[8:16, 10:20] = 1
        rle = mask_util.encode(np.asfortranarray(mask))
        region = Region(object_id=1, label="box", masks=[RegionMask(
            stamp=_stamp_at(got), size=[H, W], counts=rle["counts"].decode("ascii"))])
        req = AskQuestion.Request(question="How far is <object0> from the camera?", regions=[region],
                                  frame_stamps=[_stamp_at(got)], max_new_tokens=1)
        res = peer.call(AskQuestion, t.srv("ask"), req, 60.0)
        assert res is not None, f"{t.name}: spatial ask got no response\n{_tail(t)}"
        if not res.success:
            assert res.message.strip() and not res.message.startswith("internal error"), res.message
        else:
            assert not (res.has_value and not math.isfinite(res.value)), (res.value, res.unit)
    # Restore a sane pose for the tests that follow.
    peer.pub(TFMessage, "/tf_static", latched=True).publish(
        TFMessage(transforms=[_tf("cam", "map", (0.0, 0.0, 0.0, 1.0))]))
    peer.pub(CameraInfo, "/atk/info").publish(_info())


# --------------------------------------------------------------------------------------------------
# Randomised topic fuzzer (issue 11 "Done when": ">= 1,000 messages across colour, compressed, depth,
# camera_info, TF with 0 crashes")
# --------------------------------------------------------------------------------------------------
FUZZ_MESSAGES = 1200


def _fuzz_stamp(rng):
    r = rng.random()
    if r < 0.6:
        ns = GOOD_T0_S * 10**9 + next(_good) * 100_000_000 + int(rng.integers(-10**9, 10**9))
        return _stamp_at(max(ns, 0))
    return _time(int(rng.choice([0, -1, -5, 2**31 - 1, -(2**31), int(rng.integers(-(2**31), 2**31))])),
                 int(rng.choice([0, 999_999_999, 10**9, 2**32 - 1, int(rng.integers(0, 2**32))])))


def _pick(rng, seq):
    """One element of ``seq`` (rng.choice would turn bytes/str into numpy scalars, dropping trailing NULs)."""
    return seq[int(rng.integers(0, len(seq)))]


def _fuzz_text(rng) -> str:
    return _pick(rng, ["cam", "map", "", "/", "cam\x00", "ü" * 3, "x" * 300, "a/b/c", " "])


def _fuzz_dims(rng) -> tuple[int, int]:
    if rng.random() < 0.8:
        return int(rng.integers(0, 48)), int(rng.integers(0, 48))
    wild = [0, 1, 2**16, 2**31, 2**32 - 1, int(rng.integers(0, 2**32))]
    return int(_pick(rng, wild)), int(_pick(rng, wild))


def _fuzz_image(rng, encodings: list[str]):
    h, w = _fuzz_dims(rng)
    enc = _pick(rng, encodings)
    bpp = int(rng.choice([1, 2, 3, 4, 8]))
    step = int(rng.choice([w * bpp % 2**32, 0, int(rng.integers(0, 400)), 2**32 - 1]))
    exact = h * step if h * step < 20_000 else int(rng.integers(0, 20_000))
    n = int(rng.choice([exact, max(exact - 1, 0), exact + 1, 0, int(rng.integers(0, 20_000))]))
    kind = rng.random()
    if kind < 0.3:
        data = np.frombuffer(rng.random(n // 4 + 1).astype(np.float32).tobytes(), np.uint8)[:n].copy()
        if n >= 4:
            f = data[: n // 4 * 4].view(np.float32)
            f[:: max(1, len(f) // 5)] = rng.choice([np.nan, np.inf, -np.inf])
        data = data.tobytes()
    else:
        data = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
    msg = _image(h, w, enc, step, data, _fuzz_stamp(rng), _fuzz_text(rng))
    msg.is_bigendian = int(rng.choice([0, 1, 255]))
    return msg


def _fuzz_compressed(rng):
    import cv2
    from sensor_msgs.msg import CompressedImage

    r = rng.random()
    if r < 0.25:
        h, w = int(rng.integers(1, 40)), int(rng.integers(1, 40))
        ext = _pick(rng, [".png", ".jpg"])
        data = cv2.imencode(ext, rng.integers(0, 256, (h, w, 3), dtype=np.uint8))[1].tobytes()
        if rng.random() < 0.5:
            data = data[: int(rng.integers(0, len(data)))]
        elif rng.random() < 0.5:
            arr = bytearray(data)
            for _ in range(int(rng.integers(1, 10))):
                arr[int(rng.integers(0, len(arr)))] = int(rng.integers(0, 256))
            data = bytes(arr)
    elif r < 0.45:
        # Header claims: small, or far beyond any decoder's pixel limit (never in between, so a node that
        # still decodes blindly does not allocate gigabytes here -- the bomb test covers that).
        side = lambda: int(rng.choice([int(rng.integers(1, 2048)), 0, 65500, 65535]))  # noqa: E731
        data = _sof0_jpeg(side(), side()) if rng.random() < 0.5 else _jpeg_claiming(side(), side())
    elif r < 0.6:
        hh, ww = (int(rng.choice([1, 7, 2048, 70000, 2**31 - 1, 2**32 - 1])) for _ in range(2))
        ihdr = struct.pack(">IIBBBBB", ww, hh, _pick(rng, [1, 8, 16, 3]), _pick(rng, [0, 2, 3, 6, 7]),
                           0, 0, _pick(rng, [0, 1]))
        data = (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", ihdr)
                + _png_chunk(b"IDAT", zlib.compress(b"\x00" * int(rng.integers(0, 5000))))
                + _png_chunk(b"IEND", b""))
    else:
        data = rng.integers(0, 256, int(rng.integers(0, 3000)), dtype=np.uint8).tobytes()
        if rng.random() < 0.5:
            data = _pick(rng, [b"\xff\xd8", b"\x89PNG\r\n\x1a\n", b"II*\x00", b"BM"]) + data
    fmt = _pick(rng, ["jpeg", "png", "", "rgb8; jpeg compressed bgr8", "16UC1; compressedDepth png",
                          "tiff", "bgr8; png compressed rgb16", "\x00"])
    msg = CompressedImage(format=fmt, data=data)
    msg.header.stamp = _fuzz_stamp(rng)
    msg.header.frame_id = _fuzz_text(rng)
    return msg


def _fuzz_float(rng) -> float:
    return float(_pick(rng, [0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, 1e308, -1e-308, rng.normal() * 100]))


def _fuzz_info(rng):
    from sensor_msgs.msg import CameraInfo

    h, w = _fuzz_dims(rng)
    msg = CameraInfo(height=h, width=w)
    msg.k = [_fuzz_float(rng) if rng.random() < 0.5 else v
             for v in [40.0, 0.0, 16.0, 0.0, 40.0, 12.0, 0.0, 0.0, 1.0]]
    msg.d = [_fuzz_float(rng) for _ in range(int(rng.integers(0, 20)))]
    msg.distortion_model = _pick(rng, ["plumb_bob", "rational_polynomial", "equidistant", "", "??"])
    msg.r = [_fuzz_float(rng) for _ in range(9)]
    msg.p = [_fuzz_float(rng) for _ in range(12)]
    msg.binning_x, msg.binning_y = int(rng.integers(0, 2**32)), int(rng.choice([0, 1, 2**32 - 1]))
    msg.roi.x_offset, msg.roi.width = int(rng.integers(0, 2**32)), int(rng.integers(0, 2**32))
    msg.header.stamp = _fuzz_stamp(rng)
    msg.header.frame_id = _fuzz_text(rng)
    return msg


def _fuzz_tf(rng):
    from tf2_msgs.msg import TFMessage

    frames = ["cam", "map", "odom", "base", "", "/", "cam\x00", "x" * 300]
    trs = []
    for _ in range(int(rng.integers(0, 6))):
        q = [_fuzz_float(rng) for _ in range(4)] if rng.random() < 0.5 else list(rng.normal(size=4))
        t = [_fuzz_float(rng) for _ in range(3)]
        trs.append(_tf(_pick(rng, frames), _pick(rng, frames), q, t, stamp=_fuzz_stamp(rng)))
    return TFMessage(transforms=trs)


def test_randomised_topic_fuzzer_never_kills_the_node(nodes, peer) -> None:
    from sensor_msgs.msg import CameraInfo, CompressedImage, Image
    from tf2_msgs.msg import TFMessage

    a, b = nodes
    rng = np.random.default_rng(11)
    colour_encs = ["rgb8", "bgr8", "rgba8", "bgra8", "mono8", "mono16", "yuv422", "", "32FC1", "junk"]
    depth_encs = ["16UC1", "32FC1", "mono16", "8UC1", "64FC1", "", "rgb8"]
    kinds = ["colour", "compressed", "depth", "info", "tf", "tf_static"]
    counts = dict.fromkeys(kinds, 0)
    deadline = time.monotonic() + 60.0
    for i in range(FUZZ_MESSAGES):
        kind = kinds[int(rng.choice(len(kinds), p=[0.25, 0.2, 0.2, 0.15, 0.15, 0.05]))]
        if kind == "colour":
            peer.pub(Image, a.color_topic).publish(_fuzz_image(rng, colour_encs))
        elif kind == "compressed":
            peer.pub(CompressedImage, b.color_topic).publish(_fuzz_compressed(rng))
        elif kind == "depth":
            peer.pub(Image, "/atk/depth").publish(_fuzz_image(rng, depth_encs))
        elif kind == "info":
            peer.pub(CameraInfo, "/atk/info").publish(_fuzz_info(rng))
        else:
            peer.pub(TFMessage, "/" + kind, latched=kind == "tf_static").publish(_fuzz_tf(rng))
        counts[kind] += 1
        time.sleep(0.002)
        if i % 200 == 199:
            for t in nodes:
                assert t.proc.alive(), f"{t.name} died after {i + 1} fuzz messages {counts}:\n{_tail(t)}"
        assert time.monotonic() < deadline, f"fuzzer too slow: {i} messages in 60 s"
    assert sum(counts.values()) >= 1000, counts
    time.sleep(1.0)
    for t in nodes:
        _healthy(peer, t)
    peer.pub(TFMessage, "/tf_static", latched=True).publish(
        TFMessage(transforms=[_tf("cam", "map", (0.0, 0.0, 0.0, 1.0))]))
    peer.pub(CameraInfo, "/atk/info").publish(_info())


def test_nodes_alive_and_no_traceback_at_the_end(nodes, peer) -> None:
    for t in nodes:
        _healthy(peer, t)
        assert "Traceback" not in t.proc.output(), _tail(t)


# --------------------------------------------------------------------------------------------------
# 4. One bad stamp does not wipe the buffer (node A, default time-jump parameters: time_jump_back_s 1,
#    time_jump_forward_s 0 = never, buffer_max_age_s 300)
# --------------------------------------------------------------------------------------------------
@pytest.fixture
def stamp_node(nodes):
    return nodes[0]


def _stream(peer, t: _Target, stamps_ns: list[int]) -> None:
    from sensor_msgs.msg import Image

    pub = peer.pub(Image, t.color_topic)
    for ns in stamps_ns:
        pub.publish(_rgb(_stamp_at(ns)))
        time.sleep(0.02)


def _wait_listed(peer, t: _Target, want: set[int], timeout: float = 10.0) -> set[int]:
    deadline = time.monotonic() + timeout
    while True:
        listed = {_ns(s) for s in _assert_listing(peer, t).stamps}
        if want <= listed or time.monotonic() > deadline:
            return listed
        time.sleep(0.1)


_timeline = itertools.count()


@pytest.mark.parametrize("offset_s,forward_s", [(1e6, 0.0), (1e6, 5.0), (-1e6, 0.0)])
def test_one_outlier_stamp_does_not_wipe_the_buffer(stamp_node, peer, offset_s, forward_s) -> None:
    """Issue 11: "A single frame stamped far in the future resets a 49-frame buffer (jump forward), and the
    next normal frame resets it again (jump back): a clock glitch on one message costs the whole window.
    Decide on evidence (several consecutive frames, or /clock), and keep the good frames." """
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters

    t = stamp_node
    value = ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=forward_s)
    req = SetParameters.Request(parameters=[Parameter(name="time_jump_forward_s", value=value)])
    res = peer.call(SetParameters, t.srv("set_parameters"), req, 10)
    assert res is not None and res.results[0].successful
    # Each case on its own timeline, later than every earlier one (2e6 s: room for a -1e6 s outlier). A
    # lead-in of 20 frames first: a node may want several consecutive frames before it follows a new
    # timeline (issue 11: "Decide on evidence"); the 20 good frames after it must then all be buffered.
    base = (2_000_000 + 1000 * next(_timeline)) * 10**9
    lead = [base + i * 100_000_000 for i in range(20)]
    good = [base + (20 + i) * 100_000_000 for i in range(20)]
    try:
        _stream(peer, t, lead)
        _wait_listed(peer, t, {lead[-1]})
        _stream(peer, t, good)
        listed = _wait_listed(peer, t, set(good))
        assert set(good) <= listed, f"precondition: 20 frames of a new timeline buffered; missing " \
                                    f"{sorted(set(good) - listed)[:5]}\n{_tail(t)}"
        _outlier_case(peer, t, good, offset_s)
    finally:
        zero = ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=0.0)
        req = SetParameters.Request(parameters=[Parameter(name="time_jump_forward_s", value=zero)])
        peer.call(SetParameters, t.srv("set_parameters"), req, 10)


def _outlier_case(peer, t: _Target, good: list[int], offset_s: float) -> None:
    resets0 = _list(peer, t).resets
    outlier = good[-1] + 50_000_000 + int(offset_s * 10**9)
    after = [good[-1] + (i + 1) * 100_000_000 for i in range(5)]
    _stream(peer, t, [outlier])
    _stream(peer, t, after)
    listed = _wait_listed(peer, t, {after[-1]})
    res = _list(peer, t)
    assert after[-1] in listed, f"normal frames after the outlier not buffered; buffer {sorted(listed)[:3]}"
    lost = sorted(set(good) - listed)
    assert not lost, (f"one frame stamped {offset_s:+g} s wiped {len(lost)} of 20 good frames "
                      f"(resets {resets0} -> {res.resets})")


def test_a_genuine_jump_of_many_frames_is_followed(stamp_node, peer) -> None:
    """docs/ros.md "Time jumps": a looping bag / restarted simulator starts a new timeline; after many
    consecutive frames on it, the node buffers them (it may reset)."""
    t = stamp_node
    base = 50_000 * 10**9  # far behind every timeline above: a genuine jump back
    frames = [base + i * 100_000_000 for i in range(25)]
    _stream(peer, t, frames)
    listed = _wait_listed(peer, t, set(frames[-3:]))
    assert set(frames[-3:]) <= listed, f"new timeline not followed after 25 frames\n{_tail(t)}"
    assert t.proc.alive()
