"""ConvTranspose1d over F.conv_transpose1d."""
from ember.nn import functional as F
from ember.nn.modules.conv import ConvTranspose2d


class ConvTranspose1d(ConvTranspose2d):
    _n = 1

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                  self.groups, self.dilation)
