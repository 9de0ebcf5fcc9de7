"""The verify-kernel result (KernelReport) and fc_norm synthesis for ``--chunks``, without torch.

Expected values by hand: a draft without fc_norm asked for k = 3 chunks gets three weights of its
hidden_norm width (the grouped fc_norm kernel normalises k chunks of width Ht each); the report
passes only when every case passes, and ``interpreted`` is true exactly on the CPU device.
"""

from __future__ import annotations

import json

from recipecli import kernelcheck as kc
from recipecli.output import json_text


def _case(passed: bool) -> kc.CaseResult:
    metrics = {"passed": passed, "max_abs_err": 0.0, "max_ulp": 0, "frac_bit_identical": 1.0}
    return kc.CaseResult("layer0", "hf", 1, (64, 96), "bfloat16", metrics)


def test_chunks_synthesise_fc_norm_of_the_hidden_norm_width():
    norms = kc.synthetic_norms(64, 96, None, "bfloat16")
    assert norms.fc_norm == ()
    got = kc.with_fc_norm_chunks(norms, 3)
    assert [(w.name, w.width) for w in got.fc_norm] == [
        ("fc_norm.0 (synthesised)", 96),
        ("fc_norm.1 (synthesised)", 96),
        ("fc_norm.2 (synthesised)", 96),
    ]
    assert got.notes[-1] == "--chunks 3: fc_norm synthesised"
    # a draft that has fc_norm weights keeps them
    assert kc.with_fc_norm_chunks(got, 5) is got


def test_report_passes_only_when_every_case_passes():
    norms = kc.synthetic_norms(64, 96, None, "bfloat16")
    good = kc.report(norms, [_case(True), _case(True)], "cpu")
    bad = kc.report(norms, [_case(True), _case(False)], "cuda")
    assert (good.passed, good.interpreted) == (True, True)
    assert (bad.passed, bad.interpreted) == (False, False)
    doc = json.loads(json_text(bad))
    assert list(doc) == ["draft", "device", "interpreted", "passed", "cases"]
    assert doc["device"] == "cuda" and doc["passed"] is False
    assert [c["passed"] for c in doc["cases"]] == [True, False]
