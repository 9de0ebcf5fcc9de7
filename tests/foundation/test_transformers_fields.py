"""transformers' config-class data (``recipecli/data/transformers/``, issue #24 item 5), against
the classes' source read by hand, and the text-override check that reads it.

Field lists below are copied by hand from transformers' own source at each release an engine
pins (``Pin.transformers``: vLLM 5.20.2, SGLang 5.19.0, tokenspeed 5.12.0):

* ``src/transformers/configuration_utils.py`` ``PreTrainedConfig``: the dataclass fields
  ``transformers_version``, ``architectures``, ``output_hidden_states``, ``return_dict``, ``dtype``,
  ``chunk_size_feed_forward``, ``is_encoder_decoder``, ``id2label``, ``label2id``, ``problem_type``
  (``output_attentions`` is set in ``__post_init__`` and written by ``to_dict()``);
* ``src/transformers/models/qwen3_vl_moe/configuration_qwen3_vl_moe.py`` ``Qwen3VLMoeTextConfig``
  (``model_type = "qwen3_vl_moe_text"``): the annotated fields from ``vocab_size`` to
  ``eos_token_id`` and ``head_dim``; ``output_router_logits`` exists from 5.19.0 on (not in
  5.12.0); ``attribute_map = {"num_experts": "num_local_experts"}``; ``__post_init__`` sets
  ``sliding_window = None``;
* ``Qwen3VLMoeConfig.sub_configs``: ``vision_config`` -> ``Qwen3VLMoeVisionConfig``,
  ``text_config`` -> ``Qwen3VLMoeTextConfig``;
* ``src/transformers/models/llama/configuration_llama.py`` ``LlamaConfig.__post_init__``:
  ``head_dim`` None -> ``hidden_size // num_attention_heads``, ``num_key_value_heads`` None ->
  ``num_attention_heads``; ``validate_architecture`` refuses a hidden size that is not a multiple
  of the heads; ``models/qwen3/configuration_qwen3.py``: ``num_key_value_heads: int | None = 32``
  (a default, derived only when a config gives null); ``models/mistral/configuration_mistral.py``:
  ``num_key_value_heads: int = 8``, ``head_dim: int | None = None`` (derived),
  ``max_position_embeddings: int = 4096 * 32``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from recipecli.engines import engine_spec
from recipecli.engines.base import config_class_fields, transformers_defaults
from recipecli.recipes.overrides import OverrideSource, place_overrides

REPO = Path(__file__).resolve().parents[2]
QWEN3_VL = REPO / "tests/fixtures/configs/Qwen__Qwen3-VL-30B-A3B-Instruct/config.json"

PRETRAINED_FIELDS = {
    "transformers_version",
    "architectures",
    "output_hidden_states",
    "return_dict",
    "dtype",
    "chunk_size_feed_forward",
    "is_encoder_decoder",
    "id2label",
    "label2id",
    "problem_type",
    "output_attentions",
}

QWEN3_VL_MOE_TEXT_FIELDS = {
    "vocab_size",
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "hidden_act",
    "max_position_embeddings",
    "initializer_range",
    "rms_norm_eps",
    "use_cache",
    "tie_word_embeddings",
    "rope_parameters",
    "attention_bias",
    "attention_dropout",
    "decoder_sparse_step",
    "moe_intermediate_size",
    "num_experts_per_tok",
    "num_experts",
    "router_aux_loss_coef",
    "mlp_only_layers",
    "pad_token_id",
    "bos_token_id",
    "eos_token_id",
    "head_dim",
    "num_local_experts",  # attribute_map target of num_experts
    "sliding_window",  # set by __post_init__
}
SINCE_5_19 = {"output_router_logits"}

PINNED = {"vllm": "5.20.2", "sglang": "5.19.0", "tokenspeed": "5.12.0"}


def _text_fields(version: str) -> set[str]:
    return QWEN3_VL_MOE_TEXT_FIELDS | (SINCE_5_19 if version != "5.12.0" else set())


def test_each_engine_pins_a_release_recipecli_ships_data_for():
    for engine, version in PINNED.items():
        assert engine_spec(engine).pin.transformers == version
        data = transformers_defaults(version)
        assert data["version"] == version
        assert set(data["base"]["fields"]) == PRETRAINED_FIELDS


@pytest.mark.parametrize("version", sorted(set(PINNED.values())))
def test_qwen3_vl_moe_text_config_fields_are_the_class_fields(version):
    data = transformers_defaults(version)["models"]
    assert data["qwen3_vl_moe"]["sub_configs"] == {
        "text_config": "qwen3_vl_moe_text",
        "vision_config": "qwen3_vl_moe_vision",
    }
    entry = data["qwen3_vl_moe_text"]
    assert entry["class"] == "Qwen3VLMoeTextConfig"
    assert set(entry["fields"]) == _text_fields(version)
    assert entry["aliases"] == {"num_experts": "num_local_experts"}
    assert config_class_fields(version, "qwen3_vl_moe_text") == frozenset(
        _text_fields(version) | PRETRAINED_FIELDS
    )
    # the declared defaults of the class body
    assert entry["defaults"]["moe_intermediate_size"] == 1408
    assert entry["defaults"]["router_aux_loss_coef"] == 0.001
    assert entry["defaults"]["head_dim"] is None
    assert entry["derived"]["head_dim"] == "hidden_size // num_attention_heads"


@pytest.mark.parametrize("version", sorted(set(PINNED.values())))
def test_derivations_and_defaults_from_the_classes(version):
    models = transformers_defaults(version)["models"]
    llama = models["llama"]
    assert llama["derived"] == {
        "head_dim": "hidden_size // num_attention_heads",
        "num_key_value_heads": "num_attention_heads",
        "hidden_size % num_attention_heads": "must be 0 (ValueError)",
    }
    assert llama["defaults"]["hidden_size"] == 4096
    # a number by default: derived only from an explicit null
    assert models["qwen3"]["defaults"]["num_key_value_heads"] == 32
    assert "num_key_value_heads" not in models["qwen3"]["derived"]
    assert models["qwen3"]["derived_if_null"] == {"num_key_value_heads": "num_attention_heads"}
    mistral = models["mistral"]
    assert mistral["defaults"]["num_key_value_heads"] == 8
    assert mistral["defaults"]["max_position_embeddings"] == 4096 * 32
    assert mistral["derived"] == {"head_dim": "hidden_size // num_attention_heads"}


def test_every_registered_architecture_transformers_knows_has_its_class():
    # the engines' data name these architectures (vLLM's registry, SGLang's EntryClass, tokenspeed's)
    for version in set(PINNED.values()):
        data = transformers_defaults(version)
        registered = data["registered"]
        assert registered["LlamaForCausalLM"] == "llama"
        assert registered["Qwen3VLMoeForConditionalGeneration"] == "qwen3_vl_moe"
        for arch, model_type in registered.items():
            assert "fields" in data["models"][model_type], arch


def _unknown(engine: str, overrides: dict) -> set[str]:
    config = json.loads(QWEN3_VL.read_text())
    src = OverrideSource("text_overrides", "recipe.yaml:3", overrides, True)
    placed = place_overrides(engine, [src], config)
    return {f.evidence["key"] for f in placed.findings if f.code == "recipe.override_unknown_key"}


@pytest.mark.parametrize("engine", sorted(PINNED))
def test_every_text_config_field_is_accepted_as_a_text_override(engine):
    config = json.loads(QWEN3_VL.read_text())
    fields = _text_fields(PINNED[engine])
    assert fields - set(config["text_config"]), "the fixture lacks some fields: the test needs it"
    assert _unknown(engine, {key: 1 for key in sorted(fields)}) == set()


def test_a_field_of_a_later_release_or_a_typo_is_still_refused():
    # output_router_logits is not a field of transformers 5.12.0's class (tokenspeed's pin)
    assert _unknown("tokenspeed", {"output_router_logits": True}) == {"output_router_logits"}
    assert _unknown("vllm", {"output_router_logits": True}) == set()
    assert _unknown("vllm", {"rms_norm_epsilon": 1e-5}) == {"rms_norm_epsilon"}


FAKE_TRANSFORMERS = {
    "__init__.py": (
        "__version__ = '5.20.2'\n"
        "class PreTrainedConfig:\n"
        "    def to_dict(self):\n        return {}\n"
    ),
    "models/__init__.py": "",
    "models/auto/__init__.py": "",
    "models/auto/modeling_auto.py": "MODEL_MAPPING_NAMES = {}\n",
    "models/auto/configuration_auto.py": (
        "CONFIG_MAPPING_NAMES = {'broken': 'BrokenConfig'}\n"
        "class _Lazy(dict):\n"
        "    def __getitem__(self, key):\n"
        "        raise ImportError('needs a package this environment lacks')\n"
        "CONFIG_MAPPING = _Lazy()\n"
    ),
}


def test_the_extraction_fails_naming_a_class_it_cannot_read(tmp_path):
    for name, text in FAKE_TRANSFORMERS.items():
        path = tmp_path / "transformers" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts/extract_transformers_fields.py"), "--out", str(out)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert proc.returncode == 1
    assert "BrokenConfig" in proc.stderr and "'broken'" in proc.stderr
    assert list(out.iterdir()) == []
