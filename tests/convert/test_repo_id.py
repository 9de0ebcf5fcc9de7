"""``recipecli.convert.config.repo_id_or_none`` accepts exactly what huggingface_hub's
``validate_repo_id`` accepts (the oracle; convert no longer imports it: issue #30), on
hand-picked ids and a seeded random corpus, and convert's start-up imports no huggingface_hub."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from recipecli.convert.config import repo_id_or_none

hf_validators = pytest.importorskip("huggingface_hub.utils._validators")
HFValidationError = pytest.importorskip("huggingface_hub.errors").HFValidationError


def _hf_accepts(text: str) -> bool:
    try:
        hf_validators.validate_repo_id(text)
    except HFValidationError:
        return False
    return True


HAND = [
    "meta-llama/Llama-3.1-8B-Instruct", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "gpt2", "123",
    "Foo-BAR_foo.bar123", "a", "a/b", "_/_", "datasets/foo/bar", ".repo_id", "repo_id.",
    "-repo", "repo-", "foo--bar", "foo..bar", "foo.git", "foo.gitx", "foo/.git", "org/name.git",
    "/abs/path", "./rel", "~user/x", "a\\b", "", "/", "a/", "/a", "a b", "a\nb", "a\tb",
    "é/ü", "org/naïve", "org/名前", "x²", "a_", "_a", "a/-b", "a-/b", "a./b", "a/b.",
    "x" * 96, "x" * 97, "o" * 96 + "/" + "n" * 96, "o" * 97 + "/n", "a/" + "n" * 97,
    "a.-b", "a-.b", "a._b", "org/name with space", "org//name", "ǅ", "٣", "a\u200bb",
]  # fmt: skip


def _corpus(n: int = 3000, seed: int = 30) -> list[str]:
    rng = random.Random(seed)
    alphabet = "aZ09_-./ é²名\n~\\"
    out = []
    for _ in range(n):
        k = rng.choice([1, 2, 3, 5, 8, 13, 40, 95, 96, 97, 98])
        out.append("".join(rng.choice(alphabet) for _ in range(k)))
    return out


@pytest.mark.parametrize("text", HAND)
def test_hand_picked_ids_agree_with_huggingface_hub(text):
    assert (repo_id_or_none(text) is not None) is _hf_accepts(text), repr(text)


def test_a_random_corpus_agrees_with_huggingface_hub():
    corpus = _corpus()
    accepted = [t for t in corpus if _hf_accepts(t)]
    assert len(accepted) > 100  # the corpus holds valid ids too, not only rejections
    disagree = [t for t in corpus if (repo_id_or_none(t) is not None) is not _hf_accepts(t)]
    assert disagree == []


def test_not_a_string_is_none():
    assert repo_id_or_none(None) is None and repo_id_or_none(3) is None


def test_the_verifier_lookup_imports_no_huggingface_hub():
    code = (
        "import sys; from recipecli.convert.config import repo_id_or_none;"
        "assert repo_id_or_none('meta-llama/Llama-3.1-8B-Instruct');"
        "assert not [m for m in sys.modules if m.startswith(('huggingface_hub', 'httpx'))];"
        "print('ok')"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
