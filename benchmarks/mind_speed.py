"""MIND's seconds per question by LM backend, side by side: transformers (float32, its own signals),
llama.cpp with one KV-cache slot, llama.cpp with every slot (the default), and llama.cpp with every
slot running the questions together (`mind.concurrency`: their LM calls generated as one batch).

    python -m benchmarks.mind_speed [--questions 3]

MIND's calls come one prompt at a time from interleaved prompt families (the next sentence, the
entity prompt, the sentence again after retrieval). With one slot each family's prompt evicts the
others' instruction and demonstrations (the llama.cpp backend before `models.lm.interface.Slots`);
with every slot each family keeps one. Fixed-interval MIND (a retrieval at every sentence) with
BM25 on the first HotpotQA ircot_dev_500 questions, as in benchmarks/mind_eval.py; the settings run
in one process, question by question in turn, then all questions at once for the concurrent setting
(its seconds: the whole run's wall clock over the questions). Prompt tokens decoded (llama.cpp): what
prefix reuse left to decode. Greedy outputs may differ between settings: keys and values computed in
other batches, or in float32 against q4, differ in the last bits.
"""

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

from benchmarks.common import machine, parse_args, write_results
from benchmarks.mind_eval import DEV, base_config
from evaluation.factory import build_method
from evaluation.report import markdown_table

SPLIT = (  # which questions the figures stand on
    "Split: the first questions of ircot_dev_500 (mind_eval's test questions), for speed only: the "
    "backends' answers are compared with each other, never scored to choose anything.")


def main(args: argparse.Namespace) -> None:
    base = base_config(replace(DEV, limit=args.questions), "sentence")
    config = replace(base, method="fixed_interval", reader=replace(base.reader, enabled=False))  # the loop alone
    if replace(config.lm, backend="auto").resolved_backend() != "llama_cpp":
        sys.exit("llama-cpp-python is not installed (`make install` builds it)")
    benchmark = config.data.load()
    settings = {"transformers float32": replace(config.lm, backend="transformers"),
                "llama.cpp, one slot": replace(config.lm, backend="llama_cpp", parallel=1),
                f"llama.cpp, {config.lm.parallel} slots": replace(config.lm, backend="llama_cpp")}
    methods = {name: build_method(replace(config, lm=lm), benchmark) for name, lm in settings.items()}
    n = len(benchmark.questions)
    concurrency = min(n, config.lm.parallel)
    together = f"llama.cpp, {config.lm.parallel} slots, {concurrency} questions at once"
    methods[together] = build_method(replace(config, mind=replace(config.mind, concurrency=concurrency)), benchmark)
    seconds, outputs = dict.fromkeys(methods, 0.0), {name: [] for name in methods}
    for question in benchmark.questions:
        for name, method in list(methods.items())[:-1]:
            start = time.perf_counter()
            prediction = method.predict([question])[0]
            seconds[name] += time.perf_counter() - start
            outputs[name].append((prediction.answer, prediction.llm_calls))
            print(f"{question.id} {name}: {time.perf_counter() - start:.0f} s", flush=True)
    start = time.perf_counter()
    outputs[together] = [(p.answer, p.llm_calls) for p in methods[together].predict(benchmark.questions)]
    seconds[together] = time.perf_counter() - start
    print(f"{together}: {seconds[together]:.0f} s", flush=True)
    baseline = next(iter(methods))
    rows = []
    for name, method in methods.items():
        generator = getattr(method.lm.lm, "generator", None)
        rows.append({"backend": name, "questions": n, "s/question": seconds[name] / n,
                     f"speedup vs {baseline}": seconds[baseline] / seconds[name],
                     "LLM calls/question": sum(c for _, c in outputs[name]) / n,
                     "prompt tokens decoded/question": generator.prompt_tokens_decoded / n if generator else "",
                     f"answers identical to {baseline}": sum(a == b for (a, _), (b, _) in
                                                             zip(outputs[name], outputs[baseline])) / n})
    one, every, at_once = rows[1:]

    def same(a: str, b: str) -> float:
        return sum(x == y for (x, _), (y, _) in zip(outputs[a], outputs[b], strict=True)) / n

    summary = {"every slot / one slot, speed": one["s/question"] / every["s/question"],
               "one slot / every slot, prompt tokens decoded": (one["prompt tokens decoded/question"]
                                                                / every["prompt tokens decoded/question"]),
               "answers identical, one slot and every slot": same(one["backend"], every["backend"]),
               "questions at once / one at a time, speed": every["s/question"] / at_once["s/question"],
               "answers identical, at once and one at a time": same(at_once["backend"], every["backend"])}
    setup = (f"Fixed-interval MIND, BM25, the first {n} questions of {Path(config.data.questions).name}; "
             f"packaged Qwen2.5-Coder-0.5B-Instruct, greedy; on llama.cpp the signals come from the "
             f"transformers scorer. Machine: {machine()}.")
    markdown = ("# MIND's speed by LM backend\n\n" + SPLIT + "\n\n" + setup + "\n\n" + markdown_table(rows, list(rows[0])) + "\n"
                + markdown_table([summary], list(summary)))
    flat = {"setup": setup, **{f"{r['backend']}.{k}": v for r in rows for k, v in r.items() if k != "backend"},
            **summary}
    write_results("mind_speed", markdown, flat)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=3)
    main(parse_args(parser))
