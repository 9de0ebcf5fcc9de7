"""Verify the fused EAGLE3 norm kernels on a draft's own norms, and predict each engine's fused path.

For a draft checkpoint this reads ``input_layernorm`` / ``hidden_norm`` (layer 0 of the draft,
``midlayer.*`` or ``layers.0.*``), the Eagle 3.1 ``fc_norm.{i}`` weights when present, and
``rms_norm_eps`` (under ``transformer_layer_config`` for speculators-format drafts), runs
recipecli's Triton kernels (:mod:`recipecli.kernels.rmsnorm_triton`) against plain references in
both rounding conventions (HF ``LlamaRMSNorm`` order and fp32-weight order), and reports max abs
error, max ulps, the fraction bit-identical and pass/fail per case, plus each engine's guard
verdict for the draft as it would be served on CUDA in its dtype (vLLM's EAGLE3 layer-0 fusion
guard of vLLM PR #47391; tokenspeed's ``FusedRMSNorm`` of lightseekorg/tokenspeed PR #837).
When only metadata is available (a snapshot or a Hub header read), weights of the right shape are
synthesised and the report says so.

On CPU the kernels run under Triton's interpreter (``TRITON_INTERPRET=1`` is set for the process
before the kernel module is imported) on numpy-backed tensors
(:mod:`recipecli.kernels.host_tensor`) against numpy references: torch is never imported, so
``recipecli check`` stays fast. On CUDA the kernels run on torch tensors against the torch
references of :mod:`recipecli.kernels.rmsnorm_ref`. :func:`kernel_findings` is what
``recipecli check --kernel`` calls.

Modules: :mod:`~recipecli.kernelcheck.norms` (the draft's norms), :mod:`~.cases` (running the
cases, the report); this package: device resolution and the ``kernel.*`` findings.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from typing import Any

from recipecli.codes import finding
from recipecli.errors import CheckpointFormatError, MissingDependencyError, UsageError
from recipecli.findings import Finding
from recipecli.hints import install_hint
from recipecli.kernelcheck import cache
from recipecli.kernelcheck.cases import (
    CONVENTIONS,
    CaseResult,
    KernelReport,
    case_count,
    format_report,
    report,
    run_cases,
)
from recipecli.kernelcheck.norms import (
    DEFAULT_EPS,
    DTYPE_NAMES,
    DraftNorms,
    NormWeight,
    draft_norms,
    normalise_dtype,
    synthetic_norms,
    with_fc_norm_chunks,
)

__all__ = [
    "CONVENTIONS",
    "CPU_TOKENS",
    "CUDA_TOKENS",
    "DEFAULT_EPS",
    "DTYPE_NAMES",
    "INSTALL_HINT",
    "KERNEL_MODES",
    "SOURCE_CONVENTIONS",
    "SOURCE_FACTS",
    "VERIFY_TOKENS",
    "CaseResult",
    "DraftNorms",
    "NormWeight",
    "case_count",
    "cuda_driver_present",
    "dependencies_missing",
    "draft_norms",
    "KernelReport",
    "format_report",
    "kernel_findings",
    "normalise_dtype",
    "report",
    "resolve_device",
    "run_cases",
    "synthetic_norms",
    "with_fc_norm_chunks",
]

INSTALL_HINT = install_hint("kernels")
SOURCE_FACTS = (
    "vLLM PR #47391 (EAGLE3 layer-0 fused RMSNorm + concat and its guard); "
    "lightseekorg/tokenspeed PR #837 (FusedRMSNorm in the EAGLE3 draft)"
)
#: Where the two rounding conventions come from (cited by kernel.pass / kernel.mismatch).
SOURCE_CONVENTIONS = (
    "transformers LlamaRMSNorm.forward (round to the input dtype, then weight); "
    "FlashInfer rmsnorm / tokenspeed FusedRMSNorm (weight in fp32, one rounding)"
)

#: ``check --kernel`` modes (:func:`kernel_findings`); the CLI's choices
#: (``recipecli.cli.params.KERNEL_MODE``) are these.
KERNEL_MODES: tuple[str, ...] = ("auto", "on", "cpu", "cuda", "skip")

#: N under the CPU interpreter: one N of 3 rows (ROWS = 4, one masked row) covers every code
#: path the interpreter can reach (both segments, both conventions, row masking); the kernels'
#: arithmetic does not depend on N.
CPU_TOKENS: tuple[int, ...] = (3,)
#: N on CUDA: small N take the register tile, 2500 the looped two-pass reduction for rows of
#: 4096 bf16 lanes or more (``rmsnorm_triton.LOOP_MIN_ROWS``).
CUDA_TOKENS: tuple[int, ...] = (1, 7, 64, 512, 2500)
#: ``verify-kernel``'s default N per device. Under the CPU interpreter (seconds per 1000 rows of
#: 4096 lanes): N = 0 (nothing launched), 1 (one row) and 7 (a full 4-row program, then one with
#: a masked row) reach every code path; on CUDA larger N add nothing the interpreter lacks but
#: cost microseconds.
VERIFY_TOKENS: dict[str, tuple[int, ...]] = {"cpu": (0, 1, 7), "cuda": (0, 1, 7, 64, 512)}


def dependencies_missing(device: str = "any") -> list[str]:
    """Names of the missing optional dependencies for ``device`` (nothing imported).

    ``cpu`` (Triton's interpreter on numpy-backed tensors) needs numpy and triton; ``cuda``
    and ``any`` need torch and triton.
    """
    names = ("numpy", "triton") if device == "cpu" else ("torch", "triton")
    return [m for m in names if importlib.util.find_spec(m) is None]


def cuda_driver_present() -> bool:
    """True when an NVIDIA driver is visible (``/proc/driver/nvidia`` or ``/dev/nvidia0``).

    Looked up without importing torch: when it is False, ``auto`` means the CPU interpreter and
    torch is never imported.
    """
    return os.path.exists("/proc/driver/nvidia/version") or os.path.exists("/dev/nvidia0")


def resolve_device(device: str) -> str:
    """``auto`` -> ``cuda`` when torch sees a GPU, else ``cpu``; checks ``cuda`` is present.

    ``auto`` imports torch only when an NVIDIA driver is present (:func:`cuda_driver_present`)
    and torch is installed.

    Raises:
        MissingDependencyError: triton (or, for ``cuda``, torch) not installed.
        UsageError: ``cuda`` asked for but no GPU, or an unknown device.
    """
    if device not in ("auto", "cpu", "cuda"):
        raise UsageError(f"unknown device {device!r}", hint="use auto, cpu or cuda")
    if device == "auto":
        use_cuda = cuda_driver_present() and not dependencies_missing("cuda")
        if use_cuda:
            import torch

            use_cuda = torch.cuda.is_available()
        device = "cuda" if use_cuda else "cpu"
        missing = dependencies_missing(device)
    else:
        missing = dependencies_missing(device)
    if missing:
        raise MissingDependencyError(
            f"{' and '.join(missing)} not installed: cannot run the kernel", hint=INSTALL_HINT
        )
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise UsageError(
                "--device cuda: torch sees no CUDA GPU",
                hint="use --device cpu (Triton interpreter)",
            )
    return device


# ---------------------------------------------------------------- check wiring


def _skipped(message: str, **evidence: Any) -> list[Finding]:
    return [finding("kernel.skipped", message, source=SOURCE_FACTS, **evidence)]


def _mismatches(results: Sequence[CaseResult], device: str, how: str) -> list[Finding]:
    """``kernel.mismatch`` (error) per failing case (``how``: ran now, or cached from when)."""
    out = []
    for r in results:
        if not r.passed:
            m = r.metrics
            out.append(finding(
                "kernel.mismatch",
                f"fused {r.kind} kernel differs from the reference ({r.convention}, {r.path}, N={r.n}, {r.dtype}): "
                f"max {m['max_ulp']} ulp, max abs {m['max_abs_err']:.3g}; {how}",
                source=SOURCE_CONVENTIONS, device=device, verification=how.partition(" ")[0],
                **r.to_dict(),
            ))  # fmt: skip
    return out


def _ineligible(results: Sequence[CaseResult]) -> list[Finding]:
    """``kernel.ineligible`` (warning) once per (kind, engine) whose fused path is not taken."""
    out = []
    seen: set[tuple[str, str]] = set()
    for r in results:
        for engine, verdict in r.guards.items():
            if verdict["eligible"] is not False or (r.kind, engine) in seen:
                continue
            reasons = [x for x in verdict["reasons"] if "N == 0" not in x]
            if not reasons:
                continue
            seen.add((r.kind, engine))
            out.append(finding(
                "kernel.ineligible",
                f"{engine} will not take its fused {r.kind} RMSNorm path for this draft: {'; '.join(reasons)}",
                engine=engine, source=SOURCE_FACTS,
                kind=r.kind, dtype=r.dtype, widths=list(r.widths), reasons=reasons,
            ))  # fmt: skip
    return out


def _passed(
    results: Sequence[CaseResult], norms: DraftNorms, device: str, tokens: Sequence[int], how: str
) -> Finding:
    """``kernel.pass`` (info): every case matched; ``how`` says whether it ran now or when the
    cached verification ran."""
    worst = max((r.metrics["max_ulp"] for r in results), default=0)
    return finding(
        "kernel.pass",
        f"fused norm kernels match the reference on this draft's norms ({len(results)} cases on {device}, "
        f"max {worst} ulp; {how})",
        source=SOURCE_CONVENTIONS, device=device, tokens=list(tokens), dtype=norms.dtype, eps=norms.eps,
        weights={w.name: w.origin for w in (*(norms.layer0 or ()), *norms.fc_norm)},
        notes=list(norms.notes), verification=how.partition(" ")[0],
    )  # fmt: skip


def _verdict(
    results: Sequence[CaseResult], norms: DraftNorms, device: str, tokens: Sequence[int], how: str
) -> list[Finding]:
    """The ``kernel.*`` findings of ``results`` (run now or read from the cache, as ``how``
    says): a mismatch per failing case, an ineligible per engine guard, else a pass."""
    findings = _mismatches(results, device, how) + _ineligible(results)
    if all(r.passed for r in results):
        findings.insert(0, _passed(results, norms, device, tokens, how))
    return findings


def _tokens(device: str) -> tuple[int, ...]:
    return CPU_TOKENS if device == "cpu" else CUDA_TOKENS


def _from_cache(norms: DraftNorms, gpu: bool) -> list[Finding]:
    """``--kernel auto``: the findings of a cached verification of these norms' dtype, widths
    and eps with this kernel and these versions (CUDA's first when a GPU is usable), else a
    ``kernel.skipped`` that says how to run it. Imports neither triton nor torch."""
    for device in ("cuda", "cpu") if gpu else ("cpu",):
        key = cache.cache_key(norms, device, _tokens(device))
        hit = cache.load(key)
        if hit is not None:
            how = f"cached from {hit.created} (verified on {hit.source}; --kernel on re-runs it)"
            return _verdict(hit.cases, norms, device, key.tokens, how)
    key = cache.cache_key(norms, "cpu", CPU_TOKENS)
    return _skipped(
        f"kernel not verified: no cached verification for {key.describe()} with this kernel and "
        f"triton {dict(key.versions)['triton']}; --kernel on runs it (Triton's CPU interpreter, "
        "a few seconds) and caches it for later checks",
        verification="skipped", run="--kernel on",
    )  # fmt: skip


def kernel_findings(draft_ckpt: Any, mode: str = "auto") -> list[Finding]:
    """Findings for ``recipecli check --kernel MODE``, built through the code catalog
    (:func:`recipecli.codes.finding`).

    Args:
        draft_ckpt: an opened draft :class:`~recipecli.checkpoint.Checkpoint`, or its SOURCE string.
        mode: ``auto`` (the cached verification of the draft's norms' dtype, widths and eps, when
            one matches this kernel and these triton/torch versions; else ``kernel.skipped``
            saying how to run it: never runs a kernel, imports neither torch nor triton),
            ``on`` (run now: CUDA when present, else Triton's CPU interpreter), ``cpu``,
            ``cuda`` (run on that device, for this check only) or ``skip`` (imports nothing
            heavy). An ``on`` run is stored in the cache (:mod:`recipecli.kernelcheck.cache`;
            an unwritable cache is no error).

    Returns:
        ``kernel.pass`` (info) when every case matches (its message and ``verification``
        evidence say ``ran now`` or ``cached from DATE``), ``kernel.mismatch`` (error) per
        failing case, ``kernel.ineligible`` (warning) per engine whose fused path will not be
        taken for this draft (with the guard's reasons), or ``kernel.skipped`` (info) with the
        reason and what to run.

    Raises:
        UsageError: unknown mode. Checkpoint errors of a SOURCE string propagate (exit 2).
    """
    if mode not in KERNEL_MODES:
        raise UsageError(f"--kernel {mode!r}: expected {', '.join(KERNEL_MODES)}")
    if mode == "skip":
        return _skipped("kernel verification skipped (--kernel skip)")
    gpu = cuda_driver_present() and not dependencies_missing("cuda")
    target = "cuda" if mode == "cuda" or (mode == "on" and gpu) else "cpu"
    missing = dependencies_missing(target)
    if missing:
        return _skipped(
            f"{' and '.join(missing)} not installed: kernel not verified; to verify it: {INSTALL_HINT}",
            missing=missing,
        )
    if isinstance(draft_ckpt, str):
        from recipecli.checkpoint import open_checkpoint

        draft_ckpt = open_checkpoint(draft_ckpt)
    try:
        norms = draft_norms(draft_ckpt)
        if mode == "auto":
            return _from_cache(norms, gpu)
        device = resolve_device("auto" if mode == "on" else mode)
        tokens = _tokens(device)
        results = run_cases(norms, tokens, device, both_paths=False)
    except (CheckpointFormatError, UsageError, MissingDependencyError) as exc:
        return _skipped(f"kernel not verified: {exc.one_line()}")
    except Exception as exc:  # the kernel itself failed to run (e.g. another triton's interpreter)
        first = (str(exc).splitlines() or [""])[0][:200]
        return _skipped(
            f"kernel not verified: it failed to run ({type(exc).__name__}: {first})",
            error=type(exc).__name__,
        )
    how = "ran now"
    if mode == "on":  # cpu / cuda: this check only (a device forced for a diagnosis)
        stored = cache.store(cache.cache_key(norms, device, tokens), results, norms.source)
        how += "; cached for later checks" if stored else "; not cached: cache not writable"
    return _verdict(results, norms, device, tokens, how)
