"""click ``ParamType``\\ s: option strings parsed into the values the library takes.

Option strings are parsed here so that the library takes typed values: a command declares
``type=TP_SIZES`` (…) and receives a ``tuple[int, ...]``, bytes, a pair of labels or a bool. A bad value stops the command
before it does any work with one line naming the option, exit 2: :class:`OptionType` raises
:class:`recipecli.errors.UsageError` (mapped in :func:`recipecli.cli.main`), worded ``--tp '1,x':
expected …``, as the commands said before these types existed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NoReturn

import click

from recipecli.errors import UsageError

if TYPE_CHECKING:  # generic from click 8.4 on: subscripted only for the type checker (click>=8.1)
    _ParamType = click.ParamType[Any]
    _Choice = click.Choice[Any]  # TrueFalse converts a str choice to a bool
else:
    _ParamType = click.ParamType
    _Choice = click.Choice


def option_name(param: click.Parameter | None) -> str:
    """The option as users type it (its first ``--long`` name), for messages."""
    if param is None:
        return "value"
    opts: list[str] = getattr(param, "opts", None) or [param.name or "value"]
    return next((o for o in opts if o.startswith("--")), opts[0])


class OptionType(_ParamType):
    """Base of recipecli's option types: :meth:`fail` raises the library's one-line
    :class:`~recipecli.errors.UsageError` (exit 2) instead of click's ``BadParameter``."""

    #: the metavar ``--help`` shows: TEXT, as for the plain string options these types replaced
    name = "text"

    def fail(
        self, message: str, param: click.Parameter | None = None, ctx: click.Context | None = None
    ) -> NoReturn:
        raise UsageError(message)


class TensorParallelSizes(OptionType):
    """``--tp 1,2,4,8``: comma-separated positive integers -> ``tuple[int, ...]``, first
    occurrence order, duplicates dropped (``2,2,1`` -> ``(2, 1)``). Every entry must be an
    integer (``1,,2`` is refused)."""

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[int, ...]:
        if isinstance(value, tuple):
            return value
        text = str(value)
        bad = f"{option_name(param)} {text!r}: expected comma-separated positive integers, e.g. 1,2,4,8"
        try:
            sizes = tuple(int(x) for x in text.split(","))
        except ValueError:
            self.fail(bad, param, ctx)
        if not sizes or any(t < 1 for t in sizes):
            self.fail(bad, param, ctx)
        return tuple(dict.fromkeys(sizes))


class LayerIds(OptionType):
    """``--aux-ids 1,23,44``: comma-separated non-negative layer ids -> ``tuple[int, ...]``, in
    the order given (empty entries between commas are skipped; at least one id)."""

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[int, ...]:
        if isinstance(value, tuple):
            return value
        text = str(value)
        try:
            ids = tuple(int(x) for x in text.split(",") if x.strip())
        except ValueError:
            ids = ()
        if not ids or any(i < 0 for i in ids):
            self.fail(
                f"{option_name(param)} {text!r}: expected comma-separated layer ids, e.g. 1,23,44",
                param,
                ctx,
            )
        return ids


class Counts(OptionType):
    """Comma-separated non-negative integers -> ``tuple[int, ...]`` (``--tokens 0,1,7,64``),
    blank entries skipped; with ``pair``, exactly two positive ones (``--widths D1,D2``).

    Args:
        example: the example the message gives for a non-integer entry.
        pair: two positive integers (D1,D2).
        maximum: the largest value accepted (a clear error before anything is allocated).
        entries: the most entries accepted.
    """

    def __init__(
        self, example: str, *, pair: bool = False, maximum: int | None = None, entries: int = 64
    ) -> None:
        self.example = example
        self.pair = pair
        self.maximum = maximum
        self.entries = entries

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[int, ...]:
        if isinstance(value, tuple):
            return value
        text, flag = str(value), option_name(param)
        shown = text if len(text) <= 80 else f"{text[:77]}..."
        if text.count(",") >= self.entries or len(text) > 24 * self.entries:
            self.fail(f"{flag}: more than {self.entries} entries", param, ctx)
        try:
            values = tuple(int(v) for v in text.split(",") if v.strip() != "")
        except ValueError:
            self.fail(
                f"{flag} {text!r}: expected comma-separated integers, e.g. {self.example}",
                param,
                ctx,
            )
        if not values or any(v < 0 for v in values):
            self.fail(f"{flag} {text!r}: expected non-negative integers", param, ctx)
        if self.pair and (len(values) != 2 or 0 in values):
            self.fail(f"{flag} {text!r}: expected two positive widths D1,D2", param, ctx)
        if self.maximum is not None and max(values) > self.maximum:
            self.fail(
                f"{flag} {shown!r}: {max(values)} is more than {self.maximum}, the most "
                "recipecli accepts",
                param,
                ctx,
            )
        return values


#: Bytes per unit of :class:`ByteSize`: decimal units are powers of 1000, as Hugging Face's
#: ``save_pretrained(max_shard_size=...)`` reads them; binary units (KiB …) powers of 1024.
SIZE_UNITS: dict[str, int] = {
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KIB": 2**10,
    "MIB": 2**20,
    "GIB": 2**30,
    "TIB": 2**40,
}
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B|B)?\s*", re.IGNORECASE)


class ByteSize(OptionType):
    """``--max-shard-size 5GB`` (``500MB``, ``2GiB``, ``1.5GB``, ``1000000``) -> a positive
    ``int`` of bytes (:data:`SIZE_UNITS`; no unit = bytes; case-insensitive)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        text, flag = str(value), option_name(param)
        m = _SIZE.fullmatch(text)
        if not m:
            self.fail(f"{flag} {text!r}: expected a size such as 5GB, 500MB or 2GiB", param, ctx)
        size = int(float(m.group(1)) * SIZE_UNITS[(m.group(2) or "B").upper()])
        if size <= 0:
            self.fail(f"{flag} {text!r}: must be positive", param, ctx)
        return size


class LabelPair(OptionType):
    """``--labels 'Baseline,This PR'`` -> two non-empty names (spaces around them dropped)."""

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[str, str]:
        if isinstance(value, tuple):
            return value
        parts = [p.strip() for p in str(value).split(",")]
        if len(parts) != 2 or not all(parts):
            self.fail(
                f"{option_name(param)} takes two comma-separated names, e.g. Baseline,'This PR'; "
                f"got {value!r}",
                param,
                ctx,
            )
        return parts[0], parts[1]


class TrueFalse(_Choice):
    """``true`` or ``false`` (exactly these words, unlike click's BOOL) -> ``bool``."""

    def __init__(self) -> None:
        super().__init__(["true", "false"])

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> bool:
        if isinstance(value, bool):
            return value
        chosen: str = super().convert(value, param, ctx)
        return chosen == "true"


class BoundedInt(OptionType):
    """An integer in ``[minimum, maximum]`` -> ``int`` (``render --nodes 2``, ``--head-port``)."""

    name = "integer"

    def __init__(self, minimum: int, maximum: int | None = None) -> None:
        self.minimum, self.maximum = minimum, maximum

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            try:
                number = int(str(value), 10)
            except ValueError:
                self.fail(f"{option_name(param)} {value!r}: expected an integer", param, ctx)
        top = "" if self.maximum is None else f" and at most {self.maximum}"
        if number < self.minimum or (self.maximum is not None and number > self.maximum):
            self.fail(f"{option_name(param)} {number}: expected at least {self.minimum}{top}")
        return number


#: a host name, IPv4 or bracket-less IPv6 address, or a network interface name (NCCL's list
#: syntax: ``^``/``=`` prefixes, commas)
_NAME = re.compile(r"^[A-Za-z0-9_.:%=^,-]+$")


class NetName(OptionType):
    """A host name / address or interface name (``render --head-addr``, ``--ifname``): no
    spaces, quotes or shell characters -> ``str``."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        if not _NAME.match(text):
            self.fail(
                f"{option_name(param)} {text!r}: expected a host name, an address or an "
                "interface name (letters, digits, . : - _ only)",
                param,
                ctx,
            )
        return text


TP_SIZES = TensorParallelSizes()
"""``check --tp``."""
AUX_IDS = LayerIds()
"""``convert --aux-ids``."""
#: Largest ``verify-kernel --tokens`` entry and ``--widths`` width (4x the widest EAGLE3 draft,
#: 16384); with ``verify-kernel``'s element budget (``MAX_ELEMENTS``) a run stays under 1 GB.
MAX_TOKENS = 65536
MAX_WIDTH = 65536
TOKEN_COUNTS = Counts("0,1,7,64", maximum=MAX_TOKENS)
"""``verify-kernel --tokens``."""
WIDTHS = Counts("4096,4096", pair=True, maximum=MAX_WIDTH)
"""``verify-kernel --widths``."""
SHARD_SIZE = ByteSize()
"""``convert --max-shard-size``."""
LABELS = LabelPair()
"""``report --labels``."""
KERNEL_MODE: click.Choice[str] = click.Choice(["auto", "on", "cpu", "cuda", "skip"])
"""``check --kernel`` (``recipecli.kernelcheck.KERNEL_MODES``, written here so that ``--help``
imports no kernel code; tests/kernelcheck asserts they agree): auto = a cached verification of
the draft's norms, else a note naming ``on``; on = run now and cache it; cpu / cuda = run on that
device for this check; skip = none."""
NODE_COUNT = BoundedInt(1, 4096)
"""``render --nodes``."""
GPU_COUNT = BoundedInt(1, 1024)
"""``render --gpus-per-node``."""
PORT = BoundedInt(1, 65535)
"""``render --head-port``."""
SECONDS = BoundedInt(1)
"""``render --dist-timeout``."""
NET_NAME = NetName()
"""``render --head-addr``, ``--ifname``."""
