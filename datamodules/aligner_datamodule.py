"""The Aligner's data: chain prefixes as (query, next triple, candidate negatives) examples."""

from __future__ import annotations

import logging
import random
import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lightning as L
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, DistributedSampler

from core.chains import ChainRecord, aligner_query, candidate_triples, read_chains
from core.records import split_held_out

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ExampleKey:
    """Everything that decides one example; the dataset builds the example from it."""

    index: int  # position in the epoch's plan: unique within an epoch, across ranks
    question: int  # index of the question's record (over all datasets together)
    hop: int  # prefix length: how many chain triples the query already holds
    seed: int | None  # randomness of the example (order of an unordered chain, negatives); None: fixed


class ChainExamples(Dataset):
    """Builds examples from keys. Indexed by a list of keys, it returns one batch (a list of examples).

    `datasets[i]` names the dataset of `records[i]` (question ids are unique within a dataset only);
    each example carries it as `dataset`.
    """

    def __init__(self, records: list[ChainRecord], num_negatives: int, datasets: Sequence[str] | None = None) -> None:
        if datasets is not None and len(datasets) != len(records):
            raise ValueError(f"{len(records)} records but {len(datasets)} dataset names")
        self.records = records
        self.datasets = list(datasets) if datasets is not None else [""] * len(records)
        self.num_negatives = num_negatives
        # Candidate negatives per question and hop: distinct facts, none of them a chain triple.
        self.candidates: list[list[list[str]]] = [
            [[t.text for t in candidate_triples(hop, record.chain)] for hop in record.negatives] for record in records
        ]

    def __getitem__(self, keys: list[ExampleKey]) -> list[dict[str, Any]]:
        return [self.example(key) for key in keys]

    def example(self, key: ExampleKey) -> dict[str, Any]:
        record = self.records[key.question]
        order = list(range(len(record.chain)))
        rng = random.Random(key.seed) if key.seed is not None else None
        if rng is not None and not record.ordered:
            rng.shuffle(order)  # comparison questions: any order of the chain is a valid prefix
        target = order[key.hop]
        candidates = self.candidates[key.question][target]
        if rng is None:
            negatives = candidates[: self.num_negatives]
        else:
            negatives = rng.sample(candidates, min(self.num_negatives, len(candidates)))
        return {
            "index": key.index,
            "dataset": self.datasets[key.question],
            "question_id": record.question_id,
            "query": aligner_query(record.question, [record.chain[i].text for i in order[: key.hop]]),
            "positive": record.chain[target].text,
            "negatives": negatives,
        }


def collate(examples: list[dict[str, Any]]) -> dict[str, Any]:
    """Batch examples; `negatives` stay ragged lists, `negative_mask[i, j]` marks negative j of example i;
    `datasets[i]` and `question_ids[i]` together name example i's question."""
    width = max((len(e["negatives"]) for e in examples), default=0)
    mask = torch.zeros(len(examples), width, dtype=torch.bool)
    for i, e in enumerate(examples):
        mask[i, : len(e["negatives"])] = True
    return {
        "queries": [e["query"] for e in examples],
        "positives": [e["positive"] for e in examples],
        "negatives": [e["negatives"] for e in examples],
        "negative_mask": mask,
        "question_ids": [e["question_id"] for e in examples],
        "datasets": [e.get("dataset", "") for e in examples],
        "index": torch.tensor([e["index"] for e in examples], dtype=torch.long),
    }


class QuestionBatches(DistributedSampler):
    """Plans global batches of example keys and yields this rank's share of each.

    Training (`shuffle=True`): every epoch, each question gets `prefixes_per_question` distinct
    prefix lengths, drawn from (seed, epoch); no global batch holds a question twice, since its
    other examples would be false in-batch negatives (questions are counted over all datasets
    together, so the same id in two datasets is two questions). A last global batch too small to give
    every rank an example is dropped, so all ranks get the same number of batches.
    Evaluation (`shuffle=False`): every prefix of every question, fixed, in order, none dropped.

    It subclasses `DistributedSampler` so that Lightning keeps it under DDP (it already shards)
    and calls its `set_epoch` at every epoch.
    """

    def __init__(
        self,
        chain_lengths: list[int],
        batch_size: int,
        prefixes_per_question: int = 2,
        num_replicas: int = 1,
        rank: int = 0,
        shuffle: bool = True,
        seed: int = 0,
    ) -> None:
        super().__init__(range(len(chain_lengths)), num_replicas=num_replicas, rank=rank, shuffle=shuffle, seed=seed)
        self.chain_lengths = chain_lengths
        self.batch_size = batch_size  # global: all ranks together
        self.prefixes_per_question = prefixes_per_question
        self.resume_at: tuple[int, int] | None = None  # (epoch, batches trained) before a restart
        self._plan: tuple[int, list[list[ExampleKey]]] | None = None

    def global_batches(self) -> list[list[ExampleKey]]:
        if self._plan is None or self._plan[0] != self.epoch:
            batches = self._training_plan() if self.shuffle else self._fixed_plan()
            self._plan = (self.epoch, batches)
        return self._plan[1]

    def _fixed_plan(self) -> list[list[ExampleKey]]:
        keys = [(q, hop) for q, length in enumerate(self.chain_lengths) for hop in range(length)]
        keys = [ExampleKey(i, q, hop, None) for i, (q, hop) in enumerate(keys)]
        return [keys[start : start + self.batch_size] for start in range(0, len(keys), self.batch_size)]

    def _training_plan(self) -> list[list[ExampleKey]]:
        rng = np.random.default_rng([self.seed, self.epoch])
        per_question = [
            [(q, int(hop), int(rng.integers(2**62))) for hop in rng.permutation(length)[: self.prefixes_per_question]]
            for q, length in enumerate(self.chain_lengths)
        ]
        # Round j holds the j-th example of every question, in a fresh order: a question's
        # examples are then far apart, and packing rarely has to defer one.
        queue = deque(
            per_question[q][j]
            for j in range(self.prefixes_per_question)
            for q in rng.permutation(len(per_question))
            if j < len(per_question[q])
        )
        batches, index = [], 0
        while queue:
            batch, deferred, seen = [], [], set()
            while queue and len(batch) < self.batch_size:
                q, hop, seed = queue.popleft()
                if q in seen:
                    deferred.append((q, hop, seed))
                    continue
                seen.add(q)
                batch.append(ExampleKey(index, q, hop, seed))
                index += 1
            queue.extendleft(reversed(deferred))
            batches.append(batch)
        if batches and len(batches[-1]) < self.num_replicas:
            batches.pop()
        return batches

    def _share(self, batch: list[ExampleKey]) -> list[ExampleKey]:
        return [batch[i] for i in np.array_split(np.arange(len(batch)), self.num_replicas)[self.rank]]

    def pending_skip(self) -> int:
        """Batches to skip at the start of this epoch: those trained before a restart within it."""
        return self.resume_at[1] if self.resume_at is not None and self.resume_at[0] == self.epoch else 0

    def __iter__(self):
        # A generator: the plan is read at the first batch, after Lightning's `set_epoch`.
        skip, self.resume_at = self.pending_skip(), None
        for batch in self.global_batches()[skip:]:
            if share := self._share(batch):
                yield share

    def __len__(self) -> int:
        return sum(1 for batch in self.global_batches() if self._share(batch))


class ResumableLoader(DataLoader):
    """A training DataLoader that resumes mid-epoch where it stopped.

    Its state (epoch, batches handed to the trainer) goes into checkpoints through the
    datamodule; after `load_state_dict`, the first pass over that same epoch skips the batches
    already trained on, so a run interrupted within an epoch goes on as if it never stopped.
    Batches are counted as the trainer receives them, so worker prefetching does not skew the count.
    """

    sampler: QuestionBatches

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.batches_yielded = 0

    def __iter__(self):
        self.batches_yielded = self.sampler.pending_skip()
        for batch in super().__iter__():
            self.batches_yielded += 1
            yield batch

    def state_dict(self) -> dict[str, int]:
        return {"epoch": self.sampler.epoch, "batches": self.batches_yielded}

    def load_state_dict(self, state: dict[str, int]) -> None:
        self.sampler.resume_at = (state["epoch"], state["batches"])


DATASET_NAME = re.compile(r"[A-Za-z0-9_-]+")


def dataset_name(path: str) -> str:
    """The name of a dataset given as a plain path: the folder that holds its chains file
    (`runs/chains/musique/chains.jsonl` is `musique`), or the file's stem if it has no folder."""
    path = Path(path)
    return path.parent.name or path.stem


def named_chains(chains: str | dict[str, str]) -> dict[str, str]:
    """`chains` as {dataset name: chains file}: a mapping as it is, a plain path as one dataset (`dataset_name`)."""
    if isinstance(chains, str):
        return {dataset_name(chains): chains}
    if not chains:
        raise ValueError("chains names no file: give a path or a mapping {dataset name: path}")
    for name, path in chains.items():
        if not isinstance(name, str) or not DATASET_NAME.fullmatch(name):
            raise ValueError(f"chains: dataset name {name!r} should be letters, digits, '_' or '-' (it becomes "
                             "part of metric names such as val/<name>/mrr)")
        if not isinstance(path, str):
            raise ValueError(f"chains: the path of dataset {name!r} should be a string, found {type(path).__name__}")
    return dict(chains)


class AlignerDataModule(L.LightningDataModule):
    """Chains split by question into training and validation sets, over one or several datasets.

    Args:
        chains: the `chains.jsonl` to train on (`prepare.py chains` writes it), or several as a mapping
            {dataset name: chains file}, trained on together. A plain path is one dataset named after the
            folder that holds it (`runs/chains/musique/chains.jsonl`: `musique`). Question ids need only
            be unique within a dataset: every example carries its dataset's name.
        test_fraction: share of ALL the questions of each dataset (whatever their chains) kept out of
            training and validation for evaluation (`test_ids`, per dataset): a seeded random split by
            question within each dataset, taken before incomplete chains are dropped, so the test set is
            not biased towards hard questions. A dataset's split is the one it gets when trained on alone.
            A mapping {dataset name: fraction} sets it per dataset (every dataset named); 1 makes a dataset
            a test set only (a benchmark's evaluation questions, say).
        val_fraction: share of each dataset's remaining usable questions held out for validation when
            `val_chains` is not given.
        val_chains: separate validation files (a path, or a mapping whose names are datasets of `chains`);
            then all of `chains` is used for training. A plain path belongs to the single dataset of `chains`.
        batch_size: GLOBAL batch size (questions per step over all devices); each device gets
            `batch_size / world_size`. A batch may mix datasets.
        num_negatives: candidate negatives per example, sampled from those mined for its hop.
        prefixes_per_question: chain prefixes (examples) per question per epoch.
        seed: seeds the split (the same seed within every dataset) and every epoch's sampling (with the
            epoch number).
        num_workers: DataLoader workers.
        only_complete: train and validate on complete chains only.

    With several datasets, `val_dataset_names` lists those that have validation questions: the Aligner
    then logs `val/<name>/mrr` (`r@1`, `r@5`) for each, besides `val/mrr` over all of them.
    """

    def __init__(
        self,
        chains: str | dict[str, str],
        test_fraction: float | dict[str, float] = 0.0,
        val_fraction: float = 0.1,
        val_chains: str | dict[str, str] | None = None,
        batch_size: int = 16,
        num_negatives: int = 10,
        prefixes_per_question: int = 2,
        seed: int = 0,
        num_workers: int = 0,
        only_complete: bool = True,
    ) -> None:
        super().__init__()
        if batch_size < 1 or prefixes_per_question < 1 or num_negatives < 0:
            raise ValueError("batch_size and prefixes_per_question must be positive and num_negatives non-negative")
        self.save_hyperparameters()
        self.datasets = named_chains(chains)
        if isinstance(test_fraction, dict):
            if sorted(test_fraction) != sorted(self.datasets):
                raise ValueError(f"test_fraction names datasets {', '.join(sorted(test_fraction))}; chains has "
                                 f"{', '.join(sorted(self.datasets))}")
            self.test_fractions = dict(test_fraction)
        else:
            self.test_fractions = dict.fromkeys(self.datasets, test_fraction)
        if not (0 <= val_fraction < 1 and all(0 <= f <= 1 for f in self.test_fractions.values())):
            raise ValueError(f"val_fraction must be in [0, 1) and test_fraction in [0, 1], got {val_fraction}, "
                             f"{test_fraction}")
        self.val_files: dict[str, str] = {}
        if val_chains is not None:
            if isinstance(val_chains, str):
                if len(self.datasets) > 1:
                    raise ValueError("val_chains: with several datasets in chains, give a mapping {dataset name: "
                                     "path}")
                val_chains = {next(iter(self.datasets)): val_chains}
            self.val_files = named_chains(val_chains)
            if unknown := sorted(set(self.val_files) - set(self.datasets)):
                raise ValueError(f"val_chains: {', '.join(unknown)} not among the datasets of chains "
                                 f"({', '.join(self.datasets)})")
        self.train_records: list[ChainRecord] = []
        self.val_records: list[ChainRecord] = []
        self.train_record_datasets: list[str] = []  # the dataset of each training record
        self.val_record_datasets: list[str] = []
        self.test_ids: dict[str, list[str]] = {}  # per dataset
        self._train_loader: ResumableLoader | None = None
        self._resume_state: dict[str, int] | None = None

    @property
    def val_dataset_names(self) -> list[str]:
        """The datasets with validation questions, when there are several datasets (else none: `val/mrr`
        says it all)."""
        return list(dict.fromkeys(self.val_record_datasets)) if len(self.datasets) > 1 else []

    def _rank_and_world_size(self) -> tuple[int, int]:
        return (self.trainer.global_rank, self.trainer.world_size) if self.trainer is not None else (0, 1)

    def usable(self, records: list[ChainRecord]) -> list[ChainRecord]:
        return [r for r in records if r.chain and (r.complete or not self.hparams.only_complete)]

    def setup(self, stage: str | None = None) -> None:
        world_size = self._rank_and_world_size()[1]
        if self.hparams.batch_size % world_size:
            raise ValueError(f"batch_size {self.hparams.batch_size} is global and must be divisible "
                             f"by the number of devices ({world_size})")
        if self.train_records:
            return
        train: list[tuple[str, ChainRecord]] = []
        val: list[tuple[str, ChainRecord]] = []
        test_ids: dict[str, list[str]] = {}
        for name, path in self.datasets.items():
            records, test = split_held_out(read_chains(path), self.test_fractions[name], self.hparams.seed)
            test_ids[name] = [r.question_id for r in test]
            if not records:  # a test set only (test_fraction 1)
                continue
            records = self.usable(records)
            if self.val_files:
                held_out = self.usable(read_chains(self.val_files[name])) if name in self.val_files else []
            else:
                records, held_out = split_held_out(records, self.hparams.val_fraction, self.hparams.seed)
            if not records and len(self.datasets) > 1:
                log.warning("%s (%s): no usable chains to train on", name, path)
            train += [(name, r) for r in records]
            val += [(name, r) for r in held_out]
        if not train:
            hint = " (only complete chains are used; see only_complete)" if self.hparams.only_complete else ""
            raise ValueError(f"{', '.join(self.datasets.values())}: no usable chains to train on{hint}")
        self.test_ids = test_ids
        self.train_record_datasets, self.train_records = (list(x) for x in zip(*train))
        self.val_record_datasets, self.val_records = (list(x) for x in zip(*val)) if val else ([], [])

    def _loader(self, records: list[ChainRecord], datasets: list[str], shuffle: bool) -> DataLoader:
        rank, world_size = self._rank_and_world_size()
        sampler = QuestionBatches(
            [len(r.chain) for r in records],
            self.hparams.batch_size,
            self.hparams.prefixes_per_question,
            num_replicas=world_size,
            rank=rank,
            shuffle=shuffle,
            seed=self.hparams.seed,
        )
        return (ResumableLoader if shuffle else DataLoader)(
            ChainExamples(records, self.hparams.num_negatives, datasets),
            sampler=sampler,
            batch_size=None,
            collate_fn=collate,
            num_workers=self.hparams.num_workers,
        )

    def train_dataloader(self) -> ResumableLoader:
        self._train_loader = self._loader(self.train_records, self.train_record_datasets, shuffle=True)
        if self._resume_state is not None:
            self._train_loader.load_state_dict(self._resume_state)
            self._resume_state = None
        return self._train_loader

    def val_dataloader(self) -> DataLoader | list:
        return self._loader(self.val_records, self.val_record_datasets, shuffle=False) if self.val_records else []

    # Lightning saves the datamodule's state in checkpoints and restores it (after `setup`) before building
    # loaders. The test questions are saved too: a chains file that changed since (questions added) would
    # split differently, and evaluating on the new split would score questions that were trained on.
    def state_dict(self) -> dict[str, Any]:
        state: dict[str, Any] = {"test_ids": self.test_ids}
        if self._train_loader is not None:
            state["train_loader"] = self._train_loader.state_dict()
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if "test_ids" in state:
            self._check_test_ids(state["test_ids"])
        if "train_loader" not in state:
            return
        if self._train_loader is not None:  # strategies that restore after building the loaders
            self._train_loader.load_state_dict(state["train_loader"])
        else:
            self._resume_state = state["train_loader"]

    def _check_test_ids(self, saved: dict[str, list[str]]) -> None:
        if not self.test_ids:
            self.setup("fit")
        changed = [name for name in sorted(set(saved) | set(self.test_ids))
                   if sorted(saved.get(name, [])) != sorted(self.test_ids.get(name, []))]
        if changed:
            files = ", ".join(self.datasets[n] for n in changed if n in self.datasets)
            raise ValueError(f"the test questions of {', '.join(changed)} are not those the checkpoint was trained "
                             f"with: its chains files ({files}) changed since, so the split changed; train again, "
                             "or restore those files")
