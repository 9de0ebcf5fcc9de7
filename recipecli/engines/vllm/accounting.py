"""vLLM's accounting of a draft (recipecli/engines/accounting.py): the name map of
``Eagle3LlamaForCausalLM.load_weights`` and ``LlamaModel.hf_to_vllm_mapper``
(vllm/model_executor/models/llama_eagle3.py at the pin) over the weights :func:`allocated` lists.
"""

from __future__ import annotations

from recipecli.engines.accounting import Accounting, account
from recipecli.engines.base import EngineRun
from recipecli.engines.vllm.tensors import allocated, param_name, tensor_use


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


def accounting(run: EngineRun) -> Accounting:
    """vLLM's accounting of the run's draft (:func:`recipecli.engines.accounting.account`): keys
    from the resolved values, tensors by :func:`tensor_use`, parameters by :func:`built_params`."""
    params = built_params(run)
    return account(
        run,
        lambda n: tensor_use(run, n, params),
        params,
        extra_read=("eagle_config.eagle_aux_hidden_state_layer_ids",),
    )
