"""Ctrl-C during start-up (issue #29, item 4): a SIGINT while ``recipecli.__main__`` (the console
script's and ``python -m recipecli``'s entry) is still importing the CLI exits 130 with the one
line "recipecli: interrupted"; importing the library installs no signal handler."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest
from hostile_helpers import one_error_line

# A subprocess that sends itself SIGINT when the module ``{name}`` is first imported, then runs
# the entry point as the console script does (``from recipecli.__main__ import main; main()``).
_SIGINT_ON_IMPORT = (
    "import builtins, os, signal, sys\n"
    "real = builtins.__import__\n"
    "def hook(name, *a, **k):\n"
    "    if name == {name!r} and name not in sys.modules: os.kill(os.getpid(), signal.SIGINT)\n"
    "    return real(name, *a, **k)\n"
    "builtins.__import__ = hook\n"
    "sys.argv = ['recipecli', 'render', '--list']\n"
    "from recipecli.__main__ import main\n"
    "main()\n"
)


@pytest.mark.parametrize("name", ["click", "recipecli.cli.app", "recipecli.errors", "json"])
def test_ctrl_c_while_the_cli_is_imported_is_one_line_130(run, name):
    proc = run(code=_SIGINT_ON_IMPORT.format(name=name))
    assert proc.returncode == 130, proc.stderr
    assert one_error_line(proc.stderr) == "recipecli: interrupted"
    assert proc.stdout == ""


def test_python_m_recipecli_takes_the_same_entry(run):
    # `python -m recipecli` runs recipecli/__main__.py as __main__: the same guarded main
    code = _SIGINT_ON_IMPORT.format(name="click").replace(
        "from recipecli.__main__ import main\nmain()\n",
        "import runpy; runpy.run_module('recipecli', run_name='__main__')\n",
    )
    proc = run(code=code)
    assert proc.returncode == 130 and one_error_line(proc.stderr) == "recipecli: interrupted"


def test_library_import_installs_no_handler():
    code = (
        "import signal, recipecli, recipecli.__main__, recipecli.cli, recipecli.report\n"
        "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout == "True\n", out.stderr


def test_handler_is_the_default_again_once_the_cli_runs(monkeypatch):
    import recipecli.__main__ as entry
    import recipecli.cli.app as app

    seen = []
    monkeypatch.setattr(app, "main", lambda: seen.append(signal.getsignal(signal.SIGINT)))
    entry.main()
    assert seen == [signal.default_int_handler]


def test_an_ignored_sigint_stays_ignored(monkeypatch):
    import recipecli.__main__ as entry
    import recipecli.cli.app as app

    seen = []
    monkeypatch.setattr(app, "main", lambda: seen.append(signal.getsignal(signal.SIGINT)))
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        entry.main()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert seen == [signal.SIG_IGN]


def _commands() -> list[str]:
    from recipecli.cli.app import COMMANDS

    return list(COMMANDS)


# Ctrl-C while the command's own module is imported (the lazy group imports it on first use)
_SIGINT_ON_COMMAND = (
    "import importlib, os, signal, sys\n"
    "real = importlib.import_module\n"
    "def hook(name, *a):\n"
    "    if name.startswith('recipecli.cli.commands.'): os.kill(os.getpid(), signal.SIGINT)\n"
    "    return real(name, *a)\n"
    "importlib.import_module = hook\n"
    "sys.argv = ['recipecli', {command!r}, '--help']\n"
    "from recipecli.__main__ import main\n"
    "main()\n"
)


@pytest.mark.parametrize("command", _commands())
def test_ctrl_c_while_each_command_is_imported_is_one_line_130(run, command):
    proc = run(code=_SIGINT_ON_COMMAND.format(command=command))
    assert proc.returncode == 130, proc.stderr
    assert one_error_line(proc.stderr) == "recipecli: interrupted"
    assert proc.stdout == ""
