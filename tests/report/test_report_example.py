"""The bundled example report (docs/examples/report, vLLM PR #47391's A/B) is current.

Regenerating it with the command docs/report.md gives must reproduce the committed markdown and
JSON; it keeps the PR's figures, carries the acceptance notes and says its TTFT change is from
single runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
E = "docs/examples/report"
ARGS = [
    f"{E}/baseline.json",
    f"{E}/candidate.json",
    "--gpus",
    "4",
    "--labels",
    "Baseline,This PR",
    "--eval-b",
    f"{E}/candidate_lm_eval_gsm8k.json",
]


def _report(*extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "recipecli", "report", *ARGS, *extra],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def markdown() -> str:
    proc = _report()
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_committed_markdown_and_json_are_current(markdown):
    assert markdown == (REPO / E / "pr47391.md").read_text()
    proc = _report("--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == json.loads((REPO / E / "pr47391.json").read_text())


def test_example_keeps_the_pr_figures(markdown):
    for line in (
        "| Output throughput / GPU | 212.514 tok/s | 348.736 tok/s | +64.10% |",
        "| Mean TPOT | 69.584 ms | 43.819 ms | 37.03% lower |",
        "| Mean TTFT | 2173.242 ms | 2228.905 ms | 2.56% higher |",
        "| Acceptance rate | 2.895% | 56.467% | +53.57 pp |",
        "| Acceptance length | 1.087 | 2.694 | +147.84% |",
        "| Duration | 773.193 s | 471.170 s | 39.06% faster |",
    ):
        assert line in markdown.splitlines()


def test_example_notes(markdown):
    assert "`report.acceptance_collapsed`: Baseline" in markdown
    assert "2.9% of drafted tokens accepted, acceptance length 1.087 with 3 speculative" in markdown
    assert "2.9% (Baseline) vs 56.5% (This PR)" in markdown
    assert "TTFT 2.56% higher with This PR (from single runs" in markdown
    assert "regression" not in markdown and "improvement" not in markdown


def test_docs_page_shows_the_committed_table():
    committed = [ln for ln in (REPO / E / "pr47391.md").read_text().splitlines() if ln[:1] == "|"]
    page = (REPO / "docs" / "report.md").read_text()
    assert "\n".join(committed) in page
    assert "(examples/report/pr47391.png)" in page
