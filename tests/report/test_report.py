"""`recipecli report`: the A/B table of vLLM PR #47391 from `vllm bench serve --save-result` JSON.

Expected figures are worked out by hand from the A/B table published in vLLM PR #47391, e.g.
output throughput per GPU 348.736 / 212.514 = 1.641002 → "+64.10%"; mean TPOT
43.819 / 69.584 = 0.629728 → "37.03% lower"; mean TTFT 2228.905 / 2173.242 = 1.025613 →
"2.56% higher" (one run per side: no verdict); duration 471.170 / 773.193 = 0.609380 →
"39.06% faster". The notes (diagnostics) and the noise cases are in test_report_notes.py.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from helpers.report import (  # noqa: E402
    _DROP,
    PR_BASELINE,
    PR_CANDIDATE,
    bench_json,
    rows_by_key,
    run_cli,
    write,
)

from recipecli.errors import ReportError, UsageError
from recipecli.report import (
    METRICS,
    WORKLOAD_KEYS,
    BenchRun,
    Spread,
    build_report,
    check_output_file,
    describe_change,
    load_bench_run,
    unusable_reasons,
)


@pytest.fixture
def pr_files(tmp_path):
    return (
        write(tmp_path / "baseline.json", bench_json(PR_BASELINE)),
        write(tmp_path / "candidate.json", bench_json(PR_CANDIDATE)),
    )


# ------------------------------------------------------------------------------------------
# Done when: vLLM PR #47391's figures
# ------------------------------------------------------------------------------------------


def test_pr47391_table_via_subprocess(pr_files):
    proc = subprocess.run(
        [sys.executable, "-m", "recipecli", "report", *pr_files, "--gpus", "4"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "| Completed / failed | 640 / 0 | 640 / 0 | same |" in lines
    assert "| Output throughput / GPU | 212.514 tok/s | 348.736 tok/s | +64.10% |" in lines
    assert "| Total throughput / GPU | 2001.188 tok/s | 3283.959 tok/s | +64.10% |" in lines
    assert "| Mean TPOT | 69.584 ms | 43.819 ms | 37.03% lower |" in lines
    # one run per side: higher / lower only, no "regression"
    assert "| Mean TTFT | 2173.242 ms | 2228.905 ms | 2.56% higher |" in lines
    assert "| Acceptance rate | 2.895% | 56.467% | +53.57 pp |" in lines
    assert "| Acceptance length | 1.087 | 2.694 | +147.84% |" in lines
    assert "| Duration | 773.193 s | 471.170 s | 39.06% faster |" in lines


def test_pr47391_json(capsys, pr_files):
    code, out, _ = run_cli(capsys, *pr_files, "--gpus", "4", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["gpus"] == 4
    # baseline 2.895 % accepted (collapsed, < 10 %); 56.467 - 2.895 = 53.572 pp > 5 pp
    assert [n["code"] for n in doc["notes"]] == [
        "report.acceptance_collapsed",
        "report.acceptance_confounded",
        "report.acceptance_vs_tpot",
        "report.ttft_tpot_tradeoff",
        "report.single_runs",
    ]
    assert [f["code"] for f in doc["findings"]] == [n["code"] for n in doc["notes"]]
    rows = rows_by_key(out)
    assert rows["output_throughput"]["change"] == "+64.10%"
    assert rows["output_throughput"]["baseline"]["mean"] == pytest.approx(212.514)
    assert rows["output_throughput"]["relative"] == pytest.approx(348.736 / 212.514 - 1)
    assert rows["output_throughput"]["verdict"] == "unknown"  # spread unknown
    assert rows["output_throughput"]["direction"] == "higher"
    assert rows["output_throughput"]["favourable"] is True
    assert rows["mean_tpot"]["change"] == "37.03% lower"
    assert rows["mean_ttft"]["change"] == "2.56% higher"
    assert rows["mean_ttft"]["verdict"] == "unknown" and rows["mean_ttft"]["favourable"] is False
    assert rows["mean_ttft"]["interval"] is None and rows["mean_ttft"]["significance"] == "unknown"
    assert rows["duration"]["change"] == "39.06% faster"
    assert rows["acceptance_rate"]["delta"] == pytest.approx(53.572)
    assert rows["requests"]["failed"]["candidate"]["mean"] == 0
    # --json is the same as --format json
    code2, out2, _ = run_cli(capsys, *pr_files, "--gpus", "4", "--json")
    assert code2 == 0 and json.loads(out2)["rows"] == doc["rows"]


def test_without_gpus_throughput_is_total(capsys, pr_files):
    code, out, _ = run_cli(capsys, *pr_files)
    assert code == 0
    assert "| Output throughput | 850.056 tok/s | 1394.944 tok/s | +64.10% |" in out
    assert "total over all GPUs" in out


def test_labels_and_output_file(capsys, pr_files, tmp_path):
    (tmp_path / "out").mkdir()
    target = tmp_path / "out" / "ab.md"
    code, out, _ = run_cli(
        capsys, *pr_files, "--gpus", "4", "--labels", "Baseline,This PR", "-o", str(target)
    )
    assert code == 0 and out == ""
    text = target.read_text()
    assert "| Metric | Baseline | This PR | Change |" in text
    assert [p.name for p in target.parent.iterdir()] == ["ab.md"]  # no temp file left


def test_bad_labels_exit_2(capsys, pr_files):
    code, _, err = run_cli(capsys, *pr_files, "--labels", "onlyone")
    assert code == 2 and "--labels" in err


# ------------------------------------------------------------------------------------------
# Change wording (data table driven)
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "a", "b", "text", "verdict"),
    [
        # No spread given (one run per side): the direction only, verdict "unknown".
        ("output_throughput", 200.0, 190.0, "-5.00%", "unknown"),
        ("mean_tpot", 40.0, 50.0, "25.00% higher", "unknown"),
        ("mean_ttft", 100.0, 90.0, "10.00% lower", "unknown"),
        ("duration", 100.0, 125.0, "25.00% slower", "unknown"),
        ("acceptance_rate", 60.0, 50.5, "-9.50 pp", "unknown"),
        ("acceptance_length", 2.0, 2.0, "same", "same"),
        ("mean_tpot", 40.0, 40.001, "same", "same"),  # rounds to 0.00%
    ],
)
def test_describe_change_wordings(key, a, b, text, verdict):
    spec = next(m for m in METRICS if m.key == key)
    change = describe_change(
        a, b, better=spec.better, wording=spec.wording, kind=spec.change, short=spec.short
    )
    assert change.text == text
    assert change.verdict == verdict


@pytest.mark.parametrize(
    ("key", "a", "b", "low", "high", "text", "verdict"),
    [
        # TPOT 40 → 50 with an interval of the delta [4, 16] ms: 4/40 = +10%, 16/40 = +40%.
        (
            "mean_tpot",
            40.0,
            50.0,
            4.0,
            16.0,
            "25.00% higher (TPOT regression; 95% CI +10.00% to +40.00%)",
            "regression",
        ),
        # TTFT 100 → 90, interval [-25, 5] contains 0: not significant.
        (
            "mean_ttft",
            100.0,
            90.0,
            -25.0,
            5.0,
            "10.00% lower (not significant; 95% CI -25.00% to +5.00%)",
            "not_significant",
        ),
        # Throughput 200 → 220, interval [5, 35]: 2.5 % to 17.5 %, better is higher.
        (
            "output_throughput",
            200.0,
            220.0,
            5.0,
            35.0,
            "+10.00% (output throughput improvement; 95% CI +2.50% to +17.50%)",
            "improvement",
        ),
        # Acceptance rate in points: 60 → 50.5 pp, interval [-12, -7] pp.
        (
            "acceptance_rate",
            60.0,
            50.5,
            -12.0,
            -7.0,
            "-9.50 pp (acceptance rate regression; 95% CI -12.00 to -7.00 pp)",
            "regression",
        ),
    ],
)
def test_describe_change_with_interval(key, a, b, low, high, text, verdict):
    spec = next(m for m in METRICS if m.key == key)
    change = describe_change(
        a,
        b,
        better=spec.better,
        wording=spec.wording,
        kind=spec.change,
        short=spec.short,
        spread=Spread("Welch t", 0.95, low, high),
    )
    assert change.text == text
    assert change.verdict == verdict


def test_describe_change_missing_side_and_zero_baseline():
    assert (
        describe_change(
            None, 1.0, better="higher", wording="signed", kind="relative", short="x"
        ).text
        == "n/a"
    )
    zero = describe_change(0.0, 1.0, better="higher", wording="signed", kind="relative", short="x")
    assert zero.text == "n/a (baseline is 0)" and zero.relative is None


def test_metric_table_directions():
    better = {m.key: m.better for m in METRICS}
    assert better["output_throughput"] == better["total_throughput"] == "higher"
    assert better["mean_tpot"] == better["mean_ttft"] == better["duration"] == "lower"


# ------------------------------------------------------------------------------------------
# Repeated runs: mean and min-max (worked out by hand)
# ------------------------------------------------------------------------------------------


def test_repeated_runs_mean_and_min_max(capsys, tmp_path):
    # Baseline totals 800, 840, 880 tok/s on 4 GPUs → 200, 210, 220 per GPU: mean 210.
    # Candidate 1000, 1100 → 250, 275: mean 262.5; 262.5 / 210 = 1.25 → "+25.00%".
    # TTFT baseline 100, 110, 120 → mean 110; candidate 99, 99 → 99; 99 / 110 = 0.9 → 10% lower.
    base = [
        write(tmp_path / f"base-{i}.json", bench_json(output_throughput=o, mean_ttft_ms=t))
        for i, (o, t) in enumerate([(800.0, 100.0), (840.0, 110.0), (880.0, 120.0)])
    ]
    cand = [
        write(tmp_path / f"cand-{i}.json", bench_json(output_throughput=o, mean_ttft_ms=99.0))
        for i, o in enumerate([1000.0, 1100.0])
    ]
    code, out, _ = run_cli(
        capsys,
        "-a",
        base[0],
        "-a",
        base[1],
        "-a",
        base[2],
        "-b",
        cand[0],
        "-b",
        cand[1],
        "--gpus",
        "4",
        "--json",
    )
    assert code == 0
    rows = rows_by_key(out)
    ot = rows["output_throughput"]
    assert ot["baseline"]["values"] == pytest.approx([200.0, 210.0, 220.0])
    assert (ot["baseline"]["mean"], ot["baseline"]["min"], ot["baseline"]["max"]) == pytest.approx(
        (210.0, 200.0, 220.0)
    )
    assert ot["baseline"]["n"] == 3 and ot["candidate"]["n"] == 2
    assert ot["candidate"]["mean"] == pytest.approx(262.5)
    # Welch: s_a^2 = ((-10)^2 + 0 + 10^2) / 2 = 100, s_b^2 = (12.5^2 + 12.5^2) / 1 = 312.5;
    # se^2 = 100/3 + 312.5/2 = 189.5833, se = 13.7689; df = 189.5833^2 / ((100/3)^2/2 +
    # 156.25^2/1) = 35941.84 / 24969.62 = 1.439 → floored 1 → t = 12.706; half = 174.948;
    # delta 52.5 → [-122.448, 227.448] / 210 = [-58.31 %, +108.31 %]: contains 0.
    assert ot["change"] == "+25.00% (not significant; 95% CI -58.31% to +108.31%)"
    assert ot["verdict"] == "not_significant"
    assert ot["interval"]["df"] == pytest.approx(1.4394, abs=1e-4)
    assert ot["baseline"]["std"] == pytest.approx(10.0)
    assert rows["mean_ttft"]["baseline"]["mean"] == pytest.approx(110.0)
    # TTFT: s_a^2 = 100, s_b^2 = 0 → se^2 = 100/3, df = 2 → t = 4.303; half = 4.303 * 5.7735
    # = 24.843; delta -11 → [-35.843, 13.843] / 110 = [-32.58 %, +12.58 %].
    assert (
        rows["mean_ttft"]["change"] == "10.00% lower (not significant; 95% CI -32.58% to +12.58%)"
    )

    # The same through a quoted glob, in markdown.
    code, md, _ = run_cli(
        capsys,
        "-a",
        str(tmp_path / "base-*.json"),
        "-b",
        str(tmp_path / "cand-*.json"),
        "--gpus",
        "4",
    )
    assert code == 0
    assert (
        "| Output throughput / GPU | 210.000 tok/s (200.000–220.000, n=3) "
        "| 262.500 tok/s (250.000–275.000, n=2) "
        "| +25.00% (not significant; 95% CI -58.31% to +108.31%) |"
    ) in md
    assert "| Completed / failed | 640 / 0 | 640 / 0 | same |" in md
    assert "several runs per side" in md


def test_positional_plus_options_add_runs(capsys, tmp_path):
    a1 = write(tmp_path / "a1.json", bench_json(duration=100.0))
    a2 = write(tmp_path / "a2.json", bench_json(duration=110.0))
    b1 = write(tmp_path / "b1.json", bench_json(duration=84.0))
    code, out, _ = run_cli(capsys, a1, b1, "-a", a2, "--json")
    assert code == 0
    # mean 105 → 84: 21 / 105 = 20 % faster
    assert rows_by_key(out)["duration"]["change"] == "20.00% faster"


def test_wrong_number_of_positionals_exit_2(capsys, pr_files, tmp_path):
    code, _, err = run_cli(capsys, pr_files[0])
    assert code == 2 and "-a FILE -b FILE" in err
    code, _, err = run_cli(capsys, *pr_files, pr_files[0])
    assert code == 2 and "got 3" in err


def test_glob_matching_nothing_exit_2(capsys, pr_files, tmp_path):
    pattern = str(tmp_path / "nothing-*.json")
    code, _, err = run_cli(capsys, "-a", pattern, "-b", pr_files[1])
    assert code == 2 and "nothing-*.json" in err


# ------------------------------------------------------------------------------------------
# Bad or partial JSON: exit 2, message names the file
# ------------------------------------------------------------------------------------------

BAD_BENCH = {
    "truncated": ('{"completed": 640, "failed": 0, "durat', "not valid JSON"),
    "list": ("[1, 2]", "expected a JSON object"),
    "missing_key": (
        bench_json(mean_tpot_ms=_DROP, failed=_DROP),
        "missing key(s) failed, mean_tpot_ms",
    ),
    "string_metric": (bench_json(mean_ttft_ms="fast"), "mean_ttft_ms='fast'"),
    "bool_count": (bench_json(completed=True), "completed=True"),
    "null_required": (bench_json(duration=None), "duration=None"),
    "nan_metric": (bench_json(output_throughput=math.nan), "output_throughput=nan"),
    "bad_rate": (bench_json(request_rate="fast"), "request_rate='fast'"),
    "bad_concurrency": (bench_json(max_concurrency="64x"), "max_concurrency='64x'"),
    "string_acceptance": (
        bench_json(spec_decode_acceptance_length="2.7"),
        "spec_decode_acceptance_length",
    ),
    "no_completed": (
        bench_json(completed=0, failed=640),
        "unusable run: completed=0 (must be > 0, failed=640)",
    ),
    # QA: duration 0 and zero throughputs read "-100.00% regression", "100.00% faster"
    "zero_duration": (
        bench_json(duration=0, output_throughput=0, total_token_throughput=0),
        "unusable run: duration=0 (must be > 0); output_throughput=0 (must be > 0); "
        "total_token_throughput=0 (must be > 0)",
    ),
    "negative_duration": (bench_json(duration=-1.5), "unusable run: duration=-1.5 (must be > 0)"),
    "zero_output_throughput": (
        bench_json(output_throughput=0.0),
        "unusable run: output_throughput=0 (must be > 0)",
    ),
    "zero_request_throughput": (
        bench_json(request_throughput=0),
        "unusable run: request_throughput=0 (must be > 0)",
    ),
    "negative_failed": (bench_json(failed=-1), "unusable run: failed=-1 (must be >= 0)"),
    "negative_ttft": (
        bench_json(mean_ttft_ms=-3.0),
        "unusable run: mean_ttft_ms=-3 (must be >= 0)",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_BENCH))
def test_bad_bench_file_exit_2_names_file(capsys, tmp_path, case):
    content, expected = BAD_BENCH[case]
    good = write(tmp_path / "good.json", bench_json())
    bad = write(tmp_path / f"bad-{case}.json", content)
    code, out, err = run_cli(capsys, good, bad, "--gpus", "4")
    assert code == 2
    assert f"bad-{case}.json" in err
    assert expected in err
    assert "Traceback" not in err and out == ""


def test_missing_file_and_directory_exit_2(capsys, tmp_path):
    good = write(tmp_path / "good.json", bench_json())
    code, _, err = run_cli(capsys, good, str(tmp_path / "absent.json"))
    assert code == 2 and "absent.json: no such file" in err
    code, _, err = run_cli(capsys, str(tmp_path), good)
    assert code == 2 and f"{tmp_path}: is a directory" in err


def test_unusable_candidate_is_exit_2_not_a_regression(tmp_path):
    # The QA case via the real entry point: a candidate with duration 0 and zero throughputs.
    a = write(tmp_path / "a.json", bench_json())
    b = write(
        tmp_path / "b.json",
        bench_json(PR_CANDIDATE, duration=0, output_throughput=0, total_token_throughput=0),
    )
    proc = subprocess.run(
        [sys.executable, "-m", "recipecli", "report", a, b, "--gpus", "4"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        f"recipecli: error: {b}: unusable run: duration=0 (must be > 0); "
        "output_throughput=0 (must be > 0); total_token_throughput=0 (must be > 0) — the run "
        "measured nothing; check the server log and rerun `vllm bench serve --save-result`"
    ]


def test_unusable_reasons_of_a_good_run_is_empty():
    assert unusable_reasons(bench_json()) == []
    assert unusable_reasons(bench_json(request_throughput=None)) == []


BAD_OUTPUT = {
    # parent is a regular file
    "under_file": ("f.txt/x.md", "{tmp}/f.txt is a file, not a directory"),
    "missing_parent": ("nodir/x.md", "directory {tmp}/nodir does not exist"),
    "is_directory": ("d", "it is a directory"),
}


@pytest.mark.parametrize("option", ["-o", "--plot"])
@pytest.mark.parametrize("case", sorted(BAD_OUTPUT))
def test_unwritable_output_path_exit_2_one_line(capsys, pr_files, tmp_path, option, case):
    rel, why = BAD_OUTPUT[case]
    (tmp_path / "f.txt").write_text("x\n")
    (tmp_path / "d").mkdir()
    target = tmp_path / rel
    before = sorted(p.name for p in tmp_path.iterdir())
    code, out, err = run_cli(capsys, *pr_files, "--gpus", "4", option, str(target))
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    if case == "is_directory":
        # click's Path(dir_okay=False) answers first
        assert "is a directory" in lines[0] and str(target) in lines[0]
    else:
        assert lines[0].startswith(
            f"recipecli: error: {target}: cannot write {option} file: "
            + why.format(tmp=tmp_path)
            + f" — give another {option} path"
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written


def test_check_output_file_library(tmp_path):
    check_output_file(tmp_path / "ok.md", "-o")  # writable: no error
    with pytest.raises(UsageError) as exc:
        check_output_file(tmp_path, "--plot")
    assert exc.value.path == str(tmp_path)
    assert exc.value.message == "cannot write --plot file: it is a directory"


def test_bad_plot_path_writes_no_table_file(capsys, pr_files, tmp_path):
    (tmp_path / "f.txt").write_text("x\n")
    table = tmp_path / "ab.md"
    code, _, err = run_cli(
        capsys, *pr_files, "-o", str(table), "--plot", str(tmp_path / "f.txt" / "ab.png")
    )
    assert code == 2 and "--plot" in err and not table.exists()


def test_load_bench_run_error_carries_path(tmp_path):
    bad = write(tmp_path / "x.json", bench_json(completed=_DROP))
    with pytest.raises(ReportError) as exc:
        load_bench_run(bad)
    assert exc.value.path == bad and "completed" in exc.value.message


def test_acceptance_in_only_some_runs_of_a_side_exit_2(capsys, tmp_path):
    a1 = write(tmp_path / "a1.json", bench_json())
    a2 = write(
        tmp_path / "a2.json",
        bench_json(spec_decode_acceptance_rate=_DROP, spec_decode_acceptance_length=_DROP),
    )
    b = write(tmp_path / "b.json", bench_json())
    code, _, err = run_cli(capsys, "-a", a1, "-a", a2, "-b", b)
    assert code == 2 and "a2.json: no spec_decode_acceptance_rate" in err


def test_acceptance_on_one_side_only_shows_dash(capsys, tmp_path):
    # A run without speculative decoding (no spec_decode_* keys) against an EAGLE3 run.
    a = write(
        tmp_path / "a.json",
        bench_json(spec_decode_acceptance_rate=_DROP, spec_decode_acceptance_length=None),
    )
    b = write(tmp_path / "b.json", bench_json(PR_CANDIDATE))
    code, out, _ = run_cli(capsys, a, b, "--gpus", "4")
    assert code == 0
    assert "| Acceptance rate | — | 56.467% | n/a |" in out
    assert "| Acceptance length | — | 2.694 | n/a |" in out


def test_failed_requests_reported_exit_1(capsys, tmp_path):
    # both arms with the candidate's healthy acceptance: the failed requests are the only warning
    a = write(tmp_path / "a.json", bench_json(PR_CANDIDATE))
    b = write(tmp_path / "b.json", bench_json(PR_CANDIDATE, completed=637, failed=3))
    code, out, err = run_cli(capsys, a, b, "--gpus", "4")
    assert code == 1
    assert "| Completed / failed | 640 / 0 | 637 / 3 | -3 completed, +3 failed |" in out
    assert out.count("b.json: 3 of 640 requests failed") == 1  # in the notes of the table
    assert err == ""  # said once: not repeated on stderr
    target = tmp_path / "ab.md"
    code, out, err = run_cli(capsys, a, b, "--gpus", "4", "-o", str(target))
    assert code == 1 and out == ""
    assert target.read_text().count("b.json: 3 of 640 requests failed") == 1
    # stdout is empty with -o: the finding is said once, on stderr
    assert err.count("b.json: 3 of 640 requests failed") == 1
    assert err.startswith("recipecli: error: ") and len(err.splitlines()) == 1
    code, out, _ = run_cli(capsys, a, b, "--json")
    assert code == 1
    finding = json.loads(out)["findings"][0]
    assert finding["code"] == "report.failed_requests" and finding["severity"] == "error"
    assert finding["evidence"] == {"file": b, "completed": 637, "failed": 3}


# ------------------------------------------------------------------------------------------
# Workloads
# ------------------------------------------------------------------------------------------

DIFFERENT = {
    "num_prompts": ({"num_prompts": 320}, "num prompts differs: 640 in"),
    "concurrency": ({"max_concurrency": 128}, "max concurrency differs: 64 in"),
    "concurrency_unset": ({"max_concurrency": None}, "max concurrency differs: 64 in"),
    "rate": ({"request_rate": 10.0}, "request rate differs: inf in"),
    "model": ({"model_id": "amd/Other"}, "model differs: amd/MiniMax-M3-MXFP4 in"),
    # 8192 → 4096 input tokens: the observed mean halves (outside the 10 % tolerance)
    "input_len": ({"total_input_tokens": 5531972 // 2}, "mean input tokens per request"),
    "output_len": ({"total_output_tokens": 657257 * 2}, "mean output tokens per request"),
    "metadata_dataset": (
        {"dataset_name": "sharegpt", "_base": {"dataset_name": "random"}},
        "dataset name (metadata) differs: random in",
    ),
    "metadata_input_len": (
        {"random_input_len": "4096", "_base": {"random_input_len": "8192"}},
        "random input len (metadata) differs: 8192 in",
    ),
}


@pytest.mark.parametrize("case", sorted(DIFFERENT))
def test_different_workloads_exit_2_unless_allowed(capsys, tmp_path, case):
    overrides, expected = DIFFERENT[case]
    overrides = dict(overrides)
    base_over = overrides.pop("_base", {})
    a = write(tmp_path / "a.json", bench_json(**base_over))
    b = write(tmp_path / "b.json", bench_json(PR_CANDIDATE, **overrides))
    code, out, err = run_cli(capsys, a, b, "--gpus", "4")
    assert code == 2 and out == ""
    assert expected in err and "b.json" in err and "--allow-different-workloads" in err
    code, out, err = run_cli(capsys, a, b, "--gpus", "4", "--allow-different-workloads")
    assert code == 0
    assert "allowed by --allow-different-workloads" in out
    assert "+64.10%" in out


def test_workload_within_tolerance_and_one_sided_metadata_pass(capsys, tmp_path):
    # 3 % more input tokens (another random seed) and metadata on one side only: same workload.
    a = write(tmp_path / "a.json", bench_json(random_input_len="8192"))
    b = write(tmp_path / "b.json", bench_json(PR_CANDIDATE, total_input_tokens=5698000))
    code, out, _ = run_cli(capsys, a, b, "--json")
    assert code == 0 and json.loads(out)["workload_differences"] == []


def test_repeated_runs_of_one_side_must_share_the_workload(capsys, tmp_path):
    a1 = write(tmp_path / "a1.json", bench_json())
    a2 = write(tmp_path / "a2.json", bench_json(num_prompts=64))
    b = write(tmp_path / "b.json", bench_json())
    code, _, err = run_cli(capsys, "-a", a1, "-a", a2, "-b", b)
    assert code == 2 and "a2.json" in err and "num prompts" in err


def test_allowed_difference_is_a_warning_in_json(capsys, tmp_path):
    a = write(tmp_path / "a.json", bench_json())
    b = write(tmp_path / "b.json", bench_json(max_concurrency=32))
    code, out, _ = run_cli(capsys, a, b, "--json", "--allow-different-workloads")
    assert code == 0
    doc = json.loads(out)
    assert doc["workload_differences"] == [
        {
            "key": "max_concurrency",
            "reference": {"file": a, "value": 64},
            "other": {"file": b, "value": 32},
        }
    ]
    # (both arms carry the collapsed baseline acceptance: two collapse notes besides this one)
    differs = [f for f in doc["findings"] if f["code"] == "report.workload_differs"]
    assert [f["severity"] for f in differs] == ["warning"]


def test_workload_table_names_what_is_compared():
    keys = {w.key for w in WORKLOAD_KEYS}
    assert {
        "model_id",
        "num_prompts",
        "max_concurrency",
        "request_rate",
        "mean_input_tokens",
        "mean_output_tokens",
        "dataset_name",
        "random_input_len",
    } <= keys


# ------------------------------------------------------------------------------------------
# lm-eval
# ------------------------------------------------------------------------------------------


def lm_eval(strict: float, flexible: float = 0.945, stderr="N/A", hib=True) -> dict:
    return {
        "results": {
            "gsm8k": {
                "alias": "gsm8k",
                "exact_match,strict-match": strict,
                "exact_match_stderr,strict-match": stderr,
                "exact_match,flexible-extract": flexible,
                "exact_match_stderr,flexible-extract": "N/A",
                "sample_len": 200,
            }
        },
        "higher_is_better": {"gsm8k": {"exact_match": hib}},
    }


def test_eval_scores_rows(capsys, pr_files, tmp_path):
    ea = write(tmp_path / "ea.json", lm_eval(0.95, stderr=0.0155))
    eb = write(tmp_path / "eb.json", lm_eval(0.945, stderr=0.0162))
    code, out, _ = run_cli(capsys, *pr_files, "--eval-a", ea, "--eval-b", eb)
    assert code == 0
    # 0.945 - 0.95 = -0.005 against its stderr: sqrt(0.0155^2 + 0.0162^2) = 0.022421,
    # x 1.96 = 0.043945 → [-0.048945, +0.038945]: contains 0, so not a regression.
    assert (
        "| gsm8k exact_match (strict-match) | 0.9500 ± 0.0155 | 0.9450 ± 0.0162 "
        "| -0.0050 (not significant; 95% CI -0.0489 to +0.0389) |"
    ) in out
    assert "| gsm8k exact_match (flexible-extract) | 0.9450 | 0.9450 | same |" in out
    code, out, _ = run_cli(capsys, *pr_files, "--eval-a", ea, "--eval-b", eb, "--json")
    row = rows_by_key(out)["eval:gsm8k:exact_match,strict-match"]
    assert row["stderr"] == {"baseline": 0.0155, "candidate": 0.0162}
    assert row["delta"] == pytest.approx(-0.005) and row["verdict"] == "not_significant"
    assert row["interval"]["method"] == "normal approximation from lm-eval stderr"


def test_eval_repeated_runs_and_one_side(capsys, pr_files, tmp_path):
    # candidate runs 0.94 and 0.95 → mean 0.945; baseline none given
    e1 = write(tmp_path / "e1.json", lm_eval(0.94))
    e2 = write(tmp_path / "e2.json", lm_eval(0.95))
    code, out, _ = run_cli(capsys, *pr_files, "--eval-b", e1, "--eval-b", e2, "--json")
    assert code == 0
    row = rows_by_key(out)["eval:gsm8k:exact_match,strict-match"]
    assert row["baseline"] is None and row["change"] == "n/a"
    assert row["candidate"]["mean"] == pytest.approx(0.945)
    assert (row["candidate"]["min"], row["candidate"]["max"]) == (0.94, 0.95)


def test_eval_lower_is_better_from_file(capsys, pr_files, tmp_path):
    ea = write(tmp_path / "ea.json", lm_eval(0.5, hib=False))
    eb = write(tmp_path / "eb.json", lm_eval(0.4, hib=False))
    code, out, _ = run_cli(capsys, *pr_files, "--eval-a", ea, "--eval-b", eb, "--json")
    row = rows_by_key(out)["eval:gsm8k:exact_match,strict-match"]
    # 0.5 → 0.4 with no stderr ("N/A"): lower is better, but the spread is unknown
    assert row["better"] == "lower" and row["favourable"] is True
    assert row["verdict"] == "unknown" and row["change"] == "-0.1000"


BAD_EVAL = {
    "truncated": ('{"results": {"gsm8k": ', "not valid JSON"),
    "no_results": ({"config": {}}, "no `results` object"),
    "task_not_object": ({"results": {"gsm8k": 3}}, "results.gsm8k is not an object"),
    "string_score": (
        {"results": {"gsm8k": {"exact_match,strict-match": "high"}}},
        "results.gsm8k.exact_match,strict-match is not a number",
    ),
    "no_scores": ({"results": {"gsm8k": {"alias": "gsm8k"}}}, "no `<metric>,<filter>` score"),
}


@pytest.mark.parametrize("case", sorted(BAD_EVAL))
def test_bad_eval_file_exit_2_names_file(capsys, pr_files, tmp_path, case):
    content, expected = BAD_EVAL[case]
    bad = write(tmp_path / f"eval-{case}.json", content)
    code, _, err = run_cli(capsys, *pr_files, "--eval-b", bad)
    assert code == 2
    assert f"eval-{case}.json" in err and expected in err


# ------------------------------------------------------------------------------------------
# Library and import hygiene
# ------------------------------------------------------------------------------------------


def test_build_report_library_call():
    report = build_report(
        [BenchRun("a.json", bench_json())],
        [BenchRun("b.json", bench_json(PR_CANDIDATE))],
        gpus=4,
        labels=("Baseline", "This PR"),
    )
    texts = {r.key: r.change.text for r in report.rows}
    assert texts["output_throughput"] == "+64.10%"
    assert texts["duration"] == "39.06% faster"
    assert report.workload["mean_input_tokens"] == pytest.approx(5531972 / 640)


def test_library_gpus_check_names_no_cli_flag(capsys, pr_files):
    # the library's own check (a caller that is not the CLI): no flag in the message
    runs = ([BenchRun("a.json", bench_json())], [BenchRun("b.json", bench_json(PR_CANDIDATE))])
    with pytest.raises(UsageError) as exc:
        build_report(*runs, gpus=0)
    assert exc.value.message == "gpus must be >= 1, got 0"
    # the CLI refuses --gpus 0 while parsing, before the library is called: exit 2, one line
    code, out, err = run_cli(capsys, *pr_files, "--gpus", "0")
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and "--gpus" in err and "0" in err


def test_report_library_imports_no_click():
    code = (
        "import sys, recipecli.report; "
        "bad = [m for m in ('click', 'torch', 'matplotlib') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_report_command_imports_neither_torch_nor_matplotlib():
    code = (
        "import sys, recipecli.cli.commands.report, recipecli.report; "
        "bad = [m for m in ('torch', 'matplotlib') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
