"""Dropout."""
from ember.nn import functional as F
from ember.nn.modules.module import Module


class _DropoutBase(Module):
    """The probability and in-place flag every dropout module takes."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutBase):
    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)


class _DropoutNd(Dropout):
    """Zeroes whole channels: dimension 1 of batched input, 0 of unbatched."""


class Dropout1d(_DropoutNd):
    def forward(self, input):
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    def forward(self, input):
        return F.dropout3d(input, self.p, self.training, self.inplace)
