# epsaudit compendium: environment, tests, executed notebooks and the book.
#
#   make book                      venv + execute notebooks (PROFILE=full) + build _build/html
#   make test                      venv + pytest (includes the slow book test)
#   make notebooks PROFILE=smoke   execute notebooks/*.py into book/executed/ with the small profile
#   make chapter N=1 PROFILE=smoke execute one chapter into _build/chapters/smoke/ (not into the book)
#
# Notebook sources are the jupytext files notebooks/*.py. They are converted to a scratch .ipynb
# under _build/notebooks/ and executed there by papermill, so the sources are never overwritten.

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON  ?= python3
PROFILE ?= full
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
KERNEL  := epsaudit
LOCK    := requirements-lock.txt
# The compiled kernels built ahead of time (a C compiler needed; without one, numba compiles them on first use)
KERNEL_AOT := $(VENV)/.kernel-aot

NB_SOURCES  := $(sort $(wildcard notebooks/*.py))
NB_EXECUTED := $(patsubst notebooks/%.py,book/executed/%.ipynb,$(NB_SOURCES))
NB_SCRATCH  := _build/notebooks
LIB_SOURCES := $(shell find epsaudit -name '*.py' -not -path '*/__pycache__/*' 2>/dev/null)

# Shared read-only LFW copy beside the repository (never committed; data/lfw is git-ignored).
LFW_SHARED := $(abspath $(CURDIR)/../shared/data/lfw)

.PHONY: help venv test notebooks book chapter _chapter profile-check sync _sync clean data-link lock data conditions corpora resampled

help:
	@echo "make book                     build the book (executes notebooks with PROFILE=$(PROFILE))"
	@echo "make test                     run the test suite (includes the slow book test)"
	@echo "make notebooks PROFILE=smoke  execute notebooks/*.py into book/executed/"
	@echo "make chapter N=1 PROFILE=smoke execute one chapter into _build/chapters/<profile>/"
	@echo "make venv | sync | clean | data-link | lock"
	@echo "make lfw                      get the LFW images into data/lfw/images, verified (LFW_ARGS=--verify | --archive PATH)"
	@echo "make data                     regenerate all face data from the LFW images (conditions + corpora + resampled, ~3 h)"
	@echo "make conditions | corpora     only the condition CSVs (~40 min) | only data/corpora/ (~70 min); resumable"
	@echo "make resampled                only data/resampled/ (resumable: rerun after an interruption)"

# ---------------------------------------------------------------------------------------------
# Environment

venv: $(STAMP) $(KERNEL_AOT) data-link

$(STAMP): pyproject.toml $(LOCK)
	@if [ ! -x $(BIN)/python ]; then \
		$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11, 5))' || { \
			echo "$(PYTHON) is $$($(PYTHON) --version 2>&1); $(LOCK) needs Python >= 3.11.5 (it was made on 3.11.7)." >&2; \
			echo "Run e.g. 'make PYTHON=python3.11 ...'." >&2; exit 1; }; \
		$(PYTHON) -m venv $(VENV); \
	fi
	$(BIN)/python -m pip install --quiet -c $(LOCK) -e ".[all]"
	$(BIN)/python -m ipykernel install --sys-prefix --name $(KERNEL) --display-name "Python 3 (epsaudit)" >/dev/null
	@touch $@

$(KERNEL_AOT): $(STAMP) epsaudit/bounds/_joint_kernel.py epsaudit/bounds/_sequential_kernel.py epsaudit/bounds/_kernels.py epsaudit/bounds/_build_kernel.py
	@$(BIN)/python -m epsaudit.bounds._build_kernel || \
		echo "the kernels were not compiled ahead of time (no C compiler?): numba compiles them on first use" >&2
	@touch $@

# Link data/lfw -> ../../shared/data/lfw when the shared copy exists and nothing is there yet.
data-link:
	@if [ -d "$(LFW_SHARED)" ] && [ ! -e data/lfw ] && [ ! -L data/lfw ]; then \
		mkdir -p data && ln -s ../../shared/data/lfw data/lfw && echo "linked data/lfw -> ../../shared/data/lfw"; \
	fi

# The LFW images the committed embeddings were made from, checked against data/lfw_images.sha256: an
# existing data/lfw/images is verified; else the shared copy is linked (as data-link does) when it exists;
# else the pinned commit's archive is downloaded from GitHub (about 460 MB), verified and unpacked.
# LFW_ARGS adds options (python -m epsaudit.build.lfw --help), e.g. LFW_ARGS="--archive lfw.tar.gz".
.PHONY: lfw
lfw: venv
	$(BIN)/python -m epsaudit.build.lfw $(LFW_ARGS)

# Regenerate the lock file from a throwaway venv that resolves pyproject.toml afresh.
lock:
	rm -rf _build/lockvenv
	$(PYTHON) -m venv _build/lockvenv
	_build/lockvenv/bin/python -m pip install --quiet -e ".[all]"
	{ echo "# Full pip freeze of a fresh venv made from pyproject.toml (pip install -e '.[all]'), Python 3.11."; \
	  echo "# Used as a constraints file: pip install -c requirements-lock.txt -e '.[all]'. Regenerate with: make lock"; \
	  _build/lockvenv/bin/python -m pip freeze --exclude-editable | grep -v -i '^epsaudit'; } > $(LOCK)
	rm -rf _build/lockvenv

# ---------------------------------------------------------------------------------------------
# Face data: LFW images (data/lfw/images, never committed) -> generators -> encoders -> data/*.csv
# and data/manifest.json (committed), then the donor gallery data/<encoder>_donor_none.csv (every
# photograph of the swap donor's identity). Both cores; about half an hour. FACES_ARGS adds options
# (python -m epsaudit.build.pipeline --help), e.g. FACES_ARGS=--smoke OUT=/tmp/faces, or
# FACES_ARGS=--donor-gallery-only to rebuild only the donor gallery, leaving the condition CSVs alone.
# conditions and corpora are resumable: completed batches are kept in _build/checkpoints/ as they
# finish, and the same command after an interruption loads them and writes the same files. Log lines
# carry timestamps. FACES_ARGS/CORPORA_ARGS="--scheduler tcp://HOST:8786" (or EPSAUDIT_SCHEDULER)
# runs the batches on a Dask cluster whose workers see the images at the same path (book/scale.md).

FACES_ARGS ?=
OUT        ?= data

data: conditions corpora resampled resampled-disjoint

conditions: venv data-link
	$(BIN)/python -m epsaudit.build.pipeline --image-root data/lfw/images --out-dir $(OUT) --n-jobs 2 $(FACES_ARGS)

# The cascade and operator corpora (data/corpora/, Parquet + CSV designs + corpora_manifest.json):
# about 70 min on 2 cores. CORPORA_ARGS adds options (python -m epsaudit.build.corpora_builder --help),
# e.g. a one-minute smoke run elsewhere (a subset run refuses to overwrite the full corpus):
#   make corpora OUT=/tmp/corpora-smoke CORPORA_ARGS="--max-identities 2 --chains-per-identity 1 --train-triplets 20 --test-triplets 5"
CORPORA_ARGS ?=

corpora: venv data-link
	$(BIN)/python -m epsaudit.build.corpora_builder --image-root data/lfw/images --out-dir $(OUT) --n-jobs 2 $(CORPORA_ARGS)

# The resampled swap corpus (data/resampled/: per encoder one Parquet table of pass 0, 1 and 5 of
# independent swap draws, the draws table and resampled_manifest.json). Resumable: completed batches
# are kept in _build/checkpoints/ as they finish, and the same command after an interruption skips
# them and writes the same files. RESAMPLED_ARGS adds options (python -m epsaudit.build.resampled_builder
# --help), e.g. a one-minute smoke run elsewhere (a subset run refuses to overwrite the full corpus):
#   make resampled OUT=/tmp/resampled-smoke RESAMPLED_ARGS="--identities 2 --dev 3 --test 3 --pool-size 60"
RESAMPLED_ARGS ?=

resampled: venv data-link
	$(BIN)/python -m epsaudit.build.resampled_builder --image-root data/lfw/images --out-dir $(OUT) --n-jobs 2 $(RESAMPLED_ARGS)

# The disjoint-photograph design of the same corpus (data/resampled_disjoint/, swap variants hull and
# inner): each identity's photographs cut into four disjoint parts, development and test draws from
# different parts (python -m epsaudit.build.resampled_builder --help); about 100 minutes on 2 cores.
resampled-disjoint: venv data-link
	$(BIN)/python -m epsaudit.build.resampled_builder --design disjoint --variants hull inner --image-root data/lfw/images --out-dir $(OUT) --n-jobs 2 $(RESAMPLED_ARGS)

# ---------------------------------------------------------------------------------------------
# Tests

test: venv
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --durations=15

# ---------------------------------------------------------------------------------------------
# Notebooks and book

# The book never mixes profiles: an executed chapter whose recorded papermill profile differs from
# PROFILE is removed first, so it is executed again.
profile-check:
	@for nb in book/executed/*.ipynb; do \
		[ -e "$$nb" ] || continue; \
		p=$$($(BIN)/python -c "import json,sys; print(json.load(open(sys.argv[1]))['metadata'].get('papermill', {}).get('parameters', {}).get('profile', ''))" "$$nb"); \
		if [ "$$p" != "$(PROFILE)" ]; then echo "$$nb was executed with profile '$$p', not '$(PROFILE)': executing it again"; rm -f "$$nb"; fi; \
	done

# Execute one notebook source with papermill: $(call execute,SOURCE,OUTPUT)
define execute
	@mkdir -p $(NB_SCRATCH) $(dir $(2))
	$(BIN)/jupytext --quiet --to ipynb --output $(NB_SCRATCH)/$(notdir $(basename $(1))).ipynb $(1)
	$(CLAIMS_ENV) $(BIN)/papermill --kernel $(KERNEL) --cwd notebooks \
		-p profile $(PROFILE) $(NB_SCRATCH)/$(notdir $(basename $(1))).ipynb $(2).part
	$(BIN)/python -c "$$HIDE_INJECTED" $(2).part
	mv $(2).part $(2)
endef

# papermill's injected-parameters cell is plumbing: the book removes it (the notebook's own
# parameters cell, which states the defaults, stays). An executed copy is paired with no source:
# any jupytext pairing (metadata.jupytext.formats) is dropped, so saving it in JupyterLab writes no .py.
define HIDE_INJECTED
import json, sys
path = sys.argv[1]
nb = json.load(open(path, encoding="utf-8"))
jupytext = nb.get("metadata", {}).get("jupytext")
if isinstance(jupytext, dict):
    jupytext.pop("formats", None)
    if not jupytext:
        del nb["metadata"]["jupytext"]
for cell in nb["cells"]:
    tags = cell.setdefault("metadata", {}).setdefault("tags", [])
    if "injected-parameters" in tags and "remove-cell" not in tags:
        tags.append("remove-cell")
json.dump(nb, open(path, "w", encoding="utf-8"), indent=1, ensure_ascii=False)
endef
export HIDE_INJECTED

# The book's own run checks the prose's claims strictly (a claim the run contradicts fails the build,
# epsaudit.studies.book.claim); any other run, e.g. `make chapter` or another profile, shows a note.
book/executed/%.ipynb: CLAIMS_ENV = $(if $(filter full,$(PROFILE)),EPSAUDIT_CLAIMS=strict,)
book/executed/%.ipynb: notebooks/%.py $(LIB_SOURCES) $(STAMP) | data-link
	$(call execute,$<,$@)

notebooks: venv profile-check $(NB_EXECUTED)

# One chapter by number, into _build/chapters/<profile>/ (never into the book's executed copies):
#   make chapter N=1 PROFILE=smoke
N ?=
chapter: venv data-link
	@src=$$(ls notebooks/0$(N)_*.py notebooks/$(N)_*.py 2>/dev/null | head -1); \
	if [ -z "$(N)" ] || [ -z "$$src" ]; then echo "usage: make chapter N=<number> [PROFILE=smoke|full|paper]; chapters: $(notdir $(NB_SOURCES))" >&2; exit 2; fi; \
	out=_build/chapters/$(PROFILE)/$$(basename $${src%.py}).ipynb; \
	$(MAKE) --no-print-directory _chapter SRC=$$src OUTNB=$$out && echo "executed $$src with profile $(PROFILE): $$out"

_chapter:
	$(call execute,$(SRC),$(OUTNB))

book: notebooks
	$(BIN)/jupyter-book build . -W -n --keep-going --all
	@echo "Book: $(CURDIR)/_build/html/index.html"

# The .py source always wins: each .ipynb is rewritten from its .py (cell inputs from the .py, the
# .ipynb's outputs kept: --update), never the other way round, whichever file is newer. (jupytext
# --sync would take the inputs from the newer file, so an editor save of the .ipynb could silently
# discard an edit of the .py.) SYNC_SOURCES names other sources (tests/test_notebook_pairs.py).
SYNC_SOURCES ?= $(NB_SOURCES)

sync: venv
	@$(MAKE) --no-print-directory _sync

_sync:
	@if [ -z "$(strip $(SYNC_SOURCES))" ]; then echo "no notebooks/*.py to sync"; fi
	@set -e; for src in $(SYNC_SOURCES); do \
		$(BIN)/jupytext --quiet --to ipynb --update --output "$${src%.py}.ipynb" "$$src"; \
	done

clean:
	rm -rf _build book/executed .pytest_cache
	find . -name __pycache__ -type d -not -path './.venv/*' -prune -exec rm -rf {} +
