"""Speculative methods beyond EAGLE3 (issue #27): the shared types and arithmetic of the
per-engine method rules (``recipecli/engines/<engine>/methods.py``), no verdicts of their own.

A method rule reads a :class:`MethodInput` (the method asked or detected, the target checkpoint
and its MTP layers, the draft and its description) and yields ``method.*`` findings citing the
engine's code at its pin. The engines' method support is data extracted from their code by
``scripts/engine_methods.py`` (``<engine>-<pin slug>-methods.json`` in each engine's ``data/``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, get_args

from recipecli.checkpoint.model import Checkpoint
from recipecli.codes import finding
from recipecli.draft.method import MethodDraft, method_draft
from recipecli.draft.model import DraftModel
from recipecli.engines.spec import EngineSpec
from recipecli.findings import Finding
from recipecli.target_mtp import LAYER_KEYS, MtpLayers, mtp_layers

#: The methods ``check --method`` takes (``auto`` detects one from the draft's config).
Method: TypeAlias = Literal["eagle", "eagle3", "mtp", "dflash", "dspark"]
METHODS: tuple[str, ...] = get_args(Method)


@dataclass(frozen=True)
class MethodInput:
    """What a method rule reads.

    Attributes:
        method: the method checked (asked with ``--method`` or detected).
        asked: True when ``--method`` named it, False when detected (``auto``).
        target_ck: the target checkpoint (for MTP also the draft's: the engines load the MTP
            layers from it).
        draft_ck: the draft checkpoint; None for MTP without DRAFT.
        draft: the draft's method description (:class:`MethodDraft`); None for MTP.
        mtp: the target's MTP layers (:class:`MtpLayers`).
        target_layers: the target's ``num_hidden_layers`` (text config), None when absent.
        num_speculative_tokens: the tokens per step asked (None = the engine's default).
    """

    method: str
    asked: bool
    target_ck: Checkpoint
    draft_ck: Checkpoint | None
    draft: MethodDraft | None
    mtp: MtpLayers
    target_layers: int | None
    num_speculative_tokens: int | None = None


#: An engine's method rules: (engine spec, input) -> findings.
MethodRules: TypeAlias = Callable[[MethodInput], Sequence[Finding]]


def methods_file(spec: EngineSpec) -> str:
    """The methods data file's name: ``<engine>-<pin slug>-methods.json``."""
    return f"{spec.name}-{spec.pin.slug}-methods.json"


def methods_data(spec: EngineSpec) -> Mapping[str, Any]:
    """The engine's methods data (written by ``scripts/engine_methods.py``), cached.

    Raises:
        FileNotFoundError: the engine ships no methods data.
    """
    from recipecli.engines.base import read_json  # numpy-backed: only when a rule runs

    return read_json(spec.home, "data", methods_file(spec))


def method_rules(spec: EngineSpec) -> MethodRules | None:
    """The engine's ``methods.rules`` (``<engine home>.methods``), None when it has none (a
    plug-in engine without method rules)."""
    try:
        mod = importlib.import_module(f"{spec.home}.methods")
    except ModuleNotFoundError:
        return None
    rules: MethodRules = mod.rules
    return rules


def layer_ids_problem(ids: Sequence[int] | None, layers: int | None) -> str | None:
    """Why DFlash/DSpark ``target_layer_ids`` cannot index the target's hidden states: not
    strictly increasing, or outside ``[0, layers)``; None when they can (or are unknown)."""
    if not ids:
        return None
    if any(b <= a for a, b in zip(ids, ids[1:], strict=False)):
        return f"target_layer_ids {list(ids)} are not strictly increasing"
    if layers is not None and (min(ids) < 0 or max(ids) >= layers):
        return f"target_layer_ids {list(ids)} are outside the target's layers 0..{layers - 1}"
    return None


def token_problem(token: int | None, vocab: int | None, what: str) -> str | None:
    """Why ``token`` (the DFlash mask token, the DSpark noise token) cannot be embedded by a draft
    of ``vocab`` rows; None when it can (or either is unknown)."""
    if token is None or vocab is None:
        return None
    if not 0 <= token < vocab:
        return f"{what} {token} is outside the draft vocab 0..{vocab - 1}"
    return None


def mtp_tokens_problem(tokens: int | None, n_predict: int | None) -> str | None:
    """vLLM's MTP rule (``SpeculativeConfig.__post_init__``): ``num_speculative_tokens`` above
    ``n_predict`` must be a multiple of it (the layers are reused)."""
    if tokens is None or not n_predict:
        return None
    if tokens > n_predict and tokens % n_predict != 0:
        return f"num_speculative_tokens {tokens} is not a multiple of n_predict={n_predict}"
    return None


@dataclass(frozen=True)
class MtpPath:
    """How an engine builds the MTP draft of a target.

    Attributes:
        draft_class: the MTP/NextN class the engine loads (None: the engine has none for the
            target, ``refusal`` says what it does).
        layers_key: the config key the engine reads the layer count from (None: fixed count).
        layers: the count the engine resolves (the config's value, else the engine's default).
        refusal: the engine's words when it has no MTP path for the target.
        max_layers: the most MTP layers the engine's class loads (None: no limit).
    """

    draft_class: str | None
    layers_key: str | None
    layers: int | None
    refusal: str = ""
    max_layers: int | None = None


@dataclass(frozen=True)
class EngineMethods:
    """An engine's method facts, for :func:`engine_rules`.

    Attributes:
        engine: the engine's name (the findings' ``engine``).
        spelling: method -> how the engine spells it (``--speculative-algorithm NEXTN``);
            a method missing here is refused.
        refusal: method -> the engine's words when it refuses the method.
        cite: rule name (``method``, ``mtp``, ``eagle1``, ``eagle31``, ``dflash``) -> Source.
        mtp: target -> :class:`MtpPath` (the engine's MTP resolution).
        mtp_tokens_rule: True when the engine enforces vLLM's n_predict multiple rule.
        mtp_max_layers: True when the engine's MTP class loads a bounded number of layers
            (:attr:`MtpPath.max_layers`: ``method.mtp_layers``).
        extra: the engine's own further rules (DFlash/DSpark block size), None when none.
        extra_codes: method -> the codes ``extra`` may report for it (the engine pages and
            docs/engines/codes.md name the engine for them).
    """

    engine: str
    spelling: Mapping[str, str]
    refusal: Mapping[str, str]
    cite: Mapping[str, object]
    mtp: Callable[[MethodInput], MtpPath]
    mtp_tokens_rule: bool = False
    mtp_max_layers: bool = False
    extra: Callable[[MethodInput], Sequence[Finding]] | None = None
    extra_codes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def engine_rules(em: EngineMethods, mi: MethodInput) -> list[Finding]:
    """The ``method.*`` findings of engine ``em`` on ``mi``: the method supported or refused,
    then the method's contract (EAGLE-1 vs EAGLE3, Eagle 3.1 norms, MTP layers and weights,
    DFlash/DSpark layer ids and mask token)."""
    m = mi.method
    if m not in em.spelling:
        return [
            finding(
                "method.unsupported",
                f"{em.engine} does not serve {m} at the pin: {em.refusal.get(m, 'no such method')}",
                engine=em.engine,
                source=em.cite["method"],
                method=m,
            )
        ]
    out = [
        finding(
            "method.supported",
            f"{em.engine} serves {m} as {em.spelling[m]}",
            engine=em.engine,
            source=em.cite["method"],
            method=m,
            spelling=em.spelling[m],
        )
    ]
    out += list(_draft_contract(em, mi))
    if em.extra is not None:
        out += list(em.extra(mi))
    if m == "mtp":
        out += list(_mtp(em, mi))
    return out


def _draft_contract(em: EngineMethods, mi: MethodInput) -> Iterator[Finding]:
    d, e = mi.draft, em.engine
    if d is None:
        return
    if mi.method == "eagle3" and d.method == "eagle":
        yield finding(
            "method.eagle1_as_eagle3",
            f"an EAGLE-1 head ({d.reason}) given as eagle3: {e}'s EAGLE3 draft sizes fc for "
            "3 target hidden states and runs it wrong (accept length 1.00); serve it as eagle",
            engine=e,
            source=em.cite["eagle1"],
            fc_in=d.fc_in,
            hidden_size=d.H,
        )
    elif mi.asked and d.method is not None and d.method != mi.method:
        yield finding(
            "method.mismatch",
            f"--method {mi.method}, but the draft is a {d.method} draft ({d.reason})",
            engine=e,
            source=em.cite["method"],
            asked=mi.method,
            detected=d.method,
        )
    if mi.method == "eagle3" and d.fc_norm and d.norm_before_fc:
        yield finding(
            "method.eagle31_exclusive",
            f"the draft sets both fc_norm and norm_before_fc: {e} applies both norms before fc, "
            "a draft is trained with one; keep the one it was trained with",
            engine=e,
            source=em.cite["eagle31"],
        )
    if mi.method in ("dflash", "dspark"):
        why = layer_ids_problem(d.target_layer_ids, mi.target_layers)
        if why:
            yield finding("method.layer_ids", why, engine=e, source=em.cite["dflash"])
        why = token_problem(d.mask_token_id, d.vocab_size, "the mask token id")
        if why:
            yield finding("method.mask_token", why, engine=e, source=em.cite["dflash"])


def _mtp(em: EngineMethods, mi: MethodInput) -> Iterator[Finding]:
    e = em.engine
    path = em.mtp(mi)
    if path.draft_class is None:
        yield finding("method.mtp_target", path.refusal, engine=e, source=em.cite["mtp"])
        return
    n = path.layers
    mtp = mi.mtp
    if n and not mtp.declared and mtp.has_index and not mtp.tensor_layers:
        yield finding(  # the engine forces a count, but the checkpoint has no MTP layer at all
            "method.mtp_no_layers",
            f"the target declares no MTP layer (no {' / '.join(LAYER_KEYS)}) and its index has "
            f"no MTP tensors: {e}'s {path.draft_class} ({path.layers_key} = {n}) loads nothing; "
            "use a checkpoint that ships MTP layers",
            engine=e,
            source=em.cite["mtp"],
            key=path.layers_key,
            layers=0,
        )
        return
    if not n:
        key = path.layers_key or "the layer count"
        yield finding(
            "method.mtp_no_layers",
            f"the target declares {key} = {n}: no MTP layer for {e}'s {path.draft_class}; "
            "use a checkpoint that keeps its MTP layers",
            engine=e,
            source=em.cite["mtp"],
            key=path.layers_key,
            layers=n,
        )
        return
    if path.max_layers is not None and n > path.max_layers:
        yield finding(
            "method.mtp_layers",
            f"the target declares {n} MTP layers; {e}'s {path.draft_class} loads at most "
            f"{path.max_layers} (it asserts so at load)",
            engine=e,
            source=em.cite["mtp"],
            declared=n,
            most=path.max_layers,
        )
    if mtp.has_index and len(mtp.tensor_layers) < n:
        yield finding(
            "method.mtp_weights_missing",
            f"the target declares {n} MTP layer(s) but its index has tensors for "
            f"{len(mtp.tensor_layers)} ({mtp.tensors} tensors): {e}'s {path.draft_class} loads "
            "nothing for the rest (a quantizer that dropped them?)",
            engine=e,
            source=em.cite["mtp"],
            declared=n,
            found=list(mtp.tensor_layers),
        )
    why = mtp_tokens_problem(mi.num_speculative_tokens, n) if em.mtp_tokens_rule else None
    if why:
        yield finding("method.mtp_tokens", why, engine=e, source=em.cite["mtp"], n_predict=n)


def run_methods(
    target_ck: Checkpoint,
    draft_ck: Checkpoint,
    draft: DraftModel,
    method: str,
    engines: Sequence[str],
    num_speculative_tokens: int | None = None,
) -> tuple[str | None, list[Finding]]:
    """The method checked and its ``method.*`` findings for each engine.

    Args:
        target_ck / draft_ck: the pair; ``draft_ck is target_ck`` for MTP without DRAFT (the
            engines load the MTP layers from the target's own checkpoint).
        draft: ``canonical_draft(draft_ck)``.
        method: ``auto`` or one of :data:`METHODS`.
        engines: engine names.
        num_speculative_tokens: tokens per step (None = the engine's default).

    Returns:
        (the method: asked, detected, or None when ``auto`` recognised none; the findings).
        ``auto`` on an EAGLE3 draft returns ("eagle3", []): ``check`` is then what it was.
    """
    from recipecli.engines import engine_spec

    own = draft_ck is target_ck
    md = None if own else method_draft(draft_ck, draft)
    out: list[Finding] = []
    if method == "auto":
        chosen = "mtp" if md is None else md.method
        if chosen in (None, "eagle3"):
            return chosen, []
        reason = md.reason if md is not None else "no DRAFT: the target's own MTP layers"
        out.append(
            finding(
                "method.detected",
                f"method auto: {chosen} ({reason})",
                source="docs/methods.md",
                method=chosen,
            )
        )
    else:
        chosen = method
    L = target_ck.text.config.get("num_hidden_layers")
    mi = MethodInput(
        chosen,
        method != "auto",
        target_ck,
        None if own else draft_ck,
        md,
        mtp_layers(target_ck),
        L if isinstance(L, int) else None,
        num_speculative_tokens,
    )
    for name in engines:
        rules = method_rules(engine_spec(name))
        if rules is not None:
            out.extend(rules(mi))
    return chosen, out


#: method -> (the codes the shared rules may report for a served method, the citations
#: (``EngineMethods.cite`` keys)); a refused method reports ``method.unsupported`` only, and an
#: engine's own rules add their ``EngineMethods.extra_codes``
_METHOD_DOCS: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "eagle": (("method.supported", "method.mismatch"), ("method",)),
    "eagle3": (
        (
            "method.supported",
            "method.mismatch",
            "method.eagle1_as_eagle3",
            "method.eagle31_exclusive",
        ),
        ("method", "eagle1", "eagle31"),
    ),
    "mtp": (
        (
            "method.supported",
            "method.mtp_target",
            "method.mtp_no_layers",
            "method.mtp_layers",
            "method.mtp_weights_missing",
            "method.mtp_tokens",
        ),
        ("method", "mtp"),
    ),
    "dflash": (
        ("method.supported", "method.mismatch", "method.layer_ids", "method.mask_token"),
        ("method", "dflash"),
    ),
    "dspark": (
        ("method.supported", "method.mismatch", "method.layer_ids", "method.mask_token"),
        ("method", "dflash"),
    ),
}


@dataclass(frozen=True)
class MethodDoc:
    """One method as an engine page lists it.

    Attributes:
        method: the ``--method`` value; verdict: served (and how it is spelled) or refused (the
        engine's words); codes: what ``check`` may report for it; sources: the engine code.
    """

    method: str
    verdict: str
    codes: tuple[str, ...]
    sources: tuple[object, ...]


def method_docs(spec: EngineSpec) -> list[MethodDoc]:
    """The engine's methods for its docs page (empty for an engine without method rules)."""
    try:
        em: EngineMethods = importlib.import_module(f"{spec.home}.methods").METHODS
    except ModuleNotFoundError:
        return []
    return engine_method_docs(em)


def engine_method_docs(em: EngineMethods) -> list[MethodDoc]:
    """:func:`method_docs` of the engine's :class:`EngineMethods`."""
    out: list[MethodDoc] = []
    for m in METHODS:
        codes, keys = _METHOD_DOCS[m]
        if m in em.spelling:
            verdict = f"served as `{em.spelling[m]}`"
            codes += em.extra_codes.get(m, ())
        else:
            verdict = f"refused ({em.refusal.get(m, 'not accepted')})"
            codes, keys = ("method.unsupported",), ("method",)
        if m == "mtp":
            drop = {"method.mtp_tokens"} if not em.mtp_tokens_rule else set()
            drop |= {"method.mtp_layers"} if not em.mtp_max_layers else set()
            codes = tuple(c for c in codes if c not in drop)
        out.append(MethodDoc(m, verdict, codes, tuple(em.cite[k] for k in keys)))
    return out


def method_codes(em: EngineMethods) -> tuple[str, ...]:
    """Every ``method.*`` code the engine's method rules may report, in first-listed order
    (:func:`engine_method_docs`); each engine's ``methods.CODES``, which
    :func:`recipecli.engines.code_engines` reads. ``method.detected`` is not an engine's:
    ``auto`` reports it once for the pair."""
    out: list[str] = []
    for doc in engine_method_docs(em):
        out += [c for c in doc.codes if c not in out]
    return tuple(out)
