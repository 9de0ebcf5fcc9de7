"""The catalog of finding codes: every code ``check``, ``verify-kernel``, ``lint``, ``render`` and
``report`` can emit, with its default severity, what it means, how the failure shows, and where
the rule is written down. Codes are a public interface: keep every code listed here, and alias a
rename in :data:`ALIASES`.

Findings are built only through :func:`finding`, which refuses a code missing here (and fills in
the default severity and source). ``tests/test_engine_models.py`` scans the source for emitted
codes and fails on one the catalog lacks.

Which engines a code applies to is not written here: it is derived from the engine models, whose
steps list the codes they may emit (:attr:`recipecli.engines.base.Step.codes`);
:func:`recipecli.engines.code_engines` gives code -> engine names (a code no step lists is a
property of the checkpoint or recipe itself, engine ``any``). docs/engines/codes.md is generated
from this catalog and the models (``recipecli docs --engines``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from recipecli.findings import SEVERITIES, Finding, Severity

__all__ = ["ALIASES", "CATALOG", "CODES", "Code", "catalog_code", "entry", "finding"]


@dataclass(frozen=True)
class Code:
    """One finding code.

    Attributes:
        code: the stable dotted code (``vocab.d2t_missing``; ``shape.<role>`` stands for every
            ``shape.*`` tensor code).
        severity: the default severity, used when :func:`finding` is given none; a rule may
            report another one (``aux.default`` is info, warning or error, see its meaning).
        how: how the failure shows when the pair is served (``raises at load``, ``runs wrong
            silently``, ``depends on training``, ``nothing to do`` …).
        meaning: one or two sentences: what the finding says.
        source: where the rule is written down when recipecli's own check reports it (a docs
            section such as ``docs/check.md#vocabulary-maps``); the default ``source`` of its
            findings. Empty for engine codes: each engine finding cites the engine file and
            function of the step that emits it.
    """

    code: str
    severity: Severity
    how: str
    meaning: str
    source: str = ""

    @property
    def family(self) -> str:
        """``check`` (check's own and engine codes), ``kernel``, ``lint`` (``recipe.*``, from
        lint and render) or ``report``."""
        head = self.code.split(".", 1)[0]
        return {"kernel": "kernel", "recipe": "lint", "report": "report"}.get(head, "check")


def _code(code: str, severity: Severity, how: str, meaning: str, *, source: str = "") -> Code:
    return Code(code, severity, how, meaning, source)


_ENTRIES: tuple[Code, ...] = (
    _code(
        "draft.format",
        "info",
        "nothing to do",
        "The draft format recipecli detected (A original EAGLE release, B SpecForge, C ModelOpt, D speculators, F vLLM-internal).",
        source="docs/check.md#draft-formats",
    ),
    _code(
        "draft.not_eagle3",
        "error",
        "raises or runs wrong",
        "The DRAFT checkpoint is not an EAGLE3 draft (or TARGET and DRAFT are swapped).",
        source="docs/check.md#draft-formats",
    ),
    _code(
        "draft.layers",
        "error",
        "raises at load",
        "The engine's EAGLE3 draft takes exactly one decoder layer (tokenspeed's Llama draft; SGLang's MLA draft).",
    ),
    _code(
        "draft.arch_name",
        "error",
        "raises at load",
        "The draft's architecture, after the engine's rename, is not an EAGLE3 draft class the engine registers.",
    ),
    _code(
        "config.model_type",
        "error",
        "raises at load",
        "The draft's config cannot be built: no or unknown model_type, or a speculators layer type the engine refuses.",
    ),
    _code(
        "config.null_value",
        "error",
        "raises at load",
        "A config value is null where transformers' strict config class needs one (e.g. num_attention_heads).",
    ),
    _code(
        "config.invalid",
        "error",
        "raises at load",
        "transformers' config class refuses the geometry (hidden_size not divisible by num_attention_heads).",
    ),
    _code(
        "config.target_hidden_null",
        "error",
        "raises at load",
        "target_hidden_size is present but null; vLLM and SGLang multiply it by k.",
    ),
    _code(
        "config.draft_vocab_size_absent",
        "error",
        "raises at load",
        "The draft config has no draft_vocab_size key; SGLang's Llama EAGLE3 draft reads it as an attribute (AttributeError).",
    ),
    _code(
        "config.aux_ids_null",
        "error",
        "raises at load",
        "eagle_aux_hidden_state_layer_ids is present but null; tokenspeed takes its len().",
    ),
    _code(
        "target.no_weights",
        "warning",
        "nothing checked / nothing to serve",
        "The target folder has no weight files: its embedding and head were not checked.",
        source="docs/check.md#checks-of-the-draft-itself",
    ),
    _code(
        "target.unchecked",
        "info",
        "nothing checked",
        "The target source is a bare config: its tensors were not checked.",
        source="docs/check.md#checks-of-the-draft-itself",
    ),
    _code(
        "target.unregistered",
        "error",
        "raises at load",
        "The target architecture is not in the engine's model registry.",
    ),
    _code(
        "target.no_eagle3",
        "error",
        "raises at load",
        "The engine's target model class has no EAGLE3 capture (vLLM: SupportsEagle3; SGLang: set_eagle3_layers_to_capture).",
    ),
    _code(
        "target.no_aux_capture",
        "error",
        "runs wrong silently",
        "tokenspeed's target model never returns the aux hidden states: the draft gets the final hidden state and skips fc.",
    ),
    _code(
        "aux.default",
        "warning",
        "depends on training",
        "The engine captures its default layers (2, L//2, L-3): info when the draft was trained on them, a warning when unknown, an error when the draft names other ids the engine does not read.",
    ),
    _code(
        "aux.out_of_range",
        "error",
        "runs wrong / raises",
        "Some aux ids are never captured by the engine on this target, so the draft gets fewer states than its fc takes.",
    ),
    _code(
        "aux.count",
        "error",
        "raises at load or first forward",
        "The number of aux states (captured, or in the checkpoint's fc) differs from the k the engine sizes fc for.",
    ),
    _code(
        "aux.order",
        "error",
        "runs wrong silently",
        "vLLM captures aux states in ascending index order; unsorted ids feed fc's chunks in another order.",
    ),
    _code(
        "aux.mismatch",
        "warning",
        "depends on training",
        "The engine captures other hidden states than the draft's format says it was trained on (the id convention differs).",
    ),
    _code(
        "aux.top_level_ignored",
        "error",
        "runs wrong / raises",
        "tokenspeed captures the eagle_config ids and ignores the top-level list that sizes fc.",
    ),
    _code(
        "aux.convention",
        "info",
        "nothing to do",
        "Summary: the ids as written, what each engine captures, and what the format's convention implies.",
        source="docs/check.md#aux-layer-conventions",
    ),
    _code(
        "tensor.missing",
        "error",
        "runs wrong silently",
        "A weight the engine allocates is not in the checkpoint; neither engine's loader notices, it stays uninitialised.",
    ),
    _code(
        "tensor.dropped",
        "error",
        "runs wrong silently",
        "A trained checkpoint tensor the engine skips without an error (e.g. fc.bias in vLLM).",
    ),
    _code(
        "tensor.unchecked",
        "warning",
        "nothing checked",
        "The draft source has no tensor table (a bare config or a snapshot without tensors).",
    ),
    _code(
        "tensor.unexpected",
        "error",
        "raises (vLLM) / ignored (tokenspeed, SGLang)",
        "A checkpoint tensor the engine has no parameter for.",
    ),
    _code(
        "shape.<role>",
        "error",
        "raises at load",
        "A checkpoint tensor's shape differs from what the engine allocates for the resolved config (shape.fc, shape.q_proj, shape.lm_head …).",
    ),
    _code(
        "shape.d2t",
        "error",
        "raises at load",
        "d2t is not [draft_vocab_size].",
        source="docs/check.md#vocabulary-maps",
    ),
    _code(
        "hidden.mismatch",
        "error",
        "raises or runs wrong",
        "The draft's fc expects target hidden states of another width: it was trained for another target.",
    ),
    _code(
        "hidden.tokenspeed_target_hidden",
        "error",
        "raises at load",
        "tokenspeed builds fc as [H, k*H] and ignores target_hidden_size.",
    ),
    _code(
        "embed.width_mismatch",
        "error",
        "raises at first forward",
        "No draft embed_tokens and a draft hidden size unlike the target's: the shared embedding has the wrong width.",
    ),
    _code(
        "embed.share_error",
        "error",
        "raises at load",
        "tokenspeed's set_embed_and_head cannot fit the target embedding into the draft at this TP.",
    ),
    _code(
        "embed.layout_mismatch",
        "error",
        "runs wrong silently",
        "SGLang swaps the target's embedding into a draft embedding built for another vocab_size, with no shape check: lookups read the wrong rows.",
    ),
    _code(
        "embed.tied_stale",
        "warning",
        "runs wrong silently",
        "tokenspeed rebuilt the draft embedding replicated; a tied head keeps the old weight.",
    ),
    _code(
        "lm_head.missing",
        "error",
        "raises or runs wrong",
        "No draft lm_head where the engine cannot borrow the target's.",
    ),
    _code(
        "tie.reduced_vocab",
        "error",
        "raises at load",
        "tie_word_embeddings with draft_vocab_size < vocab_size ties a reduced head to the full embedding.",
        source="docs/check.md#vocabulary-maps",
    ),
    _code(
        "vocab.mismatch",
        "error",
        "runs wrong silently",
        "Draft and target vocab_size differ: another tokenizer.",
        source="docs/check.md#vocabulary-maps",
    ),
    _code(
        "vocab.draft_larger",
        "error",
        "raises at load",
        "draft_vocab_size is larger than the target vocabulary.",
        source="docs/check.md#vocabulary-maps",
    ),
    _code(
        "vocab.d2t_missing",
        "error",
        "runs wrong silently",
        "draft_vocab_size < vocab_size and no d2t: draft ids are read as target ids.",
    ),
    _code(
        "vocab.d2t_invalid",
        "error",
        "runs wrong / raises",
        "d2t is not a valid offset map (dtype, out of range, not increasing).",
        source="docs/check.md#vocabulary-maps",
    ),
    _code(
        "vocab.d2t_absolute",
        "error",
        "runs wrong silently",
        "d2t holds absolute target ids where offsets are expected.",
        source="docs/check.md#vocabulary-maps",
    ),
    _code(
        "vocab.d2t_identity",
        "error",
        "runs wrong silently",
        "d2t is all zeros with draft_vocab_size < vocab_size.",
        source="docs/check.md#vocabulary-maps",
    ),
    _code(
        "vocab.d2t_ignored",
        "error",
        "raises at load",
        "draft_vocab_size equals vocab_size, so vLLM has no parameter for the checkpoint's d2t.",
    ),
    _code(
        "vocab.t2d_invalid",
        "error",
        "nothing (t2d is dropped) / bad export",
        "t2d disagrees with d2t or draft_vocab_size.",
        source="docs/check.md#vocabulary-maps",
    ),
    _code(
        "vocab.values_unavailable",
        "info",
        "nothing checked",
        "The d2t values could not be read from this source.",
        source="docs/check.md#vocabulary-maps",
    ),
    _code(
        "norm.residual_unsupported",
        "error",
        "runs wrong silently",
        "norm_before_residual is true; tokenspeed and SGLang never read it.",
    ),
    _code(
        "norm.residual_default",
        "warning",
        "depends on training",
        "A speculators config without norm_before_residual: vLLM assumes true.",
    ),
    _code(
        "norm.flag_ignored",
        "error",
        "runs wrong silently",
        "A norm flag sits under eagle_config, where the engine (vLLM, SGLang) does not read it.",
    ),
    _code(
        "norm.qk_dropped",
        "error",
        "runs wrong silently",
        "The draft's Qwen3-style q_norm/k_norm weights have no parameter in tokenspeed's Llama EAGLE3 draft and are skipped.",
    ),
    _code(
        "norm.output_meaning",
        "info",
        "nothing to do",
        "How norm_output is read for this format (Eagle 3.1 chaining in both engines).",
        source="docs/check.md#norm-flags",
    ),
    _code(
        "maxpos.short",
        "error",
        "raises (tokenspeed with --max-model-len; SGLang always) / nothing (vLLM)",
        "The draft's max_position_embeddings is below the serving length.",
    ),
    _code(
        "tp.vocab_indivisible",
        "error",
        "raises at load",
        "The 64-padded vocabulary does not split over this TP size.",
    ),
    _code(
        "tp.heads_indivisible",
        "error",
        "raises at load",
        "Attention or KV heads do not split over this TP size.",
    ),
    _code(
        "draft_tp.invalid",
        "error",
        "raises at start-up",
        "vLLM's draft_tensor_parallel_size must be 1 or the target TP.",
    ),
    _code(
        "kernel.pass",
        "info",
        "nothing to do",
        "The fused RMSNorm kernel matches the torch reference on the draft's norms.",
        source="docs/verify-kernel.md",
    ),
    _code(
        "kernel.mismatch",
        "error",
        "runs wrong silently",
        "The fused kernel exceeded the tolerance on the draft's norms.",
        source="docs/verify-kernel.md",
    ),
    _code(
        "kernel.ineligible",
        "warning",
        "slower, not wrong",
        "The engine's guard sends this draft down the unfused path.",
        source="docs/verify-kernel.md",
    ),
    _code(
        "kernel.skipped",
        "info",
        "nothing checked",
        "torch/triton are not installed or the device asked for is absent.",
        source="docs/verify-kernel.md",
    ),
    _code(
        "recipe.yaml",
        "error",
        "refused",
        "Invalid YAML, aliases, duplicate keys, too large, not UTF-8.",
        source="docs/lint.md",
    ),
    _code(
        "recipe.schema",
        "error",
        "refused",
        "A recipe schema violation (each with its line), including ranges.",
        source="docs/lint.md",
    ),
    _code(
        "recipe.flag_unknown",
        "error",
        "refused (the engine's argparse exits)",
        'A flag not in the engine\'s flag catalog, with "did you mean".',
        source="docs/lint.md",
    ),
    _code(
        "recipe.flag_removed",
        "error",
        "refused (the engine's argparse exits)",
        "A flag removed from vLLM since an older release (e.g. --rope-scaling -> --hf-overrides).",
        source="docs/lint.md",
    ),
    _code(
        "recipe.json_invalid",
        "error",
        "refused",
        "A JSON-valued flag given as a string that is not valid JSON.",
        source="docs/lint.md",
    ),
    _code(
        "recipe.flag_value",
        "error",
        "refused",
        "An engine arg whose value breaks the flag's type or range.",
        source="docs/lint.md",
    ),
    _code(
        "recipe.env_vendor",
        "error",
        "runs on the wrong devices",
        "An env var of the other GPU vendor (CUDA_VISIBLE_DEVICES on AMD, ROCm vars on NVIDIA).",
        source="docs/lint.md",
    ),
    _code(
        "recipe.env_unknown",
        "warning",
        "ignored",
        "A VLLM_* var the pinned vLLM does not read.",
        source="docs/lint.md",
    ),
    _code(
        "recipe.tokenspeed_tp_conflict",
        "error",
        "raises at start-up",
        "--tensor-parallel-size/--tp together with --attn-tp-size on tokenspeed.",
        source="docs/lint.md",
    ),
    _code(
        "recipe.tokenspeed_topk",
        "error",
        "raises at start-up",
        "A tokenspeed EAGLE top-k other than 1.",
        source="docs/lint.md",
    ),
    _code(
        "recipe.override_is_engine_flag",
        "error",
        "ignored",
        "An engine flag inside an override source, where no engine reads it.",
        source="docs/lint.md",
    ),
    _code(
        "recipe.override_unknown_key",
        "error",
        "ignored",
        "An override key the target's text config does not have.",
        source="docs/lint.md",
    ),
    _code(
        "recipe.override_dropped",
        "error",
        "ignored",
        "A wrapper-config key tokenspeed's --hf-overrides cannot reach.",
        source="docs/lint.md",
    ),
    _code(
        "recipe.override_breaks_draft",
        "error",
        "raises at start-up",
        "Overrides that reach the draft's plain config too and break it (or that no SGLang placement serves).",
        source="docs/lint.md",
    ),
    _code(
        "recipe.override_conflict",
        "error",
        "refused",
        "One source gives a key both flat and under the wrapper key, with different values.",
        source="docs/lint.md",
    ),
    _code(
        "recipe.override_absent",
        "warning",
        "depends on the remote code",
        "An override key absent from a remote-code target's text config and not declared known.",
        source="docs/lint.md",
    ),
    _code(
        "recipe.override_placed",
        "info",
        "nothing to do",
        "An hf-overrides key is rendered elsewhere than written (nested or flattened for the engine).",
        source="docs/lint.md",
    ),
    _code(
        "recipe.override_value",
        "error",
        "refused",
        "An hf-overrides arg that is neither a mapping, JSON object text nor false.",
        source="docs/lint.md",
    ),
    _code(
        "recipe.known_key_unused",
        "warning",
        "nothing happens",
        "A text_overrides_known_keys entry that text_overrides does not set.",
        source="docs/lint.md",
    ),
    _code(
        "recipe.override_hits_draft",
        "warning",
        "runs wrong silently",
        "Overrides that the engine applies to the draft's config too.",
        source="docs/lint.md",
    ),
    _code(
        "recipe.sglang_alias_conflict",
        "warning",
        "the later one wins silently",
        "Two names of one SGLang argument.",
        source="docs/lint.md",
    ),
    _code(
        "recipe.sglang_draft_tokens",
        "warning",
        "SGLang resets it",
        "SGLang top-k 1 with --speculative-num-draft-tokens other than steps + 1.",
        source="docs/lint.md",
    ),
    _code(
        "recipe.sglang_topk_page_size",
        "error",
        "raises at start-up",
        "SGLang top-k > 1 with --page-size > 1 on an attention backend that cannot run it.",
        source="docs/lint.md",
    ),
    _code(
        "recipe.spec_tensor_parallel",
        "error",
        "raises at start-up",
        "tensor_parallel_size inside the speculative config.",
        source="docs/lint.md",
    ),
    _code(
        "recipe.default_hardware",
        "error",
        "refused",
        "default_hardware names no profile.",
        source="docs/lint.md",
    ),
    _code(
        "recipe.serve_field_unsupported",
        "warning",
        "not rendered",
        "A serve field the engine has no flag for.",
        source="docs/lint.md",
    ),
    _code(
        "recipe.engine_unsupported",
        "info",
        "not rendered",
        "The recipe marks the engine unsupported.",
        source="docs/lint.md",
    ),
    _code(
        "report.failed_requests",
        "error",
        "the comparison is unsound",
        "A run has failed requests.",
        source="docs/report.md#notes",
    ),
    _code(
        "report.workload_differs",
        "warning",
        "the comparison is unsound",
        "A workload key differs (allowed with --allow-different-workloads).",
        source="docs/report.md#notes",
    ),
    _code(
        "report.acceptance_collapsed",
        "warning",
        "the draft barely helps",
        "A side accepted under 10 % of its drafted tokens.",
        source="docs/report.md#notes",
    ),
    _code(
        "report.acceptance_confounded",
        "warning",
        "the comparison is confounded",
        "The arms' acceptance rates are more than 5 percentage points apart.",
        source="docs/report.md#notes",
    ),
    _code(
        "report.speculative_tokens_differ",
        "warning",
        "the comparison is confounded",
        "The arms draft a different number of tokens per step.",
        source="docs/report.md#notes",
    ),
    _code(
        "report.speculative_one_side",
        "info",
        "nothing to do",
        "Only one arm reports speculative-decoding metrics.",
        source="docs/report.md#notes",
    ),
    _code(
        "report.metadata_differs",
        "info",
        "nothing to do",
        "A setting the bench recorded differs between the arms.",
        source="docs/report.md#notes",
    ),
    _code(
        "report.acceptance_vs_tpot",
        "info",
        "nothing to do",
        "Acceptance lengths differ by more than 5 %: tokens per target step against the TPOT change.",
        source="docs/report.md#notes",
    ),
    _code(
        "report.ttft_tpot_tradeoff",
        "info",
        "nothing to do",
        "Mean TPOT and mean TTFT move in opposite directions, neither within the noise.",
        source="docs/report.md#notes",
    ),
    _code(
        "report.single_runs",
        "info",
        "nothing to do",
        "One run per side: no change is called an improvement or a regression.",
        source="docs/report.md#notes",
    ),
    _code(
        "report.spread_one_side",
        "info",
        "nothing to do",
        "One side has one run, the other several.",
        source="docs/report.md#notes",
    ),
    _code(
        "report.repeated_runs",
        "info",
        "nothing to do",
        "Several runs per side: how to read cells and intervals.",
        source="docs/report.md#notes",
    ),
)

#: code -> its catalog entry, in catalog order (check and kernel codes first, as
#: docs/engines/codes.md lists them).
CATALOG: Mapping[str, Code] = {c.code: c for c in _ENTRIES}

#: Backwards-compatible name: the same mapping as :data:`CATALOG`.
CODES: Mapping[str, Code] = CATALOG

#: old code -> current code (none renamed yet).
ALIASES: Mapping[str, str] = {}


def catalog_code(code: str) -> str:
    """The catalog entry a reported code belongs to (``shape.fc`` -> ``shape.<role>``; an alias
    -> the code it was renamed to)."""
    code = ALIASES.get(code, code)
    if code.startswith("shape.") and code not in CATALOG:
        return "shape.<role>"
    return code


def entry(code: str) -> Code:
    """The catalog entry of ``code`` (``shape.fc`` -> the ``shape.<role>`` entry).

    Raises:
        KeyError: ``code`` is not in the catalog (a programming error: add it to
            :data:`CATALOG` with its severity, meaning and source).
    """
    key = catalog_code(code)
    if key not in CATALOG:
        raise KeyError(f"finding code {code!r} is not in recipecli/codes.py: add it to the catalog")
    return CATALOG[key]


def _source_text(source: object) -> str:
    if isinstance(source, str):
        return source
    if isinstance(source, Iterable):
        return " | ".join(str(s) for s in source)
    return str(source)


def finding(
    code: str,
    message: str,
    *,
    severity: str | None = None,
    engine: str = "any",
    tp: int | None = None,
    source: object = None,
    **evidence: Any,
) -> Finding:
    """Build a :class:`~recipecli.findings.Finding` of a catalogued code.

    Args:
        code: a code of :data:`CATALOG` (or ``shape.<tensor role>``, or an alias).
        message: one line that says what is wrong and what to change.
        severity: ``error`` / ``warning`` / ``info``; None = the code's default severity.
        engine: the engine's name, or ``any`` for a property of the checkpoint or recipe.
        tp: the TP size when the verdict depends on it.
        source: where the rule comes from: a string, an object whose ``str`` cites it (an engine
            :class:`~recipecli.engines.base.Source`), or several of them (joined with `` | ``);
            None = the code's catalog ``source``.
        **evidence: the numbers behind the verdict (JSON values).

    Raises:
        KeyError: ``code`` is not in the catalog.
        ValueError: ``severity`` is not one of error, warning, info; or no source at all (every
            finding cites one).
    """
    spec = entry(code)
    sev = spec.severity if severity is None else severity
    if sev not in SEVERITIES:
        raise ValueError(
            f"finding {code!r}: severity {sev!r} is not one of {', '.join(SEVERITIES)}"
        )
    text = spec.source if source is None else _source_text(source)
    if not text:
        raise ValueError(f"finding {code!r} has no source: pass source= or give the code one")
    return Finding(
        code=code,
        severity=sev,  # type: ignore[arg-type]
        engine=engine,  # type: ignore[arg-type]
        message=message,
        tp=tp,
        evidence=evidence,
        source=text,
    )
