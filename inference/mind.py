"""MIND's loop: generate sentence by sentence, retrieve when the uncertainty trigger fires, keep facts in memory.

Per sentence of a few-shot chain-of-thought answer (`… So the answer is …`):
1. Generate one sentence with the memory and the answer so far in the prompt, with per-token signals
   where they are used (`fixed` and `dynamic` triggers, or `record_signals`): they cost a scorer pass.
2. Trigger: `never` (closed book), `always` (fixed interval: every sentence with a word), `fixed` (DRAGIN:
   max S > θ), or `dynamic` (MIND: max S > α·mean(H) + β·mean(maxAttn)); see `models.uncertainty`.
   `attention` chooses the maxAttn of the trigger and the entity confidence: `raw` or `sentence`
   (renormalised over the generated tokens); calibrated parameters must be of the same kind.
3. On a trigger: extract entities by prompt from the question and the text so far (greedy, so
   deterministic), filter them (`none`, `cot`, `confidence`, `cot+confidence`; confidence is MIND's
   γ/(1+H) + δ·maxAttn over the entity's tokens in the extraction output, top-k or threshold), drop
   those already searched (memory), and retrieve with a sub-query: the question plus the entities
   (the question plus the sentence when no entity is left).
   Retrieved facts go to memory, and the sentence is generated again with them (no signals), then kept.
4. Stop at "the answer is", when the generation ends or repeats a sentence, or after `max_sentences`.
   A reasoning that stopped without "the answer is" gets it appended and completed (one more short
   generation), so that every run ends with an answer to score rather than its whole reasoning.

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

import re
import threading
import time
from dataclasses import dataclass, field
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
from models.lm.interface import Attention, LanguageModel
from models.uncertainty import ATTENTION_KINDS, MindParams, decide, token_confidence, word_signals

Trigger = Literal["never", "always", "fixed", "dynamic"]
EntityFilter = Literal["none", "cot", "confidence", "cot+confidence"]
TRIGGERS, FILTERS = get_args(Trigger), get_args(EntityFilter)
Facts = list[tuple[str, str]]  # (fact text, source id)

COT_DEMOS = [
    ("What is the county seat of the county where Lake Orvell is located?",
     "Lake Orvell is located in Dunmore County. The county seat of Dunmore County is Hallam. So the answer is Hallam."),
    ("Who was born first, Mira Castell or Tomas Reyes?",
     "Mira Castell was born in 1961. Tomas Reyes was born in 1958. 1958 is earlier than 1961. So the answer is Tomas Reyes."),
]
COT_DEMO_PAIRS = [(f"Question: {q}", a) for q, a in COT_DEMOS]
COT_INSTRUCTION = "Answer the question step by step, one fact per sentence, and end with 'So the answer is <answer>.'"
ENTITY_INSTRUCTION = ("Extract any names, events, or relationships that might be relevant to answering the question. "
                      "Write one per line, nothing else.")
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
    entropy: list[float] = field(default_factory=list)  # its tokens' signals in the extraction output
    attention: list[float] = field(default_factory=list)  # raw
    attention_in_sentence: list[float] = field(default_factory=list)


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

    def add_sentence(self, sentence: str) -> None:
        """Append a generated sentence (stripped, without its period) to the answer so far."""
        self.sentences.add(sentence.lower())
        self.answer = f"{self.answer} {sentence}." if self.answer else f"{sentence}."


@dataclass
class MindSettings:
    """MIND's loop: trigger threshold, attention, entity filter, retrieval and memory."""

    fixed_threshold: float = 1.0
    """the `dragin` method's θ, in the units of `attention` (DRAGIN's 0.6-1.5 were set for `sentence`-like)"""
    attention: Attention = "raw"
    """maxAttn of the trigger and the entity confidence: `raw` weights over prompt + text (about
    1/length each) or `sentence`, renormalised over the generated tokens (in [0, 1]); `params` must
    have been calibrated on the same"""
    entity_filter: EntityFilter = "cot+confidence"
    """which entities of a triggered sentence make the sub-query"""
    top_entities: int = 2
    """kept by the confidence filter when `params` set no threshold"""
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
        return Prediction(question.id, list(state.passages.items())[: self.k], answer=final_answer(state.answer),
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

    def run(self, question: Question) -> MindRun:
        state = MindRun(question, Memory(self.settings.memory_capacity))
        scored = self.trigger in ("fixed", "dynamic") or self.record_signals
        for _ in range(self.settings.max_sentences):
            generation = self.next_sentence(state, signals=scored)
            if scored:
                signals = generation.signals
                words = word_signals(signals.pieces, signals.entropy, signals.attention(self.settings.attention))
            if self.trigger in ("never", "always"):
                # a word: text other than whitespace, as `word_signals` groups the tokens
                retrieve, detail = self.trigger == "always" and bool(generation.text.strip()), {}
            else:
                fixed = self.settings.fixed_threshold if self.trigger == "fixed" else None
                d = decide(words, self.params, fixed)
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
        entities = self._filter(state, self.entities(state.question.question, f"{state.answer} {sentence}".strip()))
        fresh = state.memory.new_entities([e.text for e in entities])
        confidence = max((e.confidence for e in entities if e.text in fresh), default=1.0)
        query = " ".join([state.question.question, *fresh]) if fresh else f"{state.question.question} {sentence}"
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

    def entities(self, question: str, reasoning: str) -> list[Entity]:
        """Entities extracted by prompt (greedy), each with its confidence from its own tokens' signals."""
        messages = chat_messages(f"Question: {question}\nReasoning so far: {reasoning}", system=ENTITY_INSTRUCTION)
        generation = self.lm.chat([messages], max_new_tokens=48, batch_size=1, return_signals=True,
                                  stop_repeated_lines=True)[0]
        signals, entities = generation.signals, []
        for text, start, end in parse_entities(generation.text):
            first, last = token_range(signals.pieces, start, end)
            h, a = signals.entropy[first:last], signals.attention(self.settings.attention)[first:last]
            entities.append(Entity(text, token_confidence(h, a, self.params), h.tolist(),
                                   signals.max_attention[first:last].tolist(),
                                   signals.max_attention_in_sentence[first:last].tolist()))
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
            if self.params.threshold is not None:
                entities = [e for e in ranked if e.confidence >= self.params.threshold]
            else:
                entities = ranked[: self.settings.top_entities]
        return entities


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
    Its cost is the whole loop's: every step's search and Constructor call, every passage a step saw."""

    def __init__(self, kirag: KiRAG) -> None:
        self.kirag = kirag

    def search_with_facts(self, query: str, k: int) -> Found:
        prediction = self.kirag.predict([Question(id="mind-subquery", question=query)])[0]
        return Found(prediction.passages[:k], [(triple, "kirag") for triple in prediction.chain],
                     prediction.retrieved or [pid for pid, _ in prediction.passages],
                     prediction.retrieval_calls, prediction.llm_calls)
