"""render: shell round trip (hypothesis), literal templates, layering, formats, CLI exit codes."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from recipecli.errors import UsageError
from recipecli.recipes.render import (
    format_shell,
    render_command,
    split_shell,
    unfold_continuations,
)

NASTY = st.text(
    alphabet=st.sampled_from(list("a Z0'\"$`{}\\\n\t;|&*?~#!()[]<>=,-é漢🙂")), max_size=24
)


@settings(max_examples=300, deadline=None)
@given(
    argv=st.lists(NASTY, min_size=1, max_size=8).map(lambda a: ["prog", *a]),
    env=st.dictionaries(st.from_regex(r"[A-Z_][A-Z0-9_]{0,6}", fullmatch=True), NASTY, max_size=3),
)
def test_shell_round_trip(argv, env):
    text = format_shell(env, argv)
    assert split_shell(text) == (env, argv)
    assert shlex.split(unfold_continuations(format_shell({}, argv))) == argv


def test_round_trip_through_bash(tmp_path):
    argv = [
        "printf",
        "%s\\0",
        "--x",
        "{{ 7*7 }}",
        "$HOME `id` $(id)",
        "a \\\n  b",
        "it's",
        "é漢",
        "-",
        "--y",
        "\n",
    ]
    script = tmp_path / "s.sh"
    script.write_text(format_shell({"V": "$(id) 'q'"}, argv) + 'printf "%s" "$V"\n')
    out = subprocess.run(["bash", str(script)], capture_output=True, check=True).stdout
    parts = out.split(b"\0")
    assert [p.decode() for p in parts[:-1]] == argv[2:]
    assert parts[-1].decode() == "$(id) 'q'"


def test_format_shell_layout():
    text = format_shell({"A": "1"}, ["vllm", "serve", "m", "--x", "1", "--flag", "--j", "{}"])
    assert text == "export A=1\n\nvllm serve m \\\n  --x 1 \\\n  --flag \\\n  --j '{}'\n"


def test_format_shell_rejects_bad_env_name_and_empty_argv():
    with pytest.raises(ValueError):
        format_shell({"A B": "1"}, ["x"])
    with pytest.raises(ValueError):
        format_shell({}, [])


RECIPE = {
    "name": "t",
    "target": "meta-llama/Llama-3.1-8B-Instruct",
    "draft": "d",
    "speculative": {"method": "eagle3", "num_speculative_tokens": 2},
    "serve": {"max_model_len": 4096, "port": 9000},
    "engines": {"vllm": {"args": {"served-model-name": "{{ 7*7 }}", "max-model-len": 8192}}},
    "hardware": {
        "h": {"vendor": "nvidia", "args": {"vllm": {"max-model-len": 16384, "enforce-eager": True}}}
    },
}


def write(tmp_path: Path, data, name="r.yaml") -> str:
    p = tmp_path / name
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(p)


def flag(argv, name):
    return argv[argv.index(name) + 1]


def test_template_syntax_in_values_renders_literally(tmp_path):
    path = write(tmp_path, dict(RECIPE, bench={"backend": "openai-chat"}))
    out = subprocess.run(
        [sys.executable, "-m", "recipecli", "render", path, "--engine", "vllm", "--what", "all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "--served-model-name '{{ 7*7 }}'" in out
    assert "49" not in out
    assert "--model '{{ 7*7 }}'" in out  # bench points at the served name


def test_layering_base_engine_hardware_set(tmp_path):
    path = write(tmp_path, RECIPE)
    assert flag(render_command(path, "vllm").argv, "--max-model-len") == "8192"
    r = render_command(path, "vllm", hardware="h")
    assert flag(r.argv, "--max-model-len") == "16384"
    assert r.argv.count("--max-model-len") == 1
    assert "--enforce-eager" in r.argv
    r = render_command(
        path,
        "vllm",
        hardware="h",
        sets=["max_model_len=65536", "enforce-eager=false", "served-model-name=m3"],
    )
    assert flag(r.argv, "--max-model-len") == "65536"
    assert "--enforce-eager" not in r.argv
    assert flag(r.argv, "--served-model-name") == "m3"
    # tokenspeed has no engine args here: serve field only
    assert flag(render_command(path, "tokenspeed").argv, "--max-model-len") == "4096"


def test_speculative_flags_per_engine(tmp_path):
    data = dict(
        RECIPE,
        speculative={
            "method": "eagle3",
            "num_speculative_tokens": 5,
            "draft_tensor_parallel_size": 1,
        },
    )
    path = write(tmp_path, data)
    spec = json.loads(flag(render_command(path, "vllm").argv, "--speculative-config"))
    assert spec == {
        "method": "eagle3",
        "model": "d",
        "num_speculative_tokens": 5,
        "draft_tensor_parallel_size": 1,
    }
    ts = render_command(path, "tokenspeed").argv
    assert flag(ts, "--speculative-algorithm") == "EAGLE3"
    assert flag(ts, "--speculative-num-steps") == "5"
    assert flag(ts, "--speculative-eagle-topk") == "1"
    assert flag(ts, "--speculative-num-draft-tokens") == "6"
    assert flag(ts, "--speculative-draft-model-path") == "d"


def test_text_overrides_placement_by_hand():
    # vLLM v0.33.0 ModelConfig._apply_dict_overrides merges a dict under an existing sub-config;
    # tokenspeed f4d8ec6e get_config updates get_hf_text_config(config) with flat keys.
    from recipecli.recipes.overrides import OverrideSource, place_overrides

    def place(engine, config):
        src = OverrideSource("text_overrides", "f:1", {"index_topk_freq": 4}, True)
        return place_overrides(engine, [src], config, known=["index_topk_freq"]).value

    wrapped = {"model_type": "minimax_m3_vl", "auto_map": {}, "text_config": {"hidden_size": 6144}}
    flat = {"model_type": "llama", "hidden_size": 4096, "auto_map": {}}
    assert place("vllm", wrapped) == {"text_config": {"index_topk_freq": 4}}
    assert place("tokenspeed", wrapped) == {"index_topk_freq": 4}
    assert place("vllm", flat) == {"index_topk_freq": 4}
    omni = {"thinker_config": {"text_config": {"vocab_size": 10}}}
    assert place("vllm", omni) == {"thinker_config": {"text_config": {"index_topk_freq": 4}}}
    assert place("tokenspeed", omni) == {"index_topk_freq": 4}


def test_target_config_override_and_offline_failure(tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text(
        json.dumps(
            {
                "architectures": ["X"],
                "model_type": "x",
                "text_config": {"hidden_size": 8, "rope_theta": 1.0},
            }
        )
    )
    data = dict(RECIPE, target="/nonexistent/target-dir", text_overrides={"rope_theta": 2.0})
    path = write(tmp_path, data)
    r = render_command(path, "vllm", target_config=str(cfg))
    assert json.loads(flag(r.argv, "--hf-overrides")) == {"text_config": {"rope_theta": 2.0}}
    assert r.warnings == ()
    proc = subprocess.run(
        [sys.executable, "-m", "recipecli", "render", path, "--engine", "vllm"],
        capture_output=True,
        text=True,
        env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 2
    assert "--target-config" in proc.stderr and "r.yaml" in proc.stderr


def test_engine_flag_in_text_overrides_is_an_error(tmp_path):
    data = dict(RECIPE, text_overrides={"max_model_len": 4})
    path = write(tmp_path, data)
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"model_type": "llama", "hidden_size": 8}))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "recipecli",
            "render",
            path,
            "--engine",
            "vllm",
            "--target-config",
            str(cfg),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert "r.yaml:" in proc.stderr and "engine flag" in proc.stderr


def test_tokenspeed_draft_shared_override_warns():
    # tokenspeed builds the draft's ModelConfig with the same server_args.hf_overrides
    # (runtime/engine/event_loop.py _load_model_config); vLLM keeps dict overrides target-only
    # (vllm/config/speculative.py compose_draft_hf_overrides).
    from recipecli.recipes.overrides import OverrideSource, place_overrides

    src = [OverrideSource("text_overrides", "f:1", {"vocab_size": 1}, True)]
    found = place_overrides("tokenspeed", src, {"vocab_size": 2}).findings
    assert [f.code for f in found] == ["recipe.override_hits_draft"]
    assert place_overrides("vllm", src, {"vocab_size": 2}).findings == ()


def test_formats_argv_json_and_vllm_config():
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "recipecli",
            "render",
            "minimax-m3-eagle3",
            "--engine",
            "vllm",
            "--hardware",
            "mi355x",
            "--format",
            "argv-json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    doc = json.loads(proc.stdout)
    assert doc["argv"][:3] == ["vllm", "serve", "amd/MiniMax-M3-MXFP4"]
    assert doc["env"]["HIP_VISIBLE_DEVICES"] == "0,1,2,3"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "recipecli",
            "render",
            "minimax-m3-eagle3",
            "--engine",
            "vllm",
            "--hardware",
            "mi355x",
            "--format",
            "vllm-config",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    cfg = yaml.safe_load(proc.stdout)
    assert cfg["model"] == "amd/MiniMax-M3-MXFP4"
    # vLLM 0.33.0 argparse_utils.py FlexibleArgumentParser.load_config_file drops `x: false` under
    # `vllm serve --config` (only the top-level parser is asked for --no-x): `no-x: true` instead
    assert cfg["no-enable-prefix-caching"] is True and cfg["no-async-scheduling"] is True
    assert "enable-prefix-caching" not in cfg and "async-scheduling" not in cfg
    assert cfg["hf-overrides"] == {"text_config": {"use_index_cache": True, "index_topk_freq": 4}}
    assert cfg["port"] == 8010
    assert "# export HIP_VISIBLE_DEVICES=0,1,2,3" in proc.stdout


def test_vllm_config_text_is_the_library_function_of_the_format(tmp_path):
    # the same file the --format vllm-config test above reads, built by the library function the
    # command calls; the values come from minimax-m3-eagle3.yaml's mi355x profile
    from recipecli.recipes.text import shell_text, vllm_config_text

    serve = render_command("minimax-m3-eagle3", "vllm", hardware="mi355x")
    text = vllm_config_text(serve, "minimax-m3-eagle3")
    cfg = yaml.safe_load(text)
    assert cfg["model"] == "amd/MiniMax-M3-MXFP4" and cfg["port"] == 8010
    assert cfg["no-enable-prefix-caching"] is True and "enable-prefix-caching" not in cfg
    assert "# export HIP_VISIBLE_DEVICES=0,1,2,3" in text
    (tmp_path / "vllm-config.yaml.j2").write_text("{{ recipe }} {{ hardware }}\n")
    assert vllm_config_text(serve, "r", templates=str(tmp_path)) == "r mi355x\n"
    with pytest.raises(UsageError, match="needs --engine vllm and --what serve"):
        vllm_config_text(render_command("minimax-m3-eagle3", "tokenspeed"), "minimax-m3-eagle3")
    # shell_text: one block, no header; its command lines split back into the argv
    one = shell_text([serve])
    assert split_shell(one) == (serve.env, serve.argv)
    (tmp_path / "shell.sh.j2").write_text("{{ show_headers }} {{ blocks|length }}\n")
    assert shell_text([serve, serve], templates=str(tmp_path)) == "True 2\n"


def test_templates_override_dir(tmp_path):
    (tmp_path / "shell.sh.j2").write_text("CUSTOM {{ blocks|length }}\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "recipecli",
            "render",
            "llama3.1-8b-eagle3",
            "--engine",
            "vllm",
            "--templates",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout == "CUSTOM 1\n"


@pytest.mark.parametrize(
    "args, needle",
    [
        (["no-such-recipe", "--engine", "vllm"], "no-such-recipe"),
        (["minimax-m3-eagle", "--engine", "vllm"], "did you mean 'minimax-m3-eagle3'"),
        (
            ["minimax-m3-eagle3", "--engine", "vllm", "--hardware", "mi300"],
            "minimax-m3-eagle3.yaml",
        ),
        (["minimax-m3-eagle3", "--engine", "tokenspeed", "--format", "vllm-config"], "vllm-config"),
        (["minimax-m3-eagle3", "--engine", "vllm", "--set", "novalue"], "NAME=VALUE"),
        (["minimax-m3-eagle3", "--engine", "vllm", "--templates", "/nonexistent"], "/nonexistent"),
    ],
)
def test_bad_usage_exits_2(args, needle):
    proc = subprocess.run(
        [sys.executable, "-m", "recipecli", "render", *args], capture_output=True, text=True
    )
    assert proc.returncode == 2, proc.stderr
    assert needle in proc.stderr


def test_list_shows_bundled():
    proc = subprocess.run(
        [sys.executable, "-m", "recipecli", "render", "--list"],
        capture_output=True,
        text=True,
        check=True,
    )
    names = [line.split("\t")[0] for line in proc.stdout.splitlines()]
    assert names == [
        "gpt-oss-120b-eagle3",
        "llama3.1-8b-eagle3",
        "minimax-m3-eagle3",
        "qwen3-30b-a3b-eagle3",
    ]


@pytest.mark.parametrize(
    "cmd",
    [
        [
            "render",
            "minimax-m3-eagle3",
            "--engine",
            "vllm",
            "--hardware",
            "mi355x",
            "--what",
            "all",
        ],
        ["lint", "minimax-m3-eagle3", "llama3.1-8b-eagle3"],
    ],
)
def test_render_and_lint_do_not_import_torch(cmd):
    code = (
        "import sys\nfrom recipecli.cli import main\n"
        f"try:\n    main({cmd!r})\nexcept SystemExit:\n    pass\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
        "assert 'triton' not in sys.modules\nprint('ok')"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("ok")


def run_render(*args):
    return subprocess.run(
        [sys.executable, "-m", "recipecli", "render", *args], capture_output=True, text=True
    )


@pytest.mark.parametrize(
    "assignment, needle",
    [
        (
            "max_model_len=abc",
            "--set max_model_len='abc': serve.max_model_len (--max-model-len) takes an integer, "
            "got 'abc'",
        ),
        ("max_model_len=0x10", "takes an integer, got '0x10'"),
        ("port=99999", "99999 is above the maximum 65535"),
        ("port=0", "0 is below the minimum 1"),
        ("tensor_parallel_size=-4", "-4 is below the minimum 1"),
        ("gpu_memory_utilization=0", "0 must be above 0"),
        ("speculative.num_speculative_tokens=0", "0 is below the minimum 1"),
        ("num_speculative_tokens=two", "speculative.num_speculative_tokens takes an integer"),
        ("trust_remote_code=yes please", "takes true or false, got 'yes please'"),
        ("nosuchflag=1", "--set nosuchflag: not a serve field nor a vllm"),
        ("max-num-seq=8", "did you mean 'max-num-seqs'?"),
        ("max_model_lenn=8", "did you mean 'max_model_len'?"),
        # the short names of check --tp/--pp/--dp name their serve fields (difflib alone said 'p')
        ("tp=4", "did you mean 'tensor_parallel_size'?"),
        ("pp=2", "did you mean 'pipeline_parallel_size'?"),
        ("dp=2", "did you mean 'data_parallel_size'?"),
        (
            "speculative.num_speculative_token=5",
            "did you mean 'speculative.num_speculative_tokens'",
        ),
        ("engines.vllm.args.port=1", "dotted names must be serve.FIELD, speculative.FIELD"),
        ("rope-scaling=x", "--rope-scaling was removed"),
        (
            "no-enable-prefix-caching=1",
            "--no-enable-prefix-caching (vllm 0.33.0) takes true or false (a switch), got '1'",
        ),
        ("speculative.num_speculative_tokens=", "needs a value"),
        ("max-num-batched-tokens=2026-01-01", "takes an integer, got '2026-01-01'"),
        ("target=", "must not be empty"),
    ],
)
def test_set_is_checked(assignment, needle):
    from recipecli.errors import UsageError

    with pytest.raises(UsageError) as exc:
        render_command("llama3.1-8b-eagle3", "vllm", sets=[assignment])
    line = exc.value.one_line()
    assert needle in line and line.startswith("--set ") and "\n" not in line


@pytest.mark.parametrize("assignment", ["max_model_len=abc", "nosuchflag=1", "port=99999"])
def test_bad_set_exits_2_one_line(assignment):
    proc = run_render("llama3.1-8b-eagle3", "--engine", "vllm", "--set", assignment)
    assert proc.returncode == 2, proc.stdout
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("recipecli: error: --set ")


def test_set_tokenspeed_catalog_and_choices():
    # --served-model-name is a vLLM serve field only; tokenspeed has no such flag (f4d8ec6e
    # server_args.py ServerArgs.add_cli_args)
    from recipecli.errors import UsageError

    for assignment, needle in (
        ("served_model_name=x", "serve field served_model_name has no tokenspeed flag"),
        ("no-such-flag=1", "not a serve field nor a tokenspeed"),
        ("attention-backend=fa9", "takes one of mha, mla"),
    ):
        with pytest.raises(UsageError, match=needle):
            render_command("llama3.1-8b-eagle3", "tokenspeed", force=True, sets=[assignment])
    r = render_command(
        "llama3.1-8b-eagle3", "tokenspeed", force=True, sets=["attention-backend=fa3", "port=8123"]
    )
    assert flag(r.argv, "--attention-backend") == "fa3"
    assert flag(r.argv, "--port") == "8123"


def test_set_dotted_speculative_and_serve_fields(tmp_path):
    path = write(tmp_path, RECIPE)
    r = render_command(
        path,
        "vllm",
        sets=[
            "speculative.num_speculative_tokens=5",
            "speculative.draft_tensor_parallel_size=1",
            "serve.max_model_len=1024",
            "port=8001",
        ],
    )
    assert json.loads(flag(r.argv, "--speculative-config")) == {
        "method": "eagle3",
        "model": "d",
        "num_speculative_tokens": 5,
        "draft_tensor_parallel_size": 1,
    }
    # serve.max_model_len is the top layer: it beats engines.vllm.args.max-model-len 8192
    assert flag(r.argv, "--max-model-len") == "1024"
    assert flag(r.argv, "--port") == "8001"
    ts = render_command(path, "tokenspeed", sets=["num_speculative_tokens=4"]).argv
    assert flag(ts, "--speculative-num-steps") == "4"
    assert flag(ts, "--speculative-num-draft-tokens") == "5"
    # null drops a serve field's flag (the engine default applies)
    r = render_command(path, "tokenspeed", sets=["max_model_len=null"])
    assert "--max-model-len" not in r.argv and flag(r.argv, "--port") == "9000"


@pytest.mark.parametrize(
    "engine, args, needle",
    [
        ("tokenspeed", {"no-such-flag": 1}, "--no-such-flag is not a tokenspeed serve flag"),
        ("vllm", {"tensor-parallel-size": -4}, "-4 is below the minimum 1"),
        ("vllm", {"enforce-eager": 3}, "expected boolean"),
    ],
)
def test_render_refuses_what_lint_rejects(tmp_path, engine, args, needle):
    data = dict(RECIPE, engines={engine: {"args": args}})
    path = write(tmp_path, data)
    [key] = args
    lines = Path(path).read_text().splitlines()
    line = 1 + next(i for i, t in enumerate(lines) if t.strip().startswith(f"{key}:"))
    proc = run_render(path, "--engine", engine)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1
    assert f"{path}:{line}: " in proc.stderr and needle in proc.stderr
    assert f"run `recipecli lint {path}`" in proc.stderr
    lint = subprocess.run(
        [sys.executable, "-m", "recipecli", "lint", path], capture_output=True, text=True
    )
    assert lint.returncode == 1 and needle in lint.stdout


def test_render_refuses_negative_serve_tp_with_line(tmp_path):
    data = dict(RECIPE, serve={"tensor_parallel_size": -4})
    path = write(tmp_path, data)
    lineno = Path(path).read_text().splitlines().index("  tensor_parallel_size: -4") + 1
    proc = run_render(path, "--engine", "vllm")
    assert proc.returncode == 2
    assert f"{path}:{lineno}: serve.tensor_parallel_size: -4 is below the minimum 1" in proc.stderr
    assert "run `recipecli lint" in proc.stderr


def test_render_lints_only_for_the_rendered_engine(tmp_path):
    # a tokenspeed-only mistake does not block the vLLM command
    path = write(tmp_path, dict(RECIPE, engines={"tokenspeed": {"args": {"no-such-flag": 1}}}))
    assert render_command(path, "vllm").argv[:2] == ["vllm", "serve"]


def test_render_directory_says_directory(tmp_path):
    proc = run_render(str(tmp_path), "--engine", "vllm")
    assert proc.returncode == 2
    assert f"{tmp_path}: is a directory, not a recipe file" in proc.stderr


def test_bundled_render_has_no_warnings():
    # speed is measured by benchmarks/bench_render.py (figures, target < 0.5 s), not here
    code = (
        "from recipecli.cli import main\n"
        "try:\n    main(['render', 'minimax-m3-eagle3', '--engine', 'vllm', '--what', 'all'])\n"
        "except SystemExit:\n    pass\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in proc.stderr
    assert proc.stdout.startswith("# serve (vllm, b200)\nvllm serve nvidia/MiniMax-M3-NVFP4")


def test_render_refuses_an_engine_the_recipe_says_cannot_serve_it():
    # qwen3-30b-a3b-eagle3: `unsupported: tokenspeed` (tokenspeed qwen3_moe.py Qwen3MoeModel.forward
    # returns no aux hidden states): render refuses with the recipe's reason; --force renders
    from recipecli.errors import RecipeError

    with pytest.raises(
        RecipeError, match="not served on tokenspeed: tokenspeed's Qwen3MoeForCausalLM"
    ):
        render_command("qwen3-30b-a3b-eagle3", "tokenspeed")
    forced = render_command("qwen3-30b-a3b-eagle3", "tokenspeed", force=True)
    assert forced.argv[:3] == ["tokenspeed", "serve", "Qwen/Qwen3-30B-A3B"]
    # vLLM serves it
    assert render_command("qwen3-30b-a3b-eagle3", "vllm").argv[:2] == ["vllm", "serve"]
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "recipecli",
            "render",
            "qwen3-30b-a3b-eagle3",
            "--engine",
            "tokenspeed",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
