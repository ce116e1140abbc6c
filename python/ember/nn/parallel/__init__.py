"""ember.nn.parallel: DistributedDataParallel."""
