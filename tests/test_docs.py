"""Generated docs (docs/rules/*.md, the README's rule table) match the rule docstrings."""

from pathlib import Path

from gradguard.docs import README_END, README_START, generated_files, rules_table, url_for
from gradguard.rules import all_rules

ROOT = Path(__file__).resolve().parents[1]


def test_generated_docs_are_fresh():
    files = generated_files(ROOT)
    assert ROOT / "README.md" in files, "README.md lacks the rules-table markers"
    stale = [str(p.relative_to(ROOT)) for p, text in files.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
    assert not stale, f"run `python -m gradguard.docs`; stale: {stale}"


def test_no_page_for_a_rule_that_does_not_exist():
    pages = {p.stem for p in (ROOT / "docs" / "rules").glob("*.md")}
    assert pages == {r.code for r in all_rules()}


def test_readme_table_lists_every_rule():
    table = rules_table()
    for rule in all_rules():
        assert f"[{rule.code}](docs/rules/{rule.code}.md) | `{rule.name}`" in table


def test_links_point_at_the_pages():
    assert url_for("GG101") == (ROOT / "docs" / "rules" / "GG101.md").as_uri()
    assert url_for("GG999") is None


def test_rule_page_links_work_outside_a_checkout(monkeypatch, tmp_path):
    # An installed wheel has no docs/: the page is written once into the user's cache and linked there.
    from gradguard import docs

    monkeypatch.setattr(docs, "REPO_DOCS", tmp_path / "no-checkout")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    url = docs.url_for("GG101")
    page = tmp_path / "cache" / "gradguard" / "docs" / __import__("gradguard").__version__ / "GG101.md"
    assert url == page.as_uri()
    assert page.read_text(encoding="utf-8") == docs.rule_markdown(docs.rule_by_code("GG101"))
    assert docs.url_for("GG999") is None
