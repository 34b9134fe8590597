"""MIND's loop: generate sentence by sentence, retrieve when the uncertainty trigger fires, keep facts in memory.

Per sentence of a few-shot chain-of-thought answer (`… So the answer is …`):
1. Generate one sentence with the memory and the answer so far in the prompt, with per-token signals
   where they are used (`fixed` and `dynamic` triggers, entity confidences read from the reasoning, or
   `record_signals`): they cost a scorer pass.
2. Trigger: `never` (closed book), `always` (fixed interval: every sentence with a word), `random`
   (each sentence with a word at `random_rate`, seeded per question: the control that tells a trigger
   from firing as often), `fixed` (DRAGIN: max S > θ), or `dynamic` (MIND: max S > s·(α·mean(H) +
   β·mean(maxAttn)), s = `threshold_scale`, 1 as in the paper); see `models.uncertainty`.
   `attention` chooses the maxAttn of the trigger and the entity confidence: `raw` or `sentence`
   (renormalised over the generated tokens); calibrated parameters must be of the same kind.
3. On a trigger: extract entities by prompt from the question and the text so far (greedy, so
   deterministic), filter them (`none`, `cot`, `confidence`, `cot+confidence`; confidence is MIND's
   γ/(1+H) + δ·maxAttn, top-k or threshold), drop those already searched (memory), and retrieve with a
   sub-query (`subquery`): the question plus the entities (the question plus the sentence when no
   entity is left), or `refined`, MIND's section 3.4: a question the LM writes for the next missing
   fact from the question, the kept entities and the memory.
   The entity confidence reads, as the paper's Eq. 4 does, the signals of the entity's tokens in the
   reasoning whose uncertainty was measured (`entity_signals: reasoning`; its latest mention): an
   entity the reasoning does not mention (one named only in the question) falls back to its tokens in
   the extraction output, the only place `extraction` reads.
   Retrieved facts go to memory, and the sentence is generated again with them (no signals), then kept.
4. Stop at "the answer is", when the generation ends or repeats a sentence, or after `max_sentences`.
   A reasoning that stopped without "the answer is" gets it appended and completed (one more short
   generation), so that every run ends with an answer to score rather than its whole reasoning.

The prediction's passages: those whose facts the memory holds, most confident first, then the others
in the order retrieved; with `reader.enabled` the reader answers from the top of them, as it does for
every other method (evaluation.factory).

`concurrency` > 1 runs that many questions at once in threads (`models.lm.batching`): their LM calls,
one at a time per question, are generated together, so the LM decodes several sequences per step (no
faster on 2 CPU cores, where prompt prefill dominates: benchmarks/results/mind_speed.md). The searches
run one at a time (a KiRAG search may call its own LM).

The search is pluggable: `PassageSearch` over a BM25 or dense retriever keeps passages as facts;
`KiRAGSearch` runs KiRAG's loop for the sub-query and keeps its chain's triples as facts
(`kirag+mind`: MIND decides when to retrieve, KiRAG decides what). A search reports what it cost
(`Found`): a KiRAG loop runs up to L searches and its Constructor's LLM calls, all counted.
"""

from __future__ import annotations

import random
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol, get_args

from core.config import ConfigError, require_positive
from core.types import Passage, Question
from inference.constructor import ANSWER_MARK
from inference.kirag import KiRAG
from inference.memory import Fact, Memory
from inference.methods import Method, Prediction
from inference.retrievers import Hit, Retriever
from models.lm.batching import BatchedCalls
from models.lm.chat import Message, chat_messages
from models.lm.interface import Attention, LanguageModel, TokenSignals
from models.uncertainty import ATTENTION_KINDS, MindParams, decide, token_confidence, word_signals

Trigger = Literal["never", "always", "random", "fixed", "dynamic"]
EntityFilter = Literal["none", "cot", "confidence", "cot+confidence"]
EntitySignals = Literal["reasoning", "extraction"]
SubQuery = Literal["entities", "refined"]
EntitySelection = Literal["threshold", "top"]
TRIGGERS, FILTERS = get_args(Trigger), get_args(EntityFilter)
ENTITY_SIGNALS, SUBQUERIES, SELECTIONS = get_args(EntitySignals), get_args(SubQuery), get_args(EntitySelection)
Facts = list[tuple[str, str]]  # (fact text, source id)

COT_DEMOS = [
    ("What is the county seat of the county where Lake Orvell is located?",
     "Lake Orvell is located in Dunmore County. The county seat of Dunmore County is Hallam. So the answer is Hallam."),
    ("Who was born first, Mira Castell or Tomas Reyes?",
     "Mira Castell was born in 1961. Tomas Reyes was born in 1958. 1958 is earlier than 1961. So the answer is Tomas Reyes."),
]
COT_DEMO_PAIRS = [(f"Question: {q}", a) for q, a in COT_DEMOS]
COT_INSTRUCTION = "Answer the question step by step, one fact per sentence, and end with 'So the answer is <answer>.'"
ENTITY_INSTRUCTION = ("List the names, places, works, dates and events in the question and the reasoning that the "
                      "answer depends on. Write each one on its own line, copied exactly, and nothing else.")
# Without demonstrations the packaged 0.5B LM answers on one line instead of listing: one entity a question.
ENTITY_DEMOS = [
    ("Question: Who directed the film that won the Golden Harp at the Varlen festival?\n"
     "Reasoning so far: The Golden Harp at the Varlen festival went to Silent Orchard.",
     "Golden Harp\nVarlen festival\nSilent Orchard"),
    ("Question: Was Oskar Lind older than the founder of Brevik Mills?\n"
     "Reasoning so far: Brevik Mills was founded by Hanna Dahl in 1902.",
     "Oskar Lind\nBrevik Mills\nHanna Dahl\n1902"),
]
SUBQUERY_INSTRUCTION = ("Write one short question that asks for the next fact needed to answer the main question, "
                        "about the given entities. Output only that question.")
COT_FILTER_INSTRUCTION = ("Which of the candidate entities are needed to continue the reasoning towards the answer? "
                          "Answer with their numbers, separated by commas.")


def final_answer(text: str) -> str:
    """What follows the last "the answer is" (the whole text when there is none)."""
    parts = re.split(ANSWER_MARK, text, flags=re.IGNORECASE)
    return parts[-1].strip(" .:\n") if len(parts) > 1 else text.strip()


@dataclass
class Found:
    """One MIND retrieval: the passages found for a sub-query (best first), the facts to keep in memory,
    and what finding them cost (every passage seen, searches, LLM calls), for honest accounting."""

    hits: list[Hit]
    facts: Facts
    retrieved: list[str]
    retrieval_calls: int = 1
    llm_calls: int = 0


class FactSearch(Protocol):
    """MIND's retrieval: what a sub-query finds (`Found`)."""

    def search_with_facts(self, query: str, k: int) -> Found: ...


@dataclass
class Entity:
    text: str
    confidence: float
    entropy: list[float] = field(default_factory=list)  # its tokens' signals (where: `source`)
    attention: list[float] = field(default_factory=list)  # raw
    attention_in_sentence: list[float] = field(default_factory=list)
    source: str = "extraction"  # "reasoning": its latest mention there; "extraction": the extraction output


def cot_prompt(question: str, memory: str) -> list[Message]:
    context = f"Facts:\n{memory}\n\n" if memory else ""
    return chat_messages(f"{context}Question: {question}", system=COT_INSTRUCTION, demos=COT_DEMO_PAIRS)


_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])?\s*")


def parse_entities(text: str) -> list[tuple[str, int, int]]:
    """Entity lines of the extraction output, with their character range; numbering and bullets dropped."""
    found, seen, offset = [], set(), 0
    for line in text.split("\n"):
        entity = _BULLET.sub("", line, count=1).rstrip().strip(" .;,\"'")  # linear: no backtracking
        if entity and entity.lower() not in seen:
            seen.add(entity.lower())
            start = offset + line.find(entity)
            found.append((entity, start, start + len(entity)))
        offset += len(line) + 1
    return found


def find_words(text: str, phrase: str) -> tuple[int, int] | None:
    """The character range of the last whole-word, case-insensitive occurrence of `phrase` in `text`."""
    matches = list(re.finditer(rf"(?<!\w){re.escape(phrase)}(?!\w)", text, flags=re.IGNORECASE))
    return (matches[-1].start(), matches[-1].end()) if matches else None


def token_range(pieces: list[str], start: int, end: int) -> tuple[int, int]:
    """The tokens whose decoded text overlaps characters [start, end)."""
    first = last = None
    position = 0
    for i, piece in enumerate(pieces):
        if position < end and position + len(piece) > start:
            first = i if first is None else first
            last = i + 1
        position += len(piece)
    return (first, last) if first is not None else (0, 0)


@dataclass
class MindRun:
    """One question's run: the answer text so far, memory, passages retrieved, trace and counts."""

    question: Question
    memory: Memory
    answer: str = ""
    sentences: set[str] = field(default_factory=set)  # lowercased, to stop a looping generation
    passages: dict[str, float] = field(default_factory=dict)  # passages retrieved, in order
    retrieved: dict[str, None] = field(default_factory=dict)  # every passage a search saw, in order
    trace: list[dict] = field(default_factory=list)
    retrieval_calls: int = 0
    llm_calls: int = 0
    drafts: list[TokenSignals] = field(default_factory=list)  # the signals of each sentence generated with them

    def add_sentence(self, sentence: str) -> None:
        """Append a generated sentence (stripped, without its period) to the answer so far."""
        self.sentences.add(sentence.lower())
        self.answer = f"{self.answer} {sentence}." if self.answer else f"{sentence}."


@dataclass
class MindSettings:
    """MIND's loop: trigger threshold, attention, entity filter, retrieval and memory."""

    fixed_threshold: float = 1.0
    """the `dragin` method's θ, in the units of `attention` (DRAGIN's 0.6-1.5 were set for `sentence`-like)"""
    threshold_scale: float = 1.0
    """s in MIND's θ = s·(α·mean(H) + β·mean(maxAttn)): 1 is the paper's; other values trace its calls-F1 curve"""
    random_rate: float = 0.5
    """the `random_trigger` method's chance to retrieve at a sentence"""
    seed: int = 0
    """the `random_trigger` method's seed (with the question id: the same draws in any order)"""
    attention: Attention = "raw"
    """maxAttn of the trigger and the entity confidence: `raw` weights over prompt + text (about
    1/length each) or `sentence`, renormalised over the generated tokens (in [0, 1]); `params` must
    have been calibrated on the same"""
    entity_filter: EntityFilter = "cot+confidence"
    """which entities of a triggered sentence make the sub-query"""
    top_entities: int = 2
    """kept by the confidence filter when `params` set no threshold, or with `entity_selection: top`"""
    entity_selection: EntitySelection = "threshold"
    """what the confidence filter keeps: `threshold`, the entities at or above the calibrated threshold of
    `params` (the paper's rule; the top `top_entities` when `params` set none); `top`, always the top
    `top_entities` (a triggered retrieval then searches with entities, not the sentence, whenever any is left)"""
    entity_signals: EntitySignals = "reasoning"
    """where an entity's confidence reads its tokens' signals: `reasoning`, its latest mention in the
    sentences generated with signals (the paper's Eq. 4), else the extraction output; `extraction`: always
    the extraction output"""
    subquery: SubQuery = "entities"
    """the search query: `entities`, the question plus the kept entities; `refined`, a question the LM
    writes from the question, the kept entities and the memory (MIND's section 3.4; one more LM call)"""
    retrieve_k: int = 3
    """passages per retrieval"""
    memory_capacity: int = 8
    """facts kept in memory"""
    max_sentences: int = 6
    """the longest reasoning, in sentences"""
    concurrency: int = 1
    """questions run at once, their LM calls generated together (models/batched_calls.py); with more
    than 1 the questions of a step (`batch_size`) are saved together. No faster on 2 CPU cores, where
    prompt prefill dominates (benchmarks/results/mind_speed.md); meant for batch-cheap backends (vLLM)"""

    def __post_init__(self) -> None:
        require_positive(self, "top_entities", "retrieve_k", "memory_capacity", "max_sentences", "concurrency")
        if self.entity_filter not in FILTERS:
            raise ConfigError("entity_filter", f"must be one of {', '.join(FILTERS)}, got {self.entity_filter!r}")
        if self.attention not in ATTENTION_KINDS:
            raise ConfigError("attention", f"must be one of {', '.join(ATTENTION_KINDS)}, got {self.attention!r}")
        for name, allowed in (("entity_signals", ENTITY_SIGNALS), ("subquery", SUBQUERIES),
                              ("entity_selection", SELECTIONS)):
            if getattr(self, name) not in allowed:
                raise ConfigError(name, f"must be one of {', '.join(allowed)}, got {getattr(self, name)!r}")
        if not 0 <= self.random_rate <= 1:
            raise ConfigError("random_rate", f"must be in [0, 1], got {self.random_rate!r}")
        if not self.threshold_scale >= 0:
            raise ConfigError("threshold_scale", f"must be at least 0, got {self.threshold_scale!r}")


class MindRAG(Method):
    """MIND over `lm` and `search` (`PassageSearch` or `KiRAGSearch`) with `settings`; `params`: the trigger's
    calibrated parameters (None: hand-set); see the module docstring."""

    answers = True

    def __init__(self, lm: LanguageModel, search: FactSearch | None, trigger: Trigger = "dynamic",
                 params: MindParams | None = None, settings: MindSettings | None = None, k: int = 10,
                 max_new_tokens: int = 48, record_signals: bool = False) -> None:
        if trigger not in TRIGGERS:
            raise ValueError(f"trigger must be one of {', '.join(TRIGGERS)}, got {trigger!r}")
        self.settings = settings or MindSettings()
        attention = self.settings.attention
        if params is not None and params.attention not in (None, attention):
            raise ValueError(f"the trigger parameters were calibrated on {params.attention} attention, and MIND "
                             f"reads {attention} attention: set the same attention (mind.attention)")
        self.lm = BatchedCalls(lm) if self.settings.concurrency > 1 else lm
        self.search, self.trigger, self.params = search, trigger, params or MindParams()
        scale = self.settings.threshold_scale
        self.trigger_params = replace(self.params, alpha=scale * self.params.alpha, beta=scale * self.params.beta)
        self._searching = threading.Lock()
        self.max_new_tokens, self.k = max_new_tokens, k
        self.record_signals = record_signals  # keep each sentence's word signals in the trace (calibration traces)

    @property
    def batched(self) -> bool:
        """One question at a time (evaluate.py then saves each as it is done) unless run concurrently."""
        return self.settings.concurrency > 1

    def predict(self, questions: list[Question]) -> list[Prediction]:
        if self.settings.concurrency > 1:
            return self.lm.map(self._predict_one, questions, self.settings.concurrency)
        return [self._predict_one(q) for q in questions]

    def _predict_one(self, question: Question) -> Prediction:
        """`seconds`: from its start to its end, so with `concurrency` > 1 it includes the other questions' work."""
        start = time.perf_counter()
        state = self.run(question)
        return Prediction(question.id, ranked_passages(state)[: self.k], answer=final_answer(state.answer),
                          retrieval_calls=state.retrieval_calls, llm_calls=state.llm_calls,
                          seconds=time.perf_counter() - start, trace=state.trace, retrieved=list(state.retrieved))

    # -- the loop --------------------------------------------------------------------------

    def next_sentence(self, state: MindRun, lead: str = "", max_new_tokens: int | None = None, signals: bool = True):
        """The next sentence after the memory and the answer so far (and `lead`, the sentence's forced opening)."""
        state.llm_calls += 1
        prompt = self.lm.format_chat(cot_prompt(state.question.question, state.memory.render()))
        prompt += (f"{state.answer} " if state.answer else "") + lead
        return self.lm.generate([prompt], max_new_tokens=max_new_tokens or self.max_new_tokens, batch_size=1,
                                stop=[". ", ".\n", "\n"], return_signals=signals)[0]

    @property
    def reads_reasoning_signals(self) -> bool:
        """Whether entity confidences read the reasoning's signals, so its sentences need them."""
        filters = self.settings.entity_filter in ("confidence", "cot+confidence")
        return filters and self.settings.entity_signals == "reasoning" and self.trigger != "never"

    def run(self, question: Question) -> MindRun:
        state = MindRun(question, Memory(self.settings.memory_capacity))
        scored = self.trigger in ("fixed", "dynamic") or self.record_signals or self.reads_reasoning_signals
        draws = random.Random(f"{self.settings.seed}:{question.id}")
        for _ in range(self.settings.max_sentences):
            generation = self.next_sentence(state, signals=scored)
            if scored:
                signals = generation.signals
                state.drafts.append(signals)
                words = word_signals(signals.pieces, signals.entropy, signals.attention(self.settings.attention))
            has_word = bool(generation.text.strip())  # text other than whitespace, as `word_signals` groups tokens
            if self.trigger in ("never", "always"):
                retrieve, detail = self.trigger == "always" and has_word, {}
            elif self.trigger == "random":
                retrieve, detail = has_word and draws.random() < self.settings.random_rate, {}
            else:
                fixed = self.settings.fixed_threshold if self.trigger == "fixed" else None
                d = decide(words, self.trigger_params, fixed)
                retrieve, detail = d.retrieve, {"max_score": d.max_score, "threshold": d.threshold, "word": d.word}
            step = {"sentence": generation.text, "retrieve": retrieve, **detail}
            if self.record_signals:  # both kinds of attention, for a calibration of either
                step["signals"] = {"entropy": words.entropy.tolist(), "content": words.content.tolist(), **{
                    name: word_signals(signals.pieces, signals.entropy, signals.attention(kind)).max_attention.tolist()
                    for name, kind in (("attention", "raw"), ("attention_in_sentence", "sentence"))}}
            if retrieve:
                step.update(self._retrieve(state, generation.text))
                generation = self.next_sentence(state, signals=False)
                step["regenerated"] = generation.text
            state.trace.append(step)
            sentence = generation.text.strip()
            if not sentence or sentence.lower() in state.sentences:  # ended, or looping
                break
            state.add_sentence(sentence)
            if ANSWER_MARK in sentence.lower():
                break
        if ANSWER_MARK not in state.answer.lower():
            lead = "So the answer is"
            ending = self.next_sentence(state, lead, max_new_tokens=16, signals=False).text.strip()
            state.trace.append({"sentence": f"{lead} {ending}", "retrieve": False, "forced_answer": True})
            state.answer = (f"{state.answer} " if state.answer else "") + f"{lead} {ending}."
        return state

    def _retrieve(self, state: MindRun, sentence: str) -> dict:
        state.llm_calls += 1
        reasoning = f"{state.answer} {sentence}".strip()
        entities = self._filter(state, self.entities(state.question.question, reasoning, state.drafts))
        fresh = state.memory.new_entities([e.text for e in entities])
        confidence = max((e.confidence for e in entities if e.text in fresh), default=1.0)
        query = " ".join([state.question.question, *fresh]) if fresh else f"{state.question.question} {sentence}"
        if self.settings.subquery == "refined":
            query = self.refined_query(state, reasoning, fresh) or query
        with self._searching:
            found = self.search.search_with_facts(query, self.settings.retrieve_k)
        state.retrieval_calls += found.retrieval_calls
        state.llm_calls += found.llm_calls
        for pid, score in found.hits:
            state.passages.setdefault(pid, score)
        state.retrieved.update(dict.fromkeys(found.retrieved))
        for rank, (text, source) in enumerate(found.facts):
            state.memory.add(Fact(text, confidence / (1 + rank), source))
        return {"entities": [[e.text, round(e.confidence, 6)] for e in entities], "query": query,
                "retrieved": [pid for pid, _ in found.hits], "searches": found.retrieval_calls}

    def refined_query(self, state: MindRun, reasoning: str, entities: list[str]) -> str:
        """MIND's refined sub-query: the LM's one-line question for the next fact (empty when it writes none)."""
        state.llm_calls += 1
        memory = state.memory.render()
        request = (f"Main question: {state.question.question}\n" + (f"Known facts:\n{memory}\n" if memory else "")
                   + f"Reasoning so far: {reasoning}\nEntities: {'; '.join(entities) or 'none'}")
        reply = self.lm.chat([chat_messages(request, system=SUBQUERY_INSTRUCTION)], max_new_tokens=32, batch_size=1,
                             stop=["\n"])[0].text
        return reply.strip()

    def entities(self, question: str, reasoning: str, drafts: Sequence[TokenSignals] = ()) -> list[Entity]:
        """Entities extracted by prompt (greedy), each with its confidence from its tokens' signals: its
        latest mention in `drafts` (the reasoning's sentences with their signals) when `entity_signals`
        is `reasoning` and it has one, else its tokens in the extraction output."""
        messages = chat_messages(f"Question: {question}\nReasoning so far: {reasoning}", system=ENTITY_INSTRUCTION,
                                 demos=ENTITY_DEMOS)
        generation = self.lm.chat([messages], max_new_tokens=48, batch_size=1, return_signals=True,
                                  stop_repeated_lines=True)[0]
        entities = []
        for text, start, end in parse_entities(generation.text):
            signals, span, source = generation.signals, (start, end), "extraction"
            if self.settings.entity_signals == "reasoning":
                for draft in reversed(drafts):
                    if found := find_words("".join(draft.pieces), text):
                        signals, span, source = draft, found, "reasoning"
                        break
            first, last = token_range(signals.pieces, *span)
            h, a = signals.entropy[first:last], signals.attention(self.settings.attention)[first:last]
            entities.append(Entity(text, token_confidence(h, a, self.params), h.tolist(),
                                   signals.max_attention[first:last].tolist(),
                                   signals.max_attention_in_sentence[first:last].tolist(), source))
        return entities

    def _filter(self, state: MindRun, entities: list[Entity]) -> list[Entity]:
        if not entities or self.settings.entity_filter == "none":
            return entities
        if self.settings.entity_filter in ("cot", "cot+confidence"):
            state.llm_calls += 1
            numbered = "\n".join(f"{i}. {e.text}" for i, e in enumerate(entities, start=1))
            messages = chat_messages(f"Question: {state.question.question}\nReasoning so far: {state.answer}\n"
                                     f"Candidate entities:\n{numbered}", system=COT_FILTER_INSTRUCTION)
            reply = self.lm.chat([messages], max_new_tokens=16, batch_size=1)[0].text
            chosen = {int(n) for n in re.findall(r"\d+", reply)}
            entities = [e for i, e in enumerate(entities, start=1) if i in chosen]
        if self.settings.entity_filter in ("confidence", "cot+confidence"):
            ranked = sorted(entities, key=lambda e: -e.confidence)
            if self.params.threshold is not None and self.settings.entity_selection == "threshold":
                entities = [e for e in ranked if e.confidence >= self.params.threshold]
            else:
                entities = ranked[: self.settings.top_entities]
        return entities


def ranked_passages(state: MindRun) -> list[tuple[str, float]]:
    """The passages retrieved: those whose facts the memory holds, most confident first, then the others in
    the order retrieved, each with its retrieval score."""
    kept = sorted((f for f in state.memory.facts.values() if f.source in state.passages), key=lambda f: -f.confidence)
    first = dict.fromkeys(f.source for f in kept)
    return [(pid, state.passages[pid]) for pid in [*first, *(p for p in state.passages if p not in first)]]


class PassageSearch:
    """A retriever (BM25 or dense) as MIND's search: the facts are the passages themselves."""

    def __init__(self, retriever: Retriever, passages: dict[str, Passage]) -> None:
        self.retriever, self.passages = retriever, passages

    def search_with_facts(self, query: str, k: int) -> Found:
        hits = self.retriever.search([query], k)[0]
        return Found(hits, [(f"{self.passages[pid].title}: {self.passages[pid].text}", pid) for pid, _ in hits],
                     [pid for pid, _ in hits])


class KiRAGSearch:
    """KiRAG's loop as MIND's retriever: the sub-query is run as a question; facts are its chain's triples.
    Its cost is the whole loop's: every step's search and Constructor call, every passage a step saw. Its
    passages are the loop's ranking, KiRAG's own top k, not `k` (MIND's passages per single search): the
    loop paid for them, and so kirag+mind differs from KiRAG alone only in when the loop runs."""

    def __init__(self, kirag: KiRAG) -> None:
        self.kirag = kirag

    def search_with_facts(self, query: str, k: int) -> Found:
        prediction = self.kirag.predict([Question(id="mind-subquery", question=query)])[0]
        return Found(prediction.passages, [(triple, "kirag") for triple in prediction.chain],
                     prediction.retrieved or [pid for pid, _ in prediction.passages],
                     prediction.retrieval_calls, prediction.llm_calls)
