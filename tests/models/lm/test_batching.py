"""`BatchedCalls`: the LM calls of `map`'s threads generated together, one thread at the LM, results in order."""

import threading
import time

import pytest
from models.lm.batching import BatchedCalls
from models.lm.interface import Generation


class EchoLM:
    """Replies `<prompt>>`; records every call's size and settings and the threads that call it, and fails
    when two threads call it at once."""

    def __init__(self):
        self.calls, self.threads, self._busy = [], set(), threading.Lock()

    def format_chat(self, messages):
        return "\n".join(m["content"] for m in messages)

    def generate(self, prompts, **settings):
        assert self._busy.acquire(blocking=False), "the LM was called from two threads at once"
        try:
            time.sleep(0.005)  # give the other threads time to run into the lock above
            self.calls.append((len(prompts), settings.get("max_new_tokens"), settings.get("batch_size")))
            self.threads.add(threading.get_ident())
            if any("fail" in p for p in prompts):
                raise RuntimeError("the LM failed")
            return [Generation(f"{p}>", 1, 1, [0]) for p in prompts]
        finally:
            self._busy.release()


def chain(lm, steps):
    """A loop of `steps` LM calls, each prompted with the last reply."""
    def run(item):
        text = item
        for _ in range(steps(item)):
            text = lm.generate([text], max_new_tokens=8, batch_size=1)[0].text
        return text
    return run


def test_the_calls_of_all_threads_go_to_the_lm_together_and_results_keep_their_order():
    lm = EchoLM()
    batched = BatchedCalls(lm)
    items = ["a", "b", "c"]
    steps = {"a": 1, "b": 3, "c": 2}.__getitem__
    assert batched.map(chain(batched, steps), items, width=3) == ["a>", "b>>>", "c>>"]
    # Each round waits for every unfinished item: 3 together, then 2, then 1; batch_size follows the batch.
    assert lm.calls == [(3, 8, 3), (2, 8, 2), (1, 8, 1)]
    assert lm.threads == {threading.get_ident()}  # all on the thread that called map (OpenMP teams are per thread)


def test_a_width_below_the_items_takes_the_next_item_as_one_finishes():
    lm = EchoLM()
    batched = BatchedCalls(lm)
    assert batched.map(chain(batched, lambda item: 2), ["a", "b", "c", "d"], width=2) == ["a>>", "b>>", "c>>", "d>>"]
    assert [size for size, _, _ in lm.calls] == [2, 2, 2, 2]


def test_calls_with_other_settings_are_generated_apart():
    lm = EchoLM()
    batched = BatchedCalls(lm)

    def one_call(item):
        return batched.generate([item], max_new_tokens=len(item))[0].text

    assert batched.map(one_call, ["a", "bb", "c"], width=3) == ["a>", "bb>", "c>"]
    assert sorted(lm.calls) == [(1, 2, 1), (2, 1, 2)]


def test_outside_map_a_call_goes_straight_through():
    lm = EchoLM()
    assert BatchedCalls(lm).generate(["x", "y"], max_new_tokens=3, batch_size=1)[1].text == "y>"
    assert lm.calls == [(2, 3, 1)]


def test_errors_reach_the_callers_once_every_item_has_finished():
    lm = EchoLM()
    batched = BatchedCalls(lm)
    finished = []

    def run(item):
        if item == "bad":
            raise KeyError(item)
        text = chain(batched, lambda _: 2)(item)
        finished.append(item)
        return text

    with pytest.raises(KeyError, match="bad"):
        batched.map(run, ["a", "bad", "b"], width=3)
    assert sorted(finished) == ["a", "b"]
    with pytest.raises(RuntimeError, match="the LM failed"):  # raised in the thread of every call of its batch
        batched.map(chain(batched, lambda _: 1), ["ok", "fail"], width=2)
