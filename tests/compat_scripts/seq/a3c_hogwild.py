"""A3C-style Hogwild: two worker processes update one shared actor-critic (and a shared Adam state)."""
import os

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical


class Corridor:
    """Walk left/right on 0..6 from 3; +1 at 6, -1 at 0, 20 steps at most."""

    def reset(self):
        self.pos, self.t = 3, 0
        return torch.eye(7)[self.pos]

    def step(self, action):
        self.pos += 1 if action == 1 else -1
        self.t += 1
        done = self.pos in (0, 6) or self.t >= 20
        return torch.eye(7)[self.pos], (1.0 if self.pos == 6 else -1.0 if self.pos == 0 else -0.01), done


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(7, 32)
        self.pi = nn.Linear(32, 2)
        self.v = nn.Linear(32, 1)

    def forward(self, x):
        h = torch.tanh(self.body(x))
        return self.pi(h), self.v(h)


class SharedAdam(torch.optim.Adam):
    """Adam whose state lives in shared memory, created eagerly so workers share it."""

    def __init__(self, params, lr=1e-2):
        super().__init__(params, lr=lr)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = torch.zeros(())
                state["exp_avg"] = torch.zeros_like(p.data).share_memory_()
                state["exp_avg_sq"] = torch.zeros_like(p.data).share_memory_()
                state["step"].share_memory_()


def worker(rank, shared_model, optimizer, counter, lock, episodes):
    torch.manual_seed(100 + rank)
    env, local = Corridor(), ActorCritic()
    for _ in range(episodes):
        local.load_state_dict(shared_model.state_dict())
        obs, done, log_probs, values, rewards, entropies = env.reset(), False, [], [], [], []
        while not done:
            logits, value = local(obs)
            dist = Categorical(logits=logits)
            action = dist.sample()
            log_probs.append(dist.log_prob(action))
            entropies.append(dist.entropy())
            values.append(value.squeeze())
            obs, reward, done = env.step(action.item())
            rewards.append(reward)
        R, returns = 0.0, []
        for r in reversed(rewards):
            R = r + 0.99 * R
            returns.insert(0, R)
        returns, values = torch.tensor(returns), torch.stack(values)
        advantage = returns - values
        loss = (-(torch.stack(log_probs) * advantage.detach()).sum() + 0.5 * advantage.pow(2).sum()
                - 0.01 * torch.stack(entropies).sum())
        optimizer.zero_grad()
        local.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(local.parameters(), 5.0)
        for lp, sp in zip(local.parameters(), shared_model.parameters()):
            sp._grad = lp.grad  # hand the local gradients to the shared parameters
        optimizer.step()
        with lock:
            counter.value += 1


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch.manual_seed(0)
    model = ActorCritic()
    model.share_memory()
    optimizer = SharedAdam(model.parameters(), lr=1e-2)
    before = F.softmax(model(torch.eye(7)[3])[0], -1)[1].item()
    counter, lock = mp.Value("i", 0), mp.Lock()
    procs = [mp.Process(target=worker, args=(rank, model, optimizer, counter, lock, 60)) for rank in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    with torch.no_grad():
        after = F.softmax(model(torch.eye(7)[3])[0], -1)[1].item()
    steps = optimizer.state[next(model.parameters())]["step"].item()
    print(f"episodes {counter.value} shared adam steps {steps:.0f} p(right) {before:.2f} -> {after:.2f}")
    # Hogwild: the workers bump the shared step counter without a lock, so an increment can be
    # lost when both update at once (113 of 120 once on a busy machine); more than one worker's
    # 60 shows that the optimizer state is shared.
    ok = (all(p.exitcode == 0 for p in procs) and counter.value == 120 and 60 < steps <= 120
          and model.body.weight.is_shared() and after > 0.8)
    print("RESULT", "ok" if ok else "bad", f"{after:.2f}")
