import faiss
import numpy as np
import pytest

from core.types import Passage
from inference.retrievers import (BM25Retriever, DenseRetriever, HybridConfig, HybridRetriever, make_retriever,
                                  passage_text, reciprocal_rank_fusion)

CORPUS = [
    Passage.make("Zanzibar", "Zanzibar is an archipelago off the coast of Tanzania, famous for its cloves."),
    Passage.make("Amazon River", "The Amazon river flows through Brazil and Peru into the Atlantic Ocean."),
    Passage.make("Nile", "The Nile is a river in Africa that flows north into the Mediterranean Sea."),
    Passage.make("Abbey Road", "Abbey Road is an album by the Beatles, recorded in London in 1969."),
    Passage.make("Casablanca", "Casablanca is a 1942 film starring Humphrey Bogart and Ingrid Bergman."),
    Passage.make("Marie Curie", "Marie Curie was born in Warsaw and won two Nobel prizes for radioactivity."),
]
IDS = [p.id for p in CORPUS]
QUERIES = ["which archipelago is famous for cloves", "who starred in the film casablanca", "what river flows north"]


def count_encodes(monkeypatch, encoder, fail_on_call: int | None = None) -> list[str]:
    """Record the `kind` of every `encoder.encode` call; optionally raise on the n-th passage call."""
    calls: list[str] = []
    real = encoder.encode

    def encode(texts, kind="passage", *args, **kwargs):
        calls.append(kind)
        if kind == "passage" and calls.count("passage") == fail_on_call:
            raise KeyboardInterrupt("simulated interruption")
        return real(texts, kind, *args, **kwargs)

    monkeypatch.setattr(encoder, "encode", encode)
    return calls


def test_bm25_ranks_rare_word_match_first():
    bm25 = BM25Retriever()
    bm25.build(CORPUS)
    hits = bm25.search(["Which spice made Zanzibar famous? Cloves.", "Where was Marie Curie born?"], k=3)
    assert hits[0][0][0] == CORPUS[0].id and hits[1][0][0] == CORPUS[5].id
    assert all(len(h) <= 3 and [s for _, s in h] == sorted((s for _, s in h), reverse=True) for h in hits)


def test_bm25_returns_only_matching_passages_and_handles_large_k():
    bm25 = BM25Retriever()
    bm25.build(CORPUS)
    unmatched, rivers = bm25.search(["xyzzy plugh", "rivers"], k=100)
    assert unmatched == []
    assert {pid for pid, _ in rivers} == {CORPUS[1].id, CORPUS[2].id}


def test_dense_returns_k_best_first_from_corpus(tiny_encoder):
    dense = DenseRetriever(tiny_encoder)
    dense.build(CORPUS)
    for hits in dense.search(QUERIES, k=3):
        scores = [s for _, s in hits]
        assert len(hits) == 3 and scores == sorted(scores, reverse=True)
        assert {pid for pid, _ in hits} <= set(IDS)
    (everything,) = dense.search(QUERIES[:1], k=50)
    assert sorted(pid for pid, _ in everything) == sorted(IDS)


def test_dense_batches_by_the_encoders_config(make_tiny_encoder, monkeypatch):
    encoder = make_tiny_encoder(batch_size=4)
    sizes = []
    forward = encoder.forward
    monkeypatch.setattr(encoder, "forward",
                        lambda texts, kind="passage": sizes.append((kind, len(texts))) or forward(texts, kind))
    dense = DenseRetriever(encoder)
    dense.build(CORPUS)
    assert sizes == [("passage", 4), ("passage", 2)]
    dense.search(QUERIES * 2, k=1)
    assert sizes[2:] == [("query", 4), ("query", 2)]


def test_flat_search_equals_brute_force(tiny_encoder):
    dense = DenseRetriever(tiny_encoder, index="flat")
    dense.build(CORPUS)
    emb = tiny_encoder.encode([passage_text(p) for p in CORPUS])
    scores = tiny_encoder.encode(QUERIES, "query") @ emb.T
    for hits, row in zip(dense.search(QUERIES, k=len(CORPUS)), scores):
        order = np.argsort(-row)
        assert [pid for pid, _ in hits] == [IDS[i] for i in order]
        np.testing.assert_allclose([s for _, s in hits], row[order], rtol=1e-5, atol=1e-6)


def test_hnsw_top1_matches_flat(tiny_encoder):
    flat, hnsw = DenseRetriever(tiny_encoder), DenseRetriever(tiny_encoder, index="hnsw", hnsw_m=8)
    flat.build(CORPUS)
    hnsw.build(CORPUS)
    top1 = lambda r: [hits[0][0] for hits in r.search(QUERIES, k=1)]
    assert top1(hnsw) == top1(flat)


def test_dense_cache_reloads_only_when_nothing_changed(tmp_path, monkeypatch, make_tiny_encoder):
    encoder = make_tiny_encoder()
    first = DenseRetriever(encoder)
    first.build(CORPUS, cache_dir=tmp_path)
    assert not first.loaded_from_cache
    calls = count_encodes(monkeypatch, encoder)
    again = DenseRetriever(encoder, ef_search=16)  # a search-time setting: the index is reused
    again.build(CORPUS, cache_dir=tmp_path)
    assert again.loaded_from_cache and "passage" not in calls
    assert again.search(QUERIES, k=4) == first.search(QUERIES, k=4)

    changed = [
        (DenseRetriever(encoder), CORPUS[:-1]),
        (DenseRetriever(make_tiny_encoder(passage_prefix="passage: ")), CORPUS),
        (DenseRetriever(make_tiny_encoder(seed=1)), CORPUS),
        (DenseRetriever(encoder, index="hnsw"), CORPUS),
    ]
    for retriever, corpus in changed:
        retriever.build(corpus, cache_dir=tmp_path)
        assert not retriever.loaded_from_cache
    assert len(list(tmp_path.glob("dense-*/meta.json"))) == 1 + len(changed)


def test_bm25_cache_reloads_only_when_corpus_unchanged(tmp_path):
    first = BM25Retriever()
    first.build(CORPUS, cache_dir=tmp_path)
    again = BM25Retriever()
    again.build(CORPUS, cache_dir=tmp_path)
    assert not first.loaded_from_cache and again.loaded_from_cache
    assert again.search(QUERIES, k=3) == first.search(QUERIES, k=3)
    other = BM25Retriever()
    other.build(CORPUS[::-1], cache_dir=tmp_path)
    assert not other.loaded_from_cache
    rebuilt_k1 = BM25Retriever(k1=1.2)
    rebuilt_k1.build(CORPUS, cache_dir=tmp_path)
    assert not rebuilt_k1.loaded_from_cache


def test_interrupted_dense_build_resumes_from_finished_chunks(tmp_path, monkeypatch, tiny_encoder):
    count_encodes(monkeypatch, tiny_encoder, fail_on_call=2)
    with pytest.raises(KeyboardInterrupt):
        DenseRetriever(tiny_encoder, chunk_size=2).build(CORPUS, cache_dir=tmp_path)
    (folder,) = tmp_path.glob("dense-*")
    assert not (folder / "meta.json").exists() and len(list(folder.glob("chunk-*.npy"))) == 1

    monkeypatch.undo()
    calls = count_encodes(monkeypatch, tiny_encoder)
    resumed = DenseRetriever(tiny_encoder, chunk_size=2)
    resumed.build(CORPUS, cache_dir=tmp_path)
    assert not resumed.loaded_from_cache and calls.count("passage") == 2
    assert (folder / "meta.json").exists() and not list(folder.glob("chunk-*"))

    monkeypatch.undo()
    straight = DenseRetriever(tiny_encoder, chunk_size=2)
    straight.build(CORPUS)
    n = len(CORPUS)
    np.testing.assert_array_equal(resumed.index.reconstruct_n(0, n), straight.index.reconstruct_n(0, n))


@pytest.mark.parametrize("kind", ["bm25", "dense"])
def test_empty_corpus_raises(kind, tiny_encoder):
    with pytest.raises(ValueError, match="empty"):
        make_retriever(kind, encoder=tiny_encoder).build([])


def test_search_before_build_raises():
    with pytest.raises(RuntimeError, match="build"):
        BM25Retriever().search(["q"], k=1)


def test_make_retriever(tiny_encoder):
    assert isinstance(make_retriever("bm25"), BM25Retriever)
    dense = make_retriever("dense", encoder=tiny_encoder, index="hnsw")
    assert isinstance(dense, DenseRetriever) and dense.index_type == "hnsw"
    hybrid = make_retriever("hybrid", encoder=tiny_encoder, hybrid=HybridConfig(rrf_k=5, depth=7), index="hnsw")
    assert isinstance(hybrid, HybridRetriever) and isinstance(hybrid.sparse, BM25Retriever)
    assert hybrid.dense.index_type == "hnsw" and (hybrid.config.rrf_k, hybrid.config.depth) == (5, 7)
    with pytest.raises(ValueError, match="bm25, dense, hybrid"):
        make_retriever("splade")
    for kind in ("dense", "hybrid"):
        with pytest.raises(ValueError, match="encoder"):
            make_retriever(kind)


@pytest.mark.skipif(faiss.get_num_gpus() > 0, reason="checks the CPU-only error")
def test_cuda_without_faiss_gpu_fails_clearly(tiny_encoder):
    with pytest.raises(RuntimeError, match="faiss-gpu"):
        DenseRetriever(tiny_encoder, device="cuda").build(CORPUS)
    with pytest.raises(ValueError, match="HNSW"):
        DenseRetriever(tiny_encoder, index="hnsw", device="cuda")


# --- hybrid: BM25 and dense fused by reciprocal rank ------------------------------------------------------


def test_rrf_scores_and_order_by_hand():
    bm25 = [("a", 9.0), ("b", 7.0), ("c", 1.0), ("d", 0.5)]
    dense = [("d", 0.9), ("c", 0.8), ("e", 0.7)]
    fused = reciprocal_rank_fusion([bm25, dense], rrf_k=1, k=10)
    # a 1/2, b 1/3, c 1/4 + 1/3, d 1/5 + 1/2, e 1/4
    assert [pid for pid, _ in fused] == ["d", "c", "a", "b", "e"]
    assert [s for _, s in fused] == pytest.approx([0.7, 7 / 12, 0.5, 1 / 3, 0.25])
    assert reciprocal_rank_fusion([bm25, dense], rrf_k=1, k=2) == fused[:2]
    # rrf_k = 60 flattens the ranks: d (ranks 4 and 1) still beats c (3 and 2), by 1/64 + 1/61 > 1/63 + 1/62
    assert [pid for pid, _ in reciprocal_rank_fusion([bm25, dense], rrf_k=60, k=3)] == ["d", "c", "a"]


def test_rrf_ties_go_to_the_better_rank_then_to_bm25s_list():
    fused = reciprocal_rank_fusion([[("d", 1.0), ("c", 1.0)], [("b", 1.0), ("a", 1.0)]], rrf_k=60, k=10)
    assert fused == [("d", 1 / 61), ("b", 1 / 61), ("c", 1 / 62), ("a", 1 / 62)]
    both = reciprocal_rank_fusion([[("x", 1.0), ("y", 1.0)], [("y", 1.0), ("x", 1.0)]], rrf_k=60, k=10)
    assert both == [("x", 1 / 61 + 1 / 62), ("y", 1 / 61 + 1 / 62)]


class FixedRetriever:
    """A retriever part that returns `hits` for every query and records the depth asked for."""

    def __init__(self, hits):
        self.hits, self.ks, self.ids, self.loaded_from_cache = hits, [], [], False

    def build(self, passages, cache_dir=None):
        self.ids = [p.id for p in passages]

    def search(self, queries, k):
        self.ks.append(k)
        return [self.hits[:k] for _ in queries]


def test_hybrid_searches_both_to_depth_and_fuses():
    sparse, dense = FixedRetriever([("a", 9.0), ("b", 7.0)]), FixedRetriever([("b", 0.9), ("c", 0.8)])
    hybrid = HybridRetriever(sparse, dense, HybridConfig(rrf_k=60, depth=3))
    hybrid.build(CORPUS)
    assert hybrid.search(["q1", "q2"], k=2) == [[("b", 1 / 62 + 1 / 61), ("a", 1 / 61)]] * 2
    hybrid.search(["q"], k=5)  # more than the depth: both search to k
    assert sparse.ks == dense.ks == [3, 5]


def test_hybrid_finds_what_only_bm25_or_only_dense_finds(tiny_encoder, tmp_path):
    query = ["which archipelago is famous for cloves"]
    bm25, dense = BM25Retriever(), DenseRetriever(tiny_encoder)
    for r in (bm25, dense):
        r.build(CORPUS)
    (sparse_hits,), (dense_hits,) = bm25.search(query, k=3), dense.search(query, k=3)
    only_bm25 = {pid for pid, _ in sparse_hits} - {pid for pid, _ in dense_hits}
    only_dense = {pid for pid, _ in dense_hits} - {pid for pid, _ in sparse_hits}
    assert len(sparse_hits) == 1 and only_bm25 and only_dense  # the random encoder misses the cloves passage
    hybrid = make_retriever("hybrid", encoder=tiny_encoder, hybrid=HybridConfig(depth=3))
    hybrid.build(CORPUS, cache_dir=tmp_path)
    (fused,) = hybrid.search(query, k=3)
    assert fused == reciprocal_rank_fusion([sparse_hits, dense_hits], 60, 3)
    # BM25's one passage and dense's first tie at 1/61 (BM25's first), then dense's second
    assert [pid for pid, _ in fused] == [sparse_hits[0][0], dense_hits[0][0], dense_hits[1][0]]
    assert only_bm25 <= {pid for pid, _ in fused} and only_dense & {pid for pid, _ in fused}
    # each part keeps its own index cache, which a second hybrid (or a BM25 or dense run) reloads
    assert {p.name.split("-")[0] for p in tmp_path.iterdir()} == {"bm25", "dense"} and not hybrid.loaded_from_cache
    again = make_retriever("hybrid", encoder=tiny_encoder, hybrid=HybridConfig(depth=3))
    again.build(CORPUS, cache_dir=tmp_path)
    assert again.loaded_from_cache and again.search(query, k=3) == [fused]
