"""llama.cpp's KV-cache slots on MIND, whose calls come one prompt at a time from interleaved prompt
families (the next sentence, the entity prompt, the sentence again after retrieval): one slot, where
each family's prompt evicts the others' instruction and demonstrations (the backend before
`models.lm.Slots`), against every slot, where each family keeps one.

    python benchmarks/llama_slots.py [--questions 4]

Fixed-interval MIND (a retrieval at every sentence) with BM25 on the first HotpotQA ircot_dev_500
questions, as in benchmarks/mind_eval.py; both settings in one process, question by question in
turn. Prompt tokens decoded: what prefix reuse left to decode. Greedy outputs may differ between
the two, since keys and values computed in other batches differ in the last float bits.
"""

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import machine, parse_args, write_results  # noqa: E402
from benchmarks.mind_eval import method_configs  # noqa: E402
from evaluation.factory import build_method  # noqa: E402
from evaluation.report import markdown_table  # noqa: E402


def main(args: argparse.Namespace) -> None:
    config = method_configs(args.questions, "sentence", 1.0, False, [])["fixed_interval"]
    if config.lm.resolved_backend() != "llama_cpp":
        sys.exit("llama-cpp-python is not installed (`make install` builds it)")
    benchmark = config.data.load()
    settings = {"one slot": 1, f"{config.lm.parallel} slots": config.lm.parallel}
    methods = {name: build_method(replace(config, lm=replace(config.lm, parallel=n)), benchmark)
               for name, n in settings.items()}
    seconds, outputs = dict.fromkeys(methods, 0.0), {name: [] for name in methods}
    for question in benchmark.questions:
        for name, method in methods.items():
            start = time.perf_counter()
            prediction = method.predict([question])[0]
            seconds[name] += time.perf_counter() - start
            outputs[name].append((prediction.answer, prediction.llm_calls))
    n = len(benchmark.questions)
    rows = [{"slots": name, "questions": n, "s/question": seconds[name] / n,
             "LLM calls/question": sum(c for _, c in outputs[name]) / n,
             "prompt tokens decoded/question": method.lm.generator.prompt_tokens_decoded / n}
            for name, method in methods.items()]
    one, every = rows
    summary = {"speedup": one["s/question"] / every["s/question"],
               "prompt tokens decoded, one slot / every slot": (one["prompt tokens decoded/question"]
                                                                / every["prompt tokens decoded/question"]),
               "identical answers": sum(a == b for (a, _), (b, _) in zip(*outputs.values())) / n}
    setup = (f"Fixed-interval MIND, BM25, the first {n} questions of {Path(config.data.questions).name}; "
             f"packaged LM on llama.cpp, the transformers scorer for the signals. Machine: {machine()}.")
    markdown = ("# llama.cpp slots on MIND\n\n" + setup + "\n\n" + markdown_table(rows, list(rows[0])) + "\n"
                + markdown_table([summary], list(summary)))
    flat = {"setup": setup, **{f"{r['slots']}.{k}": v for r in rows for k, v in r.items() if k != "slots"}, **summary}
    write_results("llama_slots", markdown, flat)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=4)
    main(parse_args(parser))
