"""Jinja2 output templates for ``recipecli render`` (``templates/*.j2``).

Templates are rendered in a :class:`~jinja2.sandbox.SandboxedEnvironment` with
:class:`~jinja2.StrictUndefined`; recipe values only ever reach them as context DATA (already
shell-quoted text), never as template source, so a recipe value like ``{{ 7*7 }}`` renders
literally. ``--templates DIR`` puts DIR in front of the bundled templates (same file names).
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from recipecli.errors import RecipeError, UsageError


def bundled_templates_dir() -> Path:
    """Directory of the bundled templates (``recipecli.templates`` = repo ``templates/``)."""
    return Path(str(resources.files("recipecli.templates")))


def render_template(name: str, context: Mapping[str, Any], *, user_dir: str | None = None) -> str:
    """Render template ``name`` with ``context``.

    Args:
        name: template file name, e.g. ``shell.sh.j2``.
        context: template variables (plain data).
        user_dir: ``--templates DIR``: searched before the bundled templates.

    Returns:
        the rendered text.

    Raises:
        UsageError: ``user_dir`` is not a directory.
        RecipeError: the template is missing, invalid or uses an undefined variable.
    """
    import jinja2
    from jinja2.sandbox import SandboxedEnvironment

    search = [str(bundled_templates_dir())]
    if user_dir is not None:
        if not Path(user_dir).is_dir():
            raise UsageError("--templates is not a directory", path=user_dir)
        search.insert(0, user_dir)
    env = SandboxedEnvironment(
        loader=jinja2.FileSystemLoader(search),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
    )
    try:
        return env.get_template(name).render(**context)
    except jinja2.TemplateNotFound:
        raise RecipeError(f"template {name} not found", path=" or ".join(search)) from None
    except jinja2.TemplateError as exc:
        where = getattr(exc, "filename", None) or name
        line = getattr(exc, "lineno", None)
        raise RecipeError(
            f"template error: {exc.message}", path=f"{where}:{line}" if line else where
        ) from None
