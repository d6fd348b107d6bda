# The README's two commands: `make paper` (the main job) and `make test`. Each sets up .venv itself.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: venv test paper bench bench-smoke benchmarks-json gate find dashboard clean

# the values given for these reach the tools as typed (`quoted`), and only so: not exported, so that make
# does not also expand a "$$(...)" in them for the environment of the commands it runs (a hunt)
unexport BASE GOOD BAD BENCH

# a checkout whose folder's path holds ':' (venv: it splits PATH), '$', '{' or '}' (setuptools'
# installer reads $NAME and {NAME} in the venv's path as variables: a 77-line traceback) is refused first
$(STAMP): pyproject.toml
	@case "$$(pwd -P)" in *[:\$$\{\}]*) echo 'make: the path of this checkout'"'"'s folder holds ":", "$$", "{" or "}", in which no venv can be installed (":" splits PATH; setuptools reads "$$NAME" and "{NAME}" as variables): clone it into a folder whose path has none of them' >&2; exit 2;; esac
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,bench]"
	touch $(STAMP)

venv: $(STAMP)

# on every core (pytest-xdist, dealing tests in conftest.py's order: one at a time, a few modules
# whole; no two tests marked `unshared` at once), the slowest 15 listed at the end (docs/testing.md)
test: $(STAMP)
	$(BIN)/python -m pytest -n auto --durations=15

# bench, bench-smoke, gate, dashboard: the asv suite (benchmarks/), driven by tools/ (docs/tracking_performance.md)
bench: $(STAMP)
	$(BIN)/python -m tools.tracking run $(ASV_ARGS)

# CI: asv check, then the smoke grid once (--quick), with scratch results: results/ stays as it is
bench-smoke: $(STAMP)
	$(BIN)/python -m tools.tracking smoke

# after a change to benchmarks/: the committed benchmarks.json must match asv's discovery
benchmarks-json: $(STAMP)
	$(BIN)/python -m tools.tracking benchmarks-json

# gate: exit 0 no regression, 1 regression, 2 a usage problem, 3 a set-up problem or no verdict on a machine
# this busy (its sentence says which; with --report-timings the timing tier's verdicts are printed alone).
# make gives any failing recipe status 2, so the gate runs while this file is read, and a
# regression turns on question mode (-q), whose status 1 means "not up to date".
# a variable's value as given, as one word of the shell's: a branch name may hold ' and $, a
# regex $ and \ (`$(call quoted,NAME)`)
quoted = '$(subst ','\'',$(value $(1)))'
# BASE given (even empty: the gate refuses that) is passed; unset, the gate compares with its default, main,
# and GATE_ARGS='--noise 3' (which compares nothing) is not refused for a --base the user never gave (`unexport`
# above defines it, empty, as the Makefile's own: origin "file")
GATE_BASE = $(if $(filter undefined file,$(origin BASE)),,--base $(call quoted,BASE))
# make -n: say the gate's command, run nothing (no comment on the line below: make would keep the
# blanks before it in the value, never empty then, and the gate ran as the recipe: a regression's 1 became 2)
DRY_RUN := $(findstring n,$(firstword -$(MAKEFLAGS)))
ifneq ($(filter gate,$(MAKECMDGOALS)),)
ifeq ($(DRY_RUN),)
GATE_VENV := $(shell $(MAKE) -s --no-print-directory venv >&2)
GATE_OUT := $(shell $(BIN)/python -m tools.gate $(GATE_BASE) $(GATE_ARGS) >&2)
GATE_STATUS := $(.SHELLSTATUS)
ifeq ($(GATE_STATUS),1)
MAKEFLAGS += -q
else ifneq ($(GATE_STATUS),0)
$(error gate: no verdict (status $(GATE_STATUS)); the line above says why)
endif
endif
endif
gate:
	$(if $(DRY_RUN),$(BIN)/python -m tools.gate $(GATE_BASE) $(GATE_ARGS),@:)

# find: bisect GOOD..BAD for the commit that slowed BENCH, a regex naming one benchmark and its
# parameters (asv builds an environment per commit; results/ stays as it is)
find: $(STAMP)
	$(BIN)/python -m tools.tracking find $(call quoted,GOOD)..$(call quoted,BAD) $(call quoted,BENCH)

# dashboard: asv publish into html/, then local copies of the scripts and styles it loads, and the
# view each benchmark page opens on (one where its curves have points)
dashboard: $(STAMP)
	$(BIN)/python -m tools.tracking publish
	$(BIN)/python tools/dashboard/offline.py html
	$(BIN)/python tools/dashboard/views.py html

# paper: bounded asv sweep on this machine into scratch results (.asv/paper/results: results/ and
# its benchmarks.json stay as committed), then `nbsymple paper` from them (see docs/paper.md). The
# sweep is `make bench` restricted to the benchmarks the paper uses, on the grid NBSYMPLE_BENCH_GRID
# (default: default); a failed benchmark does not stop the plots (asv keeps the rest). PAPER_ARGS go
# to `nbsymple paper` (e.g. --full on a GPU machine). From the committed results alone, with no new
# run: `.venv/bin/python -m nbsymple_versions.paper --no-science`.
paper: $(STAMP)
	@date +%s > $(VENV)/.paper-start; echo "paper: 1/2 asv sweep (the paper's benchmarks, into .asv/paper/results)"
	-@$(BIN)/python -m tools.tracking run --results paper --bench '^(tasks|steps|throughput|accuracy|compile)\.'
	@echo "paper: 2/2 figures, tables and science runs into plots/"; \
	$(BIN)/python -m nbsymple_versions.paper --results .asv/paper/results $(PAPER_ARGS); rc=$$?; \
	echo "paper: total wall time $$(( $$(date +%s) - $$(cat $(VENV)/.paper-start) )) s; open REPORT.md in its --out folder (plots/ by default)"; \
	exit $$rc

clean:           # the venv, the dashboard and .asv's scratch; not `make paper`'s measured results (.asv/paper)
	rm -rf $(VENV) html $(filter-out .asv/paper,$(wildcard .asv/*))
