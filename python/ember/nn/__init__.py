"""ember.nn: modules, layers, losses, functional, init (as torch.nn)."""
from ember.nn.parameter import Buffer, Parameter  # noqa: F401
from ember.nn.parameter import UninitializedBuffer, UninitializedParameter  # noqa: F401
from ember.nn import functional, init  # noqa: F401
from ember.nn.modules import *  # noqa: F401,F403
from ember.nn.modules.module import Module  # noqa: F401
from ember.nn import utils  # noqa: F401
from ember.nn import parallel  # noqa: F401
from ember.nn.parallel import DataParallel  # noqa: F401,E402
from ember.nn import attention  # noqa: F401
