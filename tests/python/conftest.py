import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

if os.environ.get("EMBER_FAILURE_LOG"):
    pytest_plugins = ["failure_log"]

if os.environ.get("EMBER_TEST_DEVICE", "cpu") != "cpu":
    # The op tables compare float32 convolutions with numpy at full precision:
    # no TF32 in cuDNN (PyTorch's own suite turns it off too). Tests of the
    # flag set it themselves.
    import ember.backends.cudnn

    ember.backends.cudnn.allow_tf32 = False
