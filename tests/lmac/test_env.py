import pytest
import torch

from icml26.lmac.env import OverseerEnv, observation_names, observed_by, state_names



def make(n_envs=2, device="cpu"):
    return OverseerEnv(n_envs, grid=5, n_strikers=3, n_distract=2, horizon=4, device=device, seed=0)


def test_hand_computed_moves_walls_and_reward(device):
    env = make(2, device)
    pos = torch.tensor([[[2, 2], [0, 0], [4, 4], [3, 1]],
                        [[0, 0], [1, 1], [1, 2], [2, 1]]], device=device)
    target = torch.tensor([[3, 1], [1, 1]], device=device)
    env.set_positions(pos, target)
    # env 0: striker1 "left" at x=0 (wall, stays), striker2 "up" at y=4 (wall), striker3 stays on target
    # env 1: striker1 stays on target, striker2 "down" (1,2)->(1,1), striker3 "left" (2,1)->(1,1): success
    reward, done, success = env.step(torch.tensor([[3, 1, 0], [0, 2, 3]], device=device))
    assert env.pos[0].tolist() == [[2, 2], [0, 0], [4, 4], [3, 1]]
    assert env.pos[1].tolist() == [[0, 0], [1, 1], [1, 1], [1, 1]]
    assert reward.tolist() == [0.0, 1.0] and success.tolist() == [False, True] and done.tolist() == [False, True]
    # a finished episode is frozen: no movement, no second reward
    reward, done, success = env.step(torch.tensor([[4, 4, 4], [4, 4, 4]], device=device))
    assert env.pos[1].tolist() == [[0, 0], [1, 1], [1, 1], [1, 1]]
    assert env.pos[0, 1:].tolist() == [[1, 0], [4, 4], [4, 1]]
    assert reward.tolist() == [0.0, 0.0] and success.tolist() == [False, False]
    env.step(torch.zeros(2, 3, dtype=torch.long, device=device))
    _, done, _ = env.step(torch.zeros(2, 3, dtype=torch.long, device=device))
    assert done.all()  # horizon 4 reached


def test_observations_state_and_potential():
    env = make(1)
    env.set_positions(torch.tensor([[[4, 0], [0, 4], [2, 2], [4, 4]]]), torch.tensor([[1, 3]]))
    obs = env.observations()
    assert [o.shape[1] for o in obs] == [len(observation_names(a, 2)) for a in range(4)] == [10, 8, 8, 8]
    # overseer: self (1, 0), walls up/down/left/right = (0, 1, 0, 1), target (0.25, 0.75)
    assert obs[0][0, :8].tolist() == [1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.25, 0.75]
    assert obs[1][0, :6].tolist() == [0.0, 1.0, 1.0, 0.0, 1.0, 0.0]
    assert obs[2][0, 2:6].tolist() == [0.0, 0.0, 0.0, 0.0]
    assert "target_x" not in observation_names(1, 2)
    assert env.state()[0].tolist() == [1.0, 0.0, 0.0, 1.0, 0.5, 0.5, 1.0, 1.0, 0.25, 0.75]
    assert len(state_names(3)) == env.state_dim == 10
    # distances 2, 2, 4 -> mean 8/3, normalised by 2 * 4
    assert env.potential().item() == pytest.approx(-(8 / 3) / 8)
    assert observed_by(3, 2)["target_x"] == [(0, 6)] and observed_by(3, 2)["striker2_y"] == [(2, 1)]


def test_bad_inputs_rejected():
    env = make(2)
    with pytest.raises(ValueError, match="actions must have shape"):
        env.step(torch.zeros(2, 2, dtype=torch.long))
    with pytest.raises(ValueError, match="integers"):
        env.step(torch.full((2, 3), 7))
    with pytest.raises(ValueError, match="on the grid"):
        env.set_positions(torch.full((2, 4, 2), 5), torch.zeros(2, 2, dtype=torch.long))
    with pytest.raises(ValueError):
        OverseerEnv(0)
