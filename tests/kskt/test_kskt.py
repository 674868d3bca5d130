import pytest
import torch

from icml26.kskt import claims
from icml26.kskt import experiment as E
from icml26.kskt import get_config
from icml26.kskt.data import (RESP, ROLE_CLOSE, ROLE_OPEN, SEQ_LEN, SLOT_POS, USER_CLOSE, USER_OPEN, VOCAB_SIZE,
                              context_masks, make_roleplay_data, span_mask)
from icml26.kskt.model import (KSKTContext, balance_loss, build_kskt, load_kskt, masked_mean, save_kskt,
                               tiny_qwen3_config)


@pytest.fixture(scope="module")
def model():
    m = build_kskt(tiny_qwen3_config(VOCAB_SIZE, intermediate_size=32), seed=0)
    m.eval()
    return m


@pytest.fixture(scope="module")
def batch():
    return make_roleplay_data(8, seed=3)


def test_masks_exclude_markers_and_cover_spans(batch):
    r, u = context_masks(batch.input_ids)
    ids = batch.input_ids
    for marker in (ROLE_OPEN, ROLE_CLOSE, USER_OPEN, USER_CLOSE, RESP):
        assert (r[ids == marker] == 0).all() and (u[ids == marker] == 0).all()
    assert (r.sum(1) == 5).all() and (u.sum(1) == 4).all()
    assert not ((r > 0) & (u > 0)).any()


def test_empty_and_missing_spans_give_zero_pools():
    ids = torch.tensor([[ROLE_OPEN, ROLE_CLOSE, USER_OPEN, 50, USER_CLOSE], [7, 8, 9, 10, 11]])
    m = span_mask(ids, ROLE_OPEN, ROLE_CLOSE)
    assert m.sum() == 0
    assert span_mask(ids, USER_OPEN, USER_CLOSE)[0].tolist() == [0, 0, 0, 1, 0]
    pooled = masked_mean(torch.randn(2, 5, 3), m)
    assert torch.isfinite(pooled).all() and (pooled == 0).all()


def test_model_runs_with_empty_role_span(model):
    ids = torch.tensor([[ROLE_OPEN, ROLE_CLOSE, USER_OPEN, 50, 60, USER_CLOSE, RESP]])
    r, u = context_masks(ids)
    out = model(ids, r, u, force_system2=True)
    assert torch.isfinite(out.logits).all()


def _ctx(model, ids, gate=None):
    r, u = context_masks(ids)
    emb = model.lm.get_input_embeddings()(ids)
    return model.context(ids, r, u, emb, gate, True), emb


def test_gate_mixes_exactly(model, batch):
    ctx, emb = _ctx(model, batch.input_ids)
    dsaa = model.blocks[0].dsaa
    with torch.no_grad():
        dsaa.fuse.weight.normal_(0, 0.3)  # a non-trivial gate
        pe = model.lm.model.rotary_emb(emb, torch.arange(SEQ_LEN)[None])
        out, aux = dsaa(emb, pe, ctx)
        expect = aux["alpha"] * aux["o_self"] + (1 - aux["alpha"]) * aux["o_other"]
        assert torch.allclose(out, expect, atol=1e-6)
        assert aux["alpha"].std() > 1e-3
        dsaa.fuse.weight.zero_()


@pytest.mark.parametrize("gate,stream,span", [(1.0, "self", "role_mask"), (0.0, "other", "user_mask")])
def test_forced_gate_reduces_to_one_stream(model, batch, gate, stream, span):
    ctx, emb = _ctx(model, batch.input_ids, gate)
    dsaa = model.blocks[0].dsaa
    with torch.no_grad():
        pe = model.lm.model.rotary_emb(emb, torch.arange(SEQ_LEN)[None])
        out, _ = dsaa(emb, pe, ctx)
        single = dsaa.stream(emb, stream, pe, getattr(ctx, span))
    assert torch.allclose(out, single, atol=1e-6)


def test_stream_bias_targets_its_span(model, batch):
    """Raising gamma_self changes the self stream wherever role keys are visible, and not at
    position 0 (the <role> marker, which sees only itself)."""
    ctx, emb = _ctx(model, batch.input_ids)
    dsaa = model.blocks[0].dsaa
    pe = model.lm.model.rotary_emb(emb, torch.arange(SEQ_LEN)[None])
    with torch.no_grad():
        base = dsaa.stream(emb, "self", pe, ctx.role_mask)
        g = dsaa.gamma["self"].item()
        dsaa.gamma["self"].fill_(5.0)
        biased = dsaa.stream(emb, "self", pe, ctx.role_mask)
        dsaa.gamma["self"].fill_(g)
    assert not torch.allclose(base, biased)
    assert torch.allclose(base[:, 0], biased[:, 0], atol=1e-6)  # position 0 sees only itself


def test_causal_no_future_leak(model, batch):
    """Changing a response token must not change the logits at earlier positions (routing and
    sequence pools see the prompt only)."""
    ids = batch.input_ids.clone()
    r, u = context_masks(ids)
    with torch.no_grad():
        a = model(ids, r, u, force_system2=True).logits
        ids[:, SLOT_POS["r2"]] = (ids[:, SLOT_POS["r2"]] + 1) % VOCAB_SIZE
        b = model(ids, r, u, force_system2=True).logits
    assert torch.allclose(a[:, :SLOT_POS["r2"]], b[:, :SLOT_POS["r2"]], atol=1e-5)
    assert not torch.allclose(a[:, SLOT_POS["r2"]], b[:, SLOT_POS["r2"]])


def test_balance_loss_has_gradient(model, batch):
    assert balance_loss(torch.full((4, 4), 0.25)).item() == pytest.approx(0.0)
    assert balance_loss(torch.eye(4)[[0, 0, 0, 0]]).item() == pytest.approx(0.75)
    g = E.balance_grad_norm(model, batch)
    assert g > 0


def test_mupe_starts_as_identity(model, batch):
    ctx, emb = _ctx(model, batch.input_ids)
    assert torch.allclose(model.blocks[0].mupe(emb, ctx), emb)


def test_save_and_reload(model, batch, tmp_path):
    r, u = context_masks(batch.input_ids)
    path = tmp_path / "kskt.pt"
    save_kskt(model, path)
    again = load_kskt(path)
    again.eval()
    with torch.no_grad():
        a = model(batch.input_ids, r, u, force_system2=True).logits
        b = again(batch.input_ids, r, u, force_system2=True).logits
    assert torch.allclose(a, b, atol=1e-6)


def test_layer_placement(model):
    from icml26.kskt.model import KSKTBlock
    kinds = [type(l) is KSKTBlock for l in model.lm.model.layers]
    assert kinds == [False, True, False, True]


def test_bad_inputs_rejected(model, batch):
    ids = batch.input_ids
    r, u = context_masks(ids)
    with pytest.raises(ValueError, match="shape"):
        model(ids, r[:, :5], u)
    with pytest.raises(ValueError, match="only 0 and 1"):
        model(ids, r * 2, u)
    with pytest.raises(ValueError, match="overlap"):
        model(ids, r, r)
    with pytest.raises(ValueError, match="gate_override"):
        model(ids, r, u, gate_override=1.5)
    with pytest.raises(TypeError):
        model(ids, r.tolist(), u)
    with pytest.raises(RuntimeError, match="context"):
        model.lm(input_ids=ids, use_cache=False)
    for field, bad in (("seeds", ()), ("lr", -1.0), ("phase_steps", (1, 2)), ("conflict_rate", 2.0)):
        with pytest.raises(ValueError, match=field):
            get_config("smoke", **{field: bad})
    with pytest.raises(ValueError, match="multiple"):
        get_config("smoke", num_heads=3)
    with pytest.raises(ValueError, match="top_k"):
        get_config("smoke", top_k=5)
    with pytest.raises(ValueError, match="conflict_rate"):
        make_roleplay_data(10, conflict_rate=1.5)
    with pytest.raises(ValueError, match="pool"):
        E.stream_features(model, batch, pool="middle")


def test_data_slots_follow_the_rules():
    d = make_roleplay_data(500, conflict_rate=0.3, seed=1)
    assert 0.2 < d.conflict.float().mean() < 0.4
    assert ((d.topic == d.forbidden) == d.conflict).all()
    assert (d.labels[:, :SLOT_POS["r1"]] == -100).all() and (d.labels[:, SLOT_POS["r1"]:] >= 0).all()


def test_smoke_end_to_end():
    import json

    from icml26.evidence import from_plain, to_plain

    cfg = get_config("smoke", seeds=(0, 1, 2))
    keep = {}
    out = E.run_experiment(cfg, device="cpu", keep=keep)
    res = keep["result"]
    assert out["seeds"] == [0, 1, 2] and set(out["per_seed"][0]["probes"]) == {"prompt", "all", "late"}
    assert all(p["balance_grad"] > 0 for p in out["per_seed"])
    sweep = E.gate_sweep(res.seeds[0].models[0], res.test.input_ids[:1], [0.0, 0.5, 1.0])
    assert sweep["answer"].shape == (3,) and (sweep["answer"] + sweep["refuse"] <= 1 + 1e-6).all()
    assert len(E.greedy_response(res.seeds[0].models[0], res.test.input_ids[:1])) == 3
    ledger = claims.build_ledger(out)
    assert claims.build_ledger(from_plain(json.loads(json.dumps(to_plain(out))))).record() == ledger.record()
    # 12 smoke steps: neither model learns the one-sided slots, so rule 2 stops every comparison
    assert [ledger.entries[c].status for c in ("C1", "C2", "C3")] == ["INCONCLUSIVE"] * 3
    assert "rule 2" in ledger.entries["C2"].reason
    with pytest.raises(ValueError, match="at least 3"):  # one seed: the ledger refuses it
        claims.build_ledger(dict(out, seeds=[0], per_seed=out["per_seed"][:1]))


def _fake_seed(k, r2_k, r2_b, probes=None):
    ps = probes or {"self->style": 0.95, "other->style": 0.6, "other->topic": 0.9, "self->topic": 0.5}
    return {"seed": k, "acc": {"kskt": {"r1": 1.0, "r2": r2_k, "r3": 1.0}, "baseline": {"r1": 1.0, "r2": r2_b, "r3": 1.0}},
            "probes": {"late": ps, "prompt": {n: 0.5 for n in ps}, "all": {n: 0.5 for n in ps}}, "balance_grad": 1.0}


def test_ledger_from_three_fake_seeds():
    out = {"seeds": [0, 1, 2], "per_seed": [_fake_seed(0, 0.97, 0.9), _fake_seed(1, 0.98, 0.92), _fake_seed(2, 0.99, 0.95)]}
    ledger = claims.build_ledger(out)
    assert [e.status for e in ledger._ordered()] == ["REPRODUCED"] * 4
    assert ledger.verdict() == "REPRODUCED"
    # the C1 probe reads the positions that see both spans ("late"), not the prompt average
    flat = {"self->style": 0.6, "other->style": 0.6, "other->topic": 0.6, "self->topic": 0.6}
    for p in out["per_seed"]:
        p["probes"]["late"] = flat
    assert claims.build_ledger(out).entries["C1"].status == "NOT REPRODUCED"


def test_stream_projections_start_small_as_in_release():
    """Every stream projection starts Xavier-uniform with gain 0.02 (the release's init)."""
    from icml26.kskt.model import STREAM_INIT_GAIN, StreamProjections
    p = StreamProjections(64, 4, 2, 16, 1e-6)
    for lin in (p.q, p.k, p.v, p.o):
        fan_out, fan_in = lin.weight.shape
        bound = STREAM_INIT_GAIN * (6.0 / (fan_in + fan_out)) ** 0.5
        assert lin.weight.abs().max() <= bound + 1e-9
        assert lin.weight.abs().max() > 0.5 * bound  # not zero: the streams can still learn


def test_mupe_corrects_attention_input_only(batch):
    """MUPE feeds the DSAA input, not the residual stream: with both streams' output projections
    zeroed the block's DSAA adds nothing, whatever MUPE's weights are."""
    m = build_kskt(tiny_qwen3_config(VOCAB_SIZE, intermediate_size=32), seed=1)
    m.eval()
    ids = batch.input_ids
    r, u = context_masks(ids)
    block = m.blocks[0]
    with torch.no_grad():
        for s in ("self", "other"):
            block.dsaa.proj[s].o.weight.zero_()
        a = m(ids, r, u, force_system2=True).logits
        for s in ("self", "other"):
            block.mupe.w[s].weight.normal_(0, 1.0)
        b = m(ids, r, u, force_system2=True).logits
        assert torch.allclose(a, b, atol=1e-6)
        for s in ("self", "other"):
            block.dsaa.proj[s].o.weight.normal_(0, 0.1)
        c = m(ids, r, u, force_system2=True).logits
        for s in ("self", "other"):
            block.mupe.w[s].weight.zero_()
        d = m(ids, r, u, force_system2=True).logits
    assert not torch.allclose(c, d, atol=1e-4)  # once DSAA is live, MUPE changes what it attends to


def test_centred_alignment_ignores_the_shared_direction():
    from icml26.kskt.train import consistency_loss, understanding_loss
    g = torch.Generator().manual_seed(0)
    o, target = torch.randn(16, 5, 8, generator=g), torch.randn(16, 8, generator=g)
    shift = 10.0 * torch.randn(1, 8, generator=g)
    raw = consistency_loss(o, target), consistency_loss(o, target + shift)
    cen = understanding_loss(o, target, centre=True), understanding_loss(o, target + shift, centre=True)
    assert not torch.allclose(raw[0], raw[1])  # the raw loss (the paper's) moves with the shared part
    assert torch.allclose(cen[0], cen[1], atol=1e-6)
    # a stream whose mean is exactly the target gives 0 in both forms
    assert consistency_loss(target[:, None].expand(16, 3, 8), target).abs() < 1e-6
    assert consistency_loss(target[:, None].expand(16, 3, 8), target, centre=True).abs() < 1e-6
    with pytest.raises(ValueError, match="targets"):
        consistency_loss(o, target[:, :4])
    with pytest.raises(ValueError, match="align_target"):
        get_config("smoke", align_target="whitened")


def test_variance_share_and_alignment_diagnostic(model, batch):
    labels = torch.arange(40) % 4
    x = torch.nn.functional.one_hot(labels, 4).float().numpy()
    assert E.variance_share(x, labels.numpy()) == pytest.approx(1.0)
    noise = torch.randn(40, 3, generator=torch.Generator().manual_seed(0)).numpy()
    assert E.variance_share(noise, labels.numpy()) < 0.3
    with pytest.raises(ValueError, match="labels"):
        E.variance_share(x, labels.numpy()[:5])
    diag = E.alignment_diagnostic(model, batch)
    assert set(diag) == {"self", "other"}
    for d in diag.values():
        assert -1.0 <= d["shared"] <= 1.0 and 0.0 <= d["share_style"] <= 1.0 and len(d["gamma"]) == 2


def test_embeddings_untied_by_default_as_in_release():
    """Both models get a separate LM head (the release's tie_word_embeddings=False)."""
    cfg = get_config("smoke", device="cpu")
    kskt, base = E.build_models(cfg, 0, torch.device("cpu"))
    for lm in (kskt.lm, base):
        assert lm.get_output_embeddings().weight.data_ptr() != lm.get_input_embeddings().weight.data_ptr()
    tied, _ = E.build_models(get_config("smoke", device="cpu", tie_embeddings=True), 0, torch.device("cpu"))
    assert tied.lm.get_output_embeddings().weight.data_ptr() == tied.lm.get_input_embeddings().weight.data_ptr()


@pytest.mark.parametrize("tie", [True, False])
def test_tied_embeddings_collapse_prompt_means(tie):
    """The diagnosed mechanism: with a tied embedding trained from scratch on response-only labels,
    the role-span mean embeddings R_bar_i of all items align with one shared direction; untied
    they keep their item-specific part."""
    from transformers import Qwen3ForCausalLM
    from icml26.kskt.train import clm_loss
    torch.manual_seed(0)
    lm = Qwen3ForCausalLM(tiny_qwen3_config(VOCAB_SIZE, num_layers=2, intermediate_size=64, tie_word_embeddings=tie))
    d = make_roleplay_data(256, seed=5)
    r, _ = context_masks(d.input_ids)

    def shared():
        with torch.no_grad():
            c = masked_mean(lm.get_input_embeddings()(d.input_ids), r)
            return torch.nn.functional.cosine_similarity(c, c.mean(0, keepdim=True).expand_as(c), dim=-1).mean().item()

    before = shared()
    opt = torch.optim.AdamW(lm.parameters(), lr=5e-3, betas=(0.9, 0.95))
    for step in range(40):
        idx = torch.arange(32) + 32 * (step % 8)
        loss = clm_loss(lm(input_ids=d.input_ids[idx], use_cache=False).logits, d.labels[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    after = shared()
    assert before < 0.5
    if tie:
        assert after > 0.9
    else:
        assert after < 0.6


def test_extraction_masks_select_the_content_tokens(batch):
    """App. B.1 on this corpus: R_proc = name, style, forbidden topic; U_proc = request, emotion
    (no fillers), each inside its span."""
    from icml26.kskt.data import FILL0, N_FILLERS, extraction_masks, model_inputs
    ids = batch.input_ids
    r, u = context_masks(ids)
    rx, ux = extraction_masks(ids)
    assert (rx.sum(1) == 3).all() and (ux.sum(1) == 2).all()
    assert ((rx <= r) & (ux <= u)).all()
    fill = (ids >= FILL0) & (ids < FILL0 + N_FILLERS)
    assert (rx[fill] == 0).all() and (ux[fill] == 0).all()
    picked = ids[ux > 0].view(-1, 2).sort(1).values
    from icml26.kskt.data import ASK0, FEELS0
    assert (picked[:, 0] == ASK0 + batch.topic).all() and (picked[:, 1] == FEELS0 + batch.emotion).all()
    assert set(model_inputs(ids)) == {"role_mask", "user_mask", "role_extract", "user_extract"}


def test_gather_rows_keeps_the_mean():
    from icml26.kskt.model import gather_rows
    x = torch.randn(3, 6, 4)
    mask = torch.tensor([[0, 1, 1, 0, 1, 0], [1, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]]).float()
    rows, mean = gather_rows(x, mask)
    assert rows.shape == (3, 3, 4)
    assert torch.allclose(rows[0], x[0, [1, 2, 4]])
    assert torch.allclose(rows[1, 0], x[1, 0]) and torch.allclose(rows[1, 1:], x[1, :1].expand(2, 4))
    assert (rows[2] == 0).all()
    assert torch.allclose(rows.mean(1), masked_mean(x, mask), atol=1e-6) and torch.allclose(mean, masked_mean(x, mask))


@pytest.mark.parametrize("source", ["extracted", "span_mean"])
def test_context_sources(batch, source):
    from icml26.kskt.data import extraction_masks
    from icml26.kskt.model import KSKTSpec
    m = build_kskt(tiny_qwen3_config(VOCAB_SIZE, intermediate_size=32), KSKTSpec(context_source=source), seed=0)
    ids = batch.input_ids
    r, u = context_masks(ids)
    rx, ux = extraction_masks(ids)
    emb = m.lm.get_input_embeddings()(ids)
    ctx = m.context(ids, r, u, emb, role_extract=rx, user_extract=ux)
    if source == "extracted":
        assert ctx.r_proc.shape == (8, 3, 64) and ctx.u_proc.shape == (8, 2, 64)
        assert torch.allclose(ctx.u_bar, masked_mean(emb, ux)) and torch.allclose(ctx.r_bar, masked_mean(emb, rx))
    else:  # the release's fallback: whole-span mean, repeated n_ctx times; extraction ignored
        assert ctx.r_proc.shape == (8, 4, 64) and torch.allclose(ctx.u_bar, masked_mean(emb, u))
    with torch.no_grad():
        out = m(ids, r, u, force_system2=True, role_extract=rx, user_extract=ux)
    assert torch.isfinite(out.logits).all() and torch.allclose(out.u_bar, ctx.u_bar)
    with pytest.raises(ValueError, match="outside its span"):
        m(ids, r, u, user_extract=rx)
    with pytest.raises(ValueError, match="context_source"):
        KSKTSpec(context_source="spacy")
    with pytest.raises(ValueError, match="context_source"):
        get_config("smoke", context_source="spacy")


def test_release_schedule_restarts_each_phase(monkeypatch):
    """schedule='release': each phase starts at its peak LR with a fresh AdamW and decays toward 0;
    'v1' keeps one optimizer and a 10 % floor."""
    from icml26.kskt import train as T
    cfg = get_config("evidence")  # phases of 180/90/90 steps: the last step of each is near 0
    lrs = [T.lr_at(i, cfg) for i in range(cfg.total_steps)]
    starts = [0, cfg.phase_steps[0], cfg.phase_steps[0] + cfg.phase_steps[1]]
    for ph, st in enumerate(starts[1:], 1):
        assert lrs[st] == (ph, pytest.approx(cfg.lr * T.PHASE_LR_SCALE[ph]))
        assert 0 < lrs[st - 1][1] < 0.05 * cfg.lr * T.PHASE_LR_SCALE[ph - 1]
    v1 = get_config("evidence", schedule="v1")
    assert T.lr_at(starts[1] - 1, v1)[1] == pytest.approx(0.1 * cfg.lr)
    with pytest.raises(ValueError, match="schedule"):
        get_config("smoke", schedule="cosine")
    calls = []
    orig = T.make_optimizer
    monkeypatch.setattr(T, "make_optimizer", lambda m, c: calls.append(1) or orig(m, c))
    smoke = get_config("smoke", device="cpu")
    data = make_roleplay_data(64, seed=0)
    from transformers import Qwen3ForCausalLM
    lm = Qwen3ForCausalLM(tiny_qwen3_config(VOCAB_SIZE, num_layers=1, intermediate_size=16))
    T.train_model(lm, data, data, smoke)
    assert len(calls) == 3
    calls.clear()
    T.train_model(lm, data, data, get_config("smoke", device="cpu", schedule="v1"))
    assert len(calls) == 1


def test_late_pool_probe_runs(model, batch):
    f = E.stream_features(model, make_roleplay_data(40, seed=2), pool="late")
    assert f["self"].shape == (40, 64) and f["other"].shape == (40, 64)


def test_eval_batch_size_caps_large_vocabularies():
    """Evaluation batches keep the reduced run's size and shrink for a real checkpoint's vocabulary."""
    from transformers import Qwen3ForCausalLM

    from icml26.kskt.train import LOGITS_BUDGET, eval_batch_size
    small = build_kskt(tiny_qwen3_config(VOCAB_SIZE, intermediate_size=32), seed=0)
    assert eval_batch_size(small, 18, 500) == 500
    big = Qwen3ForCausalLM(tiny_qwen3_config(151_936, hidden_size=16, num_layers=1, num_heads=2, num_kv_heads=1,
                                             head_dim=8, intermediate_size=16))
    b = eval_batch_size(big, 18, 500)
    assert 1 <= b < 500 and b * 18 * 151_936 <= LOGITS_BUDGET
