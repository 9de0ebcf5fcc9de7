"""The draft-format registry (recipecli/draft/): detection, per-format facts, tensor naming, and
the kernel check reading the canonical draft.

Expected values are worked out by hand from the fixture configs (their ``architectures``,
``speculators_model_type``, ``eagle_config`` keys) and from docs/check.md#draft-formats, never
taken from the code under test.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from recipecli.draft import (
    FORMATS,
    TRAINED_CONVENTION,
    FormatSpec,
    canonical_draft,
    detect_format,
    format_spec,
    from_hidden_state,
    layer_indices,
    numbered_layer_name,
    register,
    split_layer_name,
    to_hidden_state,
)
from recipecli.draft.tensors import layer_prefix


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        # LlamaForCausalLM, num_hidden_layers 1, draft_vocab_size: the original release layout
        ("SafeAILab__EAGLE3-traineagle3-config", "A"),
        # LlamaForCausalLMEagle3 without ModelOpt-only eagle_config keys
        ("sgl-project-SpecForge-template__llama3-8B-eagle3", "B"),
        ("sgl-project-SpecForge-template__deepseek-v3-671b-eagle3", "B"),
        # LlamaForCausalLMEagle3 whose eagle_config has next_layer_regular / parallel_draft_*
        ("nvidia-modelopt-template__LlamaForCausalLMEagle3-export", "C"),
        # speculators_model_type "eagle3"
        ("nvidia-modelopt-template__vllm-Eagle3Speculator", "D"),
        # a one-layer LlamaForCausalLM without draft_vocab_size: an EAGLE-1 head
        ("yuhuili__EAGLE-LLaMA3-Instruct-8B", None),
        # a 32-layer target
        ("meta-llama__Meta-Llama-3.1-8B", None),
    ],
)
def test_fixture_formats(fixture_config, fixture, expected):
    assert detect_format(fixture_config(fixture)) == expected


@pytest.mark.parametrize(
    ("config", "names", "expected"),
    [
        ({"architectures": ["Eagle3LlamaForCausalLM"]}, (), "F"),
        # F wins over ModelOpt keys: its architecture is tried first in the family
        (
            {
                "architectures": ["Eagle3LlamaForCausalLM"],
                "eagle_config": {"use_last_layernorm": 1},
            },
            (),
            "F",
        ),
        ({"architectures": ["LlamaEagle3DraftModel"]}, (), "nemo"),
        ({"architectures": ["Eagle3DeepseekV2ForCausalLM"]}, (), "C"),
        # speculators_model_type other than eagle3: not an EAGLE3 draft whatever else it says
        ({"speculators_model_type": "mlp", "architectures": ["LlamaForCausalLMEagle3"]}, (), None),
        # one 13B release says 40 layers: a midlayer.* tensor makes it one-layer
        (
            {
                "architectures": ["LlamaForCausalLM"],
                "num_hidden_layers": 40,
                "draft_vocab_size": 32000,
            },
            ("midlayer.input_layernorm.weight",),
            "A",
        ),
        (
            {
                "architectures": ["LlamaForCausalLM"],
                "num_hidden_layers": 40,
                "draft_vocab_size": 32000,
            },
            (),
            None,
        ),
        # the original layout under another text architecture (AngelSlim's Qwen3 drafts)
        (
            {"architectures": ["Qwen3ForCausalLM"], "num_hidden_layers": 1, "draft_vocab_size": 5},
            (),
            "A",
        ),
        (
            {
                "architectures": ["LlamaForCausalLM"],
                "num_hidden_layers": 1,
                "truncated_vocab_size": 5,
            },
            (),
            "nebius",
        ),
        # nebius is Llama only
        (
            {
                "architectures": ["Qwen3ForCausalLM"],
                "num_hidden_layers": 1,
                "truncated_vocab_size": 5,
            },
            (),
            None,
        ),
        ({}, (), None),
    ],
)
def test_detection_precedence(config, names, expected):
    assert detect_format(config, frozenset(names)) == expected


def test_every_format_has_one_spec_and_the_aux_conventions():
    # docs/check.md#draft-formats lists A B C D F plus the read-only NeMo and nebius formats
    assert list(FORMATS) == ["A", "B", "C", "D", "F", "nemo", "nebius"]
    # vLLM/speculators write the index of the hidden state entering layer i (vLLM
    # vllm/model_executor/models/llama.py LlamaModel.forward); SpecForge, ModelOpt and the original
    # release write layer i's output; NeMo and nebius say nothing
    assert dict(TRAINED_CONVENTION) == {
        "A": "layer-output",
        "B": "layer-output",
        "C": "layer-output",
        "D": "hidden-state",
        "F": "hidden-state",
    }
    # SpecForge formats mean "norm before the head" by norm_output; the others Eagle 3.1 chaining
    assert {k for k, s in FORMATS.items() if s.norm_output_meaning == "norm-before-head"} == {
        "A",
        "B",
        "nebius",
    }
    assert format_spec("D").layer_config_key == "transformer_layer_config"
    assert format_spec("nebius").vocab_size_key == "truncated_vocab_size"
    assert format_spec(None) is None and format_spec("Z") is None


def test_a_format_key_registers_once():
    spec = FORMATS["B"]
    with pytest.raises(ValueError, match="registered twice"):
        register(FormatSpec("B", "again", "causal-lm", lambda *a: True, None, "norm-before-head"))
    assert FORMATS["B"] is spec


def test_conventions_round_trip():
    # layer-output id 1 is the output of layer 1 = hidden_states[2]
    assert to_hidden_state((1, 23, 44), "layer-output") == (2, 24, 45)
    assert to_hidden_state((2, 24), "hidden-state") == (2, 24)
    assert from_hidden_state((2, 24, 45), "layer-output") == (1, 23, 44)


@pytest.mark.parametrize(
    ("name", "split", "numbered"),
    [
        ("midlayer.self_attn.q_proj.weight", (0, "self_attn.q_proj.weight"), None),
        ("midlayer.2.mlp.up_proj.weight", (2, "mlp.up_proj.weight"), (2, "mlp.up_proj.weight")),
        ("layers.0.hidden_norm.weight", (0, "hidden_norm.weight"), (0, "hidden_norm.weight")),
        ("fc.weight", None, None),
        ("layers.x.fc.weight", None, None),
    ],
)
def test_layer_names(name, split, numbered):
    assert split_layer_name(name) == split
    assert numbered_layer_name(name) == numbered


def test_layer_prefixes_and_indices():
    assert layer_prefix(frozenset({"model.midlayer.input_layernorm.weight"})) == (
        "model.",
        "midlayer.",
    )
    assert layer_prefix(frozenset({"layers.0.self_attn.o_proj.weight"})) == ("", "layers.0.")
    assert layer_prefix(frozenset({"fc.weight"})) == ("", "midlayer.")
    names = [
        "model.layers.0.mlp.up_proj.weight",
        "model.layers.3.mlp.up_proj.weight",
        "model.fc.weight",
    ]
    assert layer_indices(names, "model.") == {0, 3}


def _ck(config, tensors):
    """A stand-in checkpoint of ``config`` with tensors ``{name: (dtype, shape)}`` (no values)."""
    infos = {
        n: SimpleNamespace(name=n, dtype=dt, shape=shape, shard="model.safetensors")
        for n, (dt, shape) in tensors.items()
    }
    return SimpleNamespace(
        config=config,
        tensors=infos,
        kind="local",
        root="/d",
        source="/d",
        display_name="/d",
        has_values=lambda n: False,
    )


def test_nebius_vocab_from_its_own_key():
    cfg = {
        "architectures": ["LlamaForCausalLM"],
        "num_hidden_layers": 1,
        "hidden_size": 64,
        "vocab_size": 1000,
        "truncated_vocab_size": 100,
    }
    d = canonical_draft(_ck(cfg, {}))
    assert (d.format, d.Vd, d.sources["Vd"]) == ("nebius", 100, "truncated_vocab_size")
    assert not d.draft_vocab_size_declared


def test_kernel_check_reads_the_canonical_draft_names():
    # NeMo naming: every role under model. (layer 0 as model.layers.0., fc_norm as model.fc_norm.i)
    from recipecli.kernelcheck import draft_norms

    cfg = {
        "architectures": ["LlamaEagle3DraftModel"],
        "hidden_size": 64,
        "rms_norm_eps": 1e-5,
        "torch_dtype": "float16",
        "eagle_aux_hidden_state_layer_ids": [1, 2],
        "target_hidden_size": 32,
    }
    tensors = {
        "model.layers.0.input_layernorm.weight": ("BF16", (64,)),
        "model.layers.0.hidden_norm.weight": ("BF16", (64,)),
        "model.fc_norm.0.weight": ("BF16", (32,)),
        "model.fc_norm.1.weight": ("BF16", (32,)),
    }
    n = draft_norms(_ck(cfg, tensors))
    assert [w.name for w in n.layer0] == [
        "model.layers.0.input_layernorm.weight",
        "model.layers.0.hidden_norm.weight",
    ]
    assert [(w.name, w.width) for w in n.fc_norm] == [
        ("model.fc_norm.0.weight", 32),
        ("model.fc_norm.1.weight", 32),
    ]
    # the config's torch_dtype float16 wins over the weights' BF16
    assert (n.dtype, n.eps, n.eps_origin) == ("float16", 1e-5, "rms_norm_eps")


def test_kernel_check_synthesises_fc_norm_from_the_canonical_k_and_ht():
    # fc_norm under eagle_config, two aux ids, Ht 32: two synthesised [32] weights
    from recipecli.kernelcheck import draft_norms

    cfg = {
        "speculators_model_type": "eagle3",
        "architectures": ["Eagle3Speculator"],
        "transformer_layer_config": {
            "hidden_size": 64,
            "rms_norm_eps": 1e-6,
            "torch_dtype": "bfloat16",
        },
        "eagle_aux_hidden_state_layer_ids": [3, 7],
        "target_hidden_size": 32,
        "fc_norm": True,
    }
    tensors = {
        "layers.0.input_layernorm.weight": ("F16", (64,)),
        "layers.0.hidden_norm.weight": ("F16", (64,)),
    }
    n = draft_norms(_ck(cfg, tensors))
    assert [(w.name, w.width) for w in n.fc_norm] == [
        ("fc_norm.0.weight (synthesised)", 32),
        ("fc_norm.1.weight (synthesised)", 32),
    ]
    # speculators keep the dtype in the layer config (as check's draft dtype reads it)
    assert (n.dtype, n.eps_origin) == ("bfloat16", "transformer_layer_config.rms_norm_eps")
