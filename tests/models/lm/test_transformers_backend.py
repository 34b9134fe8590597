import pytest
import torch

from models.lm.transformers_backend import (
    CausalLM,
    RepeatedLineStop,
    max_attention_in_sentence,
    max_attention_received,
    token_entropy,
)

PROMPTS = ["the river", "a much longer prompt about the city where the band was born", "who", "album of the year"]


def direct_signals(tiny_lm, prompt_ids, new_ids, layer=-1):
    """Entropy and received attention computed from one plain eager forward pass of prompt + generated ids."""
    entropy, received, _ = direct_signals_in_sentence(tiny_lm, prompt_ids, new_ids, layer)
    return entropy, received


def direct_signals_in_sentence(tiny_lm, prompt_ids, new_ids, layer=-1):
    """`direct_signals` and, by plain loops, the attention each generated token j receives from a later
    generated token i, i's weights over the generated keys (j ≤ i) divided by their sum."""
    ids = torch.tensor([prompt_ids + new_ids])
    with torch.no_grad(), tiny_lm._eager_attention():
        out = tiny_lm.model(ids, output_attentions=True)
    p, n = len(prompt_ids), len(new_ids)
    logp = torch.log_softmax(out.logits[0, p - 1 : p + n - 1].float(), dim=-1)
    entropy = -(logp.exp() * logp).sum(-1)
    attn = out.attentions[layer][0].mean(0)  # (query, key)
    received = torch.stack([attn[j + 1 :, j].max() if j + 1 < p + n else attn.new_zeros(()) for j in range(p, p + n)])
    in_sentence = [max((float(attn[i, j] / attn[i, p : i + 1].sum()) for i in range(j + 1, p + n)), default=0.0)
                   for j in range(p, p + n)]
    return entropy, received, torch.tensor(in_sentence)


def test_greedy_is_batch_independent_and_in_input_order(tiny_lm):
    alone = [tiny_lm.generate([p], max_new_tokens=12)[0] for p in PROMPTS]
    batched = tiny_lm.generate(PROMPTS, max_new_tokens=12, batch_size=3)
    for a, b in zip(alone, batched):
        assert a.token_ids == b.token_ids and a.text == b.text
        assert b.new_tokens == len(b.token_ids) > 0
    assert [g.prompt_tokens for g in batched] == [len(tiny_lm.encode(p)) for p in PROMPTS]


def test_greedy_takes_the_argmax_of_raw_logits(tiny_lm):
    g = tiny_lm.generate(["the river"], max_new_tokens=8)[0]
    ids = torch.tensor([tiny_lm.encode("the river") + g.token_ids])
    logits = tiny_lm.model(ids).logits[0, -len(g.token_ids) - 1 : -1]
    assert logits.argmax(-1).tolist() == g.token_ids


def test_stop_cuts_text_and_tokens(tiny_lm):
    full = tiny_lm.generate(["the river"], max_new_tokens=20)[0]
    stop = full.text[5:8]
    cut = tiny_lm.generate(["the river"], max_new_tokens=20, stop=[stop, "never appears"], return_signals=True)[0]
    assert cut.text == full.text[: full.text.find(stop)]
    assert stop in tiny_lm.tokenizer.decode(cut.token_ids) and stop not in tiny_lm.tokenizer.decode(cut.token_ids[:-1])
    assert full.token_ids[: cut.new_tokens] == cut.token_ids
    assert len(cut.signals.pieces) == len(cut.signals.entropy) == len(cut.signals.max_attention) == cut.new_tokens


def test_repeated_line_stop_fires_only_on_a_completed_repeat(tiny_lm):
    prompt = tiny_lm.encode("prompt")
    texts = ["<a; b; c>\n<d; e; f>\n", "<a; b; c>\n<d; e; f>\n<a; b; c>\n", "<a; b; c>\n\n\n", "<a; b; c>\n<a; b; c>"]
    generated = [tiny_lm.encode(t) for t in texts]
    width = max(len(g) for g in generated)
    # Each row ends on its own last token: pad ids (special, so skipped when decoded) fill in front.
    rows = [prompt + [tiny_lm.pad_id] * (width - len(g)) + g for g in generated]
    stop = RepeatedLineStop(tiny_lm.tokenizer, len(prompt))
    assert stop(torch.tensor(rows), None).tolist() == [False, True, False, False]


def test_stop_repeated_lines_cuts_a_looping_generation(tiny_lm, monkeypatch):
    full = tiny_lm.generate(["the river"], max_new_tokens=60)[0]
    # Every token completes the line "x" (patched on the session's shared tokenizer, so undone after).
    monkeypatch.setattr(tiny_lm.tokenizer, "decode", lambda ids, **kw: "".join("x\n" for _ in ids))
    cut = tiny_lm.generate(["the river"], max_new_tokens=60, stop_repeated_lines=True)[0]
    assert cut.token_ids == full.token_ids[:2]


def test_eos_ends_the_generation(tiny_lm):
    full = tiny_lm.generate(["the river"], max_new_tokens=10)[0]
    tiny_lm.end_ids.add(full.token_ids[4])
    tiny_lm.eos_ids = [full.token_ids[4]]
    g = tiny_lm.generate(["the river"], max_new_tokens=10)[0]
    cut = full.token_ids.index(full.token_ids[4])
    assert g.token_ids == full.token_ids[:cut]


@pytest.mark.parametrize("layer", [-1, 0])
def test_signals_match_a_direct_computation(tiny_lm, layer):
    tiny_lm.attention_layer = layer
    gens = tiny_lm.generate(PROMPTS, max_new_tokens=10, batch_size=4, return_signals=True)
    for prompt, g in zip(PROMPTS, gens):
        entropy, received, in_sentence = direct_signals_in_sentence(tiny_lm, tiny_lm.encode(prompt), g.token_ids, layer)
        assert g.signals.pieces == [tiny_lm.tokenizer.decode([i]) for i in g.token_ids]
        assert torch.allclose(g.signals.entropy, entropy, atol=1e-5)
        assert torch.allclose(g.signals.max_attention, received, atol=1e-6)
        assert torch.allclose(g.signals.max_attention_in_sentence, in_sentence, atol=1e-5)
        assert g.signals.max_attention[-1] == g.signals.max_attention_in_sentence[-1] == 0
        # renormalised by a sum of at most 1: never below the raw weight
        assert (g.signals.max_attention_in_sentence >= g.signals.max_attention - 1e-6).all()
        assert (g.signals.max_attention_in_sentence <= 1).all()
        assert g.signals.attention("raw") is g.signals.max_attention
        assert g.signals.attention("sentence") is g.signals.max_attention_in_sentence


def test_attention_signal_includes_the_prompt(tiny_lm):
    """The prompt is part of the sequence: a pass over the generated tokens alone gives other values."""
    g = tiny_lm.generate(["a much longer prompt about the city"], max_new_tokens=10, return_signals=True)[0]
    _, alone = direct_signals(tiny_lm, g.token_ids[:1], g.token_ids[1:])
    assert not torch.allclose(g.signals.max_attention[1:], alone, atol=1e-3)


def test_signals_default_to_sdpa_generation_and_restore_it(make_tiny_lm):
    lm_ = make_tiny_lm()
    lm_.model.set_attn_implementation("sdpa")
    g = lm_.generate(["the river"], max_new_tokens=5, return_signals=True)[0]
    assert lm_.model.config._attn_implementation == "sdpa"
    assert (g.signals.max_attention[:-1] > 0).all()


def test_entropy_never_nan():
    logits = torch.tensor([[0.0, float("-inf"), 1.0], [1e30, -1e30, float("-inf")], [float("inf"), 0.0, 0.0]])
    h = token_entropy(logits)
    assert not h.isnan().any()
    finite = torch.tensor([0.0, 1.0])
    assert torch.allclose(h[0], -(torch.softmax(finite, 0) * torch.log_softmax(finite, 0)).sum())
    assert h[1] == 0 and h[2] == 0
    assert torch.allclose(token_entropy(torch.zeros(5)), torch.log(torch.tensor(5.0)))


def test_max_attention_received_excludes_diagonal_and_earlier_queries():
    attn = torch.tensor([[1.0, 0.0, 0.0], [0.25, 0.75, 0.0], [0.5, 0.125, 0.375]])
    assert max_attention_received(attn).tolist() == [0.5, 0.125, 0.0]


def test_max_attention_in_sentence_renormalises_over_the_generated_keys_by_hand():
    # a prompt of one token, then 3 generated tokens (the last 3 queries and keys)
    attn = torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0], [0.6, 0.1, 0.3, 0.0], [0.2, 0.4, 0.2, 0.2]])
    # query 2 over keys 1-2: 0.25, 0.75; query 3 over keys 1-3: 0.5, 0.25, 0.25
    assert max_attention_in_sentence(attn, 3).tolist() == pytest.approx([0.5, 0.25, 0.0])
    assert max_attention_in_sentence(attn, 0).tolist() == [] and max_attention_in_sentence(attn, 1).tolist() == [0.0]


def test_loads_a_saved_folder_in_bfloat16(make_tiny_lm, tmp_path):
    saved = make_tiny_lm()
    saved.model.save_pretrained(tmp_path)
    saved.tokenizer.save_pretrained(tmp_path)
    loaded = CausalLM(str(tmp_path), dtype="bfloat16", device="cpu")
    assert loaded.model.dtype == torch.bfloat16 and loaded.model.config._attn_implementation == "sdpa"
    g = loaded.generate(PROMPTS[:2], max_new_tokens=5, return_signals=True)
    assert all(0 < x.new_tokens <= 5 and x.signals.entropy.isfinite().all() for x in g)
    with pytest.raises(ValueError, match="dtype"):
        CausalLM(str(tmp_path), dtype="float16")


def test_format_chat_uses_the_template_or_a_fallback(tiny_lm, tiny_lm_tokenizer):
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    assert tiny_lm.format_chat(messages) == (
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    )
    tokenizer = tiny_lm_tokenizer.__class__(tokenizer_object=tiny_lm_tokenizer.backend_tokenizer, pad_token="<pad>")
    assert not tokenizer.chat_template
    plain = CausalLM(model=tiny_lm.model, tokenizer=tokenizer)
    assert plain.format_chat(messages) == "system: Be brief.\nuser: Hi\nassistant: "
    assert tiny_lm.chat([messages])[0].text == tiny_lm.generate([tiny_lm.format_chat(messages)])[0].text


def test_teacher_forced_entropy_equals_the_scores_of_generation(tiny_lm):
    """The signals come from ONE forward pass over prompt + generated tokens; its entropies equal those
    of the scores `model.generate` produced token by token, and the greedy tokens are the same."""
    for prompt in PROMPTS:
        ids = tiny_lm.encode(prompt)
        out = tiny_lm.model.generate(input_ids=torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                                     max_new_tokens=8, do_sample=False, output_logits=True, return_dict_in_generate=True,
                                     pad_token_id=tiny_lm.pad_id, eos_token_id=None)
        new = out.sequences[0, len(ids):].tolist()
        stepwise = torch.stack([token_entropy(step[0]) for step in out.logits])
        forced = tiny_lm.token_signals([ids], [new])[0]
        assert torch.allclose(forced.entropy, stepwise, atol=1e-5)
        g = tiny_lm.generate([prompt], max_new_tokens=8, return_signals=True)[0]
        assert g.token_ids == new[: len(g.token_ids)]
        assert torch.allclose(g.signals.entropy, stepwise[: g.new_tokens], atol=1e-5)


class Replay:
    """A fast backend's stand-in: it generates (here with the tiny LM itself) but gives no signals."""

    def __init__(self, lm):
        self.lm, self.calls = lm, []

    def format_chat(self, messages):
        return self.lm.format_chat(messages)

    def generate(self, prompts, **kwargs):
        self.calls.append(kwargs)
        return self.lm.generate(prompts, **kwargs)


def test_with_signals_takes_them_from_the_scorer_by_teacher_forcing(tiny_lm):
    from models.lm.config import LMConfig, WithSignals

    fast = Replay(tiny_lm)
    wrapped = WithSignals(fast, LMConfig())
    wrapped.scorer = tiny_lm  # the transformers model of the same weights
    got = wrapped.generate(PROMPTS, max_new_tokens=6, stop=["never"], return_signals=True)
    want = tiny_lm.generate(PROMPTS, max_new_tokens=6, stop=["never"], return_signals=True)
    assert all("return_signals" not in kwargs for kwargs in fast.calls)  # the generator is never asked for them
    for g, w in zip(got, want, strict=True):
        assert (g.text, g.token_ids) == (w.text, w.token_ids)
        assert g.signals.pieces == w.signals.pieces
        assert torch.allclose(g.signals.entropy, w.signals.entropy, atol=1e-6)
        assert torch.allclose(g.signals.max_attention, w.signals.max_attention, atol=1e-6)
        assert torch.allclose(g.signals.max_attention_in_sentence, w.signals.max_attention_in_sentence, atol=1e-6)
    assert wrapped.generate(PROMPTS[:1], max_new_tokens=3)[0].signals is None


def count_forwarded(lm):
    """A list that gets the number of tokens of each decoder forward pass."""
    counts = []
    lm.model.get_decoder().register_forward_pre_hook(
        lambda module, args, kwargs: counts.append(kwargs["input_ids"].shape[1]), with_kwargs=True)
    return counts


def prefix_cache_calls(lm):
    """(prompt, generated) ids: an extension of the first call, an early divergence, then both again."""
    encode = lm.encode
    prompt, new = encode("who was born in the river city where the band made its first album? " * 2), encode(" the film")
    longer, new2 = prompt + new + encode(" and"), encode(" of the year")
    return [(prompt, new), (longer, new2), (prompt[:10] + encode(" which album"), new), (prompt, new), (longer, new2)]


@pytest.mark.parametrize("layer", [-1, 0])
def test_prefix_cache_gives_the_signals_of_the_full_pass(make_tiny_lm, layer):
    cached, uncached = make_tiny_lm(attention_layer=layer), make_tiny_lm(prefix_cache=0, attention_layer=layer)
    cached.model.set_attn_implementation("sdpa")  # the signals pass still runs eager
    forwarded = count_forwarded(cached)
    calls = prefix_cache_calls(cached)
    for prompt, new in calls:
        got, want = cached.token_signals([prompt], [new])[0], uncached.token_signals([prompt], [new])[0]
        entropy, received, in_sentence = direct_signals_in_sentence(uncached, prompt, new, layer)
        torch.testing.assert_close(want.entropy, entropy, atol=1e-5, rtol=0)
        torch.testing.assert_close(want.max_attention, received, atol=1e-5, rtol=0)
        torch.testing.assert_close(want.max_attention_in_sentence, in_sentence, atol=1e-5, rtol=0)
        torch.testing.assert_close(got.entropy, want.entropy, atol=1e-5, rtol=0)
        torch.testing.assert_close(got.max_attention, want.max_attention, atol=1e-5, rtol=0)
        torch.testing.assert_close(got.max_attention_in_sentence, in_sentence, atol=1e-5, rtol=0)
        assert got.pieces == want.pieces
    (p1, g1), (p2, g2), (p3, g3), _, _ = calls
    # From the last prompt token on: the whole first pass, the extension of it, the early divergence
    # after its 10 shared tokens, the first call again from a copy of the second's cache (the last prompt
    # token recomputed), then the second again: its stored cache was not cut by the fourth call.
    assert forwarded == [len(p1 + g1), len(p2 + g2) - len(p1 + g1), len(p3 + g3) - 10, len(g1) + 1, len(g2) + 1]
    assert cached.model.config._attn_implementation == "sdpa"


def test_prefix_cache_keeps_the_most_recent_sequences(make_tiny_lm):
    lm = make_tiny_lm(prefix_cache=2)
    forwarded = count_forwarded(lm)
    (p1, g1), (p2, g2), (p3, g3), _, _ = prefix_cache_calls(lm)
    p4 = lm.encode("album of the year")  # shares no token with the others
    for prompt, new in [(p1, g1), (p3, g3), (p2, g2), (p3, g3), (p4, g1), (p2, g2)]:
        lm.token_signals([prompt], [new])
    assert forwarded == [
        len(p1 + g1), len(p3 + g3) - 10,
        len(p2 + g2) - len(p1 + g1),  # its entry replaces the first's, which it extends: the third's stays
        len(g3) + 1,
        len(p4 + g1),
        len(p2 + g2) - 10,  # the least recently used (the second) was dropped for the fourth
    ]
    lm.token_signals([p1, p2], [g1, g2])  # a batch: one padded pass without the cache
    assert forwarded[-1] == len(p2 + g2)
    none = make_tiny_lm(prefix_cache=0)
    forwarded = count_forwarded(none)
    none.token_signals([p1], [g1])
    none.token_signals([p1], [g1])
    assert forwarded == [len(p1 + g1)] * 2
