"""ember.nn.utils: gradient clipping, parameter/vector conversion, parametrizations, weight and spectral norm
(as torch.nn.utils)."""
from ember.nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_  # noqa: F401
from ember.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from ember.nn.utils import rnn  # noqa: F401
from ember.nn.utils import parametrize  # noqa: F401,E402
from ember.nn.utils import parametrizations  # noqa: F401,E402
from ember.nn.utils._weight_norm import remove_weight_norm, weight_norm  # noqa: F401,E402
from ember.nn.utils._spectral_norm import remove_spectral_norm, spectral_norm  # noqa: F401,E402
from ember.nn.utils.total_norm import clip_grad_norm, clip_grads_with_norm_, get_total_norm  # noqa: F401,E402
from ember.nn.utils import fusion  # noqa: F401,E402
from ember.nn.utils.fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval,  # noqa: F401,E402
                                   fuse_linear_bn_weights)
from ember.nn.utils.init import skip_init  # noqa: F401,E402
from ember.nn.utils import stateless  # noqa: F401,E402
from ember.nn.utils.memory_format import (convert_conv2d_weight_memory_format,  # noqa: F401,E402
                                          convert_conv3d_weight_memory_format)
from ember.nn.utils import prune  # noqa: F401,E402
