"""ember.utils.data: datasets, samplers and DataLoader (as torch.utils.data)."""
