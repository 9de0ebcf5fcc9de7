"""``python -m recipecli`` and the ``recipecli`` console script (pyproject ``[project.scripts]``).

Ctrl-C while the CLI is still being imported (about 0.2 s: click, the command table, the error
family) exits 130 with the one line ``recipecli: interrupted``, as Ctrl-C during a command does
(:func:`recipecli.cli.app.main`). The SIGINT handler that does so is installed here, for that
import only: ``import recipecli`` (the library) installs nothing, and a SIGINT the shell set to
be ignored (``nohup``, a background job) stays ignored.
"""

from __future__ import annotations

import os
import signal
from types import FrameType

#: What Ctrl-C during start-up prints on stderr (the same line as later)
INTERRUPTED_LINE = b"recipecli: interrupted\n"

#: Exit status of Ctrl-C: 128 + SIGINT, as the shell reports a process it stopped
INTERRUPTED_EXIT = 130


def _interrupted_during_start_up(signum: int, frame: FrameType | None) -> None:
    """SIGINT before the CLI is imported: one line, exit 130 (nothing is written yet)."""
    try:
        os.write(2, INTERRUPTED_LINE)
    except OSError:  # stderr closed: the exit status still says it
        pass
    os._exit(INTERRUPTED_EXIT)


def main() -> None:
    """Import the CLI with start-up Ctrl-C handled, then run it (exits via ``sys.exit``).

    Raises:
        SystemExit: always, with the exit code of :func:`recipecli.cli.app.main`.
    """
    previous = signal.getsignal(signal.SIGINT)
    guarded = previous is signal.default_int_handler
    if guarded:
        signal.signal(signal.SIGINT, _interrupted_during_start_up)
    try:
        from recipecli.cli.app import main as run
    finally:
        if guarded:  # from here Ctrl-C is KeyboardInterrupt, which the CLI maps to 130
            signal.signal(signal.SIGINT, previous)
    run()


if __name__ == "__main__":
    main()
