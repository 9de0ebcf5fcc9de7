"""``diff`` across engines compares flags by what they set (issue #28 item 10), not by their
spelling. Expected pairs by hand from the engines' argument parsers: vLLM's
``--tensor-parallel-size`` / SGLang's ``--tp-size`` (sglang/srt/server_args.py: tp_size),
``--max-model-len`` / ``--context-length`` (context_length), ``--max-num-seqs`` /
``--max-running-requests`` (max_running_requests); vLLM's ``--speculative-config`` keys
``model`` / ``num_speculative_tokens`` / ``method`` and SGLang's ``--speculative-draft-model-path``
/ ``--speculative-num-steps`` / ``--speculative-algorithm``. The bundled gpt-oss recipe serves
TP 4, 3 speculative tokens (recipecli/data/recipes/gpt-oss-120b-eagle3.yaml)."""

from __future__ import annotations

from recipecli.diff import diff_recipes
from recipecli.diff.meaning import by_meaning, meanings


def _diff(**kw):
    return diff_recipes("gpt-oss-120b-eagle3", engine="vllm", vs_engine="sglang", **kw)


def test_same_settings_spelled_differently_are_unchanged():
    d = _diff()
    for pair in (
        "--tensor-parallel-size / --tp-size",
        "--max-model-len / --context-length",
        "--max-num-seqs / --max-running-requests",
        "--speculative-config.model / --speculative-draft-model-path",
        "--speculative-config.num_speculative_tokens / --speculative-num-steps",
        "--speculative-config.method / --speculative-algorithm",
    ):
        assert pair in d.unchanged_flags, pair
    names = {c.name for c in d.of("flag")}
    assert "--tensor-parallel-size" not in names and "--tp-size" not in names
    assert "--speculative-config" not in names
    # what SGLang adds that vLLM has no flag for: the EAGLE top-k and the n + 1 draft tokens
    added = {c.name: c.b for c in d.of("flag", "added")}
    assert added["--speculative-eagle-topk"] == "1"
    assert added["--speculative-num-draft-tokens"] == "4"


def test_a_changed_setting_names_both_spellings():
    d = _diff(vs_sets=("tensor_parallel_size=8",))
    (tp,) = [c for c in d.of("flag", "changed") if c.meaning == "tensor_parallel_size"]
    assert tp.name == "--tensor-parallel-size / --tp-size"
    assert (tp.a, tp.b) == ("4", "8")
    assert tp.to_dict()["meaning"] == "tensor_parallel_size"


def test_one_engine_diffs_stay_by_flag_name():
    d = diff_recipes("gpt-oss-120b-eagle3", vs_sets=("tensor_parallel_size=8",))
    (tp,) = d.of("flag", "changed")
    assert tp.name == "--tensor-parallel-size" and tp.meaning is None


def test_tokenspeed_speculative_flags_by_meaning():
    known = meanings("tokenspeed")
    assert known[("--speculative-num-steps", None)] == "speculative.num_speculative_tokens"
    assert known[("--speculative-draft-model-path", None)] == "speculative.draft"
    values, spelled = by_meaning("vllm", {"--speculative-config": '{"model": "d", "x": 1}'})
    assert values == {"speculative.draft": "d", "--speculative-config": '{"x": 1}'}
    assert spelled["speculative.draft"] == "--speculative-config.model"
