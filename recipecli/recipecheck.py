"""What a recipe deploys, for `recipecli check --recipe` and the check section of `recipecli docs`.

A recipe's serve command, once rendered for an engine and a hardware profile, fixes the pair and
the serving settings `check` needs: the target (the served model), the draft, the target TP size,
vLLM's ``draft_tensor_parallel_size`` and ``--max-model-len``. Both the ``check --recipe`` command
and the generated recipe pages read them here, from the same rendered command ``recipecli render``
prints, so the page's verdicts and the command's report cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from recipecli.recipes.loader import Recipe
from recipecli.recipes.render import Rendered

#: Serve flags that carry the target's tensor-parallel size (vLLM, tokenspeed; SGLang 0.5.23
#: --tp-size, arg_groups/fields/parallel.py tp_size).
TP_FLAGS: tuple[str, ...] = ("--tensor-parallel-size", "--tp", "--attn-tp-size", "--tp-size")
#: Serve flags that carry the serving length (SGLang: --context-length, fields/model.py).
LENGTH_FLAGS: tuple[str, ...] = ("--max-model-len", "--context-length")


@dataclass(frozen=True)
class Deployment:
    """One engine's deployment of a recipe on one hardware profile.

    Attributes:
        engine: ``vllm`` or ``tokenspeed``.
        hardware: the hardware profile, or None for a recipe without profiles.
        target: the target SOURCE (repo id or path) as the recipe names it.
        draft: the draft SOURCE.
        tp: target tensor-parallel size of the serve command (1 when it sets none).
        draft_tp: vLLM ``draft_tensor_parallel_size`` from ``--speculative-config`` (None: the
            target TP; always None for tokenspeed, which has no separate draft TP).
        max_model_len: ``--max-model-len`` of the serve command (None: the target's
            ``max_position_embeddings``).
    """

    engine: str
    hardware: str | None
    target: str
    draft: str
    tp: int
    draft_tp: int | None
    max_model_len: int | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def settings(self) -> tuple[str, str, int, int | None, int | None]:
        """What ``check`` runs on: (target, draft, tp, draft_tp, max_model_len)."""
        return (self.target, self.draft, self.tp, self.draft_tp, self.max_model_len)


def pair_of(recipe: Recipe, hardware: str | None) -> tuple[str, str]:
    """(target, draft) of ``recipe`` on ``hardware``: the profile's own, else the recipe's."""
    prof = ((recipe.get("hardware") or {}).get(hardware) or {}) if hardware else {}
    return (
        str(prof.get("target") or recipe.get("target")),
        str(prof.get("draft") or recipe.get("draft")),
    )


def _flag(rendered: Rendered, names: Sequence[str]) -> Any:
    flags = dict(rendered.flags)
    return next((flags[n] for n in names if n in flags), None)


def deployment(recipe: Recipe, serve: Rendered) -> Deployment:
    """The :class:`Deployment` of a rendered serve command of ``recipe``.

    Args:
        recipe: the recipe ``serve`` was rendered from.
        serve: :func:`recipecli.recipes.render.render_command` with ``what="serve"``.
    """
    target, draft = pair_of(recipe, serve.hardware)
    tp = int(_flag(serve, TP_FLAGS) or 1)
    mml = _flag(serve, LENGTH_FLAGS)
    draft_tp = None
    spec = _flag(serve, ("--speculative-config",))
    if isinstance(spec, Mapping):  # vLLM's --speculative-config; tokenspeed has no draft TP
        value = spec.get("draft_tensor_parallel_size")
        draft_tp = int(value) if value is not None else None
    return Deployment(
        serve.engine,
        serve.hardware,
        target,
        draft,
        tp,
        draft_tp,
        int(mml) if mml is not None else None,
    )


def unsupported_engines(recipe: Recipe) -> dict[str, str]:
    """``{engine: reason}`` of the recipe's ``unsupported`` section: engines that cannot serve
    its pair (``recipecli render`` refuses them without ``--force``)."""
    section = recipe.get("unsupported") or {}
    if not isinstance(section, Mapping):
        return {}
    return {str(e): str(r) for e, r in section.items() if r}


def recipe_deployments(
    recipe: Recipe, engines: Sequence[str], hardware: str | None = None
) -> list[Deployment]:
    """Render ``recipe``'s serve command for each engine on ``hardware`` (default: the recipe's
    ``default_hardware``) and read its deployment. An engine the recipe marks ``unsupported``
    is rendered anyway (``force``): its deployment is what the recipe describes.

    Raises:
        RecipeError, UsageError: the recipe does not render (unknown hardware profile, lint
            errors), as ``recipecli render`` reports them.
    """
    from recipecli.recipes.render import render_command

    unsupported = unsupported_engines(recipe)
    return [
        deployment(
            recipe,
            render_command(recipe, e, hardware=hardware, what="serve", force=e in unsupported),
        )
        for e in engines
    ]


def group_deployments(deps: Sequence[Deployment]) -> list[list[Deployment]]:
    """Deployments that check the same thing (same pair, TP, draft TP, max_model_len), together:
    one ``check`` run each, its engines in the order given."""
    groups: dict[tuple[Any, ...], list[Deployment]] = {}
    for d in deps:
        groups.setdefault(d.settings, []).append(d)
    return list(groups.values())


def describe(group: Sequence[Deployment]) -> str:
    """``vllm and tokenspeed at TP 4, draft TP 1, max_model_len 32768`` (one line)."""
    d = group[0]
    engines = [x.engine for x in group]
    names = engines[0] if len(engines) == 1 else ", ".join(engines[:-1]) + " and " + engines[-1]
    text = f"{names} at TP {d.tp}"
    if d.draft_tp is not None:
        text += f", draft TP {d.draft_tp}"
    mml = d.max_model_len if d.max_model_len is not None else "the target's default"
    return f"{text}, max_model_len {mml}"
