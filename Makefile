# The README's two commands: `make paper` (the main job) and `make test`. Each sets up .venv itself.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: test paper bench bench-smoke clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,bench]"
	touch $(STAMP)

venv: $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest

# bench, bench-smoke: the asv suite (see README, "Tracking performance")
bench: $(STAMP)
	@machine=$$($(BIN)/python -m benchmarks.common machine) || exit 1; \
	echo "asv: machine $$machine, grid $${NBSYMPLE_BENCH_GRID:-default}, commit $$(git rev-parse --short HEAD)"; \
	start=$$(date +%s); \
	$(BIN)/asv run --python=same --set-commit-hash "$$(git rev-parse HEAD)" --machine "$$machine" --durations 10 $(ASV_ARGS); rc=$$?; \
	$(BIN)/python -m benchmarks.common portable-results "results/$$machine" || rc=1; \
	echo "asv: wall time $$(( $$(date +%s) - start )) s, exit status $$rc (results in results/$$machine/)"; \
	exit $$rc

# asv check and the smoke run rewrite results/benchmarks.json for the smoke grid: keep the committed one
bench-smoke: $(STAMP)
	@machine=$$($(BIN)/python -m benchmarks.common machine) || exit 1; \
	log=$$(mktemp); start=$$(date +%s); \
	if [ -f results/benchmarks.json ]; then cp results/benchmarks.json "$$log.json"; fi; \
	$(BIN)/asv check --python=same >"$$log" 2>&1; rc=$$?; cat "$$log"; \
	if [ $$rc -eq 0 ]; then \
	{ NBSYMPLE_BENCH_GRID=smoke $(BIN)/asv run --python=same --quick --dry-run --machine "$$machine" $(ASV_ARGS) 2>&1; echo $$? >"$$log.rc"; } | tee "$$log"; \
	rc=$$(cat "$$log.rc"); \
	if grep -Eq 'failed|timed out' "$$log"; then rc=1; fi; \
	fi; \
	if [ -f "$$log.json" ]; then mv "$$log.json" results/benchmarks.json; fi; \
	rm -f "$$log" "$$log.rc"; \
	echo "bench-smoke: $$(( $$(date +%s) - start )) s, exit status $$rc"; \
	exit $$rc

# paper: bounded asv sweep on this machine, then `nbsymple paper` (see README)
# The sweep is `make bench` restricted to the benchmarks the paper uses (no peers), on the grid
# NBSYMPLE_BENCH_GRID (default: default); a failed benchmark does not stop the plots (asv keeps the
# rest). PAPER_ARGS go to `nbsymple paper` (e.g. --full on a GPU machine). From the committed results
# alone, with no new run: `.venv/bin/python -m nbsymple_versions.paper --no-science`.
paper: $(STAMP)
	@date +%s > $(VENV)/.paper-start; echo "paper: 1/2 asv sweep (make bench, paper benchmarks only)"
	-@$(MAKE) --no-print-directory bench ASV_ARGS="--bench '^(tasks|steps|throughput|accuracy|compile)\.'"
	@echo "paper: 2/2 figures, tables and science runs into plots/"; \
	$(BIN)/python -m nbsymple_versions.paper $(PAPER_ARGS); rc=$$?; \
	echo "paper: total wall time $$(( $$(date +%s) - $$(cat $(VENV)/.paper-start) )) s; open plots/REPORT.md"; \
	exit $$rc

clean:
	rm -rf $(VENV) html .asv
