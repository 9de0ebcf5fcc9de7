"""`recipecli convert`'s output formats are data (recipecli/convert/formats.py): the built-in
entries say what the engines read, a format with a fact left out does not construct, and a new
format is one :func:`register` call (a throw-away one converts, is checked, and is a ``--to``
choice).

Expected values are worked out by hand from the fixture configs and the engines' code: vLLM
v0.33.0 (vllm/model_executor/models/llama.py LlamaModel.forward records the hidden state
entering layer i; llama_eagle3.py Eagle3LlamaForCausalLM.load_weights renames ``midlayer.`` to
``layers.0.``) and tokenspeed@f4d8ec6e (models/base/causal_lm.py
BaseCausalLM.set_eagle3_layers_to_capture captures layer i's output; models/llama_eagle3.py
LlamaForCausalLMEagle3.load_weights reads ``midlayer.*``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import fields, replace
from pathlib import Path
from typing import Any, get_args

import pytest
from helpers.convert import config_of, raw_tensors, tiny, write_draft

from recipecli.checkpoint import open_checkpoint
from recipecli.convert import ConvertOptions, convert
from recipecli.convert import formats as fmts
from recipecli.draft import Convention, canonical_draft
from recipecli.errors import ConvertError, UsageError
from recipecli.testing.specs import valid_vocab_map

# --------------------------------------------------------------------------- the built-in formats


def test_builtin_output_formats_say_what_the_engines_read():
    assert [f.key for f in fmts.output_formats()] == ["speculators", "eagle3"]  # docs/convert.md
    spec, flat = fmts.output_format("speculators"), fmts.output_format("eagle3")
    # vLLM serves speculators output: ids index the hidden state entering layer i, tensors
    # layers.{i}.*, the verifier named in speculators_config (vllm serve OUT alone)
    assert (spec.check_engine, spec.aux_convention, spec.names_verifier) == (
        "vllm",
        "hidden-state",
        True,
    )
    assert spec.naming.layer_name(0, "self_attn.q_proj.weight", 1) == (
        "layers.0.self_attn.q_proj.weight"
    )
    assert spec.naming.layer_name(1, "mlp.up_proj.weight", 2) == "layers.1.mlp.up_proj.weight"
    # tokenspeed serves eagle3 output: ids are layer outputs, one flat midlayer.*
    assert (flat.check_engine, flat.aux_convention, flat.names_verifier) == (
        "tokenspeed",
        "layer-output",
        False,
    )
    assert flat.naming.layer_name(0, "self_attn.q_proj.weight", 1) == (
        "midlayer.self_attn.q_proj.weight"
    )
    assert flat.naming.layer_name(1, "mlp.up_proj.weight", 2) == "midlayer.1.mlp.up_proj.weight"
    # speculators' own default is norm_before_residual false while vLLM assumes true
    # (vllm/transformers_utils/configs/speculators/algos.py update_eagle3): it must be stated
    assert spec.norm_before_residual_required and flat.norm_before_residual_required is None


def test_check_engines_are_registered_engines():
    from recipecli.engines import ENGINES

    assert {f.check_engine for f in fmts.output_formats()} <= set(ENGINES)


def test_to_help_is_the_formats_summaries():
    # the --to help as `recipecli convert --help` has always printed it
    assert fmts.to_help() == (
        "speculators: layers.0.* + speculators_config (vLLM); "
        "eagle3: flat midlayer.* (tokenspeed, SGLang)."
    )


def _facts(spec: fmts.OutputFormatSpec) -> dict[str, Any]:
    return {f.name: getattr(spec, f.name) for f in fields(spec)}


@pytest.mark.parametrize("missing", [f.name for f in fields(fmts.OutputFormatSpec)])
def test_a_format_with_a_fact_left_out_does_not_construct(missing):
    facts = _facts(fmts.output_format("eagle3"))
    del facts[missing]
    with pytest.raises(TypeError, match=missing):
        fmts.OutputFormatSpec(**facts)


def test_a_format_needs_a_known_convention_and_a_new_key():
    assert set(get_args(Convention)) == {"hidden-state", "layer-output"}
    facts = _facts(fmts.output_format("eagle3"))
    with pytest.raises(ValueError, match="aux_convention 'layer-input'"):
        fmts.OutputFormatSpec(**{**facts, "aux_convention": "layer-input"})
    with pytest.raises(ValueError, match="registered twice"):
        fmts.register(fmts.output_format("eagle3"))
    assert [f.key for f in fmts.output_formats()] == ["speculators", "eagle3"]


def test_an_unregistered_format_is_refused_before_anything_is_written(tmp_path, fixture_config):
    src = _b_draft(tmp_path, fixture_config)
    with pytest.raises(UsageError, match="--to 'medusa': expected speculators or eagle3"):
        convert(str(src), tmp_path / "out", ConvertOptions(to="medusa"), progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["B"]


# --------------------------------------------------------------------------- a throw-away format


def _f_config(inputs: fmts.ConfigInputs) -> dict[str, Any]:
    """A vLLM-internal (AngelSlim, format F) config: flat, ``Eagle3LlamaForCausalLM``."""
    e = inputs.eagle
    config: dict[str, Any] = {"architectures": ["Eagle3LlamaForCausalLM"], **inputs.layer}
    if e.vd is not None:
        config["draft_vocab_size"] = e.vd
    if e.aux_ids is not None:
        config["eagle_aux_hidden_state_layer_ids"] = e.aux_ids
    config["norm_before_residual"] = e.nbr
    if e.chaining:
        config["norm_output"] = True
    return config


def _no_nbr(d: Any, n_layers: int, nbr: bool | None) -> list[str]:
    return ["norm_before_residual true (test format)"] if nbr else []


#: flat midlayer.* names like eagle3, hidden-state ids like speculators: a route through either
#: built-in entry would show
THROWAWAY = fmts.OutputFormatSpec(
    key="test-f",
    summary="flat Eagle3LlamaForCausalLM (test)",
    layout="Eagle3LlamaForCausalLM",
    naming=fmts.TensorNaming(one_layer="midlayer.{name}", numbered="midlayer.{i}.{name}"),
    aux_convention="hidden-state",
    aux_ids_written_at="eagle_aux_hidden_state_layer_ids",
    write_config=_f_config,
    check_engine="vllm",
    names_verifier=False,
    carried_keys=frozenset(),
    norm_before_residual_required="the test format states it",
    norm_output_when_off=None,
    serving_limits=_no_nbr,
    serving_limits_hint="drop --norm-before-residual true",
)


@pytest.fixture
def throwaway():
    """THROWAWAY registered for the test, and the CLI's convert command imported anew (it reads
    the registry when imported); both undone afterwards."""
    command = "recipecli.cli.commands.convert"
    fmts.register(THROWAWAY)
    saved = sys.modules.pop(command, None)
    try:
        yield THROWAWAY
    finally:
        fmts.unregister(THROWAWAY.key)
        sys.modules.pop(command, None)  # the module that saw THROWAWAY
        if saved is not None:
            sys.modules[command] = saved
    assert [f.key for f in fmts.output_formats()] == ["speculators", "eagle3"]


def _b_draft(tmp_path: Path, fixture_config) -> Path:
    # SpecForge gpt-oss template: eagle_config ids [1, 17, 33] (layer-output), one midlayer
    cfg = tiny(fixture_config("sgl-project-SpecForge-template__gpt-oss-120B-eagle3"))
    d2t, t2d = valid_vocab_map(1000, 100, seed=31)
    return write_draft(tmp_path / "B", cfg, d2t=d2t, t2d=t2d)


def test_a_new_output_format_is_one_entry(tmp_path, target, fixture_config, throwaway):
    src = _b_draft(tmp_path, fixture_config)
    out = tmp_path / "f"
    opts = ConvertOptions(to="test-f", norm_before_residual=False)
    res = convert(str(src), out, opts, target=str(target), progress=False)
    c = config_of(out)
    assert c["architectures"] == ["Eagle3LlamaForCausalLM"]
    assert c["eagle_aux_hidden_state_layer_ids"] == [2, 18, 34]  # hidden-state = layer-output + 1
    assert c["norm_before_residual"] is False and "norm_output" not in c
    assert "eagle_config" not in c and c["draft_vocab_size"] == 100
    assert raw_tensors(out) == raw_tensors(src)  # midlayer.* kept, bytes identical
    assert canonical_draft(open_checkpoint(str(out))).format == "F"
    aux = next(t for t in res.plan.translations if t.field == "eagle_aux_hidden_state_layer_ids")
    assert aux.output == {
        "ids": [2, 18, 34],
        "where": "eagle_aux_hidden_state_layer_ids",
        "convention": "hidden-state",
    }
    doc = res.to_dict()
    assert doc["to"] == "test-f" and doc["check"]["engines"] == ["vllm"]
    assert doc["check"]["ok"] is True
    marker = json.loads((out / ".recipecli-convert.json").read_text())
    assert marker["to"] == "test-f"


def test_a_new_output_format_brings_its_own_refusals(tmp_path, target, fixture_config, throwaway):
    src = _b_draft(tmp_path, fixture_config)
    with pytest.raises(UsageError, match=r"applies to --to speculators only \(test-f output"):
        convert(str(src), tmp_path / "o1", ConvertOptions(to="test-f", verifier="org/x"))
    with pytest.raises(ConvertError, match="test-f output must state it") as exc:
        convert(str(src), tmp_path / "o2", ConvertOptions(to="test-f"), progress=False)
    assert "the test format states it" in str(exc.value)
    opts = ConvertOptions(to="test-f", norm_before_residual=True)
    with pytest.raises(ConvertError, match="vllm cannot serve this draft as test-f") as exc:
        convert(str(src), tmp_path / "o3", opts, progress=False)
    assert exc.value.hint == "drop --norm-before-residual true"
    forced = replace(opts, force=True)
    res = convert(str(src), tmp_path / "o4", forced, target=str(target), progress=False)
    assert res.plan.notes == (
        "--force: vllm cannot serve this output: norm_before_residual true (test format)",
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["B", "o4", "target"]


def test_a_new_output_format_is_a_to_choice(tmp_path, target, fixture_config, throwaway, capsys):
    from recipecli.cli import main

    with pytest.raises(SystemExit):
        main(["convert", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "[speculators|eagle3|test-f]" in help_text
    assert "test-f: flat Eagle3LlamaForCausalLM (test)." in help_text
    src = _b_draft(tmp_path, fixture_config)
    args = ["convert", str(src), str(tmp_path / "f"), "--to", "test-f", "--json"]
    with pytest.raises(SystemExit) as exc:
        main(args + ["--norm-before-residual", "false", "--target", str(target)])
    cap = capsys.readouterr()
    assert exc.value.code == 0, cap.err
    assert json.loads(cap.out)["to"] == "test-f"


def test_the_registry_imports_no_numpy_and_the_package_names_resolve():
    # `convert --help` reads the registry: importing it must not pull in numpy (the checkpoint
    # reader and the data path do); every public name of recipecli.convert still resolves
    code = (
        "import sys; import recipecli.convert.formats; assert 'numpy' not in sys.modules; "
        "import recipecli.convert as c; missing = [n for n in c.__all__ if not hasattr(c, n)]; "
        "assert missing == [], missing; assert c.convert.__module__ == 'recipecli.convert.run'"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
