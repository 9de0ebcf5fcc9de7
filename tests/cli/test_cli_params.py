"""The option types of recipecli/cli/params.py: option strings -> the values the library takes.

Expected values are worked out by hand from the option's documented syntax (``--tp 1,2,4,8``,
``--max-shard-size`` in Hugging Face's units: GB = 10**9 bytes, GiB = 2**30), never printed by
the code under test.
"""

from __future__ import annotations

import subprocess
import sys

import click
import pytest

from recipecli.cli.params import (
    AUX_IDS,
    LABELS,
    SHARD_SIZE,
    TOKEN_COUNTS,
    TP_SIZES,
    WIDTHS,
    TrueFalse,
)
from recipecli.errors import UsageError


def convert(kind: click.ParamType, flag: str, text: str):
    return kind.convert(text, click.Option([flag]), None)


@pytest.mark.parametrize(
    ("text", "sizes"),
    [("1,2,4,8", (1, 2, 4, 8)), ("2,2,1", (2, 1)), (" 4", (4,)), ("8", (8,))],
)
def test_tp_sizes(text, sizes):
    assert convert(TP_SIZES, "--tp", text) == sizes


@pytest.mark.parametrize("text", ["1,x", "0", "", "1,,2", "-2", "2.0"])
def test_tp_sizes_refused_with_one_line_naming_the_option(text):
    with pytest.raises(UsageError) as exc:
        convert(TP_SIZES, "--tp", text)
    assert exc.value.one_line() == (
        f"--tp {text!r}: expected comma-separated positive integers, e.g. 1,2,4,8"
    )


@pytest.mark.parametrize(
    ("text", "ids"), [("1,23,44", (1, 23, 44)), ("44,1", (44, 1)), ("1,,2", (1, 2)), ("0", (0,))]
)
def test_aux_ids_keep_the_order_given(text, ids):
    assert convert(AUX_IDS, "--aux-ids", text) == ids


@pytest.mark.parametrize("text", ["", " , ", "1,x", "-1", "3,-2"])
def test_aux_ids_refused(text):
    with pytest.raises(UsageError, match=r"^--aux-ids .*: expected comma-separated layer ids"):
        convert(AUX_IDS, "--aux-ids", text)


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("5GB", 5 * 10**9),
        ("500MB", 500 * 10**6),
        ("2GiB", 2 * 2**30),
        ("1000", 1000),
        ("1.5gb", 1_500_000_000),
        ("64 KiB", 65536),
        ("3TB", 3 * 10**12),
    ],
)
def test_shard_size_in_hugging_face_units(text, size):
    assert convert(SHARD_SIZE, "--max-shard-size", text) == size


@pytest.mark.parametrize(
    ("text", "why"),
    [("lots", "expected a size such as 5GB"), ("5 GBs", "expected a size"), ("0", "positive")],
)
def test_shard_size_refused(text, why):
    with pytest.raises(UsageError, match=f"^--max-shard-size {text!r}: .*{why}"):
        convert(SHARD_SIZE, "--max-shard-size", text)


def test_token_counts_and_widths():
    assert convert(TOKEN_COUNTS, "--tokens", "0,1,7,64,512") == (0, 1, 7, 64, 512)
    assert convert(TOKEN_COUNTS, "--tokens", "3,,5") == (3, 5)
    assert convert(WIDTHS, "--widths", "4096,8192") == (4096, 8192)
    with pytest.raises(UsageError, match=r"^--tokens '1,-1': expected non-negative integers$"):
        convert(TOKEN_COUNTS, "--tokens", "1,-1")
    with pytest.raises(UsageError, match=r"e\.g\. 0,1,7,64$"):
        convert(TOKEN_COUNTS, "--tokens", "x")
    with pytest.raises(UsageError, match=r"e\.g\. 4096,4096$"):
        convert(WIDTHS, "--widths", "a,b")
    for bad in ("4096", "0,8", "8,8,8"):
        with pytest.raises(UsageError, match="expected two positive widths D1,D2"):
            convert(WIDTHS, "--widths", bad)


def test_labels():
    assert convert(LABELS, "--labels", "Baseline,This PR") == ("Baseline", "This PR")
    assert convert(LABELS, "--labels", " A , B ") == ("A", "B")
    for bad in ("onlyone", "a,", "a,b,c"):
        with pytest.raises(UsageError, match="^--labels takes two comma-separated names"):
            convert(LABELS, "--labels", bad)


def test_true_false_takes_exactly_those_words():
    kind = TrueFalse()
    assert convert(kind, "--norm-before-residual", "true") is True
    assert convert(kind, "--norm-before-residual", "false") is False
    with pytest.raises(click.BadParameter):
        convert(kind, "--norm-before-residual", "yes")


def test_bad_option_value_is_one_line_exit_2_before_any_work():
    # convert would fail on the missing DRAFT; the bad --max-shard-size is refused first
    proc = subprocess.run(
        [sys.executable, "-m", "recipecli", "convert", "/nonexistent/draft", "/nonexistent/out"]
        + ["--to", "eagle3", "--max-shard-size", "lots"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr == (
        "recipecli: error: --max-shard-size 'lots': expected a size such as 5GB, 500MB or 2GiB\n"
    )
