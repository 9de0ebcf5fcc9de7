"""What ``recipecli convert`` is asked to do: :class:`ConvertOptions` and the value tables of its
options (the option strings themselves are parsed by the CLI's parameter types,
``recipecli/cli/params.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from recipecli.draft import Convention

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
