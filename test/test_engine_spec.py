"""The engine's options are defined once (``model/spec.py``) and every entry point reads that definition.

What a node parameter, a command-line flag and a Python keyword mean is checked here against the spec's own
fields, so a new option cannot be added to one entry point and forgotten in another; the refusals' rules
are the ones docs/ros.md states for the parameters (onnxruntime needs onnx_dir, tensorrt needs engine_dir
and a cuda device, remote needs server_url, ort_provider only with onnxruntime).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from rynnec_ros.cli import build_parser
from rynnec_ros.model.spec import CHECKS, EngineSpec
from rynnec_ros.ros.params import ENGINE_PARAMS, PARAM_BY_NAME, engine_spec

DEFAULTS = EngineSpec(checkpoint="/ck")
FIELDS = {f.name for f in dataclasses.fields(EngineSpec)}


def test_every_engine_parameter_of_the_node_is_a_spec_option_with_its_default_and_check() -> None:
    assert set(ENGINE_PARAMS) <= FIELDS and set(ENGINE_PARAMS) <= set(PARAM_BY_NAME)
    assert set(CHECKS) == FIELDS
    for name in ENGINE_PARAMS:
        p = PARAM_BY_NAME[name]
        assert p.check is CHECKS[name], name
        if name != "checkpoint":
            assert p.default == getattr(DEFAULTS, name), name
        assert p.live is False, name  # the engine is built on configure
    # the node's parameters build exactly the spec they name
    values = {p: PARAM_BY_NAME[p].default for p in ENGINE_PARAMS}
    spec = engine_spec({**values, "checkpoint": "/ck", "backend": "onnxruntime", "onnx_dir": "/o"}, "tok")
    assert (spec.backend, spec.onnx_dir, spec.server_token) == ("onnxruntime", "/o", "tok")


@pytest.mark.parametrize(
    ("argv", "changed"),
    [
        (["infer", "--frames", "f.png", "--question", "q", "--checkpoint", "/ck"], {}),
        (["eval", "embspatial", "--data", "d", "--out", "o", "--checkpoint", "/ck"], {}),
        (["serve", "--checkpoint", "/ck"], {"cache_mb": 4096.0}),  # one cache for all robots
        # the published figures' thread count
        (["bench", "engine", "--checkpoint", "/ck", "--out", "o"], {"threads": 2}),
    ],
)
def test_each_command_offers_the_spec_flags_with_the_spec_defaults(argv: list[str], changed: dict) -> None:
    args = build_parser().parse_args(argv)
    assert EngineSpec.from_args(args) == dataclasses.replace(DEFAULTS, **changed)


def test_the_same_flag_sets_the_same_option_everywhere() -> None:
    for argv in (["infer", "--frames", "f", "--question", "q"], ["serve"], ["bench", "engine", "--out", "o"],
                 ["eval", "embspatial", "--data", "d", "--out", "o"]):
        args = build_parser().parse_args([*argv, "--checkpoint", "/ck", "--backend", "onnxruntime",
                                          "--onnx-dir", "/o", "--provider", "cpu", "--dtype", "float16",
                                          "--max-visual-tokens", "4096", "--cache-mb", "0"])
        spec = EngineSpec.from_args(args)
        assert (spec.backend, spec.onnx_dir, spec.ort_provider, spec.dtype) == ("onnxruntime", "/o", "cpu",
                                                                                "float16"), argv
        assert (spec.max_visual_tokens, spec.cache_mb) == (4096, 0.0), argv


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"backend": "tflite"}, "backend must be one of torch, onnxruntime, tensorrt, remote"),
        ({"checkpoint": ""}, "checkpoint is empty: backend torch loads a checkpoint directory"),
        ({"backend": "onnxruntime"}, "backend onnxruntime needs onnx_dir"),
        ({"backend": "tensorrt", "engine_dir": "/e"}, "backend tensorrt needs device cuda or cuda:N"),
        ({"backend": "tensorrt", "device": "cuda"}, "backend tensorrt needs engine_dir"),
        ({"backend": "remote", "checkpoint": ""}, "backend remote needs server_url"),
        ({"ort_provider": "cuda"}, "ort_provider applies to backend onnxruntime only, but backend is torch"),
        ({"device": "gpu"}, "device must be cpu, cuda or cuda:N"),
        ({"threads": 2.0}, "threads must be of type int, got float"),
        ({"cache_mb": float("nan")}, "cache_mb must be a finite number"),
        ({"server_request_timeout_s": 0.0}, "server_request_timeout_s must be in (0, 3600.0]"),
        ({"onnx_dir": "/o\n"}, "onnx_dir must not contain control characters"),
    ],
)
def test_a_spec_that_cannot_load_is_refused_with_the_reason(changes: dict, reason: str) -> None:
    with pytest.raises(ValueError) as err:
        dataclasses.replace(DEFAULTS, **changes)
    assert str(err.value) == reason or str(err.value).startswith(reason), str(err.value)


def test_accepted_forms_are_normalised_and_the_token_never_shown(tmp_path: Path) -> None:
    ok = [{"backend": "onnxruntime", "onnx_dir": "/o", "ort_provider": "tensorrt"},
          {"backend": "tensorrt", "engine_dir": "/e", "device": "cuda:1"},
          {"backend": "remote", "checkpoint": "", "server_url": "site:8001"}]
    for changes in ok:
        dataclasses.replace(DEFAULTS, **changes)
    spec = EngineSpec(checkpoint=tmp_path, cache_mb=512)  # type: ignore[arg-type]  # a Path, an int
    assert spec.checkpoint == str(tmp_path) and spec.cache_mb == 512.0 and type(spec.cache_mb) is float
    remote = EngineSpec(backend="remote", server_url="site:8001", server_token="s3cret")
    assert "s3cret" not in repr(remote)
    with pytest.raises(dataclasses.FrozenInstanceError):
        remote.backend = "torch"  # type: ignore[misc]


def test_the_site_token_comes_from_a_file_or_the_environment_not_a_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = tmp_path / "token"
    token.write_text("from-file\n")
    os.chmod(token, 0o600)
    base = ["infer", "--frames", "f", "--question", "q", "--backend", "remote", "--server-url", "site:8001"]
    args = build_parser().parse_args([*base, "--server-token-file", str(token)])
    assert EngineSpec.from_args(args).server_token == "from-file"
    monkeypatch.setenv("RYNNEC_SERVER_TOKEN", "from-env")
    assert EngineSpec.from_args(build_parser().parse_args(base)).server_token == "from-env"
    infer = build_parser()._subparsers._group_actions[0].choices["infer"]  # type: ignore[union-attr]
    assert "server_token" not in {a.dest for a in infer._actions}  # no such flag: `ps` shows command lines
