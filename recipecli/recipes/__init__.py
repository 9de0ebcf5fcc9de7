"""Recipes: one engine-neutral YAML file -> correct vLLM / tokenspeed / SGLang serve, bench and
eval commands (``recipecli render``), checked by ``recipecli lint``.

The flow, load -> validate -> resolve -> argv -> text, one module per step: :mod:`.loader` (safe
YAML, line numbers), :mod:`.schema` (JSON Schema + validator) and :mod:`.lint` (findings; render
refuses a recipe with lint errors), :mod:`.resolve` (the layers merged into one set of flags),
:mod:`.argv` (serve / bench / eval argv, :class:`Rendered`), :mod:`.text` (the one shell formatter,
the ``vllm-config`` YAML); :mod:`.render` runs them (:func:`render_command`, :func:`render_all`).
Shared below them: :mod:`.engines` (per-engine flag spellings and rules, keyed by
:data:`recipecli.engines.ENGINES`), :mod:`.overrides` (every config-override source and its one
placement rule, read by resolve and lint alike), :mod:`.sets` (``--set`` typing), :mod:`.values`
(argv values, the one JSON parser), :mod:`.targets` (target config for the overrides),
:mod:`.catalog` (flag catalogs), :mod:`.templating` (Jinja2 sandbox). Nothing here imports torch.
"""

from recipecli.recipes.loader import Recipe, bundled_names, load_recipe
from recipecli.recipes.render import Rendered, format_shell, render_all, render_command

__all__ = [
    "Recipe",
    "Rendered",
    "bundled_names",
    "format_shell",
    "load_recipe",
    "render_all",
    "render_command",
]
