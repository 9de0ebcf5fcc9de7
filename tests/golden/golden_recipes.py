"""Hand-written recipes of the golden-output corpus (``recipes/`` of the work directory).

One good recipe (three engines, two hardware profiles, bench and eval) and broken ones, each
broken in one way a user plausibly gets wrong: a typo'd or removed engine flag, an environment
variable of the other GPU vendor, tokenspeed TP/top-k conflicts, an engine flag inside
``text_overrides``, invalid JSON, schema and YAML errors, out-of-range serve fields. The lint,
render and diff cases run on these files; their expected output is whatever the pre-refactor code
printed, so the texts need no particular verdict, only to stay fixed.
"""

from __future__ import annotations

from pathlib import Path

_HEAD = """name: {name}
target: meta-llama/Llama-3.1-8B-Instruct
draft: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B
speculative:
  method: eagle3
  num_speculative_tokens: 3
"""

GOOD = """# A recipe for the golden corpus: three engines, two hardware profiles.
name: golden-good
title: Llama-3.1-8B + EAGLE3 (golden corpus)
family: Llama 3.1
description: A hand-written recipe covering every section.
notes:
  - "Written for the golden-output corpus."
target: meta-llama/Llama-3.1-8B-Instruct
draft: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B
speculative:
  method: eagle3
  num_speculative_tokens: 4
serve:
  tensor_parallel_size: 2
  max_model_len: 16384
  max_num_seqs: 32
  gpu_memory_utilization: 0.85
  port: 8100
engines:
  vllm:
    args:
      enforce-eager: true
      served-model-name: golden
  tokenspeed:
    args:
      host: 0.0.0.0
  sglang:
    args:
      host: 0.0.0.0
default_hardware: h200x2
hardware:
  h200x2:
    vendor: nvidia
    description: two NVIDIA H200
    env:
      CUDA_VISIBLE_DEVICES: "0,1"
  mi300x:
    vendor: amd
    description: two AMD MI300X
    env:
      HIP_VISIBLE_DEVICES: "0,1"
    engine_env:
      vllm:
        VLLM_ROCM_USE_AITER: 1
bench:
  backend: openai-chat
  endpoint: /v1/chat/completions
  dataset_name: random
  random_input_len: 512
  random_output_len: 256
  max_concurrency: 8
  num_prompts: 80
  ignore_eos: true
  temperature: 0
  save_result: true
eval:
  endpoint: /v1/chat/completions
  model_args:
    num_concurrent: 8
  tasks: gsm8k
  num_fewshot: 5
  limit: 50
  batch_size: 1
  gen_kwargs:
    max_tokens: 512
    temperature: 0
"""

#: Broken recipes: file stem -> YAML text.
BROKEN: dict[str, str] = {
    "typo-flag": _HEAD.format(name="typo-flag")
    + "serve:\n  tensor_parallel_size: 1\nengines:\n  vllm:\n    args:\n      max-num-seq: 8\n",
    "removed-flag": _HEAD.format(name="removed-flag")
    + 'engines:\n  vllm:\n    args:\n      rope-scaling: \'{"rope_type": "yarn"}\'\n',
    "rocm-env": _HEAD.format(name="rocm-env")
    + "hardware:\n  mi355x:\n    vendor: amd\n    env:\n      CUDA_VISIBLE_DEVICES: '0,1'\n",
    "nvidia-rocm-env": _HEAD.format(name="nvidia-rocm-env")
    + "hardware:\n  h200:\n    vendor: nvidia\n    engine_env:\n      vllm:\n"
    + "        VLLM_ROCM_USE_AITER: 1\n        VLLM_USE_BREAKABLE_CUDAGRAF: 0\n",
    "tokenspeed-tp": _HEAD.format(name="tokenspeed-tp")
    + "engines:\n  tokenspeed:\n    args:\n      attn-tp-size: 2\n      speculative-eagle-topk: 4\n",
    "override-flag": _HEAD.format(name="override-flag")
    + "text_overrides:\n  max_model_len: 4\n"
    + "engines:\n  vllm:\n    speculative_config:\n      tensor_parallel_size: 2\n",
    "override-unknown": _HEAD.format(name="override-unknown")
    + "text_overrides:\n  index_topk_freq: 4\n  rope_foo: 1\n"
    + "text_overrides_known_keys: [index_topk_freq, stale_key]\n",
    "bad-json": _HEAD.format(name="bad-json")
    + "engines:\n  vllm:\n    args:\n      compilation-config: '{not json'\n",
    "schema": "name: schema\ntarget: a/b\ndraft: c\nspeculative:\n  method: eagle3\n"
    "  num_speculative_tokens: 0\nserv: {}\n",
    "serve-range": _HEAD.format(name="serve-range")
    + "serve:\n  tensor_parallel_size: -4\n  port: 70000\n  gpu_memory_utilization: 1.2\n",
    "arg-values": _HEAD.format(name="arg-values")
    + "engines:\n  vllm:\n    args:\n      tensor-parallel-size: -4\n      enforce-eager: 3\n"
    + "  tokenspeed:\n    args:\n      max-model-len: abc\n      disable-kvstore: 'yes'\n",
    "yaml-alias": "a: &x 1\nb: *x\n",
    "yaml-duplicate": "name: t\nname: u\n",
    "yaml-invalid": "name: [\n",
    "default-hw": _HEAD.format(name="default-hw")
    + "default_hardware: b200\nhardware:\n  h200:\n    vendor: nvidia\n",
    "sglang-unsupported": _HEAD.format(name="sglang-unsupported")
    + "unsupported:\n  sglang: not tried\n  tokenspeed: not tried either\n",
}


def write_recipes(directory: Path) -> None:
    """Write ``golden-good.yaml``, every :data:`BROKEN` recipe, ``dir/`` (two recipes and a
    sub-directory lint does not enter) and ``empty/`` (no recipe) under ``directory``."""
    directory.mkdir(parents=True)
    (directory / "golden-good.yaml").write_text(GOOD)
    for stem, text in BROKEN.items():
        (directory / f"{stem}.yaml").write_text(text)
    sub = directory / "dir"
    (sub / "nested").mkdir(parents=True)
    (sub / "a.yaml").write_text(GOOD.replace("golden-good", "golden-a"))
    (sub / "b.yml").write_text(BROKEN["serve-range"].replace("serve-range", "golden-b"))
    (sub / "nested" / "c.yaml").write_text("name: [\n")
    (directory / "empty").mkdir()
