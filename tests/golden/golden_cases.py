"""The cases of the golden-output corpus: one :class:`Case` per ``recipecli`` invocation.

Cases run in list order, in the work directory of :mod:`golden_inputs` (some read what an earlier
case wrote: the ``docs --check`` cases check the pages a ``docs`` case wrote, ``convert/force``
replaces an earlier output). Every other output path is unique to its case. The help, ``check``
and ``inspect`` cases are in :mod:`golden_cases_check`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from itertools import product
from pathlib import Path

from golden_cases_check import (
    ENGINES,
    GOOD,
    GOOD_HW,
    RECIPES,
    Case,
    check_example_cases,
    check_fixture_cases,
    check_recipe_cases,
    check_snapshot_cases,
    check_tiny_cases,
    cmd,
    help_cases,
    inspect_cases,
)
from golden_recipes import BROKEN

__all__ = ["Case", "all_cases"]


def render_cases() -> Iterator[Case]:
    """Every recipe x hardware x engine x what x format; defaults; --force; --set; refusals."""
    recipes = [(r, hw) for r, hws in RECIPES.items() for hw in hws] + [(GOOD, h) for h in GOOD_HW]
    whats, formats = ("serve", "bench", "eval", "all"), ("shell", "argv-json", "vllm-config")
    for (recipe, hw), engine, what, fmt in product(recipes, ENGINES, whats, formats):
        argv = ("render", recipe, "--engine", engine, "--hardware", hw, "--what", what)
        name = f"render/{Path(recipe).stem}/{hw}/{engine}/{what}/{fmt}"
        yield Case(name, (*argv, "--format", fmt))
    for recipe, engine in product([*RECIPES, GOOD], ENGINES):
        yield cmd(
            f"render/{Path(recipe).stem}/default/{engine}", "render", recipe, "--engine", engine
        )
        yield cmd(
            f"render/{Path(recipe).stem}/force/{engine}",
            "render",
            recipe,
            "--engine",
            engine,
            "--what",
            "all",
            "--force",
        )
    yield from _render_set_cases()
    yield from _render_refusal_cases()


def _render_refusal_cases() -> Iterator[Case]:
    """Broken recipes, missing or unknown arguments, bad --templates / --target-config."""
    for stem in BROKEN:
        yield cmd(f"render/broken/{stem}", "render", f"recipes/{stem}.yaml", "--engine", "vllm")
    yield cmd("render/list", "render", "--list")
    yield cmd("render/no-engine", "render", "llama3.1-8b-eagle3")
    yield cmd("render/no-recipe", "render", "--engine", "vllm")
    yield cmd("render/unknown-recipe", "render", "nope", "--engine", "vllm")
    yield cmd(
        "render/unknown-hw", "render", "llama3.1-8b-eagle3", "--engine", "vllm", "--hardware", "tpu"
    )
    yield cmd(
        "render/missing-templates",
        "render",
        "llama3.1-8b-eagle3",
        "--engine",
        "vllm",
        "--templates",
        "out/no-templates",
    )
    yield cmd(
        "render/target-config",
        "render",
        "minimax-m3-eagle3",
        "--engine",
        "vllm",
        "--target-config",
        "fx/t-m3-nvfp4",
    )
    yield cmd(
        "render/target-config-flat",
        "render",
        "minimax-m3-eagle3",
        "--engine",
        "vllm",
        "--target-config",
        "fx/t-m3",
    )
    yield cmd(
        "render/target-config-missing",
        "render",
        "minimax-m3-eagle3",
        "--engine",
        "vllm",
        "--target-config",
        "fx/nothing-here",
    )


#: ``--set`` assignments rendered on (recipe, engine): good values and refused ones.
SETS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("llama3.1-8b-eagle3", "vllm", ("max_model_len=65536",)),
    ("llama3.1-8b-eagle3", "vllm", ("speculative.num_speculative_tokens=5",)),
    ("llama3.1-8b-eagle3", "vllm", ("enforce-eager=true", "served-model-name=golden")),
    ("llama3.1-8b-eagle3", "vllm", ("enforce-eager=true", "enforce-eager=false")),
    ("llama3.1-8b-eagle3", "vllm", ("num_prompts=100", "max_concurrency=1,4,16")),
    ("llama3.1-8b-eagle3", "vllm", ("gpu-memory-utilization=0.5", "seed=-1")),
    ("llama3.1-8b-eagle3", "vllm", ("target=./local-target", "draft=./local-draft")),
    ("llama3.1-8b-eagle3", "vllm", ('hf-overrides={"rope_theta": 1000000}',)),
    ("llama3.1-8b-eagle3", "vllm", ("max-num-seqs=0x10",)),
    ("llama3.1-8b-eagle3", "vllm", ("gpu-memory-utilization=1.5",)),
    ("llama3.1-8b-eagle3", "vllm", ("compilation-config={level: 3}",)),
    ("llama3.1-8b-eagle3", "vllm", ("language-model-only=yes",)),
    ("llama3.1-8b-eagle3", "vllm", ("speculative.method=medusa",)),
    ("llama3.1-8b-eagle3", "vllm", ("no-such-flag=1",)),
    ("llama3.1-8b-eagle3", "vllm", ("max_model_len",)),
    ("llama3.1-8b-eagle3", "vllm", ("max-num-seqs=",)),
    ("minimax-m3-eagle3", "vllm", ("text_overrides.index_topk_freq=8",)),
    ("minimax-m3-eagle3", "vllm", ('hf-overrides={"max_model_len": 4}',)),
    ("minimax-m3-eagle3", "tokenspeed", ("max-model-len=65536", "max-num-seqs=8")),
    ("minimax-m3-eagle3", "tokenspeed", ("text_overrides.use_index_cache=false",)),
    ("gpt-oss-120b-eagle3", "sglang", ("max_model_len=16384",)),
    ("gpt-oss-120b-eagle3", "sglang", ("speculative.num_speculative_tokens=2",)),
    ("gpt-oss-120b-eagle3", "tokenspeed", ("tensor_parallel_size=8",)),
    ("qwen3-30b-a3b-eagle3", "vllm", ("port=9000", "max_num_seqs=4")),
)


def _render_set_cases() -> Iterator[Case]:
    for i, (recipe, engine, sets) in enumerate(SETS):
        argv = ["render", recipe, "--engine", engine, "--what", "all"]
        for assignment in sets:
            argv += ["--set", assignment]
        yield Case(f"render/set/{i:02d}-{recipe}-{engine}", tuple(argv))
    yield cmd(
        "render/set/vllm-config",
        "render",
        "minimax-m3-eagle3",
        "--engine",
        "vllm",
        "--format",
        "vllm-config",
        "--set",
        "max_model_len=65536",
    )


def lint_cases() -> Iterator[Case]:
    """Every bundled recipe, the hand-written ones (text and JSON), directories, refusals."""
    names = [*RECIPES, GOOD, *(f"recipes/{stem}.yaml" for stem in BROKEN)]
    for recipe, fmt in product(names, ("text", "json")):
        extra = ("--json",) if fmt == "json" else ()
        yield Case(f"lint/{Path(recipe).stem}/{fmt}", ("lint", recipe, *extra))
    yield cmd("lint/all-bundled", "lint", *RECIPES)
    yield cmd("lint/all-bundled/strict", "lint", "--strict", *RECIPES)
    yield cmd("lint/all-bundled/json", "lint", "--json", *RECIPES)
    yield cmd("lint/override-unknown/strict", "lint", "--strict", "recipes/override-unknown.yaml")
    yield cmd("lint/dir", "lint", "recipes/dir")
    yield cmd("lint/dir/json", "lint", "recipes/dir", "--json")
    yield cmd("lint/empty-dir", "lint", "recipes/empty")
    yield cmd("lint/missing", "lint", "recipes/nothing.yaml")
    yield cmd("lint/unknown-name", "lint", "nope")
    yield cmd("lint/none", "lint")


def _touch_stale(work: Path) -> None:
    page = work / "out" / "docs-all-bundled" / "README.md"
    page.write_text(page.read_text() + "\nedited by hand\n")


def _foreign_file(work: Path) -> None:
    (work / "out" / "docs-foreign").mkdir(parents=True)
    (work / "out" / "docs-foreign" / "README.md").write_text("not generated\n")


def docs_cases() -> Iterator[Case]:
    """Recipe pages per engine and checkpoint policy, engine pages, --check and --json."""
    for engine, ckpt in product(("all", *ENGINES), ("bundled", "none")):
        out = f"out/docs-{engine}-{ckpt}"
        argv = ("docs", "--bundled", "-o", out, "--engine", engine, "--checkpoints", ckpt)
        yield Case(f"docs/bundled/{engine}/{ckpt}", argv, (out,))
    out = "out/docs-all-cache"
    yield cmd("docs/bundled/all/cache", "docs", "--bundled", "-o", out, files=(out,))
    yield cmd("docs/engines", "docs", "--engines", "-o", "out/engines", files=("out/engines",))
    yield cmd(
        "docs/engines/vllm",
        "docs",
        "--engines",
        "-o",
        "out/engines-vllm",
        "--engine",
        "vllm",
        files=("out/engines-vllm",),
    )
    yield cmd("docs/engines/check-fresh", "docs", "--engines", "-o", "out/engines", "--check")
    out = "out/docs-files"
    yield cmd(
        "docs/files",
        "docs",
        GOOD,
        "recipes/dir",
        "-o",
        out,
        "--checkpoints",
        "bundled",
        "--json",
        files=(out,),
    )
    yield cmd("docs/check-missing", "docs", "--bundled", "-o", "out/docs-all-bundled-x", "--check")
    bundled = ("docs", "--bundled", "-o", "out/docs-all-bundled", "--checkpoints", "bundled")
    yield cmd("docs/check-fresh", *bundled, "--check")
    yield cmd("docs/check-fresh/json", *bundled, "--check", "--json")
    yield Case("docs/check-stale", (*bundled, "--check"), setup=_touch_stale)
    yield cmd("docs/rewrite-stale", *bundled, "--json", files=("out/docs-all-bundled",))
    yield cmd("docs/drop-engine", *bundled, "--engine", "vllm", files=("out/docs-all-bundled",))
    yield Case(
        "docs/foreign-file", ("docs", "--bundled", "-o", "out/docs-foreign"), setup=_foreign_file
    )
    yield cmd("docs/no-parent", "docs", "--bundled", "-o", "out/none/docs")
    yield cmd("docs/nothing", "docs", "-o", "out/docs-nothing")
    yield cmd("docs/broken-recipe", "docs", "recipes/yaml-invalid.yaml", "-o", "out/docs-broken")


#: ``diff`` invocations: name -> argv after ``diff``.
DIFFS: dict[str, tuple[str, ...]] = {
    "same": ("llama3.1-8b-eagle3",),
    "same-json": ("llama3.1-8b-eagle3", "--json"),
    "m3-hw": ("minimax-m3-eagle3", "--hardware", "b200", "--vs-hardware", "mi355x"),
    "m3-hw-all": ("minimax-m3-eagle3", "--vs-hardware", "mi355x", "--what", "all"),
    "m3-hw-json": ("minimax-m3-eagle3", "--vs-hardware", "mi355x", "--json"),
    "m3-engines": ("minimax-m3-eagle3", "--engine", "vllm", "--vs-engine", "tokenspeed"),
    "m3-engines-all": ("minimax-m3-eagle3", "--vs-engine", "tokenspeed", "--what", "all"),
    "m3-engines-json": ("minimax-m3-eagle3", "--vs-engine", "tokenspeed", "--json"),
    "m3-set": ("minimax-m3-eagle3", "--vs-set", "max_model_len=65536"),
    "m3-set-both": ("minimax-m3-eagle3", "--set", "max-num-seqs=8", "--vs-set", "max-num-seqs=16"),
    "m3-overrides": ("minimax-m3-eagle3", "--vs-set", "text_overrides.index_topk_freq=8"),
    "llama-qwen": ("llama3.1-8b-eagle3", "qwen3-30b-a3b-eagle3"),
    "llama-qwen-bench": ("llama3.1-8b-eagle3", "qwen3-30b-a3b-eagle3", "--what", "bench"),
    "llama-qwen-json": ("llama3.1-8b-eagle3", "qwen3-30b-a3b-eagle3", "--what", "all", "--json"),
    "gptoss-engines": ("gpt-oss-120b-eagle3", "--engine", "tokenspeed", "--vs-engine", "sglang"),
    "gptoss-eval": ("gpt-oss-120b-eagle3", "--vs-engine", "sglang", "--what", "eval"),
    "good-llama": (GOOD, "llama3.1-8b-eagle3", "--what", "all"),
    "good-hw": (GOOD, "--vs-hardware", "mi300x", "--what", "all"),
    "good-engines": (GOOD, "--engine", "sglang", "--vs-engine", "tokenspeed", "--json"),
    "bench-set": ("llama3.1-8b-eagle3", "--what", "bench", "--vs-set", "num_prompts=10"),
    "unknown": ("nope",),
    "unsupported": ("llama3.1-8b-eagle3", "--vs-engine", "tokenspeed"),
    "bad-hw": ("minimax-m3-eagle3", "--vs-hardware", "tpu"),
    "bad-set": ("minimax-m3-eagle3", "--vs-set", "max-num-seqs=abc"),
}


def diff_cases() -> Iterator[Case]:
    """Recipes, hardware profiles, engines and overrides compared; refusals."""
    for name, argv in DIFFS.items():
        yield Case(f"diff/{name}", ("diff", *argv))


_BUNDLED = "bench/bundled/minimax-m3-eagle3"
_PAIR = (f"{_BUNDLED}/baseline.json", f"{_BUNDLED}/candidate.json")


def _report_runs() -> dict[str, tuple[str, ...]]:
    """``report`` invocations: name -> argv after ``report``."""
    b, pair = _BUNDLED, _PAIR
    ev = f"{b}/candidate_lm_eval_gsm8k.json"
    reps = (
        "-a",
        pair[0],
        "-a",
        "bench/base-2.json",
        "-a",
        "bench/base-3.json",
        "-b",
        pair[1],
        "-b",
        "bench/cand-2.json",
        "-b",
        "bench/cand-3.json",
    )
    runs: dict[str, tuple[str, ...]] = {
        "bundled": pair,
        "bundled-gpus": (*pair, "--gpus", "4"),
        "bundled-json": (*pair, "--gpus", "4", "--json"),
        "bundled-format-json": (*pair, "--format", "json"),
        "bundled-labels": (*pair, "--labels", "Baseline,Fused norm", "--eval-b", ev),
        "bundled-evals": (*pair, "--eval-a", "bench/eval-base.json", "--eval-b", ev, "--gpus", "4"),
        "examples": (
            "bench/examples/baseline.json",
            "bench/examples/candidate.json",
            "--gpus",
            "4",
            "--eval-b",
            "bench/examples/candidate_lm_eval_gsm8k.json",
        ),
        "swapped": (pair[1], pair[0]),
        "repeats": reps,
        "repeats-json": (*reps, "--json", "--gpus", "4"),
        "repeats-glob": ("-a", "bench/base-*.json", "-b", "bench/cand-[23].json"),
        "failed": (pair[0], "bench/cand-failed.json"),
        "workload": (pair[0], "bench/cand-workload.json"),
        "workload-allowed": (pair[0], "bench/cand-workload.json", "--allow-different-workloads"),
        "zero-duration": (pair[0], "bench/cand-zero.json"),
        "no-spec": (pair[0], "bench/cand-nospec.json"),
        "broken": (pair[0], "bench/broken.json"),
        "missing": (pair[0], "bench/nothing.json"),
        "one-file": (pair[0],),
        "none": (),
        "bad-labels": (*pair, "--labels", "only-one"),
        "mixed": (*pair, "-a", "bench/base-2.json"),
    }
    return runs


def report_cases() -> Iterator[Case]:
    """Bundled and example results, repeated runs, failures, workloads, -o, refusals."""
    pair = _PAIR
    for name, argv in _report_runs().items():
        yield Case(f"report/{name}", ("report", *argv))
    for fmt in ("md", "json"):
        out = f"out/report.{fmt}"
        yield cmd(f"report/output-{fmt}", "report", *pair, "--format", fmt, "-o", out, files=(out,))
    yield cmd(
        "report/output-failed",
        "report",
        pair[0],
        "bench/cand-failed.json",
        "-o",
        "out/report-failed.md",
        files=("out/report-failed.md",),
    )
    yield cmd("report/output-no-dir", "report", *pair, "-o", "out/no/such/report.md")


#: ``convert`` invocations: name -> (draft variant, argv after ``DRAFT OUT``).
CONVERTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "b-spec": ("base-b", ("--to", "speculators", "--norm-before-residual", "false")),
    "b-spec-target": ("base-b", ("--to", "speculators", "--norm-before-residual", "true")),
    "b-spec-json": ("base-b", ("--to", "speculators", "--norm-before-residual", "false", "--json")),
    "b-spec-no-nbr": (
        "base-b",
        (
            "--to",
            "speculators",
        ),
    ),
    "b-eagle3": (
        "base-b",
        (
            "--to",
            "eagle3",
        ),
    ),
    "b-eagle3-fp16": ("base-b", ("--to", "eagle3", "--dtype", "fp16")),
    "b-eagle3-shards": ("base-b", ("--to", "eagle3", "--max-shard-size", "20KB")),
    "b-eagle3-bad-shard": ("base-b", ("--to", "eagle3", "--max-shard-size", "lots")),
    "d-eagle3": (
        "fmt-d",
        (
            "--to",
            "eagle3",
        ),
    ),
    "d-eagle3-json": ("fmt-d", ("--to", "eagle3", "--json")),
    "d-eagle3-drop-embed": ("fmt-d", ("--to", "eagle3", "--embed", "drop")),
    "d-spec": (
        "fmt-d",
        (
            "--to",
            "speculators",
        ),
    ),
    "d-eagle3-bf16": ("fmt-d", ("--to", "eagle3", "--dtype", "bf16", "--json")),
    "a-spec": ("fmt-a", ("--to", "speculators", "--norm-before-residual", "false")),
    "a-eagle3": (
        "fmt-a",
        (
            "--to",
            "eagle3",
        ),
    ),
    "c-spec": ("fmt-c", ("--to", "speculators", "--norm-before-residual", "false")),
    "c-eagle3": ("fmt-c", ("--to", "eagle3", "--json")),
    "f-eagle3": (
        "fmt-f",
        (
            "--to",
            "eagle3",
        ),
    ),
    "nebius-eagle3": (
        "fmt-nebius",
        (
            "--to",
            "eagle3",
        ),
    ),
    "fc-norm-spec": ("fc-norm", ("--to", "speculators", "--norm-before-residual", "false")),
    "fc-norm-eagle3": (
        "fc-norm",
        (
            "--to",
            "eagle3",
        ),
    ),
    "aux-top-spec": ("aux-top", ("--to", "speculators", "--norm-before-residual", "false")),
    "aux-ids": (
        "base-b",
        (
            "--to",
            "speculators",
            "--norm-before-residual",
            "false",
            "--aux-ids",
            "1,3,5",
            "--aux-id-convention",
            "layer-output",
        ),
    ),
    "aux-ids-no-convention": ("base-b", ("--to", "eagle3", "--aux-ids", "1,3,5")),
    "heads6-eagle3": (
        "heads6",
        (
            "--to",
            "eagle3",
        ),
    ),
    "no-d2t-eagle3": (
        "no-d2t",
        (
            "--to",
            "eagle3",
        ),
    ),
    "not-eagle": (
        "not-eagle",
        (
            "--to",
            "eagle3",
        ),
    ),
}


def convert_cases() -> Iterator[Case]:
    """Tiny drafts to every --to format (with the tiny target, so the verifier and the post-write
    check run), options, refusals; the output's config.json and tensor table are recorded."""
    for name, (variant, opts) in CONVERTS.items():
        out = f"out/convert-{name}"
        draft, target = f"tiny/{variant}/draft", f"tiny/{variant}/target"
        argv = ("convert", draft, out, *opts, "--target", target)
        yield Case(f"convert/{name}", argv, (out,))
    b = "tiny/base-b"
    yield cmd(
        "convert/verifier-only",
        "convert",
        f"{b}/draft",
        "out/convert-verifier",
        "--to",
        "speculators",
        "--norm-before-residual",
        "false",
        "--verifier",
        "tiny/target",
    )
    yield cmd(
        "convert/no-target",
        "convert",
        f"{b}/draft",
        "out/convert-nt",
        "--to",
        "eagle3",
        files=("out/convert-nt",),
    )
    yield cmd("convert/exists", "convert", f"{b}/draft", "out/convert-b-eagle3", "--to", "eagle3")
    yield cmd(
        "convert/force",
        "convert",
        f"{b}/draft",
        "out/convert-b-eagle3",
        "--to",
        "eagle3",
        "--force",
        "--dtype",
        "fp16",
        files=("out/convert-b-eagle3",),
    )
    yield cmd("convert/into-draft", "convert", f"{b}/draft", f"{b}/draft/out", "--to", "eagle3")
    yield cmd("convert/missing", "convert", "tiny/nothing", "out/convert-missing", "--to", "eagle3")
    yield cmd("convert/no-to", "convert", f"{b}/draft", "out/convert-no-to")


def all_cases() -> list[Case]:
    """Every case, in run order (names unique)."""
    groups = (
        help_cases,
        check_example_cases,
        check_recipe_cases,
        check_snapshot_cases,
        check_fixture_cases,
        check_tiny_cases,
        inspect_cases,
        render_cases,
        lint_cases,
        docs_cases,
        diff_cases,
        report_cases,
        convert_cases,
    )
    cases = [case for group in groups for case in group()]
    dupes = sorted(n for n, k in Counter(c.name for c in cases).items() if k > 1)
    if dupes:
        raise ValueError(f"duplicate case names: {dupes[:5]}")
    return cases
