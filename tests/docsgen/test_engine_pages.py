"""The engine pages (recipecli/docsgen/engine_pages.py, docs/engines/): every anchor cited exists."""

from __future__ import annotations

import re


def test_every_cited_engine_page_anchor_exists():
    # every `docs/engines/<page>.md#<anchor>` cited in the package, templates, docs and README
    # must lead somewhere on the generated page
    import pathlib

    from recipecli.docsgen.engine_pages import engine_pages

    repo = pathlib.Path(__file__).resolve().parents[2]
    pages = engine_pages()
    anchors = {name: set(re.findall(r'<a id="([^"]+)"></a>', text)) for name, text in pages.items()}
    cited = set()
    for root in ("recipecli", "templates", "docs", "README.md"):
        paths = [repo / root] if root.endswith(".md") else (repo / root).rglob("*")
        for path in paths:
            if path.suffix not in (".py", ".md", ".yaml", ".j2", ".json") or not path.is_file():
                continue
            for page, anchor in re.findall(
                r"docs/engines/([a-z]+\.md)#([a-z0-9-]+)", path.read_text()
            ):
                cited.add((page, anchor))
            if path.parent.name == "engines" and path.parent.parent.name == "docs":
                for page, anchor in re.findall(r"\(([a-z]+\.md)#([a-z0-9-]+)\)", path.read_text()):
                    cited.add((page, anchor))
    missing = sorted((p, a) for p, a in cited if a not in anchors.get(p, set()))
    assert cited and missing == []
