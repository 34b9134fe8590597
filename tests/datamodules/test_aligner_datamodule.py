"""The Aligner's datamodule: splits, examples, negatives, sampling, batching, sharding."""

from collections import Counter
from types import SimpleNamespace

import pytest

from datamodules.aligner_datamodule import AlignerDataModule
from core.chains import ChainRecord, aligner_query, write_chains
from core.types import Triple, triple_key


def hand_made_chains() -> list[ChainRecord]:
    """12 questions of 2-4 hops; every 4th a comparison (unordered); the last one incomplete.

    Each hop's negatives hold 6 real ones plus traps: the positive spelled differently, another
    triple of the chain, and a duplicate of a real negative.
    """
    records = []
    for q in range(12):
        hops = 2 + q % 3
        chain = tuple(Triple.make(f"e{q}h{i}", "links to", f"e{q}h{i + 1}", f"p{q}-{i}") for i in range(hops))
        negatives = tuple(
            tuple(Triple.make(f"n{q}h{i}x{j}", "links to", "elsewhere", f"p{q}-n{j}") for j in range(6))
            + (
                Triple.make(chain[i].head.upper(), " links  to ", chain[i].tail, "copy"),
                chain[(i + 1) % hops],
                Triple.make(f"n{q}h{i}x0", "links to", "elsewhere", "copy"),
            )
            for i in range(hops)
        )
        comparison = q % 4 == 3
        records.append(ChainRecord(f"q{q}", f"question {q}?", "comparison" if comparison else "bridge",
                                   not comparison, q != 11, chain, negatives))
    return records


@pytest.fixture
def chains_file(tmp_path):
    path = tmp_path / "chains.jsonl"
    write_chains(path, hand_made_chains())
    return path


def make_dm(chains_file, rank=0, world_size=1, epoch=0, **kwargs) -> AlignerDataModule:
    kwargs = {"batch_size": 4, "num_negatives": 3, "val_fraction": 0.2, **kwargs}
    dm = AlignerDataModule(str(chains_file), **kwargs)
    dm.trainer = SimpleNamespace(global_rank=rank, world_size=world_size, current_epoch=epoch)
    dm.setup("fit")
    return dm


def epoch_batches(dm, epoch=0) -> list[dict]:
    loader = dm.train_dataloader()
    loader.sampler.set_epoch(epoch)
    return list(loader)


def test_split_is_by_question_deterministic_and_drops_incomplete(chains_file):
    dm = make_dm(chains_file)
    train = {r.question_id for r in dm.train_records}
    val = {r.question_id for r in dm.val_records}
    assert not train & val and train | val == {f"q{i}" for i in range(11)}  # q11 is incomplete
    assert len(val) == 2
    assert {r.question_id for r in make_dm(chains_file).val_records} == val
    assert len(make_dm(chains_file, only_complete=False).train_records) == 10


def test_test_questions_are_a_random_share_of_all_questions_taken_before_incomplete_ones_are_dropped(chains_file):
    held_out = {seed: make_dm(chains_file, test_fraction=0.5, seed=seed) for seed in range(8)}
    for seed, dm in held_out.items():
        test = set(dm.test_ids)
        train, val = {r.question_id for r in dm.train_records}, {r.question_id for r in dm.val_records}
        assert len(test) == 6 and not test & (train | val)
        assert train | val | test == {f"q{i}" for i in range(12)} - ({"q11"} - test)  # only q11 may be missing
        assert set(make_dm(chains_file, test_fraction=0.5, seed=seed).test_ids) == test
    # the incomplete question is a test question as often as chance has it, not always
    assert 0 < sum("q11" in dm.test_ids for dm in held_out.values()) < len(held_out)
    assert make_dm(chains_file).test_ids == []


def test_examples_follow_the_query_format_and_prefixes_per_question(chains_file):
    dm = make_dm(chains_file, prefixes_per_question=2)
    records = {r.question_id: r for r in dm.train_records}
    hops = Counter()
    for batch in epoch_batches(dm):
        for qid, query, positive in zip(batch["question_ids"], batch["queries"], batch["positives"]):
            record = records[qid]
            texts = [t.text for t in record.chain]
            prefix = query.split("\nknowledge triples: ")[1][:-1].split(". ") if "\n" in query else []
            assert query == aligner_query(record.question, prefix)
            if record.ordered:
                assert prefix == texts[: len(prefix)] and positive == texts[len(prefix)]
            else:  # any order of the chain: prefix and positive are distinct chain triples
                assert set(prefix) < set(texts) and positive in set(texts) - set(prefix)
            hops[qid, len(prefix)] += 1
    per_question = Counter(qid for qid, _ in hops)
    assert per_question == {qid: 2 for qid in records}  # 2 distinct prefix lengths per question
    assert max(hops.values()) == 1


def test_negatives_exclude_the_positive_chain_triples_and_duplicates(chains_file):
    dm = make_dm(chains_file, num_negatives=20)
    for batch in epoch_batches(dm):
        for qid, negatives, mask in zip(batch["question_ids"], batch["negatives"], batch["negative_mask"]):
            chain = next(r for r in dm.train_records if r.question_id == qid).chain
            chain_keys = {triple_key(t.head, t.relation, t.tail) for t in chain}
            assert len(negatives) == 6 and len(set(negatives)) == 6
            assert all(n.startswith(f"<n{qid[1:]}h") for n in negatives)
            assert not {n.lower() for n in negatives} & {t.text.lower() for t in chain}
            assert chain_keys.isdisjoint(n.strip("<>").lower() for n in negatives)
            assert mask.sum() == 6
    assert all(len(n) == 3 for b in epoch_batches(make_dm(chains_file)) for n in b["negatives"])


def test_no_question_twice_in_a_batch(chains_file):
    for batch in epoch_batches(make_dm(chains_file, batch_size=8, prefixes_per_question=3), epoch=1):
        assert len(set(batch["question_ids"])) == len(batch["question_ids"])


def test_sampling_is_reproducible_per_seed_and_epoch(chains_file):
    def plan(seed, epoch):
        return [(b["queries"], b["negatives"]) for b in epoch_batches(make_dm(chains_file, seed=seed), epoch)]

    assert plan(0, 0) == plan(0, 0)
    assert plan(0, 1) == plan(0, 1)
    assert plan(0, 0) != plan(0, 1)
    assert plan(0, 0) != plan(1, 0)


def test_ranks_get_disjoint_equal_shares_of_each_global_batch(chains_file):
    single = epoch_batches(make_dm(chains_file, batch_size=4))
    ranks = [make_dm(chains_file, rank=r, world_size=2, batch_size=4) for r in (0, 1)]
    shares = [epoch_batches(dm) for dm in ranks]
    assert {len(b["queries"]) for share in shares for b in share[:-1]} == {2}  # the global 4, halved
    assert len(shares[0]) == len(shares[1]) == len(ranks[0].train_dataloader())
    for whole, first, second in zip(single, *shares):
        assert first["index"].tolist() + second["index"].tolist() == whole["index"].tolist()
        assert not set(first["question_ids"]) & set(second["question_ids"])
    with pytest.raises(ValueError, match="divisible"):
        make_dm(chains_file, world_size=2, batch_size=5)


def test_validation_holds_every_prefix_with_fixed_negatives(chains_file):
    dm = make_dm(chains_file)
    batches = list(dm.val_dataloader())
    hops = sum(len(r.chain) for r in dm.val_records)
    assert sum(len(b["queries"]) for b in batches) == hops
    again = make_dm(chains_file, epoch=3)
    again_batches = list(again.val_dataloader())
    assert [b["queries"] for b in batches] == [b["queries"] for b in again_batches]
    assert [b["negatives"] for b in batches] == [b["negatives"] for b in again_batches]
    assert make_dm(chains_file, val_fraction=0.0).val_dataloader() == []
