"""One module per CLI command, each exposing a click ``command`` (registered by name in
:data:`recipecli.cli.app.COMMANDS` and imported only when that command runs).

A command parses its options (click types, :mod:`recipecli.cli.params`), calls one library
function, prints its result — the library's text, or the result through
:func:`recipecli.cli.terminal.print_json` with ``--json`` — and returns its exit code (0 ok,
1 the checked thing has errors). Bad input is raised as :class:`recipecli.errors.RecipeCliError`
and mapped to exit 2 in :func:`recipecli.cli.main`. Heavy libraries are imported inside the
command body, never at module level (``--help`` and shell completion import the module).
"""
