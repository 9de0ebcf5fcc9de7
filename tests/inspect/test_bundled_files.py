"""The bundled gzip metadata snapshots (recipecli/data/targets/*.snapshot.json.gz) carry the
published config.json of their target verbatim: compared with the public fixture configs in
tests/fixtures/configs (each with its SOURCE.txt), read with gzip + json, not recipecli."""

from __future__ import annotations

import pytest
from helpers.fixtures import load_fixture_config
from helpers.targets import bundled_snapshot, snapshot


@pytest.mark.parametrize("name", ["Qwen__Qwen3-30B-A3B", "openai__gpt-oss-120b"])
def test_bundled_target_snapshot_holds_the_published_config(name):
    assert bundled_snapshot(name)["config"] == load_fixture_config(name)
    # the helper's config reader agrees whichever file it reads
    assert snapshot(name) == load_fixture_config(name)


def test_bundled_target_snapshot_has_the_embedding_of_its_config():
    # Qwen/Qwen3-30B-A3B config.json: vocab_size 151936, hidden_size 2048, untied
    tensors = bundled_snapshot("Qwen__Qwen3-30B-A3B")["tensors"]
    assert tensors["model.embed_tokens.weight"]["shape"] == [151936, 2048]
    assert tensors["lm_head.weight"]["shape"] == [151936, 2048]
