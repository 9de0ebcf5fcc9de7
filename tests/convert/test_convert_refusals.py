"""Every refusal of `recipecli convert`: exit 2, one line naming the file, no OUT left behind."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers.convert import TARGET_CONFIG, config_of, tiny, write_draft, write_target

from recipecli.testing.specs import valid_vocab_map


def _main(args: list[str], capsys) -> tuple[int, str]:
    from recipecli.cli import main

    with pytest.raises(SystemExit) as exc:
        main(args)
    cap = capsys.readouterr()
    return exc.value.code, cap.err


def _refused(args: list[str], capsys, *needles: str) -> str:
    code, err = _main(args, capsys)
    assert code == 2, err
    lines = [x for x in err.splitlines() if x.startswith("recipecli: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def a_draft(tmp_path: Path, fixture_config) -> Path:
    cfg = tiny(fixture_config("SafeAILab__EAGLE3-traineagle3-config"))
    d2t, t2d = valid_vocab_map(1000, 100, seed=1)
    return write_draft(tmp_path / "A", cfg, d2t=d2t, t2d=t2d)


@pytest.fixture
def b_draft(tmp_path: Path, fixture_config) -> Path:
    cfg = tiny(fixture_config("sgl-project-SpecForge-template__gpt-oss-120B-eagle3"))
    d2t, t2d = valid_vocab_map(1000, 100, seed=2)
    return write_draft(tmp_path / "B", cfg, d2t=d2t, t2d=t2d)


def _edit(root: Path, **changes) -> Path:
    cfg = config_of(root)
    for k, v in changes.items():
        if v is None:
            cfg.pop(k, None)
        else:
            cfg[k] = v
    (root / "config.json").write_text(json.dumps(cfg))
    return root


def _spec_args(src: Path, out: Path, target: Path, *extra: str) -> list[str]:
    return ["convert", str(src), str(out), "--to", "speculators", "--target", str(target), *extra]


def test_not_an_eagle3_draft(tmp_path, target, capsys, fixture_config):
    src = tmp_path / "plain"
    write_draft(src, tiny(fixture_config("SafeAILab__EAGLE3-traineagle3-config")))
    _edit(src, draft_vocab_size=None)  # a one-layer Llama without draft_vocab_size: not EAGLE3
    out = tmp_path / "out"
    _refused(_spec_args(src, out, target), capsys, str(src), "not an EAGLE3 draft")
    assert not out.exists()


def test_config_only_source_has_no_weights(tmp_path, a_draft, target, capsys):
    out = tmp_path / "out"
    cfg_file = a_draft / "config.json"
    _refused(
        _spec_args(cfg_file, out, target, "--norm-before-residual", "false"),
        capsys,
        str(cfg_file),
        "local disk",
    )


def test_unknown_aux_convention_refused_then_flag_resolves(
    tmp_path, target, capsys, fixture_config
):
    # nebius: one-layer Llama with truncated_vocab_size; its id convention is not known
    cfg = tiny(fixture_config("SafeAILab__EAGLE3-traineagle3-config"))
    del cfg["draft_vocab_size"]
    cfg |= {"truncated_vocab_size": 1000, "eagle_aux_hidden_state_layer_ids": [2, 16, 29]}
    src = write_draft(tmp_path / "nebius", cfg)
    out = tmp_path / "out"
    args = _spec_args(src, out, target, "--norm-before-residual", "false")
    _refused(args, capsys, str(src), "--aux-id-convention")
    assert not out.exists()
    code, err = _main(args + ["--aux-id-convention", "layer-output"], capsys)
    assert code == 0, err
    assert config_of(out)["eagle_aux_hidden_state_layer_ids"] == [3, 17, 30]


def test_aux_ids_need_a_convention(tmp_path, a_draft, target, capsys):
    args = _spec_args(a_draft, tmp_path / "o", target, "--norm-before-residual", "false")
    _refused(args + ["--aux-ids", "1,2,3"], capsys, "--aux-id-convention")


def test_bad_aux_ids_text(tmp_path, a_draft, target, capsys):
    args = _spec_args(a_draft, tmp_path / "o", target, "--norm-before-residual", "false")
    _refused(
        args + ["--aux-ids", "1,x", "--aux-id-convention", "hidden-state"], capsys, "--aux-ids"
    )


def test_aux_ids_conflicting_with_the_draft(tmp_path, b_draft, target, capsys):
    out = tmp_path / "out"
    # the B draft's [1, 17, 33] are layer-output = hidden states [2, 18, 34]
    base = _spec_args(b_draft, out, target, "--norm-before-residual", "false")
    same = ["--aux-ids", "2,18,34", "--aux-id-convention", "hidden-state"]
    code, err = _main(base + same, capsys)
    assert code == 0, err
    out2 = tmp_path / "out2"
    base2 = _spec_args(b_draft, out2, target, "--norm-before-residual", "false")
    clash = ["--aux-ids", "1,17,33", "--aux-id-convention", "hidden-state"]
    _refused(base2 + clash, capsys, str(b_draft), "hidden states [2, 18, 34]", "--force")
    assert not out2.exists()
    code, err = _main(base2 + clash + ["--force"], capsys)
    assert code == 0, err
    assert config_of(out2)["eagle_aux_hidden_state_layer_ids"] == [1, 17, 33]
    assert "aux ids overridden" in err


def test_aux_id_count_must_match_fc(tmp_path, b_draft, target, capsys):
    _edit(b_draft, eagle_config={"eagle_aux_hidden_state_layer_ids": [1, 17]})
    args = _spec_args(b_draft, tmp_path / "o", target, "--norm-before-residual", "false")
    _refused(args, capsys, str(b_draft), "2 aux ids", "fc takes 3")


def test_no_aux_ids_with_a_non_default_fc_width(tmp_path, target, capsys, fixture_config):
    cfg = tiny(fixture_config("SafeAILab__EAGLE3-traineagle3-config"))
    d2t, t2d = valid_vocab_map(1000, 100, seed=3)
    src = write_draft(tmp_path / "A4", cfg, d2t=d2t, t2d=t2d, k=4)  # fc [64, 256]
    args = _spec_args(src, tmp_path / "o", target, "--norm-before-residual", "false")
    _refused(args, capsys, str(src), "fc takes 4", "--aux-ids")


def test_hidden_state_zero_cannot_be_written_as_layer_output(tmp_path, target, capsys, b_draft):
    _edit(b_draft, eagle_config={"eagle_aux_hidden_state_layer_ids": [-1, 17, 33]})
    args = ["convert", str(b_draft), str(tmp_path / "o"), "--to", "eagle3"]
    # -1 layer-output = hidden state 0 (the embeddings); eagle3 output cannot say that
    _refused(args, capsys, str(b_draft), "index 0")


def test_norm_before_residual_unknown_for_speculators(tmp_path, a_draft, target, capsys):
    out = tmp_path / "out"
    _refused(_spec_args(a_draft, out, target), capsys, str(a_draft), "--norm-before-residual")
    assert not out.exists()


def test_norm_before_residual_flag_contradicting_the_draft(tmp_path, a_draft, target, capsys):
    _edit(a_draft, norm_before_residual=True)
    args = _spec_args(a_draft, tmp_path / "o", target, "--norm-before-residual", "false")
    _refused(args, capsys, str(a_draft), "contradicts")


def test_specforge_norm_output_false_is_not_expressible(tmp_path, b_draft, target, capsys):
    _edit(b_draft, norm_output=False)
    args = _spec_args(b_draft, tmp_path / "o", target, "--norm-before-residual", "false")
    _refused(args, capsys, str(b_draft), "norm_output false")


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        ({"norm_before_residual": True}, "norm_before_residual true"),
        ({"target_hidden_size": 128}, "target_hidden_size 128 != hidden_size 64"),
    ],
)
def test_tokenspeed_unservable_eagle3_refused_unless_force(
    tmp_path, capsys, fixture_config, edit, needle
):
    cfg = tiny(fixture_config("SafeAILab__EAGLE3-traineagle3-config"), **edit)
    d2t, t2d = valid_vocab_map(1000, 100, seed=4)
    src = write_draft(tmp_path / "A", cfg, d2t=d2t, t2d=t2d)
    out = tmp_path / "out"
    args = ["convert", str(src), str(out), "--to", "eagle3"]
    _refused(args, capsys, str(src), "tokenspeed cannot serve", needle, "--force")
    assert not out.exists()
    code, err = _main(args + ["--force"], capsys)
    assert code == 0, err
    assert "tokenspeed cannot serve this output" in err


def test_tokenspeed_refuses_two_layer_drafts(tmp_path, capsys, fixture_config):
    from helpers.convert import filled

    from recipecli.testing.builder import TensorSpec, write_checkpoint
    from recipecli.testing.specs import draft_specs

    cfg = tiny(fixture_config("SafeAILab__EAGLE3-traineagle3-config"), num_hidden_layers=2)
    d2t, t2d = valid_vocab_map(1000, 100, seed=5)
    specs = filled(draft_specs(cfg, d2t=d2t, t2d=t2d))
    rng = np.random.default_rng(1)
    layer1 = [
        TensorSpec(
            s.name.replace("midlayer.", "midlayer.1."),
            s.dtype,
            s.shape,
            rng.standard_normal(s.shape).astype(np.float32),
        )
        for s in specs
        if s.name.startswith("midlayer.")
    ]
    specs = [
        TensorSpec(s.name.replace("midlayer.", "midlayer.0."), s.dtype, s.shape, s.value)
        for s in specs
    ] + layer1
    src = tmp_path / "two"
    write_checkpoint(src, cfg, specs)
    args = ["convert", str(src), str(tmp_path / "o"), "--to", "eagle3"]
    _refused(args, capsys, str(src), "2 decoder layers")


def test_vd_lt_v_without_d2t(tmp_path, target, capsys, fixture_config):
    cfg = tiny(fixture_config("SafeAILab__EAGLE3-traineagle3-config"))
    src = write_draft(tmp_path / "A", cfg)  # Vd 100 < V 1000, no d2t
    args = ["convert", str(src), str(tmp_path / "o"), "--to", "eagle3"]
    _refused(args, capsys, str(src), "no d2t", "never invents")


def test_invalid_d2t_without_t2d(tmp_path, target, capsys, fixture_config):
    cfg = tiny(fixture_config("SafeAILab__EAGLE3-traineagle3-config"))
    # absolute ids written as offsets (verl-SpeCo PR #67): i -> 2i, not increasing past V
    src = write_draft(tmp_path / "A", cfg, d2t=np.arange(100, dtype=np.int64) * 10)
    args = ["convert", str(src), str(tmp_path / "o"), "--to", "eagle3"]
    _refused(args, capsys, "outside [0, 1000)")


def test_unknown_tensor_refused(tmp_path, a_draft, capsys):
    from recipecli.testing.builder import TensorSpec, write_checkpoint

    extra = tmp_path / "extra"
    write_checkpoint(
        extra,
        config_of(a_draft),
        [TensorSpec("midlayer.self_attn.q_proj.weight", "F16", (4, 4), np.ones((4, 4)))]
        + [TensorSpec("d2t", "I64", (100,), valid_vocab_map(1000, 100)[0])]
        + [TensorSpec("medusa_head.0.weight", "F16", (2, 2), np.ones((2, 2)))],
    )
    args = ["convert", str(extra), str(tmp_path / "o"), "--to", "eagle3"]
    _refused(args, capsys, str(extra), "medusa_head.0.weight")


def test_speculators_needs_a_verifier(tmp_path, a_draft, capsys):
    args = ["convert", str(a_draft), str(tmp_path / "o"), "--to", "speculators"]
    _refused(args + ["--norm-before-residual", "false"], capsys, str(a_draft), "--target")


def test_out_inside_draft(tmp_path, a_draft, target, capsys):
    _refused(
        _spec_args(a_draft, a_draft / "sub", target, "--norm-before-residual", "false"),
        capsys,
        "inside",
    )


def test_embed_drop_without_target(tmp_path, capsys, fixture_config):
    cfg = tiny(fixture_config("SafeAILab__EAGLE3-traineagle3-config"))
    d2t, t2d = valid_vocab_map(1000, 100, seed=6)
    src = write_draft(tmp_path / "A", cfg, d2t=d2t, t2d=t2d, with_embed=True)
    args = ["convert", str(src), str(tmp_path / "o"), "--to", "eagle3", "--embed", "drop"]
    _refused(args, capsys, str(src), "--embed drop needs --target")


def test_check_error_against_target_keeps_no_out(tmp_path, a_draft, capsys):
    bad = write_target(tmp_path / "t", {**TARGET_CONFIG, "hidden_size": 128})
    out = tmp_path / "out"
    _refused(
        _spec_args(a_draft, out, bad, "--norm-before-residual", "false"),
        capsys,
        "check against the target",
    )
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]


def test_bad_max_shard_size(tmp_path, a_draft, target, capsys):
    args = _spec_args(a_draft, tmp_path / "o", target, "--max-shard-size", "lots")
    _refused(args, capsys, "--max-shard-size")


def test_mla_draft_refused(tmp_path, capsys):
    from recipecli.testing.builder import TensorSpec, write_checkpoint

    src = tmp_path / "mla"
    cfg = {
        "architectures": ["Eagle3DeepseekV2ForCausalLM"],
        "model_type": "kimi_k2",
        "hidden_size": 64,
        "vocab_size": 1000,
        "draft_vocab_size": 100,
        "kv_lora_rank": 16,
    }
    write_checkpoint(src, cfg, [TensorSpec("fc.weight", "BF16", (64, 192), np.ones((64, 192)))])
    args = ["convert", str(src), str(tmp_path / "o"), "--to", "eagle3"]
    _refused(args, capsys, str(src), "MLA")
