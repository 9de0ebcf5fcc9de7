"""The small pieces the tensor spec lists are built from: config dtypes, norm values, holes,
linear layers under a quantisation scheme (:mod:`recipecli.testing.specs` assembles them).
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from recipecli.testing.builder import TensorSpec

#: config ``torch_dtype``/``dtype`` → safetensors dtype of the unquantised weights.
CONFIG_DTYPES: Mapping[str, str] = {
    "float16": "F16",
    "bfloat16": "BF16",
    "float32": "F32",
    "torch.float16": "F16",
    "torch.bfloat16": "BF16",
    "torch.float32": "F32",
}

Scheme = Literal["plain", "fp8_block", "nvfp4", "mxfp8"]


def config_dtype(*configs: Mapping[str, Any], default: str = "BF16") -> str:
    """Safetensors dtype named by the first ``dtype``/``torch_dtype`` found in ``configs``.

    Args:
        configs: mappings searched in order (e.g. the text config, then the top-level config).
        default: returned when none names a dtype (gpt-oss and the draft templates say nothing).

    Returns:
        ``"F16"``, ``"BF16"`` or ``"F32"``.

    Raises:
        ValueError: a dtype string this module does not know.
    """
    for cfg in configs:
        for key in ("dtype", "torch_dtype"):
            value = cfg.get(key)
            if value:
                if str(value) not in CONFIG_DTYPES:
                    raise ValueError(f"unknown config dtype {value!r}")
                return CONFIG_DTYPES[str(value)]
    return default


def norm_values(name: str, n: int) -> NDArray[np.float32]:
    """Deterministic norm weight values: ones plus N(0, 0.01) noise seeded by ``name``.

    Returns:
        float32 array of shape [n].
    """
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    return (1.0 + 0.01 * rng.standard_normal(n)).astype(np.float32)


def hole(name: str, dtype: str, shape: tuple[int, ...]) -> TensorSpec:
    """A tensor without a value (a hole of the sparse file): ``name``, ``dtype``, ``shape``."""
    return TensorSpec(name, dtype, tuple(int(d) for d in shape))


def norm(name: str, dtype: str, n: int) -> TensorSpec:
    """A norm weight [n] of ``dtype`` carrying :func:`norm_values` of ``name``."""
    return TensorSpec(name, dtype, (int(n),), norm_values(name, int(n)))


def require_ints(config: Mapping[str, Any], *keys: str) -> list[int]:
    """The integer values of ``keys`` in ``config``, in order.

    Raises:
        ValueError: one of them is missing or not an integer (a template with nulls).
    """
    missing = [k for k in keys if not isinstance(config.get(k), int)]
    if missing:
        raise ValueError(f"config lacks integer {', '.join(missing)} (a template with nulls?)")
    return [int(config[k]) for k in keys]


def linear(module: str, out: int, inp: int, *, scheme: Scheme, dtype: str) -> list[TensorSpec]:
    """Tensors of one linear layer ``module`` ([out, inp] weight) under a quantisation scheme.

    Args:
        module: module path without ``.weight`` (``model.layers.0.self_attn.q_proj``).
        out, inp: output and input features.
        scheme: ``plain`` (``dtype``), ``fp8_block`` (DeepSeek-V3: F8_E4M3 + ``weight_scale_inv``
            F32 [ceil(out/128), ceil(inp/128)]), ``nvfp4`` (ModelOpt: U8 [out, inp/2] +
            ``weight_scale`` F8_E4M3 [out, inp/16] + ``weight_scale_2`` and ``input_scale`` F32
            scalars) or ``mxfp8`` (ModelOpt: F8_E4M3 [out, inp] + ``weight_scale`` U8 E8M0
            [out, inp/32]).
        dtype: dtype of ``plain`` weights.

    Returns:
        The weight and its scale tensors, all holes.
    """
    if scheme == "plain":
        return [hole(f"{module}.weight", dtype, (out, inp))]
    if scheme == "fp8_block":
        return [
            hole(f"{module}.weight", "F8_E4M3", (out, inp)),
            hole(f"{module}.weight_scale_inv", "F32", (math.ceil(out / 128), math.ceil(inp / 128))),
        ]
    if scheme == "nvfp4":
        return [
            hole(f"{module}.weight", "U8", (out, inp // 2)),
            hole(f"{module}.weight_scale", "F8_E4M3", (out, inp // 16)),
            hole(f"{module}.weight_scale_2", "F32", ()),
            hole(f"{module}.input_scale", "F32", ()),
        ]
    if scheme == "mxfp8":
        return [
            hole(f"{module}.weight", "F8_E4M3", (out, inp)),
            hole(f"{module}.weight_scale", "U8", (out, inp // 32)),
        ]
    raise ValueError(f"unknown scheme {scheme!r}")


#: ModelOpt ``quantized_layers[module].quant_algo`` -> scheme of that linear layer
_MODELOPT_SCHEMES: Mapping[str, Scheme] = {"NVFP4": "nvfp4", "MXFP8": "mxfp8"}


class Quant:
    """Pick the scheme of each linear module from the top-level ``quantization_config``."""

    def __init__(self, config: Mapping[str, Any]):
        q = config.get("quantization_config") or {}
        self.method = q.get("quant_method")
        self.layers: Mapping[str, Any] = q.get("quantized_layers") or {}

    def scheme(self, module: str) -> Scheme:
        """``fp8_block`` for every linear of an ``fp8`` config; for ``modelopt`` the scheme its
        ``quantized_layers`` entry names (``plain`` when none); else ``plain``."""
        if self.method == "fp8":
            return "fp8_block"
        if self.method == "modelopt":
            algo = (self.layers.get(module) or {}).get("quant_algo")
            return _MODELOPT_SCHEMES.get(algo, "plain") if isinstance(algo, str) else "plain"
        return "plain"
