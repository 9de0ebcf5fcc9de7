"""The ``layouts`` key of the committed SGLang engine data (``scripts/engine_data_sglang.py``, read
by ast from the 0.5.23 wheel) checked against SGLang 0.5.23's own code (issue #25, item 3).

* Start-up refusals: each layout below goes through SGLang's argument parsing
  (``prepare_server_args``), its resolution pipeline on ``--device cpu`` and then
  ``ServerArgs.check_server_args`` (what ``entrypoints/engine.py`` runs before the scheduler
  starts). What SGLang raises must be a refusal the data records, for that algorithm and on the
  layout axes the data names; a layout SGLang accepts must not be refused by a recorded refusal
  whose guards are all about the layout. The expected outcome of every case is also written out by
  hand from ``arg_groups/validation_hook.py`` ``check_pipeline_parallel_compat`` (PP + a
  speculative algorithm: EAGLE only, non-multi-layer, and without ``SGLANG_ENABLE_PP_SPEC`` on a
  PD prefill server only).
* Dispatch: ``SpeculativeAlgorithm.handle_server_args`` is run with the ``_handle_*`` hooks
  replaced by recorders; the one it calls per algorithm must be the one the data names.
* PP capture: each target's own ``set_eagle3_layers_to_capture`` is called on a stand-in ``self``
  whose ``pp_group.is_last_rank`` is False: a class the data says captures on the ``last`` stage
  only must set nothing; one it says captures on ``all`` stages must set its capture list.
"""

from __future__ import annotations

import importlib
import json
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from sgl_report import FIXTURES, REPO, REPORT, TARGETS

pytestmark = pytest.mark.conformance_sglang

DATA = json.loads((REPO / "recipecli/engines/sglang/data/sglang-0.5.23.json").read_text())
LAYOUTS = DATA["layouts"]
LLAMA = "meta-llama__Llama-3.1-8B-Instruct"
DRAFT = FIXTURES / "sgl-project-SpecForge-template__llama3-8B-eagle3"
EAGLE_ONLY = (
    "Pipeline parallelism currently only supports EAGLE (non-multi-layer) speculative decoding"
)
PREFILL_ONLY = (
    "PP + speculative decoding (MTP) is only supported on prefill nodes "
    "(disaggregation-mode=prefill)"
)
#: speculative_hook.py _handle_eagle_family (STANDALONE and attn_dp_enabled_of)
STANDALONE_DP = "Currently standalone speculative decoding does not support dp attention."
DPA = ["--tp-size", "2", "--dp-size", "2", "--enable-dp-attention"]

#: (id, algorithm, extra flags, axes, the AssertionError/ValueError text SGLang raises or None),
#: the outcome read by hand from validation_hook.py check_pipeline_parallel_compat (see above)
CASES: list[tuple[str, str, list[str], list[str], str | None]] = [
    ("eagle3-tp1", "EAGLE3", [], [], None),
    ("eagle3-pp2", "EAGLE3", ["--pp-size", "2"], ["pp"], EAGLE_ONLY),
    ("eagle3-pp4", "EAGLE3", ["--pp-size", "4"], ["pp"], EAGLE_ONLY),
    ("eagle3-pp2-prefill", "EAGLE3", ["--pp-size", "2", "--disaggregation-mode", "prefill"],
     ["pp"], EAGLE_ONLY),
    ("eagle3-pp2-decode", "EAGLE3", ["--pp-size", "2", "--disaggregation-mode", "decode"],
     ["pp"], EAGLE_ONLY),
    ("eagle3-prefill", "EAGLE3", ["--disaggregation-mode", "prefill"], [], None),
    ("eagle3-decode", "EAGLE3", ["--disaggregation-mode", "decode"], [], None),
    ("eagle3-ep2", "EAGLE3", ["--tp-size", "2", "--ep-size", "2"], [], None),
    ("eagle-pp2", "EAGLE", ["--pp-size", "2"], ["pp", "pd"], PREFILL_ONLY),
    ("eagle-pp2-decode", "EAGLE", ["--pp-size", "2", "--disaggregation-mode", "decode"],
     ["pp", "pd"], PREFILL_ONLY),
    ("eagle-pp2-prefill", "EAGLE", ["--pp-size", "2", "--disaggregation-mode", "prefill"], [], None),
    ("eagle3-tp2-dp2", "EAGLE3", ["--tp-size", "2", "--dp-size", "2"], [], None),
    ("eagle3-dp-attention", "EAGLE3", DPA, [], None),
    ("eagle3-dp-attention-decode", "EAGLE3", [*DPA, "--disaggregation-mode", "decode"], [], None),
    ("eagle3-dp-attention-pp2", "EAGLE3", ["--tp-size", "4", "--pp-size", "2", "--dp-size", "2",
     "--enable-dp-attention"], ["pp"], EAGLE_ONLY),
    ("standalone-tp1", "STANDALONE", [], [], None),
    ("standalone-dp-attention", "STANDALONE", DPA, ["dp_attention"], STANDALONE_DP),
]  # fmt: skip


def _engine_outcome(algo: str, extra: list[str]) -> dict[str, Any]:
    """SGLang's parse, CPU resolution and ``check_server_args`` on the local Llama target."""
    sgl_cli = importlib.import_module("sgl_cli")  # tests/conformance_sglang (conftest's path)

    tmp = Path(tempfile.mkdtemp())
    (tmp / "config.json").write_text(
        json.dumps(json.loads((TARGETS / f"{LLAMA}.json").read_text())["config"])
    )
    argv = [*sgl_cli.LAUNCH, "--model-path", str(tmp), "--speculative-algorithm", algo,
            "--speculative-draft-model-path", str(DRAFT), "--device", "cpu", *extra]  # fmt: skip
    got = sgl_cli.parse_launch(argv)
    assert got["accepted"], got["error"]
    res = sgl_cli.resolve(got["args"])
    if not res["resolved"]:
        return {"stage": f"resolution ({res['stopped_at']})", "error": res["error"]}
    try:
        got["args"].check_server_args()
    except (AssertionError, ValueError) as exc:
        return {"stage": "check_server_args", "error": f"{type(exc).__name__}: {exc}"}
    return {"stage": None, "error": None}


@pytest.mark.parametrize(("algo", "extra", "axes", "expected"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])  # fmt: skip
def test_layout_refusals_are_what_sglang_raises(
    algo: str, extra: list[str], axes: list[str], expected: str | None
) -> None:
    got = _engine_outcome(algo, extra)
    REPORT.setdefault("engine_data", []).append({"algo": algo, "flags": extra, **got})
    if expected is None:
        assert got["error"] is None, got
        return
    assert got["error"] is not None and got["error"].endswith(expected), got
    matches = [r for r in LAYOUTS["refusals"] if r["message"] == expected]
    assert len(matches) == 1, matches
    rec = matches[0]
    assert algo in rec["algorithms"], rec
    assert sorted(rec["axes"]) == sorted(axes), rec
    if expected == STANDALONE_DP:  # raised in the resolution pipeline's speculative hook
        assert (rec["function"], rec["called_from"]) == ("_handle_eagle_family", None), rec
        assert got["stage"] == "resolution (handle_speculative_decoding)", got
        return
    assert got["stage"] == "check_server_args", got
    assert rec["function"] == "check_pipeline_parallel_compat"
    assert rec["called_from"].endswith("check_server_args")
    assert rec["guards"][0] == "cfg.pp_size > 1"  # the calling guard in check_server_args


def test_refusal_algorithms_follow_the_branches() -> None:
    # check_pipeline_parallel_compat: DSPARK has its own first branch, so neither EAGLE refusal
    # can fire for it; EAGLE_ONLY always fires for EAGLE3 (its test is upper() == "EAGLE"), and
    # PREFILL_ONLY can fire for EAGLE (the eagle-pp2 case above raises it)
    by_msg = {r["message"]: r for r in LAYOUTS["refusals"]}
    assert "EAGLE3" in by_msg[EAGLE_ONLY]["algorithms"]
    assert "DSPARK" not in by_msg[EAGLE_ONLY]["algorithms"]  # its own branch comes first
    assert "EAGLE" in by_msg[PREFILL_ONLY]["algorithms"]
    assert "DSPARK" not in by_msg[PREFILL_ONLY]["algorithms"]


def test_dispatch_matches_handle_server_args(monkeypatch: pytest.MonkeyPatch) -> None:
    hook = importlib.import_module("sglang.srt.arg_groups.speculative_hook")
    algorithm = importlib.import_module("sglang.srt.speculative.spec_info").SpeculativeAlgorithm

    called: list[str] = []
    for name in LAYOUTS["dispatch"]:
        monkeypatch.setattr(hook, name, lambda _args, _n=name: called.append(_n))
    for handler, algos in LAYOUTS["dispatch"].items():
        for algo in algos:
            called.clear()
            algorithm[algo].handle_server_args(None)
            assert called == [handler], algo
    assert sorted(a for v in LAYOUTS["dispatch"].values() for a in v) == sorted(
        LAYOUTS["algorithms"]
    )


class _Stand:
    """A stand-in ``self``: attribute reads give nested stand-ins, writes are recorded."""

    def __init__(self, log: list[str], path: str, last_rank: bool) -> None:
        object.__setattr__(self, "_log", log)
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_last", last_rank)

    def __getattr__(self, name: str) -> Any:
        if name == "is_last_rank":
            return self._last
        if name == "num_hidden_layers":
            return 32
        child = _Stand(self._log, f"{self._path}.{name}", self._last)
        object.__setattr__(self, name, child)
        return child

    def __setattr__(self, name: str, value: Any) -> None:
        self._log.append(f"{self._path}.{name}")
        object.__setattr__(self, name, value)

    def __getitem__(self, key: Any) -> _Stand:
        return _Stand(self._log, f"{self._path}[{key}]", self._last)


def test_pp_capture_stages_match_the_target_classes() -> None:
    get_parallel = importlib.import_module("sglang.srt.runtime_context").get_parallel

    checked = {"last": 0, "all": 0}
    for arch, entry in sorted(LAYOUTS["targets"].items()):
        stages = entry.get("capture_stages")
        if stages not in checked or entry.get("delegates_to"):
            continue
        module = DATA["targets"][arch]["module"].replace("python/", "").replace("/", ".")[:-3]
        try:
            cls = getattr(importlib.import_module(module), arch)
        except Exception:  # a model module that needs a CUDA-only dependency to import
            continue
        log: list[str] = []
        try:  # minimax_m2.py asks get_parallel().pp_group: SGLang's own override answers
            with get_parallel().override(pp_group=SimpleNamespace(is_last_rank=False)):
                cls.set_eagle3_layers_to_capture(_Stand(log, "self", False), [1, 15, 28])
        except Exception:  # the stand-in is not enough for this body (super(), tensors)
            if stages == "last":
                raise
            continue
        assert bool(log) == (stages == "all"), (arch, stages, log)
        checked[stages] += 1
    REPORT.setdefault("engine_data", []).append({"pp_capture_checked": checked})
    assert checked["last"] >= 20 and checked["all"] >= 3, checked


def test_the_pp_gate_is_asserts_that_python_O_strips() -> None:
    # check_pipeline_parallel_compat is written with assert statements: under `python -O`
    # EAGLE3 with --pp-size 2 passes check_server_args (and the draft then gets only the last
    # stage's aux hidden states, set_eagle3_layers_to_capture above); docs/engines/layouts.md
    import subprocess
    import sys

    code = (
        "import sys; sys.path.insert(0, 'tests/conformance_sglang'); "
        "import test_engine_data_sglang as t; "
        "print(t._engine_outcome('EAGLE3', ['--pp-size', '2']))"
    )
    out = (
        subprocess.run(
            [sys.executable, "-O", "-c", code], capture_output=True, text=True, cwd=REPO, check=True
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    assert out == "{'stage': None, 'error': None}", out
    rec = _one_refusal(EAGLE_ONLY)
    assert rec["exception"] == "AssertionError"


def _one_refusal(message: str) -> dict[str, Any]:
    (rec,) = [r for r in LAYOUTS["refusals"] if r["message"] == message]
    return dict(rec)
