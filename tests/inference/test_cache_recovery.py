"""A corrupt cache costs a rebuild, never the run: BM25 and FAISS indexes, resumable dense chunks and
triple-embedding chunks are recomputed, with a warning naming the file."""

import logging

import numpy as np

from core.types import Passage, Triple
from inference.embedding_index import TripleIndex
from inference.retrievers import BM25Retriever, DenseRetriever

CORPUS = [Passage.make("Nile", "The Nile is a river in Africa that flows north."),
          Passage.make("Velm", "Velm is a city with a university."),
          Passage.make("Drusk", "Drusk is a town on the river Vell.")]
QUERIES = ["which river flows north", "a city with a university"]


def test_a_corrupt_bm25_cache_is_rebuilt(tmp_path, caplog):
    first = BM25Retriever()
    first.build(CORPUS, cache_dir=tmp_path)
    (folder,) = tmp_path.glob("bm25-*")
    for path in folder.iterdir():
        if path.name != "meta.json":
            path.write_bytes(b"\x00garbage")
    again = BM25Retriever()
    with caplog.at_level(logging.WARNING):
        again.build(CORPUS, cache_dir=tmp_path)
    assert not again.loaded_from_cache
    assert "cached bm25 index is unreadable" in caplog.text and str(folder) in caplog.text
    assert again.search(QUERIES, 2) == first.search(QUERIES, 2)
    third = BM25Retriever()
    third.build(CORPUS, cache_dir=tmp_path)  # the rebuilt cache is whole again
    assert third.loaded_from_cache


def test_a_corrupt_faiss_index_and_a_corrupt_resume_chunk_are_redone(tmp_path, tiny_encoder, caplog):
    first = DenseRetriever(tiny_encoder, chunk_size=2)
    first.build(CORPUS, cache_dir=tmp_path)
    (folder,) = tmp_path.glob("dense-*")
    (folder / "index.faiss").write_bytes(b"not an index")
    (folder / "chunk-0000000000-0000000002.npy").write_bytes(b"half a chunk")  # as a kill leaves it
    again = DenseRetriever(tiny_encoder, chunk_size=2)
    with caplog.at_level(logging.WARNING):
        again.build(CORPUS, cache_dir=tmp_path)
    assert "cached dense index is unreadable" in caplog.text and "unreadable embedding chunk" in caplog.text
    assert not again.loaded_from_cache
    np.testing.assert_array_equal(again.index.reconstruct_n(0, 3), first.index.reconstruct_n(0, 3))


def test_a_corrupt_triple_embedding_chunk_is_dropped_and_recomputed(tmp_path, tiny_encoder, caplog):
    triples = [Triple.make("Nile", "flows", "north", "p1"), Triple.make("Velm", "has", "a university", "p2")]
    expected = TripleIndex(tiny_encoder, tmp_path).vectors(triples)
    (chunk,) = tmp_path.glob("triples-*/chunk-*.npz")
    chunk.write_bytes(b"PK\x03\x04 truncated")
    with caplog.at_level(logging.WARNING):
        index = TripleIndex(tiny_encoder, tmp_path)
    assert "unreadable embedding chunk" in caplog.text and not chunk.exists()
    assert index.rows == {}
    np.testing.assert_allclose(index.vectors(triples), expected, rtol=0, atol=1e-6)
    assert len(list(tmp_path.glob("triples-*/chunk-*.npz"))) == 1  # the recomputed vectors are saved again
