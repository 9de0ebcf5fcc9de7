"""`recipecli report --plot`: PNG bar chart of relative changes (optional matplotlib extra)."""

from __future__ import annotations

import sys

import pytest
from test_report import PR_CANDIDATE, bench_json, run_cli, write

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
    assert "--plot needs matplotlib" in err and "pip install 'recipecli[plot]'" in err
    assert not png.exists()
