"""The demo world (`datamodules/demo/world.yaml`): the files the package ships are what `scripts/build_demo.py`
builds from it, and the world is sound: every gold passage exists, hops chain, spans occur where they are
said to, questions do not give their answers away, and there are enough questions of each kind and enough
distractor passages. The checks find the problems of the committed files, as a reader sees them; each is
also shown to catch a fault planted in a copy."""

import json
import re
from dataclasses import replace

import pytest

from core.records import DataError
from core.text import normalize_space
from core.types import Passage, Question, triple_key
from datamodules.loaders import DEMO_DIR
from kg.store import KGStore
from scripts.build_demo import FILES, KG_SOURCE, WORLD, build, build_kg, build_passages, build_questions, read_world

MIN_COUNTS = {2: 20, 3: 20, 4: 10}  # bridge questions by number of hops
MIN_COMPARISONS = 10
MIN_DISTRACTORS = 80
MIN_TRIPLES = 2  # per passage


@pytest.fixture(scope="module")
def demo():
    """The committed passages, questions and KG entries, read back as a reader reads them."""
    def rows(name):
        return [json.loads(line) for line in (DEMO_DIR / name).read_text().splitlines()]
    store = KGStore(DEMO_DIR / "kg", create=False)
    assert {store.source(pid) for pid in store.passage_ids()} == {KG_SOURCE}
    entries = [(pid, store.get(pid), store.rejected(pid)) for pid in store.passage_ids()]
    return [Passage(**d) for d in rows("passages.jsonl")], [Question(**d) for d in rows("questions.jsonl")], entries


def _has(text: str, span: str) -> bool:
    return span.lower() in text.lower()


def _in_passage(span: str, passage: Passage) -> bool:
    """`span` occurs in the passage's title or text (case-insensitive, whitespace normalised); a
    comma-joined span ("painter, sculptor") when each of its parts does."""
    where = normalize_space(f"{passage.title} {passage.text}").lower()
    span = normalize_space(span).lower()
    parts = [part.strip() for part in span.split(",")]
    return span in where or (len(parts) > 1 and all(part and part in where for part in parts))


def passage_problems(passages: list[Passage]) -> list[str]:
    """Unique titles and ids; 2-5 ASCII sentences, the text starting with the title entity."""
    problems = []
    titles = [p.title for p in passages]
    if len(set(titles)) != len(titles):
        problems.append(f"duplicate titles: {sorted({t for t in titles if titles.count(t) > 1})}")
    if len({p.id for p in passages}) != len(passages):
        problems.append("duplicate passage ids")
    for p in passages:
        where = f"passage {p.title!r}"
        if not 2 <= len(p.sentences) <= 5:
            problems.append(f"{where}: {len(p.sentences)} sentences (want 2-5)")
        base = re.sub(r"\s*\([^)]*\)$", "", p.title).lower()
        if not (p.text.lower().startswith(base) or p.text.lower().startswith("the " + base)):
            problems.append(f"{where}: text does not start with its title entity")
        if not (p.title + p.text).isascii():
            problems.append(f"{where}: non-ASCII characters")
    return problems


def question_problems(passages: list[Passage], questions: list[Question]) -> list[str]:
    """Each question's hops: gold passages that exist, one per hop, stating the hop's head and tail; the
    sub-answer is the tail. Bridge questions chain (each hop starts from the tail before it), name the first
    entity but neither a bridge entity nor the answer, which is the last tail. Comparisons compare two
    entities named in the question and answer with one of them, yes or no."""
    by_id = {p.id: p for p in passages}
    problems = []
    if len({q.id for q in questions}) != len(questions):
        problems.append("duplicate question ids")
    if len({q.question for q in questions}) != len(questions):
        problems.append("duplicate question texts")
    for q in questions:
        where, n = q.id, len(q.gold_passage_ids)
        if not q.question.isascii() or not all(a.isascii() for a in q.answers):
            problems.append(f"{where}: non-ASCII characters")
        if not len(q.gold_triples) == len(q.decomposition) == n:
            problems.append(f"{where}: triples/decomposition/gold passages differ in length")
        if len(set(q.gold_passage_ids)) != n:
            problems.append(f"{where}: a gold passage is used for two hops")
        missing = [pid for pid in q.gold_passage_ids if pid not in by_id]
        if missing:
            problems.append(f"{where}: gold passage ids {missing} do not exist")
            continue
        gold = [by_id[pid] for pid in q.gold_passage_ids]
        for k, ((head, _, tail), p) in enumerate(zip(q.gold_triples, gold), start=1):
            for span in (head, tail):
                if not _has(" ".join(g.text for g in gold), span):
                    problems.append(f"{where}: {span!r} occurs in no gold passage")
                elif not _has(p.text, span):
                    problems.append(f"{where}: hop {k} {span!r} not in its own passage {p.title!r}")
            if q.decomposition[k - 1]["answer"] != tail:
                problems.append(f"{where}: hop {k} sub-answer differs from the triple's tail")
        answer = q.answers[0] if q.answers else ""
        if not answer:
            problems.append(f"{where}: no answer")
        if q.type == "comparison":
            problems += _comparison_problems(q, answer)
        else:
            problems += _bridge_problems(q, answer, gold[-1])
    return problems


def _comparison_problems(q: Question, answer: str) -> list[str]:
    problems = []
    if len(q.gold_passage_ids) != 2:
        problems.append(f"{q.id}: comparison with {len(q.gold_passage_ids)} gold passages (want 2)")
    heads = [t[0] for t in q.gold_triples]
    if answer not in heads and answer not in ("yes", "no"):
        problems.append(f"{q.id}: comparison answer {answer!r} is neither a compared entity nor yes/no")
    problems += [f"{q.id}: compared entity {head!r} not named in the question" for head in heads
                 if not _has(q.question, head)]
    return problems


def _bridge_problems(q: Question, answer: str, last: Passage) -> list[str]:
    where, triples, problems = q.id, q.gold_triples, []
    if not _has(last.text, answer):
        problems.append(f"{where}: answer {answer!r} not in the last gold passage")
    if answer.lower() != triples[-1][2].lower():
        problems.append(f"{where}: answer differs from the last triple's tail")
    if _has(q.question, answer):
        problems.append(f"{where}: the question contains its answer")
    if not _has(q.question, triples[0][0]):
        problems.append(f"{where}: first entity {triples[0][0]!r} not named in the question")
    for k in range(1, len(triples)):
        prev_tail, head = triples[k - 1][2].lower(), triples[k][0].lower()
        if head not in prev_tail and prev_tail not in head:
            problems.append(f"{where}: hop {k + 1} does not continue from hop {k}")
        if _has(q.question, triples[k - 1][2]):
            problems.append(f"{where}: the question names the bridge entity {triples[k - 1][2]!r}")
        if f"#{k}" not in q.decomposition[k]["question"]:
            problems.append(f"{where}: sub-question {k + 1} does not refer to #{k}")
    if "#" in q.decomposition[0]["question"]:
        problems.append(f"{where}: first sub-question refers to an earlier answer")
    return problems


def count_problems(passages: list[Passage], questions: list[Question]) -> list[str]:
    """Enough bridge questions of each length, comparisons, and passages gold for no question."""
    hops = [len(q.gold_passage_ids) for q in questions if q.type != "comparison"]
    problems = [f"only {hops.count(n)} bridge questions with {n} hops (want >= {least})"
                for n, least in MIN_COUNTS.items() if hops.count(n) < least]
    comparisons = sum(q.type == "comparison" for q in questions)
    if comparisons < MIN_COMPARISONS:
        problems.append(f"only {comparisons} comparison questions (want >= {MIN_COMPARISONS})")
    distractors = len({p.id for p in passages} - {pid for q in questions for pid in q.gold_passage_ids})
    if distractors < MIN_DISTRACTORS:
        problems.append(f"only {distractors} distractor passages (want >= {MIN_DISTRACTORS})")
    return problems


def kg_problems(passages: list[Passage], questions: list[Question], entries: list) -> list[str]:
    """The KG covers the corpus in order; each passage has >= MIN_TRIPLES clean `<head; relation; tail>`
    triples whose head and tail are spans of it, none repeated; every gold triple is under its passage."""
    by_id = {p.id: p for p in passages}
    kg = {pid: triples for pid, triples, _ in entries}
    problems = []
    if [pid for pid, _, _ in entries] != [p.id for p in passages]:
        problems.append("the KG's passages are not the corpus, in corpus order")
    for pid, triples in kg.items():
        if pid not in by_id:
            problems.append(f"KG passage id {pid} is not in the corpus")
            continue
        where = f"KG passage {by_id[pid].title!r}"
        if len(triples) < MIN_TRIPLES:
            problems.append(f"{where}: {len(triples)} triples (want >= {MIN_TRIPLES})")
        keys = [triple_key(t.head, t.relation, t.tail) for t in triples]
        if len(set(keys)) != len(keys):
            problems.append(f"{where}: duplicate triples {sorted({k for k in keys if keys.count(k) > 1})}")
        for t in triples:
            parts = (t.head, t.relation, t.tail)
            if not all(parts) or any(c in part for part in parts for c in ";<>") or not "".join(parts).isascii():
                problems.append(f"{where}: malformed triple {t.text!r}")
            problems += [f"{where}: {span!r} of {t.text!r} occurs in neither title nor text"
                         for span in (t.head, t.tail) if not _in_passage(span, by_id[pid])]
    for q in questions:
        for k, (gold, pid) in enumerate(zip(q.gold_triples, q.gold_passage_ids), start=1):
            if tuple(gold) not in {(t.head, t.relation, t.tail) for t in kg.get(pid, [])}:
                title = by_id[pid].title if pid in by_id else pid
                problems.append(f"{q.id}: hop {k} gold triple {tuple(gold)} not among the triples of {title!r}")
    return problems


def test_the_committed_files_are_what_the_builder_writes(tmp_path, demo):
    stats = build(WORLD, tmp_path)
    for name in FILES:
        assert (tmp_path / name).read_bytes() == (DEMO_DIR / name).read_bytes(), \
            f"{name} differs from the world file: run python -m scripts.build_demo"
    written = [f.relative_to(tmp_path) for f in tmp_path.rglob("*") if f.is_file()]
    assert sorted(str(f) for f in written if not f.name.startswith(".")) == sorted(FILES)  # .triples.lock aside
    passages, questions, entries = demo
    assert stats == {"passages": len(passages), "questions": len(questions),
                     "triples": sum(len(triples) for _, triples, _ in entries)}


def test_the_passages_are_well_formed(demo):
    assert passage_problems(demo[0]) == []


def test_the_questions_are_sound_chains_over_their_gold_passages(demo):
    assert question_problems(*demo[:2]) == []


def test_the_world_has_enough_questions_of_each_kind_and_distractors(demo):
    assert count_problems(*demo[:2]) == []


def test_the_kg_states_every_gold_triple_with_spans_of_its_passage(demo):
    assert kg_problems(*demo) == []


def _plant(demo, fault: str):
    """A copy of the demo with one fault planted in it."""
    passages, questions, entries = demo
    passages, questions, entries = list(passages), list(questions), list(entries)
    bridge = next(i for i, q in enumerate(questions) if q.type == "bridge" and len(q.gold_triples) == 3)
    q = questions[bridge]
    if fault == "passage text without its title":
        passages[0] = replace(passages[0], text="It " + passages[0].text)
    elif fault == "missing gold passage":
        questions[bridge] = replace(q, gold_passage_ids=[q.gold_passage_ids[0], "0" * 16, q.gold_passage_ids[2]])
    elif fault == "hop that does not continue":
        questions[bridge] = replace(q, gold_triples=[q.gold_triples[0], ["Nobody", *q.gold_triples[1][1:]],
                                                     q.gold_triples[2]])
    elif fault == "answer in the question":
        questions[bridge] = replace(q, question=f"{q.question} ({q.answers[0]})")
    elif fault == "too few comparisons":
        questions = [q for q in questions if q.type != "comparison"]
    elif fault == "gold triple not in the KG":
        gold = tuple(q.gold_triples[0])
        entries = [(pid, [t for t in triples if (t.head, t.relation, t.tail) != gold], rejected)
                   for pid, triples, rejected in entries]
    return passages, questions, entries


@pytest.mark.parametrize("fault, check, found", [
    ("passage text without its title", passage_problems, "does not start with its title entity"),
    ("missing gold passage", question_problems, "do not exist"),
    ("hop that does not continue", question_problems, "hop 2 does not continue from hop 1"),
    ("answer in the question", question_problems, "the question contains its answer"),
    ("too few comparisons", count_problems, "comparison questions"),
    ("gold triple not in the KG", kg_problems, "hop 1 gold triple"),
])
def test_each_check_finds_a_planted_fault(demo, fault, check, found):
    passages, questions, entries = _plant(demo, fault)
    args = {passage_problems: (passages,), kg_problems: (passages, questions, entries)}.get(check, (passages, questions))
    problems = check(*args)
    assert any(found in p for p in problems), problems


def _edited_world(tmp_path, old: str, new: str):
    text = WORLD.read_text()
    assert old in text
    path = tmp_path / "world.yaml"
    path.write_text(text.replace(old, new, 1))
    return path


def test_a_value_yaml_reads_as_a_number_is_a_one_line_error_naming_the_record(tmp_path):
    path = _edited_world(tmp_path, '[Kestria, became a republic in, "1871"]', "[Kestria, became a republic in, 1871]")
    with pytest.raises(DataError, match=r"world\.yaml: passage 1 \('Kestria'\), triple 5: 1871 is read as int"):
        read_world(path)


def test_a_hop_naming_no_passage_is_an_error_naming_the_question(tmp_path):
    path = _edited_world(tmp_path, "      - passage: Ostrel Brewing\n", "      - passage: Ostrel Brewery\n")
    world = read_world(path)
    with pytest.raises(DataError, match=r"question demo-001, hop 1: no passage titled 'Ostrel Brewery'"):
        build_questions(world, build_passages(world), path)
    assert len(build_kg(world, build_passages(world))) == len(world["passages"])
