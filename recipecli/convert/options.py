"""What ``recipecli convert`` is asked to do: :class:`ConvertOptions`, the value tables of its
options, and the parsers of ``--max-shard-size`` / ``--aux-ids`` (kept importable from
:mod:`recipecli.convert` while the CLI moves option parsing into click parameter types)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from recipecli.draft import Convention
from recipecli.errors import UsageError

OutputFormat = Literal["speculators", "eagle3"]


DTYPE_OPTION: Mapping[str, str | None] = {"keep": None, "bf16": "BF16", "fp16": "F16"}


CONFIG_DTYPE: Mapping[str, str] = {"BF16": "bfloat16", "F16": "float16", "F32": "float32"}


OUTPUT_CONVENTION: Mapping[str, Convention] = {
    "speculators": "hidden-state",
    "eagle3": "layer-output",
}


@dataclass(frozen=True)
class ConvertOptions:
    """What ``recipecli convert`` was asked to do.

    Attributes:
        to: ``speculators`` or ``eagle3``.
        aux_ids: ``--aux-ids`` (in ``aux_id_convention``), or None.
        aux_id_convention: convention of the source ids (or of ``aux_ids``), or None = by format.
        norm_before_residual: ``--norm-before-residual``, or None = from the source.
        dtype: ``keep``, ``bf16`` or ``fp16``.
        embed: ``keep`` or ``drop`` (drop only when byte-identical to the target's embedding).
        max_shard_size: bytes per output shard (a larger tensor gets a shard of its own).
        force: replace a previous convert output in OUT, and accept tokenspeed-unservable
            output, conflicting flags and check errors.
        verifier: ``--verifier``: ``speculators_config.verifier.name_or_path`` as given (a
            repo id, or a path the user chose to publish), or None = from ``--target``
            (:func:`verifier_name`).
    """

    to: OutputFormat
    aux_ids: tuple[int, ...] | None = None
    aux_id_convention: Convention | None = None
    norm_before_residual: bool | None = None
    dtype: str = "keep"
    embed: str = "keep"
    max_shard_size: int = 5 * 10**9
    force: bool = False
    verifier: str | None = None


def parse_size(text: str) -> int:
    """Parse ``--max-shard-size`` (``5GB``, ``500MB``, ``2GiB``, ``1000000``) into bytes.

    Decimal units (KB, MB, GB, TB) are powers of 1000 as in Hugging Face's ``save_pretrained``;
    binary units (KiB, MiB, GiB, TiB) powers of 1024.

    Raises:
        UsageError: not a positive size.
    """
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B|B)?\s*", text or "", re.IGNORECASE)
    if not m:
        raise UsageError(f"--max-shard-size {text!r}: expected a size such as 5GB, 500MB or 2GiB")
    unit = (m.group(2) or "B").upper()
    scale = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}
    scale |= {"KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}
    size = int(float(m.group(1)) * scale[unit])
    if size <= 0:
        raise UsageError(f"--max-shard-size {text!r}: must be positive")
    return size


def parse_aux_ids(text: str) -> tuple[int, ...]:
    """Parse ``--aux-ids 1,23,44``.

    Raises:
        UsageError: empty or non-integer entries, or negative ids.
    """
    try:
        ids = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        ids = ()
    if not ids or any(i < 0 for i in ids):
        raise UsageError(f"--aux-ids {text!r}: expected comma-separated layer ids, e.g. 1,23,44")
    return ids
