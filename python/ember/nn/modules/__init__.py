"""The layer classes of ember.nn."""
from ember.nn.modules.module import Module  # noqa: F401
# ember.nn.modules.utils (torch.nn.modules.utils: consume_prefix_in_state_dict_if_present, _pair, ...) is not
# imported here: ember.nn takes this package's names with `import *`, and its `utils` is ember.nn.utils.
from ember.nn.modules.container import (ModuleDict, ModuleList, ParameterDict, ParameterList,  # noqa: F401
                                        Sequential)
from ember.nn.modules.linear import Bilinear, Identity, Linear  # noqa: F401
from ember.nn.modules.flatten import Flatten, Unflatten  # noqa: F401
from ember.nn.modules.conv import Conv1d, Conv2d, ConvTranspose2d  # noqa: F401
from ember.nn.modules.pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d  # noqa: F401
from ember.nn.modules.normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm, LayerNorm, RMSNorm  # noqa: F401
from ember.nn.modules.sync_batchnorm import SyncBatchNorm  # noqa: F401
from ember.nn.modules.dropout import Dropout, Dropout1d, Dropout2d, Dropout3d  # noqa: F401
from ember.nn.modules.sparse import Embedding  # noqa: F401
from ember.nn.modules.activation import (ELU, GELU, Hardswish, Hardtanh, LeakyReLU, LogSigmoid,  # noqa: F401
                                         LogSoftmax, Mish, PReLU, ReLU, ReLU6, Sigmoid, SiLU, Softmax, Softplus, Tanh)
from ember.nn.modules.attention import MultiheadAttention  # noqa: F401
from ember.nn.modules.loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, KLDivLoss, L1Loss,  # noqa: F401
                                   MSELoss, NLLLoss, SmoothL1Loss, HuberLoss)
from ember.nn.modules.rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase  # noqa: F401
from ember.nn.modules.transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,  # noqa: F401
                                          TransformerEncoder, TransformerEncoderLayer)
from ember.nn.modules.upsampling import (PixelShuffle, PixelUnshuffle, Upsample, UpsamplingBilinear2d,  # noqa: F401
                                         UpsamplingNearest2d)
from ember.nn.modules.distance import CosineSimilarity, PairwiseDistance  # noqa: F401
from ember.nn.modules.activation_extra import (CELU, GLU, SELU, Hardshrink, Hardsigmoid, RReLU,  # noqa: F401
                                               Softmax2d, Softmin, Softshrink, Softsign, Tanhshrink, Threshold)
from ember.nn.modules.channelshuffle import AlphaDropout, ChannelShuffle, FeatureAlphaDropout  # noqa: F401
from ember.nn.modules.loss_extra import (CTCLoss, CosineEmbeddingLoss, GaussianNLLLoss, HingeEmbeddingLoss,  # noqa: F401
                                         MarginRankingLoss, MultiLabelMarginLoss, MultiLabelSoftMarginLoss,
                                         MultiMarginLoss, PoissonNLLLoss, SoftMarginLoss, TripletMarginLoss,
                                         TripletMarginWithDistanceLoss)
from ember.nn.modules.padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d,  # noqa: F401
                                      ConstantPad2d, ConstantPad3d, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d,
                                      ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, ZeroPad1d, ZeroPad2d,
                                      ZeroPad3d)
from ember.nn.modules.pooling_extra import (AdaptiveAvgPool1d, AdaptiveMaxPool1d, AdaptiveMaxPool2d,  # noqa: F401
                                            AvgPool1d, MaxPool1d)
from ember.nn.modules.instancenorm import (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d,  # noqa: F401
                                             LocalResponseNorm)
from ember.nn.modules.fold import Fold, Unfold  # noqa: F401
from ember.nn.modules.embedding_bag import EmbeddingBag  # noqa: F401
from ember.nn.modules.conv_extra import Conv3d, ConvTranspose1d, ConvTranspose3d  # noqa: F401
from ember.nn.modules.pooling_lp import LPPool1d, LPPool2d, MaxUnpool1d, MaxUnpool2d  # noqa: F401
from ember.nn.modules.pooling3d import (AdaptiveAvgPool3d, AdaptiveMaxPool3d, AvgPool3d, LPPool3d,  # noqa: F401
                                        MaxPool3d, MaxUnpool3d)
from ember.nn.modules.lazy import (LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyConv1d,  # noqa: F401
                                  LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d,
                                  LazyConvTranspose3d, LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d,
                                  LazyLinear)
