"""docs: deterministic pages, --check, models-page layout (tokenspeed docs/recipes/models.md,
docs/engines/tokenspeed.md), per-recipe pages, offline check section, bad input."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from recipecli.docsgen import (
    GENERATED_MARKER,
    DocsOptions,
    code,
    collect_recipes,
    fence,
    generate,
    recipe_page,
    results_sections,
)
from recipecli.errors import UsageError
from recipecli.recipes.loader import Recipe, load_recipe
from recipecli.recipes.render import render_command, split_shell, unfold_continuations

REPO = Path(__file__).resolve().parents[2]
BUNDLED_PAGES = [
    "README.md",
    "gpt-oss-120b-eagle3.md",
    "llama3.1-8b-eagle3.md",
    "minimax-m3-eagle3.md",
    "models-sglang.md",
    "models-tokenspeed.md",
    "models-vllm.md",
    "qwen3-30b-a3b-eagle3.md",
]


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recipecli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return generate(
        collect_recipes([], bundled=True), "docs/recipes", DocsOptions(checkpoints="bundled")
    )


def bash_blocks(text: str) -> list[str]:
    return re.findall(r"^```bash\n(.*?)^```$", text, flags=re.S | re.M)


def section(text: str, heading: str) -> str:
    """Text from ``heading`` (a full line) to the next heading of the same or higher level."""
    level = len(heading) - len(heading.lstrip("#"))
    start = text.index(heading + "\n")
    rest = text[start + len(heading) + 1 :]
    m = re.search(rf"^#{{1,{level}}} ", rest, flags=re.M)
    return rest[: m.start()] if m else rest


# --------------------------------------------------------------------------- determinism, writing


def test_generate_twice_is_byte_identical(tmp_path):
    recipes = collect_recipes([], bundled=True)
    a = generate(recipes, tmp_path, DocsOptions(checkpoints="bundled"))
    b = generate(collect_recipes([], bundled=True), tmp_path, DocsOptions(checkpoints="bundled"))
    assert list(a) == BUNDLED_PAGES
    assert a == b
    for text in a.values():
        assert text.startswith(GENERATED_MARKER + "\n\n")
        assert text.endswith("\n") and not text.endswith("\n\n")
        assert str(REPO) not in text and "/tmp" not in text


def test_cli_second_run_changes_no_byte(tmp_path):
    out = tmp_path / "site"
    first = run_cli("docs", "--bundled", "-o", str(out), "--checkpoints", "bundled")
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == f"{out}: 8 written, 0 removed, 0 unchanged"
    snapshot = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.iterdir()}
    assert sorted(snapshot) == BUNDLED_PAGES
    second = run_cli("docs", "--bundled", "-o", str(out), "--checkpoints", "bundled")
    assert second.returncode == 0
    assert second.stdout.strip() == f"{out}: 0 written, 0 removed, 8 unchanged"
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.iterdir()} == snapshot


def test_committed_bundled_docs_are_current():
    proc = run_cli(
        "docs",
        "--bundled",
        "-o",
        str(REPO / "docs" / "recipes"),
        "--checkpoints",
        "bundled",
        "--check",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_check_lists_stale_files_and_writes_nothing(tmp_path):
    out = tmp_path / "docs"
    proc = run_cli("docs", "--bundled", "-o", str(out), "--checkpoints", "bundled", "--check")
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [f"missing: {out / n}" for n in BUNDLED_PAGES]
    assert "8 file(s) missing or out of date" in proc.stderr
    assert not out.exists()

    assert run_cli("docs", "--bundled", "-o", str(out), "--checkpoints", "bundled").returncode == 0
    page = out / "llama3.1-8b-eagle3.md"
    page.write_text(page.read_text() + "hand edit\n")
    edited = page.read_bytes()
    (out / "models-vllm.md").unlink()
    proc = run_cli("docs", "--bundled", "-o", str(out), "--checkpoints", "bundled", "--check")
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        f"missing: {out / 'models-vllm.md'}",
        f"stale: {out / 'llama3.1-8b-eagle3.md'}",
    ]
    assert "without --check" in proc.stderr
    assert page.read_bytes() == edited and not (out / "models-vllm.md").exists()


def test_orphans_listed_by_check_and_removed_on_write(tmp_path):
    out = tmp_path / "docs"
    assert (
        run_cli("docs", "llama3.1-8b-eagle3", "-o", str(out), "--checkpoints", "none").returncode
        == 0
    )
    (out / "old-recipe.md").write_text(GENERATED_MARKER + "\n\n# Old\n")
    (out / "handwritten.md").write_text("# Mine\n")
    proc = run_cli("docs", "llama3.1-8b-eagle3", "-o", str(out), "--checkpoints", "none", "--check")
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        f"stale: {out / 'old-recipe.md'} (no recipe generates it any more)"
    ]
    proc = run_cli("docs", "llama3.1-8b-eagle3", "-o", str(out), "--checkpoints", "none")
    assert proc.returncode == 0 and f"removed {out / 'old-recipe.md'}" in proc.stderr
    assert not (out / "old-recipe.md").exists() and (out / "handwritten.md").exists()


def test_json_output(tmp_path):
    import json

    proc = run_cli(
        "docs", "qwen3-30b-a3b-eagle3", "-o", str(tmp_path), "--engine", "vllm", "--json"
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["ok"] is True and doc["missing"] == doc["written"] and doc["stale"] == []
    assert [Path(p).name for p in doc["written"]] == [
        "README.md",
        "models-vllm.md",
        "qwen3-30b-a3b-eagle3.md",
    ]


def test_hand_written_file_is_never_overwritten(tmp_path):
    out = tmp_path / "u"
    out.mkdir()
    mine = "# My recipes\n\nHand-written index.\n"
    (out / "README.md").write_text(mine)
    for extra in ((), ("--check",)):
        proc = run_cli(
            "docs", "llama3.1-8b-eagle3", "-o", str(out), "--checkpoints", "none", *extra
        )
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.splitlines()
        assert len(lines) == 1 and "Traceback" not in proc.stderr
        assert lines[0].startswith(f"recipecli: error: {out / 'README.md'}: exists and is not a")
        assert "give another -o DIR or move the file away" in lines[0]
        assert proc.stdout == ""
    # nothing written: the refusal comes before any page
    assert (out / "README.md").read_text() == mine
    assert sorted(p.name for p in out.iterdir()) == ["README.md"]


def test_generated_file_with_marker_is_overwritten(tmp_path):
    out = tmp_path / "u"
    out.mkdir()
    (out / "README.md").write_text(GENERATED_MARKER + "\n\n# edited by hand after all\n")
    proc = run_cli("docs", "llama3.1-8b-eagle3", "-o", str(out), "--checkpoints", "none")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"{out}: 5 written, 0 removed, 0 unchanged"
    assert "edited by hand" not in (out / "README.md").read_text()


def test_output_directory_is_created_but_never_its_parents(tmp_path):
    # the folder rule of every writer (recipecli.safe_write.check_parent): DIR is created, the
    # directory above it must exist; the same one-line message as convert, report, inspect
    missing = tmp_path / "a" / "b" / "site"
    proc = run_cli("docs", "llama3.1-8b-eagle3", "-o", str(missing), "--checkpoints", "none")
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"recipecli: error: {missing}: cannot write -o DIR: directory {missing.parent} does not "
        f"exist — give another -o DIR or create {missing.parent} first"
    ]
    assert not (tmp_path / "a").exists()
    out = tmp_path / "site"
    proc = run_cli("docs", "llama3.1-8b-eagle3", "-o", str(out), "--checkpoints", "none")
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "README.md",
        "llama3.1-8b-eagle3.md",
        "models-sglang.md",
        "models-tokenspeed.md",
        "models-vllm.md",
    ]


@pytest.mark.parametrize(
    ("rel", "why"),
    [
        ("f.txt", "it is a file, not a directory"),
        ("f.txt/docs", "a parent is a file, not a directory"),
    ],
)
def test_output_directory_under_or_at_a_file_is_exit_2(tmp_path, rel, why):
    (tmp_path / "f.txt").write_text("x\n")
    out = tmp_path / rel
    proc = run_cli("docs", "llama3.1-8b-eagle3", "-o", str(out), "--checkpoints", "none")
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"recipecli: error: {out}: cannot use as the output directory: {why} — give another -o DIR"
    ]
    assert (tmp_path / "f.txt").read_text() == "x\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_output_directory_not_creatable_is_exit_2(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        out = ro / "docs"
        proc = run_cli("docs", "llama3.1-8b-eagle3", "-o", str(out), "--checkpoints", "none")
    finally:
        ro.chmod(0o755)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"recipecli: error: {out}: cannot use as the output directory: Permission denied "
        "— give another -o DIR"
    ]


def test_template_without_marker_is_refused(tmp_path):
    user = tmp_path / "tpl"
    user.mkdir()
    (user / "docs_index.md.j2").write_text("# My index\n")
    recipes = collect_recipes(["llama3.1-8b-eagle3"])
    with pytest.raises(UsageError, match="first line is not") as err:
        generate(recipes, tmp_path, DocsOptions(checkpoints="none", templates=str(user)))
    assert err.value.path == str(user / "docs_index.md.j2")


# --------------------------------------------------------------------------- models page layout


def test_models_page_headings(pages):
    for engine in ("vllm", "tokenspeed"):
        text = pages[f"models-{engine}.md"]
        headings = [line for line in text.splitlines() if line.startswith("#")]
        assert headings[0] == "# Model Recipes"
        # one ## per family, sorted case-insensitively, then the closing Tuning Order
        assert [h for h in headings if h.startswith("## ")] == [
            "## gpt-oss",
            "## Llama 3.1",
            "## MiniMax-M3",
            "## Qwen3",
            "## Tuning Order",
        ]
        # a short intro between the title and the first family
        intro = text.split("# Model Recipes\n", 1)[1].split("\n## ", 1)[0]
        assert 1 <= len([p for p in intro.split("\n\n") if p.strip()]) <= 3
    # MiniMax's mi355x profile has vLLM args/env only: a ### variant on the vLLM page, not on
    # tokenspeed's.
    assert "### mi355x (AMD)" in section(pages["models-vllm.md"], "## MiniMax-M3")
    assert "###" not in section(pages["models-tokenspeed.md"], "## MiniMax-M3")


def test_models_page_bash_blocks_round_trip_to_render_argv(pages):
    expected = {
        ("vllm", "## MiniMax-M3"): [("minimax-m3-eagle3", "b200"), ("minimax-m3-eagle3", "mi355x")],
        ("tokenspeed", "## MiniMax-M3"): [("minimax-m3-eagle3", "b200")],
        ("vllm", "## Llama 3.1"): [("llama3.1-8b-eagle3", "h200")],
        # qwen3-30b-a3b-eagle3 says `unsupported: tokenspeed` (Qwen3MoeForCausalLM captures no aux
        # states there): its section has the reason, no command
        ("tokenspeed", "## Qwen3"): [],
        # gpt-oss-120b-eagle3 says `unsupported: tokenspeed` (its draft's use_aux_hidden_state
        # false, which tokenspeed never reads): no command either
        ("tokenspeed", "## gpt-oss"): [],
    }
    for (engine, heading), variants in expected.items():
        blocks = bash_blocks(section(pages[f"models-{engine}.md"], heading))
        assert len(blocks) == len(variants)
        for block, (name, hw) in zip(blocks, variants, strict=True):
            r = render_command(name, engine, hardware=hw)
            env, argv = split_shell(block)
            assert (env, argv) == (r.env, r.argv)
            command = block.split("\n\n")[-1] if r.env else block
            lines = command.rstrip("\n").split("\n")
            # one flag per line with ` \` continuations; the last line has none
            assert all(line.endswith(" \\") for line in lines[:-1])
            assert not lines[-1].endswith("\\")
            assert all(line.startswith("  --") for line in lines[1:])
            assert shlex.split(unfold_continuations(command)) == r.argv


def test_models_page_tokenspeed_minimax_matches_seed_004(pages):
    # docs/engines/tokenspeed.md: lightseekorg/tokenspeed PR #837's command, without --disable-prefill-graph, overrides flat.
    (block,) = bash_blocks(section(pages["models-tokenspeed.md"], "## MiniMax-M3"))
    assert block.startswith(
        "tokenspeed serve nvidia/MiniMax-M3-NVFP4 \\\n  --tensor-parallel-size 4 \\\n"
    )
    assert "--disable-prefill-graph" not in block
    assert '  --hf-overrides \'{"use_index_cache": true, "index_topk_freq": 4}\'\n' in block


def test_models_page_notes_and_links(pages):
    text = section(pages["models-vllm.md"], "## Qwen3")
    notes = load_recipe("qwen3-30b-a3b-eagle3").get("notes")
    assert "Notes:\n\n" + "".join(f"- {n}\n" for n in notes) in text
    assert "[qwen3-30b-a3b-eagle3.md](qwen3-30b-a3b-eagle3.md)" in text
    # Qwen3 has no eval section: the link names serve and benchmark commands only
    assert "Serve and benchmark commands" in text
    assert "Serve, benchmark and accuracy commands" in section(
        pages["models-vllm.md"], "## Llama 3.1"
    )
    tuning = section(pages["models-tokenspeed.md"], "## Tuning Order")
    assert tuning.lstrip().startswith("1. ")
    assert "recipecli check TARGET DRAFT --engine tokenspeed" in tuning


def test_engine_selection(tmp_path):
    got = generate(
        collect_recipes(["minimax-m3-eagle3"]), tmp_path, DocsOptions(("tokenspeed",), "none")
    )
    assert list(got) == ["README.md", "minimax-m3-eagle3.md", "models-tokenspeed.md"]
    page = got["minimax-m3-eagle3.md"]
    assert "### tokenspeed" in page and "### vLLM" not in page and "vllm serve" not in page


# --------------------------------------------------------------------------- per-recipe page


def test_recipe_page_minimax(pages):
    text = pages["minimax-m3-eagle3.md"]
    assert text.splitlines()[2] == "# MiniMax-M3 + EAGLE3"
    assert "| `mi355x` | `amd/MiniMax-M3-MXFP4` | `Inferact/MiniMax-M3-EAGLE3` |" in text
    assert "| `b200` | `nvidia/MiniMax-M3-NVFP4` | `Inferact/MiniMax-M3-EAGLE3` |" in text
    # bundled metadata snapshots of both targets and the draft (issue #28 item 2): the offline
    # check runs, naming the bundled files (recipecli/data/{targets,drafts}/<org>__<name>...)
    assert "checkpoints not available offline" not in text
    assert "### Offline check" in text
    assert "bundled snapshot Inferact__MiniMax-M3-EAGLE3.snapshot.json.gz" in text
    # every hardware x engine section with serve, bench and eval, each the render output
    for hw in ("b200", "mi355x"):
        hw_text = section(text, f"## {hw} (" + ("NVIDIA)" if hw == "b200" else "AMD)"))
        for engine, title in (("vllm", "vLLM"), ("tokenspeed", "tokenspeed")):
            blocks = bash_blocks(section(hw_text, f"### {title}"))
            assert len(blocks) == 3
            for block, what in zip(blocks, ("serve", "bench", "eval"), strict=True):
                r = render_command("minimax-m3-eagle3", engine, hardware=hw, what=what)
                assert split_shell(block) == (r.env, r.argv)
    mi = section(section(text, "## mi355x (AMD)"), "### vLLM")
    assert "export VLLM_ROCM_QUICK_REDUCE_QUANTIZATION=INT4\n" in mi
    assert (
        "--model_args model=amd/MiniMax-M3-MXFP4,base_url=http://127.0.0.1:8010/v1/chat/completions,"
        in mi
    )
    assert "## Notes" in text


def test_recipe_page_llama_offline_check(pages):
    text = pages["llama3.1-8b-eagle3.md"]
    assert "### Offline check" in text
    assert (
        "| h200 | bundled snapshot llama3.1-8b-instruct.target.json | "
        "bundled snapshot eagle3-llama3.1-instruct-8b.draft.json |"
    ) in text
    # By hand from the bundled draft snapshot's config: no eagle_aux_hidden_state_layer_ids, and
    # the original release was trained on the default both engines capture (info); vLLM raises
    # max_position_embeddings 2048 to --max-model-len 8192 itself (info): vLLM ready, no warning.
    # tokenspeed get_config appends NextN to 'LlamaForCausalLM': LlamaForCausalLMNextN is not
    # registered (draft.arch_name error; the model stops there).
    assert "| h200 | vLLM | 1 | 8192 | ready | 0 | 0 |" in text
    assert "| h200 | tokenspeed | 1 | 8192 | **not ready** | 1 | 0 |" in text
    assert "Not served on tokenspeed: the published draft says" in text
    findings = [
        line for line in section(text, "### Offline check").splitlines() if line.startswith("- ")
    ]
    # SGLang 0.5.23 keeps 'LlamaForCausalLM' (configs/model_config.py _config_draft_model), a
    # target class, not an EAGLE3 draft class (draft.arch_name error); its length is the
    # recipe's --context-length 8192
    assert "| h200 | SGLang | 1 | 8192 | **not ready** | 1 | 0 |" in text
    assert [line.split(":", 1)[0] for line in findings] == [
        "- error (tokenspeed) `draft.arch_name`",
        "- error (SGLang) `draft.arch_name`",
    ]


def test_checkpoints_none_omits_check(tmp_path):
    got = generate(
        collect_recipes(["llama3.1-8b-eagle3"]), tmp_path, DocsOptions(checkpoints="none")
    )
    text = got["llama3.1-8b-eagle3.md"]
    assert "Offline check" not in text and "not available offline" not in text


def test_cache_mode_never_reaches_the_network(tmp_path, monkeypatch):
    import recipecli.checkpoint.hub as hub

    def no_network(*args, **kwargs):
        raise AssertionError("docs reached the Hub")

    monkeypatch.setattr(hub, "load_from_hub", no_network)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    # a pair recipecli ships no snapshot of, in an empty HF cache
    doc = yaml.safe_load(Path(load_recipe("qwen3-30b-a3b-eagle3").path).read_text())
    doc.update(target="example-org/not-bundled", draft="example-org/not-bundled-draft")
    doc.pop("hardware", None)
    doc.pop("default_hardware", None)
    path = tmp_path / "nb.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    text = recipe_page(load_recipe(str(path)), ("vllm",), out_dir=tmp_path, checkpoints="cache")
    assert (
        "Offline check: checkpoints not available offline "
        "(`example-org/not-bundled`, `example-org/not-bundled-draft`)."
    ) in text
    assert "HF_HUB_OFFLINE" not in os.environ  # never set: docs passes offline=True instead


def test_docs_passes_offline_down_and_leaves_the_environment_alone(tmp_path, monkeypatch):
    # the check section and rendering open checkpoints with offline=True (cache mode) while the
    # process environment keeps what the user set, even HF_HUB_OFFLINE=0
    import recipecli.checkpoint.hub as hub

    seen = []
    real = hub.load_repo

    def spy(repo_id, revision, **kwargs):
        seen.append((repo_id, kwargs.get("offline"), os.environ.get("HF_HUB_OFFLINE")))
        return real(repo_id, revision, **kwargs)

    def no_network(*args, **kwargs):
        raise AssertionError("docs reached the Hub")

    monkeypatch.setattr("recipecli.checkpoint.resolve.load_repo", spy)
    monkeypatch.setattr(hub, "load_from_hub", no_network)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    data = yaml.safe_load((REPO / "recipecli/data/recipes/llama3.1-8b-eagle3.yaml").read_text())
    data.update(name="uncached", target="someorg/target", draft="someorg/draft")
    data.pop("hardware", None)
    data.pop("default_hardware", None)
    path = tmp_path / "uncached.yaml"
    path.write_text(yaml.safe_dump(data))
    text = recipe_page(load_recipe(str(path)), ("vllm",), out_dir=tmp_path, checkpoints="cache")
    assert "not available offline" in text
    assert sorted(seen) == [("someorg/draft", True, "0"), ("someorg/target", True, "0")]


def test_user_recipe_values_are_data(tmp_path):
    data = yaml.safe_load((REPO / "recipecli/data/recipes/llama3.1-8b-eagle3.yaml").read_text())
    data.update(
        name="weird",
        title="Weird {{ 7*7 }} | pipe",
        family="{% raw %}Fam",
        description="Uses `backticks` and {{ 7*7 }}.",
    )
    data["engines"] = {"vllm": {"args": {"served-model-name": "a```b $HOME {{ x }}"}}}
    path = tmp_path / "recipes" / "weird.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(data))
    got = generate(
        collect_recipes([str(path.parent)]), tmp_path / "out", DocsOptions(("vllm",), "none")
    )
    page = got["weird.md"]
    assert "# Weird {{ 7*7 }} | pipe" in page
    assert "Uses `backticks` and {{ 7*7 }}." in page
    assert "| [Weird {{ 7*7 }} \\| pipe](weird.md) | {% raw %}Fam |" in got["README.md"]
    assert "| Recipe | `../recipes/weird.yaml` |" in page
    # the value holds a run of 3 backticks: the fence grows to 4 and the block still round-trips
    block = re.search(r"^````bash\n(.*?)^````$", page, flags=re.S | re.M).group(1)
    r = render_command(load_recipe(str(path)), "vllm")
    assert split_shell(block) == (r.env, r.argv)
    assert "a```b $HOME {{ x }}" in r.argv


def test_fence_and_code_helpers():
    assert fence("echo hi") == "```bash\necho hi\n```"
    assert fence("a ``` b\n") == "````bash\na ``` b\n````"
    assert code("x") == "`x`" and code("a`b") == "``a`b``" and code("`x") == "`` `x ``"


def test_results_section_from_bench_json(tmp_path):
    # The recipe schema has no `results` field yet: build the Recipe directly (see docs-command.md).
    examples = REPO / "docs" / "examples" / "report"
    data = dict(load_recipe("minimax-m3-eagle3").data)
    for name in ("baseline.json", "candidate.json"):  # results stay in the recipe's folder
        shutil.copyfile(examples / name, tmp_path / name)
    data["results"] = [
        {
            "title": "Fused EAGLE3 layer-0 RMSNorm (vLLM PR #47391)",
            "engine": "vllm",
            "hardware": "mi355x",
            "baseline": "baseline.json",
            "candidate": "candidate.json",
            "gpus": 4,
            "labels": ["Baseline", "This PR"],
        }
    ]
    recipe = Recipe(data=data, path=str(tmp_path / "m3.yaml"))
    (res,) = results_sections(recipe, "vllm")
    assert res["title"] == "Fused EAGLE3 layer-0 RMSNorm (vLLM PR #47391)"
    # vLLM PR #47391's table: +64.10% output throughput per GPU, 37.03% lower TPOT
    assert "| Output throughput / GPU | 212.514 tok/s | 348.736 tok/s | +64.10% |" in res["table"]
    assert "37.03% lower" in res["table"]
    assert results_sections(recipe, "tokenspeed") == []
    page = recipe_page(recipe, ("vllm",), out_dir=tmp_path, checkpoints="none")
    assert "## Measured results\n\n### Fused EAGLE3 layer-0 RMSNorm (vLLM PR #47391)\n" in page
    assert "2.56% higher" in page


# --------------------------------------------------------------------------- bad input


def test_missing_recipe_exit_2(tmp_path):
    missing = tmp_path / "missing.yaml"
    proc = run_cli("docs", str(missing), "-o", str(tmp_path / "o"))
    assert proc.returncode == 2
    assert str(missing) in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_empty_directory_exit_2(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run_cli("docs", str(empty), "-o", str(tmp_path / "o"))
    assert proc.returncode == 2 and str(empty) in proc.stderr and "no *.yaml" in proc.stderr


def test_duplicate_names_exit_2(tmp_path):
    src = (REPO / "recipecli/data/recipes/llama3.1-8b-eagle3.yaml").read_text()
    (tmp_path / "a.yaml").write_text(src)
    (tmp_path / "b.yaml").write_text(src)
    proc = run_cli("docs", str(tmp_path), "-o", str(tmp_path / "o"))
    assert proc.returncode == 2
    assert str(tmp_path / "a.yaml") in proc.stderr and str(tmp_path / "b.yaml") in proc.stderr


def test_invalid_recipe_exit_2_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "name: bad\ntarget: a/b\ndraft: c/d\nspeculative:\n  method: medusa\n  num_speculative_tokens: 3\n"
    )
    proc = run_cli("docs", str(bad), "-o", str(tmp_path / "o"))
    assert proc.returncode == 2 and f"{bad}:5" in proc.stderr


def test_nothing_given_exit_2():
    proc = run_cli("docs")
    assert proc.returncode == 2 and "--bundled" in proc.stderr


def test_docs_does_not_import_torch(tmp_path):
    code_ = (
        "import sys\nfrom click.testing import CliRunner\nfrom recipecli.cli import cli\n"
        f"r = CliRunner().invoke(cli, ['docs', '--bundled', '-o', {str(tmp_path)!r}])\n"
        "assert r.exit_code == 0, r.output\nprint('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code_], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_render_of_unknown_target_config_stays_offline(tmp_path, monkeypatch):
    # text_overrides need the target's config; an unknown target is not fetched from the Hub.
    import recipecli.checkpoint.hub as hub
    from recipecli.errors import RecipeError

    def no_network(*args, **kwargs):
        raise AssertionError("docs reached the Hub")

    monkeypatch.setattr(hub, "load_from_hub", no_network)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    data = yaml.safe_load((REPO / "recipecli/data/recipes/llama3.1-8b-eagle3.yaml").read_text())
    data.update(name="nocfg", target="someorg/unknown-model", text_overrides={"rope_theta": 1.0})
    path = tmp_path / "nocfg.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(RecipeError, match="someorg/unknown-model"):
        generate(collect_recipes([str(path)]), tmp_path / "o", DocsOptions(checkpoints="cache"))
    assert "HF_HUB_OFFLINE" not in os.environ  # never set


def test_templates_override(tmp_path):
    tdir = tmp_path / "tpl"
    tdir.mkdir()
    (tdir / "docs_index.md.j2").write_text(
        "{{ marker }}\n\n# My index\n{% for r in recipes %}- {{ r.page }}\n{% endfor %}"
    )
    got = generate(
        collect_recipes(["llama3.1-8b-eagle3"]), tmp_path, DocsOptions(("vllm",), "none", str(tdir))
    )
    assert got["README.md"] == GENERATED_MARKER + "\n\n# My index\n- llama3.1-8b-eagle3.md\n"
    assert got["models-vllm.md"].splitlines()[2] == "# Model Recipes"  # others stay bundled
