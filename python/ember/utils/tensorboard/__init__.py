"""ember.utils.tensorboard: SummaryWriter, writing TensorBoard event files (scalars, histograms, images,
text) without tensorflow or the tensorboard package."""
from ember.utils.tensorboard.writer import SummaryWriter  # noqa: F401

__all__ = ["SummaryWriter"]
