"""SGLang's accounting of a draft (recipecli/engines/accounting.py): the name map of
``LlamaForCausalLMEagle3.load_weights`` (:func:`~recipecli.engines.sglang.tensors.tensor_use`) over
the parameters :func:`~recipecli.engines.sglang.tensors.built_params` lists.
"""

from __future__ import annotations

from recipecli.engines.accounting import Accounting, account
from recipecli.engines.base import EngineRun
from recipecli.engines.sglang.tensors import built_params, tensor_use


def accounting(run: EngineRun) -> Accounting:
    """SGLang's accounting of the run's draft (:func:`recipecli.engines.accounting.account`)."""
    params = built_params(run)
    return account(
        run,
        lambda n: tensor_use(n, params),
        params,
        extra_read=("eagle_config.eagle_aux_hidden_state_layer_ids", "tie_word_embeddings"),
    )
