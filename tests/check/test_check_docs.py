"""docs/check.md against the code: it links to the generated code list (docs/engines/codes.md,
``recipecli docs --engines``), every ``docs/check.md#anchor`` the source cites exists, and each
section names the codes of the checkpoint rules it documents."""

from __future__ import annotations

import re
from pathlib import Path

from recipecli.check import RULES, SUMMARY_CODES
from recipecli.codes import CATALOG

REPO = Path(__file__).resolve().parents[2]
CHECK_MD = (REPO / "docs" / "check.md").read_text()


def _anchors(markdown: str) -> set[str]:
    """Explicit ``<a id>`` anchors and GitHub's heading slugs (lower case, punctuation dropped,
    spaces to hyphens)."""
    ids = set(re.findall(r'<a id="([^"]+)"></a>', markdown))
    for heading in re.findall(r"^#+ (.+)$", markdown, flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        ids.add(slug)
    return ids


def test_slugs_as_github_writes_them():
    assert _anchors("## JSON output\n### Checks of the draft itself\n") == {
        "json-output",
        "checks-of-the-draft-itself",
    }


def test_every_cited_check_md_anchor_exists():
    cited: dict[str, list[str]] = {}
    for path in [
        *sorted((REPO / "recipecli").rglob("*.py")),
        *sorted((REPO / "docs").rglob("*.md")),
    ]:
        for anchor in re.findall(r"check\.md#([a-z0-9-]+)", path.read_text()):
            cited.setdefault(anchor, []).append(str(path.relative_to(REPO)))
    # the catalog's sources and the rules' _doc() sections are cited as text
    for spec in CATALOG.values():
        if spec.source.startswith("docs/check.md#"):
            cited.setdefault(spec.source.split("#", 1)[1], []).append(f"codes.py {spec.code}")
    assert {"draft-formats", "vocabulary-maps", "norm-flags"} <= set(cited)
    missing = {a: w for a, w in cited.items() if a not in _anchors(CHECK_MD)}
    assert missing == {}


def test_the_code_list_is_the_generated_page():
    # docs/check.md has no hand-written code table: it links to the page generated from the catalog
    assert "[docs/engines/codes.md](engines/codes.md)" in CHECK_MD
    assert not re.search(r"^\| `[a-z_]+\.[a-z_<>]+` \|", CHECK_MD, flags=re.M)


def test_each_checkpoint_rule_code_is_named_on_the_page():
    codes = {c for r in RULES for c in r.codes} | set(SUMMARY_CODES)
    assert "vocab.d2t_absolute" in codes
    missing = sorted(c for c in codes if f"`{c}`" not in CHECK_MD)
    assert missing == []
