"""Bench: ``--set`` reaches bench flags, concurrency sweeps, workload recording, ``diff --what all``.

What ``vllm bench serve`` saves (vllm v0.33.0 ``vllm/benchmarks/serve.py`` ``main``): ``backend``,
``label``, ``model_id``, ``tokenizer_id``, ``num_prompts``, each ``--metadata KEY=VALUE`` as a
top-level string, ``request_rate``, ``burstiness``, ``max_concurrency``; the file is
``--result-filename`` when given (``compute_result_filename``). Dataset settings such as
``--random-input-len`` are not saved unless passed as metadata.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from recipecli.diff import diff_all
from recipecli.errors import UsageError
from recipecli.recipes.render import render_all, render_command


def flag(argv, name):
    return argv[argv.index(name) + 1]


def metadata(argv):
    i = argv.index("--metadata")
    return dict(item.split("=", 1) for item in argv[i + 1 :])


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "recipecli", *args], capture_output=True, text=True
    )


def test_set_reaches_bench_fields():
    # llama3.1-8b-eagle3's bench: num_prompts 160, max_concurrency 16 (its YAML)
    r = render_command(
        "llama3.1-8b-eagle3",
        "vllm",
        what="bench",
        sets=["num_prompts=100", "bench.request_rate=2.5", "random_input_len=4096", "bench.seed=7"],
    )
    assert flag(r.argv, "--num-prompts") == "100"
    assert flag(r.argv, "--request-rate") == "2.5"
    assert flag(r.argv, "--random-input-len") == "4096"
    assert flag(r.argv, "--seed") == "7"
    assert r.argv.count("--num-prompts") == 1
    # the serve command is unchanged by bench settings; `seed` alone means vllm serve --seed
    serve = render_command("llama3.1-8b-eagle3", "vllm", sets=["num_prompts=100", "seed=3"])
    assert "--num-prompts" not in serve.argv and flag(serve.argv, "--seed") == "3"
    assert metadata(r.argv)["random_input_len"] == "4096"


@pytest.mark.parametrize(
    "assignment, needle",
    [
        (
            "num_prompts=many",
            "--num-prompts (vllm bench serve 0.33.0) takes an integer, got 'many'",
        ),
        ("num_prompts=0", "0 is below the minimum 1"),
        ("max_concurrency=1,x", "takes an integer, got 'x'"),
        ("request_rate=0", "0 must be above 0"),
        ("bench.no_such=1", "not a vllm bench serve flag"),
        ("num_promts=1", "did you mean 'num_prompts'"),
    ],
)
def test_bench_values_typed(assignment, needle):
    with pytest.raises(UsageError) as exc:
        render_command("llama3.1-8b-eagle3", "vllm", what="bench", sets=[assignment])
    assert needle in exc.value.one_line()


def test_rendered_bench_records_its_workload():
    r = render_command("llama3.1-8b-eagle3", "vllm", what="bench")
    # label RECIPE-ENGINE-HW; the file names the concurrency (16 in the recipe)
    assert flag(r.argv, "--label") == "llama3.1-8b-eagle3-vllm-h200"
    assert flag(r.argv, "--result-filename") == "llama3.1-8b-eagle3-vllm-h200-c16.json"
    meta = metadata(r.argv)
    assert meta == {
        "recipe": "llama3.1-8b-eagle3",
        "engine": "vllm",
        "hardware": "h200",
        "dataset_name": "random",
        "random_input_len": "1024",
        "random_output_len": "512",
        "ignore_eos": "true",
        "temperature": "0",
    }
    # keys vLLM saves itself are not repeated as metadata
    for key in ("num_prompts", "max_concurrency", "request_rate", "backend"):
        assert key not in meta
    # what the user gives wins
    r = render_command(
        "llama3.1-8b-eagle3",
        "vllm",
        what="bench",
        sets=["label=mine", "result_filename=out.json", 'bench.metadata=["k=v"]'],
    )
    assert flag(r.argv, "--label") == "mine" and flag(r.argv, "--result-filename") == "out.json"
    assert metadata(r.argv) == {"k": "v"}


def test_concurrency_sweep_renders_one_bench_per_value():
    out = render_all("llama3.1-8b-eagle3", "vllm", what="all", sets=["max_concurrency=1,4,16,64"])
    assert [r.what for r in out] == ["serve", "bench", "bench", "bench", "bench", "eval"]
    benches = [r for r in out if r.what == "bench"]
    assert [flag(r.argv, "--max-concurrency") for r in benches] == ["1", "4", "16", "64"]
    assert [flag(r.argv, "--result-filename") for r in benches] == [
        f"llama3.1-8b-eagle3-vllm-h200-c{n}.json" for n in (1, 4, 16, 64)
    ]
    assert [r.point for r in benches] == [f"max_concurrency={n}" for n in (1, 4, 16, 64)]
    # the other commands are unaffected
    assert "--max-concurrency" not in out[0].argv


def test_sweep_cli_shell_and_json():
    proc = cli(
        "render",
        "llama3.1-8b-eagle3",
        "--engine",
        "vllm",
        "--what",
        "bench",
        "--set",
        "max_concurrency=2,8",
    )
    assert proc.returncode == 0
    assert "# bench (vllm, h200) max_concurrency=2\n" in proc.stdout
    assert "# bench (vllm, h200) max_concurrency=8\n" in proc.stdout
    proc = cli(
        "render",
        "llama3.1-8b-eagle3",
        "--engine",
        "vllm",
        "--what",
        "bench",
        "--set",
        "max_concurrency=2,8",
        "--format",
        "argv-json",
    )
    docs = json.loads(proc.stdout)
    assert [d["point"] for d in docs] == ["max_concurrency=2", "max_concurrency=8"]


def test_a_sweep_is_one_command_too_many_for_render_command_and_diff():
    with pytest.raises(UsageError, match="is a sweep"):
        render_command("llama3.1-8b-eagle3", "vllm", what="bench", sets=["max_concurrency=1,2"])
    proc = cli("diff", "llama3.1-8b-eagle3", "--what", "bench", "--vs-set", "max_concurrency=1,2")
    assert proc.returncode == 2 and "is a sweep" in proc.stderr


def test_diff_what_all():
    # minimax vllm vs tokenspeed: serve differs, bench differs only in the recorded engine
    d = diff_all("minimax-m3-eagle3", engine="vllm", vs_engine="tokenspeed")
    assert [x.a.what for x in d.diffs] == ["serve", "bench", "eval"]
    assert not d.identical
    bench = d.diffs[1]
    assert {c.name for c in bench.changes} == {"--label", "--result-filename", "--metadata"}
    meta = next(c for c in bench.changes if c.name == "--metadata")
    assert [(k.op, k.path, k.a, k.b) for k in meta.keys] == [
        ("changed", ("engine",), "vllm", "tokenspeed")
    ]
    assert d.diffs[2].identical  # lm-eval talks to the endpoint the same way
    same = diff_all("minimax-m3-eagle3")
    assert same.identical
    proc = cli("diff", "minimax-m3-eagle3", "--what", "all")
    assert proc.returncode == 0 and proc.stdout.count("identical (") == 3
    proc = cli("diff", "minimax-m3-eagle3", "--vs-engine", "tokenspeed", "--what", "all", "--json")
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert doc["what"] == "all" and doc["identical"] is False
    assert [x["a"]["what"] for x in doc["diffs"]] == ["serve", "bench", "eval"]


def test_diff_all_section_only_one_side_has(tmp_path):
    import yaml

    from recipecli.recipes.loader import bundled_dir

    data = yaml.safe_load((bundled_dir() / "llama3.1-8b-eagle3.yaml").read_text())
    data.pop("eval")
    data["name"] = "no-eval"
    path = tmp_path / "no-eval.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    d = diff_all("llama3.1-8b-eagle3", str(path))
    last = d.diffs[-1]
    assert last.a.what == "eval" and [(c.kind, c.op, c.name) for c in last.changes] == [
        ("command", "removed", "eval")
    ]


def test_bench_saves_its_result_once():
    # vllm v0.33.0 vllm/benchmarks/serve.py main writes the result file only under --save-result
    # or --append-result; llama3.1-8b-eagle3's bench already says save_result: true (its YAML),
    # so the flag appears once, where the recipe put it (before --label)
    r = render_command("llama3.1-8b-eagle3", "vllm", what="bench")
    assert r.argv.count("--save-result") == 1
    assert r.argv.index("--save-result") < r.argv.index("--label")
    off = render_command("llama3.1-8b-eagle3", "vllm", what="bench", sets=["save_result=false"])
    assert "--save-result" not in off.argv
