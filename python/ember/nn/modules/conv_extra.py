"""ConvTranspose1d over F.conv_transpose1d; Conv3d and ConvTranspose3d over F.conv3d / F.conv_transpose3d."""
from ember.nn import functional as F
from ember.nn.modules.conv import ConvTranspose2d, _ConvNd


class ConvTranspose1d(ConvTranspose2d):
    _n = 1

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                  self.groups, self.dilation)


class Conv3d(_ConvNd):
    _n = 3

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device=device, dtype=dtype)

    def forward(self, input):
        input, padding = self._padded(input)
        return F.conv3d(input, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class ConvTranspose3d(ConvTranspose2d):
    _n = 3

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                  self.groups, self.dilation)
