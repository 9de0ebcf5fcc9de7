"""Issue #24 "fixes that work": a finding's fix, applied as its message words it, makes that
finding go away and brings no new error on that engine (the fix is applied the way a user would:
the config rewritten, or ``recipecli convert`` run, then ``check`` again).

Expected values come from the engines' code at the pins (cited per test); the pairs are
tests/helpers/pairs.py's tiny ones (target H 64, V 640, L 8; draft Vd 128).
"""

from __future__ import annotations

import subprocess
import sys

from helpers.pairs import base_pair, base_pair_d, codes, errors, find, one

from recipecli.check import run_check
from recipecli.checkpoint import open_checkpoint

CONVERT_FIX = "recipecli convert DRAFT OUT --to eagle3"


def test_speculators_draft_fix_is_convert_and_it_works(tmp_path):
    # SGLang and tokenspeed build the draft config with get_config (transformers' AutoConfig),
    # which cannot build a speculators config (no model_type; geometry under
    # transformer_layer_config) and neither reads that format (SGLang
    # utils/hf_transformers/config.py get_config; tokenspeed utils/hf_transformers_utils.py
    # get_config); vLLM reads it (speculators/algos.py update_eagle3)
    p = base_pair_d()
    res = p.run(tmp_path / "pair")
    for engine in ("sglang", "tokenspeed"):
        f = one(res, "config.model_type", engine=engine)
        assert f.severity == "error" and f.message.endswith(CONVERT_FIX)
        assert '"model_type": "llama"' not in f.message
    assert res.ready_tps("vllm") == [1, 2, 4]
    # the fix, applied: convert, then check the converted draft
    target, draft = p.written
    out = tmp_path / "converted"
    proc = subprocess.run(
        [sys.executable, "-m", "recipecli", "convert", str(draft), str(out), "--to", "eagle3"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    fixed = run_check(open_checkpoint(str(target)), open_checkpoint(str(out)), tps=(1, 2, 4))
    assert fixed.draft.format == "B"  # LlamaForCausalLMEagle3, flat geometry
    assert not {"config.model_type", "draft.arch_name"} & codes(fixed)
    assert errors(fixed) == []


def test_rope_fix_applied_on_every_engine(tmp_path):
    # every engine builds the draft's rotary embedding from the draft config alone (vLLM
    # models/llama.py LlamaAttention._init_rotary_emb; SGLang models/llama.py
    # LlamaDecoderLayer.__init__; tokenspeed models/llama.py LlamaAttention.__init__); the draft
    # writes no rope_theta -> transformers 5's default 10000.0, the target 1000000.0
    p = base_pair()
    p.target["rope_theta"] = 1000000.0
    res = p.run(tmp_path / "a")
    got = {f.engine: (f.severity, f.evidence["differences"]) for f in find(res, "rope.mismatch")}
    want = ("info", {"rope_theta": [10000.0, 1000000.0]})
    assert got == {"vllm": want, "tokenspeed": want, "sglang": want}
    assert (
        "set the draft's rope_theta to the target's"
        in one(res, "rope.mismatch", engine="vllm").message
    )
    p.draft["rope_theta"] = 1000000.0
    fixed = p.run(tmp_path / "b")
    assert "rope.mismatch" not in codes(fixed)
    assert errors(fixed) == []
