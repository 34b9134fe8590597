"""The Aligner's data: chain prefixes as (query, next triple, candidate negatives) examples."""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass
from typing import Any

import lightning as L
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, DistributedSampler

from core.chains import ChainRecord, aligner_query, candidate_triples, read_chains
from core.records import split_held_out


@dataclass(frozen=True)
class ExampleKey:
    """Everything that decides one example; the dataset builds the example from it."""

    index: int  # position in the epoch's plan: unique within an epoch, across ranks
    question: int  # index of the question's record
    hop: int  # prefix length: how many chain triples the query already holds
    seed: int | None  # randomness of the example (order of an unordered chain, negatives); None: fixed


class ChainExamples(Dataset):
    """Builds examples from keys. Indexed by a list of keys, it returns one batch (a list of examples)."""

    def __init__(self, records: list[ChainRecord], num_negatives: int) -> None:
        self.records = records
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
            "question_id": record.question_id,
            "query": aligner_query(record.question, [record.chain[i].text for i in order[: key.hop]]),
            "positive": record.chain[target].text,
            "negatives": negatives,
        }


def collate(examples: list[dict[str, Any]]) -> dict[str, Any]:
    """Batch examples; `negatives` stay ragged lists, `negative_mask[i, j]` marks negative j of example i."""
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
        "index": torch.tensor([e["index"] for e in examples], dtype=torch.long),
    }


class QuestionBatches(DistributedSampler):
    """Plans global batches of example keys and yields this rank's share of each.

    Training (`shuffle=True`): every epoch, each question gets `prefixes_per_question` distinct
    prefix lengths, drawn from (seed, epoch); no global batch holds a question twice, since its
    other examples would be false in-batch negatives. A last global batch too small to give
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


class AlignerDataModule(L.LightningDataModule):
    """Chains split by question into training and validation sets.

    Args:
        chains: the `chains.jsonl` to train on (`prepare.py chains` writes it).
        test_fraction: share of ALL the questions in `chains` (whatever their chains) kept out of
            training and validation for evaluation (`test_ids`): a seeded random split by question,
            taken before incomplete chains are dropped, so the test set is not biased towards hard
            questions.
        val_fraction: share of the remaining usable questions held out for validation when
            `val_chains` is not given.
        val_chains: a separate validation file; then all of `chains` is used for training.
        batch_size: GLOBAL batch size (questions per step over all devices); each device gets
            `batch_size / world_size`.
        num_negatives: candidate negatives per example, sampled from those mined for its hop.
        prefixes_per_question: chain prefixes (examples) per question per epoch.
        seed: seeds the split and every epoch's sampling (with the epoch number).
        num_workers: DataLoader workers.
        only_complete: train and validate on complete chains only.
    """

    def __init__(
        self,
        chains: str,
        test_fraction: float = 0.0,
        val_fraction: float = 0.1,
        val_chains: str | None = None,
        batch_size: int = 16,
        num_negatives: int = 10,
        prefixes_per_question: int = 2,
        seed: int = 0,
        num_workers: int = 0,
        only_complete: bool = True,
    ) -> None:
        super().__init__()
        if not (0 <= val_fraction < 1 and 0 <= test_fraction < 1):
            raise ValueError(f"val_fraction and test_fraction must be in [0, 1), got {val_fraction}, {test_fraction}")
        if batch_size < 1 or prefixes_per_question < 1 or num_negatives < 0:
            raise ValueError("batch_size and prefixes_per_question must be positive and num_negatives non-negative")
        self.save_hyperparameters()
        self.train_records: list[ChainRecord] = []
        self.val_records: list[ChainRecord] = []
        self.test_ids: list[str] = []
        self._train_loader: ResumableLoader | None = None
        self._resume_state: dict[str, int] | None = None

    def _rank_and_world_size(self) -> tuple[int, int]:
        return (self.trainer.global_rank, self.trainer.world_size) if self.trainer is not None else (0, 1)

    def _usable(self, records: list[ChainRecord]) -> list[ChainRecord]:
        return [r for r in records if r.chain and (r.complete or not self.hparams.only_complete)]

    def setup(self, stage: str | None = None) -> None:
        world_size = self._rank_and_world_size()[1]
        if self.hparams.batch_size % world_size:
            raise ValueError(f"batch_size {self.hparams.batch_size} is global and must be divisible "
                             f"by the number of devices ({world_size})")
        if self.train_records:
            return
        records, test = split_held_out(read_chains(self.hparams.chains), self.hparams.test_fraction, self.hparams.seed)
        self.test_ids = [r.question_id for r in test]
        records = self._usable(records)
        if self.hparams.val_chains is not None:
            self.train_records, self.val_records = records, self._usable(read_chains(self.hparams.val_chains))
        else:
            self.train_records, self.val_records = split_held_out(records, self.hparams.val_fraction,
                                                                  self.hparams.seed)
        if not self.train_records:
            hint = " (only complete chains are used; see only_complete)" if self.hparams.only_complete else ""
            raise ValueError(f"{self.hparams.chains}: no usable chains to train on{hint}")

    def _loader(self, records: list[ChainRecord], shuffle: bool) -> DataLoader:
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
            ChainExamples(records, self.hparams.num_negatives),
            sampler=sampler,
            batch_size=None,
            collate_fn=collate,
            num_workers=self.hparams.num_workers,
        )

    def train_dataloader(self) -> ResumableLoader:
        self._train_loader = self._loader(self.train_records, shuffle=True)
        if self._resume_state is not None:
            self._train_loader.load_state_dict(self._resume_state)
            self._resume_state = None
        return self._train_loader

    def val_dataloader(self) -> DataLoader | list:
        return self._loader(self.val_records, shuffle=False) if self.val_records else []

    # Lightning saves the datamodule's state in checkpoints and restores it before building loaders.
    def state_dict(self) -> dict[str, Any]:
        return {"train_loader": self._train_loader.state_dict()} if self._train_loader is not None else {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if "train_loader" not in state:
            return
        if self._train_loader is not None:  # strategies that restore after building the loaders
            self._train_loader.load_state_dict(state["train_loader"])
        else:
            self._resume_state = state["train_loader"]
