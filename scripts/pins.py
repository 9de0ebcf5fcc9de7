"""Where each engine's pinned version and data files are, for the extraction scripts.

Everything derives from the engine's pin (``recipecli/engines/<engine>/pin.py``): a version bump is
that one edit, then re-running the scripts, which write to the paths below.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from recipecli.engines import engine_spec  # noqa: E402
from recipecli.engines.spec import Pin  # noqa: E402


def pin(engine: str) -> Pin:
    """The engine's :class:`~recipecli.engines.spec.Pin`."""
    return engine_spec(engine).pin


def engine_dir(engine: str) -> Path:
    """The engine folder's ``data/`` directory."""
    return ROOT / Path(*engine_spec(engine).home.split(".")) / "data"


def data_path(engine: str) -> Path:
    """Where ``scripts/build_engine_data.py <engine>`` writes the engine's extracted data."""
    return engine_dir(engine) / pin(engine).data_file


def catalog_path(engine: str) -> Path:
    """Where the engine's flag catalog is written."""
    return engine_dir(engine) / pin(engine).catalog_file


TRANSFORMERS_DIR = ROOT / "recipecli" / "data" / "transformers"


def check_version(engine: str, found: str) -> None:
    """Exit with one line when the source read is not the pinned version.

    Raises:
        SystemExit: ``found`` differs from the pin (a prefix of a pinned commit is the same).
    """
    want = pin(engine).version
    if found != want and not (pin(engine).kind == "commit" and want.startswith(found)):
        raise SystemExit(
            f"{engine}: the source is {found}, the pin is {want}: edit "
            f"recipecli/engines/{engine}/pin.py first (a bump is that edit plus these scripts)"
        )


def main(argv: list[str]) -> int:
    """``python scripts/pins.py version|requirements ENGINE``: print the pinned version or the
    conformance requirements file name (for the shell scripts under scripts/conformance/)."""
    if len(argv) != 2 or argv[0] not in ("version", "requirements"):
        print("usage: python scripts/pins.py version|requirements ENGINE", file=sys.stderr)
        return 2
    what, engine = argv
    print(pin(engine).version if what == "version" else pin(engine).requirements_file)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
