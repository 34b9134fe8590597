"""KiRAG's reasoning-chain Constructor: an LLM picks the NEXT triple among the Aligner's candidates.

The prompt (written for this project) shows the candidates, the question and the chain so far, and
asks for the next triple of the chain only (paper section 3.2), copied from the candidates. When
that triple's tail answers the question, the LM adds `So the answer is: ...`; when the chain so far
already answers it, the LM writes only that line. The loop (`inference.kirag`) ends a chain when
it is complete (`Construction.complete`), never at its first step; its `answer_in_chain` policy
instead ends it only when the chain's last triple names the answer (`names_answer`). The loop may
show the LM only the Aligner's best few candidates (`constructor_candidates`).

A triple of the output is matched to a candidate by its normalised text, else only when its head is
the candidate's head (SQuAD-normalised) and the whole triple has token F1 >= 0.8 with it: an
invented fact about another entity is never mapped onto a distractor. Triples of the output that
are already in the chain or match no candidate are passed over; when none matches, the loop falls
back to the Aligner's best candidate and counts the fallback.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.text import contains_words, token_f1, tokens
from core.types import Triple, triple_id, triple_text
from kg.triple_parser import parse_triples
from models.lm.chat import Message, chat_messages
from models.lm.interface import LanguageModel

INSTRUCTION = (
    "You build a reasoning chain of knowledge triples that answers a question, one triple at a time. You are "
    "given candidate knowledge triples, the question, and the chain built so far. Write the next triple of the "
    "chain, copied from the candidates. If that triple's tail answers the question, add a second line: So the "
    "answer is: <answer>. If the chain so far already answers the question, write only: So the answer is: <answer>."
)

ANSWER_MARK = "the answer is"
MIN_F1 = 0.8  # a near copy of a candidate about the same head entity

# Demonstrations written for this project (invented facts): a first step, a last step, a complete chain.
_LAKE = [("Lake Orvell", "located in", "Dunmore County"), ("Dunmore County", "county seat", "Hallam"),
         ("Lake Orvell", "area", "12 square kilometres"), ("Hallam", "population", "8,200"),
         ("Dunmore County", "established", "1821")]
_FILM = [("The Glass Orchard", "directed by", "Mira Castell"), ("Mira Castell", "born in", "Valparaiso"),
         ("The Glass Orchard", "released", "1998"), ("Mira Castell", "spouse", "Tomas Reyes"),
         ("Valparaiso", "country", "Chile")]
DEMOS = [
    {"candidates": _LAKE, "question": "What is the county seat of the county where Lake Orvell is located?",
     "chain": [], "output": ["<Lake Orvell; located in; Dunmore County>"]},
    {"candidates": _FILM, "question": "In which country was the director of The Glass Orchard born?",
     "chain": _FILM[:1] + _FILM[1:2], "output": ["<Valparaiso; country; Chile>", "So the answer is: Chile."]},
    {"candidates": _LAKE[1:], "question": "What is the county seat of the county where Lake Orvell is located?",
     "chain": _LAKE[:2], "output": ["So the answer is: Hallam."]},
]


def user_message(question: str, chain: Sequence[str], candidates: Sequence[str]) -> str:
    lines = ["Candidate knowledge triples:"] + [f"{i}. {t}" for i, t in enumerate(candidates, start=1)]
    lines += [f"Question: {question}", "Reasoning chain so far: " + (" ".join(chain) if chain else "(empty)")]
    return "\n".join(lines)


DEMO_PAIRS = [
    (user_message(demo["question"], [triple_text(*t) for t in demo["chain"]], [triple_text(*t) for t in demo["candidates"]]),
     "\n".join(demo["output"]))
    for demo in DEMOS
]


def build_prompt(question: str, chain: Sequence[Triple], candidates: Sequence[Triple]) -> list[Message]:
    user = user_message(question, [t.text for t in chain], [t.text for t in candidates])
    return chat_messages(user, system=INSTRUCTION, demos=DEMO_PAIRS)


@dataclass
class Construction:
    triple: Triple | None  # the candidate to append, or None
    answer: str | None  # what follows "the answer is", when the output says it
    output: str
    proposed: bool = True  # the output holds a triple not in the chain (matched or not)

    @property
    def complete(self) -> bool:
        """The chain answers the question: the LM says so without proposing a triple, or the new
        triple's tail is the answer it gives."""
        if self.answer is None:
            return False
        if self.triple is None:
            return not self.proposed
        return names_answer(self.triple, self.answer)


def names_answer(triple: Triple, answer: str) -> bool:
    """The triple's tail is the answer: one names the other as a whole-word sequence."""
    return contains_words(triple.tail, answer) or contains_words(answer, triple.tail)


def match_candidate(parts: tuple[str, str, str], candidates: Sequence[Triple], min_f1: float = MIN_F1) -> Triple | None:
    """The candidate with the same normalised text, else the best (by token F1, at least `min_f1`) of
    those whose head is the same entity."""
    fact = triple_id(*parts)
    exact = next((t for t in candidates if t.id == fact), None)
    if exact is not None:
        return exact
    text, head = " ".join(parts), tokens(parts[0])
    same_head = [t for t in candidates if tokens(t.head) == head]
    scores = [token_f1(text, t.plain_text) for t in same_head]
    best = max(range(len(same_head)), key=scores.__getitem__, default=None)  # the first of equal scores
    return same_head[best] if best is not None and scores[best] >= min_f1 else None


_ANSWER = re.compile(rf"{ANSWER_MARK}\s*:?\s*(.*)", re.IGNORECASE)


def read_output(output: str, chain: Sequence[Triple], candidates: Sequence[Triple]) -> Construction:
    """The first triple of `output` that is not in the chain and matches a candidate, and the answer
    it gives. A restated chain triple is passed over before matching, so that it cannot be taken for
    a near miss."""
    in_chain = {t.id for t in chain}
    said = _ANSWER.search(output)
    answer = said.group(1).split("\n")[0].strip(" .\"'") if said else None
    proposed = [parts for parts in parse_triples(output)[0] if triple_id(*parts) not in in_chain]
    match = next(filter(None, (match_candidate(parts, candidates) for parts in proposed)), None)
    return Construction(match, answer, output, bool(proposed))


class Constructor:
    """Calls a chat LM for a batch of (question, chain, candidates) at once."""

    def __init__(self, lm: LanguageModel, max_new_tokens: int = 64, batch_size: int = 8) -> None:
        self.lm, self.max_new_tokens, self.batch_size = lm, max_new_tokens, batch_size

    def __call__(self, items: Sequence[tuple[str, Sequence[Triple], Sequence[Triple]]]) -> list[Construction]:
        prompts = [build_prompt(q, chain, cands) for q, chain, cands in items]
        outputs = self.lm.chat(prompts, max_new_tokens=self.max_new_tokens, batch_size=self.batch_size,
                               stop=["\n\n"], stop_repeated_lines=True)
        return [read_output(o.text, chain, cands) for o, (_, chain, cands) in zip(outputs, items, strict=True)]
