"""The `recipecli` command line: a thin click layer over the library.

The only package that imports click. Its modules:

- :mod:`~recipecli.cli.app`: the lazy click group (:data:`COMMANDS`, imported on first use, so
  ``recipecli --help`` imports neither torch nor the heavy library modules) and :func:`main`,
  which maps the error family to exit codes (0 ok, 1 findings of severity error, 2 bad input);
- :mod:`~recipecli.cli.params`: click ``ParamType``\\ s that parse option strings (``--tp 1,2,4,8``,
  ``--aux-ids``, ``--max-shard-size``, …) into the values the library takes;
- :mod:`~recipecli.cli.terminal`: printing on the terminal (JSON documents, colour and width
  read from the running command);
- :mod:`~recipecli.cli.completion`: the shell-completion callbacks and script classes;
- :mod:`~recipecli.cli.hub_option`: the ``--timeout`` option of commands that reach the Hub;
- :mod:`recipecli.cli.commands`: one module per command. A command parses its options, calls one
  library function, prints its result (text or JSON) and returns an exit code; errors are raised
  as the library's :class:`~recipecli.errors.RecipeCliError` family and mapped in :func:`main`.
"""

from recipecli.cli.app import COMMANDS, GLOBAL_FLAGS, LazyGroup, cli, hoist_global_flags, main

__all__ = ["COMMANDS", "GLOBAL_FLAGS", "LazyGroup", "cli", "hoist_global_flags", "main"]
