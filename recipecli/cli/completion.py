"""Shell completion: the ``shell_complete=`` callbacks the commands use (recipe names, hardware
profiles, example names, files) and the completion script classes ``recipecli completion`` prints.

Completion runs the CLI with ``_RECIPECLI_COMPLETE`` set; the callbacks here only glob the
bundled recipe directory or read one YAML file, so a TAB costs a fraction of a second and never
imports torch.

bash: click's script registers ``complete -o nosort -F …`` and asks for filename completion
(``compopt -o default``) only when a callback returns a ``file`` item. Arguments without a
callback (plain strings) then complete to nothing, so the script printed here registers
``complete -o nosort -o default -F …``: whenever recipecli offers no candidates, bash falls back
to ordinary filename completion.
"""

from __future__ import annotations

from collections.abc import Callable

import click
from click.shell_completion import BashComplete, CompletionItem, get_completion_class

from recipecli.errors import RecipeCliError, UsageError

PATH_CHARS = ("/", ".", "~")
"""A partial word starting with one of these is a path, never a bundled recipe name."""


def _file_item(incomplete: str) -> list[CompletionItem]:
    return [CompletionItem(incomplete, type="file")]


def complete_recipe(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """Complete a RECIPE argument: bundled recipe names starting with ``incomplete``; a path-like
    word (``./``, ``/``, ``~``) or one no bundled name starts with completes as a file.

    Args:
        ctx: click context (unused).
        param: the parameter (unused).
        incomplete: the partial word.

    Returns:
        completion items (``plain`` names, or one ``file`` item for the shell's file completion).
    """
    from recipecli.recipes.loader import bundled_names

    if incomplete.startswith(PATH_CHARS):
        return _file_item(incomplete)
    names = [n for n in bundled_names() if n.startswith(incomplete)]
    return [CompletionItem(n) for n in names] or _file_item(incomplete)


def _recipe_refs(ctx: click.Context) -> dict[str, str]:
    """Argument name -> value of the command's RECIPE-like arguments on the line so far.

    An option still waiting for its value (``--hardware <TAB>``) stops click's resilient parse
    before the positional arguments are bound; they are then the plain words left in
    ``ctx.args``, taken by the unbound arguments in declaration order.
    """
    bound = {k: v for k, v in ctx.params.items() if isinstance(v, str) and v}
    words = iter(a for a in ctx.args if not a.startswith("-"))
    for param in ctx.command.params:
        if isinstance(param, click.Argument) and param.name and param.name not in bound:
            word = next(words, None)
            if word is None:
                break
            bound[param.name] = word
    return bound


def hardware_completer(
    *recipe_params: str,
) -> Callable[[click.Context, click.Parameter, str], list[CompletionItem]]:
    """A ``shell_complete`` callback for a hardware option: the profile names of the recipe in
    the first of ``recipe_params`` (argument names, e.g. ``"recipe"``; ``diff`` would pass
    ``"recipe_b", "recipe_a"`` for ``--vs-hardware``) that is on the command line.

    Args:
        recipe_params: names of the arguments holding the recipe, in order of preference.

    Returns:
        ``callback(ctx, param, incomplete) -> list[CompletionItem]``: ``plain`` items, one per
        matching profile; nothing when no recipe is given or it cannot be read.
    """

    def complete(
        ctx: click.Context, param: click.Parameter, incomplete: str
    ) -> list[CompletionItem]:
        from recipecli.recipes.loader import load_recipe

        refs = _recipe_refs(ctx)
        ref = next((refs[n] for n in recipe_params if n in refs), None)
        if ref is None:
            return []
        try:
            recipe = load_recipe(ref, validate_schema=False)
        except RecipeCliError:
            return []
        profiles = recipe.get("hardware")
        if not isinstance(profiles, dict):
            return []
        return [CompletionItem(str(n)) for n in profiles if str(n).startswith(incomplete)]

    return complete


complete_hardware = hardware_completer("recipe")
"""``render --hardware``: the profiles of the RECIPE argument (see :func:`hardware_completer`)."""


def complete_example(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """Complete ``check --example``: :func:`recipecli.examples.list_example_names`.

    Returns:
        ``plain`` items, one per matching example.
    """
    from recipecli.examples import list_example_names

    return [CompletionItem(n) for n in list_example_names() if n.startswith(incomplete)]


def complete_source(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """Complete a SOURCE (directory, config.json, snapshot .json or Hub repo id) as a file.

    Returns:
        one ``file`` item (the shell completes paths; repo ids are typed by hand).
    """
    return _file_item(incomplete)


class Bash(BashComplete):
    """click's bash completion with ``-o default``: filename completion whenever recipecli
    offers no candidate (see the module docstring)."""

    source_template = BashComplete.source_template.replace(
        "complete -o nosort -F", "complete -o nosort -o default -F"
    )


def completion_class(shell: str) -> type:
    """The completion class for ``shell`` (bash: :class:`Bash`; others: click's).

    Raises:
        UsageError: a shell click does not support.
    """
    if shell == "bash":
        return Bash
    cls = get_completion_class(shell)
    if cls is None:  # pragma: no cover - click ships all three
        raise UsageError(f"no completion support for {shell}")
    return cls
