"""`recipecli report` on hostile or unlucky input: one line, exit 2, no traceback, no hang.

The bench and eval files are read through recipecli.safeio (regular files only, opened without
blocking, size capped) and parsed with bounded nesting and integer length.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers.report import PR_CANDIDATE, bench_json, run_cli, write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


@pytest.fixture
def good(tmp_path):
    return write(tmp_path / "good.json", bench_json(PR_CANDIDATE))


HOSTILE = {
    # 100 000 nested lists: json.loads raises RecursionError
    "deep": ("[" * 100_000 + "]" * 100_000, "nested more than 64 levels deep"),
    # 70 levels: parses, but deeper than any bench result (3 levels)
    "deep_parsed": ('{"a":' * 70 + "1" + "}" * 70, "nested more than 64 levels deep"),
    # 5000 digits: Python refuses int() of more than 4300 digits (ValueError)
    "big_int": ('{"completed": 1' + "0" * 5000 + "}", "integer of more than 4300 digits"),
    # a finite but absurd count: refused as a number, and the message stays short
    "huge_count": (None, "completed=1" + "0" * 38 + "…"),  # repr cut at 40 characters
    "not_utf8": (b"\xff\xfe{", "not UTF-8 text"),
    "infinite_metric": (None, "mean_ttft_ms=inf"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_bench_file_one_line_exit_2(capsys, tmp_path, good, case):
    content, expected = HOSTILE[case]
    path = tmp_path / f"bad-{case}.json"
    if case == "huge_count":
        content = json.dumps(bench_json(PR_CANDIDATE, completed=10**1000))
    elif case == "infinite_metric":
        content = json.dumps(bench_json(PR_CANDIDATE, mean_ttft_ms=float("inf")))
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    code, out, err = run_cli(capsys, good, str(path))
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert str(path) in err and expected in err


def test_fifo_is_refused_without_blocking(tmp_path, good):
    fifo = tmp_path / "bench.json"
    os.mkfifo(fifo)
    proc = subprocess.run(
        [sys.executable, "-m", "recipecli", "report", good, str(fifo)],
        capture_output=True,
        text=True,
        timeout=60,  # a blocking open() would hang here
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert "is a FIFO (named pipe), not a regular file" in proc.stderr
    assert len(proc.stderr.splitlines()) == 1


def test_hostile_eval_file(capsys, tmp_path, good):
    deep = write(tmp_path / "eval.json", "{" + '"a":{' * 80 + "}" * 81)
    code, _, err = run_cli(capsys, good, good, "--eval-b", deep)
    assert code == 2 and "nested more than 64 levels deep" in err and "Traceback" not in err


_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)
_keys = st.sampled_from(sorted(bench_json(PR_CANDIDATE)) + ["spec_decode_num_drafts", "tp"])


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(changes=st.dictionaries(_keys, _values, max_size=4), drop=st.lists(_keys, max_size=2))
def test_mutated_bench_files_never_crash(capsys, tmp_path, changes, drop):
    data = bench_json(PR_CANDIDATE)
    data.update(changes)
    for key in drop:
        data.pop(key, None)
    a = write(tmp_path / "a.json", bench_json(PR_CANDIDATE))
    b = write(tmp_path / "b.json", json.dumps(data))  # floats nan/inf written as NaN/Infinity
    code, out, err = run_cli(capsys, a, b, "--json", "--allow-different-workloads")
    assert code in (0, 1, 2)
    assert "Traceback" not in err
    if code == 2:
        assert out == "" and len(err.splitlines()) == 1
    else:
        json.loads(out, parse_constant=lambda name: pytest.fail(f"{name} in --json output"))
