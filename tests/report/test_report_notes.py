"""`recipecli report` reads an A/B like a reviewer: notes (diagnostics) and noise-aware verdicts.

Each test builds the bench files for one diagnostic or one noise case; the expected figures are
worked out by hand in the comments. vLLM's definitions (vllm v0.33.0
`vllm/benchmarks/serve.py` `benchmark`): acceptance rate = accepted / draft tokens x 100,
acceptance length = 1 + accepted / drafts, so with k tokens drafted per step
rate = (length - 1) / k x 100.
"""

from __future__ import annotations

import json
import math

import pytest
from helpers.report import _DROP, PR_BASELINE, PR_CANDIDATE, bench_json, rows_by_key, run_cli, write

from recipecli.output import emit_json, to_jsonable
from recipecli.report import (
    NOTE_CODES,
    T_975,
    BenchRun,
    Stat,
    build_report,
    speculative_tokens,
    t_quantile_975,
    welch_interval,
)


def healthy(**overrides) -> dict:
    """A bench run with the candidate's acceptance (56.467 %, length 2.694): nothing collapsed."""
    return bench_json(PR_CANDIDATE, **overrides)


def report_json(capsys, tmp_path, base: list[dict], cand: list[dict], *extra: str) -> dict:
    args: list[str] = []
    for side, runs in (("a", base), ("b", cand)):
        for i, data in enumerate(runs):
            args += [f"-{side}", write(tmp_path / f"{side}{i}.json", data)]
    code, out, err = run_cli(capsys, *args, "--json", *extra)
    assert code in (0, 1), err
    return json.loads(out)


def codes(doc: dict) -> list[str]:
    return [n["code"] for n in doc["notes"]]


def note(doc: dict, code: str) -> dict:
    (found,) = [n for n in doc["findings"] if n["code"] == code]
    return found


# ------------------------------------------------------------------------------------------
# The bundled example (vLLM PR #47391's A/B table)
# ------------------------------------------------------------------------------------------


def test_pr47391_acceptance_notes(capsys, tmp_path):
    doc = report_json(capsys, tmp_path, [bench_json(PR_BASELINE)], [healthy()], "--gpus", "4")
    # Baseline: k = (1.087 - 1) / 0.02895 = 3.005 → 3 speculative tokens; 2.895 % < 10 %.
    collapsed = note(doc, "report.acceptance_collapsed")
    assert collapsed["severity"] == "warning"
    assert collapsed["evidence"]["side"] == "baseline"
    assert "2.9% of drafted tokens accepted" in collapsed["message"]
    assert "acceptance length 1.087 with 3 speculative tokens" in collapsed["message"]
    assert "0.087 of 3 drafted tokens accepted per step" in collapsed["message"]
    # The usual causes, each with the command and codes that test it.
    for part in ("recipecli check TARGET DRAFT", "vocab.d2t_missing", "aux.default"):
        assert part in collapsed["message"]
    assert "recipecli lint RECIPE" in collapsed["message"]
    assert "draft.not_eagle3" in collapsed["message"]
    # Confounded: 56.467 - 2.895 = 53.572 pp > 5 pp.
    confounded = note(doc, "report.acceptance_confounded")
    assert "2.9% (Baseline) vs 56.5% (Candidate), +53.6 pp" in confounded["message"]
    assert confounded["evidence"]["difference_pp"] == pytest.approx(53.572)
    # Tokens per step 2.694 / 1.087 = 2.4784: TPOT alone would be 1/2.4784 - 1 = -59.65 %;
    # measured 43.819 / 69.584 - 1 = -37.03 %. Step time 69.584 x 1.087 = 75.64 ms →
    # 43.819 x 2.694 = 118.05 ms: +56.07 %.
    vs = note(doc, "report.acceptance_vs_tpot")
    assert "1.087 → 2.694 (x2.478)" in vs["message"]
    assert "TPOT would be 59.65% lower; measured 37.03% lower" in vs["message"]
    assert "75.64 → 118.05 ms (+56.07%)" in vs["message"]
    assert "accounts for all of the TPOT change" in vs["message"]
    # Trade-off: TPOT -37.03 % but TTFT +2.56 %, both from single runs.
    trade = note(doc, "report.ttft_tpot_tradeoff")
    assert "from single runs" in trade["message"] and "Mean TTFT 2.56% higher" in trade["message"]
    assert codes(doc)[-1] == "report.single_runs"
    assert doc["speculative"]["baseline"]["num_speculative_tokens"] == 3
    assert doc["speculative"]["candidate"]["num_speculative_tokens"] == 3


def test_every_note_code_is_listed_with_its_severity(capsys, tmp_path):
    doc = report_json(capsys, tmp_path, [bench_json(PR_BASELINE)], [healthy()])
    for n in doc["notes"]:
        assert set(n) == {"code", "severity", "message"}
        assert NOTE_CODES[n["code"]] == n["severity"]


# ------------------------------------------------------------------------------------------
# Acceptance collapse: threshold 10 % of drafted tokens
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("accepted", "collapsed"),
    [
        # 1000 drafts of 3 tokens = 3000 draft tokens; 297 accepted = 9.9 % < 10 %: collapsed
        (297, True),
        # 300 accepted = 10.0 %: not under the threshold
        (300, False),
    ],
)
def test_collapse_threshold_from_vllm_counters(capsys, tmp_path, accepted, collapsed):
    counters = {
        "spec_decode_num_drafts": 1000,
        "spec_decode_draft_tokens": 3000,
        "spec_decode_accepted_tokens": accepted,
        "spec_decode_acceptance_rate": accepted / 3000 * 100,
        "spec_decode_acceptance_length": 1 + accepted / 1000,
    }
    doc = report_json(capsys, tmp_path, [healthy(**counters)], [healthy(**counters)])
    assert ("report.acceptance_collapsed" in codes(doc)) is collapsed
    if collapsed:  # both arms collapsed: one note per arm
        assert codes(doc).count("report.acceptance_collapsed") == 2


def test_k_from_counters_metadata_or_rate_and_length():
    # counters: 5000 draft tokens over 1000 drafts = 5 per step
    k, how = speculative_tokens({"spec_decode_num_drafts": 1000, "spec_decode_draft_tokens": 5000})
    assert k == 5 and "spec_decode_draft_tokens" in how
    k, how = speculative_tokens({"num_speculative_tokens": "4"})  # --metadata
    assert k == 4 and how == "--metadata num_speculative_tokens"
    # rate 50 %, length 2.5: (2.5 - 1) / 0.5 = 3
    k, _ = speculative_tokens(
        {"spec_decode_acceptance_rate": 50.0, "spec_decode_acceptance_length": 2.5}
    )
    assert k == pytest.approx(3.0)
    assert speculative_tokens({}) == (None, None)


# ------------------------------------------------------------------------------------------
# Confounded A/B: acceptance more than 5 pp apart
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rate_a", "confounded"),
    [
        (50.0, True),  # 56.467 - 50 = 6.467 pp > 5
        (52.0, False),  # 4.467 pp: within what a non-drafting change can move
    ],
)
def test_confounded_threshold(capsys, tmp_path, rate_a, confounded):
    # k = 3: length = 1 + 3 x rate / 100 → 2.5 (50 %), 2.56 (52 %)
    base = healthy(
        spec_decode_acceptance_rate=rate_a, spec_decode_acceptance_length=1 + 3 * rate_a / 100
    )
    doc = report_json(capsys, tmp_path, [base], [healthy()])
    assert ("report.acceptance_confounded" in codes(doc)) is confounded
    assert "report.acceptance_collapsed" not in codes(doc)


# ------------------------------------------------------------------------------------------
# Acceptance against TPOT
# ------------------------------------------------------------------------------------------


def test_acceptance_explains_part_of_tpot(capsys, tmp_path):
    # k = 3 both; length 2.0 → 2.2 (x1.1): TPOT alone would be 1/1.1 - 1 = -9.09 %;
    # measured 40 / 50 - 1 = -20 %; share in log terms ln 1.1 / ln 1.25 = 0.0953 / 0.2231 = 43 %.
    # Step time 50 x 2.0 = 100 → 40 x 2.2 = 88 ms: -12 %.
    base = healthy(
        spec_decode_acceptance_rate=100 / 3,
        spec_decode_acceptance_length=2.0,
        mean_tpot_ms=50.0,
    )
    cand = healthy(
        spec_decode_acceptance_rate=40.0, spec_decode_acceptance_length=2.2, mean_tpot_ms=40.0
    )
    doc = report_json(capsys, tmp_path, [base], [cand])
    vs = note(doc, "report.acceptance_vs_tpot")
    assert "TPOT would be 9.09% lower; measured 20.00% lower" in vs["message"]
    assert "100.00 → 88.00 ms (-12.00%)" in vs["message"]
    assert "accounts for 43% of the TPOT change" in vs["message"]
    assert vs["evidence"]["explained_share"] == pytest.approx(math.log(1.1) / math.log(1.25))


def test_no_tokens_per_step_note_when_acceptance_length_is_the_same(capsys, tmp_path):
    # 2.694 vs 2.75: 2.1 % apart, under the 5 % that makes the note worth reading
    doc = report_json(capsys, tmp_path, [healthy()], [healthy(spec_decode_acceptance_length=2.75)])
    assert "report.acceptance_vs_tpot" not in codes(doc)


# ------------------------------------------------------------------------------------------
# Settings between the arms
# ------------------------------------------------------------------------------------------


def test_speculative_tokens_differ(capsys, tmp_path):
    base = healthy(spec_decode_num_drafts=1000, spec_decode_draft_tokens=3000)
    cand = healthy(spec_decode_num_drafts=1000, spec_decode_draft_tokens=5000)
    doc = report_json(capsys, tmp_path, [base], [cand])
    differ = note(doc, "report.speculative_tokens_differ")
    assert differ["severity"] == "warning"
    assert "3 (Baseline) vs 5 (Candidate)" in differ["message"]


def test_speculative_decoding_on_one_side(capsys, tmp_path):
    base = healthy(spec_decode_acceptance_rate=_DROP, spec_decode_acceptance_length=_DROP)
    doc = report_json(capsys, tmp_path, [base], [healthy()])
    assert (
        "only Candidate reports speculative decoding"
        in note(doc, "report.speculative_one_side")["message"]
    )


def test_metadata_differs(capsys, tmp_path):
    # `vllm bench serve --metadata tp=4 version=0.33.0` vs `--metadata tp=8`
    base = healthy(tp="4", version="0.33.0")
    cand = healthy(tp="8")
    doc = report_json(capsys, tmp_path, [base], [cand])
    meta = note(doc, "report.metadata_differs")
    assert meta["severity"] == "info"
    assert "tp: 4 vs 8; version: 0.33.0 vs not recorded" in meta["message"]
    # label and date name the run and are expected to differ: no note
    doc = report_json(capsys, tmp_path, [healthy(label="a")], [healthy(label="b", date="x")])
    assert "report.metadata_differs" not in codes(doc)


def test_workload_difference_allowed_is_a_note(capsys, tmp_path):
    doc = report_json(
        capsys, tmp_path, [healthy()], [healthy(num_prompts=320)], "--allow-different-workloads"
    )
    assert note(doc, "report.workload_differs")["severity"] == "warning"


def test_failed_requests_note(capsys, tmp_path):
    doc = report_json(capsys, tmp_path, [healthy()], [healthy(completed=637, failed=3)])
    failed = note(doc, "report.failed_requests")
    assert failed["severity"] == "error" and codes(doc)[0] == "report.failed_requests"
    assert "3 of 640 requests failed" in failed["message"]


# ------------------------------------------------------------------------------------------
# TTFT / TPOT trade-off
# ------------------------------------------------------------------------------------------


def test_tradeoff_single_runs(capsys, tmp_path):
    # TTFT 100 → 110 ms (+10 %), TPOT 50 → 40 ms (-20 %). Output tokens per request
    # 657257 / 640 = 1026.96; decode 1025.96 x -10 = -10259.6 ms; end to end 10 - 10259.6 =
    # -10249.6 ms; they cancel at 10 / 10 + 1 = 2.0 output tokens.
    doc = report_json(
        capsys,
        tmp_path,
        [healthy(mean_ttft_ms=100.0, mean_tpot_ms=50.0)],
        [healthy(mean_ttft_ms=110.0, mean_tpot_ms=40.0)],
    )
    msg = note(doc, "report.ttft_tpot_tradeoff")["message"]
    assert "mean TPOT 20.00% lower but mean TTFT 10.00% higher" in msg
    assert "from single runs" in msg and "Mean TTFT 10.00% higher, may be noise" in msg
    assert "TTFT +10.0 ms, decode -10259.6 ms" in msg and "end to end -10249.6 ms" in msg
    assert "cancel at 2.0 output tokens, so requests shorter than that" in msg


def test_no_tradeoff_when_both_better(capsys, tmp_path):
    doc = report_json(
        capsys,
        tmp_path,
        [healthy(mean_ttft_ms=100.0, mean_tpot_ms=50.0)],
        [healthy(mean_ttft_ms=90.0, mean_tpot_ms=40.0)],
    )
    assert "report.ttft_tpot_tradeoff" not in codes(doc)


def test_no_tradeoff_when_one_change_is_not_significant(capsys, tmp_path):
    # TTFT 100, 104, 108 vs 106, 110, 114: not significant (worked out in the test below);
    # TPOT 50, 50.1, 49.9 vs 40, 40.1, 39.9: clearly lower. No trade-off to report.
    base = [
        healthy(mean_ttft_ms=t, mean_tpot_ms=p)
        for t, p in ((100.0, 50.0), (104.0, 50.1), (108.0, 49.9))
    ]
    cand = [
        healthy(mean_ttft_ms=t, mean_tpot_ms=p)
        for t, p in ((106.0, 40.0), (110.0, 40.1), (114.0, 39.9))
    ]
    doc = report_json(capsys, tmp_path, base, cand)
    assert rows_by_key(json.dumps(doc))["mean_tpot"]["verdict"] == "improvement"
    assert "report.ttft_tpot_tradeoff" not in codes(doc)


# ------------------------------------------------------------------------------------------
# Noise: single runs, overlapping repeated runs, significant repeated runs, lm-eval stderr
# ------------------------------------------------------------------------------------------


def test_single_runs_never_say_regression_or_improvement(capsys, tmp_path):
    a = write(tmp_path / "a.json", healthy(mean_ttft_ms=2173.242))
    b = write(tmp_path / "b.json", healthy(mean_ttft_ms=2228.905, output_throughput=1000.0))
    code, md, _ = run_cli(capsys, a, b)
    assert code == 0
    assert "| Mean TTFT | 2173.242 ms | 2228.905 ms | 2.56% higher |" in md
    assert "regression" not in md and "improvement" not in md
    assert "spread unknown" in md and "`report.single_runs`" in md


def test_repeated_runs_overlapping_are_not_significant(capsys, tmp_path):
    # TTFT baseline 100, 104, 108: mean 104, s^2 = (16 + 0 + 16) / 2 = 16;
    # candidate 106, 110, 114: mean 110, s^2 = 16. se^2 = 16/3 + 16/3 = 10.667, se = 3.266;
    # df = 10.667^2 / (2 x (16/3)^2 / 2) = 4 → t = 2.776; half = 9.066.
    # delta 6 → [-3.066, 15.066]; relative 6 / 104 = +5.77 %, [-2.95 %, +14.49 %].
    base = [healthy(mean_ttft_ms=t) for t in (100.0, 104.0, 108.0)]
    cand = [healthy(mean_ttft_ms=t) for t in (106.0, 110.0, 114.0)]
    doc = report_json(capsys, tmp_path, base, cand)
    ttft = rows_by_key(json.dumps(doc))["mean_ttft"]
    assert ttft["change"] == "5.77% higher (not significant; 95% CI -2.95% to +14.49%)"
    assert ttft["verdict"] == "not_significant" and ttft["significance"] == "not_significant"
    assert ttft["interval"]["df"] == pytest.approx(4.0)
    assert ttft["interval"]["low"] == pytest.approx(6 - 9.066, abs=1e-3)
    assert ttft["relative_interval"]["high"] == pytest.approx(0.14487, abs=1e-5)
    assert "report.repeated_runs" in codes(doc)
    assert doc["noise"] == {
        "spread_known": True,
        "method": "Welch t",
        "level": 0.95,
        "eval_method": "normal approximation from lm-eval stderr",
    }


def test_repeated_runs_significant_regression(capsys, tmp_path):
    # TTFT 100, 101, 102 (mean 101, s^2 = 1) vs 110, 111, 112 (mean 111, s^2 = 1):
    # se^2 = 2/3, se = 0.8165, df = 4 → t = 2.776, half = 2.2666; delta 10 → [7.733, 12.267];
    # relative 10 / 101 = 9.90 %, [7.66 %, 12.15 %]: excludes 0, and higher TTFT is worse.
    base = [healthy(mean_ttft_ms=t) for t in (100.0, 101.0, 102.0)]
    cand = [healthy(mean_ttft_ms=t) for t in (110.0, 111.0, 112.0)]
    doc = report_json(capsys, tmp_path, base, cand)
    ttft = rows_by_key(json.dumps(doc))["mean_ttft"]
    assert ttft["change"] == "9.90% higher (TTFT regression; 95% CI +7.66% to +12.15%)"
    assert ttft["verdict"] == "regression" and ttft["interval"]["significant"] is True


def test_one_side_single_spread_unknown(capsys, tmp_path):
    base = [healthy(mean_ttft_ms=t) for t in (100.0, 101.0, 102.0)]
    doc = report_json(capsys, tmp_path, base, [healthy(mean_ttft_ms=111.0)])
    ttft = rows_by_key(json.dumps(doc))["mean_ttft"]
    # mean 101 → 111: 9.90 % higher, but the candidate's spread is unknown
    assert ttft["change"] == "9.90% higher" and ttft["verdict"] == "unknown"
    assert "Candidate has one run" in note(doc, "report.spread_one_side")["message"]


def lm_eval(score: float, stderr) -> dict:
    return {
        "results": {
            "gsm8k": {"exact_match,strict-match": score, "exact_match_stderr,strict-match": stderr}
        },
        "higher_is_better": {"gsm8k": {"exact_match": True}},
    }


@pytest.mark.parametrize(
    ("a", "b", "se", "text", "verdict"),
    [
        # -0.005 against sqrt(2) x 0.012 = 0.016971, x 1.96 = 0.033262 → [-0.0383, +0.0283]
        (
            0.950,
            0.945,
            0.012,
            "-0.0050 (not significant; 95% CI -0.0383 to +0.0283)",
            "not_significant",
        ),
        # +0.1 against sqrt(2) x 0.02 x 1.96 = 0.055437 → [+0.0446, +0.1554]
        (
            0.80,
            0.90,
            0.02,
            "+0.1000 (gsm8k exact_match,strict-match improvement; 95% CI +0.0446 to +0.1554)",
            "improvement",
        ),
        # no stderr ("N/A"): the spread is unknown
        (0.950, 0.945, "N/A", "-0.0050", "unknown"),
    ],
)
def test_eval_delta_against_its_stderr(capsys, tmp_path, a, b, se, text, verdict):
    ea = write(tmp_path / "ea.json", lm_eval(a, se))
    eb = write(tmp_path / "eb.json", lm_eval(b, se))
    doc = report_json(capsys, tmp_path, [healthy()], [healthy()], "--eval-a", ea, "--eval-b", eb)
    row = rows_by_key(json.dumps(doc))["eval:gsm8k:exact_match,strict-match"]
    assert row["change"] == text and row["verdict"] == verdict


def test_t_table_matches_the_t_distribution():
    """Each T_975 entry is the 97.5 % point of Student's t: integrate its density numerically."""

    def cdf(t: float, nu: int) -> float:
        c = math.exp(math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2)) / math.sqrt(nu * math.pi)

        def pdf(x):
            return c * (1 + x * x / nu) ** (-(nu + 1) / 2)

        n = 20000  # Simpson's rule on [0, t]
        h = t / n
        s = pdf(0) + pdf(t) + sum((4 if i % 2 else 2) * pdf(i * h) for i in range(1, n))
        return 0.5 + s * h / 3

    for nu, t in T_975.items():
        assert cdf(t, nu) == pytest.approx(0.975, abs=2e-4), nu


def test_t_quantile_floors_the_welch_df():
    assert t_quantile_975(1.44) == 12.706  # df 1
    assert t_quantile_975(4.0) == 2.776
    assert t_quantile_975(35.0) == 2.042  # largest tabulated df <= 35 is 30
    assert t_quantile_975(500.0) == 1.980


def test_welch_needs_two_runs_per_side():
    assert welch_interval(Stat((1.0,)), Stat((1.0, 2.0))) is None
    same = welch_interval(Stat((5.0, 5.0)), Stat((6.0, 6.0)))  # no spread at all: the point
    assert (same.low, same.high, same.significant) == (1.0, 1.0, True)


# ------------------------------------------------------------------------------------------
# Percentile rows
# ------------------------------------------------------------------------------------------


def test_median_and_p99_rows_when_present(capsys, tmp_path):
    lat = {
        "median_ttft_ms": 2000.0,
        "p99_ttft_ms": 4000.0,
        "median_tpot_ms": 40.0,
        "p99_tpot_ms": 80.0,
        "mean_itl_ms": 20.0,
        "median_itl_ms": 18.0,
        "p99_itl_ms": 100.0,
        "mean_e2el_ms": 50000.0,
        "median_e2el_ms": 48000.0,
        "p99_e2el_ms": 90000.0,
    }
    faster = {k: v * 0.9 for k, v in lat.items()}  # every latency 10 % lower
    a = write(tmp_path / "a.json", healthy(**lat))
    b = write(tmp_path / "b.json", healthy(**faster))
    code, md, _ = run_cli(capsys, a, b)
    assert code == 0
    for label, base in (
        ("Median TTFT", 2000.0),
        ("P99 TTFT", 4000.0),
        ("Median TPOT", 40.0),
        ("P99 TPOT", 80.0),
        ("Mean ITL", 20.0),
        ("Median ITL", 18.0),
        ("P99 ITL", 100.0),
        ("Mean E2EL", 50000.0),
        ("Median E2EL", 48000.0),
        ("P99 E2EL", 90000.0),
    ):
        assert f"| {label} | {base:.3f} ms | {base * 0.9:.3f} ms | 10.00% lower |" in md
    # files without them: no such rows
    code, md, _ = run_cli(capsys, write(tmp_path / "c.json", healthy()), b)
    assert "| P99 TTFT | — |" in md  # one side has it
    code, md, _ = run_cli(
        capsys, write(tmp_path / "d.json", healthy()), a.replace("a.json", "d.json")
    )
    assert "P99" not in md and "ITL" not in md


# ------------------------------------------------------------------------------------------
# Strict JSON
# ------------------------------------------------------------------------------------------


def _strict(text: str):
    def refuse(name):
        raise ValueError(f"not JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def test_report_json_never_prints_infinity(capsys, tmp_path):
    # A hand-made file with float infinities (json.dumps writes them as Infinity).
    base = healthy(request_rate=math.inf, burstiness=math.inf)
    cand = healthy(request_rate=math.inf, burstiness=math.inf)
    a = write(tmp_path / "a.json", json.dumps(base))
    b = write(tmp_path / "b.json", json.dumps(cand))
    assert "Infinity" in (tmp_path / "a.json").read_text()
    code, out, _ = run_cli(capsys, a, b, "--json")
    assert code == 0 and "Infinity" not in out and "NaN" not in out
    doc = _strict(out)
    assert doc["workload"]["request_rate"] == "inf"  # as vLLM writes an unlimited rate
    assert doc["workload"]["burstiness"] is None  # not finite → null
    target = tmp_path / "ab.json"
    code, _, _ = run_cli(capsys, a, b, "--json", "-o", str(target))
    assert code == 0 and _strict(target.read_text())["workload"]["request_rate"] == "inf"


def test_to_jsonable_and_emit_json_are_strict(capsys):
    doc = {"a": math.inf, "b": [-math.inf, math.nan, 1.5], "c": (2,)}
    assert to_jsonable(doc) == {"a": None, "b": [None, None, 1.5], "c": [2]}
    emit_json(doc)
    assert _strict(capsys.readouterr().out) == {"a": None, "b": [None, None, 1.5], "c": [2]}
    emit_json(doc, plain=True, compact=True)  # plain documents are guarded too
    assert capsys.readouterr().out.strip() == '{"a":null,"b":[null,null,1.5],"c":[2]}'


def test_numpy_non_finite_scalars_become_null():
    np = pytest.importorskip("numpy")
    assert to_jsonable({"x": np.float32("inf"), "y": np.float64(2.5)}) == {"x": None, "y": 2.5}


def test_build_report_library_notes():
    report = build_report(
        [BenchRun("a.json", bench_json(PR_BASELINE))], [BenchRun("b.json", healthy())]
    )
    assert report.runs == (1, 1)
    assert report.row("mean_ttft").change.verdict == "unknown"
    assert [f.code for f in report.findings][:2] == [
        "report.acceptance_collapsed",
        "report.acceptance_confounded",
    ]
