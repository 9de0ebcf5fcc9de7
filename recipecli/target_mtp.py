"""The MTP (NextN) layers a target checkpoint carries (issue #27): the layer count its config
declares and the MTP tensors its index holds (header-only: the tensor table recipecli reads).

Where the tensors sit, from the engines' MTP models' weight loading:

- DeepSeek V3/R1, GLM-4.5+, Kimi …: decoder layers after the last target layer,
  ``model.layers.{L + i}.`` with ``enorm`` / ``hnorm`` / ``eh_proj`` / ``shared_head`` (vLLM
  ``model_executor/models/deepseek_mtp.py`` ``DeepSeekMTP.load_weights``: a layer index
  ``>= num_hidden_layers`` is an MTP layer; SGLang ``srt/models/deepseek_nextn.py``).
- Qwen3-Next / Qwen3.5, MiniMax, MiMo …: a ``mtp.`` prefix (``mtp.layers.{i}.``, ``mtp.fc``;
  vLLM ``qwen3_next_mtp.py`` ``Qwen3NextMTP.load_weights`` keeps the names that start with
  ``mtp.``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from recipecli.checkpoint.model import Checkpoint

#: The config keys the engines read an MTP layer count from (vLLM ``hf_config_override``).
LAYER_KEYS: tuple[str, ...] = (
    "num_nextn_predict_layers",
    "mtp_num_hidden_layers",
    "num_mtp_modules",
)

_LAYER = re.compile(r"^(?:model\.|language_model\.model\.|model\.language_model\.)?layers\.(\d+)\.")
_MTP = re.compile(r"^(?:model\.)?(?:language_model\.)?mtp(?:_layers)?\.(?:layers\.)?(\d+)?")


@dataclass(frozen=True)
class MtpLayers:
    """A target's MTP layers.

    Attributes:
        declared: config key -> value for each of :data:`LAYER_KEYS` the (text) config has.
        num_hidden_layers: the text config's ``num_hidden_layers`` (None when absent).
        tensor_layers: MTP layer indices (0-based, from the first MTP layer) that have tensors
            in the index; empty when none.
        tensors: how many MTP tensors the index lists.
        has_index: False for a config-only source (nothing to compare).
    """

    declared: Mapping[str, Any]
    num_hidden_layers: int | None
    tensor_layers: tuple[int, ...]
    tensors: int
    has_index: bool

    def count(self, key: str) -> int | None:
        """The declared count under ``key`` (an int), None when absent or not an int."""
        v = self.declared.get(key)
        return v if isinstance(v, int) and not isinstance(v, bool) else None


def _mtp_index(names: Iterable[str], L: int | None) -> tuple[set[int], int]:
    layers: set[int] = set()
    count = 0
    for name in names:
        m = _LAYER.match(name)
        if m and L is not None and int(m.group(1)) >= L:
            layers.add(int(m.group(1)) - L)
            count += 1
            continue
        m2 = _MTP.match(name)
        if m2:
            layers.add(int(m2.group(1) or 0))
            count += 1
    return layers, count


def mtp_layers(ck: Checkpoint) -> MtpLayers:
    """The MTP layers of target ``ck`` (text config for wrapped targets)."""
    text = ck.text.config
    declared = {k: text.get(k, ck.config.get(k)) for k in LAYER_KEYS if k in text or k in ck.config}
    L = text.get("num_hidden_layers")
    L = L if isinstance(L, int) and not isinstance(L, bool) else None
    layers, count = _mtp_index(ck.tensors, L)
    return MtpLayers(declared, L, tuple(sorted(layers)), count, bool(ck.tensors))
