"""The float32 matmul precision switches: ember.set_float32_matmul_precision /
get_float32_matmul_precision and ember.backends.cuda.matmul.allow_tf32, two
views of one C++ setting (as in PyTorch). Runs on every machine: the setting
lives in the core, only its effect (TF32 in cuBLAS) needs a GPU."""
import pytest

import ember


@pytest.fixture(autouse=True)
def restore_precision():
    before = ember.get_float32_matmul_precision()
    yield
    ember.set_float32_matmul_precision(before)


def test_defaults_are_pytorchs():
    ember.set_float32_matmul_precision("highest")
    assert ember.get_float32_matmul_precision() == "highest"
    assert ember.backends.cuda.matmul.allow_tf32 is False


@pytest.mark.parametrize("precision", ["highest", "high", "medium"])
def test_set_get_round_trip(precision):
    ember.set_float32_matmul_precision(precision)
    assert ember.get_float32_matmul_precision() == precision
    assert ember.backends.cuda.matmul.allow_tf32 is (precision != "highest")


def test_allow_tf32_sets_the_precision():
    ember.backends.cuda.matmul.allow_tf32 = True
    assert ember.get_float32_matmul_precision() == "high"
    assert ember.backends.cuda.matmul.allow_tf32 is True
    ember.backends.cuda.matmul.allow_tf32 = False
    assert ember.get_float32_matmul_precision() == "highest"
    assert ember.backends.cuda.matmul.allow_tf32 is False


def test_invalid_precision_is_refused_and_keeps_the_setting():
    ember.set_float32_matmul_precision("medium")
    with pytest.raises(RuntimeError, match="set_float32_matmul_precision: invalid precision 'low'"):
        ember.set_float32_matmul_precision("low")
    assert ember.get_float32_matmul_precision() == "medium"


def test_unknown_matmul_attribute_is_an_error():
    with pytest.raises(AttributeError, match="allow_tf33"):
        ember.backends.cuda.matmul.allow_tf33 = True


def test_cpu_products_ignore_the_setting():
    a = ember.randn(17, 33)
    b = ember.randn(33, 9)
    ember.set_float32_matmul_precision("highest")
    exact = (a @ b).numpy()
    ember.set_float32_matmul_precision("medium")
    assert ((a @ b).numpy() == exact).all()


def test_backends_modules_import_like_torchs():
    import ember.backends.cuda
    import ember.backends.cudnn

    assert isinstance(ember.backends.cuda.is_built(), bool)
    assert ember.backends.cuda.is_built() == (ember._C._build_info()["cuda"] == "ON")
    assert isinstance(ember.backends.cudnn.is_available(), bool)
    v = ember.backends.cudnn.version()
    assert v is None or (isinstance(v, int) and v >= 90000)
