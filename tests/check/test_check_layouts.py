"""``check`` beyond TP (issue #25 items 1 and 3): the layout options, the product of the lists,
the layouts that do not fit, the JSON ``layouts`` and the text matrix.

Expected values, worked out by hand for the bundled example (Llama-3.1-8B-Instruct, 32 layers,
32 heads + yuhuili/EAGLE3-LLaMA3.1-Instruct-8B):

* vLLM v0.33.0 accepts it at every TP the 32 heads divide (tests/check/test_check_verdict.py),
  and LlamaModel declares ``supports_aux_hidden_states_over_pp = True``
  (vllm/model_executor/models/llama.py:358): READY at PP 2 as well (the draft, on the last
  stage, shares the target embedding LlamaModel.__init__ builds there for EAGLE3:
  models/utils.py spec_decode_needs_target_embed);
* SGLang 0.5.23 and tokenspeed refuse the draft's ``architectures: ["LlamaForCausalLM"]`` at
  every layout (draft.arch_name), and at PP 2 SGLang's check_pipeline_parallel_compat
  (validation_hook.py:132) and tokenspeed's missing PP (no --pp flag) come first;
* ``--tp 4,8 --pp 1,2 --nodes 1`` (8 GPUs): TP 8 x PP 2 = 16 GPUs does not fit, the other
  three (4, 8, 8 GPUs) do.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recipecli.cli.app import main

EXAMPLE = ("--example", "llama3.1-8b-eagle3", "--kernel", "skip")


def _run(capsys, *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exc:
        main(["check", *args])
    return int(exc.value.code or 0), capsys.readouterr().out


def _json(capsys, *args: str) -> tuple[int, dict]:
    rc, out = _run(capsys, *EXAMPLE, "--json", *args)
    return rc, json.loads(out)


def test_no_layout_option_keeps_todays_json(capsys):
    _, doc = _json(capsys, "--tp", "1,2")
    assert set(doc["engines"]["vllm"]) == {"ready", "ready_tp"}
    assert all("layout" not in f for f in doc["findings"])


def test_no_layout_option_prints_no_matrix(capsys):
    _, out = _run(capsys, *EXAMPLE, "--tp", "1")
    assert "layouts:" not in out


def test_product_and_unfit(capsys):
    _, doc = _json(capsys, "--tp", "4,8", "--pp", "1,2", "--nodes", "1")
    rows = doc["engines"]["vllm"]["layouts"]
    assert [(r["tp"], r["pp"]) for r in rows] == [(4, 1), (4, 2), (8, 1)]
    unfit = [f for f in doc["findings"] if f["code"] == "layout.unfit"]
    assert len(unfit) == 1  # once, not once per engine
    assert unfit[0]["layout"] == {
        "tp": 8,
        "pp": 2,
        "dp": 1,
        "dp_attention": False,
        "ep": False,
        "role": "both",
    }
    assert unfit[0]["evidence"] == {"gpus": 16, "available": 8}


def test_gpus_per_node_widens_the_fit(capsys):
    _, doc = _json(capsys, "--tp", "8", "--pp", "2", "--nodes", "2", "--gpus-per-node", "8")
    assert [(r["tp"], r["pp"]) for r in doc["engines"]["vllm"]["layouts"]] == [(8, 2)]
    assert not [f for f in doc["findings"] if f["code"] == "layout.unfit"]


def test_verdicts_per_engine(capsys):
    _, doc = _json(capsys, "--tp", "4", "--pp", "2")
    v, s, t = (doc["engines"][e]["layouts"][0] for e in ("vllm", "sglang", "tokenspeed"))
    assert (v["ready"], v["codes"]) == (True, ["layout.draft_stage"])
    assert (s["ready"], s["codes"]) == (False, ["layout.pp_refused", "draft.arch_name"])
    assert (t["ready"], t["codes"]) == (False, ["layout.no_pp", "draft.arch_name"])
    # ready_tp stays the TP-only answer (pp 1, dp 1, no ep)
    assert doc["engines"]["vllm"]["ready_tp"] == [4]


def test_layout_keys_and_options_passed_through(capsys):
    args = ("--tp", "2", "--dp", "2", "--dp-attention", "--ep", "--role", "decode")
    _, doc = _json(capsys, "--engine", "vllm", *args)
    (row,) = doc["engines"]["vllm"]["layouts"]
    assert row == {
        "tp": 2,
        "pp": 1,
        "dp": 2,
        "dp_attention": True,
        "ep": True,
        "role": "decode",
        "ready": True,
        "codes": [],
    }


def test_vllm_alone_exits_0_at_pp2(capsys):
    rc, doc = _json(capsys, "--engine", "vllm", "--tp", "1", "--pp", "2")
    assert rc == 0
    (f,) = [f for f in doc["findings"] if f["code"] == "layout.draft_stage"]
    assert f["layout"]["pp"] == 2 and f["evidence"]["ranks"] == [[1]]


def test_sglang_pp2_exits_1_with_the_assert(capsys):
    rc, doc = _json(capsys, "--engine", "sglang", "--tp", "1", "--pp", "2")
    assert rc == 1
    (f,) = [f for f in doc["findings"] if f["code"] == "layout.pp_refused"]
    assert f["layout"]["pp"] == 2 and f["engine"] == "sglang"
    assert f["evidence"]["quote"] == (
        "Pipeline parallelism currently only supports EAGLE (non-multi-layer) speculative decoding"
    )


def test_text_matrix(capsys):
    _, out = _run(capsys, *EXAMPLE, "--tp", "4,8", "--pp", "1,2", "--nodes", "1")
    lines = out.splitlines()
    i = lines.index("layouts:")
    assert lines[i + 1] == "  vllm"
    assert lines[i + 2].split() == ["TP", "4", "PP", "1", "DP", "1", "READY"]
    assert lines[i + 3].split()[:8] == [
        "TP",
        "4",
        "PP",
        "2",
        "DP",
        "1",
        "READY",
        "layout.draft_stage:",
    ]
    sglang = lines[lines.index("  sglang") + 2]
    assert sglang.split()[6:9] == ["NOT", "READY", "layout.pp_refused:"]
    assert any(ln.startswith("  not checked: TP 8 PP 2 DP 1 takes 16 GPUs") for ln in lines)


def test_layout_options_refused_with_recipe(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["check", "--recipe", "llama3.1-8b-eagle3", "--pp", "2"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    # one line naming where the layout goes instead: the recipe's serve fields, or TARGET DRAFT
    assert err.count("\n") == 1 and "do not take --recipe" in err
    assert "serve fields (pipeline_parallel_size, data_parallel_size" in err
    assert "as TARGET DRAFT with the layout options" in err


def test_bad_pp_list_is_a_usage_error(capsys):
    rc, _ = _run(capsys, *EXAMPLE, "--pp", "1,x")
    assert rc == 2


# ------------------------------------------------ recipes: lint and check --recipe (item 5)


def _recipe(tmp_path, **serve):
    """The bundled Llama recipe with ``serve`` fields set (``nodes`` at the top level)."""
    import yaml

    from recipecli.recipes.loader import bundled_dir

    data = yaml.safe_load((bundled_dir() / "llama3.1-8b-eagle3.yaml").read_text())
    nodes = serve.pop("nodes", None)
    data["serve"].update(serve)
    data.pop("unsupported", None)
    if nodes is not None:
        data["nodes"] = nodes
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _layout_lint(path) -> dict[str, list[str]]:
    from recipecli.recipes.lint import lint_recipe

    out: dict[str, list[str]] = {}
    for f in lint_recipe(str(path)):
        if f.code == "recipe.layout_refused":
            out[f.engine] = f.evidence["codes"]
    return out


def test_lint_flags_pp_on_sglang_and_tokenspeed(tmp_path):
    # SGLang: check_pipeline_parallel_compat asserts EAGLE (not EAGLE3) under PP; tokenspeed has
    # no PP at all; vLLM's PP verdict needs the target, so lint leaves it to check --recipe
    got = _layout_lint(_recipe(tmp_path, tensor_parallel_size=4, pipeline_parallel_size=2))
    assert got == {"sglang": ["layout.pp_refused"], "tokenspeed": ["layout.no_pp"]}


def test_lint_flags_dp_attention_not_dividing_tp(tmp_path):
    # handle_data_parallelism: tp_size % attn_dp_size == 0; 4 % 3 = 1
    path = _recipe(tmp_path, tensor_parallel_size=4, data_parallel_size=3, enable_dp_attention=True)
    assert _layout_lint(path) == {"sglang": ["layout.dp_indivisible"]}


def test_lint_passes_a_tp_only_recipe_and_an_accepted_layout(tmp_path):
    assert _layout_lint(_recipe(tmp_path, tensor_parallel_size=4)) == {}
    path = _recipe(tmp_path, tensor_parallel_size=4, data_parallel_size=2, enable_dp_attention=True)
    assert _layout_lint(path) == {}


def test_recipe_layout_reads_the_serve_fields(tmp_path):
    from recipecli.recipes.lint.layout_rules import recipe_layout
    from recipecli.recipes.loader import load_recipe

    path = _recipe(
        tmp_path,
        tensor_parallel_size=8,
        pipeline_parallel_size=2,
        data_parallel_size=1,
        enable_expert_parallel=True,
        nodes=2,
    )
    tp, req = recipe_layout(load_recipe(str(path)))
    assert (tp, req.pps, req.dp, req.dp_attention, req.ep, req.nodes) == (
        8,
        (2,),
        1,
        False,
        True,
        2,
    )
    assert recipe_layout(load_recipe("llama3.1-8b-eagle3")) is None


def test_check_recipe_checks_the_recipes_layout(tmp_path, capsys):
    # the bundled pair at TP 4 x PP 2 (the serve fields): vLLM accepts it (draft on the last
    # stage), SGLang's check_pipeline_parallel_compat refuses
    # EAGLE3, tokenspeed has no PP (its serve field is left out of the command, the layout
    # still checked)
    path = _recipe(tmp_path, tensor_parallel_size=4, pipeline_parallel_size=2, nodes=1)
    with pytest.raises(SystemExit) as exc:
        main(["check", "--recipe", str(path), "--kernel", "skip", "--json"])
    assert exc.value.code == 1
    doc = json.loads(capsys.readouterr().out)
    rows = {
        e: [(r["tp"], r["pp"], r["ready"], r["codes"][0]) for r in v["layouts"]]
        for c in doc["checks"]
        for e, v in c["engines"].items()
    }
    assert rows == {
        "vllm": [(4, 2, True, "layout.draft_stage")],
        "tokenspeed": [(4, 2, False, "layout.no_pp")],
        "sglang": [(4, 2, False, "layout.pp_refused")],
    }


def test_check_recipe_without_layout_fields_keeps_its_json(capsys):
    with pytest.raises(SystemExit):
        main(["check", "--recipe", "llama3.1-8b-eagle3", "--kernel", "skip", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert all("layouts" not in v for c in doc["checks"] for v in c["engines"].values())


# ------------------------------------------------ the corpus (issue #25 "done when")

CORPUS = json.loads((Path(__file__).with_name("layout_corpus.json")).read_text())
REPO = Path(__file__).resolve().parents[2]
_OPENED: dict[str, object] = {}


def _open(pair: dict, which: str):
    """The pair's target or draft: the bundled example, a bundled snapshot or a fixture path."""
    from recipecli.checkpoint import open_checkpoint
    from recipecli.examples import example_pair, open_source

    key = f"{pair[which]}|{pair['open']}"
    if key not in _OPENED:
        if pair["open"].startswith("example:"):
            t, d = example_pair(pair["open"].split(":", 1)[1])
            _OPENED[key] = open_checkpoint(t if which == "target" else d)
        elif pair["open"] == "bundled":
            _OPENED[key] = open_source(pair[which], None)
        else:
            _OPENED[key] = open_checkpoint(str(REPO / pair[which]))
    return _OPENED[key]


def test_corpus_size_and_spread():
    cases = CORPUS["cases"]
    assert len(cases) >= 40
    assert {c["engine"] for c in cases} == {"vllm", "sglang", "tokenspeed"}
    assert len({c["id"] for c in cases}) == len(cases)
    for c in cases:
        assert c["pair"] in CORPUS["pairs"] and c["reason"]


@pytest.mark.parametrize("case", CORPUS["cases"], ids=[c["id"] for c in CORPUS["cases"]])
def test_corpus_case(case):
    from recipecli.check.run import run_check
    from recipecli.engines.layout import Layout, LayoutRequest

    pair = CORPUS["pairs"][case["pair"]]
    lay = Layout(**case["layout"])
    req = LayoutRequest((lay.pp,), lay.dp, lay.dp_attention, lay.ep, lay.role)
    res = run_check(
        _open(pair, "target"),
        _open(pair, "draft"),
        engines=(case["engine"],),
        tps=(lay.tp,),
        layouts=req,
    )
    mine = [f for la, f in res.layout_findings if la == lay and f.engine == case["engine"]]
    assert [f.code for f in mine] == case["codes"], case["reason"]
    assert (not any(f.severity == "error" for f in mine)) == case["ready"]
    # the JSON row names the layout's own deciding codes first
    (row,) = [r for r in res.layout_rows(case["engine"]) if r["pp"] == lay.pp]
    errors = [f.code for f in mine if f.severity == "error"]
    assert row["codes"][: len(errors)] == errors


# ------------------------------------------------ sharing per layout (issue #25, the sharing table)


def _layout_rows(doc: dict) -> list[dict]:
    return [r for r in doc["embed_sharing"] if "layout" in r]


def test_sharing_rows_unchanged_without_layout_options(capsys):
    _, plain = _json(capsys, "--engine", "vllm", "--tp", "4")
    assert not _layout_rows(plain)
    _, out = _run(capsys, *EXAMPLE, "--engine", "vllm", "--tp", "4")
    assert "sharing per layout" not in out


def test_vllm_sharing_on_the_last_stage_of_each_replica(capsys):
    # vLLM ranks are DP x PP x TP (parallel_state.py initialize_model_parallel): at TP 4 x PP 2
    # x DP 2, replica d's last stage holds ranks d*8 + 4 .. d*8 + 7. LlamaModel.__init__ builds
    # the embedding there for EAGLE3 (spec_decode_needs_target_embed) and LlamaForCausalLM its
    # lm_head: the TP-4 row (the draft ships no embed_tokens: share; it ships lm_head: own) holds
    _, plain = _json(capsys, "--engine", "vllm", "--tp", "4")
    _, doc = _json(capsys, "--engine", "vllm", "--tp", "4", "--pp", "2", "--dp", "2")
    (tp_row,) = plain["embed_sharing"]
    assert [r for r in doc["embed_sharing"] if "layout" not in r] == [tp_row]
    (row,) = _layout_rows(doc)
    assert row["layout"] == {
        "tp": 4,
        "pp": 2,
        "dp": 2,
        "dp_attention": False,
        "ep": False,
        "role": "both",
    }
    assert (row["stage"], row["draft_ranks"], row["holds"]) == (
        1,
        [[4, 5, 6, 7], [12, 13, 14, 15]],
        True,
    )
    assert (row["verdict"], row["head_verdict"]) == ("share", "own")
    # the per-rank shapes stay the TP row's: 128256 rows padded to 64 / 4 = 32064
    assert row["target_shape"] == tp_row["target_shape"] == [32064, 4096]


def test_sharing_text_table(capsys):
    _, out = _run(capsys, *EXAMPLE, "--engine", "vllm", "--tp", "4", "--pp", "1,2")
    lines = out.splitlines()
    i = lines.index("embedding / head sharing per layout (the draft's ranks):")
    assert lines[i + 1].split() == ["engine", "layout", "stage", "draft", "ranks", "embed",
                                    "head", "holds"]  # fmt: skip
    assert lines[i + 2].split() == ["vllm", "TP", "4", "PP", "1", "DP", "1", "0", "0-3",
                                    "share", "own", "yes"]  # fmt: skip
    assert lines[i + 3].split() == ["vllm", "TP", "4", "PP", "2", "DP", "1", "1", "4-7",
                                    "share", "own", "yes"]  # fmt: skip


def _sharing_at(pair: str, engine: str, lay) -> dict:
    from recipecli.check.run import run_check
    from recipecli.engines.layout import LayoutRequest

    p = CORPUS["pairs"][pair]
    req = LayoutRequest((lay.pp,), lay.dp, lay.dp_attention, lay.ep, lay.role)
    res = run_check(_open(p, "target"), _open(p, "draft"), engines=(engine,), tps=(lay.tp,),
                    layouts=req)  # fmt: skip
    (row,) = [s.to_dict() for s in res.layout_sharing]
    return row


def test_vllm_sharing_refused_where_pp_is_refused():
    # Qwen3MoeModel lacks supports_aux_hidden_states_over_pp: Model Runner V2 refuses EAGLE3 at
    # PP 2 (eagle3_utils.py verify_supports_aux_hidden_states_over_pp), nothing is shared
    from recipecli.engines.layout import Layout

    row = _sharing_at("qwen30b", "vllm", Layout(4, 2))
    assert (row["verdict"], row["stage"], row["draft_ranks"], row["holds"]) == (
        "refused",
        None,
        None,
        None,
    )


def test_dp_attention_sharing_sglang_and_tokenspeed():
    # SGLang DP attention splits the one TP group of 8 (runtime_context.py derive_attn_tp_size):
    # the draft runs on ranks 0-7; whether the target's embedding splits like the draft's is
    # per target class (not modelled: holds None). tokenspeed's attention DP runs two attention-
    # TP groups of 8 (mapping.py: DP stride TP): ranks 0-7 and 8-15, the TP row holds on each
    from recipecli.engines.layout import Layout

    lay = Layout(8, 1, 2, dp_attention=True)
    s = _sharing_at("gptoss", "sglang", lay)
    assert (s["stage"], s["draft_ranks"], s["holds"]) == (0, [list(range(8))], None)
    t = _sharing_at("gptoss", "tokenspeed", lay)
    assert (t["stage"], t["draft_ranks"], t["holds"]) == (
        0,
        [list(range(8)), list(range(8, 16))],
        True,
    )
    # SGLang refuses EAGLE3 at PP 2: nothing shared there
    r = _sharing_at("gptoss", "sglang", Layout(8, 2))
    assert (r["verdict"], r["head_verdict"], r["holds"]) == ("refused", "refused", None)


def test_sglang_dp_attention_replaces_the_target_tp_heads_finding():
    # Llama-4-Scout: 40 heads, 8 KV heads. At TP 16 the heads do not split (40 % 16 = 8): the
    # TP finding. Under DP attention with DP 2, Llama4Attention.__init__ (models/llama4.py)
    # asserts against attn_tp_size = 16 / 2 = 8: 40 % 8 = 0, 8 % 8 = 0, so it does not apply;
    # without DP attention it does
    from recipecli.check.run import run_check
    from recipecli.engines.layout import LayoutRequest

    p = CORPUS["pairs"]["scout"]
    t, d = _open(p, "target"), _open(p, "draft")
    for dpa, expect in ((True, False), (False, True)):
        res = run_check(t, d, engines=("sglang",), tps=(16,), layouts=LayoutRequest((1,), 2, dpa))
        tp_heads = [f for f in res.findings if f.code == "tp.heads_indivisible"]
        assert [f.evidence["what"] for f in tp_heads] == ["target"]
        (row,) = res.layout_rows("sglang")
        assert ("tp.heads_indivisible" in row["codes"]) is expect


# ------------------------------------------------ the human matrix: each finding's text once


def test_matrix_gives_a_repeated_finding_in_full_once(capsys):
    # tokenspeed at TP 1, 2 x PP 1, 2: the PP 1 rows stop at draft.arch_name (the draft's
    # LlamaForCausalLM becomes the unregistered LlamaForCausalLMNextN), the PP 2 rows at
    # layout.no_pp; rows are TP-major, so TP 2's two rows repeat TP 1's findings
    _, out = _run(capsys, *EXAMPLE, "--engine", "tokenspeed", "--tp", "1,2", "--pp", "1,2")
    rows = [x for x in out.split("layouts:\n")[1].split("\n\n")[0].splitlines() if "DP 1" in x]
    assert len(rows) == 4
    assert "draft.arch_name: tokenspeed looks up the draft as 'LlamaForCausalLMNextN'" in rows[0]
    assert rows[1].split("NOT READY")[1].startswith("  layout.no_pp: tokenspeed has no pipeline")
    assert rows[2].startswith("    TP 2 PP 1 DP 1") and rows[2].endswith(
        "draft.arch_name: (as above)"
    )
    assert rows[3].startswith("    TP 2 PP 2 DP 1") and rows[3].endswith("layout.no_pp: (as above)")


def test_unfit_layout_says_not_checked_once(capsys):
    # TP 8 x PP 4 x DP 1 = 32 GPUs; 2 nodes x 8 GPUs per node (the default) = 16
    _, out = _run(capsys, *EXAMPLE, "--engine", "vllm", "--tp", "8", "--pp", "1,4", "--nodes", "2")
    (line,) = [x for x in out.splitlines() if "TP 8 PP 4" in x and "32 GPUs" in x]
    assert line.startswith("  not checked: TP 8 PP 4 DP 1 takes 32 GPUs, more than the 16 of 2")
    assert line.count("not checked") == 1


def test_a_value_the_engine_did_not_reach_shows_as_a_dash(capsys):
    # nvidia/gpt-oss-120b-Eagle3-v2 sets eagle_config.use_aux_hidden_state false: vLLM builds the
    # draft without aux hidden states, so it resolves no k (None): shown "k -", not "k None*"
    data = Path(__file__).resolve().parents[2] / "recipecli" / "data"
    target = data / "targets" / "openai__gpt-oss-120b.snapshot.json.gz"
    draft = data / "drafts" / "nvidia__gpt-oss-120b-Eagle3-v2.snapshot.json.gz"
    _, out = _run(capsys, str(target), str(draft), "--engine", "vllm", "--tp", "4", "--kernel",
                  "skip")  # fmt: skip
    (line,) = [x for x in out.splitlines() if x.startswith("  as vllm reads it:")]
    assert ", k -" in line and "None" not in line
