"""Shell completion: recipe names, --hardware of the given recipe, check --example, files, and the
bash script's filename fallback (`-o default`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from click.shell_completion import ShellComplete

from recipecli.cli import cli

BUNDLED = ["gpt-oss-120b-eagle3", "llama3.1-8b-eagle3", "minimax-m3-eagle3", "qwen3-30b-a3b-eagle3"]


def complete(args: list[str], incomplete: str) -> list[tuple[str, str]]:
    """(type, value) of the completions click computes for ``recipecli ARGS INCOMPLETE``."""
    comp = ShellComplete(cli, {}, "recipecli", "_RECIPECLI_COMPLETE")
    return [(c.type, c.value) for c in comp.get_completions(args, incomplete)]


@pytest.mark.parametrize("cmd", ["render", "lint"])
def test_recipe_names(cmd):
    assert complete([cmd], "") == [("plain", n) for n in BUNDLED]
    assert complete([cmd], "m") == [("plain", "minimax-m3-eagle3")]
    assert complete([cmd], "llama3.1-8b-eagle3") == [("plain", "llama3.1-8b-eagle3")]


def test_lint_completes_further_recipes():
    assert complete(["lint", "llama3.1-8b-eagle3"], "q") == [("plain", "qwen3-30b-a3b-eagle3")]


@pytest.mark.parametrize("word", ["./my", "/tmp/r", "~/x", "zz"])
def test_recipe_paths_fall_back_to_files(word):
    assert complete(["render"], word) == [("file", word)]


@pytest.mark.parametrize(
    "args",
    [
        ["render", "minimax-m3-eagle3", "--hardware"],
        ["render", "--engine", "vllm", "minimax-m3-eagle3", "--hardware"],
        ["render", "minimax-m3-eagle3", "--engine", "tokenspeed", "--hardware"],
    ],
)
def test_hardware_of_the_given_recipe(args):
    # minimax-m3-eagle3.yaml defines the profiles b200 and mi355x, in that order
    assert complete(args, "") == [("plain", "b200"), ("plain", "mi355x")]
    assert complete(args, "mi") == [("plain", "mi355x")]


def test_hardware_of_a_recipe_file(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text("name: r\nhardware:\n  h100: {vendor: nvidia}\n  mi300x: {vendor: amd}\n")
    assert complete(["render", str(path), "--hardware"], "") == [
        ("plain", "h100"),
        ("plain", "mi300x"),
    ]


@pytest.mark.parametrize(
    "args",
    [
        ["render", "--hardware"],
        ["render", "no-such-recipe", "--hardware"],
        ["render", "/nonexistent/r.yaml", "--hardware"],
    ],
)
def test_hardware_without_a_readable_recipe_is_empty(args):
    assert complete(args, "") == []


def test_check_example_names():
    from recipecli.examples import list_example_names

    assert complete(["check", "--example"], "") == [("plain", n) for n in list_example_names()]
    assert complete(["check", "--example"], "ll") == [("plain", "llama3.1-8b-eagle3")]
    assert complete(["check", "--example"], "zz") == []


def test_render_paths():
    assert complete(["render", "x", "--target-config"], "./c") == [("file", "./c")]
    assert complete(["render", "x", "--templates"], "") == [("dir", "")]


def test_bash_script_falls_back_to_filenames():
    from recipecli.cli.completion import completion_class

    src = completion_class("bash")(cli, {}, "recipecli", "_RECIPECLI_COMPLETE").source()
    assert "complete -o nosort -o default -F _recipecli_completion recipecli" in src


def test_completion_command_prints_scripts():
    for shell, needle in (
        ("bash", "-o default"),
        ("zsh", "compdef _recipecli_completion recipecli"),
        ("fish", "complete --no-files --command recipecli"),
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "recipecli", "completion", shell],
            capture_output=True,
            text=True,
            check=True,
        )
        assert needle in proc.stdout


def test_tab_through_the_cli_protocol():
    """What bash does on TAB: run recipecli with COMP_WORDS/COMP_CWORD and _RECIPECLI_COMPLETE."""
    env = dict(
        os.environ,
        COMP_WORDS="recipecli render minimax-m3-eagle3 --hardware ",
        COMP_CWORD="4",
        _RECIPECLI_COMPLETE="bash_complete",
    )
    proc = subprocess.run(
        [sys.executable, "-m", "recipecli"], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["plain,b200", "plain,mi355x"]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_registers_default_fallback(tmp_path):
    """Source the script in a real bash and read back the registration (`complete -p`)."""
    from recipecli.cli.completion import completion_class

    src = completion_class("bash")(cli, {}, "recipecli", "_RECIPECLI_COMPLETE").source()
    script = tmp_path / "c.bash"
    script.write_text(src + "\ncomplete -p recipecli\n")
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "-o default" in proc.stdout and "-F _recipecli_completion" in proc.stdout


def test_hardware_completer_for_a_two_recipe_command(tmp_path):
    """The diff-shaped case: --vs-hardware completes the profiles of B, else of A."""
    import click

    from recipecli.cli.completion import complete_recipe, hardware_completer

    other = tmp_path / "o.yaml"
    other.write_text("name: o\nhardware:\n  h100: {vendor: nvidia}\n")

    @click.command()
    @click.argument("recipe_a", shell_complete=complete_recipe)
    @click.argument("recipe_b", required=False, shell_complete=complete_recipe)
    @click.option("--hardware", shell_complete=hardware_completer("recipe_a"))
    @click.option("--vs-hardware", shell_complete=hardware_completer("recipe_b", "recipe_a"))
    def two(recipe_a, recipe_b, hardware, vs_hardware):  # pragma: no cover - never invoked
        pass

    def got(args):
        comp = ShellComplete(two, {}, "two", "_TWO_COMPLETE")
        return [c.value for c in comp.get_completions(args, "")]

    assert got(["minimax-m3-eagle3", str(other), "--hardware"]) == ["b200", "mi355x"]
    assert got(["minimax-m3-eagle3", str(other), "--vs-hardware"]) == ["h100"]
    assert got(["minimax-m3-eagle3", "--vs-hardware"]) == ["b200", "mi355x"]
    assert got(["--vs-hardware"]) == []
