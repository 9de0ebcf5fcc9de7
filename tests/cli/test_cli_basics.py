"""CLI plumbing: --version, --help with examples, completion, exit codes, no torch on --help."""

from __future__ import annotations

import subprocess
import sys

from recipecli import __version__
from recipecli.cli import COMMANDS


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recipecli", *args], capture_output=True, text=True, env=env
    )


def test_version():
    proc = run("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"recipecli, version {__version__}"


def test_help_lists_every_command_with_an_example():
    proc = run("--help")
    assert proc.returncode == 0
    for name, (_, _, example) in COMMANDS.items():
        assert name in proc.stdout
        assert example.split()[0] in ("recipecli", "eval")
    assert "recipecli check --example llama3.1-8b-eagle3" in proc.stdout


def test_help_does_not_import_torch():
    code = "import sys\nfrom recipecli.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\nprint('torch' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.stdout.strip().endswith("False")


def test_unknown_command_is_usage_error():
    proc = run("frobnicate")
    assert proc.returncode == 2
    assert "No such command" in proc.stderr


def test_bad_source_one_line_exit_2_no_traceback():
    proc = run("inspect", "/definitely/not/here")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert "/definitely/not/here" in proc.stderr and "Traceback" not in proc.stderr


def test_debug_shows_traceback():
    proc = run("--debug", "inspect", "/definitely/not/here")
    assert proc.returncode != 0
    assert "Traceback" in proc.stderr


def test_bash_completion_script():
    proc = run("completion", "bash")
    assert proc.returncode == 0
    assert "_RECIPECLI_COMPLETE" in proc.stdout


def test_check_usage_errors():
    assert run("check").returncode == 2
    proc = run("check", "--example", "llama3.1-8b-eagle3", "--tp", "1,x")
    assert proc.returncode == 2 and "--tp" in proc.stderr
    proc = run("check", "--example", "nope")
    assert proc.returncode == 2 and "llama3.1-8b-eagle3" in proc.stderr


def test_library_output_helpers_import_no_click():
    # click belongs to recipecli/cli/ only: the library's JSON and styling helpers (imported by
    # report and docsgen) must not pull it in
    code = "import sys, recipecli.output\nprint('click' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


def test_paint_writes_ecma48_sgr_codes():
    from recipecli.output import paint

    # ECMA-48 SGR: 31 red, 32 green, 33 yellow, 36 cyan, 1 bold, 2 dim, 0 reset (what
    # click.style(fg=..., bold=True) writes, so the output is what it was through click)
    assert paint("READY", "ok", True) == "\x1b[32m\x1b[1mREADY\x1b[0m"
    assert paint("NOT READY", "error", True) == "\x1b[31m\x1b[1mNOT READY\x1b[0m"
    assert paint("warnings (1):", "warning", True) == "\x1b[33m\x1b[1mwarnings (1):\x1b[0m"
    assert paint("note", "info", True) == "\x1b[36mnote\x1b[0m"
    assert paint("vllm.x", "code", True) == "\x1b[1mvllm.x\x1b[0m"
    assert paint("x", "dim", True) == "\x1b[2mx\x1b[0m"
    assert paint("READY", "ok", False) == "READY"
    assert paint("", "ok", True) == ""


def test_emit_json_and_print_json_write_the_same_document(capsys):
    from recipecli.cli.terminal import print_json
    from recipecli.output import emit_json

    doc = {"b": float("inf"), "a": (1, 2.5), "é": "ü"}
    emit_json(doc)
    library = capsys.readouterr().out
    print_json(doc)
    assert capsys.readouterr().out == library
    # key order kept, inf -> null (strict JSON), non-ASCII kept, indent 2, one trailing newline
    assert library == '{\n  "b": null,\n  "a": [\n    1,\n    2.5\n  ],\n  "é": "ü"\n}\n'


def test_help_of_every_command_imports_no_heavy_module():
    # each command module is imported for its --help (and on every TAB of completion): the
    # heavy libraries are imported inside the command body, when it runs
    code = (
        "import sys\nfrom recipecli.cli import COMMANDS, main\n"
        "for name in COMMANDS:\n"
        "    try:\n        main([name, '--help'])\n    except SystemExit:\n        pass\n"
        "print(sorted(m for m in ('torch', 'triton', 'numpy', 'matplotlib') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"


def test_commands_do_not_import_each_other():
    # one module per command: shared CLI code lives in recipecli/cli/ (params, terminal,
    # completion, hub_option), never in another command's module; nor does any import the app
    # (`completion` reads the group it prints the script of from click's context)
    import ast
    from pathlib import Path

    commands = Path(__file__).resolve().parents[2] / "recipecli" / "cli" / "commands"
    offenders = []
    for path in sorted(commands.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] if node.level == 0 else [f".{node.module}"]
            elif isinstance(node, ast.ImportFrom):
                names = ["."]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                if name.startswith(("recipecli.cli.commands", ".")):
                    offenders.append(f"{path.name}: {name}")
                if name in ("recipecli.cli", "recipecli.cli.app"):
                    offenders.append(f"{path.name}: {name}")
    assert offenders == []
