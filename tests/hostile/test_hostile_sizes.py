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
