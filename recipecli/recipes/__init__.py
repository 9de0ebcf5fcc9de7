"""Recipes: one engine-neutral YAML file -> correct vLLM / tokenspeed serve, bench and eval
commands (``recipecli render``), checked by ``recipecli lint``.

Layout: :mod:`.loader` (safe YAML, line numbers), :mod:`.schema` (JSON Schema + validator),
:mod:`.engines` (data tables), :mod:`.render` (layering, argv, :func:`.render.format_shell`),
:mod:`.targets` (target config for ``text_overrides``), :mod:`.catalog` (flag catalogs),
:mod:`.lint` (findings), :mod:`.templating` (Jinja2 sandbox). Nothing here imports torch.
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
