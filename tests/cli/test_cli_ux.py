"""The first ten minutes, run as a user runs them: bare `recipecli`, `--debug`/`--no-color`
anywhere, "did you mean" for commands, colour on a terminal only (a real pty), wrapping to the
terminal's width, identical findings shown once, `check --recipe`, generated pages whose
`recipecli` commands run, and hints naming current tools.

Expected values come from the recipe files and the engines' documented behaviour, worked out by
hand (comments say how), never from the output under test. ANSI codes are ECMA-48 SGR: ``ESC[31m``
red, ``ESC[32m`` green, ``ESC[33m`` yellow, ``ESC[1m`` bold, ``ESC[0m`` reset.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from helpers.pairs import base_pair

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = ("check", "--example", "llama3.1-8b-eagle3", "--kernel", "skip")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
RED, GREEN, YELLOW, BOLD = "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[1m"


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without anything that changes colour or width, plus ``extra``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES", "CLICOLOR", "CLICOLOR_FORCE")
    }
    env["TERM"] = "xterm-256color"
    env["HF_HUB_OFFLINE"] = "1"
    env.update(extra)
    return env


def run(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """recipecli with stdout and stderr piped (not a terminal)."""
    return subprocess.run(
        [sys.executable, "-m", "recipecli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env=clean_env(**env),
    )


def run_pty(
    *args: str, cols: int = 100, stderr_tty: bool = False, **env: str
) -> tuple[int, str, str]:
    """recipecli with stdout on a pseudo-terminal of ``cols`` columns (stderr too when
    ``stderr_tty``). Returns (exit code, terminal text with ``\\r\\n`` made ``\\n``, piped
    stderr)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "recipecli", *args],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave if stderr_tty else subprocess.PIPE,
        env=clean_env(**env),
        close_fds=True,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    err = proc.stderr.read().decode() if proc.stderr else ""
    rc = proc.wait(timeout=300)
    os.close(master)
    return rc, b"".join(chunks).decode().replace("\r\n", "\n"), err


# --------------------------------------------------------------------------- help, flags, typos


def test_bare_recipecli_prints_help_exit_0():
    proc = run()
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert proc.stdout.startswith("Usage: recipecli [OPTIONS] COMMAND [ARGS]...")
    # the help, laid out on lines (not squashed into one error line)
    assert "\nCommands:\n" in proc.stdout and "\nOptions:\n" in proc.stdout
    assert "  check " in proc.stdout
    assert run("--help").stdout == proc.stdout


def test_bare_recipecli_with_only_global_flags_prints_help():
    for flags in (["--debug"], ["--no-color"], ["--no-color", "--debug"]):
        proc = run(*flags)
        assert proc.returncode == 0 and proc.stdout.startswith("Usage: recipecli"), flags


@pytest.mark.parametrize(
    "args",
    [
        ["--debug", "inspect", "/definitely/not/here"],
        ["inspect", "/definitely/not/here", "--debug"],
        ["inspect", "--debug", "/definitely/not/here"],
        ["check", "/definitely/not/here", "/nor/here", "--kernel", "skip", "--debug"],
    ],
)
def test_debug_anywhere_shows_the_traceback(args):
    proc = run(*args)
    assert proc.returncode != 0
    assert "No such option" not in proc.stderr
    assert "Traceback (most recent call last)" in proc.stderr
    assert "/definitely/not/here" in proc.stderr


def test_without_debug_one_line_no_traceback():
    proc = run("inspect", "/definitely/not/here")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_arguments_after_double_dash_are_not_global_flags():
    # After `--` everything is an argument: `--debug` is then a (missing) source, not the flag.
    proc = run("inspect", "--", "--debug")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "--debug" in proc.stderr


def test_no_color_accepted_anywhere():
    for args in (["--no-color", *EXAMPLE], [*EXAMPLE, "--no-color"]):
        proc = run(*args)
        # the bundled example: tokenspeed NOT READY (draft.arch_name error) -> exit 1
        assert proc.returncode == 1, proc.stderr
        assert "tokenspeed  NOT READY" in proc.stdout


@pytest.mark.parametrize(
    ("typo", "meant"),
    [("chek", "check"), ("rendr", "render"), ("inpsect", "inspect"), ("convrt", "convert")],
)
def test_unknown_command_did_you_mean(typo, meant):
    proc = run(typo, "x")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1
    assert f"No such command '{typo}'." in proc.stderr
    assert f"Did you mean '{meant}'?" in proc.stderr


def test_unknown_command_far_from_any_has_no_suggestion():
    proc = run("frobnicate")
    assert proc.returncode == 2
    assert "No such command 'frobnicate'." in proc.stderr
    assert "Did you mean" not in proc.stderr


# --------------------------------------------------------------------------- colour (pty)


def test_colour_on_a_terminal():
    rc, out, _ = run_pty(*EXAMPLE, cols=2000)
    assert rc == 1
    # green READY for vLLM, red NOT READY for tokenspeed, red "errors" heading
    assert re.search(r"vllm\s+" + re.escape(GREEN + BOLD) + "READY", out), out
    assert re.search(r"tokenspeed\s+" + re.escape(RED + BOLD) + "NOT READY", out), out
    assert re.search(re.escape(RED + BOLD) + r"errors \(\d+\):", out)
    # the text is the piped text with colour codes added (2000 columns: nothing wraps)
    piped = run(*EXAMPLE).stdout
    assert ANSI.search(piped) is None
    assert ANSI.sub("", out) == piped


def test_warning_heading_is_yellow(tmp_path):
    # an extra draft tensor: tokenspeed ignores it unloaded -> tensor.unexpected, a warning
    t, d = base_pair().put("midlayer.extra_proj.weight", "BF16", (64, 64)).write(tmp_path)
    args = ("--tp", "1", "--kernel", "skip", "--engine", "tokenspeed")
    rc, out, _ = run_pty("check", str(t), str(d), *args, cols=200)
    assert rc == 0
    assert re.search(re.escape(YELLOW + BOLD) + r"warnings \(\d+\):", out)


@pytest.mark.parametrize(
    ("args", "env"),
    [(EXAMPLE, {"NO_COLOR": "1"}), ((*EXAMPLE, "--no-color"), {}), (("--no-color", *EXAMPLE), {})],
)
def test_no_colour_with_no_color_env_or_flag(args, env):
    rc, out, _ = run_pty(*args, cols=200, **env)
    assert rc == 1
    assert "\x1b[" not in out
    assert "vllm        READY      at TP 1, 2, 4, 8" in out


def test_empty_no_color_does_not_disable_colour():
    # no-color.org: NO_COLOR disables colour when present *and not empty*
    rc, out, _ = run_pty(*EXAMPLE, cols=200, NO_COLOR="")
    assert GREEN + BOLD + "READY" in out


def test_no_colour_when_piped():
    proc = run(*EXAMPLE)
    assert "\x1b[" not in proc.stdout and "\x1b[" not in proc.stderr


def test_json_is_unchanged_on_a_terminal():
    piped = run(*EXAMPLE, "--json")
    rc, out, _ = run_pty(*EXAMPLE, "--json", cols=60)
    assert rc == piped.returncode == 1
    assert "\x1b[" not in out
    assert out == piped.stdout  # not wrapped at 60 columns either
    doc = json.loads(out)
    assert doc["engines"]["vllm"]["ready_tp"] == [1, 2, 4, 8]
    assert doc["engines"]["tokenspeed"]["ready"] is False


def test_error_prefix_red_on_a_terminal_plain_when_piped():
    rc, out, _ = run_pty("check", "--example", "nope", stderr_tty=True)
    assert rc == 2
    assert RED + BOLD + "recipecli: error:" in out
    rc, out, _ = run_pty("check", "--example", "nope", "--no-color", stderr_tty=True)
    assert "\x1b[" not in out and out.startswith("recipecli: error:")
    proc = run("check", "--example", "nope")
    assert proc.stderr.startswith("recipecli: error:")


# --------------------------------------------------------------------------- wrapping


def _words(text: str) -> list[str]:
    return text.split()


@pytest.mark.parametrize("cols", [100, 72])
def test_wraps_to_the_terminal_width_at_word_boundaries(cols):
    rc, out, _ = run_pty(*EXAMPLE, cols=cols)
    assert rc == 1
    plain = ANSI.sub("", out)
    lines = plain.splitlines()
    long_words = [w for w in _words(plain) if len(w) > cols - 6]
    for line in lines:
        # a word longer than the width stays whole (paths, repo ids) -- none here
        assert len(line) <= cols or any(w in line for w in long_words), (cols, line)
    piped = run(*EXAMPLE).stdout
    # the piped report has lines wider than this terminal (the error line is ~330 characters)
    assert max(len(x) for x in piped.splitlines()) > cols
    # same words, same order, none split: only line breaks (and table splitting) differ
    finding_text = lambda s: s.split("embedding / head sharing")[0]  # noqa: E731
    assert _words(finding_text(plain)) == _words(finding_text(piped))
    # a finding too long for one line continues on lines indented under it
    i = next(
        i for i, x in enumerate(lines) if x.startswith("  [tokenspeed") and "draft.arch_name" in x
    )
    assert lines[i + 1].startswith("      ") and lines[i + 1].strip()
    long_piped = [x for x in piped.splitlines() if x.startswith("  [") and len(x) > cols]
    assert long_piped
    firsts = [x for x in lines if x.startswith("  [")]
    assert len(firsts) == len([x for x in piped.splitlines() if x.startswith("  [")])


def test_sharing_table_split_when_wider_than_the_terminal():
    # Full table row: "  vllm    1   [128256, 4096]  [128256, 4096]  [128256, 4096]    share
    # own   1.05 GB      0.85 GB" -- 98 characters; at 80 columns it becomes two tables
    # (shapes; verdicts and bytes), each row keyed by engine and tp.
    rc, wide, _ = run_pty(*EXAMPLE, cols=2000)
    rc, narrow, _ = run_pty(*EXAMPLE, cols=80)
    wide, narrow = ANSI.sub("", wide), ANSI.sub("", narrow)
    # the table, up to the blank line before the verdict line
    table_wide = wide.split("embedding / head sharing (per rank):\n")[1].split("\n\n")[0]
    no_rows = [x for x in table_wide.splitlines() if ": no rows:" in x]
    table_wide = [x for x in table_wide.splitlines() if ": no rows:" not in x]
    table_narrow = narrow.split("embedding / head sharing (per rank):\n")[1]
    table_narrow = table_narrow.rsplit("\n\n", 1)[0].splitlines()
    assert len(table_wide) == 5  # header + TP 1, 2, 4, 8 (vLLM only: tokenspeed stops early)
    # tokenspeed and SGLang stop at draft.arch_name: one line each says why they have no rows
    assert [x.split(":")[0].strip() for x in no_rows] == ["tokenspeed", "sglang"]
    assert max(len(x) for x in table_wide) > 80
    assert all(len(x) <= 80 for x in table_narrow)
    headers = [x.split() for x in table_narrow if x.strip().startswith("engine")]
    assert len(headers) == 2
    assert " ".join(headers[0]) == "engine tp target embed draft sharded draft replicated"
    assert " ".join(headers[1]) == "engine tp embed head embed bytes draft bytes"
    # TP 4: target embed rows 128256 / 4 = 32064; draft bytes as in the wide table
    assert any(x.split()[:3] == ["vllm", "4", "[32064,"] for x in table_narrow)
    row4 = next(x for x in table_wide if x.split()[:2] == ["vllm", "4"])
    assert any(
        x.split()[:2] == ["vllm", "4"] and x.split()[-2:] == row4.split()[-2:] for x in table_narrow
    )


# --------------------------------------------------------------------------- one line per finding


#: How each engine names itself in messages (its docs/engines page title).
TITLES = {"vllm": "vLLM", "tokenspeed": "tokenspeed", "sglang": "SGLang"}


def _generic(message: str, engine: str) -> str:
    for name in {engine, TITLES.get(engine, engine)}:
        message = re.sub(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", "ENGINE", message)
    return message


def test_identical_findings_of_several_engines_shown_once(tmp_path):
    t, d = base_pair().write(tmp_path)
    args = ("check", str(t), str(d), "--tp", "1", "--kernel", "skip")
    doc = json.loads(run(*args, "--json").stdout)
    order = list(doc["engines"])
    aux = [f for f in doc["findings"] if f["code"] == "aux.default"]
    # JSON keeps one finding per engine: the base draft names no aux ids, so vLLM and tokenspeed
    # each capture their default layers and say so in the same words
    by = {f["engine"]: f["message"] for f in aux}
    assert {"vllm", "tokenspeed"} <= set(by)
    assert _generic(by["vllm"], "vllm") == _generic(by["tokenspeed"], "tokenspeed")
    groups: dict[tuple[str, str], list[str]] = {}
    for f in aux:
        groups.setdefault((f["severity"], _generic(f["message"], f["engine"])), []).append(
            f["engine"]
        )
    # ... the report shows each group once, naming its engines, without their names in the text
    out = run(*args).stdout
    lines = [x for x in out.splitlines() if "] aux.default: " in x]
    assert len(lines) == len(groups)
    for engines in groups.values():
        tag = ", ".join(sorted(engines, key=order.index))
        (line,) = [x for x in lines if x.startswith(f"  [{tag}] aux.default: ")]
        if len(engines) > 1:
            assert "each engine captures" in line
            assert not any(TITLES[e] + " captures" in line for e in engines)
    assert any("vllm" in e and "tokenspeed" in e for e in groups.values())


def test_findings_that_differ_are_not_merged(tmp_path):
    # draft max_position_embeddings 1024 < serving length 2048 (the target's
    # max_position_embeddings): vLLM raises the draft's value itself (info), tokenspeed does not
    # (warning) -- docs/engines/vllm.md / tokenspeed.md, step g (positions).
    p = base_pair()
    p.draft["max_position_embeddings"] = 1024
    t, d = p.write(tmp_path)
    out = run("check", str(t), str(d), "--tp", "1", "--kernel", "skip").stdout
    tags = [
        x.split("]")[0].strip(" [").split(", ") for x in out.splitlines() if "] maxpos.short: " in x
    ]
    assert ["vllm"] in tags
    assert any("tokenspeed" in t for t in tags)
    assert not any("vllm" in t and "tokenspeed" in t for t in tags)


# --------------------------------------------------------------------------- check --recipe


def _llama_recipe() -> dict:
    import yaml

    return yaml.safe_load(
        (REPO / "recipecli" / "data" / "recipes" / "llama3.1-8b-eagle3.yaml").read_text()
    )


def test_check_recipe_bundled_uses_the_recipes_settings_offline():
    # recipecli/data/recipes/llama3.1-8b-eagle3.yaml: serve.tensor_parallel_size 1,
    # max_model_len 8192, no draft TP, default hardware h200; both checkpoints ship as snapshots.
    # Engines: those the recipe does not mark `unsupported`.
    unsupported = set(_llama_recipe().get("unsupported") or {})
    engines = [e for e in ("vllm", "tokenspeed") if e not in unsupported]
    assert "vllm" in engines
    proc = run("check", "--recipe", "llama3.1-8b-eagle3", "--kernel", "skip", "--json")
    # tokenspeed cannot load the published draft (LlamaForCausalLM -> LlamaForCausalLMNextN)
    assert proc.returncode == (1 if "tokenspeed" in engines else 0), proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["recipe"]["name"] == "llama3.1-8b-eagle3" and doc["recipe"]["hardware"] == "h200"
    assert doc["recipe"]["not_checked"] == sorted(unsupported)
    assert [
        (d["engine"], d["target"], d["draft"], d["tp"], d["draft_tp"], d["max_model_len"])
        for d in doc["recipe"]["deployments"]
    ] == [
        (
            e,
            "meta-llama/Llama-3.1-8B-Instruct",
            "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
            1,
            None,
            8192,
        )
        for e in engines
    ]
    assert len(doc["checks"]) == 1
    check = doc["checks"][0]
    assert check["settings"] == {"tp": 1, "draft_tp": None, "max_model_len": 8192}
    assert check["engines"]["vllm"] == {"ready": True, "ready_tp": [1]}
    assert "snapshot" in check["target"]["source"] and "snapshot" in check["draft"]["source"]
    human = run("check", "--recipe", "llama3.1-8b-eagle3", "--kernel", "skip")
    assert human.returncode == proc.returncode
    assert human.stdout.startswith(
        f"recipe llama3.1-8b-eagle3, hardware h200: {' and '.join(engines)} at TP 1, "
        "max_model_len 8192\n"
    )
    assert "vllm        READY      at TP 1\n" in human.stdout
    # the serving length is the recipe's 8192, not the target's max_position_embeddings 131072
    assert "< serving length 8192" in human.stdout and "131072" not in human.stdout
    for e in unsupported:
        assert f"{e}: not checked: the recipe marks it unsupported" in human.stdout


def test_check_recipe_header_wraps_to_the_terminal_width():
    # "recipe llama3.1-8b-eagle3, hardware h200: vllm at TP 1, max_model_len 8192" is 73
    # characters; at 60 columns it breaks after "TP 1," (55 characters; "max_model_len" would
    # make 69), the rest indented four spaces.
    rc, out, _ = run_pty("check", "--recipe", "llama3.1-8b-eagle3", "--kernel", "skip", cols=60)
    lines = ANSI.sub("", out).splitlines()
    assert lines[:2] == [
        "recipe llama3.1-8b-eagle3, hardware h200: vllm at TP 1,",
        "    max_model_len 8192",
    ]


def test_check_recipe_named_engine_is_checked_even_when_marked_unsupported():
    proc = run("check", "--recipe", "llama3.1-8b-eagle3", "--engine", "tokenspeed", "--json")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert [d["engine"] for d in doc["recipe"]["deployments"]] == ["tokenspeed"]
    (check,) = doc["checks"]
    assert check["engines"] == {"tokenspeed": {"ready": False, "ready_tp": []}}
    # tokenspeed appends NextN to architectures[0] 'LlamaForCausalLM' and has no such class
    assert any(
        f["code"] == "draft.arch_name" and f["severity"] == "error" for f in check["findings"]
    )


def _tiny_recipe(root: Path, **serve: int) -> Path:
    """A user recipe over the tiny base pair (written under ``root``), paths relative to it."""
    base_pair().write(root / "ckpt")
    text = (
        "name: tiny-eagle3\n"
        "target: ckpt/target\n"
        "draft: ckpt/draft\n"
        "speculative:\n  method: eagle3\n  num_speculative_tokens: 2\n"
        "  draft_tensor_parallel_size: 1\n"
        "serve:\n" + "".join(f"  {k}: {v}\n" for k, v in serve.items())
    )
    path = root / "tiny.yaml"
    path.write_text(text)
    return path


def test_check_recipe_user_file_local_checkpoints(tmp_path):
    # tiny pair: 4 heads / 2 KV heads, vocab 640 and draft vocab 128 all divide by TP 2.
    _tiny_recipe(tmp_path, tensor_parallel_size=2, max_model_len=1024)
    proc = run("check", "--recipe", "tiny.yaml", "--kernel", "skip", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    deps = {d["engine"]: d for d in doc["recipe"]["deployments"]}
    assert (deps["vllm"]["tp"], deps["vllm"]["draft_tp"], deps["vllm"]["max_model_len"]) == (
        2,
        1,
        1024,
    )
    # draft_tensor_parallel_size is a vLLM setting: tokenspeed has none
    assert (deps["tokenspeed"]["tp"], deps["tokenspeed"]["draft_tp"]) == (2, None)
    # different draft TP -> two check runs: vLLM's (draft TP 1), tokenspeed's and SGLang's
    # (no draft TP of their own: the target TP)
    assert [sorted(c["engines"]) for c in doc["checks"]] == [["vllm"], ["sglang", "tokenspeed"]]
    vllm = doc["checks"][0]
    assert vllm["engines"]["vllm"]["ready_tp"] == [2]
    # draft TP 1: the draft's embedding is not sharded: 640 rows per rank (target: 640 / 2)
    (row,) = vllm["embed_sharing"]
    assert row["tp"] == 2
    assert row["target_shape"] == [320, 64] and row["draft_sharded_shape"] == [640, 64]
    human = run(
        "check", "--recipe", "tiny.yaml", "--engine", "vllm", "--kernel", "skip", cwd=tmp_path
    )
    assert human.returncode == 0
    assert human.stdout.startswith(
        "recipe tiny-eagle3: vllm at TP 2, draft TP 1, max_model_len 1024\n"
    )
    assert "tokenspeed" not in human.stdout


def test_check_recipe_hardware_profile_and_missing_checkpoints(tmp_path):
    # minimax-m3-eagle3 on mi355x serves amd/MiniMax-M3-MXFP4, bundled since issue #28 item 2:
    # it runs offline. A user recipe naming an unbundled repo, Hub off: one line naming it, exit 2.
    proc = run("check", "--recipe", "minimax-m3-eagle3", "--hardware", "mi355x", "--kernel", "skip")
    assert proc.returncode in (0, 1), proc.stderr
    assert "amd/MiniMax-M3-MXFP4 (snapshot " in proc.stdout
    recipe = tmp_path / "r.yaml"
    recipe.write_text(
        "name: r\ntarget: someone/unbundled-target\ndraft: someone/unbundled-draft\n"
        "speculative: {method: eagle3, num_speculative_tokens: 3}\n"
        "serve: {tensor_parallel_size: 1}\n"
    )
    proc = run("check", "--recipe", str(recipe), "--kernel", "skip", HF_HUB_OFFLINE="1")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "someone/unbundled-target" in proc.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--recipe", "llama3.1-8b-eagle3", "--tp", "2"), "--tp"),
        (("--recipe", "llama3.1-8b-eagle3", "--max-model-len", "10"), "--max-model-len"),
        (("--recipe", "llama3.1-8b-eagle3", "--draft-tp", "1"), "--draft-tp"),
        (("--recipe", "llama3.1-8b-eagle3", "a", "b"), "--recipe"),
        (("--recipe", "llama3.1-8b-eagle3", "--example", "llama3.1-8b-eagle3"), "--recipe"),
        (("--hardware", "h200", "a", "b"), "--hardware needs --recipe"),
        (("--recipe", "llama3.1-8b-eagle3", "--hardware", "b300"), "b300"),
        (("--recipe", "no-such-recipe"), "no-such-recipe"),
    ],
)
def test_check_recipe_bad_input(args, needle):
    proc = run("check", *args, "--kernel", "skip")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert needle in proc.stderr


def test_check_without_pair_names_all_three_ways():
    proc = run("check")
    assert proc.returncode == 2
    for way in ("TARGET and DRAFT", "--example", "--recipe"):
        assert way in proc.stderr


# --------------------------------------------------------------------------- generated pages


def _page_commands(page: str) -> list[str]:
    """Every `recipecli ...` command the page shows (inline code spans and fenced lines; not
    the HTML comment of the first line, and not a bare command name such as `recipecli check`
    used as a noun)."""
    page = re.sub(r"<!--.*?-->", "", page, flags=re.S)
    spans = re.findall(r"`(recipecli [^`]+)`", page)
    fenced = [x for x in page.splitlines() if x.startswith("recipecli ")]
    return [c for c in dict.fromkeys(spans + fenced) if len(shlex.split(c)) > 2]


def _blocks(page: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)\n```", page, flags=re.S)


USER_RECIPE = """\
name: my-llama
title: My Llama
target: meta-llama/Llama-3.1-8B-Instruct
draft: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B
speculative:
  method: eagle3
  num_speculative_tokens: 3
serve:
  tensor_parallel_size: 1
  max_model_len: 8192
  port: 8000
default_hardware: h200
hardware:
  h200:
    vendor: nvidia
    env:
      CUDA_VISIBLE_DEVICES: "0"
  h200x2:
    vendor: nvidia
    args:
      vllm:
        tensor-parallel-size: 2
bench:
  backend: openai-chat
  endpoint: /v1/chat/completions
  dataset_name: random
  random_input_len: 128
  random_output_len: 64
  num_prompts: 10
"""


def _verdicts(page: str) -> dict[tuple[str, str], str]:
    """(hardware, engine) -> ready / not ready, from the page's offline check table."""
    rows = re.findall(
        r"^\| (\S+) \| (vLLM|tokenspeed|SGLang) \| \d+ \| \S+ \| ([^|]+) \|", page, re.M
    )
    return {(h, e): v.strip().strip("*") for h, e, v in rows}


def test_user_recipe_page_commands_run_from_the_page_folder(tmp_path):
    # A user's own recipe (the bundled Llama pair, two hardware profiles) in their own folder.
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "my-llama.yaml").write_text(USER_RECIPE)
    proc = run("docs", "recipes/my-llama.yaml", "-o", "site", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "site" / "my-llama.md").read_text()
    commands = _page_commands(page)
    renders = [c for c in commands if c.startswith("recipecli render ")]
    # per hardware profile (the default needs no --hardware) and engine, naming the file
    # relative to the page
    ref = "../recipes/my-llama.yaml"
    assert renders == [
        f"recipecli render {ref} --engine vllm --what all",
        f"recipecli render {ref} --engine tokenspeed --what all",
        f"recipecli render {ref} --engine sglang --what all",
        f"recipecli render {ref} --engine vllm --hardware h200x2 --what all",
        f"recipecli render {ref} --engine tokenspeed --hardware h200x2 --what all",
        f"recipecli render {ref} --engine sglang --hardware h200x2 --what all",
    ]
    checks = [c for c in commands if c.startswith("recipecli check ")]
    assert checks == [
        f"recipecli check --recipe {ref}",
        f"recipecli check --recipe {ref} --hardware h200x2",
    ]
    assert "recipecli render my-llama " not in page  # the name alone only works when bundled
    assert "in this page's folder" in page
    blocks = _blocks(page)
    assert len(blocks) == 12  # serve + bench, per engine (3), per profile (2)
    verdicts = _verdicts(page)
    # by hand: TP 1 and TP 2 divide the heads (32 / 8 KV) and vocabularies of the pair: vLLM
    # ready on both profiles; tokenspeed cannot load the published draft's architecture
    assert verdicts[("h200", "vLLM")] == verdicts[("h200x2", "vLLM")] == "ready"
    assert verdicts[("h200", "tokenspeed")] == "not ready"
    # SGLang 0.5.23 keeps 'LlamaForCausalLM' for the draft (configs/model_config.py
    # _config_draft_model) and it is not an EAGLE3 draft class (models/llama_eagle3.py EntryClass)
    assert verdicts[("h200", "SGLang")] == "not ready"
    shown = set()
    for cmd in commands:
        argv = shlex.split(cmd)[1:]
        proc = run(*argv, cwd=tmp_path / "site")
        assert "error:" not in proc.stderr, (cmd, proc.stderr)
        if argv[0] == "render":
            assert proc.returncode == 0, (cmd, proc.stderr)
            shown |= {b for b in blocks if b in proc.stdout}
        else:  # check --recipe: the page's verdicts, in full
            hw = argv[argv.index("--hardware") + 1] if "--hardware" in argv else "h200"
            assert proc.returncode == 1, (cmd, proc.stdout)  # tokenspeed is not ready
            for title, engine in (("vLLM", "vllm"), ("tokenspeed", "tokenspeed")):
                word = "READY " if verdicts[(hw, title)] == "ready" else "NOT READY"
                assert re.search(rf"^{engine}\s+{word}", proc.stdout, re.M), (cmd, engine)
            tp = 2 if hw == "h200x2" else 1
            assert f"vllm        READY      at TP {tp}\n" in proc.stdout
    # every command block on the page is printed by one of the page's render commands
    assert shown == set(blocks)


def test_bundled_recipe_page_names_the_recipe(tmp_path):
    proc = run("docs", "llama3.1-8b-eagle3", "-o", "site", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "site" / "llama3.1-8b-eagle3.md").read_text()
    cmds = _page_commands(page)
    assert "recipecli render llama3.1-8b-eagle3 --engine vllm --what all" in cmds
    assert "recipecli check --recipe llama3.1-8b-eagle3" in cmds
    assert "in this page's folder" not in page
    # bundled names work from anywhere
    proc = run("render", "llama3.1-8b-eagle3", "--engine", "vllm", "--what", "all", cwd=tmp_path)
    assert proc.returncode == 0


# --------------------------------------------------------------------------- hints


def test_convert_hint_names_hf_download(tmp_path):
    snap = REPO / "recipecli" / "data" / "examples" / "eagle3-llama3.1-instruct-8b.draft.json"
    proc = run("convert", str(snap), str(tmp_path / "out"), "--to", "eagle3")
    assert proc.returncode == 2
    assert "hf download REPO --local-dir DIR" in proc.stderr
    assert "huggingface-cli" not in proc.stderr
    assert not (tmp_path / "out").exists()


def _shipped_text_files() -> list[Path]:
    roots = [REPO / "recipecli", REPO / "templates", REPO / "kernels"]
    skip = {"catalogs"}  # the engines' own flag catalogs (data, not recipecli's words)
    return [
        p
        for root in roots
        for p in root.rglob("*")
        if p.suffix in (".py", ".yaml", ".j2", ".md", ".json")
        and not skip & set(p.parts)
        and "__pycache__" not in p.parts
    ]


def test_no_huggingface_cli_in_anything_recipecli_prints():
    hits = [str(p) for p in _shipped_text_files() if "huggingface-cli" in p.read_text()]
    assert hits == []


def test_install_hints_match_the_readme_install_from_a_clone():
    import tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    readme = (REPO / "README.md").read_text()
    assert 'pip install -e ".[' in readme or '-e ".[' in readme
    bad, seen = [], set()
    for p in _shipped_text_files():
        for m in re.finditer(r"pip install [^\n`]*", p.read_text()):
            text = m.group(0)
            if "recipecli[" in text:
                bad.append(f"{p}: {text}")
            for extra in re.findall(r'-e \\?"\.\[([a-z,]+)\]', text):
                seen.update(extra.split(","))
    assert bad == []
    assert {"kernels", "plot"} <= seen <= set(extras)
    from recipecli.hints import install_hint

    assert install_hint("kernels").startswith('pip install -e ".[kernels]"')
    with pytest.raises(KeyError):
        install_hint("no-such-extra")


def test_help_of_check_shows_recipe_examples():
    proc = run("check", "--help")
    assert proc.returncode == 0
    assert "--recipe NAME_OR_FILE" in proc.stdout
    assert "recipecli check --recipe llama3.1-8b-eagle3" in proc.stdout


def test_check_recipe_and_hardware_complete():
    # minimax-m3-eagle3.yaml declares the hardware profiles b200 and mi355x
    line = "recipecli check --recipe minimax-m3-eagle3 --hardware "
    env = {"COMP_WORDS": line, "COMP_CWORD": "5", "_RECIPECLI_COMPLETE": "bash_complete"}
    proc = run(**env)
    assert proc.stdout.split() == ["plain,b200", "plain,mi355x"]
    env = {"COMP_WORDS": "recipecli check --recipe lla", "COMP_CWORD": "3"}
    proc = run(**env, _RECIPECLI_COMPLETE="bash_complete")
    assert proc.stdout.split() == ["plain,llama3.1-8b-eagle3"]


def _example_stdout(*extra: str) -> tuple[int, str]:
    """``recipecli check --example llama3.1-8b-eagle3 ...`` as README's reader runs it: piped
    (no colour), no COLUMNS (no wrapping), on a fresh machine (an empty kernel cache of its own,
    so a ``--kernel on`` here records nothing other tests read)."""
    import os
    import subprocess
    import sys
    import tempfile

    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR")}
    env["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="recipecli-readme-")
    proc = subprocess.run(
        [sys.executable, "-m", "recipecli", "check", "--example", "llama3.1-8b-eagle3", *extra],
        capture_output=True,
        text=True,
        env=env,
    )
    return proc.returncode, proc.stdout


def _readme() -> str:
    from pathlib import Path

    return (Path(__file__).resolve().parents[2] / "README.md").read_text()


def test_readme_set_up_lines_are_the_examples():
    """README's set-up block is two commands, as .ci/run runs them: install and the vLLM check of
    the example (exit 0), then the tests; the all-engine showcase (exit 1) is its own block."""
    import re

    block = re.search(r"## Set-up.*?```bash\n(.*?)```", _readme(), re.S)
    assert block, "README lost its set-up block"
    lines = block.group(1).splitlines()
    assert len(lines) == 2
    assert lines[0].endswith(
        "&& recipecli check --example llama3.1-8b-eagle3 --engine vllm --kernel on"
    )
    assert lines[1] == "python -m pytest -q"
    showcase = re.search(r"NOT READY showcase:\n\n```bash\n(.*?)```", _readme(), re.S)
    assert showcase, "README lost its showcase command"
    assert (
        showcase.group(1).split("#")[0].rstrip() == "recipecli check --example llama3.1-8b-eagle3"
    )


def test_readme_quick_start_output_is_what_the_example_prints():
    # README shows the first set-up command's output verbatim (piped: no colour, no wrapping)
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    import re

    block = re.search(r"What it prints.*?```text\n(.*?)```", _readme(), re.S)
    assert block, "README lost its quick-start output block"
    rc, out = _example_stdout("--engine", "vllm", "--kernel", "on")  # README's first command
    assert rc == 0
    assert out == block.group(1)
    assert out.splitlines()[-1] == "exit 0: ready on vllm at TP 1, 2, 4, 8"


def test_readme_showcase_output_is_what_the_example_prints():
    """The showcase's sample: its verdicts and errors verbatim, "  ..." for the rest, then its
    last line, which names the exit code (1: tokenspeed and SGLang cannot load the draft)."""
    import re

    block = re.search(r"names the exit code:\n\n```text\n(.*?)```", _readme(), re.S)
    assert block, "README lost its showcase output block"
    head, tail = block.group(1).split("  ...\n")
    rc, out = _example_stdout("--kernel", "skip")
    assert rc == 1
    start = out.index("vllm        READY")
    assert out[start:].startswith(head)
    assert tail == "exit 1: not ready on tokenspeed, sglang (errors above)\n"
    assert out.endswith("\n\n" + tail)


def test_debug_keeps_the_exit_code_of_bad_input():
    # README: exit 2 is bad input; --debug adds the traceback but must not turn it into 1
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "recipecli", "--debug", "check", "/nonexistent/t", "/nonexistent/d"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert "Traceback" in proc.stderr and proc.stderr.rstrip().splitlines()[-1].startswith(
        "recipecli"
    )
