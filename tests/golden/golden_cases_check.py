"""The :class:`Case` of the golden-output corpus and its help, ``check`` and ``inspect`` cases.

Cases run in list order (:func:`golden_cases.all_cases`), in the work directory of
:mod:`golden_inputs`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path

from golden_inputs import CONFIG_ONLY, FIXTURE_DRAFTS, FIXTURE_PAIRS, FIXTURE_TARGETS, TINY_VARIANTS

ENGINES = ("vllm", "tokenspeed", "sglang")
COMMANDS = ("inspect", "check", "verify-kernel", "render", "lint", "docs", "diff", "report")
COMMANDS_MORE = ("convert", "completion")
#: Bundled recipes and their hardware profiles.
RECIPES: dict[str, tuple[str, ...]] = {
    "gpt-oss-120b-eagle3": ("h200x4",),
    "llama3.1-8b-eagle3": ("h200",),
    "minimax-m3-eagle3": ("b200", "mi355x"),
    "qwen3-30b-a3b-eagle3": ("h200x2",),
}
GOOD = "recipes/golden-good.yaml"
GOOD_HW = ("h200x2", "mi300x")
SKIP = ("--kernel", "skip")


@dataclass(frozen=True)
class Case:
    """One invocation: ``argv`` after ``recipecli``; ``files``: paths (relative to the work
    directory; a directory means every file under it) whose content is recorded after the run;
    ``setup``: called with the work directory before the run."""

    name: str
    argv: tuple[str, ...]
    files: tuple[str, ...] = ()
    setup: Callable[[Path], None] | None = field(default=None, compare=False)


def cmd(name: str, *argv: str, files: tuple[str, ...] = ()) -> Case:
    """The :class:`Case` ``name`` running ``recipecli argv`` (no setup)."""
    return Case(name, tuple(argv), files)


def help_cases() -> Iterator[Case]:
    """The group's and every command's help, the version, an unknown command, completion."""
    yield cmd("help/root", "--help")
    yield cmd("help/bare")
    yield cmd("help/version", "--version")
    yield cmd("help/unknown-command", "chek")
    for command in (*COMMANDS, *COMMANDS_MORE):
        yield cmd(f"help/{command}", command, "--help")
    for shell in ("bash", "zsh", "fish"):
        yield cmd(f"completion/{shell}", "completion", shell)
    yield cmd("completion/unknown", "completion", "tcsh")


def _check_matrix(prefix: str, pair: tuple[str, ...], tps: tuple[str, ...]) -> Iterator[Case]:
    """Every engine choice at the first TP list, ``--engine all`` at every one; text and JSON."""
    for engine, tp in [("all", t) for t in tps] + [(e, tps[0]) for e in ENGINES]:
        for fmt in ("text", "json"):
            extra = ("--json",) if fmt == "json" else ()
            argv = ("check", *pair, "--engine", engine, "--tp", tp, *SKIP, *extra)
            yield Case(f"{prefix}/{engine}/tp{tp}/{fmt}", argv)


def check_example_cases() -> Iterator[Case]:
    """``check --example`` (kernel skipped, and twice on the CPU interpreter), its refusals."""
    ex = ("--example", "llama3.1-8b-eagle3")
    yield from _check_matrix("check-example", ex, ("1,2,4,8", "1", "3,16"))
    for fmt, extra in (("text", ()), ("json", ("--json",))):
        yield cmd(f"check-example/kernel-cpu/{fmt}", "check", *ex, "--kernel", "cpu", *extra)
        yield cmd(f"check-example/strict/{fmt}", "check", *ex, *SKIP, "--strict", *extra)
        yield cmd(
            f"check-example/mml/{fmt}", "check", *ex, *SKIP, "--max-model-len", "4096", *extra
        )
        yield cmd(f"check-example/draft-tp/{fmt}", "check", *ex, *SKIP, "--draft-tp", "1", *extra)
    yield cmd("check-example/list", "check", "--list-examples")
    yield cmd("check-example/unknown", "check", "--example", "nope")
    yield cmd("check-example/with-pair", "check", *ex, "snap/x.json", "snap/y.json")
    yield cmd("check-example/bad-tp", "check", *ex, "--tp", "0", *SKIP)
    yield cmd("check-example/bad-tp-text", "check", *ex, "--tp", "a,b", *SKIP)
    yield cmd("check-example/no-pair", "check")


def check_recipe_cases() -> Iterator[Case]:
    """``check --recipe`` for every bundled recipe x hardware x engine, the hand-written one."""
    recipes = [(r, hw) for r, hws in RECIPES.items() for hw in hws] + [(GOOD, h) for h in GOOD_HW]
    for (recipe, hw), engine, fmt in product(recipes, ("all", *ENGINES), ("text", "json")):
        extra = ("--json",) if fmt == "json" else ()
        argv = ("check", "--recipe", recipe, "--hardware", hw, "--engine", engine, *SKIP, *extra)
        yield Case(f"check-recipe/{Path(recipe).stem}/{hw}/{engine}/{fmt}", argv)
    yield cmd("check-recipe/default-hw", "check", "--recipe", "llama3.1-8b-eagle3", *SKIP)
    yield cmd("check-recipe/unknown", "check", "--recipe", "nope", *SKIP)
    yield cmd("check-recipe/bad-hw", "check", "--recipe", "llama3.1-8b-eagle3", "--hardware", "x")
    yield cmd("check-recipe/broken", "check", "--recipe", "recipes/yaml-invalid.yaml", *SKIP)
    yield cmd("check-recipe/hw-alone", "check", "--hardware", "h200", *SKIP)


def check_snapshot_cases() -> Iterator[Case]:
    """Bundled target snapshots against the example draft snapshot."""
    draft = "snap/eagle3-llama3.1-instruct-8b.draft.json"
    for target in (
        "Qwen__Qwen3-30B-A3B",
        "amd__MiniMax-M3-MXFP4",
        "meta-llama__Llama-3.1-8B-Instruct",
        "nvidia__MiniMax-M3-NVFP4",
        "openai__gpt-oss-120b",
        "llama3.1-8b-instruct.target",
    ):
        for fmt, extra in (("text", ()), ("json", ("--json",))):
            argv = ("check", f"snap/{target}.json", draft, *SKIP, *extra)
            yield Case(f"check-snapshot/{target}/{fmt}", argv)


def check_fixture_cases() -> Iterator[Case]:
    """Full-size fixture pairs: the engine/TP matrix, --strict, a short serving length."""
    for t, d in FIXTURE_PAIRS:
        pair = (f"fx/t-{t}", f"fx/d-{d}")
        yield from _check_matrix(f"check-fixture/{t}+{d}", pair, ("1,2,4,8", "3,16"))
        yield cmd(f"check-fixture/{t}+{d}/strict", "check", *pair, *SKIP, "--strict", "--json")
        yield cmd(
            f"check-fixture/{t}+{d}/mml2048", "check", *pair, *SKIP, "--max-model-len", "2048"
        )
    llama = "fx/t-llama8b"
    for key in CONFIG_ONLY:
        yield cmd(f"check-fixture/config-only/{key}", "check", llama, f"fx/cfg-{key}", *SKIP)
    yield cmd("check-fixture/target-as-draft", "check", llama, llama, *SKIP)
    yield cmd("check-fixture/draft-as-target", "check", "fx/d-sf-llama3-8b", llama, *SKIP)
    yield cmd("check-fixture/missing", "check", llama, "fx/nothing-here", *SKIP)
    yield cmd("check-fixture/offline-repo", "check", llama, "someone/some-draft", *SKIP)
    yield cmd("check-fixture/one-arg", "check", llama, *SKIP)


def check_tiny_cases() -> Iterator[Case]:
    """Every tiny variant: the engine/TP matrix (TP 3 fails every head count here)."""
    for name in TINY_VARIANTS:
        pair = (f"tiny/{name}/target", f"tiny/{name}/draft")
        yield from _check_matrix(f"check-tiny/{name}", pair, ("1,2,4", "8", "3"))
    base = ("tiny/base-b/target", "tiny/base-b/draft")
    yield cmd("check-tiny/base-b/draft-tp", "check", *base, *SKIP, "--tp", "2,4", "--draft-tp", "1")
    yield cmd("check-tiny/base-b/kernel-cpu", "check", *base, "--kernel", "cpu", "--json")
    yield cmd("check-tiny/base-b/mml", "check", *base, *SKIP, "--max-model-len", "65536")
    yield cmd("check-tiny/base-b/strict", "check", *base, *SKIP, "--strict")
    yield cmd(
        "check-tiny/fmt-d/kernel-cpu",
        "check",
        "tiny/fmt-d/target",
        "tiny/fmt-d/draft",
        "--kernel",
        "cpu",
    )


def inspect_cases() -> Iterator[Case]:
    """Snapshots, fixture targets and drafts, every tiny draft; --save-metadata; refusals."""
    snaps = (
        "Qwen__Qwen3-30B-A3B",
        "amd__MiniMax-M3-MXFP4",
        "meta-llama__Llama-3.1-8B-Instruct",
        "nvidia__MiniMax-M3-NVFP4",
        "openai__gpt-oss-120b",
        "llama3.1-8b-instruct.target",
        "eagle3-llama3.1-instruct-8b.draft",
    )
    for snap, fmt in product(snaps, ("text", "json")):
        extra = ("--json",) if fmt == "json" else ()
        yield Case(f"inspect/snap/{snap}/{fmt}", ("inspect", f"snap/{snap}.json", *extra))
    for key in FIXTURE_TARGETS:
        yield cmd(f"inspect/fx-target/{key}", "inspect", f"fx/t-{key}")
    for key in ("llama8b", "qwen3-8b", "gptoss"):
        yield cmd(f"inspect/fx-target/{key}/json", "inspect", f"fx/t-{key}", "--json")
    for key in (*FIXTURE_DRAFTS, "m3"):
        for fmt, extra in (("text", ()), ("json", ("--json",))):
            yield cmd(f"inspect/fx-draft/{key}/{fmt}", "inspect", f"fx/d-{key}", *extra)
    for key in CONFIG_ONLY:
        yield cmd(f"inspect/config-only/{key}", "inspect", f"fx/cfg-{key}")
    for name in TINY_VARIANTS:
        yield cmd(f"inspect/tiny/{name}", "inspect", f"tiny/{name}/draft")
        yield cmd(f"inspect/tiny/{name}/target", "inspect", f"tiny/{name}/target", "--json")
    for src, out in (
        ("tiny/base-b/draft", "base-b"),
        ("fx/t-llama8b", "llama8b"),
        ("tiny/fmt-d/draft", "fmt-d"),
    ):
        path = f"out/meta-{out}.json"
        yield cmd(f"inspect/save/{out}", "inspect", src, "--save-metadata", path, files=(path,))
        yield cmd(f"inspect/save/{out}/reread", "inspect", path, "--json")
    yield cmd(
        "inspect/save/into-source",
        "inspect",
        "tiny/base-b/draft",
        "--save-metadata",
        "tiny/base-b/draft/meta.json",
    )
    yield cmd(
        "inspect/save/no-dir",
        "inspect",
        "tiny/base-b/draft",
        "--save-metadata",
        "out/no/such/dir.json",
    )
    yield cmd("inspect/missing", "inspect", "fx/nothing-here")
    yield cmd("inspect/offline-repo", "inspect", "someone/some-model")
    yield cmd("inspect/not-json", "inspect", "bench/broken.json")
