"""What a conversion did: :class:`ConvertResult` (its ``to_dict`` is the ``--json`` document)
and its text summary."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from recipecli.checkpoint.model import Checkpoint
from recipecli.convert.plan import ConvertPlan

if TYPE_CHECKING:
    from recipecli.check import CheckResult


class Verification(TypedDict):
    """What the verification compared (``--json`` ``verification``, without ``out_checkpoint``).

    Attributes:
        tensors_compared: output tensors compared with the source bit for bit.
        bytes_compared: bytes compared.
        semantic_differences: always empty (a difference refuses the output).
        out_checkpoint: the written output, reopened with the checkpoint reader.
    """

    tensors_compared: int
    bytes_compared: int
    semantic_differences: dict[str, tuple[Any, Any]]
    out_checkpoint: Checkpoint


@dataclass
class ConvertResult:
    """What :func:`convert` did; ``to_dict`` is the ``--json`` document."""

    source: str
    out: str
    plan: ConvertPlan
    shards: list[str]
    verification: Verification
    check: CheckResult | None = None
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        p = self.plan
        out: dict[str, Any] = {
            "source": self.source,
            "out": self.out,
            "to": p.options.to,
            "source_format": p.draft.format,
            "source_format_name": p.draft.format_name,
            "tensors": [m.to_dict() for m in p.moves],
            "dropped_tensors": [{"name": n, "why": w} for n, w in p.dropped],
            "translated": [t.to_dict() for t in p.translations],
            "config_keys_dropped": [{"key": k, "why": w} for k, w in p.config_keys_dropped],
            "config": p.config,
            "shards": self.shards,
            "bytes_written": p.total_bytes,
            "largest_tensor_bytes": p.largest_tensor_bytes,
            "verification": {k: v for k, v in self.verification.items() if k != "out_checkpoint"},
            "seconds": round(self.seconds, 3),
            "notes": list(p.notes) + self.notes,
            "ok": True,
        }
        if self.check is not None:
            out["check"] = {
                "engines": list(self.check.engines),
                "findings": [f.to_dict() for f in self.check.findings],
                "ok": self.check.ok(),
            }
        return out


def format_result(res: ConvertResult) -> str:
    """Human summary of a conversion."""
    p = res.plan
    lines = [
        f"{res.source} (format {p.draft.format}: {p.draft.format_name}) -> {res.out} ({p.options.to})",
        f"  {len(p.moves)} tensors, {p.total_bytes / 1e9:.3f} GB in {len(res.shards)} shard(s), "
        f"verified bit for bit in {res.seconds:.1f} s",
    ]
    renamed = [m for m in p.moves if m.src != m.dst and not m.derived]
    if renamed:
        lines.append(f"  renamed {len(renamed)} tensors, e.g. {renamed[0].src} -> {renamed[0].dst}")
    cast = [m for m in p.moves if m.src_dtype != m.dst_dtype]
    if cast:
        lines.append(f"  cast {len(cast)} tensors to {cast[0].dst_dtype}")
    for n, why in p.dropped:
        lines.append(f"  dropped {n}: {why}")
    for t in p.translations:
        lines.append(f"  translated {t.field}: {t.source!r} -> {t.output!r} ({t.why})")
    for k, why in p.config_keys_dropped:
        lines.append(f"  config key {k} not carried: {why}")
    for n in list(p.notes) + res.notes:
        lines.append(f"  note: {n}")
    if res.check is not None:
        errs = sum(f.severity == "error" for f in res.check.findings)
        warns = sum(f.severity == "warning" for f in res.check.findings)
        lines.append(
            f"  check vs target ({', '.join(res.check.engines)}, TP1): {errs} error(s), {warns} warning(s)"
        )
    return "\n".join(lines)
