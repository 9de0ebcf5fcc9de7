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
from typing import TYPE_CHECKING, Any

from recipecli.errors import RecipeError, UsageError
from recipecli.findings import Finding
from recipecli.recipes.loader import Recipe
from recipecli.recipes.render import Rendered

if TYPE_CHECKING:  # check pulls in the engine models (numpy): imported when a check runs
    from recipecli.check import CheckResult
    from recipecli.checkpoint.model import Checkpoint
    from recipecli.engines.layout import LayoutRequest

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
    target, draft = serve.target or target, serve.draft or draft  # after --set target=/draft=
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
    unsupported = unsupported_engines(recipe)
    return [
        deployment(recipe, _render_serve(recipe, e, hardware, e in unsupported)) for e in engines
    ]


def _render_serve(recipe: Recipe, engine: str, hardware: str | None, force: bool) -> Rendered:
    """The serve command of ``recipe`` for ``engine``; a layout serve field the engine has no
    flag for (tokenspeed's ``pipeline_parallel_size``) is left out (``force``) so that check
    reports the engine's refusal of the recipe's layout as a finding (issue #25).

    Raises:
        RecipeError, UsageError: as :func:`recipecli.recipes.render.render_command` raises them.
    """
    from recipecli.recipes.lint.layout_rules import LAYOUT_FIELDS
    from recipecli.recipes.render import render_command

    try:
        return render_command(recipe, engine, hardware=hardware, what="serve", force=force)
    except RecipeError as err:
        if force or not any(f"serve.{k}:" in str(err) for k in LAYOUT_FIELDS):
            raise
        return render_command(recipe, engine, hardware=hardware, what="serve", force=True)


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


def recipe_engines(
    name: str, ref: str, engine: str, reasons: Mapping[str, str]
) -> tuple[tuple[str, ...], dict[str, str]]:
    """The engines ``check --recipe`` checks, and those it leaves out with their reasons.

    Args:
        name, ref: the recipe's name and how the user named it (for messages).
        engine: ``all`` or one engine name.
        reasons: engine -> why the recipe marks it unsupported (:func:`unsupported_engines`).

    Returns:
        (engines to check, {engine left out: reason}): ``all`` = the engines recipes render for,
        less those the recipe marks unsupported (checked only when asked for by name).

    Raises:
        UsageError: every engine is marked unsupported, or ``engine`` is one recipes do not
            render for.
    """
    from recipecli.engines import ENGINES
    from recipecli.recipes.engines import ENGINES as RECIPE_ENGINES

    if engine == "all":
        renderable = tuple(e for e in ENGINES if e in RECIPE_ENGINES)
        engines = tuple(e for e in renderable if e not in reasons)
        if not engines:
            raise UsageError(
                f"recipe {name} marks every engine unsupported; check one with --engine",
                path=ref,
            )
        return engines, {e: reasons[e] for e in renderable if e in reasons}
    if engine not in RECIPE_ENGINES:
        raise UsageError(
            f"--recipe: recipes render for {', '.join(RECIPE_ENGINES)}, not {engine}; check "
            f"its pair with `recipecli check TARGET DRAFT --engine {engine}`"
        )
    return (engine,), {}


@dataclass(frozen=True)
class RecipeCheck:
    """The result of ``recipecli check --recipe``: one check run per distinct deployment.

    Attributes:
        name, ref, bundled: the recipe's name, how it was named, whether it ships with recipecli.
        hardware: the hardware profile the deployments are on (None: a recipe without profiles).
        deployments: every engine's deployment, in engine order.
        unsupported: engine -> reason, the recipe's ``unsupported`` section.
        not_checked: engine -> reason for the engines left out (marked unsupported).
        runs: (deployments checked together, their :class:`~recipecli.check.CheckResult`).
    """

    name: str
    ref: str
    bundled: bool
    hardware: str | None
    deployments: tuple[Deployment, ...]
    unsupported: dict[str, str]
    not_checked: dict[str, str]
    runs: tuple[tuple[tuple[Deployment, ...], CheckResult], ...]

    def ok(self, strict: bool = False) -> bool:
        """True when no run has an error (or, with ``strict``, a warning)."""
        return all(res.ok(strict) for _, res in self.runs)

    def to_dict(self, strict: bool = False) -> dict[str, Any]:
        """The ``check --recipe --json`` document: ``recipe``, ``checks`` (one per run, with its
        ``settings``: tp, draft_tp, max_model_len), ``ok``."""
        return {
            "recipe": {
                "name": self.name,
                "ref": self.ref,
                "bundled": self.bundled,
                "hardware": self.hardware,
                "deployments": [d.to_dict() for d in self.deployments],
                "unsupported": dict(self.unsupported),
                "not_checked": sorted(self.not_checked),
            },
            "checks": [
                {
                    "settings": {
                        "tp": group[0].tp,
                        "draft_tp": group[0].draft_tp,
                        "max_model_len": group[0].max_model_len,
                    },
                    **res.to_dict(strict),
                }
                for group, res in self.runs
            ],
            "ok": self.ok(strict),
        }

    def format_text(
        self, *, strict: bool = False, color: bool = False, width: int | None = None
    ) -> str:
        """One block per run (titled with the recipe, hardware and deployments, then check's
        report), one note per engine left out, then one verdict line for all runs naming the
        exit code (:func:`recipecli.check.verdict_line`)."""
        from recipecli.check import format_result, verdict_line
        from recipecli.output import paint, wrap_line

        blocks = []
        for group, res in self.runs:
            title = f"recipe {self.name}" + (f", hardware {self.hardware}" if self.hardware else "")
            report = format_result(res, strict=strict, color=color, width=width, verdict=False)
            head = "\n".join(wrap_line(f"{title}: {describe(group)}", width))
            blocks.append(f"{head}\n" + report)
        for e, reason in self.not_checked.items():
            note = (
                f"{e}: not checked: the recipe marks it unsupported ({' '.join(reason.split())}); "
                f"--engine {e} checks it anyway"
            )
            lines = wrap_line(note, width)
            lines[0] = paint(e, "warning", color) + lines[0][len(e) :]
            blocks.append("\n".join(lines))
        runs = [res for _, res in self.runs]
        verdict = verdict_line(
            runs, strict=strict, color=color, width=width, not_checked=list(self.not_checked)
        )
        blocks.append("\n".join(verdict))
        return "\n\n".join(blocks)


def check_recipe(
    ref: str,
    *,
    hardware: str | None = None,
    engine: str = "all",
    kernel: str = "auto",
    revision: str | None = None,
    draft_revision: str | None = None,
    timeout: float | None = None,
    explain: bool = False,
) -> RecipeCheck:
    """``check --recipe``: load the recipe, render each engine's serve command on ``hardware``,
    and run :func:`recipecli.check.run_check` once per distinct deployment
    (:func:`group_deployments`) on its pair, TP, draft TP and ``max_model_len``, and on the
    recipe's own layout when its ``serve:`` sets one (``pipeline_parallel_size``,
    ``data_parallel_size``, ``enable_dp_attention``, ``enable_expert_parallel``, ``nodes``:
    :func:`recipecli.recipes.lint.layout_rules.recipe_layout`; issue #25). Targets and
    drafts that recipecli ships a snapshot of are opened from it (:func:`recipecli.examples.open_source`).

    Args:
        ref: a bundled recipe name or a recipe file.
        hardware: the hardware profile (None: the recipe's default).
        engine: ``all`` or one engine (see :func:`recipe_engines`).
        kernel: the fused-norm kernel check mode (``auto``, ``cpu``, ``cuda``, ``skip``).
        revision, draft_revision: Hub revisions of the target and the draft.
        timeout: seconds each Hub request may take (None: the default 10 s).
        explain: keep each engine's accounting in every run (``check --recipe --explain``).

    Raises:
        RecipeError, UsageError, CheckpointError: as loading, rendering and opening raise them.
    """
    from recipecli.recipes.lint.layout_rules import recipe_layout
    from recipecli.recipes.loader import load_recipe

    rec = load_recipe(ref)
    reasons = unsupported_engines(rec)
    engines, skipped = recipe_engines(rec.name, ref, engine, reasons)
    deps = recipe_deployments(rec, engines, hardware)
    layout = recipe_layout(rec)
    runs = _run_groups(
        deps, (revision, draft_revision), kernel, timeout, layout[1] if layout else None, explain
    )
    return RecipeCheck(
        name=rec.name,
        ref=ref,
        bundled=rec.bundled,
        hardware=deps[0].hardware if deps else hardware,
        deployments=tuple(deps),
        unsupported=reasons,
        not_checked=skipped,
        runs=runs,
    )


def _run_groups(
    deps: Sequence[Deployment],
    revisions: tuple[str | None, str | None],
    kernel: str,
    timeout: float | None,
    layouts: LayoutRequest | None = None,
    explain: bool = False,
) -> tuple[tuple[tuple[Deployment, ...], CheckResult], ...]:
    """:func:`recipecli.check.run_check` once per group of ``deps`` that share their settings
    (:func:`group_deployments`), on the group's engines; each (target or draft SOURCE, revision)
    is opened once (:func:`recipecli.examples.open_source`), however many groups use it.

    Args:
        revisions: (target, draft) Hub revisions.
        layouts: the recipe's layout (its PP, DP, DP attention, EP, nodes), checked at each
            group's TP; None: TP only.
        explain: keep each engine's accounting (``CheckResult.accounting``).
    """
    from recipecli.check import run_check
    from recipecli.examples import open_source

    opened: dict[tuple[str, str | None], Checkpoint] = {}

    def source(name: str, rev: str | None) -> Checkpoint:
        if (name, rev) not in opened:
            opened[(name, rev)] = open_source(name, rev, timeout=timeout)
        return opened[(name, rev)]

    runs = []
    for group in group_deployments(deps):
        d = group[0]
        res = run_check(
            source(d.target, revisions[0]),
            source(d.draft, revisions[1]),
            engines=tuple(x.engine for x in group),
            tps=(d.tp,),
            draft_tp=d.draft_tp,
            max_model_len=d.max_model_len,
            kernel=kernel,
            layouts=layouts,
            explain=explain,
        )
        runs.append((tuple(group), res))
    return tuple(runs)


# --------------------------------------------------------------------------- render's pair gate

#: check's codes for a TP layout the engine refuses at load: heads or the padded vocabulary not
#: split by the TP size, a draft TP vLLM rejects. ``render`` refuses a command check would
#: refuse on them (:func:`pair_gate`).
LAYOUT_CODES: frozenset[str] = frozenset(
    {"tp.heads_indivisible", "tp.vocab_indivisible", "draft_tp.invalid"}
)


def _open_offline(source: str) -> Checkpoint | None:
    """``source`` opened without the network, in ``open_checkpoint``'s order: a local
    directory / snapshot / config file, the repo in the local HF cache, recipecli's bundled
    snapshot of that repo id; None when it is none of them or does not open (then ``check``
    is the place to learn why)."""
    from recipecli.checkpoint.resolve import open_checkpoint
    from recipecli.errors import RecipeCliError

    try:
        return open_checkpoint(source, offline=True)
    except RecipeCliError:
        return None


def _tp_where(recipe: Recipe, sets: Sequence[str]) -> str:
    """Where the TP size comes from, for a message: the last ``--set`` of it, else the recipe."""
    for text in reversed(sets):
        name = text.partition("=")[0].strip().lstrip("-").removeprefix("serve.")
        if "--" + name.replace("_", "-") in TP_FLAGS:
            return f"--set {text}"
    return recipe.where("serve", "tensor_parallel_size")


def _layout_refusal(dep: Deployment, layout: Sequence[Finding], where: str) -> RecipeError:
    """The one-line refusal of a TP layout the engine refuses: its first reason and citation,
    ``(+N more)``, and the ``check`` command that lists the TP sizes it accepts."""
    more = f" (+{len(layout) - 1} more)" if len(layout) > 1 else ""
    return RecipeError(
        f"{dep.engine} refuses TP {dep.tp}: {layout[0].message} [{layout[0].source}]{more}",
        path=where,
        hint=f"pick a TP size `recipecli check {dep.target} {dep.draft} --engine "
        f"{dep.engine} --tp 1,2,4,8` calls READY, or render anyway with --force",
    )


def pair_gate(
    recipe: Recipe,
    serve: Rendered,
    *,
    sets: Sequence[str] = (),
    force: bool = False,
    recipe_draft: bool = True,
) -> list[Finding]:
    """``render``'s check of the pair it serves: :func:`recipecli.check.run_check` for
    ``serve``'s engine at its TP size, draft TP and serving length, on the target and draft
    when both open offline (:func:`_open_offline`; else nothing is checked here).

    Args:
        recipe: the recipe ``serve`` was rendered from.
        serve: the rendered serve command (its pair after ``--set``).
        sets: the ``--set`` texts (to say where the TP size came from).
        force: render anyway: layout errors come back as warnings.
        recipe_draft: False when another draft than the recipe's is rendered: its other
            check errors come back as warnings (the recipe's ``unsupported`` reasons are about
            its own draft; the engine's support of this one is re-derived here).

    Returns:
        warnings for the command (``--force``d layout errors; check's errors on another draft).

    Raises:
        RecipeError: an error of :data:`LAYOUT_CODES` (the engine refuses this TP layout), with
            the engine's reason; not with ``force``.
    """
    from recipecli.check import run_check
    from recipecli.codes import finding

    dep = deployment(recipe, serve)
    target, draft = _open_offline(dep.target), _open_offline(dep.draft)
    if target is None or draft is None:
        return []
    res = run_check(
        target,
        draft,
        engines=(dep.engine,),
        tps=(dep.tp,),
        draft_tp=dep.draft_tp,
        max_model_len=dep.max_model_len,
        kernel="skip",
    )
    errors = [f for f in res.findings if f.severity == "error"]
    layout = [f for f in errors if f.code in LAYOUT_CODES]
    if layout and not force:
        raise _layout_refusal(dep, layout, _tp_where(recipe, sets))
    shown = layout + ([f for f in errors if f.code not in LAYOUT_CODES] if not recipe_draft else [])
    return [
        finding(
            f.code,
            f"check ({dep.engine}, TP {dep.tp}): {f.message}",
            severity="warning",
            engine=dep.engine,
            source=f"{dep.draft}; {f.source}",
        )
        for f in shown
    ]
