"""REINFORCE with a baseline on a hand-written corridor, then a VAE and a small normalizing flow."""
import math
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import (AffineTransform, Categorical, Independent, Normal, SigmoidTransform,
                                 TransformedDistribution, Uniform, kl_divergence)

torch.manual_seed(0)
random.seed(0)


class Corridor:
    """Walk left/right on 0..6 from 3; +1 at 6, -1 at 0, small step cost, 20 steps at most."""

    def reset(self):
        self.pos, self.t = 3, 0
        return self.obs()

    def obs(self):
        return torch.eye(7)[self.pos]

    def step(self, action):
        self.pos += 1 if action == 1 else -1
        self.t += 1
        done = self.pos in (0, 6) or self.t >= 20
        reward = 1.0 if self.pos == 6 else (-1.0 if self.pos == 0 else -0.01)
        return self.obs(), reward, done


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(7, 32), nn.Tanh())
        self.pi = nn.Linear(32, 2)
        self.v = nn.Linear(32, 1)

    def forward(self, x):
        h = self.body(x)
        return Categorical(logits=self.pi(h)), self.v(h).squeeze(-1)


env, ac = Corridor(), ActorCritic()
opt = torch.optim.Adam(ac.parameters(), lr=1e-2)
gamma, episode_returns = 0.99, []
for episode in range(60):
    obs, done = env.reset(), False
    log_probs, values, rewards, entropies = [], [], [], []
    while not done:
        dist, value = ac(obs)
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        entropies.append(dist.entropy())
        values.append(value)
        obs, reward, done = env.step(action.item())
        rewards.append(reward)
    returns, g = [], 0.0
    for r in reversed(rewards):
        g = r + gamma * g
        returns.insert(0, g)
    returns = torch.tensor(returns)
    values = torch.stack(values)
    advantages = returns - values.detach()
    if len(advantages) > 1:
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    loss = (-(torch.stack(log_probs) * advantages).sum() + F.smooth_l1_loss(values, returns)
            - 0.01 * torch.stack(entropies).sum())
    opt.zero_grad()
    loss.backward()
    opt.step()
    episode_returns.append(sum(rewards))
with torch.no_grad():
    p_right = ac(torch.eye(7)[3])[0].probs[1].item()
print(f"return {sum(episode_returns[:10]) / 10:.2f} -> {sum(episode_returns[-10:]) / 10:.2f} p(right) {p_right:.2f}")


class VAE(nn.Module):
    def __init__(self, x_dim=8, z_dim=2):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(x_dim, 32), nn.ReLU(), nn.Linear(32, 2 * z_dim))
        self.dec = nn.Sequential(nn.Linear(z_dim, 32), nn.ReLU(), nn.Linear(32, x_dim))
        self.z_dim = z_dim

    def forward(self, x):
        mu, log_std = self.enc(x).chunk(2, dim=-1)
        q = Independent(Normal(mu, log_std.exp()), 1)
        prior = Independent(Normal(torch.zeros_like(mu), torch.ones_like(mu)), 1)
        z = q.rsample()
        recon = Independent(Normal(self.dec(z), 0.1), 1).log_prob(x)
        return -(recon - kl_divergence(q, prior)).mean()


basis = torch.randn(2, 8)
x_train = torch.randn(256, 2) @ basis + 0.05 * torch.randn(256, 8)
vae = VAE()
opt = torch.optim.Adam(vae.parameters(), lr=1e-2)
vae_losses = []
for step in range(150):
    loss = vae(x_train[torch.randint(0, 256, (64,))])
    opt.zero_grad()
    loss.backward()
    opt.step()
    vae_losses.append(loss.item())
print(f"vae -elbo {sum(vae_losses[:5]) / 5:.1f} -> {sum(vae_losses[-5:]) / 5:.1f}")

# A flow: Normal base pushed through a learnable affine map, then a sigmoid onto (0, 1);
# fit to Beta-like data by maximum likelihood.
loc, log_scale = torch.zeros(1, requires_grad=True), torch.zeros(1, requires_grad=True)
target = torch.sigmoid(0.5 * torch.randn(512) + 1.0)
flow_opt = torch.optim.Adam([loc, log_scale], lr=5e-2)
for step in range(150):
    flow = TransformedDistribution(Normal(torch.zeros(1), torch.ones(1)),
                                   [AffineTransform(loc, log_scale.exp()), SigmoidTransform()])
    nll = -flow.log_prob(target.unsqueeze(-1)).mean()
    flow_opt.zero_grad()
    nll.backward()
    flow_opt.step()
samples = flow.sample((1000,))
logistic = TransformedDistribution(Uniform(torch.zeros(1), torch.ones(1)),
                                   [SigmoidTransform().inv, AffineTransform(0.0, 1.0)])
lp = logistic.log_prob(torch.tensor([[0.3]])).item()
exact = -0.3 - 2 * math.log1p(math.exp(-0.3))
print(f"flow loc {loc.item():.3f} scale {log_scale.exp().item():.3f} nll {nll.item():.3f} logistic {lp:.4f}")
ok = (sum(episode_returns[-10:]) > sum(episode_returns[:10]) and p_right > 0.6
      and sum(vae_losses[-5:]) < sum(vae_losses[:5]) and abs(loc.item() - 1.0) < 0.15
      and abs(log_scale.exp().item() - 0.5) < 0.1 and samples.shape == (1000, 1)
      and bool(((samples > 0) & (samples < 1)).all()) and abs(lp - exact) < 1e-4)
print("RESULT", "ok" if ok else "bad", f"{loc.item():.2f} {log_scale.exp().item():.2f}")
