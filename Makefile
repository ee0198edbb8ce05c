# Two commands do all set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO := demo/demo.concord
# Qt's system libraries (X11/xcb/GL/fonts): checked with ldd, installed with apt-get when root, else the exact
# command is printed and make stops (see resources/setup/qt_system_libs.py).
QT_LIBS := $(BIN)/python resources/setup/qt_system_libs.py
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: run test install bench bench-quick clean docs

# Debian/Ubuntu ship venv separately (python3-venv); say so instead of leaving a broken .venv behind.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); \
	  echo "make: '$(PYTHON) -m venv' failed; on Debian/Ubuntu: sudo apt-get install -y python3-venv" >&2; exit 1; }
	$(BIN)/pip install --quiet --upgrade pip

# torch first, and the CPU build: on Linux the PyPI wheel of torch==2.13.0 is the CUDA 13 build (526 MB) and
# pulls cuda-toolkit, cuDNN, NCCL and triton (several GB) that Concord never uses. PyPI has no CPU-only torch
# wheel for Linux, so we ask for the local version 2.13.0+cpu, which only the PyTorch CPU index (or a local
# wheel directory from pip's find-links) has: the configured indexes are tried first, then the CPU index. If
# neither has it, make stops here rather than fall back to the CUDA build.
TORCH := torch==2.13.0+cpu
TORCH_CPU_INDEX := https://download.pytorch.org/whl/cpu
# `concord models prepare`: the embedding model's one-time ONNX export (about 30 s, 2.3 GB peak; nothing when the
# cache already has it), here rather than at the first `calibrate` or embedding in the app.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet "$(TORCH)" 2>/dev/null || \
	  $(BIN)/pip install --quiet --extra-index-url $(TORCH_CPU_INDEX) "$(TORCH)"
	$(BIN)/pip install --quiet -e '.[dev]'
	$(BIN)/concord models prepare
	touch $(STAMP)

install: $(STAMP)

$(DEMO): | $(STAMP)
	$(BIN)/concord demo $(DEMO)

run: $(STAMP) $(DEMO)
	$(QT_LIBS) --platform xcb
	$(BIN)/concord gui $(DEMO)

# pytest-xdist: one worker per core, at most 4 (each may hold torch and Qt, about 1.5 GB); --dist loadgroup keeps the
# tests marked xdist_group on one worker; the longest tests of the last run start first (tests/slow_first.py); the
# 15 slowest tests are listed at the end. `make test TEST_ARGS=-n0` runs it in one process.
TEST_ARGS ?= -n auto --maxprocesses=4 --dist loadgroup --durations=15
test: $(STAMP)
	$(QT_LIBS) --platform offscreen
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest $(TEST_ARGS)

docs: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m app.gui.cheatsheet

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do $(BIN)/python $$f; done

# every benchmark at a small size (a few minutes), then one table of ratios to the in-run references
bench-quick: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python benchmarks/quick.py

clean:
	rm -rf $(VENV) demo
