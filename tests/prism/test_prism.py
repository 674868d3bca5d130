"""PRISM: unit norm after every layer, the harmonic convolution equals the direct circular
convolution, shapes/dtypes through the stack, ablation hooks change only what they claim,
parameter matching, the smoke run and bad input."""

import math

import pytest
import torch

from icml26.prism import (
    GatedHarmonicConv, Intervention, PrismHybridLM, PrismLM, RobustPhaseNorm, TransformerLM, build_models,
    count_params, get_config, harmonic_conv, intervene_complex, intervene_real, make_task, mask_tokens,
    matched_ffn_dim, project_unit, static_rotation,
)
from icml26.prism import experiment as ex


def rand_complex(*shape, seed=0, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    return torch.complex(torch.randn(*shape, generator=g), torch.randn(*shape, generator=g)).to(device)


def test_unit_norm_holds_after_every_layer(device):
    torch.manual_seed(0)
    model = PrismLM(20, 8, 3, norm="unit", filter_hidden=8, filter_freqs=4).to(device)
    tokens = torch.randint(20, (4, 10)).to(device)
    _, _, states = model.encoder(tokens, return_states=True)
    assert len(states) == 4  # embedding output + 3 layers
    for z in states:
        assert torch.allclose(z.abs(), torch.ones_like(z.real), atol=1e-5)


def test_rms_norm_gives_unit_token_energy_and_keeps_phase(device):
    x = rand_complex(2, 5, 6, device=device)
    y = RobustPhaseNorm(6).to(device)(x)
    assert torch.allclose((y.abs() ** 2).mean(-1), torch.ones(2, 5, device=device), atol=1e-4)
    assert torch.allclose(torch.angle(y), torch.angle(x), atol=1e-5)


def test_phase_preserving_layer_norm_standardises_moduli_and_keeps_phase():
    from icml26.prism.layers import PhasePreservingLayerNorm
    x = rand_complex(2, 5, 6, seed=7)
    y = PhasePreservingLayerNorm(6)(x)
    m = x.abs()
    expected = (m - m.mean(-1, keepdim=True)) / torch.sqrt(m.var(-1, unbiased=False, keepdim=True) + 1e-5)
    signed = (y * x.conj() / m).real  # the signed new modulus along the old phase
    assert torch.allclose(signed, expected, atol=1e-4)
    assert torch.allclose((y * x.conj()).imag, torch.zeros_like(m), atol=1e-5)  # phase kept up to pi
    torch.manual_seed(0)
    model = PrismLM(10, 8, 2, norm="layer", filter_hidden=8, filter_freqs=4)
    model(torch.randint(10, (2, 6))).sum().backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())


def test_harmonic_conv_equals_direct_circular_convolution(device):
    B, L, d = 2, 7, 3
    x, h = rand_complex(B, L, d, seed=1, device=device), rand_complex(L, d, seed=2, device=device)
    k = torch.fft.ifft(h, dim=0)  # the kernel whose DFT is h
    direct = torch.zeros(B, L, d, dtype=torch.complex64, device=device)
    for n in range(L):
        for m in range(L):
            direct[:, n] += x[:, m] * k[(n - m) % L]
    assert torch.allclose(harmonic_conv(x, h), direct, atol=1e-5)


def test_harmonic_conv_is_shift_equivariant(device):
    x, h = rand_complex(1, 9, 4, seed=3, device=device), rand_complex(9, 4, seed=4, device=device)
    assert torch.allclose(harmonic_conv(torch.roll(x, 2, 1), h), torch.roll(harmonic_conv(x, h), 2, 1), atol=1e-5)


def test_static_rotation_is_unit_and_matches_formula():
    s = static_rotation(5, 4)
    assert torch.allclose(s.abs(), torch.ones(5, 4), atol=1e-6)
    assert torch.allclose(torch.angle(s[3, 1]), torch.tensor(3 * 10000 ** (-1 / 4)), atol=1e-6)


def test_shapes_and_dtypes_through_the_stack():
    cfg = get_config("smoke")
    models = build_models(cfg, 11)
    tokens = torch.randint(11, (3, cfg.seq_len))
    for m in models.values():
        out = m(tokens)
        assert out.shape == (3, cfg.seq_len, 11) and out.dtype == torch.float32
    z, e, states = models["prism_rms"].encoder(tokens, return_states=True)
    assert z.dtype == torch.complex64 and e.dtype == torch.float32 and z.shape == (3, cfg.seq_len, cfg.d_model)


def test_gradients_reach_every_parameter():
    torch.manual_seed(0)
    model = PrismHybridLM(12, 8, 2, 1, 2, 16, filter_hidden=8, filter_freqs=4)
    model(torch.randint(12, (2, 6))).sum().backward()
    missing = [n for n, p in model.named_parameters() if p.grad is None or not torch.isfinite(p.grad).all()]
    assert not missing


def test_phase_noise_keeps_modulus_and_changes_phase():
    z = rand_complex(2, 5, 6)
    y = intervene_complex(z, Intervention("phase_noise", 1.0))
    assert torch.allclose(y.abs(), z.abs(), atol=1e-5)
    assert (torch.angle(y / z).abs() > 1e-3).float().mean() > 0.9
    assert torch.equal(intervene_complex(z, Intervention("phase_noise", 0.0)), z)


def test_magnitude_interventions_keep_phase():
    z = rand_complex(2, 5, 6)
    flat = intervene_complex(z, Intervention("flatten"))
    assert torch.allclose(torch.angle(flat), torch.angle(z), atol=1e-5)
    mod = flat.abs()
    assert torch.allclose(mod, mod[..., :1].expand_as(mod), atol=1e-5)  # one modulus per token
    assert torch.allclose((mod ** 2).mean(-1), (z.abs() ** 2).mean(-1), atol=1e-4)  # token energy kept
    att = intervene_complex(z, Intervention("attenuate", 0.1))
    assert torch.allclose(att, 0.1 * z)


def test_real_controls_change_only_their_part():
    h = torch.randn(2, 5, 6)
    flip = intervene_real(h, Intervention("phase_noise", 1.0))
    assert torch.allclose(flip.abs(), h.abs()) and (flip != h).any()
    flat = intervene_real(h, Intervention("flatten"))
    assert torch.equal(torch.sign(flat), torch.sign(h))
    assert torch.allclose((flat ** 2).mean(-1), (h ** 2).mean(-1), atol=1e-5)


def test_intervention_targets_only_its_site():
    torch.manual_seed(0)
    model = PrismLM(10, 8, 2, norm="rms", filter_hidden=8, filter_freqs=4)
    tokens = torch.randint(10, (2, 6))
    _, _, clean = model.encoder(tokens, return_states=True)
    _, _, hit = model.encoder(tokens, Intervention("phase_noise", 1.0, (2,)), return_states=True)
    assert torch.equal(clean[0], hit[0]) and torch.equal(clean[1], hit[1])
    assert not torch.allclose(clean[2], hit[2])


def test_unit_mode_is_blind_to_flattening_and_attenuation_at_input():
    torch.manual_seed(0)
    model = PrismLM(10, 8, 2, norm="unit", filter_hidden=8, filter_freqs=4).eval()
    tokens = torch.randint(10, (2, 6))
    assert torch.allclose(model(tokens, Intervention("flatten")), model(tokens), atol=1e-4)


def test_matched_parameters():
    cfg = get_config("smoke")
    models = build_models(cfg, 20)
    h, t = count_params(models["hybrid"]), count_params(models["transformer"])
    assert abs(h["non_embedding"] - t["non_embedding"]) / h["non_embedding"] < 0.02
    assert h["embedding"] == t["embedding"] == 20 * cfg.d_model


def test_rotary_scores_depend_only_on_relative_position(device):
    from icml26.prism.models import rotary
    g = torch.Generator().manual_seed(3)
    q, k = torch.randn(1, 1, 12, 8, generator=g).to(device), torch.randn(1, 1, 12, 8, generator=g).to(device)
    qq, kk = q[..., :1, :].expand_as(q), k[..., :1, :].expand_as(k)  # the same vector at every position
    s = rotary(qq) @ rotary(kk).transpose(-1, -2)  # (1, 1, L, L)
    for shift in range(1, 4):  # score(p, r) == score(p + shift, r + shift)
        assert torch.allclose(s[..., :-shift, :-shift], s[..., shift:, shift:], atol=1e-5)
    assert not torch.allclose(s[..., 0, 1], s[..., 0, 2])  # but it does depend on p - r
    assert torch.allclose(rotary(q).norm(dim=-1), q.norm(dim=-1), atol=1e-5)  # a rotation: norms kept
    assert torch.allclose(rotary(q)[..., 0, :], q[..., 0, :])  # position 0 is not rotated


def test_rotary_layer_shapes_order_and_bad_head_size():
    from icml26.prism.models import RotaryEncoderLayer
    torch.manual_seed(0)
    layer = RotaryEncoderLayer(16, 2, 32).eval()
    x = torch.randn(2, 6, 16)
    y = layer(x)
    assert y.shape == x.shape
    assert not torch.allclose(layer(x.flip(1)).flip(1), y, atol=1e-4)  # RoPE makes order matter
    with pytest.raises(ValueError, match="even size"):
        RotaryEncoderLayer(12, 4, 16)  # head size 3


def test_project_unit():
    z = rand_complex(3, 4, 5)
    assert torch.allclose(project_unit(z).abs(), torch.ones(3, 4, 5), atol=1e-6)


def test_task_and_masking():
    task = make_task(n_topics=3, n_ambiguous=5, n_private=2, seq_len=8, n_train=64, n_test=16, seed=1)
    assert task.vocab_size == 1 + 5 + 6 and int(task.train.max()) < task.vocab_size and int(task.train.min()) >= 1
    assert torch.allclose(task.transitions.sum(-1), torch.ones(3, 5))
    again = make_task(n_topics=3, n_ambiguous=5, n_private=2, seq_len=8, n_train=64, n_test=16, seed=1)
    assert torch.equal(task.train, again.train)
    inp, m = mask_tokens(task.train, 0.5, torch.Generator().manual_seed(0))
    assert bool((inp[m] == 0).all()) and torch.equal(inp[~m], task.train[~m])


def test_cosine_schedule():
    assert ex.cosine_lr(0, 100, 0.1) == pytest.approx(0.1)
    assert ex.cosine_lr(10, 100, 0.1) == pytest.approx(1.0)
    assert ex.cosine_lr(100, 100, 0.1) == pytest.approx(0.0, abs=1e-9)


def test_stopping_rule_is_a_plateau_of_validation_accuracy():
    assert not ex.plateaued([0.1, 0.2, 0.3], 2, 0.005)  # still rising
    assert ex.plateaued([0.1, 0.3, 0.3, 0.304], 2, 0.005)  # at most delta above the best earlier value
    assert not ex.plateaued([0.1, 0.3, 0.3, 0.306], 2, 0.005)
    assert not ex.plateaued([0.3, 0.3], 2, 0.0)  # too few evaluations to tell
    with pytest.raises(ValueError):
        ex.plateaued([0.1] * 5, 0, 0.0)


@pytest.fixture(scope="module")
def smoke():
    runs = []
    results = ex.run_experiment(get_config("smoke"), seed=0, device="cpu", runs=runs)
    return results, runs[0]


def test_smoke_run_end_to_end(smoke):
    results, run = smoke
    cfg = get_config("smoke")
    assert results["seeds"] == [0, 1, 2] and len(results["per_seed"]) == 3
    assert set(run.clean) == {"prism_unit", "prism_rms", "hybrid", "transformer"}
    assert all(math.isfinite(v) for l in run.losses.values() for v in l)
    assert all(1 <= s <= cfg.steps for s in run.steps.values())
    assert run.phase_curve["prism_rms"].shape == (len(cfg.sigmas),)
    figs = results["per_seed"][0]
    assert 0 <= figs["probe_hybrid"] <= 1 and 0 <= figs["probe_transformer"] <= 1
    acc = ex.explore_accuracy(run, sigma=0.5, scale=0.5, flatten=True, site=1)
    assert set(acc) == set(run.models) and all(0 <= v <= 1 for v in acc.values())
    assert "| model |" in ex.param_table(run)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from icml26.common.plotting import check_figure, use_book_style
    from icml26.prism import plots
    use_book_style()
    for fig in (plots.plot_interference(), plots.plot_transitions(run.task), plots.plot_training(run),
                plots.plot_interventions(run), plots.plot_seed_figures(results["per_seed"], 0.9),
                plots.plot_token_phases(run), plots.plot_explore(acc, run.chance, "t")):
        check_figure(fig)
        plt.close(fig)


def test_smoke_ledger_statuses_and_round_trip(smoke):
    import json

    from icml26.evidence import from_plain, to_plain
    from icml26.prism.claims import build_ledger

    results, _ = smoke
    ledger = build_ledger(results)
    # 20 steps: no PRISM-pure model learns the task above chance by the margin, so C1 fails its
    # competence check; the hybrid and the Transformer fail theirs too (C2, C3 INCONCLUSIVE)
    assert [ledger.entries[c].status for c in ("C1", "C2", "C3")] == ["INCONCLUSIVE"] * 3
    assert "rule 2" in ledger.entries["C2"].reason
    assert ledger.entries["C3"].fragile  # rule 7: C3's ceiling rule came after a first run
    assert ledger.verdict() == "INCONCLUSIVE"
    plain = from_plain(json.loads(json.dumps(to_plain(results))))
    assert build_ledger(plain).record() == ledger.record()


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="n_seeds must be at least 3"):
        get_config("smoke", n_seeds=2)
    with pytest.raises(ValueError, match="plateau_patience"):
        get_config("smoke", plateau_patience=0)
    with pytest.raises(ValueError, match="plateau_delta"):
        get_config("smoke", plateau_delta=-0.1)
    with pytest.raises(ValueError, match="lr"):
        get_config("smoke", lr=0.0)
    with pytest.raises(ValueError, match="divisible"):
        get_config("smoke", d_model=15)
    with pytest.raises(ValueError, match="max_len"):
        get_config("smoke", seq_len=600)
    with pytest.raises(ValueError, match="filter_kind"):
        get_config("smoke", filter_kind="wavelet")
    with pytest.raises(ValueError, match="unknown intervention"):
        Intervention("erase")
    with pytest.raises(ValueError, match="sigma"):
        Intervention("phase_noise", 2.0)
    with pytest.raises(ValueError, match="norm mode"):
        GatedHarmonicConv(8, norm="batch")
    with pytest.raises(TypeError, match="complex"):
        GatedHarmonicConv(8)(torch.randn(1, 4, 8))
    with pytest.raises(ValueError, match="shape"):
        GatedHarmonicConv(8)(rand_complex(1, 4, 7))
    model = PrismLM(10, 8, 1, filter_hidden=8, filter_freqs=4)
    with pytest.raises(ValueError, match="token ids"):
        model(torch.full((1, 4), 12))
    with pytest.raises(ValueError, match="batch, length"):
        model(torch.zeros(4, dtype=torch.long))
    with pytest.raises(ValueError, match="lower baseline_depth"):
        matched_ffn_dim(1000, 10, 32, 4)
    with pytest.raises(TypeError):
        intervene_complex(torch.randn(1, 2, 3), Intervention("flatten"))
    from icml26.prism.layers import ExplicitFilter
    with pytest.raises(ValueError, match="max_len"):
        ExplicitFilter(4, 8)(16)


def test_bayes_posterior_matches_brute_force_enumeration():
    """The forward-backward oracle equals the posterior obtained by summing the generative
    process over every topic and hidden state path (tiny task, all paths enumerated)."""
    import itertools

    from icml26.prism.data import bayes_posterior
    K, A, P, p, L = 2, 3, 2, 0.3, 4
    g = torch.Generator().manual_seed(0)
    T = torch.rand(K, A, A, generator=g, dtype=torch.float64) + 0.05
    T = T / T.sum(-1, keepdim=True)
    tokens = torch.tensor([[2, 1 + A + 1, 3, 1], [1 + A + P, 2, 2, 1 + A + P + 1]])  # private of topic 0 / topic 1
    mask = torch.tensor([[False, False, True, False], [False, True, False, True]])
    V = 1 + A + K * P
    brute = torch.zeros(2, L, V, dtype=torch.float64)
    for n in range(2):
        for k in range(K):
            for path in itertools.product(range(A), repeat=L):
                w = 1.0 / K * float(T[k].mean(0)[path[0]])  # uniform start, one transition
                for t in range(1, L):
                    w *= float(T[k, path[t - 1], path[t]])
                emit = []  # per position: distribution over the emitted token
                for t in range(L):
                    e = torch.zeros(V, dtype=torch.float64)
                    e[1 + path[t]] = 1 - p
                    e[1 + A + k * P: 1 + A + (k + 1) * P] = p / P
                    emit.append(e)
                obs = 1.0
                for t in range(L):
                    if not mask[n, t]:
                        obs *= float(emit[t][tokens[n, t]])
                for t in range(L):
                    brute[n, t] += w * obs * emit[t]
    brute = brute / brute.sum(-1, keepdim=True)
    post = bayes_posterior(tokens, mask, T.float(), P, p)
    assert torch.allclose(post[mask], brute[mask], atol=1e-5)
    assert torch.allclose(post.sum(-1), torch.ones(2, L, dtype=torch.float64), atol=1e-9)


def test_bayes_accuracy_bounds_the_models():
    task = make_task(n_topics=3, n_ambiguous=5, n_private=2, seq_len=12, n_train=256, n_test=256, seed=2)
    assert task.chance <= task.bayes_accuracy() <= 1.0
    with pytest.raises(ValueError, match="shape"):
        from icml26.prism.data import bayes_posterior
        bayes_posterior(task.test, task.test_mask[:, :3], task.transitions, 2, 0.1)


def test_bayes_accuracy_is_chunk_invariant():
    """The Bayes ceiling is the same whether the posterior runs over all test sequences at once
    or in chunks (the full preset chunks it to bound memory)."""
    from icml26.prism.data import bayes_posterior, make_task
    task = make_task(n_train=16, n_test=37, seq_len=12, seed=0)
    post = bayes_posterior(task.test, task.test_mask, task.transitions, task.n_private, task.p_private)
    whole = float((post.argmax(-1)[task.test_mask] == task.test[task.test_mask]).double().mean())
    assert task.bayes_accuracy(chunk=512) == whole
    assert abs(task.bayes_accuracy(chunk=5) - whole) < 1e-12
