"""The layer classes of ember.nn."""
from ember.nn.modules.module import Module  # noqa: F401
from ember.nn.modules.container import (ModuleDict, ModuleList, ParameterDict, ParameterList,  # noqa: F401
                                        Sequential)
from ember.nn.modules.linear import Bilinear, Identity, Linear  # noqa: F401
from ember.nn.modules.flatten import Flatten, Unflatten  # noqa: F401
from ember.nn.modules.conv import Conv1d, Conv2d, ConvTranspose2d  # noqa: F401
from ember.nn.modules.pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d  # noqa: F401
from ember.nn.modules.normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm, RMSNorm  # noqa: F401
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
