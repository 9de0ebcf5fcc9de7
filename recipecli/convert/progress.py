"""Byte progress bars of the write and verify passes (tqdm on a terminal, silent otherwise)."""

from __future__ import annotations

import sys


class Progress:
    """Byte progress on stderr: a tqdm bar when stderr is a terminal (tqdm's ``disable=None``)
    and tqdm is installed; otherwise silent (:func:`convert` logs one summary line instead, so
    CI logs get no per-step lines)."""

    def __init__(self, total: int, desc: str, enabled: bool = True):
        self.total, self.desc, self.enabled, self.done = total, desc, enabled, 0
        self._bar = None
        if enabled and _stderr_is_tty():  # tqdm would draw nothing: not even imported (10 ms)
            try:
                from tqdm import tqdm
            except ImportError:
                return
            self._bar = tqdm(
                total=total,
                desc=desc,
                unit="B",
                unit_scale=True,
                file=sys.stderr,
                leave=False,
                disable=None,  # no bar unless stderr is a TTY
            )

    def update(self, n: int) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def progress_bars_shown() -> bool:
    """Whether :class:`Progress` draws bars here: stderr is a terminal and tqdm is installed."""
    import importlib.util

    return sys.stderr.isatty() and importlib.util.find_spec("tqdm") is not None


def _stderr_is_tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False
