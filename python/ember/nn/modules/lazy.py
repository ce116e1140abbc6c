"""Lazy modules (torch.nn.LazyLinear, LazyConv*, LazyConvTranspose*, LazyBatchNorm*, LazyInstanceNorm*, 1-D to 3-D):
the input size (in_features, in_channels, num_features) is read from the first
input. Until then the weights are UninitializedParameters; the first forward
materializes them, runs the usual initialization and turns the module into its
regular class (LazyLinear becomes Linear). Loading a state dict materializes
them too, with the checkpoint's shapes.

As torch documents: run a dry forward (or load a state dict) before creating
the optimizer, so that it sees the materialized parameters' shapes.
"""
import itertools

import ember
from ember.nn._uninitialized import UninitializedBuffer, UninitializedParameter, is_lazy
from ember.nn.modules.conv import Conv1d, Conv2d, ConvTranspose2d
from ember.nn.modules.conv_extra import Conv3d, ConvTranspose1d, ConvTranspose3d
from ember.nn.modules.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from ember.nn.modules.linear import Linear
from ember.nn.modules.normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]


class LazyModuleMixin:
    """Materializes a module's uninitialized parameters from its first input (initialize_parameters),
    then makes the module an instance of cls_to_become."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def has_uninitialized_params(self):
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(), self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    def _infer_parameters(self, module, args, kwargs):
        self.initialize_parameters(*args, **kwargs)
        if self.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        self._initialize_hook.remove()
        del self._initialize_hook
        if self.cls_to_become is not None:
            self.__class__ = self.cls_to_become

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # Uninitialized tensors are saved as themselves (as torch does): their detached form would
        # read as a real 0-element tensor.
        super()._save_to_state_dict(destination, prefix, keep_vars)
        for registry in (self._parameters, self._buffers):
            for name, t in registry.items():
                if is_lazy(t) and prefix + name in destination:
                    destination[prefix + name] = t

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        # An uninitialized tensor takes the checkpoint's shape before the usual copy; one the
        # checkpoint holds uninitialized too stays so, and is set aside while the rest loads.
        hidden = []
        for registry in (self._parameters, self._buffers):
            for name, t in list(registry.items()):
                incoming = state_dict.get(prefix + name)
                if not is_lazy(t) or not isinstance(incoming, ember.Tensor):
                    continue
                if is_lazy(incoming):
                    hidden.append((registry, name, t, list(registry)))
                    del registry[name]
                else:
                    t.materialize(incoming.shape)
        try:
            super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                          error_msgs)
        finally:
            for registry, name, t, order in reversed(hidden):
                registry[name] = t
                for key in order:  # the registry's original order
                    if key in registry:
                        registry.move_to_end(key)
                if prefix + name in unexpected_keys:
                    unexpected_keys.remove(prefix + name)

    def reset_parameters(self):
        # The regular class's initialization, once there is something to initialize.
        if not self.has_uninitialized_params() and self._input_size() != 0:
            super().reset_parameters()

    def _input_size(self):
        raise NotImplementedError


class LazyLinear(LazyModuleMixin, Linear):
    """Linear whose in_features is the last dimension of its first input."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False, device=device, dtype=dtype)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def _input_size(self):
        return self.in_features

    def initialize_parameters(self, input, *args, **kwargs):
        if not self.has_uninitialized_params():
            return
        with ember.no_grad():
            self.in_features = input.shape[-1]
            self.weight.materialize((self.out_features, self.in_features))
            if self.bias is not None:
                self.bias.materialize((self.out_features,))
            self.reset_parameters()


class _LazyConvMixin(LazyModuleMixin):
    """in_channels from dim 1 of a batched input (dim 0 unbatched)."""

    def _lazy_init(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def _input_size(self):
        return self.in_channels

    def _in_channels_of(self, input):
        spatial = len(self.kernel_size)
        if input.dim() not in (spatial + 1, spatial + 2):
            raise RuntimeError(f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input to "
                               f"{type(self).__name__}, but got input of size: {list(input.shape)}")
        return input.shape[1] if input.dim() == spatial + 2 else input.shape[0]

    def initialize_parameters(self, input, *args, **kwargs):
        if not self.has_uninitialized_params():
            return
        in_channels = self._in_channels_of(input)
        if in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        with ember.no_grad():
            self.in_channels = in_channels
            if self.transposed:
                shape = (in_channels, self.out_channels // self.groups, *self.kernel_size)
            else:
                shape = (self.out_channels, in_channels // self.groups, *self.kernel_size)
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


class LazyConv1d(_LazyConvMixin, Conv1d):
    cls_to_become = Conv1d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device=device,
                         dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConv2d(_LazyConvMixin, Conv2d):
    cls_to_become = Conv2d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device=device,
                         dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConvTranspose1d(_LazyConvMixin, ConvTranspose1d):
    cls_to_become = ConvTranspose1d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode,
                         device=device, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConvTranspose2d(_LazyConvMixin, ConvTranspose2d):
    cls_to_become = ConvTranspose2d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode,
                         device=device, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConv3d(_LazyConvMixin, Conv3d):
    cls_to_become = Conv3d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device=device,
                         dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConvTranspose3d(_LazyConvMixin, ConvTranspose3d):
    cls_to_become = ConvTranspose3d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode,
                         device=device, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class _LazyNormMixin(LazyModuleMixin):
    """num_features from the channel dimension of the first input."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        # Built without weights and statistics (they would be replaced at once), then given placeholders.
        super().__init__(0, eps, momentum, False, False, device=device, dtype=dtype)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = ember.tensor(0, dtype=ember.int64, device=device)

    def _input_size(self):
        return self.num_features

    def _channel_dim(self, input):
        return 1

    def initialize_parameters(self, input, *args, **kwargs):
        if self.num_features == 0:  # also without weights or statistics, so that repr and checks see it
            self.num_features = input.shape[self._channel_dim(input)]
        if not self.has_uninitialized_params():
            return
        with ember.no_grad():
            for name in ("weight", "bias", "running_mean", "running_var"):
                t = getattr(self, name)
                if t is not None and is_lazy(t):
                    t.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormMixin, BatchNorm1d):
    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormMixin, BatchNorm2d):
    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormMixin, BatchNorm3d):
    cls_to_become = BatchNorm3d


class _LazyInstanceNormMixin(_LazyNormMixin):
    # affine and track_running_stats default to True, as torch's lazy instance norms (unlike InstanceNorm*d).

    def _channel_dim(self, input):
        # An unbatched input (C, *spatial) has its channels first.
        return 0 if input.dim() == self._spatial + 1 else 1


class LazyInstanceNorm1d(_LazyInstanceNormMixin, InstanceNorm1d):
    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyInstanceNormMixin, InstanceNorm2d):
    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyInstanceNormMixin, InstanceNorm3d):
    cls_to_become = InstanceNorm3d
