"""Display spoofing (issue #29, item 5): invisible and bidirectional characters in recipe
values are shown escaped in the text formats (shell, the vLLM config file, messages), kept
exactly in ``argv-json``, and flagged by ``lint`` (``recipe.invisible_char``)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from recipecli.cli import main
from recipecli.errors import RecipeError
from recipecli.recipes.text import format_shell, quote_word, split_shell

# (character, its escape): an override, an isolate, a zero-width space, a BOM, ESC, a tag
SPOOFS = [
    ("\u202e", "\\u202e"),
    ("\u2066", "\\u2066"),
    ("\u200b", "\\u200b"),
    ("\ufeff", "\\ufeff"),
    ("\x1b", "\\u001b"),
    ("\U000e0041", "\\U000e0041"),
]


@pytest.mark.parametrize(("ch", "escaped"), SPOOFS)
def test_shell_word_is_escaped_and_reads_back_exactly(ch, escaped):
    word = f"org/a{ch}b'c"
    assert quote_word(word) == f"$'org/a{escaped}b\\'c'"
    text = format_shell({"X": ch}, ["vllm", "serve", word, "--n", ch])
    assert ch not in text
    assert split_shell(text) == ({"X": ch}, ["vllm", "serve", word, "--n", ch])


def test_bash_reads_the_escaped_words_as_the_argv():
    argv = ["a\u202eb", "c\u200bd", "it's", "plain $HOME", "\u2066x\u2069"]
    script = "printf '%s\\0' " + " ".join(quote_word(a) for a in argv)
    out = subprocess.run(["bash", "-c", script], capture_output=True, timeout=30).stdout
    assert out.decode().split("\0")[:-1] == argv


def test_plain_words_are_quoted_as_before():
    # shlex.quote's own output, unchanged for every word without such a character
    assert quote_word("meta-llama/Llama-3.1-8B") == "meta-llama/Llama-3.1-8B"
    assert quote_word("a b") == "'a b'"
    assert quote_word("Zürich—名") == "'Zürich—名'"  # non-ASCII is quoted, not escaped


def test_messages_show_the_escape():
    exc = RecipeError("bad value 'x\u202ey'", path="r.yaml:3")
    assert exc.one_line() == "r.yaml:3: bad value 'x\\u202ey'"


@pytest.fixture
def bidi(scratch):
    text = (scratch / "my.yaml").read_text()
    text = text.replace(
        "draft: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "draft: yuhuili/EAGLE3-\u202eLLaMA3.1-8B"
    )
    text = text.replace(
        "      host: 0.0.0.0",
        '      host: 0.0.0.0\n  vllm:\n    args:\n      served-model-name: "a\\u200bb"',
    )
    (scratch / "bidi.yaml").write_text(text)
    return scratch / "bidi.yaml"


def _out(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    cap = capsys.readouterr()
    return int(exc.value.code or 0), cap.out, cap.err


def test_render_shell_and_config_escape_argv_json_keeps(bidi, capsys):
    code, shell, _ = _out(capsys, "render", "bidi.yaml", "--engine", "vllm")
    assert code == 0 and "\u202e" not in shell and "\u200b" not in shell
    assert "--served-model-name $'a\\u200bb'" in shell
    assert '"model": "yuhuili/EAGLE3-\\u202eLLaMA3.1-8B"' in shell
    code, cfg, _ = _out(
        capsys, "render", "bidi.yaml", "--engine", "vllm", "--format", "vllm-config"
    )
    assert code == 0 and "\u202e" not in cfg and 'served-model-name: "a\\u200Bb"' in cfg
    import yaml

    assert yaml.safe_load(cfg)["speculative-config"]["model"] == "yuhuili/EAGLE3-\u202eLLaMA3.1-8B"
    code, doc, _ = _out(capsys, "render", "bidi.yaml", "--engine", "vllm", "--format", "argv-json")
    argv = json.loads(doc)["argv"]
    assert argv[argv.index("--served-model-name") + 1] == "a\u200bb"  # what the recipe says


def test_lint_flags_each_value(bidi, capsys):
    code, out, _ = _out(capsys, "lint", "bidi.yaml", "--json")
    doc = json.loads(out)
    found = [
        f for r in doc["recipes"] for f in r["findings"] if f["code"] == "recipe.invisible_char"
    ]
    assert [f["severity"] for f in found] == ["warning", "warning"]
    messages = " ".join(f["message"] for f in found)
    assert "U+202E RIGHT-TO-LEFT OVERRIDE" in messages and "U+200B ZERO WIDTH SPACE" in messages
    assert "\u202e" not in messages
    assert found[0]["source"].startswith("bidi.yaml:14")  # the draft: line


# -------------------------------------------------- finding messages in check and lint text


def test_check_text_escapes_a_config_value_in_messages(scratch, capsys):
    # the target's architecture, with U+202E: the header and target.unregistered's message
    cfg = json.loads((scratch / "target" / "config.json").read_text())
    cfg["architectures"] = ["Llama\u202eForCausalLM"]
    (scratch / "t2").mkdir()
    (scratch / "t2" / "config.json").write_text(json.dumps(cfg))
    code, out, _ = _out(capsys, "check", "t2", "draft", "--kernel", "skip")
    assert code == 1 and "\u202e" not in out
    assert out.splitlines()[0].startswith("target  t2: Llama\\u202eForCausalLM")
    line = next(li for li in out.splitlines() if "target.unregistered" in li)
    assert "'Llama\\u202eForCausalLM'" in line
    code, doc, _ = _out(capsys, "check", "t2", "draft", "--kernel", "skip", "--json")
    assert "Llama\u202eForCausalLM" in json.loads(doc)["target"]["architecture"]  # JSON: as is


def test_check_text_escapes_a_zero_width_draft_source(scratch, capsys):
    os.rename(scratch / "draft", scratch / "dra\u200bft")
    code, out, _ = _out(capsys, "check", "target", "dra\u200bft", "--kernel", "skip")
    assert code == 1 and "\u200b" not in out
    assert "draft   dra\\u200bft: format A" in out


def test_lint_text_escapes_a_key_in_a_schema_message(scratch, capsys):
    text = (scratch / "my.yaml").read_text()
    text = text.replace("      host: 0.0.0.0", "      host: 0.0.0.0\n      bogus-fl\u2066ag: 1")
    (scratch / "key.yaml").write_text(text)
    code, out, _ = _out(capsys, "lint", "key.yaml")
    assert code == 1 and "\u2066" not in out
    line = next(li for li in out.splitlines() if "recipe.schema" in li)
    assert "engines.tokenspeed.args.bogus-fl\\u2066ag" in line, line
