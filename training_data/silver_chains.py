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
2. `search`, otherwise: a beam search over chains of at most one triple per gold passage, read as a
   path from the question to the answer. Each step is judged by how it continues from the entities
   its previous triple brought in ("new": a head or tail named neither by the question, all its
   content words being question words, nor by an earlier chain triple): 1 when the triple shares
   such an entity (equal, or one a word sequence of the other, whole or by a comma- or bracket-
   separated piece: "Des Moines, Iowa" is also "Iowa"), 0.5 when its passage mentions one, 0.5 x
   those values when it continues only from an older head or tail of the chain (one named before,
   the question's entity included), else 0. So "<Ostrel Brewing; founded by; Ana Corvel>" passes Ana
   Corvel on to the next step, while a step back to Ostrel Brewing counts half. Mentions keep links
   soft where extracted triples leave the bridge implicit ("<mechanical clock; dates back to; 1410>"
   in the passage on Prague's clock). A chain scores its question-word coverage, plus the mean
   relevance of its triples, plus the mean link of its steps. Every triple may start a chain (a lone
   triple has no links to be judged by; a start without question words, "<Big Mouth Records; based
   in; Des Moines, Iowa>" for Corey Taylor's city of birth, is often the one that leads on); the
   beam keeps first the chains that can still end in the answer (shorter ones that leave a passage
   with an answer triple unused; full-length ones with the answer in the last triple). The result is
   the best chain by (complete, passages covered, ends in the answer, score); complete means every
   gold passage is covered, the last triple contains the answer and (`require_links`, the default)
   every step has a link. On MuSiQue train-100 (gpt-3.5 triples), 53 of the 71 complete ground-truth
   chains can be ordered with a link at every step; of the search chains otherwise complete, 50 of
   the 56 linked ones recover the gold chain exactly, 5 of the 22 with an unlinked step
   (benchmarks/silver_chains.py).
   Comparison questions (`is_comparison`) take one triple per gold passage, the combination that
   best matches the question and whose relations agree; unordered, complete when every passage is
   covered.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from core.text import contains_words, content_words, overlap_f1, stem_f1, stems, token_f1, tokens
from core.types import Question, Triple

Similarity = Callable[[str, Sequence[str]], list[float]]  # (query, texts) -> one score per text
Pool = dict[str, list[Triple]]  # gold passage id -> its triples, passages in gold (hop) order

ANSWER_F1 = 0.8  # a head or tail this close to an answer contains it
MATCH_F1 = 0.5  # a pool triple this close to a gold triple matches it
MENTION_LINK = 0.5  # the link value of a passage mention, against 1 for a shared entity
EARLIER_LINK = 0.5  # the factor for a link from an older chain entity than the previous triple's new ones
COMPARISON_TYPES = frozenset({"comparison"})
YES_NO = frozenset({("yes",), ("no",)})
_HOP_REF = re.compile(r"#(\d+)")


def stem_similarity(query: str, texts: Sequence[str]) -> list[float]:
    return [stem_f1(query, t) for t in texts]


def is_comparison(question: Question) -> bool:
    """Typed "comparison", or, where the data has no type (IRCoT's HotpotQA), answered yes/no or by a
    name in the question ("Which is older, A or B?"). On HotpotQA train-100, which has types, the
    untyped rule finds 15 of the 22 comparison questions and none of the 78 bridge ones."""
    if question.type:
        return question.type in COMPARISON_TYPES
    return any(tokens(a) in YES_NO or contains_words(question.question, a) for a in question.answers if tokens(a))


def contains_answer(triple: Triple, answers: Sequence[str]) -> bool:
    return any(contains_words(part, a) or token_f1(part, a) >= ANSWER_F1
               for part in (triple.head, triple.tail) for a in answers if a)


def same_entity(a: str, b: str) -> bool:
    """Equal after normalisation, or one a word sequence of the other that has a content word."""
    shorter = a if len(tokens(a)) <= len(tokens(b)) else b
    return bool(content_words(shorter)) and (contains_words(a, b) or contains_words(b, a))


@lru_cache(maxsize=1 << 16)
def entity_forms(entity: str) -> tuple[str, ...]:
    """An entity and, when it has several, its comma- or bracket-separated pieces: "Des Moines, Iowa"
    is also "Des Moines" and "Iowa"."""
    pieces = [p for p in re.split(r"[,()]", entity) if content_words(p)]
    return (entity, *pieces) if len(pieces) > 1 else (entity,)


@lru_cache(maxsize=1 << 18)
def linked(a: str, b: str) -> bool:
    """Two triple parts name the same entity (`same_entity`), whole or by a comma- or bracket-separated
    piece."""
    return any(same_entity(x, y) for x in entity_forms(a) for y in entity_forms(b))


@lru_cache(maxsize=1 << 16)
def mentions(text: str, entity: str) -> bool:
    """`text` names the entity, whole or by a comma- or bracket-separated piece."""
    return any(content_words(f) and contains_words(text, f) for f in entity_forms(entity))


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
                 similarity: Similarity = stem_similarity, require_links: bool = True) -> None:
        self.use_ground_truth = use_ground_truth
        self.require_links = require_links
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
        return Chain(chain, "evidences", not is_comparison(question), complete)

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
        return Chain(chain, "decomposition", not is_comparison(question), complete)

    # -- search ----------------------------------------------------------------------------

    def search(self, question: Question, pool: Pool, texts: Mapping[str, str]) -> Chain:
        if is_comparison(question):
            return self._compare(question, pool)
        everything = [t for triples in pool.values() for t in triples]
        if not everything:
            return Chain([], "search", True, False)
        q_words = content_words(question.question)
        relevance = {id(t): s for t, s in zip(everything, self.similarity(question.question, [t.text for t in everything]))}
        answering = {t.passage_id for t in everything if contains_answer(t, question.answers)}

        def new_entities(chain: tuple[Triple, ...]) -> list[str]:
            """The parts of the chain's last triple named neither by the question (all their content words
            question words) nor by an earlier triple; all its parts when every one is named."""
            *earlier, last = chain
            seen = [e for t in earlier for e in (t.head, t.tail)]
            new = [p for p in (last.head, last.tail)
                   if not content_words(p) <= q_words and not any(linked(p, e) for e in seen)]
            return new or [last.head, last.tail]

        def link(chain: tuple[Triple, ...], triple: Triple) -> float:
            """How `triple` continues `chain`: from the new entities of its last triple, else from older ones."""
            text = texts.get(triple.passage_id, "")
            older = [e for t in chain for e in (t.head, t.tail)]
            for entities, factor in ((new_entities(chain), 1.0), (older, EARLIER_LINK)):
                if any(linked(e, p) for e in entities for p in (triple.head, triple.tail)):
                    return factor
                if any(mentions(text, e) for e in entities):
                    return factor * MENTION_LINK
            return 0.0

        def links(chain: tuple[Triple, ...]) -> list[float]:
            return [link(chain[:i], chain[i]) for i in range(1, len(chain))]

        def score(chain: tuple[Triple, ...]) -> float:
            words = frozenset().union(*(content_words(t.text) for t in chain))
            coverage = len(q_words & words) / max(len(q_words), 1)
            steps = links(chain)
            return (coverage + sum(relevance[id(t)] for t in chain) / len(chain)
                    + sum(steps) / max(len(steps), 1))

        def rank(chain: tuple[Triple, ...]) -> tuple:
            """Chains that can still end in the answer first."""
            if len(chain) == len(pool):
                return (contains_answer(chain[-1], question.answers), score(chain))
            return (bool(answering - {t.passage_id for t in chain}), score(chain))

        beam = [(t,) for t in everything]
        states = list(beam)
        while beam:
            grown = []
            for chain in beam:
                used = {t.passage_id for t in chain} | {t.id for t in chain}  # a fact stated twice counts once
                grown += [chain + (t,) for t in everything if t.passage_id not in used and t.id not in used]
            states += grown
            beam = sorted(grown, key=rank, reverse=True)[: self.beam_size]

        def key(chain: tuple[Triple, ...]) -> tuple:
            covered = len({t.passage_id for t in chain})
            answered = contains_answer(chain[-1], question.answers)
            return (covered == len(pool) and answered, covered, answered, score(chain))

        best = max(states, key=key)
        complete = key(best)[0] and (not self.require_links or all(links(best)))
        return Chain(list(best), "search", True, complete)

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
