"""What each writer writes (:class:`OutputKind`), and how a previous output of it is recognised:
an existing file is replaced only when its kind recognises it (or it is empty)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

#: Largest existing file read to recognise a previous output (report JSON tables are small).
RECOGNISE_MAX_BYTES = 16 << 20

#: ``Software`` text chunk of the PNG that ``report --plot`` writes (its output mark).
PLOT_SOFTWARE_TAG = "recipecli report --plot"


@dataclass(frozen=True)
class OutputKind:
    """What a command writes, and how a previous output of it is recognised.

    Attributes:
        name: how messages name it, e.g. "recipecli snapshot".
        recognise: ``head -> bool`` on the first ``head_bytes`` bytes of an existing file.
        head_bytes: how much of the existing file ``recognise`` needs.
    """

    name: str
    recognise: Callable[[bytes], bool]
    head_bytes: int = 4096


def _is_snapshot(head: bytes) -> bool:
    # dumps_snapshot writes the version key first: {"recipecli_snapshot": 1, ...}
    return re.match(rb'\s*\{\s*"recipecli_snapshot"\s*:', head) is not None


def _is_report(head: bytes) -> bool:
    # markdown (render_markdown): first line "Workload: ..."; JSON (Report.to_dict): these keys
    if head.startswith(b"Workload: "):
        return True
    try:
        doc = json.loads(head)
    except (ValueError, RecursionError):
        return False
    return isinstance(doc, dict) and {"labels", "files", "workload", "rows"} <= doc.keys()


def _is_plot(head: bytes) -> bool:
    # PNG signature, then a tEXt chunk "Software\0recipecli report --plot" (before the image data)
    tag = b"tEXtSoftware\x00" + PLOT_SOFTWARE_TAG.encode()
    return head.startswith(b"\x89PNG\r\n\x1a\n") and tag in head


SNAPSHOT = OutputKind("recipecli snapshot (inspect --save-metadata)", _is_snapshot, 256)
REPORT = OutputKind("recipecli report table", _is_report, RECOGNISE_MAX_BYTES)
PLOT = OutputKind("recipecli report --plot chart", _is_plot, 4096)


def generated_page_kind(*markers: str) -> OutputKind:
    """The kind of ``docs`` pages: files whose first line is one of ``markers``."""
    firsts = {m.encode("utf-8") for m in markers}
    return OutputKind(
        "generated page (recipecli docs)",
        lambda head: head.split(b"\n", 1)[0].rstrip(b"\r") in firsts,
        max(len(f) for f in firsts) + 2,
    )
