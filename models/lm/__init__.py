"""The language models every LLM step generates through: the interface (`interface`), the config that
chooses and builds a backend (`config`), the transformers, llama.cpp and vLLM backends
(`transformers_backend`, `llama_cpp_backend`, `vllm_backend`), concurrent callers' batching
(`batching`), chat assembly (`chat`) and the memory check before a model loads (`fits`)."""
