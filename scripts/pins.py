"""Where each engine's pinned version and data files are, for the extraction scripts.

Everything derives from the engine's pin (``recipecli/engines/<engine>/pin.py``): a version bump is
that one edit, then re-running the scripts, which write to the paths below.
"""

from __future__ import annotations

import re
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


#: A pinned version in a hand-written page: ``<!--pin:ENGINE:FIELD-->TEXT<!--/pin-->``, FIELD one of
#: ``ref`` (v0.33.0, f4d8ec6e039c), ``version``, ``short`` (0.33.0, f4d8ec6e), ``transformers``.
#: The comments do not show on a rendered page; ``docs`` rewrites TEXT from the pin.
PIN_SPAN = re.compile(r"<!--pin:([a-z0-9_]+):(ref|version|short|transformers)-->(.*?)<!--/pin-->")

#: The hand-written pages that name pinned versions (the generated ones derive them already).
HAND_WRITTEN = ("README.md", "docs/*.md")


def pinned_text(engine: str, field: str) -> str:
    """The spelling of ``engine``'s pin that ``field`` names."""
    p = pin(engine)
    return {"ref": p.ref, "version": p.version, "short": p.short, "transformers": p.transformers}[
        field
    ]


def sync_docs(check: bool) -> list[str]:
    """Rewrite every pin span of the hand-written pages from the pins (or, with ``check``, list
    the spans that differ without writing). Returns ``path:line: found -> pinned`` lines."""
    stale: list[str] = []
    for pattern in HAND_WRITTEN:
        for path in sorted(ROOT.glob(pattern)):
            text = path.read_text(encoding="utf-8")

            def fix(m: re.Match[str], path: Path = path, text: str = text) -> str:
                want = pinned_text(m.group(1), m.group(2))
                if m.group(3) != want:
                    line = text.count("\n", 0, m.start()) + 1
                    stale.append(f"{path.relative_to(ROOT)}:{line}: {m.group(3)} -> {want}")
                return f"<!--pin:{m.group(1)}:{m.group(2)}-->{want}<!--/pin-->"

            new = PIN_SPAN.sub(fix, text)
            if new != text and not check:
                path.write_text(new, encoding="utf-8")
    return stale


def main(argv: list[str]) -> int:
    """``python scripts/pins.py version|requirements ENGINE``: print the pinned version or the
    conformance requirements file name (for the shell scripts under scripts/conformance/);
    ``python scripts/pins.py docs [--check]``: rewrite (or check) the pin spans of the
    hand-written pages."""
    if argv[:1] == ["docs"]:
        stale = sync_docs(check=argv[1:] == ["--check"])
        for line in stale:
            print(line, file=sys.stderr)
        if stale and argv[1:] == ["--check"]:
            print("pins: run `python scripts/pins.py docs` to update these pages", file=sys.stderr)
            return 1
        return 0
    if len(argv) != 2 or argv[0] not in ("version", "requirements"):
        print(
            "usage: python scripts/pins.py version|requirements ENGINE | docs [--check]",
            file=sys.stderr,
        )
        return 2
    what, engine = argv
    print(pin(engine).version if what == "version" else pin(engine).requirements_file)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
