"""Sizes a user controls are bounded before anything is allocated (issue #29, item 3):
``verify-kernel --widths``/``--tokens`` (1e9 widths grew past 2.8 GB; 1e9 tokens died with a
MemoryError traceback). Each case must answer within seconds with one line and exit 2."""

from __future__ import annotations

import time

import pytest
from hostile_helpers import one_error_line


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (
            ("--widths", "1000000000,4096"),
            "--widths '1000000000,4096': 1000000000 is more than 65536",
        ),
        (
            ("--widths", "64,64", "--tokens", "1000000000"),
            "--tokens '1000000000': 1000000000 is more",
        ),
        # 4096 tokens x (16384 + 16384) = 134M elements > 2**25 = 33,554,432: 1024 tokens fit
        (
            ("--widths", "16384,16384", "--tokens", "4096"),
            "--tokens 4096 x 32768 elements per token is more than the 33554432 elements per "
            "tensor recipecli allocates — give --tokens up to 1024 for these widths",
        ),
        (
            ("--widths", "64,64", "--tokens", ",".join(["1"] * 100)),
            "--tokens: more than 64 entries",
        ),
    ],
)
def test_verify_kernel_sizes_are_bounded(run, args, needle):
    t0 = time.monotonic()
    proc = run("verify-kernel", *args, "--device", "cpu")
    assert time.monotonic() - t0 < 10
    line = one_error_line(proc.stderr)
    assert proc.returncode == 2 and needle in line, line


# ------------------------------------------------ string lengths in text output (display.py)

_BIG = 10_000_000  # a 10 MB architecture: config.json stays under the 16 MiB read limit


@pytest.fixture
def big_target(scratch):
    """target_big/config.json: the target's config with architectures ["BBB…"] (10 MB)."""
    import json

    cfg = json.loads((scratch / "target" / "config.json").read_text())
    cfg["architectures"] = ["B" * _BIG]
    (scratch / "target_big").mkdir()
    (scratch / "target_big" / "config.json").write_text(json.dumps(cfg))
    return scratch / "target_big"


def test_inspect_text_cuts_a_10mb_architecture_json_keeps_it(run, big_target):
    import json

    proc = run("inspect", "target_big")
    assert proc.returncode == 0, proc.stderr
    # 256 characters kept, 10,000,000 - 256 = 9,999,744 more named
    arch = next(line for line in proc.stdout.splitlines() if line.startswith("architecture"))
    assert arch.startswith("architecture  " + "B" * 256 + " [… 9999744 more characters]")
    assert len(proc.stdout) < 4000
    doc = json.loads(run("inspect", "target_big", "--json").stdout)
    assert doc["architecture"] == "B" * _BIG  # whole: bounded by the 16 MiB config.json cap


def test_check_text_cuts_it_in_the_header_and_in_messages(run, big_target):
    proc = run("check", "target_big", "draft", "--kernel", "skip")
    assert proc.returncode == 1, proc.stderr
    assert len(proc.stdout) < 20_000  # it was 20 MB: the header and target.unregistered
    header = proc.stdout.splitlines()[0]  # the value alone: 256 characters kept
    assert header.startswith("target  target_big: " + "B" * 256 + " [… 9999744 more characters]")
    unregistered = next(li for li in proc.stdout.splitlines() if "target.unregistered" in li)
    assert "characters cut …]" in unregistered  # a message over 4096 characters: start and end
    assert max(len(line) for line in proc.stdout.splitlines()) < 4096 + 64


def test_lint_text_cuts_a_long_recipe_value(run, scratch):
    text = (
        (scratch / "my.yaml")
        .read_text()
        .replace(
            "      host: 0.0.0.0",
            "      host: 0.0.0.0\n      served-model-name: " + "z" * 100_000 + "\u202e",
        )
    )
    (scratch / "long.yaml").write_text(text)
    proc = run("lint", "long.yaml")
    line = next(li for li in proc.stdout.splitlines() if "recipe.invisible_char" in li)
    # over 4096 characters: start and end kept around the cut; the value's word "(zzz…" then
    # keeps 256 characters; the hint at the end stays
    assert "(" + "z" * 255 + " [… " in line and " characters cut …] " in line, line[:400]
    assert line.endswith("[docs/hostile-input.md#invisible-characters]")
    assert len(line) < 4096 + 200 and "\u202e" not in proc.stdout


def test_display_cuts_by_hand():
    from recipecli.display import TEXT_CHARS, VALUE_CHARS, shown_text, shown_value

    assert (VALUE_CHARS, TEXT_CHARS) == (256, 4096)  # the lengths docs/hostile-input.md names
    assert shown_value("a" * 256) == "a" * 256
    assert shown_value("a" * 300) == "a" * 256 + " [… 44 more characters]"
    assert shown_value("x\u202ey") == "x\\u202ey"
    assert shown_text("short words stay") == "short words stay"
    # 5000 characters: 3072 head + 1024 tail kept, 904 cut
    text = shown_text("ab " * 1666 + "ab")
    assert "[… 904 characters cut …]" in text and text.endswith("ab ab")
    assert shown_text(shown_text("q " + "w" * 999)) == "q " + "w" * 256 + " [… 743 more characters]"


# ------------------------------------------------ recipes with many unknown flags: linear


@pytest.mark.slow
def test_lint_of_15000_unknown_flags_is_linear(scratch, monkeypatch):
    # 15,000 unknown vLLM flags fill a 256 KiB recipe (the loader's cap); difflib's suggestion is
    # the costly step (1-2 ms each: 30 s in all before), so it is counted: at most 100 calls
    import recipecli.engines.catalog as catalog
    from recipecli.recipes.lint import lint_recipe

    n = 15_000
    flags = "".join(f"      zq{i}x: 1\n" for i in range(n))
    text = (
        (scratch / "my.yaml")
        .read_text()
        .replace("      host: 0.0.0.0\n", "      host: 0.0.0.0\n  vllm:\n    args:\n" + flags)
    )
    (scratch / "many.yaml").write_text(text)
    assert (scratch / "many.yaml").stat().st_size <= 256 * 1024
    calls = []
    real = catalog.Catalog.suggest

    def counted(self, flag, command="serve"):
        calls.append(flag)
        return real(self, flag, command)

    monkeypatch.setattr(catalog.Catalog, "suggest", counted)
    t0 = time.monotonic()
    found = lint_recipe(str(scratch / "many.yaml"))
    assert time.monotonic() - t0 < 60  # generous: about 5 s on a loaded 2-core box
    unknown = [f for f in found if f.code == "recipe.flag_unknown"]
    assert len(unknown) == n and len(calls) == 100
    assert calls == [f"--zq{i}x" for i in range(100)]


def test_yaml_limits_without_libyaml(monkeypatch):
    # PyYAML built without libyaml: the pure-Python event parser gives the same verdicts
    import yaml

    from recipecli.errors import RecipeError
    from recipecli.safeio import check_yaml_limits

    for present in (True, False):
        if not present:
            monkeypatch.delattr(yaml, "CSafeLoader", raising=False)
        with pytest.raises(RecipeError, match="nested more than 64 levels"):
            check_yaml_limits("a: " + "[" * 65 + "]" * 65, where="r.yaml", error=RecipeError)
        with pytest.raises(RecipeError, match="integer of more than 4300 digits"):
            check_yaml_limits("a: " + "9" * 5000, where="r.yaml", error=RecipeError)
        check_yaml_limits("a: '" + "9" * 5000 + "'", where="r.yaml", error=RecipeError)
