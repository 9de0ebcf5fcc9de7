"""Stated aux-id conventions (``check --aux-id-convention``) and the ``aux.convention`` info's
reason (issue #31 items 2 and 3).

Worked out by hand on the tiny pair of tests/helpers/pairs.py (L = 8 target layers):

* a layer-output id i names hidden state i + 1, a hidden-state id i names hidden state i, and a
  boundary id i counts the boundaries between layers (0 = embedding output, 8 = the last layer's
  output), which is hidden state i;
* vLLM 0.33 reads a top-level list as hidden-state indices (``eagle3_utils.py``
  ``get_eagle3_aux_layers_from_config``): [2, 4, 6] captures hidden states 2, 4, 6;
* SGLang's Llama target and tokenspeed add 1 to every id (SGLang ``models/llama.py``
  ``LlamaForCausalLM.set_eagle3_layers_to_capture``, tokenspeed ``models/base/causal_lm.py``
  ``BaseCausalLM.set_eagle3_layers_to_capture``): [2, 4, 6] captures hidden states 3, 5, 7.

So a SpecForge (format B, layer-output) draft naming [2, 4, 6] was trained on 3, 5, 7 by its
format and vLLM alone is a layer off; stated as hidden-state ids it was trained on 2, 4, 6 and
SGLang and tokenspeed are a layer off instead.
"""

from __future__ import annotations

import json

import pytest
from helpers.pairs import base_pair, find, one

from recipecli.cli.commands.check import AUX_ID_CONVENTIONS
from recipecli.draft import STATED_CONVENTIONS, ids_convention


def test_stated_convention_comes_before_the_formats():
    assert ids_convention("nemo", [2, 4, 6], 8, "layer-output") == ("layer-output", "stated")
    assert ids_convention("nemo", [2, 4, 6], 8, "hidden-state") == ("hidden-state", "stated")
    # boundary ids are hidden-state indices
    assert ids_convention("nemo", [2, 4, 8], 8, "boundary") == ("hidden-state", "stated")
    # a stated layer-output overrides the boundary reading of a list reaching L
    assert ids_convention("C", [4, 6, 8], 8, "layer-output") == ("layer-output", "stated")
    assert ids_convention("C", [4, 6, 8], 8) == ("hidden-state", "boundary")


def test_the_option_offers_every_stated_convention():
    assert (
        set(AUX_ID_CONVENTIONS)
        == set(STATED_CONVENTIONS)
        == {
            "layer-output",
            "hidden-state",
            "boundary",
        }
    )


def _pair_246(arch: str | None = None):
    p = base_pair()
    if arch:
        p.draft["architectures"] = [arch]
    p.draft["eagle_aux_hidden_state_layer_ids"] = [2, 4, 6]
    p.draft["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": [2, 4, 6]}
    return p


def test_format_convention_shifts_vllm_only(tmp_path):
    res = _pair_246().run(tmp_path, tps=(1,))
    f = one(res, "aux.mismatch", engine="vllm")
    assert f.evidence["trained_on"] == [3, 5, 7]
    assert not find(res, "aux.mismatch", engine="sglang")
    assert not find(res, "aux.mismatch", engine="tokenspeed")
    info = one(res, "aux.convention")
    assert info.evidence["convention"] == "layer-output"
    assert info.evidence["convention_reason"] == "format"
    assert "format B writes layer-output ids" in info.message


def test_stated_hidden_state_ids_move_the_mismatch(tmp_path):
    res = _pair_246().run(tmp_path, tps=(1,), aux_id_convention="hidden-state")
    assert not find(res, "aux.mismatch", engine="vllm")
    for engine in ("sglang", "tokenspeed"):
        f = one(res, "aux.mismatch", engine=engine)
        assert f.evidence["captured"] == [3, 5, 7]
        assert f.evidence["trained_on"] == [2, 4, 6]
        assert "stated hidden-state convention" in f.message
    info = one(res, "aux.convention")
    assert info.evidence["trained_on"] == [2, 4, 6]
    assert info.evidence["convention_reason"] == "stated"
    assert "stated --aux-id-convention hidden-state" in info.message
    assert sorted(info.evidence["differs"]) == ["sglang", "tokenspeed"]
    assert res.to_dict()["draft"]["stated_convention"] == "hidden-state"


def test_no_stated_convention_keeps_the_draft_json(tmp_path):
    res = _pair_246().run(tmp_path, tps=(1,))
    assert "stated_convention" not in res.to_dict()["draft"]


def test_unknown_convention_says_how_to_state_it(tmp_path):
    # NeMo's LlamaEagle3DraftModel format records no convention
    res = _pair_246("LlamaEagle3DraftModel").run(tmp_path, tps=(1,))
    info = one(res, "aux.convention")
    assert info.evidence["trained_on"] is None
    assert info.evidence["convention"] == "unknown"
    assert "cannot be known" in info.message
    assert "--aux-id-convention layer-output|hidden-state|boundary" in info.message
    stated = _pair_246("LlamaEagle3DraftModel").run(
        tmp_path / "s", tps=(1,), aux_id_convention="boundary"
    )
    assert one(stated, "aux.convention").evidence["trained_on"] == [2, 4, 6]


def test_boundary_ids_are_named_as_boundary_ids(tmp_path):
    # item 2: ModelOpt (C) ids [4, 6, 8] on 8 layers are boundaries = hidden states 4, 6, 8
    # (not the layer outputs 5, 7, 9); on gpt-oss vLLM and SGLang capture 4, 6, 8 and tokenspeed
    # 5, 7, 8 (ids + 1, 9 = L + 1 the final residual = hidden state 8)
    p = base_pair()
    p.target["architectures"] = ["GptOssForCausalLM"]
    p.target["model_type"] = "gpt_oss"
    p.draft["eagle_aux_hidden_state_layer_ids"] = [4, 6, 8]
    p.draft["eagle_config"] = {
        "use_last_layernorm": True,
        "eagle_aux_hidden_state_layer_ids": [4, 6, 8],
    }
    res = p.run(tmp_path, tps=(1,))
    info = one(res, "aux.convention")
    assert info.evidence["trained_on"] == [4, 6, 8]
    assert info.evidence["convention"] == "boundary"
    assert info.evidence["convention_reason"] == "boundary"
    assert "boundary ids" in info.message
    assert info.evidence["differs"] == ["tokenspeed"]
    assert "boundary ids (format C" in one(res, "aux.mismatch", engine="tokenspeed").message


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    from recipecli.cli.app import main

    with pytest.raises(SystemExit) as exc:
        main(["check", *args])
    got = capsys.readouterr()
    return int(exc.value.code or 0), got.out, got.err


@pytest.mark.parametrize("stated", ["hidden-state", "boundary"])
def test_check_option(tmp_path, capsys, stated):
    t, d = _pair_246().write(tmp_path)
    args = [str(t), str(d), "--tp", "1", "--kernel", "skip", "--json"]
    _, out, _ = _cli(capsys, *args, "--aux-id-convention", stated)
    doc = json.loads(out)
    assert doc["draft"]["stated_convention"] == stated
    (info,) = [f for f in doc["findings"] if f["code"] == "aux.convention"]
    assert info["evidence"]["trained_on"] == [2, 4, 6]


def test_check_option_refused_with_recipe(capsys):
    rc, out, err = _cli(capsys, "--recipe", "llama3.1-8b-eagle3", "--aux-id-convention", "boundary")
    assert rc == 2
    assert "--aux-id-convention takes TARGET DRAFT" in err
    assert "Traceback" not in out + err
