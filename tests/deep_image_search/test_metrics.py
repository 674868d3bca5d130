import numpy as np
import pandas as pd
import pytest
import torch

from icml26.deep_image_search import album as A
from icml26.deep_image_search import experiment as X
from icml26.deep_image_search import get_config
from icml26.deep_image_search.retriever import info_nce, tokenize


def test_em_f1_recall_hand_computed():
    assert X.exact_match([3, 1, 1], {1, 3}) == 1.0 and X.exact_match([1], {1, 3}) == 0.0
    assert X.f1_score([1, 2], {1, 3}) == pytest.approx(0.5)
    assert X.f1_score([], {1}) == 0.0 and X.f1_score([], set()) == 1.0
    assert X.recall_at_k([5, 1, 9, 3], {1, 3}, k=3) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        X.recall_at_k([1], set(), k=3)


def test_info_nce_identity_and_positives(device):
    e = torch.eye(4, device=device)
    low = info_nce(e, e, 0.05)
    assert low < info_nce(e, e.roll(1, 0), 0.05)
    # a caption shared by two images: marking both as positives lowers the loss
    img = torch.nn.functional.normalize(torch.tensor([[1.0, 0.1], [1.0, -0.1]], device=device), dim=1)
    txt = torch.nn.functional.normalize(torch.tensor([[1.0, 0.0], [1.0, 0.0]], device=device), dim=1)
    pos = torch.ones(2, 2, dtype=torch.bool, device=device)
    assert info_nce(img, txt, 0.1, pos) < info_nce(img, txt, 0.1)
    with pytest.raises(ValueError):
        info_nce(e, e[:3], 0.1)
    with pytest.raises(ValueError):
        info_nce(e, e, 0.1, torch.zeros(4, 4, dtype=torch.bool, device=device))


def test_tokenize_and_render_checks():
    ids, offsets = tokenize(["the red 7 near a yellow triangle", "nothing known"])
    assert offsets.tolist() == [0, 4] and len(ids) == 4
    with pytest.raises(TypeError):
        tokenize("red 7")
    rng = np.random.default_rng(0)
    x = A.render_photos(np.array([0, 39]), np.array([0, 5]), np.array([0, 12]), rng)
    assert x.shape == (2, 3, 32, 32) and 0 <= float(x.min()) and float(x.max()) <= 1
    with pytest.raises(ValueError):
        A.render_photos(np.array([40]), np.array([0]), np.array([0]), rng)
    with pytest.raises(ValueError):
        A.render_photos(np.array([1, 2]), np.array([0]), np.array([0]), rng)


def test_queries_respect_constraints():
    cfg = get_config("smoke")
    albums, queries = A.make_benchmark(cfg, 0)
    assert queries and {q.kind for q in queries} == {A.INTRA, A.INTER}
    for q in queries:
        a = albums[q.user]
        g = np.array(sorted(q.targets))
        assert 2 <= len(g) <= 6 and (a.subject[g] == q.subject).all()
        clue_event = np.unique(a.event[a.marker == q.marker])
        assert len(clue_event) == 1  # the marker belongs to one event
        if q.kind == A.INTRA:
            assert (a.event[g] == clue_event[0]).all()
        else:
            assert (a.event[g] != clue_event[0]).all()
            assert (a.event_place[a.event[g]] == a.event_place[clue_event[0]]).all()
