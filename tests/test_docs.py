"""The README is a short front page, and every relative link in it and in docs/ resolves."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.S | re.M)       # fenced code blocks
CODE_SPAN = re.compile(r"`[^`\n]*`")
INLINE = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")   # [text](target) and ![alt](target)
REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M)  # [name]: target
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def _prose(text: str) -> str:
    return CODE_SPAN.sub("", FENCE.sub("", text))


def link_targets(text: str) -> list[str]:
    """Targets of the Markdown links and images outside code."""
    prose = _prose(text)
    return INLINE.findall(prose) + REFERENCE.findall(prose)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)      # a link in a heading keeps its text
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    seen, out = {}, set()
    for heading in HEADING.findall(FENCE.sub("", text)):
        s = slug(heading)
        out.add(f"{s}-{seen[s]}" if s in seen else s)
        seen[s] = seen.get(s, 0) + 1
    return out


def broken_links(text: str, base: Path) -> list[str]:
    """The relative links of Markdown `text`, read as if it lay in folder `base`, that do not resolve."""
    broken = []
    for target in link_targets(text):
        if re.match(r"(https?|mailto):", target):
            continue
        path, _, anchor = target.partition("#")
        file = (base / path) if path else None
        if file is not None and not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and (file is None or file.suffix == ".md"):
            headings = anchors(file.read_text(encoding="utf-8") if file else text)
            if anchor.lower() not in headings:
                broken.append(f"{target}: no heading #{anchor}")
    return broken


def test_readme_is_a_short_front_page():
    size = README.stat().st_size
    assert size < 10240, f"README.md is {size} bytes; move long sections into docs/"


@pytest.mark.parametrize("page", [README, *DOCS], ids=lambda p: str(p.relative_to(ROOT)))
def test_links_resolve(page):
    assert broken_links(page.read_text(encoding="utf-8"), page.parent) == []


def test_every_docs_page_is_linked_from_the_readme():
    assert DOCS, "docs/ has no pages"
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in link_targets(README.read_text(encoding="utf-8"))}
    assert [p.name for p in DOCS if p.resolve() not in linked] == []


def test_broken_links_are_reported(tmp_path):
    (tmp_path / "there.md").write_text("# A heading, with `code`\n\n## A heading, with `code`\n")
    text = ("[ok](there.md) [ok](there.md#a-heading-with-code) [ok](there.md#a-heading-with-code-1) "
            "[web](https://example.org/nothing) [self](#top)\n\n# Top\n\n"
            "[gone](missing.md) ![img](missing.png) [bad anchor](there.md#nowhere) [bad self](#bottom)\n\n"
            "```\n[in code](not-checked.md)\n```\n")
    assert broken_links(text, tmp_path) == [
        "missing.md: no such file", "missing.png: no such file",
        "there.md#nowhere: no heading #nowhere", "#bottom: no heading #bottom"]


def test_slug_follows_github():
    assert slug("Over a range of commits (asv-built environments)") == "over-a-range-of-commits-asv-built-environments"
    assert slug("`nbsymple info` and `nbsymple paper`") == "nbsymple-info-and-nbsymple-paper"
    assert slug("What makes the kernels fast ([`kernels/cpu.py`](../x.py))") == \
        "what-makes-the-kernels-fast-kernelscpupy"


def _layout_block() -> list[tuple[int, str]]:
    """(indent, name) of each entry of docs/python_api.md's package layout block."""
    text = (ROOT / "docs" / "python_api.md").read_text()
    block = text.split("## Package layout", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    return [(len(line) - len(line.lstrip()), line.split()[0]) for line in block.splitlines()
            if line.strip() and re.match(r"\s*[\w.]+/?\s", line + " ") and not line.startswith("   " * 5)]


def test_the_layout_block_lists_the_package_tree():
    """Every package and module right under nbsymple_versions/ is listed once, and nothing else."""
    listed = [name for indent, name in _layout_block() if indent == 2]
    tree = sorted(p.name + ("/" if p.is_dir() else "") for p in (ROOT / "nbsymple_versions").iterdir()
                  if p.name != "__init__.py" and (p.suffix == ".py" or (p / "__init__.py").exists()))
    assert sorted(listed) == tree and len(set(listed)) == len(listed)


def test_package_docstrings_list_their_files():
    """Each subpackage's docstring names every module (and CUDA C file) in it."""
    import ast
    for package in sorted(p for p in (ROOT / "nbsymple_versions").iterdir() if (p / "__init__.py").exists()):
        doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
        files = sorted(f.name for f in package.iterdir() if f.suffix in (".py", ".cu") and f.name != "__init__.py"
                       and f.name != "__main__.py")
        missing = [f for f in files if f not in doc and f"`{f[:-3]}`" not in doc]
        assert not missing, f"{package.name}/__init__.py does not name {missing}"


def test_the_options_table_is_the_versions_typed_options():
    from nbsymple_versions.cli import options_markdown
    assert options_markdown() in (ROOT / "docs" / "cli.md").read_text()


def test_each_option_names_its_versions_once_in_the_help():
    """`run --help` names the versions an option belongs to once, in the number it needs
    ("version E: ...", "versions C, D, E, F: ..."); the option's own help does not repeat it."""
    import argparse
    from nbsymple_versions.core.options import add_option_arguments
    from nbsymple_versions.versions import option_flags
    parser = argparse.ArgumentParser()
    add_option_arguments(parser.add_argument, option_flags())
    helps = {a.option_strings[0]: a.help for a in parser._actions if a.option_strings[0] != "-h"}
    assert helps["--devices"].startswith("version E: ") and helps["--tile"].startswith("versions C, D, E, F: ")
    for flag, text in helps.items():
        assert not re.search(r"\bversions? [A-F](, [A-F])*:.*\bversions? [A-F](, [A-F])*:", text), (flag, text)
