"""The knowledge-triple corpus: the triple parser, the KG store, LLM extraction and its prompt, the
OpenIE import, and the knowledge graph that reads (or extracts) any passage's triples."""
