"""``--set`` values are typed by the flag they set, for every flag type (catalog ``type``).

Types come from vLLM v0.33.0's own argument definitions (``vllm/engine/arg_utils.py``
``_compute_kwargs``: ``served_model_name: str | list[str] | None`` -> text, ``nargs="+"``;
``max_num_seqs: int``; ``gpu_memory_utilization: float``; ``compilation_config`` a config class
-> JSON; ``enforce_eager: bool`` -> switch; ``dtype`` a Literal -> choices), from
``vllm/benchmarks/serve.py`` (``--max-concurrency type=int``, ``--request-rate type=float``) and
from tokenspeed f4d8ec6e ``server_args.py`` (``--max-prefill-tokens type=int``).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from recipecli.errors import UsageError
from recipecli.recipes.render import format_shell, render_command, split_shell

LOOK_ALIKES = [
    "no",
    "on",
    "off",
    "yes",
    "true",
    "null",
    "~",
    "0x10",
    "0o17",
    "1e3",
    "2026-01-01",
    "12:30:00",
    "[a, b]",
    "{a: 1}",
    "a: b",
    "- x",
    "#x",
    "line1\nline2",
    "tab\there",
    " padded ",
    "é漢🙂",
    "'quoted'",
    '"double"',
    "$HOME `id`",
]


def flag(argv, name):
    return argv[argv.index(name) + 1]


@pytest.mark.parametrize("text", LOOK_ALIKES)
@pytest.mark.parametrize(
    "name", ["served-model-name", "served_model_name", "serve.served_model_name"]
)
def test_string_serve_field_takes_text_verbatim(name, text):
    r = render_command("llama3.1-8b-eagle3", "vllm", sets=[f"{name}={text}"])
    assert flag(r.argv, "--served-model-name") == text
    # and the shell text gives the same argv back
    assert split_shell(format_shell(r.env, r.argv))[1] == r.argv


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_string_catalog_flag_takes_text_verbatim(text):
    # --tool-call-parser: BaseFrontendArgs.tool_call_parser: str | None
    r = render_command("llama3.1-8b-eagle3", "vllm", sets=[f"tool-call-parser={text}"])
    assert flag(r.argv, "--tool-call-parser") == text


def test_string_bench_flag_takes_text_verbatim():
    r = render_command("llama3.1-8b-eagle3", "vllm", what="bench", sets=["label=2026-01-01"])
    assert flag(r.argv, "--label") == "2026-01-01"


def test_done_when_served_model_name_no_cli():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "recipecli",
            "render",
            "minimax-m3-eagle3",
            "--engine",
            "vllm",
            "--set",
            "served-model-name=no",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "\n  --served-model-name no\n" in out or "\n  --served-model-name no \\\n" in out


@pytest.mark.parametrize(
    "assignment, flag_name, want",
    [
        ("max-num-seqs=16", "--max-num-seqs", "16"),
        ("max-num-seqs=+16", "--max-num-seqs", "16"),
        ("max_num_seqs=007", "--max-num-seqs", "7"),
        ("seed=-1", "--seed", "-1"),
        ("gpu-memory-utilization=0.9", "--gpu-memory-utilization", "0.9"),
        ("gpu-memory-utilization=1e-1", "--gpu-memory-utilization", "0.1"),
        ("gpu_memory_utilization=1", "--gpu-memory-utilization", "1"),
        ("dtype=half", "--dtype", "half"),
    ],
)
def test_numbers_and_choices_parsed(assignment, flag_name, want):
    r = render_command("llama3.1-8b-eagle3", "vllm", sets=[assignment])
    assert flag(r.argv, flag_name) == want


@pytest.mark.parametrize(
    "assignment, needle",
    [
        # integers: only [+-]digits (argparse's int() would refuse the rest too)
        (
            "max-num-seqs=0x10",
            "--set max-num-seqs='0x10': serve.max_num_seqs (--max-num-seqs) takes an integer, got '0x10'",
        ),
        (
            "max-num-batched-tokens=0x10",
            "--max-num-batched-tokens (vllm 0.33.0) takes an integer, got '0x10'",
        ),
        ("max-num-batched-tokens=1e3", "takes an integer, got '1e3'"),
        ("max-num-batched-tokens=16.0", "takes an integer, got '16.0'"),
        ("max-num-batched-tokens=no", "takes an integer, got 'no'"),
        ("max-num-seqs=0", "0 is below the minimum 1"),
        ("tensor-parallel-size=-4", "-4 is below the minimum 1"),
        # numbers
        ("gpu-memory-utilization=nan", "takes a number, got 'nan'"),
        ("gpu-memory-utilization=abc", "takes a number, got 'abc'"),
        ("gpu-memory-utilization=1.5", "1.5 is above the maximum 1"),
        # JSON
        (
            "compilation-config={level: 3}",
            "--compilation-config (vllm 0.33.0) takes JSON, got '{level: 3}'",
        ),
        ("hf-overrides=[1]", "--hf-overrides takes a JSON object"),
        # switches
        (
            "language-model-only=yes",
            "--language-model-only (vllm 0.33.0) takes true or false (a switch), got 'yes'",
        ),
        ("language-model-only=1", "got '1'"),
        ("enforce-eager=on", "serve.enforce_eager (--enforce-eager) takes true or false, got 'on'"),
        (
            "trust_remote_code=no",
            "serve.trust_remote_code (--trust-remote-code) takes true or false, got 'no'",
        ),
        # choices
        ("dtype=no", "--dtype (vllm 0.33.0) takes one of auto, half"),
        # the value as typed, newline included, in one line
        ("max-num-seqs=1\n2", "got '1\\n2'"),
    ],
)
def test_wrong_values_name_flag_type_and_value(assignment, needle):
    with pytest.raises(UsageError) as exc:
        render_command("llama3.1-8b-eagle3", "vllm", sets=[assignment])
    line = exc.value.one_line()
    assert needle in line and "\n" not in line and line.startswith("--set ")


def test_switches_and_removal():
    r = render_command("llama3.1-8b-eagle3", "vllm", sets=["enforce-eager=true"])
    assert "--enforce-eager" in r.argv
    r = render_command(
        "llama3.1-8b-eagle3", "vllm", sets=["enforce-eager=TRUE", "enforce-eager=false"]
    )
    assert "--enforce-eager" not in r.argv
    base = render_command("llama3.1-8b-eagle3", "vllm").argv
    assert "--max-model-len" in base
    # an empty value drops the flag, and null too for flags that are not strings
    for text in ("max_model_len=", "max_model_len=null", "max-model-len="):
        assert (
            "--max-model-len" not in render_command("llama3.1-8b-eagle3", "vllm", sets=[text]).argv
        )
    # a string flag keeps "null" as text
    r = render_command("llama3.1-8b-eagle3", "vllm", sets=["tool-call-parser=null"])
    assert flag(r.argv, "--tool-call-parser") == "null"


def test_json_flag_takes_json():
    r = render_command(
        "llama3.1-8b-eagle3", "vllm", sets=['compilation-config={"level": 3, "x": "no"}']
    )
    assert json.loads(flag(r.argv, "--compilation-config")) == {"level": 3, "x": "no"}


def test_list_flags_take_one_text_or_a_json_array():
    # FrontendArgs.api_key: list[str] | None -> nargs "+": one argv item per element
    r = render_command("llama3.1-8b-eagle3", "vllm", sets=['api-key=["k1", "k 2"]'])
    i = r.argv.index("--api-key")
    assert r.argv[i + 1 : i + 3] == ["k1", "k 2"]
    r = render_command("llama3.1-8b-eagle3", "vllm", sets=["api-key=no"])
    assert flag(r.argv, "--api-key") == "no"
    # CompilationConfig.cudagraph_capture_sizes: list[int] -> each element an integer
    r = render_command("llama3.1-8b-eagle3", "vllm", sets=["cudagraph-capture-sizes=[1, 2, 4]"])
    i = r.argv.index("--cudagraph-capture-sizes")
    assert r.argv[i + 1 : i + 4] == ["1", "2", "4"]
    with pytest.raises(UsageError, match="takes an integer, got 'x'"):
        render_command("llama3.1-8b-eagle3", "vllm", sets=['cudagraph-capture-sizes=["x"]'])


def test_tokenspeed_flags_typed_from_its_catalog():
    r = render_command(
        "llama3.1-8b-eagle3", "tokenspeed", force=True, sets=["max-prefill-tokens=8192"]
    )
    assert flag(r.argv, "--max-prefill-tokens") == "8192"
    with pytest.raises(
        UsageError, match=r"--max-prefill-tokens \(tokenspeed f4d8ec6e\) takes an integer, got '8k'"
    ):
        render_command(
            "llama3.1-8b-eagle3", "tokenspeed", force=True, sets=["max-prefill-tokens=8k"]
        )
    with pytest.raises(UsageError, match="takes one of auto, fp8, fp8_e4m3, mxfp8"):
        render_command("llama3.1-8b-eagle3", "tokenspeed", force=True, sets=["kv-cache-dtype=no"])
    r = render_command("llama3.1-8b-eagle3", "tokenspeed", force=True, sets=["moe-backend=no"])
    assert flag(r.argv, "--moe-backend") == "no"


@pytest.mark.parametrize("engine", ["vllm", "tokenspeed"])
def test_target_and_draft_verbatim(engine, tmp_path, monkeypatch):
    # force: the recipe says tokenspeed cannot serve its pair (unsupported), typing is the same.
    # Local paths must exist (issue #28), so both names are folders of the current directory.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "2026-01-01").mkdir()
    (tmp_path / "no").mkdir()
    r = render_command(
        "llama3.1-8b-eagle3", engine, sets=["draft=2026-01-01", "target=no"], force=True
    )
    assert r.argv[2] == "no"
    joined = " ".join(r.argv)
    assert "2026-01-01" in joined


def test_speculative_fields_typed_by_schema():
    r = render_command("llama3.1-8b-eagle3", "vllm", sets=["num_speculative_tokens=5"])
    assert json.loads(flag(r.argv, "--speculative-config"))["num_speculative_tokens"] == 5
    with pytest.raises(UsageError, match="takes an integer, got '5.0'"):
        render_command("llama3.1-8b-eagle3", "vllm", sets=["num_speculative_tokens=5.0"])
    with pytest.raises(
        UsageError, match="takes one of eagle3, eagle, mtp, dflash, dspark, got 'no'"
    ):
        render_command("llama3.1-8b-eagle3", "vllm", sets=["speculative.method=no"])


def test_optional_valued_flag():
    # ModelConfig.hf_token: bool | str | None -> _compute_kwargs: nargs "?", const True
    r = render_command("llama3.1-8b-eagle3", "vllm", sets=["hf-token=true"])
    i = r.argv.index("--hf-token")
    assert i == len(r.argv) - 1 or r.argv[i + 1].startswith("--")
    r = render_command("llama3.1-8b-eagle3", "vllm", sets=["hf-token=no"])
    assert flag(r.argv, "--hf-token") == "no"
    r = render_command("llama3.1-8b-eagle3", "vllm", sets=["hf-token=true", "hf-token=false"])
    assert "--hf-token" not in r.argv


@pytest.mark.parametrize(
    "assignment",
    [
        "hf-overrides=" + "[" * 100_000 + "]" * 100_000,  # RecursionError before
        "max-num-seqs=" + "9" * 5000,  # int() refuses > 4300 digits (ValueError before)
        "gpu-memory-utilization=" + "9" * 5000,
        "speculative-config=" + '{"a": ' + "9" * 5000 + "}",
    ],
)
def test_hostile_set_values_are_one_usage_line(assignment):
    with pytest.raises(UsageError) as exc:
        render_command("minimax-m3-eagle3", "vllm", sets=[assignment])
    assert "\n" not in str(exc.value) and len(str(exc.value)) < 400
