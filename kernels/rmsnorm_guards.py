"""Guards: will an engine's fused RMSNorm path be taken, and may recipecli's kernel run?

Each guard returns ``(eligible, reasons)``: ``reasons`` lists every failed condition (empty when
eligible). Guards take torch tensors or :class:`TensorDesc` (a description of a tensor as the
engine would see it, so :mod:`recipecli.kernelcheck` can predict a CUDA deployment on a CPU box).

* :func:`vllm_layer0_guard` — vLLM's guarded EAGLE3 layer-0 fusion (vLLM PR #47391, superseded
  by #47854; ``vllm/model_executor/models/llama_eagle3.py``, the draft decoder layer's first
  norms): "GPU, contiguous, same shape/device/dtype, and RMSNorm eps matches".
* :func:`tokenspeed_fused_guard` — tokenspeed ``FusedRMSNorm`` (lightseekorg/tokenspeed PR #837,
  the fused norm pair of its EAGLE3 draft loop): its CUDA path accepts fp16/bf16 only, never checks the weights' dtype (so
  weights must already be the input dtype), needs only the last dim contiguous, one N for both,
  and uses the FIRST norm's eps for both (so eligible only when eps1 == eps2 — otherwise the result
  is silently wrong). grid = N, so the caller must skip N == 0.
* :func:`recipecli_guard` — when recipecli's own Triton kernel may run.

Only torch is imported (lazily, inside :func:`describe`); triton's presence is probed by name.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from typing import Any

Verdict = tuple[bool, list[str]]

HALF_DTYPES: tuple[str, ...] = ("float16", "bfloat16")
KERNEL_DTYPES: tuple[str, ...] = ("float16", "bfloat16", "float32")


@dataclass(frozen=True)
class TensorDesc:
    """What a guard needs to know about a tensor.

    Attributes:
        shape: sizes, e.g. ``(N, 4096)``.
        strides: strides in elements.
        dtype: torch dtype name without the ``torch.`` prefix (``"bfloat16"``).
        device: device type (``"cuda"``, ``"cpu"``, ``"meta"``).
        itemsize: bytes per element.
        ptr_mod16: data pointer modulo 16 (byte alignment of the first element).
    """

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: str
    device: str
    itemsize: int
    ptr_mod16: int = 0

    def is_contiguous(self) -> bool:
        """Row-major contiguity, ignoring strides of size-1 dimensions (torch's rule)."""
        expected = 1
        for size, stride in zip(reversed(self.shape), reversed(self.strides), strict=True):
            if size != 1 and stride != expected:
                return False
            expected *= size
        return True

    def last_dim_contiguous(self) -> bool:
        return not self.shape or self.shape[-1] <= 1 or self.strides[-1] == 1


def describe(t: Any) -> TensorDesc:
    """A :class:`TensorDesc` of a torch tensor (a ``TensorDesc`` is returned unchanged)."""
    if isinstance(t, TensorDesc):
        return t
    try:  # fake tensors (torch.compile tracing) and meta tensors have no data pointer
        ptr_mod16 = int(t.data_ptr() % 16) if t.device.type != "meta" else 0
    except (RuntimeError, NotImplementedError):
        ptr_mod16 = 0
    return TensorDesc(
        shape=tuple(int(s) for s in t.shape),
        strides=tuple(int(s) for s in t.stride()),
        dtype=str(t.dtype).removeprefix("torch."),
        device=t.device.type,
        itemsize=int(t.element_size()),
        ptr_mod16=ptr_mod16,
    )


def dense(
    shape: tuple[int, ...], dtype: str, device: str = "cuda", itemsize: int | None = None
) -> TensorDesc:
    """Describe a freshly allocated contiguous tensor (16-byte aligned, as allocators give)."""
    strides, acc = [], 1
    for size in reversed(shape):
        strides.append(acc)
        acc *= size
    size = itemsize if itemsize is not None else {"float32": 4, "float64": 8}.get(dtype, 2)
    return TensorDesc(tuple(shape), tuple(reversed(strides)), dtype, device, size, 0)


def column_slice(t: TensorDesc, start: int, width: int) -> TensorDesc:
    """Describe ``t[:, start:start+width]`` of a 2-D tensor."""
    return TensorDesc(
        (t.shape[0], width),
        t.strides,
        t.dtype,
        t.device,
        t.itemsize,
        (t.ptr_mod16 + start * t.itemsize) % 16,
    )


def vllm_layer0_guard(embeds: Any, hidden: Any, eps1: float, eps2: float) -> Verdict:
    """vLLM's EAGLE3 layer-0 fused RMSNorm+concat guard (vLLM PR #47391).

    Args:
        embeds: [N, H] input of ``input_layernorm``; hidden: [N, H] input of ``hidden_norm``.
        eps1, eps2: the two norms' eps.

    Returns:
        (eligible, reasons): eligible when both are GPU tensors, contiguous, of the same shape,
        device and dtype, and eps1 == eps2.
    """
    a, b = describe(embeds), describe(hidden)
    reasons = []
    for d, name in ((a, "embeds"), (b, "hidden_states")):
        if d.device != "cuda":
            reasons.append(f"{name} is on {d.device}, not a GPU")
        if not d.is_contiguous():
            reasons.append(f"{name} is not contiguous (strides {d.strides})")
    if a.shape != b.shape:
        reasons.append(f"shapes differ: {a.shape} vs {b.shape}")
    if a.device != b.device:
        reasons.append(f"devices differ: {a.device} vs {b.device}")
    if a.dtype != b.dtype:
        reasons.append(f"dtypes differ: {a.dtype} vs {b.dtype}")
    if eps1 != eps2:
        reasons.append(f"eps differ: {eps1:g} vs {eps2:g}")
    return (not reasons, reasons)


def tokenspeed_fused_guard(
    input_a: Any,
    input_b: Any,
    weight_a: Any,
    weight_b: Any,
    eps1: float,
    eps2: float,
    out_a: Any = None,
    out_b: Any = None,
) -> Verdict:
    """Would tokenspeed's ``FusedRMSNorm(norm_a, norm_b)`` give the right answer (tokenspeed PR #837)?

    tokenspeed itself checks almost none of this; the conditions are what its CUDA path silently
    assumes. Alignment is inferred from its vectorised loads (16 bytes), which it never checks.

    Args:
        input_a: [N, d1]; input_b: [N, d2]; weight_a: [d1]; weight_b: [d2].
        eps1, eps2: ``norm_a`` / ``norm_b`` eps (only eps1 is used by tokenspeed).
        out_a, out_b: optional output views (their last dim must be contiguous too).

    Returns:
        (eligible, reasons).
    """
    a, b, wa, wb = (describe(t) for t in (input_a, input_b, weight_a, weight_b))
    outs = [
        (describe(t), n) for t, n in ((out_a, "output_a"), (out_b, "output_b")) if t is not None
    ]
    reasons = []
    for d, name in ((a, "input_a"), (b, "input_b")):
        if d.device != "cuda":
            reasons.append(f"{name} is on {d.device}: the fused path is CUDA-only")
        if d.dtype not in HALF_DTYPES:
            reasons.append(f"{name} is {d.dtype}: the CUDA path accepts float16/bfloat16 only")
    for w, d, name in ((wa, a, "weight_a"), (wb, b, "weight_b")):
        if w.dtype != d.dtype:
            reasons.append(
                f"{name} is {w.dtype} but its input is {d.dtype}: weights are read as the input dtype, never checked"
            )
    for d, name in ((a, "input_a"), (b, "input_b"), *((o, n) for o, n in outs)):
        if not d.last_dim_contiguous():
            reasons.append(f"{name} last dim is not contiguous (strides {d.strides})")
        row_bytes = d.strides[0] * d.itemsize if len(d.shape) > 1 else 0
        if d.ptr_mod16 or row_bytes % 16:
            reasons.append(
                f"{name} is not 16-byte aligned (offset {d.ptr_mod16} B, row stride {row_bytes} B)"
            )
    if a.shape[0] != b.shape[0]:
        reasons.append(f"row counts differ: {a.shape[0]} vs {b.shape[0]}")
    if a.shape and a.shape[0] == 0:
        reasons.append("N == 0: grid = N, the caller must skip the launch")
    if eps1 != eps2:
        reasons.append(
            f"eps differ ({eps1:g} vs {eps2:g}): FusedRMSNorm uses the first norm's eps for both"
        )
    return (not reasons, reasons)


def triton_available() -> bool:
    """True when ``triton`` can be imported (probed by name, nothing imported)."""
    return importlib.util.find_spec("triton") is not None


def interpreter_enabled() -> bool:
    """True when ``TRITON_INTERPRET=1`` (the kernels then run on CPU tensors)."""
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def recipecli_guard(
    inputs: list[Any], weights: list[Any], outputs: list[Any] | None = None
) -> Verdict:
    """May recipecli's Triton kernel run on these tensors?

    Conditions: triton importable; all tensors on one device, CUDA (or CPU with
    ``TRITON_INTERPRET=1``); inputs float16/bfloat16/float32 of one dtype, 2-D with one N and a
    contiguous last dim; weights 1-D of each input's width (any float dtype; read as fp32);
    outputs (if given) of the inputs' dtype and shape with a contiguous last dim.

    Args:
        inputs: the [N, W_i] inputs; weights: the [W_i] weights; outputs: the [N, W_i] outputs.

    Returns:
        (eligible, reasons).
    """
    ins, ws = [describe(t) for t in inputs], [describe(t) for t in weights]
    outs = [describe(t) for t in outputs or []]
    reasons = []
    if not triton_available():
        reasons.append("triton is not installed")
    devices = {d.device for d in ins + ws + outs}
    if len(devices) > 1:
        reasons.append(f"tensors on several devices: {sorted(devices)}")
    for dev in devices:
        if dev == "cpu" and not interpreter_enabled():
            reasons.append("CPU tensors need TRITON_INTERPRET=1 (Triton's interpreter)")
        elif dev not in ("cuda", "cpu"):
            reasons.append(f"device {dev} is not supported")
    dtypes = {d.dtype for d in ins}
    if len(dtypes) > 1:
        reasons.append(f"inputs have different dtypes: {sorted(dtypes)}")
    for i, d in enumerate(ins):
        if d.dtype not in KERNEL_DTYPES:
            reasons.append(f"input {i} is {d.dtype}: only float16/bfloat16/float32")
        if len(d.shape) != 2:
            reasons.append(f"input {i} is not 2-D: {d.shape}")
            continue
        if not d.last_dim_contiguous():
            reasons.append(f"input {i} last dim is not contiguous (strides {d.strides})")
        if d.shape[0] != ins[0].shape[0]:
            reasons.append(f"input {i} has {d.shape[0]} rows, input 0 has {ins[0].shape[0]}")
        if i < len(ws) and ws[i].shape != (d.shape[1],):
            reasons.append(f"weight {i} is {ws[i].shape}, expected ({d.shape[1]},)")
        if i < len(outs):
            o = outs[i]
            if o.shape != d.shape or o.dtype != d.dtype:
                reasons.append(f"output {i} is {o.dtype}{o.shape}, expected {d.dtype}{d.shape}")
            elif not o.last_dim_contiguous():
                reasons.append(f"output {i} last dim is not contiguous (strides {o.strides})")
    if len(ws) != len(ins):
        reasons.append(f"{len(ins)} inputs but {len(ws)} weights")
    return (not reasons, reasons)
