"""ember.nn: modules, layers, losses, functional, init (as torch.nn)."""
