"""The bundled MiniMax-M3 recipe reproduces the published commands flag by flag.

Expected argv are the commands of vLLM PR #47391 (MI355X A/B) and of lightseekorg/tokenspeed
PR #837 (docs/recipes/models.md), copied here verbatim, shell-split with the PR's own
PORT=8010 substituted, so nothing here is derived from the code under test.
"""

from __future__ import annotations

import json
import shlex

import pytest

from recipecli.recipes import render_command
from recipecli.recipes.render import unfold_continuations

# vLLM PR #47391 (MI355X), verbatim.
PR47391_ENV = """\
export PORT=8010
export HIP_VISIBLE_DEVICES=0,1,2,3

export VLLM_ROCM_USE_AITER=1
export VLLM_ROCM_USE_AITER_MOE=1
export VLLM_ROCM_USE_AITER_FUSION_SHARED_EXPERTS=1
export VLLM_ROCM_SHUFFLE_KV_CACHE_LAYOUT=1
export VLLM_ROCM_QUICK_REDUCE_QUANTIZATION=INT4
export VLLM_ROCM_QUICK_REDUCE_CAST_BF16_TO_FP16=0
export VLLM_ROCM_QUICK_REDUCE_QUANTIZATION_MIN_SIZE_KB=256
export VLLM_USE_BREAKABLE_CUDAGRAPH=0
"""
PR47391_SERVE = r"""vllm serve amd/MiniMax-M3-MXFP4 \
  --port "$PORT" \
  --tensor-parallel-size 4 \
  --trust-remote-code \
  --block-size 128 \
  --no-enable-prefix-caching \
  --language-model-only \
  --max-model-len 32768 \
  --max-num-batched-tokens 32768 \
  --max-num-seqs 256 \
  --attention-backend TRITON_ATTN \
  --moe-backend aiter \
  --tool-call-parser minimax_m3 \
  --enable-auto-tool-choice \
  --reasoning-parser minimax_m3 \
  --kv-cache-dtype fp8 \
  --hf-overrides '{"text_config": {"use_index_cache": true, "index_topk_freq": 4}}' \
  --speculative-config '{"method":"eagle3","model":"Inferact/MiniMax-M3-EAGLE3","num_speculative_tokens":3}' \
  --no-async-scheduling"""
PR47391_BENCH = r"""vllm bench serve \
  --backend openai-chat \
  --base-url "http://127.0.0.1:${PORT}" \
  --model amd/MiniMax-M3-MXFP4 \
  --endpoint /v1/chat/completions \
  --dataset-name random \
  --random-input-len 8192 \
  --random-output-len 1024 \
  --random-range-ratio 0.8 \
  --request-rate inf \
  --max-concurrency 64 \
  --num-prompts 640 \
  --ignore-eos \
  --temperature 0 \
  --save-result"""
PR47391_EVAL = r"""uvx --from 'lm-eval[api]' lm_eval \
  --model local-chat-completions \
  --model_args model='amd/MiniMax-M3-MXFP4',base_url='http://127.0.0.1:8010/v1/chat/completions',tokenizer='amd/MiniMax-M3-MXFP4',num_concurrent=200 \
  --tasks gsm8k \
  --num_fewshot 25 \
  --apply_chat_template \
  --limit 200 \
  --batch_size 1 \
  --gen_kwargs max_tokens=4096,temperature=0 \
  --output_path lm_eval-minimax-m3-eagle3-gsm8k"""
# The one difference from the PR's command: its --output_path was a scratch name of the PR's
# run (/tmp/feature18_candidate_lm_eval_gsm8k_25shot_c200_n200_chattemplate); the recipe names
# the folder after itself, relative to where lm_eval runs (issue #28).
# lightseekorg/tokenspeed PR #837: its docs/recipes/models.md command, --disable-prefill-graph
# removed by the PR.
PR837_SERVE = r"""tokenspeed serve nvidia/MiniMax-M3-NVFP4 \
    --tensor-parallel-size 4 \
    --max-model-len 81920 \
    --max-num-seqs 16 \
    --max-prefill-tokens 8192 \
    --chunked-prefill-size 8192 \
    --gpu-memory-utilization 0.95 \
    --disable-cuda-graph-padding \
    --attention-backend trtllm \
    --kv-cache-dtype fp8 \
    --moe-backend flashinfer_trtllm \
    --speculative-algorithm EAGLE3 \
    --speculative-draft-model-path Inferact/MiniMax-M3-EAGLE3 \
    --speculative-num-steps 3 \
    --speculative-eagle-topk 1 \
    --speculative-num-draft-tokens 4 \
    --drafter-attention-backend fa4 \
    --disable-kvstore \
    --block-size 128 \
    --trust-remote-code \
    --host 0.0.0.0 \
    --port 8000"""

JSON_FLAGS = {"--hf-overrides", "--speculative-config"}


def split(cmd: str) -> list[str]:
    cmd = cmd.replace('"$PORT"', "8010").replace("${PORT}", "8010")
    return shlex.split(unfold_continuations(cmd))


def pairs(argv: list[str], head: int) -> list[tuple[str, str | None]]:
    """[(flag, value or None)] after the first ``head`` items; JSON values parsed."""
    out: list[tuple[str, object]] = []
    rest = argv[head:]
    i = 0
    while i < len(rest):
        flag = rest[i]
        assert flag.startswith("--"), rest[i:]
        if i + 1 < len(rest) and not rest[i + 1].startswith("--"):
            value: object = rest[i + 1]
            if flag in JSON_FLAGS:
                value = json.loads(value)
                value = (value, list(value))  # content and key order
            out.append((flag, value))
            i += 2
        else:
            out.append((flag, None))
            i += 1
    return out


@pytest.fixture(scope="module")
def vllm_mi355x():
    return {
        w: render_command("minimax-m3-eagle3", "vllm", hardware="mi355x", what=w)
        for w in ("serve", "bench", "eval")
    }


def test_vllm_serve_matches_pr47391_flag_by_flag(vllm_mi355x):
    r = vllm_mi355x["serve"]
    expected = split(PR47391_SERVE)
    assert r.argv[:3] == expected[:3] == ["vllm", "serve", "amd/MiniMax-M3-MXFP4"]
    got, want = pairs(r.argv, 3), pairs(expected, 3)
    for (gf, gv), (wf, wv) in zip(got, want, strict=True):
        assert (gf, gv) == (wf, wv)
    # hf-overrides exactly as quoted in the issue (nested under text_config)
    i = r.argv.index("--hf-overrides")
    assert r.argv[i + 1] == '{"text_config": {"use_index_cache": true, "index_topk_freq": 4}}'
    assert "--disable-prefill-graph" not in r.argv


def test_vllm_env_matches_pr47391(vllm_mi355x):
    want = {}
    for line in PR47391_ENV.splitlines():
        if line.startswith("export "):
            k, _, v = line[len("export ") :].partition("=")
            want[k] = v
    want.pop("PORT")  # only used through "$PORT"; the recipe renders --port 8010 literally
    assert vllm_mi355x["serve"].env == want
    assert list(vllm_mi355x["serve"].env)[0] == "HIP_VISIBLE_DEVICES"


def test_vllm_bench_matches_pr47391(vllm_mi355x):
    # vLLM PR #47391's bench command, then the three flags recipecli adds so the result file
    # records its workload (vllm/benchmarks/serve.py: --metadata KEY=VALUE lands top-level in the
    # result JSON; --result-filename names the file; --label is saved as "label").
    argv = vllm_mi355x["bench"].argv
    published = split(PR47391_BENCH)
    assert argv[: len(published)] == published
    assert argv[len(published) :] == [
        "--label",
        "minimax-m3-eagle3-vllm-mi355x",
        "--result-filename",
        "minimax-m3-eagle3-vllm-mi355x-c64.json",
        "--metadata",
        "recipe=minimax-m3-eagle3",
        "engine=vllm",
        "hardware=mi355x",
        "dataset_name=random",
        "random_input_len=8192",
        "random_output_len=1024",
        "random_range_ratio=0.8",
        "ignore_eos=true",
        "temperature=0",
    ]
    assert vllm_mi355x["bench"].env == {}


def test_eval_matches_pr47391(vllm_mi355x):
    assert vllm_mi355x["eval"].argv == split(PR47391_EVAL)


def test_tokenspeed_matches_pr837_with_flat_overrides():
    r = render_command("minimax-m3-eagle3", "tokenspeed")
    expected = split(PR837_SERVE)
    assert r.argv[:3] == expected[:3]
    assert r.argv[: len(expected)] == expected
    # overrides flat on tokenspeed (f4d8ec6e hf_transformers_utils.py get_config updates the
    # text config), appended after the PR's flags
    assert r.argv[len(expected) :] == [
        "--hf-overrides",
        '{"use_index_cache": true, "index_topk_freq": 4}',
    ]
    assert "--disable-prefill-graph" not in r.argv
    assert r.env == {}
    assert r.hardware == "b200"


def test_declared_known_keys_silence_override_absent():
    # both keys are missing from the bundled NVFP4/MXFP4 text_config snapshot, but the recipe
    # declares them in text_overrides_known_keys: no warning on either engine or profile
    for engine, hw in (("vllm", "mi355x"), ("vllm", "b200"), ("tokenspeed", "b200")):
        assert render_command("minimax-m3-eagle3", engine, hardware=hw).warnings == ()


def test_undeclared_absent_keys_still_warn_with_file_and_line(tmp_path):
    from recipecli.recipes.loader import bundled_dir

    text = (bundled_dir() / "minimax-m3-eagle3.yaml").read_text()
    line = "text_overrides_known_keys: [use_index_cache, index_topk_freq]\n"
    assert line in text
    path = tmp_path / "m3.yaml"
    path.write_text(text.replace(line, "text_overrides_known_keys: [use_index_cache]\n"))
    lineno = text.splitlines().index("text_overrides:") + 1
    r = render_command(str(path), "vllm", hardware="mi355x")
    assert [(w.code, w.evidence["key"]) for w in r.warnings] == [
        ("recipe.override_absent", "index_topk_freq")
    ]
    assert r.warnings[0].source.partition("; ")[0] == f"{path}:{lineno}"
    assert "(text_config)" in r.warnings[0].message
