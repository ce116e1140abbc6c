"""ember.optim: optimizers and learning-rate schedulers (as torch.optim)."""
