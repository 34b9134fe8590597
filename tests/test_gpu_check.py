"""benchmarks/gpu_check.py's synthetic chains: every text distinct, so a batch of N questions holds N
queries and all of their triples, as a batch of real, different questions does."""

from benchmarks.gpu_check import synthetic_chains
from core.chains import read_chains


def test_synthetic_chains_have_distinct_texts_and_the_asked_shape(tmp_path):
    records = read_chains(synthetic_chains(tmp_path / "chains.jsonl", questions=50, negatives=3))
    assert len(records) == 50 and all(2 <= len(r.chain) <= 4 and r.complete for r in records)
    assert all(len(hop) == 3 for r in records for hop in r.negatives) and all(len(r.negatives) == len(r.chain)
                                                                               for r in records)
    triples = [t.text for r in records for t in r.chain + sum(r.negatives, ())]
    assert len(set(triples)) == len(triples)
    assert len({r.question for r in records}) == 50
