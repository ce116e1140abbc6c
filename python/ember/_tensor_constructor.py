"""ember.Tensor(...) as torch.Tensor(...): the legacy float32 constructor older scripts still call
(torch.Tensor(2, 3), torch.Tensor([1, 2]), torch.Tensor(n, nz, 1, 1).normal_(0, 1)). The C++ class has
no Python constructor, so __new__ builds the tensor with ember._legacy's rules (those of FloatTensor)."""
import ember
from ember import Tensor
from ember._legacy import _legacy_new


def _tensor_new(cls, *args, device=None):
    t = _legacy_new(ember.float32, device, args, "Tensor")
    if cls is not Tensor:  # a subclass without its own __new__ (its layout must match, as Parameter's)
        t.__class__ = cls
    return t


def _tensor_init(self, *args, **kwargs):
    pass  # everything happens in __new__


Tensor.__new__ = _tensor_new
Tensor.__init__ = _tensor_init
