"""vLLM's accounting of a draft (recipecli/engines/accounting.py): the name map of
``Eagle3LlamaForCausalLM.load_weights`` and ``LlamaModel.hf_to_vllm_mapper``
(vllm/model_executor/models/llama_eagle3.py at the pin) over the weights :func:`allocated` lists.
"""

from __future__ import annotations

from recipecli.engines.accounting import Accounting, KeyUse, account, target_key_uses
from recipecli.engines.base import EngineRun
from recipecli.engines.vllm.sources import (
    AUX_DEFAULT,
    AUX_SETUP,
    EAGLE3_CAUSAL,
    MAXPOS,
    ROPE,
    SHARE_EMBED,
    src,
)
from recipecli.engines.vllm.tensors import allocated, param_name, tensor_use

_TARGET_CONFIG = src("vllm/config/model.py", "ModelConfig.get_hidden_size / get_vocab_size")


def built_params(run: EngineRun) -> dict[str, str | None]:
    """Every parameter ``Eagle3LlamaForCausalLM.__init__`` builds for the resolved config (name
    -> what the proposer swaps in from the target when the checkpoint lacks it): the weights of
    :func:`allocated` by :func:`param_name`, ``hidden_norm`` of every layer (``LlamaDecoderLayer``
    builds one per layer; only layer 0's is in a checkpoint), ``model.embed_tokens.weight`` and
    ``lm_head.weight`` (the target's, ``maybe_share_target_embed`` / ``_maybe_share_lm_head``),
    and ``draft_id_to_target_id`` when Vd != V (zeros until ``d2t`` fills it)."""
    out: dict[str, str | None] = {"model.embed_tokens.weight": "the target's embed_tokens"}
    for name in allocated(run):
        out.setdefault(param_name(name), None)
    for i in range(1, run.get("layers") or 1):
        out.setdefault(f"model.layers.{i}.hidden_norm.weight", None)
    out["lm_head.weight"] = "the target's lm_head"
    V = run.ctx.target.V
    if V is not None and run.get("Vd") != V:
        out["draft_id_to_target_id"] = None
    return out


def target_keys(run: EngineRun) -> tuple[KeyUse, ...]:
    """The target text-config keys vLLM reads on the EAGLE3 path (the target's ``ModelConfig``,
    built from its text config): ``hidden_size`` (the aux states fc takes, the embedding the
    proposer shares), ``vocab_size`` (``draft_id_to_target_id`` built when ``draft_vocab_size``
    differs), ``num_hidden_layers`` (the default aux layers), ``max_position_embeddings`` (the
    serving length the draft's is raised to) and ``architectures`` (the target class must
    support EAGLE3); its rotary keys are not read for the draft."""
    reads = {
        "hidden_size": f"width of the aux states fc takes and of the shared embedding "
        f"({_TARGET_CONFIG}; {SHARE_EMBED})",
        "vocab_size": f"draft_id_to_target_id built when draft_vocab_size differs ({EAGLE3_CAUSAL})",
        "num_hidden_layers": f"default aux layers (2, L // 2, L - 3) without draft ids ({AUX_DEFAULT})",
        "max_position_embeddings": f"default max_model_len; the draft's is raised to it ({MAXPOS})",
        "architectures": f"the target class, which must support EAGLE3 ({AUX_SETUP})",
    }
    return target_key_uses(run, reads, f"not read for the draft: {ROPE}")


def accounting(run: EngineRun) -> Accounting:
    """vLLM's accounting of the run's draft (:func:`recipecli.engines.accounting.account`): keys
    from the resolved values, tensors by :func:`tensor_use`, parameters by :func:`built_params`,
    the target's keys by :func:`target_keys`."""
    params = built_params(run)
    return account(
        run,
        lambda n: tensor_use(run, n, params),
        params,
        extra_read=("eagle_config.eagle_aux_hidden_state_layer_ids",),
        target_keys=target_keys(run),
    )
