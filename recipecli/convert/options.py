"""What ``recipecli convert`` is asked to do: :class:`ConvertOptions` and the value tables of its
options (the option strings themselves are parsed by the CLI's parameter types,
``recipecli/cli/params.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from recipecli.draft import Convention

#: ``--dtype`` values
DtypeOption = Literal["keep", "bf16", "fp16"]
#: ``--embed`` values
EmbedOption = Literal["keep", "drop"]

#: ``--dtype`` value -> the safetensors dtype floating weights are cast to (None: kept)
DTYPE_OPTION: Mapping[str, str | None] = {"keep": None, "bf16": "BF16", "fp16": "F16"}

#: safetensors dtype -> its config spelling (``torch_dtype``)
CONFIG_DTYPE: Mapping[str, str] = {"BF16": "bfloat16", "F16": "float16", "F32": "float32"}


@dataclass(frozen=True)
class ConvertOptions:
    """What ``recipecli convert`` was asked to do.

    Attributes:
        to: the output format, a key of :func:`recipecli.convert.formats.output_formats`
            (``speculators``, ``eagle3``); an unregistered key is refused when the conversion
            is planned.
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

    to: str
    aux_ids: tuple[int, ...] | None = None
    aux_id_convention: Convention | None = None
    norm_before_residual: bool | None = None
    dtype: DtypeOption = "keep"
    embed: EmbedOption = "keep"
    max_shard_size: int = 5 * 10**9
    force: bool = False
    verifier: str | None = None
