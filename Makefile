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
	@echo "not yet"

bench-smoke: $(STAMP)
	@echo "not yet"

# paper: bounded asv sweep on this machine, then `nbsymple paper` (see README)
paper: $(STAMP)
	@echo "not yet"

clean:
	rm -rf $(VENV) html .asv
