"""The hosted-CI workflow (.github/workflows/ci.yml) runs only what this repository already runs:
every `run:` command is `.ci/run` or `make TARGET [VAR=VALUE ...]` with TARGET a command target of
the Makefile and VAR a variable it reads, so a renamed or removed target fails here, not unseen
on GitHub. The jobs are the ones the docs describe (tests everywhere, the gate on pull requests,
the dashboard from main). The workflow is read with PyYAML, which asv depends on."""
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "ci.yml"
MAKEFILE = ROOT / "Makefile"
CI_SCRIPT = ROOT / ".ci" / "run"
EXPRESSION = re.compile(r"\$\{\{.*?\}\}")        # ${{ github.base_ref }}: one word, whatever it says
# Makefile variables that pass options on to a tool of this repository: each option must be one it defines
OPTIONS_OF = {"GATE_ARGS": ROOT / "tools" / "gate.py"}


def makefile_targets(text: str) -> set[str]:
    """The Makefile's command targets: rules named in .PHONY."""
    phony = set()
    for line in re.findall(r"^\.PHONY\s*:(.*)$", text, re.M):
        phony.update(line.split())
    rules = set()
    for line in re.findall(r"^([A-Za-z0-9_.-][A-Za-z0-9_. -]*?)\s*:(?![=:])", text, re.M):
        rules.update(line.split())
    return phony & rules


def makefile_variables(text: str) -> set[str]:
    """Variables the Makefile reads (`$(NAME)`, or quoted for the shell: `$(call quoted,NAME)`) and
    leaves to the command line: defaults (`?=`) and ones it never sets, not its own (`:=`, `=`)
    nor make's (MAKE...)."""
    read = set(re.findall(r"\$\((?:call quoted,)?([A-Z][A-Z0-9_]*)\)", text))
    own = set(re.findall(r"^([A-Z][A-Z0-9_]*)\s*:?=", text, re.M))
    return {v for v in read - own if not v.startswith("MAKE")}


def load_workflow(text: str) -> dict:
    data = yaml.safe_load(text)
    if True in data:                     # YAML 1.1 reads the key `on` as True
        data["on"] = data.pop(True)
    return data


def run_commands(workflow: dict) -> list[tuple[str, str]]:
    """(job, command line) of every `run:` step, one line each, comments and blank lines left out."""
    out = []
    for job_name, job in workflow["jobs"].items():
        for step in job.get("steps", []):
            for line in str(step.get("run", "")).splitlines():
                if line.strip() and not line.strip().startswith("#"):
                    out.append((job_name, line.strip()))
    return out


def bad_command(line: str, targets: set[str], variables: set[str]) -> str | None:
    """Why `line` is not `.ci/run` or `make TARGET [VAR=VALUE ...]` of this Makefile, or None."""
    words = shlex.split(EXPRESSION.sub("EXPR", line))
    if words == [".ci/run"]:
        return None
    if len(words) < 2 or words[0] != "make":
        return f"{line!r} is neither .ci/run nor a make target"
    target, *assignments = words[1:]
    if target not in targets:
        return f"{line!r}: the Makefile has no target {target!r}"
    for a in assignments:
        name, eq, value = a.partition("=")
        if not eq or name not in variables:
            return f"{line!r}: {a!r} is no variable the Makefile reads"
        tool = OPTIONS_OF.get(name)
        for option in re.findall(r"--[\w-]+", value) if tool else ():
            if f'"{option}"' not in tool.read_text():
                return f"{line!r}: {tool.name} has no option {option}"
    return None


def bad_commands(workflow_text: str) -> list[str]:
    text = MAKEFILE.read_text()
    targets, variables = makefile_targets(text), makefile_variables(text)
    return [f"{job}: {why}" for job, line in run_commands(load_workflow(workflow_text))
            if (why := bad_command(line, targets, variables))]


@pytest.fixture(scope="module")
def workflow():
    return load_workflow(WORKFLOW.read_text())


def test_every_run_is_ci_run_or_a_makefile_target():
    assert bad_commands(WORKFLOW.read_text()) == []


def test_ci_run_uses_makefile_targets():
    text = MAKEFILE.read_text()
    targets, variables = makefile_targets(text), makefile_variables(text)
    makes = [line.strip() for line in CI_SCRIPT.read_text().splitlines() if line.strip().startswith("make ")]
    assert makes and [bad_command(m, targets, variables) for m in makes] == [None] * len(makes)


@pytest.mark.parametrize("line", ["make nosuchtarget", "make test BSAE=main", "make", "pip install numba",
                                  "make test && curl example.org", "make gate GATE_ARGS=--no-such-option"])
def test_a_command_the_repository_does_not_run_is_caught(line):
    original = WORKFLOW.read_text()
    text = original.replace("      - run: make test\n", f"      - run: make test\n      - run: {line}\n", 1)
    assert text != original
    assert len(bad_commands(text)) == len(bad_commands(original)) + 1, line


def test_makefile_targets_and_variables_are_read_as_make_reads_them():
    targets = makefile_targets(MAKEFILE.read_text())
    assert {"test", "bench", "bench-smoke", "gate", "dashboard", "paper"} <= targets
    assert not targets & {"$(STAMP)", "PYTHON", "BASE", "GATE_VENV"}
    assert {"BASE", "ASV_ARGS", "GATE_ARGS", "PAPER_ARGS"} <= makefile_variables(MAKEFILE.read_text())
    assert not makefile_variables(MAKEFILE.read_text()) & {"BIN", "STAMP", "VENV", "GATE_STATUS", "MAKE"}


def test_jobs_run_tests_everywhere_the_gate_on_pull_requests_and_the_dashboard_from_main(workflow):
    assert {"push", "pull_request"} <= set(workflow["on"])
    readme = (ROOT / "README.md").read_text()
    assert re.search(r"^make test\b", readme, re.M), "the README's test command is `make test`"
    commands = {job: [line for j, line in run_commands(workflow) if j == job] for job in workflow["jobs"]}
    jobs = workflow["jobs"]
    assert "if" not in jobs["test"] and commands["test"][0] == "make test"
    assert jobs["gate"]["if"] == "github.event_name == 'pull_request'"
    assert commands["gate"] == ["make gate BASE=origin/${{ github.base_ref }} GATE_ARGS=--report-timings"]
    assert jobs["dashboard"]["if"] == "github.event_name == 'push' && github.ref == 'refs/heads/main'"
    assert commands["dashboard"] == ["make bench", "make dashboard"]
    upload = next(s for s in jobs["dashboard"]["steps"] if "upload-pages-artifact" in s.get("uses", ""))
    assert upload["with"]["path"] == "html"                    # asv.conf.json's html_dir
    for name in ("gate", "dashboard"):                         # BASE's tree and main's commits
        checkout = next(s for s in jobs[name]["steps"] if s.get("uses", "").startswith("actions/checkout@"))
        assert checkout["with"]["fetch-depth"] == 0, name
    for name, job in jobs.items():
        uses = [s["uses"] for s in job["steps"] if "uses" in s]
        if any(u.startswith("actions/checkout") for u in uses):
            assert "actions/checkout@v4" in uses and "actions/setup-python@v5" in uses, name
            python = next(s for s in job["steps"] if s.get("uses") == "actions/setup-python@v5")["with"]
            assert str(python["python-version"]) == "3.11", name


@pytest.mark.parametrize("target, given, expected", [
    ("gate", {"BASE": "origin/it's-$HOME-`id`"}, ["-m", "tools.gate", "--base", "origin/it's-$HOME-`id`"]),
    ("find", {"GOOD": "v'1", "BAD": "ma$in", "BENCH": r"time_pairwise\('B', 16384, 'dp'\)$"},
     ["-m", "tools.tracking", "find", "v'1..ma$in", r"time_pairwise\('B', 16384, 'dp'\)$"]),
])
def test_make_passes_a_value_as_given(tmp_path, target, given, expected):
    """A variable's value reaches the tool as one argument, as given: a branch name may hold ' or
    $ (a ' ended the quoting around BASE: what followed ran as shell), a regex $ and \\."""
    fake = tmp_path / "python"                   # BIN/python: records its arguments
    fake.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {tmp_path / 'argv'}\n")
    fake.chmod(0o755)
    subprocess.run(["make", "-s", "--no-print-directory", target, f"BIN={tmp_path}",
                    *(f"{k}={v}" for k, v in given.items())], cwd=ROOT, check=True, timeout=600,
                   capture_output=True)
    assert (tmp_path / "argv").read_text().splitlines() == expected


@pytest.mark.parametrize("target, name", [("gate", "BASE"), ("find", "GOOD"), ("find", "BAD"), ("find", "BENCH")])
def test_make_runs_no_function_written_in_a_value(tmp_path, target, name):
    """A hunt: "$(shell touch FILE)" given as BASE, GOOD, BAD or BENCH reached the tool as typed and
    also ran: make expanded it for the environment of the commands it started, to which it
    exports a variable given on its command line. Those four are not exported."""
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {tmp_path / 'argv'}\n")
    fake.chmod(0o755)
    marker = tmp_path / "ran"
    given = {"BASE": "main"} if target == "gate" else {"GOOD": "a", "BAD": "b", "BENCH": "x"}
    given[name] = f"$(shell touch {marker})$(info {name} EXPANDED)"
    p = subprocess.run(["make", "-s", "--no-print-directory", target, f"BIN={tmp_path}",
                        *(f"{k}={v}" for k, v in given.items())], cwd=ROOT, check=True, timeout=600,
                       capture_output=True, text=True)
    assert given[name] in (tmp_path / "argv").read_text()
    assert not marker.exists() and "EXPANDED" not in p.stdout + p.stderr, p.stdout + p.stderr


@pytest.mark.parametrize("name, refused", [("a:b", True), ("a$b", True), ("a{b}", True), ("a}b", True),
                                           ("a b'%s\\\"#", False)])
def test_a_checkout_whose_path_no_venv_takes_is_refused_before_the_install(tmp_path, name, refused):
    """`make venv` in a folder whose path holds ':' failed in venv (it splits PATH), and one
    holding '$', '{' or '}' in setuptools' installer (which reads $NAME and {NAME} as variables:
    a 77-line traceback): refused in one sentence before a venv is made. Other marks (a space,
    quotes, '%', a backslash, '#') install (checked by hand in fresh clones); here PYTHON=false
    stops there."""
    folder = tmp_path / name
    folder.mkdir()
    shutil.copy(MAKEFILE, folder)
    (folder / "pyproject.toml").write_text("")
    p = subprocess.run(["make", "-s", "--no-print-directory", "venv", "PYTHON=false"], cwd=folder,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 2 and not (folder / ".venv").exists(), (p.returncode, p.stderr)
    assert ("no venv can be installed" in p.stderr) == refused, p.stderr
