"""The same engine API on the onnxruntime backend as on torch: ids, text, masks and scores agree."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rynnec_ros.model.backends import load_engine

from ..model.conftest import Case, request
from .conftest import CHECKPOINT, load_case


@pytest.fixture(scope="module")
def engines(onnx_dir: Path):
    return (
        load_engine(CHECKPOINT, backend="torch"),
        load_engine(CHECKPOINT, backend="onnxruntime", onnx_dir=onnx_dir, threads=2),
    )


def test_every_graph_runs_on_the_provider_asked_for(engines) -> None:
    _, ort_engine = engines
    assert ort_engine.info.backend == "onnxruntime"
    assert len(ort_engine.info.graph_providers) == 9
    assert set(ort_engine.info.graph_providers.values()) == {"CPUExecutionProvider"}
    assert len(ort_engine.model.model.layers) == 0  # torch decoder weights were released
    # on the CPU provider the fused export (GroupQueryAttention) decodes; the ids below stay torch's
    assert ort_engine.decoder.fused and ort_engine.decoder.decode.path.name == "llm_decode_gqa.onnx"


def test_graph_decoder_writes_the_cache_in_place(engines) -> None:
    """The decode graph reads the cached rows and writes the new ones where they lie in the engine's
    buffer: after a 9-token prefill and two steps the buffers are the same objects, and their rows equal
    the torch decoder's (the checkpoint's own Qwen2 modules with SDPA), position for position."""
    import torch

    x = torch.randn(1, 9, 64, generator=torch.Generator().manual_seed(5))
    caches = []
    for e in engines:
        cache = e.decoder.new_cache(16)
        pointers = (cache.k.data_ptr(), cache.v.data_ptr())
        with torch.inference_mode():
            e.decoder.forward(x, cache)
            for step in range(2):
                pos, span = torch.tensor([cache.length]), cache.length + 1
                e.decoder.decode_step(x[:, step : step + 1], pos, cache, span, False)
                cache.length += 1
        assert (cache.k.data_ptr(), cache.v.data_ptr()) == pointers and cache.length == 11
        caches.append(cache)
    t, o = caches
    torch.testing.assert_close(o.k[:, :, :11], t.k[:, :, :11], rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(o.v[:, :, :11], t.v[:, :, :11], rtol=1e-4, atol=1e-5)
    assert not o.k[:, :, 11:].any()  # nothing written past the valid positions


def test_greedy_answer_matches_torch_and_upstream(engines) -> None:
    meta, frames, _ = load_case("a1_video_qa_224x168")
    answers = [
        e.answer(request(frames, meta["question"], max_new_tokens=meta["max_new_tokens"])) for e in engines
    ]
    assert answers[1].token_ids == answers[0].token_ids == meta["generated_ids"]
    assert answers[1].text == answers[0].text


def test_an_onnxruntime_older_than_the_fused_kernel_needs_decodes_through_the_plain_graph(
    onnx_dir: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """ONNX Runtime 1.19.2 runs llm_decode_gqa but its hidden states differ from transformers' Qwen2Model
    (test_fused_decode_graph_extends_the_bound_cache_in_place fails there; 1.20.1 passes, measured with
    both wheels): below 1.20 the CPU provider must take the plain graph. Only the version string is faked;
    the greedy ids are still the upstream fixture's."""
    import onnxruntime

    monkeypatch.setattr(onnxruntime, "__version__", "1.19.2")
    with caplog.at_level("WARNING"):
        old = load_engine(CHECKPOINT, backend="onnxruntime", onnx_dir=onnx_dir, threads=2)
    assert not old.decoder.fused and old.decoder.decode.path.name == "llm_decode.onnx"
    assert "onnxruntime 1.19.2 is older than 1.20" in caplog.text
    meta, frames, _ = load_case("a1_video_qa_224x168")
    got = old.answer(request(frames, meta["question"], max_new_tokens=meta["max_new_tokens"]))
    assert got.token_ids == meta["generated_ids"]


def test_region_answer_matches_torch(engines) -> None:
    case = Case("b1_region_qa_224x168")
    meta = case.meta
    t, o = (e.answer(case.request(max_new_tokens=meta["max_new_tokens"])) for e in engines)
    assert o.token_ids == t.token_ids == meta["generated_ids"]


def test_segmentation_masks_match_torch(engines) -> None:
    """a1's question makes the tiny model emit [SEG] by itself, so segment() runs SAM2 end to end."""
    meta, frames, _ = load_case("a1_video_qa_224x168")
    t, o = (e.segment(request(frames, meta["question"], max_new_tokens=12)) for e in engines)
    assert t.masks is not None and o.masks is not None
    assert o.token_ids == t.token_ids
    for mt, mo in zip(t.masks, o.masks, strict=True):
        assert mt.shape == mo.shape == frames[0].shape[:2]
        assert 0.05 < mt.mean() < 0.95  # a real mask, not empty or full
        assert np.mean(mt != mo) <= 1e-3  # logits within float32 noise of the 0.5 threshold only
    np.testing.assert_allclose(o.mask_scores, t.mask_scores, atol=1e-4)


def test_teacher_forced_seg_embedding_and_sam2_match_torch(engines) -> None:
    meta, frames, _ = load_case("c1_seg_224x168")
    outs = []
    for e in engines:
        prep = e.prepare(request(frames, meta["question"]))
        gen = e.generate(prep, len(meta["forced_ids"]), force_ids=meta["forced_ids"])
        seg = e.seg_embeddings(prep, gen)
        dec = e.sam2_decode(frames[0], ("c1", 0), seg[0])
        outs.append((seg, dec))
    (seg_t, dec_t), (seg_o, dec_o) = outs
    np.testing.assert_allclose(seg_o.numpy(), seg_t.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(dec_o.lowres_logits.numpy(), dec_t.lowres_logits.numpy(), rtol=1e-3, atol=1e-3)
    assert dec_o.best_index == dec_t.best_index == meta["sam_best_mask_index"][0]


def test_option_scores_match_torch(engines) -> None:
    _, frames, _ = load_case("a1_video_qa_224x168")
    options = ["red", "a blue cup", "yes"]
    t, o = (e.score_options(request(frames, "<video>\nWhich one?", options=options)) for e in engines)
    np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-4)


def test_bad_backend_arguments_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="backend must be one of torch, onnxruntime, tensorrt, remote"):
        load_engine(CHECKPOINT, backend="tflite")
    with pytest.raises(ValueError, match="needs onnx_dir"):
        load_engine(CHECKPOINT, backend="onnxruntime")
    with pytest.raises(ValueError, match="needs engine_dir"):
        load_engine(CHECKPOINT, backend="tensorrt")
    with pytest.raises(FileNotFoundError, match=r"manifest\.json"):
        load_engine(CHECKPOINT, backend="onnxruntime", onnx_dir=tmp_path)


def test_partial_export_is_rejected(tmp_path: Path) -> None:
    from rynnec_ros.model.export.onnx_export import export_onnx

    export_onnx(CHECKPOINT, tmp_path, graphs=["vision", "projector"])
    with pytest.raises(ValueError, match="lacks graphs"):
        load_engine(CHECKPOINT, backend="onnxruntime", onnx_dir=tmp_path)


def _poisoned_copy(tmp: Path) -> Path:
    """CHECKPOINT with every tensor NaN except the token embedding and the SAM2 prompt encoder.

    Those two (plus ``no_mem_embed``) are what onnx_export.py's docstring says stays outside the graphs;
    a backend that still read any other tensor from the checkpoint would answer with NaN logits.
    """
    import shutil

    import torch
    from safetensors.torch import load_file, save_file

    out = tmp / "poisoned"
    shutil.copytree(CHECKPOINT, out)
    host = ("model.embed_tokens.", "grounding_encoder.sam2_model.sam_prompt_encoder.",
            "grounding_encoder.sam2_model.no_mem_embed")
    state = load_file(str(CHECKPOINT / "model.safetensors"))
    poisoned = {
        k: v if k.startswith(host) or not v.is_floating_point() else torch.full_like(v, float("nan"))
        for k, v in state.items()
    }
    save_file(poisoned, str(out / "model.safetensors"), metadata={"format": "pt"})
    return out


def test_graph_backend_reads_only_the_host_tensors(engines, onnx_dir: Path, tmp_path: Path) -> None:
    """ORT configure does not build the torch model: graph weights come from the export alone."""
    poisoned = load_engine(_poisoned_copy(tmp_path), backend="onnxruntime", onnx_dir=onnx_dir, threads=2)
    held = {n for n, _ in poisoned.model.named_parameters()}
    assert held == {
        "model.embed_tokens.weight",
        "grounding_encoder.sam2_model.sam_prompt_encoder.not_a_point_embed.weight",
        "grounding_encoder.sam2_model.sam_prompt_encoder.no_mask_embed.weight",
        "grounding_encoder.sam2_model.no_mem_embed",
        *(f"grounding_encoder.sam2_model.sam_prompt_encoder.point_embeddings.{i}.weight" for i in range(4)),
    }
    meta, frames, _ = load_case("a1_video_qa_224x168")
    a = poisoned.segment(request(frames, meta["question"], max_new_tokens=12))
    b = engines[1].segment(request(frames, meta["question"], max_new_tokens=12))
    assert a.token_ids == b.token_ids
    assert a.masks is not None and b.masks is not None
    for ma, mb in zip(a.masks, b.masks, strict=True):
        np.testing.assert_array_equal(ma, mb)


def test_graph_backend_still_checks_every_key(onnx_dir: Path, tmp_path: Path) -> None:
    """Shapes of the tensors it does not read are checked from the safetensors headers."""
    import shutil

    import torch
    from safetensors.torch import load_file, save_file

    bad = tmp_path / "bad"
    shutil.copytree(CHECKPOINT, bad)
    state = load_file(str(CHECKPOINT / "model.safetensors"))
    key = "model.layers.0.mlp.down_proj.weight"
    state[key] = torch.zeros(state[key].shape[0], state[key].shape[1] + 1)
    save_file(state, str(bad / "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(ValueError, match=r"model\.layers\.0\.mlp\.down_proj\.weight"):
        load_engine(bad, backend="onnxruntime", onnx_dir=onnx_dir, threads=2)


def test_decode_graph_prefills_like_the_prefill_graph(onnx_dir: Path) -> None:
    """ONNX Runtime prefills through llm_decode with an empty past (one copy of the LLM weights); the
    exported prefill graph is the reference: same hidden states and new K/V rows, to the bit."""
    from rynnec_ros.model.backends.ort import OrtGraph
    from rynnec_ros.model.export.llm import kv_names

    prefill, decode = OrtGraph(onnx_dir / "llm_prefill.onnx"), OrtGraph(onnx_dir / "llm_decode.onnx")
    hidden = prefill.session.get_inputs()[0].shape[2]
    x = np.random.default_rng(0).standard_normal((1, 37, hidden)).astype(np.float32)
    pos = np.arange(37, dtype=np.int64)[None]
    ref = prefill.run_numpy({"inputs_embeds": x, "position_ids": pos})
    empty = {n: np.zeros((0, 16), np.float32) for n in kv_names("past", 2, 2)}
    got = decode.run_numpy({"inputs_embeds": x, "position_ids": pos, **empty})
    assert set(got) == set(ref)
    for name in ref:
        np.testing.assert_array_equal(got[name], ref[name])


def test_configure_memory_bench_reports_what_each_backend_holds(onnx_dir: Path) -> None:
    """``bench configure``: one fresh process per backend. The torch parameters an engine holds are
    checked against the checkpoint's own file: everything (torch) or the host tensors only (ORT)."""
    from safetensors import safe_open

    from rynnec_ros.bench.configure_bench import configure_memory
    from rynnec_ros.model.spec import EngineSpec

    host = ("model.embed_tokens.", "grounding_encoder.sam2_model.sam_prompt_encoder.not_a_point_embed",
            "grounding_encoder.sam2_model.sam_prompt_encoder.no_mask_embed",
            "grounding_encoder.sam2_model.sam_prompt_encoder.point_embeddings",
            "grounding_encoder.sam2_model.no_mem_embed")
    with safe_open(str(CHECKPOINT / "model.safetensors"), framework="pt") as f:
        sizes = {k: f.get_tensor(k).nbytes for k in f.keys()}  # noqa: SIM118
    host_mb = sum(v for k, v in sizes.items() if k.startswith(host)) / 2**20
    out = configure_memory({
        "torch": EngineSpec(str(CHECKPOINT)),
        "onnxruntime": EngineSpec(str(CHECKPOINT), backend="onnxruntime", onnx_dir=str(onnx_dir)),
    })
    rows = out["backends"]
    assert rows["onnxruntime"]["torch_parameters_held_mb"] == pytest.approx(host_mb, rel=1e-6)
    assert rows["torch"]["torch_parameters_held_mb"] > 10 * host_mb
    assert set(rows["onnxruntime"]["graph_providers"].values()) == {"CPUExecutionProvider"}
    for row in rows.values():
        assert row["peak_rss_mb"] >= row["rss_after_load_mb"] > 0 < row["baseline_rss_mb"]
        assert row["first_answer_peak_mb"] >= row["load_peak_mb"] >= 0
