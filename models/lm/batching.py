"""LM calls of several threads generated together: per-item loops (MIND's sentence loop) batched across items.

MIND makes one LM call at a time per question, each depending on the last, so one question alone
decodes one sequence at a time and leaves llama.cpp's parallel slots (or a GPU batch) idle. `BatchedCalls`
runs several questions in threads over one LM: a call waits until every unfinished question has made
one, then the waiting calls with the same settings go to the LM as one batch. Outside `map` (one
thread) a call goes straight through. The wrapped LM is only ever called by one thread at a time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from models.lm.chat import Message
from models.lm.interface import Generation, LanguageModel

T = TypeVar("T")
R = TypeVar("R")


@dataclass
class _Call:
    prompts: list[str]
    settings: dict
    result: list[Generation] | None = None
    error: BaseException | None = None
    done: bool = False


class BatchedCalls:
    """A `LanguageModel` over `lm` whose calls from `map`'s threads are batched (see the module docstring).

    The batches run on the thread that called `map`, never on the item threads: a native library
    keeps a team of worker threads per calling thread (OpenMP in llama.cpp and torch), and idle
    teams spin, so LM calls from several threads would take CPU from the team at work.
    """

    def __init__(self, lm: LanguageModel) -> None:
        self.lm = lm
        self._lock = threading.Condition()
        self._waiting: list[_Call] = []
        self._running = 0  # item threads of `map` not yet finished

    def format_chat(self, messages: list[Message]) -> str:
        return self.lm.format_chat(messages)

    def chat(self, conversations: list[list[Message]], **generate_kwargs) -> list[Generation]:
        return self.generate([self.format_chat(c) for c in conversations], **generate_kwargs)

    def generate(self, prompts: list[str], **settings) -> list[Generation]:
        with self._lock:
            if not self._running:  # not inside `map`
                return self.lm.generate(prompts, **settings)
            call = _Call(list(prompts), settings)
            self._waiting.append(call)
            self._lock.notify_all()
            while not call.done:
                self._lock.wait()
        if call.error is not None:
            raise call.error
        return call.result

    def map(self, fn: Callable[[T], R], items: Sequence[T], width: int) -> list[R]:
        """`fn(item)` for every item, at most `width` at a time, their LM calls batched; results in
        item order. An item's exception is raised once all have finished."""
        items, results, errors = list(items), {}, {}
        queue = iter(range(len(items)))
        take = threading.Lock()

        def worker() -> None:
            while True:
                with take:
                    i = next(queue, None)
                if i is None:
                    break
                try:
                    results[i] = fn(items[i])
                except BaseException as error:  # raised in the caller's thread, below
                    errors[i] = error
            with self._lock:
                self._running -= 1
                self._lock.notify_all()

        threads = [threading.Thread(target=worker, daemon=True) for _ in range(min(width, len(items)))]
        with self._lock:
            self._running += len(threads)
            for thread in threads:
                thread.start()
            while self._running:  # generate each time every running item waits on a call
                if self._waiting and len(self._waiting) == self._running:
                    calls, self._waiting = self._waiting, []
                    self._generate(calls)
                    self._lock.notify_all()
                else:
                    self._lock.wait()
        for thread in threads:
            thread.join()
        if errors:
            raise errors[min(errors)]
        return [results[i] for i in range(len(items))]

    def _generate(self, calls: list[_Call]) -> None:
        """One LM call per distinct setting; every call done, with its generations or the error."""
        groups: dict[str, list[_Call]] = {}
        for call in calls:
            groups.setdefault(repr(sorted(call.settings.items())), []).append(call)
        for group in groups.values():
            prompts = [p for call in group for p in call.prompts]
            settings = {**group[0].settings, "batch_size": max(len(prompts), group[0].settings.get("batch_size", 1))}
            try:
                generations = self.lm.generate(prompts, **settings)
            except BaseException as error:  # raised in each caller's thread
                for call in group:
                    call.error = error
            else:
                start = 0
                for call in group:
                    call.result = generations[start : start + len(call.prompts)]
                    start += len(call.prompts)
        for call in calls:
            call.done = True
