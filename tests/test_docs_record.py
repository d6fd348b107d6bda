"""The numbers the docs quote from the committed record are the record's: a paragraph of
README.md or docs/paper.md that cites its source as `record: `plots/NAME`` quotes every number
with a unit (%, s, min, ms, points) from those files and names the machine they came from; the
README's sample output is the committed timing of the machine it names."""
import re
from pathlib import Path

import pytest

from nbsymple_versions.paper.results import load_results

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("README.md", "docs/paper.md")
CITATION = re.compile(r"record:\s*((?:`(?:plots|results)/[^`]+`[,;\s]*(?:and\s+)?)+)")
FILE = re.compile(r"`((?:plots|results)/[^`]+)`")
QUOTED = re.compile(r"(?<![\w.^-])[+±]?(\d+(?:\.\d+)?)\s?(?:%|s|min|ms|points)(?!\w)")
MACHINES = sorted(p.name for p in (ROOT / "results").iterdir() if p.is_dir())
NO_MACHINE = "does not name its machine"


def paragraphs(text: str) -> list[str]:
    """Blank-line separated blocks, each list item on its own; code blocks left out."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    blocks = []
    for block in re.split(r"\n\s*\n", text):
        blocks += [b for b in re.split(r"\n(?=- )", block) if b.strip()]
    return blocks


def citations(page: str) -> list[tuple[str, list[str]]]:
    """[(paragraph, the record files it cites)] of a page."""
    out = []
    for para in paragraphs((ROOT / page).read_text(encoding="utf-8")):
        files = [f for m in CITATION.finditer(para) for f in FILE.findall(m.group(1))]
        if files:
            out.append((" ".join(para.split()), files))
    return out


def unquoted(paragraph: str, record: str) -> list[str]:
    """The numbers with a unit in `paragraph` that `record` does not hold as a number."""
    held = set(re.findall(r"\d+(?:\.\d+)?", record))
    return [m.group(0) for m in QUOTED.finditer(paragraph) if m.group(1) not in held]


def recorded_machines(record: str) -> list[str]:
    """The machines a record says its runs ran on (the provenance in science_runs.json)."""
    return re.findall(r'"machine":\s*"([^"]+)"', record)


@pytest.mark.parametrize("page", PAGES)
def test_quoted_numbers_are_the_records(page):
    for para, files in citations(page):
        for f in files:
            assert (ROOT / f).is_file(), f"{page} cites {f}, which is not committed"
        record = "\n".join((ROOT / f).read_text(encoding="utf-8") for f in files)
        assert not unquoted(para, record), (page, files, unquoted(para, record), para)
        machines = MACHINES + recorded_machines(record)
        assert any(m in para for m in machines) or NO_MACHINE in para, (page, "names no machine", para)


def test_a_number_the_record_lacks_is_caught():
    record = "| 2^-8 | 2.66 ± 0.13 % | 54 min (2 sessions) |"
    assert unquoted("took 54 min; stars beyond r_J: 2.66 %", record) == []
    assert unquoted("took 16 min; stars beyond r_J: 2.5 %", record) == ["16 min", "2.5 %"]
    assert unquoted("dt = 2^-8 T and N = 15360 after 1.5 orbits", record) == []     # no unit quoted
    assert recorded_machines('{"provenance": {"machine": "m-avx512-2cores", "cpu": "X"}}') == ["m-avx512-2cores"]


def test_the_paper_page_cites_its_science_record():
    cited = {f for _, files in citations("docs/paper.md") for f in files}
    assert {"plots/tidal_tails_n15360.md", "plots/science_runs.json"} <= cited


def test_the_readme_sample_is_the_committed_step_of_the_machine_it_names():
    """The sample's seconds per step (B, SI6A, dp, N = 4096) within the 99 % interval (or 5 %) of
    the committed timing on the machine the sentence above it names, whose path it states."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    intro, sample = re.search(r"## Example\n\n(.*?)```text\n(.*?)```", text, re.S).groups()
    machine = min((m for m in MACHINES if m in intro), key=intro.index)      # the first it names
    isa = machine.split("-")[3]
    assert {"avx512": "AVX-512", "avx2": "AVX2"}[isa] in intro
    assert "--version B --n 4096 --scheme si6a --precision dp" in sample
    seconds = float(re.search(r"seconds per step\s+([\d.]+)", sample).group(1))
    res = load_results(ROOT / "results", machine)
    t = res.get("steps.Step.time_step_si6a")["B", 4096, "dp"]
    lo, hi = res.interval("steps.Step.time_step_si6a")["B", 4096, "dp"]
    assert min(lo, 0.95 * t) <= seconds <= max(hi, 1.05 * t), (seconds, t, lo, hi)
    assert f"{t * 1e3:.1f} ms" in intro
