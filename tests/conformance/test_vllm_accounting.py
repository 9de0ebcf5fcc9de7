"""The accounting (issue #24 item 1): recipecli's vLLM accounting of every conformance pair
against vLLM 0.33.0's own draft model and ``load_weights`` on the meta device
(``vllm_probe.probe_pair``).

For each pair of ``pairs.CASES``, vLLM's side is the probe: ``built`` (every parameter
``Eagle3LlamaForCausalLM.__init__`` builds), ``missing`` (built, loaded by nothing, not shared),
``shared`` (``embed_tokens``/``lm_head`` the proposer takes from the target) and ``dropped``
(names its loader passed over: ``t2d``, the ``WeightsMapper`` substrings mapped to None,
``.bias`` names ``AutoWeightsLoader`` ignores and the stacked linears skip). recipecli's side is
``recipecli check TARGET DRAFT --engine vllm --explain --json`` (``engines.vllm.accounting``).
Compared, one test per (pair, field):

- ``filled``: ``built - missing - shared`` == the parameters recipecli says ``filled``;
- ``left at init``: ``missing`` == recipecli's ``left at init``;
- ``from target``: ``shared`` == recipecli's ``from target``;
- ``dropped``: vLLM's ``dropped`` == recipecli's ``dropped`` + ``skipped`` tensors, both in the
  name vLLM's loader sees (:func:`vllm_name`);
- ``refused``: vLLM's load raising "There is no module or parameter named" == recipecli listing a
  ``refused`` tensor.

The parameter and ``dropped`` fields are compared only where vLLM's load ran to the end (a load
that raised left them half-filled), ``refused`` where it ran to the end or raised on a name (a
load that raised on a shape first says nothing about names). Disagreements known today are in ``known_disagreements.json``
(section ``accounting``, ``{case: {field: reason}}``) and run as ``xfail(strict=True)``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pairs
import pytest
from conftest import REPORT

pytestmark = pytest.mark.conformance

KNOWN: dict[str, dict[str, str]] = json.loads(
    (Path(__file__).with_name("known_disagreements.json")).read_text()
).get("accounting", {})
FIELDS = ("filled", "left at init", "from target", "dropped", "refused")
_CACHE: dict[str, dict[str, Any]] = {}

#: vLLM's stacked projections (llama_eagle3.py LlamaModel.hf_to_vllm_mapper.orig_to_new_stacked)
_STACKED = {
    ".q_proj": ".qkv_proj",
    ".k_proj": ".qkv_proj",
    ".v_proj": ".qkv_proj",
    ".gate_proj": ".gate_up_proj",
    ".up_proj": ".gate_up_proj",
}


def vllm_name(name: str) -> str:
    """A checkpoint or vLLM name as ``LlamaModel``'s loader sees it, so that both sides compare:
    without the ``model.`` that ``Eagle3LlamaForCausalLM.load_weights`` adds, ``midlayer.`` as
    ``layers.0.`` and q/k/v, gate/up stacked (``hf_to_vllm_mapper``, llama_eagle3.py)."""
    name = name.removeprefix("model.").replace("midlayer.", "layers.0.", 1)
    for old, new in _STACKED.items():
        if old in name:
            return name.replace(old, new, 1)
    return name


def _recipecli(target: Path, draft: Path) -> dict[str, Any] | None:
    """``engines.vllm.accounting`` of ``recipecli check --explain --json`` at TP 1 (None when
    check printed no accounting, e.g. it refused to model the draft)."""
    cmd = [sys.executable, "-m", "recipecli", "check", str(target), str(draft), "--engine"]
    cmd += ["vllm", "--json", "--explain", "--kernel", "skip", "--tp", "1"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return None
    acc: dict[str, Any] | None = ((data.get("engines") or {}).get("vllm") or {}).get("accounting")
    return acc


def _sides(probe: dict[str, Any], acc: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """``{field: (vLLM's value, recipecli's value)}`` for the fields that can be compared."""
    params: dict[str, list[str]] = {}
    for p in acc["params"]:
        params.setdefault(p["status"], []).append(p["param"])
    tensors: dict[str, list[str]] = {}
    for t in acc["tensors"]:
        tensors.setdefault(t["status"], []).append(t["name"])
    err = probe.get("error") or {}
    raised_unknown = err.get("stage") == "load" and "no module or parameter named" in err.get(
        "text", ""
    )
    out: dict[str, tuple[Any, Any]] = {}
    if raised_unknown or probe["verdict"] != "raises":
        out["refused"] = (raised_unknown, bool(tensors.get("refused")))
    if probe["verdict"] != "raises":
        skipped = tensors.get("dropped", []) + tensors.get("skipped", [])
        out["dropped"] = (
            sorted({vllm_name(n) for n in probe["dropped"]}),
            sorted({vllm_name(n) for n in skipped}),
        )
        built, missing, shared = set(probe["built"]), set(probe["missing"]), set(probe["shared"])
        out["filled"] = (sorted(built - missing - shared), sorted(params.get("filled", [])))
        out["left at init"] = (sorted(missing), sorted(params.get("left at init", [])))
        out["from target"] = (sorted(shared), sorted(params.get("from target", [])))
    return out


def result(name: str, root: Path) -> dict[str, Any]:
    """vLLM's probe and recipecli's accounting of case ``name``, compared (cached)."""
    if name not in _CACHE:
        import vllm_probe

        target, draft = pairs.CASES[name].write(root / name)
        probe = vllm_probe.probe_pair(target, draft)
        probe.pop("params", None)
        acc = _recipecli(target, draft)
        sides = _sides(probe, acc) if acc is not None and "built" in probe else {}
        _CACHE[name] = {"case": name, "vllm": probe, "accounting": acc, "sides": sides}
        REPORT.setdefault("accounting", []).append(
            {"case": name, "verdict": probe["verdict"], "has_accounting": acc is not None}
            | {f: {"vllm": v, "recipecli": r} for f, (v, r) in sides.items() if v != r}
        )
    return _CACHE[name]


@pytest.fixture(scope="session")
def acc_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("accounting")


def _params():
    for name in pairs.CASES:
        for field in FIELDS:
            marks = []
            reason = KNOWN.get(name, {}).get(field)
            if reason:
                marks.append(pytest.mark.xfail(strict=True, reason=reason))
            yield pytest.param(name, field, id=f"{name}-{field}", marks=marks)


@pytest.mark.parametrize(("name", "field"), list(_params()))
def test_accounting_matches_vllm(name: str, field: str, acc_root: Path) -> None:
    r = result(name, acc_root)
    probe = r["vllm"]
    if probe["verdict"] == "not_probed":
        pytest.skip(f"vLLM cannot build this target on CPU: {probe['error']['message']}")
    if "built" not in probe:
        pytest.skip(f"vLLM raised before building the draft: {probe['error']['message'][:200]}")
    if r["accounting"] is None:
        pytest.fail(
            f"{name}: vLLM built the draft ({probe['verdict']}), recipecli gave no accounting"
        )
    if field not in r["sides"]:
        pytest.skip(
            f"vLLM's load raised, its loaded set is partial: {probe['error']['message'][:200]}"
        )
    vllm, rc = r["sides"][field]
    assert vllm == rc, f"{name} {field}: vLLM {vllm!r}, recipecli {rc!r}"


# --------------------------------------------------------------------------- the cases themselves
# Expected by hand from vllm-project/vllm v0.33.0 (files and functions named per test), so a
# probe or a pair that stopped exercising what it names fails here too.


def test_input_norm_without_norm_before_fc_is_dropped(acc_root: Path) -> None:
    # llama_eagle3.py Eagle3LlamaForCausalLM.load_weights: norm_before_fc false ->
    # orig_to_new_substr["input_norm."] = None; t2d is skipped before mapping
    for case in ("syn-input_norm-no-norm_before_fc", "syn-input_norm-norm_before_fc-false"):
        probe = result(case, acc_root)["vllm"]
        assert probe["verdict"] == "loads_mismatch", probe["error"]
        assert sorted(probe["dropped"]) == ["model.input_norm.weight", "t2d"]


def test_unexpected_bias_is_ignored_only_inside_a_built_layer(acc_root: Path) -> None:
    # utils.py AutoWeightsLoader.load_weights appends ".bias" to ignore_unexpected_suffixes, but
    # _load_module checks it only for a name under a module it found: norm.bias and o_proj.bias
    # are ignored, foo.bias raises like foo.weight
    for case, name in (("syn-o_proj-bias", "layers.0.self_attn.o_proj.bias"),
                       ("syn-norm-bias", "norm.bias"), ("syn-fc-bias", "fc.bias")):  # fmt: skip
        probe = result(case, acc_root)["vllm"]
        assert probe["verdict"] == "loads_mismatch" and name in probe["dropped"], case
    # linear.py QKVParallelLinear/MergedColumnParallelLinear.load_weights: a bias the layer lacks
    # is skipped ("if param is None and name == 'bias': continue")
    probe = result("syn-q_proj-bias", acc_root)["vllm"]
    assert "model.layers.0.self_attn.qkv_proj.bias" in probe["dropped"]
    for case in ("syn-stray-bias", "syn-stray-weight"):
        probe = result(case, acc_root)["vllm"]
        assert probe["verdict"] == "raises" and probe["error"]["stage"] == "load", case
        assert "no module or parameter named 'foo'" in probe["error"]["text"]


def test_llama_layer_biases_follow_the_config(acc_root: Path) -> None:
    # llama.py LlamaDecoderLayer.__init__: o_proj has a bias with attention_bias (or bias), the
    # MLP with mlp_bias; llama_eagle3.py rebuilds qkv_proj with attention_bias
    built = result("syn-attention_bias-true", acc_root)["vllm"]["built"]
    assert {
        "model.layers.0.self_attn.qkv_proj.bias",
        "model.layers.0.self_attn.o_proj.bias",
    } <= set(built)
    probe = result("syn-attention_bias-true-no-o_proj-bias", acc_root)["vllm"]
    assert probe["missing"] == ["model.layers.0.self_attn.o_proj.bias"]
    built = result("syn-mlp_bias-true", acc_root)["vllm"]["built"]
    assert {"model.layers.0.mlp.gate_up_proj.bias", "model.layers.0.mlp.down_proj.bias"} <= set(
        built
    )


def test_heads_are_never_tied(acc_root: Path) -> None:
    # llama_eagle3.py Eagle3LlamaForCausalLM.__init__ builds its own lm_head [Vd, H] whatever
    # tie_word_embeddings says; without one in the checkpoint the proposer shares the target's
    # (llm_base_proposer.py _maybe_share_lm_head)
    probe = result("syn-tied-embed-full-vocab", acc_root)["vllm"]
    assert probe["verdict"] == "loads" and probe["shared"] == ["lm_head.weight"]
    probe = result("syn-tied-reduced-vocab", acc_root)["vllm"]
    assert probe["verdict"] == "loads" and probe["shared"] == ["model.embed_tokens.weight"]


def test_vocab_map_without_t2d_or_d2t(acc_root: Path) -> None:
    # Vd 32000 != V 151936: draft_id_to_target_id [Vd] is built; d2t fills it, t2d is never read
    probe = result("syn-d2t-no-t2d", acc_root)["vllm"]
    assert probe["verdict"] == "loads" and probe["dropped"] == []
    probe = result("syn-t2d-no-d2t", acc_root)["vllm"]
    assert probe["missing"] == ["draft_id_to_target_id"] and probe["dropped"] == ["t2d"]
