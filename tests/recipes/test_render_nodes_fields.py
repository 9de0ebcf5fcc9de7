"""The layout serve fields (issues #25/#26): pipeline_parallel_size, data_parallel_size,
enable_expert_parallel, enable_dp_attention, each rendered as the engine's own flag, or refused
with the engine's reason where it has none.

Expected flags are read from the pinned engines' parsers by hand: vLLM 0.33.0
vllm/engine/arg_utils.py EngineArgs.add_cli_args (parallel group: --pipeline-parallel-size,
--data-parallel-size, --enable-expert-parallel); SGLang 0.5.23 arg_groups/fields/parallel.py
(pp_size -> --pp-size, dp_size -> --dp-size) and server_args.py add_cli_args
(--enable-dp-attention); tokenspeed f4d8ec6e server_args.py add_cli_args
(--data-parallel-size, --enable-expert-parallel; no --pp flag).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from recipecli.errors import RecipeError, UsageError
from recipecli.recipes.render import render_command

RECIPE = """\
name: layout-fields
target: openai/gpt-oss-120b
draft: nvidia/gpt-oss-120b-Eagle3-v2
speculative: {method: eagle3, num_speculative_tokens: 3}
serve:
  tensor_parallel_size: 4
"""


def _recipe(tmp_path: Path, extra: str) -> str:
    path = tmp_path / f"r{len(list(tmp_path.iterdir()))}.yaml"
    path.write_text(RECIPE + extra)
    return str(path)


def _value(argv: list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv else None


@pytest.mark.parametrize(
    ("engine", "field", "value", "flag"),
    [
        ("vllm", "pipeline_parallel_size", "2", "--pipeline-parallel-size"),
        ("vllm", "data_parallel_size", "2", "--data-parallel-size"),
        ("sglang", "pipeline_parallel_size", "2", "--pp-size"),
        ("sglang", "data_parallel_size", "2", "--dp-size"),
        ("tokenspeed", "data_parallel_size", "2", "--data-parallel-size"),
    ],
)
def test_size_fields_render_the_engines_flag(
    tmp_path: Path, engine: str, field: str, value: str, flag: str
) -> None:
    r = render_command(_recipe(tmp_path, f"  {field}: {value}\n"), engine)
    assert _value(r.argv, flag) == value
    r = render_command(_recipe(tmp_path, ""), engine, sets=[f"{field}=3"])
    assert _value(r.argv, flag) == "3"


@pytest.mark.parametrize(
    ("engine", "field", "flag"),
    [
        ("vllm", "enable_expert_parallel", "--enable-expert-parallel"),
        ("tokenspeed", "enable_expert_parallel", "--enable-expert-parallel"),
        ("sglang", "enable_dp_attention", "--enable-dp-attention"),
    ],
)
def test_switch_fields_render_a_bare_flag(tmp_path: Path, engine: str, field: str, flag: str):
    r = render_command(_recipe(tmp_path, f"  {field}: true\n"), engine)
    assert flag in r.argv and r.argv[r.argv.index(flag) + 1].startswith("--")
    off = render_command(_recipe(tmp_path, f"  {field}: false\n"), engine)
    assert flag not in off.argv


@pytest.mark.parametrize(
    ("engine", "field", "value", "words"),
    [
        ("tokenspeed", "pipeline_parallel_size", "2", "no pipeline parallelism"),
        ("tokenspeed", "enable_dp_attention", "true", "attention DP already"),
        ("sglang", "enable_expert_parallel", "true", "--ep-size"),
        ("vllm", "enable_dp_attention", "true", "no DP-attention switch"),
    ],
)
def test_a_layout_field_without_a_flag_is_refused_with_the_reason(
    tmp_path: Path, engine: str, field: str, value: str, words: str
) -> None:
    path = _recipe(tmp_path, f"  {field}: {value}\n")
    with pytest.raises(RecipeError) as err:
        render_command(path, engine)
    assert words in str(err.value) and f"serve.{field}" in str(err.value)
    assert err.value.path == f"{path}:7"  # the line of the field in the recipe above
    with pytest.raises(UsageError, match=words):
        render_command(_recipe(tmp_path, ""), engine, sets=[f"{field}={value}"])
    forced = render_command(path, engine, force=True)  # left out, with a warning
    assert any(w.code == "recipe.serve_field_unsupported" for w in forced.warnings)


def test_no_op_values_of_a_missing_field_are_not_refused(tmp_path: Path) -> None:
    r = render_command(_recipe(tmp_path, "  pipeline_parallel_size: 1\n"), "tokenspeed")
    assert "--pp-size" not in r.argv and "--pipeline-parallel-size" not in r.argv
    render_command(_recipe(tmp_path, "  enable_dp_attention: false\n"), "vllm")


def test_sizes_below_one_are_refused_by_the_schema(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        render_command(_recipe(tmp_path, ""), "vllm", sets=["data_parallel_size=0"])
