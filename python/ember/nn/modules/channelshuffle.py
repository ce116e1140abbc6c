"""ChannelShuffle, AlphaDropout and FeatureAlphaDropout."""
from ember.nn import functional as F
from ember.nn.modules.dropout import _DropoutBase
from ember.nn.modules.module import Module


class ChannelShuffle(Module):
    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"


class AlphaDropout(_DropoutBase):
    """Dropout that keeps SELU activations' mean and variance (active in training mode only)."""

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training, self.inplace)


class FeatureAlphaDropout(AlphaDropout):
    """AlphaDropout of whole channels (dimension 1)."""

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training, self.inplace)
