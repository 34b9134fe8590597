"""Silver reasoning chains: for a training question, the ordered triples of its gold passages that
lead from the question to the answer (KiRAG §3.4; the authors' construction is unpublished).

The pool is the triples of the question's gold passages. Answers and gold triples are matched on
SQuAD-normalised tokens: a triple "contains" an answer (or alias) when it appears in the head or
tail as a word sequence, or has token F1 >= 0.8 with one of them. Relevance to a question is the
F1 of stemmed content words (stemming lets "directed" meet "direct", "located" meet "location").

1. Ground truth, when the data has it (the first complete chain wins, else the first tried):
   - `evidences` (2Wiki `evidences`, the demo's `gold_triples`): each gold triple maps to the pool
     triple with the highest token F1 over `head relation tail` (>= 0.5; ties go to a passage the
     chain does not use yet), in gold order. Complete when every gold triple maps.
   - `decomposition` (MuSiQue): hop j takes, from the j-th gold passage (any gold passage when
     hops and passages do not pair up), the triple that contains sub-answer a_j and best matches
     sub-question q_j with `#k` replaced by the earlier sub-answers. A hop whose sub-answer is in
     no triple takes the best match to "q_j a_j", and the chain is incomplete.
2. `search`, otherwise: a beam search over chains of at most one triple per gold passage. The first
   triple shares a content word with the question. A chain scores its question-word coverage, plus
   the mean relevance of its triples, plus 0.5 x the mean link of its steps: 1 when the triple
   shares an entity (equal, or one a word sequence of the other) with an earlier chain triple, 0.5
   when its passage mentions an earlier head or tail, else 0. Links are soft because extracted
   triples often leave the bridge entity implicit ("<mechanical clock; dates back to; 1410>" in
   the passage on Prague's clock): as a hard rule only a third of MuSiQue's ground-truth chains
   pass. The result is the best chain by (complete, passages covered, ends in the answer, score);
   complete means every gold passage is covered and the last triple contains the answer.
   Comparison questions take one triple per gold passage, the combination that best matches the
   question and whose relations agree; unordered, complete when every passage is covered.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from core.text import contains_words, content_words, overlap_f1, stem_f1, stems, token_f1, tokens
from core.types import Question, Triple

Similarity = Callable[[str, Sequence[str]], list[float]]  # (query, texts) -> one score per text
Pool = dict[str, list[Triple]]  # gold passage id -> its triples, passages in gold (hop) order

ANSWER_F1 = 0.8  # a head or tail this close to an answer contains it
MATCH_F1 = 0.5  # a pool triple this close to a gold triple matches it
LINK_WEIGHT = 0.5
MENTION_LINK = 0.5  # the link value of a passage mention, against 1 for a shared entity
COMPARISON_TYPES = frozenset({"comparison"})
_HOP_REF = re.compile(r"#(\d+)")


def stem_similarity(query: str, texts: Sequence[str]) -> list[float]:
    return [stem_f1(query, t) for t in texts]


def contains_answer(triple: Triple, answers: Sequence[str]) -> bool:
    return any(contains_words(part, a) or token_f1(part, a) >= ANSWER_F1
               for part in (triple.head, triple.tail) for a in answers if a)


def same_entity(a: str, b: str) -> bool:
    """Equal after normalisation, or one a word sequence of the other that has a content word."""
    shorter = a if len(tokens(a)) <= len(tokens(b)) else b
    return bool(content_words(shorter)) and (contains_words(a, b) or contains_words(b, a))


def shares_entity(a: Triple, b: Triple) -> bool:
    return any(same_entity(x, y) for x in (a.head, a.tail) for y in (b.head, b.tail))


def substitute_hops(question: str, answers: Sequence[str]) -> str:
    """Replace MuSiQue's `#k` references by the k-th sub-answer (and `>>` by a space)."""
    def answer(match: re.Match) -> str:
        k = int(match.group(1)) - 1
        return answers[k] if 0 <= k < len(answers) else match.group(0)

    return _HOP_REF.sub(answer, question).replace(">>", " ")


@dataclass
class Chain:
    triples: list[Triple]
    source: str  # evidences | decomposition | search
    ordered: bool
    complete: bool


class ChainBuilder:
    """Builds one `Chain` per question from the triples of its gold passages (see the module doc)."""

    def __init__(self, use_ground_truth: bool = True, beam_size: int = 32, comparison_candidates: int = 5,
                 similarity: Similarity = stem_similarity) -> None:
        self.use_ground_truth = use_ground_truth
        self.beam_size = beam_size
        self.comparison_candidates = comparison_candidates
        self.similarity = similarity

    def build(self, question: Question, pool: Pool, texts: Mapping[str, str] | None = None) -> Chain:
        """`texts`: gold passage id -> its title and text, for mention links (search only)."""
        attempts = []
        if self.use_ground_truth:
            attempts = [c for c in (self.from_evidences(question, pool), self.from_decomposition(question, pool)) if c]
        for chain in attempts:
            if chain.complete:
                return chain
        return attempts[0] if attempts else self.search(question, pool, texts or {})

    def _best(self, query: str, candidates: list[Triple]) -> Triple | None:
        if not candidates:
            return None
        scores = self.similarity(query, [t.text for t in candidates])
        return candidates[scores.index(max(scores))]

    # -- ground truth ----------------------------------------------------------------------

    def from_evidences(self, question: Question, pool: Pool) -> Chain | None:
        if not question.gold_triples:
            return None
        everything = [t for triples in pool.values() for t in triples]
        chain: list[Triple] = []
        for gold in question.gold_triples:
            used, taken = {t.passage_id for t in chain}, {t.id for t in chain}
            scored = [(token_f1(" ".join(gold), t.plain_text), t.passage_id not in used, -i)
                      for i, t in enumerate(everything) if t.id not in taken]
            f1, _, minus_index = max(scored, default=(0.0, False, 0))
            if f1 >= MATCH_F1:
                chain.append(everything[-minus_index])
        complete = len(chain) == len(question.gold_triples)
        return Chain(chain, "evidences", question.type not in COMPARISON_TYPES, complete)

    def from_decomposition(self, question: Question, pool: Pool) -> Chain | None:
        steps = question.decomposition
        if not steps or not pool:
            return None
        passages = list(pool)
        sub_answers = [str(s.get("answer", "")) for s in steps]
        chain: list[Triple] = []
        grounded = True
        for j, step in enumerate(steps):
            pids = [passages[j]] if len(steps) == len(passages) else passages
            taken = {t.id for t in chain}
            candidates = [t for pid in pids for t in pool[pid] if t.id not in taken]
            answers = [sub_answers[j]] + (question.answers if j == len(steps) - 1 else [])
            query = substitute_hops(str(step.get("question", "")), sub_answers[:j])
            with_answer = [t for t in candidates if contains_answer(t, answers)]
            if not with_answer:
                grounded = False
                query = f"{query} {sub_answers[j]}"
            best = self._best(query, with_answer or candidates)
            if best:
                chain.append(best)
        complete = grounded and len(chain) == len(steps)
        return Chain(chain, "decomposition", question.type not in COMPARISON_TYPES, complete)

    # -- search ----------------------------------------------------------------------------

    def search(self, question: Question, pool: Pool, texts: Mapping[str, str]) -> Chain:
        if question.type in COMPARISON_TYPES:
            return self._compare(question, pool)
        everything = [t for triples in pool.values() for t in triples]
        if not everything:
            return Chain([], "search", True, False)
        q_words = content_words(question.question)
        relevance = {id(t): s for t, s in zip(everything, self.similarity(question.question, [t.text for t in everything]))}

        def link(chain: tuple[Triple, ...], triple: Triple) -> float:
            if any(shares_entity(t, triple) for t in chain):
                return 1.0
            text = texts.get(triple.passage_id, "")
            mentioned = any(content_words(e) and contains_words(text, e) for t in chain for e in (t.head, t.tail))
            return MENTION_LINK if mentioned else 0.0

        def score(chain: tuple[Triple, ...]) -> float:
            words = frozenset().union(*(content_words(t.text) for t in chain))
            coverage = len(q_words & words) / max(len(q_words), 1)
            links = sum(link(chain[:i], chain[i]) for i in range(1, len(chain))) / max(len(chain) - 1, 1)
            return coverage + sum(relevance[id(t)] for t in chain) / len(chain) + LINK_WEIGHT * links

        first = [t for t in everything if q_words & (content_words(t.head) | content_words(t.tail))] or everything
        beam = sorted(((t,) for t in first), key=score, reverse=True)[: self.beam_size]
        states = list(beam)
        while beam:
            grown = []
            for chain in beam:
                used = {t.passage_id for t in chain} | {t.id for t in chain}  # a fact stated twice counts once
                grown += [chain + (t,) for t in everything if t.passage_id not in used and t.id not in used]
            states += grown
            beam = sorted(grown, key=score, reverse=True)[: self.beam_size]

        def key(chain: tuple[Triple, ...]) -> tuple:
            covered = len({t.passage_id for t in chain})
            answered = contains_answer(chain[-1], question.answers)
            return (covered == len(pool) and answered, covered, answered, score(chain))

        best = max(states, key=key)
        return Chain(list(best), "search", True, key(best)[0])

    def _compare(self, question: Question, pool: Pool) -> Chain:
        """One triple per gold passage: the combination best matching the question, relations agreeing."""
        q_words = content_words(question.question)
        shortlists = []
        for triples in pool.values():
            matching = [t for t in triples if q_words & content_words(t.text)] or triples
            scores = self.similarity(question.question, [t.text for t in matching])
            ranked = sorted(zip(matching, scores), key=lambda pair: -pair[1])
            shortlists.append(ranked[: self.comparison_candidates])

        def score(combo) -> float:
            pairs = list(itertools.combinations([t.relation for t, _ in combo], 2))
            agreement = sum(overlap_f1(stems(a), stems(b)) for a, b in pairs) / max(len(pairs), 1)
            return sum(s for _, s in combo) / len(combo) + agreement

        shortlists = [s for s in shortlists if s]
        best = max(itertools.product(*shortlists), key=score) if shortlists else ()
        return Chain([t for t, _ in best], "search", False, bool(best) and len(best) == len(pool))
