"""Padded EAGLE drafter-batch input preparation as torch tensor ops (vLLM PR #47391), with a loop reference.

vLLM's padded drafter batch (``vllm/v1/spec_decode/utils.py``, kernel
``eagle_prepare_inputs_padded_kernel``, the padded drafter batch of EAGLE speculative decoding) computes, per
request i of R:

* ``num_draft_i = cu_num_draft_tokens[i] - cu_num_draft_tokens[i-1]`` (``cu[-1] = 0``; the cumsum
  is inclusive),
* ``num_rejected_tokens[i] = num_draft_i + 1 - valid_sampled_tokens_count[i]`` when
  ``num_draft_i > 0``, else 0 (``valid`` = accepted + 1; 0 for a discarded request),
* ``token_indices_to_sample[i] = query_start_loc[i+1] - 1 - num_rejected_tokens[i]``.

vLLM PR #47391 replaced that one-program-per-request Triton helper with torch ops; both
outputs are int32 like vLLM's. The torch version has no host sync and no data-dependent shape, so
it can be captured in a CUDA graph.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


def prepare_inputs_padded(
    cu_num_draft_tokens: torch.Tensor,
    valid_sampled_tokens_count: torch.Tensor,
    query_start_loc: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Token index to sample and number of rejected tokens per request, as tensor ops.

    Args:
        cu_num_draft_tokens: [R] integer, inclusive cumulative sum of draft tokens per request.
        valid_sampled_tokens_count: [R] integer, accepted + 1 (0 for a discarded request).
        query_start_loc: [R+1] integer, start of each request's tokens in the padded batch.

    Returns:
        ``(token_indices_to_sample, num_rejected_tokens)``, each [R] int32 on the inputs' device.

    Raises:
        ValueError: when the lengths are not R, R and R+1.
    """
    r = cu_num_draft_tokens.shape[0]
    if valid_sampled_tokens_count.shape[0] != r or query_start_loc.shape[0] != r + 1:
        raise ValueError(
            "expected cu_num_draft_tokens [R], valid_sampled_tokens_count [R], query_start_loc [R+1]; got "
            f"{tuple(cu_num_draft_tokens.shape)}, {tuple(valid_sampled_tokens_count.shape)}, {tuple(query_start_loc.shape)}"
        )
    cu = cu_num_draft_tokens.to(torch.int64)
    num_draft = torch.diff(cu, prepend=cu.new_zeros(1))
    rejected = num_draft + 1 - valid_sampled_tokens_count.to(torch.int64)
    rejected = torch.where(num_draft > 0, rejected, torch.zeros_like(rejected))
    indices = query_start_loc[1:].to(torch.int64) - 1 - rejected
    return indices.to(torch.int32), rejected.to(torch.int32)


def prepare_inputs_padded_loop(
    cu_num_draft_tokens: Sequence[int],
    valid_sampled_tokens_count: Sequence[int],
    query_start_loc: Sequence[int],
) -> tuple[list[int], list[int]]:
    """The same as :func:`prepare_inputs_padded`, one request at a time (the ground truth).

    Args:
        cu_num_draft_tokens: R ints; valid_sampled_tokens_count: R ints; query_start_loc: R+1 ints.

    Returns:
        ``(token_indices_to_sample, num_rejected_tokens)`` as lists of R ints.
    """
    indices, rejected = [], []
    prev = 0
    for i, cu in enumerate(cu_num_draft_tokens):
        num_draft = int(cu) - prev
        prev = int(cu)
        rej = num_draft + 1 - int(valid_sampled_tokens_count[i]) if num_draft > 0 else 0
        rejected.append(rej)
        indices.append(int(query_start_loc[i + 1]) - 1 - rej)
    return indices, rejected
