"""The Aligner's datamodule: splits, examples, negatives, sampling, batching, sharding."""

import hashlib
import json
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from datamodules.aligner_datamodule import AlignerDataModule, QuestionBatches, dataset_name
from core.chains import ChainRecord, aligner_query, read_chains, write_chains
from core.types import Triple, triple_key

ROOT = Path(__file__).resolve().parents[2]


def hand_made_chains(n: int = 12, label: str = "") -> list[ChainRecord]:
    """`n` (12) questions of 2-4 hops; every 4th a comparison (unordered); the last one incomplete.
    `label` goes into the question texts and entities, so that two datasets with the same question ids
    (q0, q1, ...) can be told apart.

    Each hop's negatives hold 6 real ones plus traps: the positive spelled differently, another
    triple of the chain, and a duplicate of a real negative.
    """
    records = []
    for q in range(n):
        hops = 2 + q % 3
        chain = tuple(Triple.make(f"{label}e{q}h{i}", "links to", f"{label}e{q}h{i + 1}", f"p{q}-{i}")
                      for i in range(hops))
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
        records.append(ChainRecord(f"q{q}", f"{label}question {q}?", "comparison" if comparison else "bridge",
                                   not comparison, q != n - 1, chain, negatives))
    return records


@pytest.fixture
def chains_file(tmp_path):
    path = tmp_path / "chains.jsonl"
    write_chains(path, hand_made_chains())
    return path


def make_dm(chains_file, rank=0, world_size=1, epoch=0, **kwargs) -> AlignerDataModule:
    kwargs = {"batch_size": 4, "num_negatives": 3, "val_fraction": 0.2, **kwargs}
    chains = {k: str(v) for k, v in chains_file.items()} if isinstance(chains_file, dict) else str(chains_file)
    dm = AlignerDataModule(chains, **kwargs)
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
        [test] = map(set, dm.test_ids.values())  # one dataset
        train, val = {r.question_id for r in dm.train_records}, {r.question_id for r in dm.val_records}
        assert len(test) == 6 and not test & (train | val)
        assert train | val | test == {f"q{i}" for i in range(12)} - ({"q11"} - test)  # only q11 may be missing
        assert make_dm(chains_file, test_fraction=0.5, seed=seed).test_ids == dm.test_ids
    # the incomplete question is a test question as often as chance has it, not always
    assert 0 < sum("q11" in ids for dm in held_out.values() for ids in dm.test_ids.values()) < len(held_out)
    assert make_dm(chains_file).test_ids == {dataset_name(str(chains_file)): []}


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


def fingerprint(batches: list[dict]) -> str:
    return hashlib.sha1(json.dumps([[b["question_ids"], b["queries"], b["positives"], b["negatives"],
                                     b["index"].tolist()] for b in batches]).encode()).hexdigest()


def test_a_single_chains_file_gives_the_split_and_batches_it_gave_before(chains_file):
    """Pinned from the single-file datamodule before datasets were added (same files, same seeds)."""
    def split(**kwargs):
        dm = make_dm(chains_file, **kwargs)
        return dm.test_ids, [r.question_id for r in dm.val_records], [r.question_id for r in dm.train_records]

    name = dataset_name(str(chains_file))
    assert split() == ({name: []}, ["q8", "q9"], ["q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "q10"])
    assert split(test_fraction=0.5) == ({name: ["q1", "q2", "q5", "q8", "q9", "q10"]}, ["q4"], ["q0", "q3", "q6", "q7"])
    assert split(test_fraction=0.25, seed=3) == (
        {name: ["q1", "q7", "q10"]}, ["q0", "q6"], ["q2", "q3", "q4", "q5", "q8", "q9"])
    assert split(test_fraction=0.5, val_fraction=0.4, seed=7) == (
        {name: ["q3", "q4", "q7", "q8", "q10", "q11"]}, ["q0", "q6"], ["q1", "q2", "q5", "q9"])
    dm = make_dm(chains_file, test_fraction=0.25)
    assert fingerprint(epoch_batches(dm, epoch=1)) == "d48f86dd81493b56e1302bc7944e0e851c926724"
    assert fingerprint(list(dm.val_dataloader())) == "b27cba44f4826d4828b1160c7b54bf121aaffb8c"
    assert dm.val_dataset_names == []  # one dataset: val/mrr only
    assert make_dm({"solo": chains_file}, test_fraction=0.25).test_ids == {"solo": dm.test_ids[name]}


@pytest.fixture
def three_datasets(tmp_path) -> dict[str, Path]:
    """Three chains files of 12, 8 and 20 questions whose question ids collide (q0, q1, ...)."""
    files = {}
    for name, n in (("alpha", 12), ("beta", 8), ("gamma", 20)):
        files[name] = tmp_path / name / "chains.jsonl"
        write_chains(files[name], hand_made_chains(n, label=f"{name}-"))
    return files


def test_each_dataset_is_split_within_itself_as_when_alone(three_datasets):
    for seed in range(4):
        dm = make_dm(three_datasets, test_fraction=0.5, val_fraction=0.25, seed=seed)
        assert list(dm.test_ids) == list(three_datasets)
        train, val = Counter(dm.train_record_datasets), Counter(dm.val_record_datasets)
        for name, path in three_datasets.items():
            alone = make_dm(path, test_fraction=0.5, val_fraction=0.25, seed=seed)
            assert dm.test_ids[name] == alone.test_ids[dataset_name(str(path))]
            n = len(read_chains(path))
            assert len(dm.test_ids[name]) == n // 2  # each dataset keeps its share of test questions
            usable = [r for r in read_chains(path) if r.question_id not in dm.test_ids[name] and r.complete]
            assert val[name] == max(1, round(0.25 * len(usable))) and train[name] + val[name] == len(usable)
            mine = [r for r, d in zip(dm.train_records, dm.train_record_datasets) if d == name]
            assert mine == alone.train_records
            mine = [r for r, d in zip(dm.val_records, dm.val_record_datasets) if d == name]
            assert mine == alone.val_records
        again = make_dm(three_datasets, test_fraction=0.5, val_fraction=0.25, seed=seed)
        assert again.test_ids == dm.test_ids and again.val_records == dm.val_records
    assert make_dm(three_datasets, test_fraction=0.5, seed=0).test_ids != make_dm(
        three_datasets, test_fraction=0.5, seed=1).test_ids


def test_a_test_fraction_per_dataset_gives_each_dataset_its_split_alone(three_datasets):
    fractions = {"alpha": 0.5, "beta": 0.0, "gamma": 0.25}
    dm = make_dm(three_datasets, test_fraction=fractions, seed=2)
    for name, path in three_datasets.items():
        alone = make_dm(path, test_fraction=fractions[name], seed=2)
        assert dm.test_ids[name] == alone.test_ids[dataset_name(str(path))]
    assert [len(dm.test_ids[n]) for n in fractions] == [6, 0, 5]
    with pytest.raises(ValueError, match="test_fraction names datasets alpha, beta; chains has alpha, beta, gamma"):
        make_dm(three_datasets, test_fraction={"alpha": 0.5, "beta": 0.5})
    with pytest.raises(ValueError, match="test_fraction in \\[0, 1\\]"):
        make_dm(three_datasets, test_fraction={"alpha": 0.5, "beta": 1.5, "gamma": 0.1})


def test_a_test_fraction_of_one_makes_a_dataset_a_test_set_only(three_datasets):
    fractions = {"alpha": 0.5, "beta": 1.0, "gamma": 0.25}
    dm = make_dm(three_datasets, test_fraction=fractions, val_fraction=0.25, seed=2)
    assert dm.test_ids["beta"] == [r.question_id for r in read_chains(three_datasets["beta"])]  # all 8, in order
    assert "beta" not in dm.train_record_datasets + dm.val_record_datasets
    without = {n: p for n, p in three_datasets.items() if n != "beta"}
    alone = make_dm(without, test_fraction={n: fractions[n] for n in without}, val_fraction=0.25, seed=2)
    assert (dm.train_records, dm.val_records) == (alone.train_records, alone.val_records)
    assert dm.val_dataset_names == ["alpha", "gamma"]


def test_a_checkpoint_refuses_chains_files_that_changed_since_its_split(three_datasets):
    dm = make_dm(three_datasets, test_fraction=0.25)
    state = dm.state_dict()
    assert state["test_ids"] == dm.test_ids and "train_loader" not in state
    make_dm(three_datasets, test_fraction=0.25).load_state_dict(state)  # the same files: the same split
    grown = hand_made_chains(13, label="beta-")  # beta gains questions: its shuffle, so its split, changes
    write_chains(three_datasets["beta"], grown)
    fresh = AlignerDataModule({k: str(v) for k, v in three_datasets.items()}, test_fraction=0.25)
    with pytest.raises(ValueError, match=r"test questions of beta are not those the checkpoint was trained with"):
        fresh.load_state_dict(state)  # not set up yet: the check sets it up


def test_examples_keep_their_dataset_and_a_batch_never_holds_one_question_twice(three_datasets):
    dm = make_dm(three_datasets, batch_size=8, prefixes_per_question=3, test_fraction=0.25)
    seen = set()
    batches = [(True, b) for b in epoch_batches(dm, epoch=1)] + [(False, b) for b in dm.val_dataloader()]
    for training, batch in batches:
        pairs = list(zip(batch["datasets"], batch["question_ids"]))
        assert len(set(pairs)) == len(pairs) or not training  # validation holds every prefix of a question
        for (name, qid), query, positive in zip(pairs, batch["queries"], batch["positives"]):
            number = qid[1:]
            assert query.startswith(f"{name}-question {number}?") and positive.startswith(f"<{name}-e{number}h")
            seen.add((name, qid))
    assert {d for d, _ in seen} == set(three_datasets)
    assert any(("alpha", q) in seen and ("gamma", q) in seen for _, q in seen)  # same id, two questions
    assert set(dm.val_dataset_names) == set(three_datasets) and dm.val_dataset_names == list(three_datasets)


def test_dataset_settings_are_checked(three_datasets, tmp_path):
    with pytest.raises(ValueError, match="dataset name 'a.b'"):
        make_dm({"a.b": three_datasets["alpha"]})
    with pytest.raises(ValueError, match="no file"):
        make_dm({})
    with pytest.raises(ValueError, match="give a mapping"):
        make_dm(three_datasets, val_chains=str(three_datasets["alpha"]))
    with pytest.raises(ValueError, match="delta not among the datasets"):
        make_dm(three_datasets, val_chains={"delta": str(three_datasets["alpha"])})
    dm = make_dm(three_datasets, val_chains={"beta": str(three_datasets["alpha"])})
    assert set(dm.val_record_datasets) == {"beta"} and len(dm.val_records) == 11  # all of alpha's complete ones
    assert len(dm.train_records) == 11 + 7 + 19  # every complete chain of chains
    assert dataset_name("runs/chains/musique/chains.jsonl") == "musique" and dataset_name("chains.jsonl") == "chains"


def config_data(name: str) -> dict:
    return yaml.safe_load((ROOT / "configs" / "aligner" / name).read_text())["data"]["init_args"]


def test_multi_cpu_tests_on_the_questions_kirag_eval_evaluates(three_datasets):
    """multi_cpu.yaml's MuSiQue test split is shared_cpu.yaml's (benchmarks/kirag_eval.py's 50 test
    questions; on the real chains file when it is there, else on a stand-in of 100 questions), and
    ircot_dev_500's first 100 questions (kirag_eval's `hotpotqa_ircot_full` part) are a test set only."""
    from benchmarks.kirag_eval import PARTS

    shared, multi = config_data("shared_cpu.yaml"), config_data("multi_cpu.yaml")
    ircot_test = PARTS["hotpotqa_ircot_full"].dataset
    assert PARTS["hotpotqa_ircot_full"].val_dataset == "hotpotqa_ircot"  # its choices: questions 101-500
    names = {"musique", "musique_kag", "hotpotqa", "hotpotqa_ircot", ircot_test, "2wiki"}
    assert set(multi["chains"]) == set(multi["test_fraction"]) == names
    assert multi["chains"]["musique"] == shared["chains"]
    assert multi["test_fraction"]["musique"] == shared["test_fraction"] == 0.5
    assert multi["test_fraction"][ircot_test] == 1 and multi["seed"] == shared["seed"]
    chains_config = yaml.safe_load((ROOT / "configs" / "chains" / "hotpotqa_ircot_dev_100.yaml").read_text())
    assert chains_config["output"] == multi["chains"][ircot_test] and chains_config["data"]["limit"] == 100
    musique = ROOT / shared["chains"]
    if not musique.is_file():
        musique = three_datasets["alpha"].parents[1] / "musique" / "chains.jsonl"
        write_chains(musique, hand_made_chains(100, label="m-"))
    alone = AlignerDataModule(**{**shared, "chains": str(musique)})
    stand_ins = {"hotpotqa": str(three_datasets["beta"]), "2wiki": str(three_datasets["gamma"]),
                 "musique_kag": str(three_datasets["gamma"]), "hotpotqa_ircot": str(three_datasets["alpha"]),
                 ircot_test: str(three_datasets["beta"])}
    together = AlignerDataModule(**{**multi, "chains": {"musique": str(musique), **stand_ins}})
    alone.setup("fit"), together.setup("fit")
    assert len(together.test_ids["musique"]) == round(0.5 * len(read_chains(musique)))
    assert together.test_ids["musique"] == alone.test_ids["musique"]
    assert together.test_ids[ircot_test] == [r.question_id for r in read_chains(three_datasets["beta"])]


def test_a_last_global_batch_is_kept_when_it_gives_every_rank_an_example():
    """5 questions of one hop, batches of 3 on 2 ranks: the last global batch holds 2 examples, one per rank."""
    sampler = QuestionBatches([1] * 5, batch_size=3, prefixes_per_question=1, num_replicas=2, shuffle=True)
    assert [len(b) for b in sampler.global_batches()] == [3, 2]
    alone = QuestionBatches([1] * 4, batch_size=3, prefixes_per_question=1, num_replicas=2, shuffle=True)
    assert [len(b) for b in alone.global_batches()] == [3]  # a last batch of 1 would leave a rank without one
