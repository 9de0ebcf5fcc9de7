"""SGLang's accounting of a draft (recipecli/engines/accounting.py): the name map of
``LlamaForCausalLMEagle3.load_weights`` (:func:`~recipecli.engines.sglang.tensors.tensor_use`) over
the parameters :func:`~recipecli.engines.sglang.tensors.built_params` lists.
"""

from __future__ import annotations

from recipecli.engines.accounting import Accounting, KeyUse, account, target_key_uses
from recipecli.engines.base import EngineRun
from recipecli.engines.sglang.sources import (
    CAPTURE,
    CONTEXT_LEN,
    INIT_LM_HEAD,
    MODEL_CONFIG,
    ROPE,
    SET_EMBED,
    TEXT_CONFIG,
)
from recipecli.engines.sglang.tensors import built_params, tensor_use


def target_keys(run: EngineRun) -> tuple[KeyUse, ...]:
    """The target text-config keys SGLang reads on the EAGLE3 path: ``hidden_size``,
    ``vocab_size``, ``num_hidden_layers`` (default aux layers), ``max_position_embeddings`` (the
    context length) and ``architectures`` (the capturing class); its rotary keys are not read
    for the draft (:func:`recipecli.engines.accounting.target_key_uses`)."""
    reads = {
        "hidden_size": f"width of the aux states fc takes and of the embedding swapped in from "
        f"the target ({TEXT_CONFIG}; {SET_EMBED})",
        "vocab_size": f"the vocabulary d2t maps into and the target head ({INIT_LM_HEAD})",
        "num_hidden_layers": f"default aux layers (2, L // 2, L - 3) and the capture range ({CAPTURE})",
        "max_position_embeddings": f"the context length ({CONTEXT_LEN}; {MODEL_CONFIG})",
        "architectures": f"the target class and its set_eagle3_layers_to_capture ({CAPTURE})",
    }
    return target_key_uses(run, reads, f"not read for the draft: {ROPE}")


def accounting(run: EngineRun) -> Accounting:
    """SGLang's accounting of the run's draft (:func:`recipecli.engines.accounting.account`)."""
    params = built_params(run)
    return account(
        run,
        lambda n: tensor_use(n, params),
        params,
        extra_read=("eagle_config.eagle_aux_hidden_state_layer_ids", "tie_word_embeddings"),
        target_keys=target_keys(run),
    )
