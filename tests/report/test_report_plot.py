"""`recipecli report --plot`: PNG bar chart of relative changes (optional matplotlib extra)."""

from __future__ import annotations

import sys

import pytest
from helpers.report import PR_CANDIDATE, bench_json, run_cli, write

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_plot_writes_png_atomically(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib.image import imread

    a = write(tmp_path / "a.json", bench_json())
    b = write(tmp_path / "b.json", bench_json(PR_CANDIDATE))
    (tmp_path / "plots").mkdir()
    png = tmp_path / "plots" / "ab.png"
    code, out, err = run_cli(capsys, a, b, "--gpus", "4", "--plot", str(png))
    assert code == 0
    assert "+64.10%" in out  # the table still goes to stdout
    assert f"wrote {png}" in err
    assert png.read_bytes()[:8] == PNG_MAGIC
    assert [p.name for p in png.parent.iterdir()] == ["ab.png"]  # no temp file left behind
    height, width = imread(str(png)).shape[:2]
    assert width > height > 200


def test_plot_draws_relative_rows_only():
    from recipecli.report import BenchRun, build_report, plot_rows

    report = build_report(
        [BenchRun("a.json", bench_json())], [BenchRun("b.json", bench_json(PR_CANDIDATE))], gpus=4
    )
    # acceptance rate is a difference of percents (pp), eval scores absolute: not on the chart
    assert [r.key for r in plot_rows(report)] == [
        "output_throughput",
        "total_throughput",
        "mean_tpot",
        "mean_ttft",
        "acceptance_length",
        "duration",
    ]


def test_plot_without_matplotlib_exit_2_with_hint(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib → ImportError
    a = write(tmp_path / "a.json", bench_json())
    b = write(tmp_path / "b.json", bench_json(PR_CANDIDATE))
    png = tmp_path / "ab.png"
    code, _, err = run_cli(capsys, a, b, "--plot", str(png))
    assert code == 2
    assert "--plot needs matplotlib" in err and 'pip install -e ".[plot]"' in err
    assert not png.exists()


def _runs(values, **fixed):
    from recipecli.report import BenchRun

    return [
        BenchRun(f"r{i}.json", bench_json(PR_CANDIDATE, mean_ttft_ms=v, **fixed))
        for i, v in enumerate(values)
    ]


def test_plot_title_names_model_workload_and_noise():
    from recipecli.report import BenchRun, _plot_title, build_report

    report = build_report(
        [BenchRun("a.json", bench_json())], [BenchRun("b.json", bench_json(PR_CANDIDATE))], gpus=4
    )
    title = _plot_title(report).splitlines()
    assert title[0] == "amd/MiniMax-M3-MXFP4: Candidate vs Baseline"
    # 5531972 / 640 = 8643.7 input, 657257 / 640 = 1027.0 output tokens per request
    assert title[1] == (
        "640 prompts, concurrency 64, rate inf, ~8643.7 in / ~1027.0 out tokens per request, 4 GPUs"
    )
    assert title[2].startswith("1 run per side: spread unknown")
    assert title[3] == (
        "read the notes first: report.acceptance_collapsed, report.acceptance_confounded"
    )
    repeated = build_report(_runs([100.0, 101.0, 102.0]), _runs([110.0, 111.0, 112.0]))
    assert (
        _plot_title(repeated)
        .splitlines()[2]
        .startswith("3 vs 3 runs: bar = change of the means, whisker = 95% CI (Welch t)")
    )


def test_plot_whiskers_only_with_repeated_runs(monkeypatch):
    pytest.importorskip("matplotlib")
    from matplotlib.axes import Axes

    from recipecli.report import BenchRun, build_report, plot_png

    calls = []
    real = Axes.errorbar

    def spy(self, x, y, *args, **kwargs):
        calls.append((list(x), list(y), kwargs.get("xerr")))
        return real(self, x, y, *args, **kwargs)

    monkeypatch.setattr(Axes, "errorbar", spy)
    single = build_report(
        [BenchRun("a.json", bench_json(PR_CANDIDATE))],
        [BenchRun("b.json", bench_json(PR_CANDIDATE, mean_ttft_ms=2300.0))],
    )
    plot_png(single)
    assert calls == []  # spread unknown: no whisker
    # TTFT 100, 101, 102 vs 110, 111, 112: relative 9.90 %, 95% CI [7.66 %, 12.15 %]
    # (worked out in test_report_notes.py); every other metric is identical on all runs.
    repeated = build_report(_runs([100.0, 101.0, 102.0]), _runs([110.0, 111.0, 112.0]))
    png = plot_png(repeated)
    ((x, y, xerr),) = calls
    assert len(x) == 1 and x[0] == pytest.approx(9.90099, abs=1e-4)
    assert xerr[0][0] == pytest.approx(9.90099 - 7.65684, abs=1e-4)
    assert xerr[1][0] == pytest.approx(12.14514 - 9.90099, abs=1e-4)
    assert png == plot_png(repeated)  # deterministic
    # marked as a recipecli plot (so a later --plot may replace it)
    assert b"tEXtSoftware\x00recipecli report --plot" in png[:4096]
