"""KiRAG's reasoning-chain Constructor: an LLM picks the next triple among the Aligner's candidates.

The prompt (written for this project) shows the candidates, the question and the chain so far,
and asks for the WHOLE remaining chain followed by `So the answer is: ...`; only the first new
triple is kept (paper section 3.2). It is matched to a candidate by its normalised text, else by
token F1 of "head relation tail"; triples of the output that are already in the chain or match no
candidate are passed over. When no triple of the output matches, the loop falls back to the
Aligner's best candidate (see `inference.kirag`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.text import token_f1
from core.types import Triple, triple_id, triple_text
from kg.triple_parser import parse_triples
from models.chat import Message, chat_messages
from models.lm import LanguageModel

INSTRUCTION = (
    "You build a reasoning chain of knowledge triples that answers a question. You are given candidate "
    "knowledge triples, the question, and the chain built so far. Complete the chain: write the remaining "
    "triples needed to answer the question, one per line, copied from the candidates, in the order the "
    "reasoning uses them. Then write a last line: So the answer is: <answer>."
)

ANSWER_MARK = "the answer is"

# Demonstrations written for this project (invented facts).
DEMOS = [
    {
        "candidates": [
            ("Lake Orvell", "located in", "Dunmore County"),
            ("Dunmore County", "county seat", "Hallam"),
            ("Lake Orvell", "area", "12 square kilometres"),
            ("Hallam", "population", "8,200"),
            ("Dunmore County", "established", "1821"),
        ],
        "question": "What is the county seat of the county where Lake Orvell is located?",
        "chain": [],
        "output": ["<Lake Orvell; located in; Dunmore County>", "<Dunmore County; county seat; Hallam>",
                   "So the answer is: Hallam."],
    },
    {
        "candidates": [
            ("The Glass Orchard", "directed by", "Mira Castell"),
            ("Mira Castell", "born in", "Valparaiso"),
            ("The Glass Orchard", "released", "1998"),
            ("Mira Castell", "spouse", "Tomas Reyes"),
            ("Valparaiso", "country", "Chile"),
        ],
        "question": "In which country was the director of The Glass Orchard born?",
        "chain": [("The Glass Orchard", "directed by", "Mira Castell")],
        "output": ["<Mira Castell; born in; Valparaiso>", "<Valparaiso; country; Chile>",
                   "So the answer is: Chile."],
    },
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
    answered: bool  # the output says "the answer is": the loop stops after this step
    output: str


def match_candidate(parts: tuple[str, str, str], candidates: Sequence[Triple], min_f1: float = 0.5) -> Triple | None:
    """The candidate with the same normalised text, else the one of best token F1 (at least `min_f1`)."""
    fact = triple_id(*parts)
    exact = next((t for t in candidates if t.id == fact), None)
    if exact is not None:
        return exact
    text = " ".join(parts)
    scores = [token_f1(text, t.plain_text) for t in candidates]
    best = max(range(len(candidates)), key=scores.__getitem__, default=None)  # the first of equal scores
    return candidates[best] if best is not None and scores[best] >= min_f1 else None


def read_output(output: str, chain: Sequence[Triple], candidates: Sequence[Triple]) -> Construction:
    """The first triple of `output` that is not in the chain and matches a candidate. A restated
    chain triple is passed over before matching, so that token F1 cannot take it for a near miss."""
    in_chain = {t.id for t in chain}
    answered = ANSWER_MARK in output.lower()
    for parts in parse_triples(output)[0]:
        match = None if triple_id(*parts) in in_chain else match_candidate(parts, candidates)
        if match is not None:
            return Construction(match, answered, output)
    return Construction(None, answered, output)


class Constructor:
    """Calls a chat LM for a batch of (question, chain, candidates) at once."""

    def __init__(self, lm: LanguageModel, max_new_tokens: int = 160, batch_size: int = 8) -> None:
        self.lm, self.max_new_tokens, self.batch_size = lm, max_new_tokens, batch_size

    def __call__(self, items: Sequence[tuple[str, Sequence[Triple], Sequence[Triple]]]) -> list[Construction]:
        prompts = [build_prompt(q, chain, cands) for q, chain, cands in items]
        outputs = self.lm.chat(prompts, max_new_tokens=self.max_new_tokens, batch_size=self.batch_size,
                               stop=["\n\n"], stop_repeated_lines=True)
        return [read_output(o.text, chain, cands) for o, (_, chain, cands) in zip(outputs, items, strict=True)]
