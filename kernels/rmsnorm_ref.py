"""Plain torch references for RMSNorm in both rounding conventions, and an ulp comparison.

These are the ground truth the Triton kernels are checked against:

* ``"hf"``: HF transformers ``LlamaRMSNorm.forward`` (``models/llama/modeling_llama.py``) /
  vLLM's native ``RMSNorm.forward_native`` / Liger-Kernel ``casting_mode="llama"`` — x to fp32,
  ``x * rsqrt(mean(x^2) + eps)``, cast to the input dtype, THEN multiply by the weight (so a
  bf16 result is rounded twice).
* ``"fp32_weight"``: FlashInfer / tokenspeed ``FusedRMSNorm`` / vLLM's Triton fused q/kv —
  multiply by the weight in fp32 and round once.

The output dtype is always the input dtype. Only torch is imported.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from .rmsnorm_types import Comparison

CONVENTION_NAMES: tuple[str, ...] = ("hf", "fp32_weight")

#: Tolerances per dtype, recipecli's own (atol = rtol = 1e-2 bf16 / 1e-3 fp16 / 1e-5 fp32, plus
#: an ulp bound): (atol, rtol, max ulp on GPU,
#: max ulp under the CPU interpreter). ``None`` = no ulp bound (fp32 sums differ in order).
TOLERANCES: dict[torch.dtype, tuple[float, float, int | None, int | None]] = {
    torch.bfloat16: (1e-2, 1e-2, 1, 2),
    torch.float16: (1e-3, 1e-3, 1, 2),
    torch.float32: (1e-5, 1e-5, None, None),
}


def _check_convention(convention: str) -> None:
    if convention not in CONVENTION_NAMES:
        raise ValueError(f"convention must be one of {CONVENTION_NAMES}, got {convention!r}")


def rmsnorm_ref(
    x: torch.Tensor, weight: torch.Tensor, eps: float, convention: str = "hf"
) -> torch.Tensor:
    """RMSNorm over the last dimension, written plainly.

    Args:
        x: [..., W] fp16/bf16/fp32.
        weight: [W] (any float dtype).
        eps: epsilon added to the mean of squares.
        convention: ``"hf"`` or ``"fp32_weight"`` (module docstring).

    Returns:
        A new tensor shaped and typed like ``x``.

    Raises:
        ValueError: unknown convention.
    """
    _check_convention(convention)
    xf = x.to(torch.float32)
    variance = xf.pow(2).mean(dim=-1, keepdim=True)
    normed = xf * torch.rsqrt(variance + eps)
    if convention == "hf":
        return (normed.to(x.dtype) * weight).to(x.dtype)
    return (normed * weight.to(torch.float32)).to(x.dtype)


def dual_rmsnorm_concat_ref(
    a: torch.Tensor,
    b: torch.Tensor,
    w1: torch.Tensor,
    w2: torch.Tensor,
    eps1: float,
    eps2: float,
    convention: str = "hf",
) -> torch.Tensor:
    """``cat([rmsnorm(a, w1, eps1), rmsnorm(b, w2, eps2)], -1)``: EAGLE3 layer 0 unfused.

    Args:
        a: [N, d1] (the embeddings); b: [N, d2] (the fused hidden states), same dtype.
        w1: [d1] ``input_layernorm`` weight; w2: [d2] ``hidden_norm`` weight.
        eps1, eps2: their epsilons.
        convention: ``"hf"`` or ``"fp32_weight"``.

    Returns:
        [N, d1 + d2] in the dtype of ``a``.
    """
    return torch.cat(
        [rmsnorm_ref(a, w1, eps1, convention), rmsnorm_ref(b, w2, eps2, convention)], dim=-1
    )


def grouped_rmsnorm_ref(
    x: torch.Tensor,
    weights: Sequence[torch.Tensor] | torch.Tensor,
    eps: float,
    convention: str = "hf",
) -> torch.Tensor:
    """Per-chunk RMSNorm of ``x`` (Eagle 3.1 ``fc_norm``): chunk i of k normalised with weight i.

    Args:
        x: [N, k*H].
        weights: k weights of [H] each, or a [k, H] tensor.
        eps: the shared epsilon (the EAGLE3 drafts of vLLM and tokenspeed build every norm with
            ``config.rms_norm_eps``).
        convention: ``"hf"`` or ``"fp32_weight"``.

    Returns:
        [N, k*H] in the dtype of ``x``.

    Raises:
        ValueError: when k*H does not match the width of ``x``.
    """
    ws = list(weights)
    k = len(ws)
    if k < 1 or x.shape[-1] != k * ws[0].shape[-1]:
        raise ValueError(
            f"x width {x.shape[-1]} is not k={k} chunks of {ws[0].shape[-1] if ws else '?'}"
        )
    chunks = x.chunk(k, dim=-1)
    return torch.cat(
        [rmsnorm_ref(c, w, eps, convention) for c, w in zip(chunks, ws, strict=True)], dim=-1
    )


def _ordered_bits(t: torch.Tensor) -> torch.Tensor:
    """Map floats to int64 so that adjacent representable values differ by exactly 1."""
    int_type = {2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]
    bits = t.contiguous().view(int_type).to(torch.int64)
    magnitude_mask = (1 << (8 * t.element_size() - 1)) - 1
    return torch.where(bits >= 0, bits, -(bits & magnitude_mask))


def ulp_distance(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Elementwise distance in units in the last place of the common dtype (int64 tensor).

    +0 and -0 are 0 apart; a finite value and NaN are reported as a huge distance.

    Args:
        x, y: same shape and float dtype.

    Returns:
        int64 tensor of the shape of ``x``.
    """
    if x.dtype != y.dtype or x.shape != y.shape:
        raise ValueError(
            f"ulp_distance needs equal dtype/shape, got {x.dtype}{tuple(x.shape)} vs {y.dtype}{tuple(y.shape)}"
        )
    d = (_ordered_bits(x) - _ordered_bits(y)).abs()
    nan = torch.isnan(x) ^ torch.isnan(y)
    return torch.where(nan, torch.full_like(d, 1 << 40), d)


#: Extra ulps allowed for the ``"hf"`` convention. Its intermediate ``cast(x * rstd)`` rounds to
#: the input dtype before the weight multiply; ``rstd`` from a different fp32 summation order
#: flips that rounding by 1 ulp now and then (about 1 element in 10^5-10^6 on an H200), and the
#: weight multiply can turn that into 2 output ulps. Worked bf16 case: intermediate 1.0 vs
#: 1.0078125 (1 ulp), weight 1.5: 1.5 vs 1.51171875 = 193.5/128 -> ties to even 194/128 = 1.515625,
#: 2 ulps from 1.5. ``"fp32_weight"`` rounds once and stays within 1 ulp.
HF_EXTRA_ULP = 1


def compare(
    out: torch.Tensor,
    ref: torch.Tensor,
    *,
    interpreted: bool = False,
    convention: str = "fp32_weight",
) -> Comparison:
    """Compare a kernel output with its same-convention reference.

    Tolerances: :data:`TOLERANCES`, plus :data:`HF_EXTRA_ULP` for ``"hf"``.

    Args:
        out: kernel output; ref: reference, same dtype and shape (moved to ``out``'s device).
        interpreted: True when ``out`` came from Triton's CPU interpreter (1 more ulp allowed).
        convention: the rounding convention both were computed in.

    Returns:
        dict with ``max_abs_err`` (float), ``max_ulp`` (int), ``frac_bit_identical`` (0..1),
        ``atol``, ``rtol``, ``ulp_limit`` (int or None), ``allclose`` (bool), ``passed`` (bool),
        ``numel``. An empty tensor passes with all-zero errors.
    """
    atol, rtol, ulp_gpu, ulp_cpu = TOLERANCES[out.dtype]
    ulp_limit = ulp_cpu if interpreted else ulp_gpu
    if ulp_limit is not None and convention == "hf":
        ulp_limit += HF_EXTRA_ULP
    ref = ref.to(out.device)
    if out.numel() == 0:
        return {"max_abs_err": 0.0, "max_ulp": 0, "frac_bit_identical": 1.0, "atol": atol,
                "rtol": rtol, "ulp_limit": ulp_limit, "allclose": True, "passed": True, "numel": 0}  # fmt: skip
    diff = (out.to(torch.float64) - ref.to(torch.float64)).abs()
    ulps = ulp_distance(out, ref)
    allclose = bool(
        torch.allclose(out.to(torch.float64), ref.to(torch.float64), atol=atol, rtol=rtol)
    )
    max_ulp = int(ulps.max().item())
    ulp_ok = ulp_limit is not None and max_ulp <= ulp_limit
    # "hf" double rounding can reach 2 fp16 ulps = 0.0039 at |y| in [2, 4), past fp16's 1e-3
    # atol/rtol: for "hf" the (tighter) ulp bound decides for fp16/bf16.
    passed = (allclose or (convention == "hf" and ulp_ok)) and (ulp_limit is None or ulp_ok)
    return {
        "max_abs_err": float(diff.max().item()),
        "max_ulp": max_ulp,
        "frac_bit_identical": float((ulps == 0).to(torch.float64).mean().item()),
        "atol": atol,
        "rtol": rtol,
        "ulp_limit": ulp_limit,
        "allclose": allclose,
        "passed": bool(passed),
        "numel": int(out.numel()),
    }
