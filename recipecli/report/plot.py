"""The ``--plot`` chart: a PNG bar chart of the relative changes (matplotlib, imported only
when a chart is drawn; ``pip install -e ".[plot]"``)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from recipecli.errors import MissingDependencyError, ReportError
from recipecli.hints import install_hint
from recipecli.report.result import Report
from recipecli.report.rows import Row
from recipecli.report.workload import _normalise, _show


def plot_rows(report: Report) -> list[Row]:
    """The rows drawn by :func:`render_plot`: plotted metrics with a relative change."""
    return [r for r in report.rows if r.plot and r.change.relative is not None]


def render_plot(report: Report, path: str | os.PathLike[str]) -> None:
    """Write :func:`plot_png` of ``report`` to ``path``, atomically.

    Args:
        report: the report.
        path: the PNG to write (its directory must exist).

    Raises:
        MissingDependencyError, ReportError: from :func:`plot_png`.
        UsageError: ``path`` cannot be written (:func:`check_output_file`).
    """
    from recipecli.safe_write import PLOT, write_file

    check_output_file(path, "--plot")
    read = (*report.baseline_files, *report.candidate_files, *sum(report.eval_files, ()))
    inputs = [(f"the input file {p}", p) for p in read]
    png = plot_png(report, name=str(path))
    write_file(path, png, what="--plot file", noun="--plot path", kind=PLOT, inputs=inputs)


def _plot_title(report: Report) -> str:
    """Model, workload and how far the runs go, for the chart's title (three lines)."""
    w = report.workload
    a, b = report.labels
    n_a, n_b = report.runs
    bits = []
    if w.get("dataset_name") is not None:
        bits.append(f"dataset {w['dataset_name']}")
    bits += [
        f"{_show(w.get('num_prompts'))} prompts",
        f"concurrency {_show(w.get('max_concurrency'))}",
        f"rate {_show(_normalise(w.get('request_rate')))}",
        f"~{_show(w.get('mean_input_tokens'))} in / ~{_show(w.get('mean_output_tokens'))} out "
        "tokens per request",
    ]
    if report.gpus:
        bits.append(f"{report.gpus} GPUs")
    if n_a >= 2 and n_b >= 2:
        noise = (
            f"{n_a} vs {n_b} runs: bar = change of the means, whisker = 95% CI (Welch t); "
            "pale = not significant"
        )
    elif n_a == n_b == 1:
        noise = "1 run per side: spread unknown, so no bar is a verdict (pale bars)"
    else:
        noise = f"{n_a} vs {n_b} runs: spread of one side unknown, so no bar is a verdict (pale)"
    lines = [f"{w.get('model_id')}: {b} vs {a}", ", ".join(bits), noise]
    warned = [f.code for f in report.findings if f.severity in ("error", "warning")]
    if warned:
        lines.append("read the notes first: " + ", ".join(dict.fromkeys(warned)))
    return "\n".join(lines)


def _plot_label(row: Row) -> str:
    """The change without its interval, plus the verdict when one is supported."""
    text = row.change.text.split(" (", 1)[0]
    if row.change.verdict in ("improvement", "regression"):
        return f"{text} · {row.change.verdict}"
    if row.change.verdict == "not_significant":
        return f"{text} · not significant"
    return text


#: Bar colours: (favourable, significant) → colour. Pale = the runs do not support a verdict.
PLOT_COLOURS: dict[tuple[bool | None, bool], str] = {
    (True, True): "#2e7d32",
    (False, True): "#c62828",
    (True, False): "#a5d6a7",
    (False, False): "#ef9a9a",
    (None, True): "#9e9e9e",
    (None, False): "#9e9e9e",
}


def plot_png(report: Report, *, name: str = "the chart") -> bytes:
    """A PNG bar chart of the relative changes (candidate vs baseline).

    Bars are the signed relative change of the means in percent: green where the change is in
    the better direction, red where worse; saturated only when the change is significant, pale
    when the runs cannot support a verdict (one run per side, or an interval containing 0).
    With repeated runs each bar has a whisker: the 95 % Welch t interval relative to the
    baseline mean. The title names the model, the workload and the run counts; each bar is
    annotated with its change (and verdict, when there is one).

    Args:
        report: the report.
        name: what the error message names when there is nothing to plot (the command passes
            its --plot path).

    Returns:
        The PNG file's bytes (deterministic for the same report).

    Raises:
        MissingDependencyError: matplotlib is not installed (``pip install -e ".[plot]"``).
        ReportError: no row has a relative change to draw.
    """
    plt = _pyplot()
    from io import BytesIO

    from recipecli.safe_write import PLOT_SOFTWARE_TAG

    rows = plot_rows(report)
    if not rows:
        raise ReportError("nothing to plot: no metric has a relative change", path=name)
    bars = _bars(rows[::-1])  # first row on top
    title = _plot_title(report)
    width_in, dpi = 11.0, 120
    # Room right of the axes for the change column: ~7.5 px per character at 9 pt and 120 dpi.
    text_px = 7.5 * max(len(t) for t in bars.texts) + 30
    right = min(0.86, 1 - text_px / (width_in * dpi))
    fig, ax = plt.subplots(
        figsize=(width_in, 0.55 * len(rows) + 0.3 * title.count("\n") + 1.8), dpi=dpi
    )
    try:
        _draw_bars(ax, bars)
        a, b = report.labels
        ax.set_xlabel(f"relative change of {b} vs {a} (green = better, red = worse)")
        ax.set_title(title, fontsize=10, loc="left")
        ax.grid(axis="x", alpha=0.3)
        ax.set_axisbelow(True)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        fig.tight_layout()
        fig.subplots_adjust(right=right)
        buf = BytesIO()
        # The Software tag marks the PNG as a previous --plot output (recipecli.safe_write PLOT
        # kind, which --plot may replace); it is also what makes the bytes reproducible.
        fig.savefig(buf, format="png", metadata={"Software": PLOT_SOFTWARE_TAG})
    finally:
        plt.close(fig)
    return buf.getvalue()


def _pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend (no display needed).

    Raises:
        MissingDependencyError: matplotlib is not installed (``pip install -e ".[plot]"``).
    """
    try:
        import matplotlib

        matplotlib.use("Agg", force=True)
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingDependencyError("--plot needs matplotlib", hint=install_hint("plot")) from None
    return plt


@dataclass(frozen=True)
class _Bars:
    """What the chart draws, one entry per bar, bottom bar first.

    Attributes:
        labels: the row labels (y axis).
        values: the relative changes of the means, in percent.
        colours: the bar colours (:data:`PLOT_COLOURS`).
        texts: the change column right of the bars (:func:`_plot_label`).
        lows, highs: whisker lengths below and above the bar end, in percent (0 without one).
        whisker: the bars (y positions) that have a whisker (an interval wider than a point).
    """

    labels: list[str]
    values: list[float]
    colours: list[str]
    texts: list[str]
    lows: list[float]
    highs: list[float]
    whisker: list[int]


def _relative_percent(row: Row) -> float:
    """The relative change of ``row`` in percent, the length of its bar.

    Raises:
        ValueError: the row has none (:func:`plot_rows` keeps only rows that have one).
    """
    if row.change.relative is None:
        raise ValueError(f"{row.label}: no relative change to plot")
    return row.change.relative * 100


def _bars(rows: list[Row]) -> _Bars:
    """The bars of ``rows`` (every row has a relative change; see :func:`plot_rows`)."""
    values = [_relative_percent(r) for r in rows]
    cols = [
        PLOT_COLOURS[(r.change.favourable, r.change.significance == "significant")] for r in rows
    ]
    lows, highs, whisker = [], [], []
    for y, (r, v) in enumerate(zip(rows, values, strict=True)):
        iv, base = r.change.interval, r.baseline
        if iv is not None and base is not None and base.mean and iv.high > iv.low:
            lows.append(v - iv.low / base.mean * 100)
            highs.append(iv.high / base.mean * 100 - v)
            whisker.append(y)
        else:
            lows.append(0.0)
            highs.append(0.0)
    texts = [_plot_label(r) for r in rows]
    return _Bars([r.label for r in rows], values, cols, texts, lows, highs, whisker)


def _draw_bars(ax: Any, bars: _Bars) -> None:
    """Bars, whiskers, the x range and its 0 line, and the change column, on ``ax``."""
    values, lows, highs, whisker = bars.values, bars.lows, bars.highs, bars.whisker
    edges = ["#616161" if v else "none" for v in values]
    ax.barh(bars.labels, values, color=bars.colours, height=0.6, edgecolor=edges, linewidth=0.5)
    if whisker:
        ax.errorbar(
            [values[y] for y in whisker],
            whisker,
            xerr=[[lows[y] for y in whisker], [highs[y] for y in whisker]],
            fmt="none",
            ecolor="#212121",
            elinewidth=1.0,
            capsize=4,
        )
    ends = [v - lo for v, lo in zip(values, lows, strict=True)]
    ends += [v + hi for v, hi in zip(values, highs, strict=True)]
    lo, hi = min(0.0, *ends), max(0.0, *ends)
    pad = 0.08 * ((hi - lo) or 1.0)
    ax.set_xlim(lo - pad, hi + pad)
    ax.xaxis.set_major_formatter(lambda x, _pos: f"{x:+.0f}%" if x else "0")
    ax.axvline(0, color="#424242", linewidth=0.8)
    # The change of the table, in a column right of the bars (never over a bar).
    text_at = ax.get_yaxis_transform()  # x in axes fraction, y in data
    for y, (text, colour) in enumerate(zip(bars.texts, bars.colours, strict=True)):
        shade = {"#a5d6a7": "#2e7d32", "#ef9a9a": "#c62828"}.get(colour, colour)
        ax.text(1.02, y, text, transform=text_at, va="center", ha="left", fontsize=9, color=shade)


def check_output_file(path: str | os.PathLike[str], option: str) -> None:
    """Refuse an output file that cannot be written, before any work is done or written.

    The checks of :func:`recipecli.safe_write.prepare_file` without inputs: the folder rule,
    special files, folders, existing files that are not a previous output of ``option``.

    Args:
        path: the file ``option`` names (``-o`` or ``--plot``).
        option: the option, for the message.

    Raises:
        UsageError: one line naming ``path``, e.g. ``cannot write --plot file: it is a
            directory`` or ``cannot write -o file: directory D does not exist — give another
            -o path or create D first``.
    """
    from recipecli.safe_write import PLOT, REPORT, prepare_file

    kind = PLOT if option == "--plot" else REPORT
    prepare_file(path, what=f"{option} file", noun=f"{option} path", kind=kind)
