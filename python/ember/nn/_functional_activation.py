"""More torch.nn.functional activations, composed of ember ops (so they run on every device, with
autograd): glu, selu, celu, softmin, threshold, tanhshrink, softshrink, hardshrink, gumbel_softmax,
alpha_dropout, feature_alpha_dropout, rrelu. Re-exported by ember.nn.functional."""
import ember
from ember.nn._inplace import maybe_inplace

__all__ = ["glu", "selu", "selu_", "celu", "celu_", "softmin", "threshold", "threshold_", "tanhshrink",
           "softshrink", "hardshrink", "gumbel_softmax", "alpha_dropout", "feature_alpha_dropout", "rrelu", "rrelu_",
           "channel_shuffle"]

# SELU's constants (Klambauer et al., "Self-Normalizing Neural Networks").
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946




def glu(input, dim=-1):
    """a * sigmoid(b), where a and b are the two halves of input along dim."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    n = input.shape[dim]
    if n % 2 != 0:
        raise RuntimeError(f"glu: Halving dimension must be even, but dimension {dim} is size {n}")
    a, b = input.narrow(dim, 0, n // 2), input.narrow(dim, n // 2, n // 2)
    return a * ember.sigmoid(b)


def _elu_like(input, alpha, scale, input_scale):
    # expm1 of min(x, 0) keeps the unused branch finite for large x.
    negative = ember.expm1(ember.clamp(input, max=0.0) * input_scale) * alpha
    out = ember.where(input > 0, input, negative)
    return out * scale if scale != 1.0 else out


def selu(input, inplace=False):
    """scale * (x if x > 0 else alpha * (exp(x) - 1))."""
    return maybe_inplace(input, lambda x: _elu_like(x, _SELU_ALPHA, _SELU_SCALE, 1.0), inplace)


def selu_(input):
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):
    """x if x > 0 else alpha * (exp(x / alpha) - 1)."""
    if alpha == 0:
        raise RuntimeError("celu: ZeroDivisionError: alpha must not be 0")
    return maybe_inplace(input, lambda x: _elu_like(x, alpha, 1.0, 1.0 / alpha), inplace)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = 0 if input.dim() in (0, 1, 3) else 1
    return ember.softmax(-input, dim, dtype=dtype)


def threshold(input, threshold, value, inplace=False):
    """x where x > threshold, value elsewhere (NaN stays NaN)."""
    return maybe_inplace(input, lambda x: ember.where(x <= threshold, ember.full_like(x, value), x), inplace)


def threshold_(input, threshold, value):
    return globals()["threshold"](input, threshold, value, inplace=True)


def tanhshrink(input):
    return input - ember.tanh(input)


def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""
    if lambd < 0:
        raise RuntimeError(f"softshrink: lambda must be greater or equal to 0, but found to be {lambd}.")
    zero = ember.zeros_like(input)
    # NaN fails every comparison: it falls through to itself.
    inside = (input >= -lambd) & (input <= lambd)
    return ember.where(input > lambd, input - lambd, ember.where(input < -lambd, input + lambd,
                                                                 ember.where(inside, zero, input)))


def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, 0 elsewhere (NaN stays NaN)."""
    return ember.where((input >= -lambd) & (input <= lambd), ember.zeros_like(input), input)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + g) / tau) with g ~ Gumbel(0, 1); hard=True returns one-hot samples whose
    gradient is the soft sample's (straight-through)."""
    # -log(E), E ~ Exp(1), is a Gumbel(0, 1) sample.
    gumbels = -ember.empty_like(logits).exponential_().log()
    y_soft = ember.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = ember.zeros_like(logits).scatter(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout for SELU networks: dropped units take SELU's negative saturation value, then an affine map
    a * x + b keeps the mean and variance of a zero-mean, unit-variance input."""
    return _alpha_dropout(input, p, training, inplace, feature=False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout of whole channels (dimension 1 of [N, C, *] input)."""
    return _alpha_dropout(input, p, training, inplace, feature=True)


def _alpha_dropout(input, p, training, inplace, feature):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return maybe_inplace(input, lambda x: x * 0.0, inplace)
    saturation = _SELU_ALPHA * _SELU_SCALE  # -saturation is SELU's limit at -infinity
    if feature:
        if input.dim() < 2:
            raise RuntimeError(f"feature_alpha_dropout: Feature dropout requires at least 2 dimensions in the "
                               f"input, got {input.dim()}")
        noise_shape = list(input.shape[:2]) + [1] * (input.dim() - 2)
        keep = ember.empty(noise_shape, dtype=input.dtype, device=input.device).bernoulli_(1.0 - p)
    else:
        keep = ember.empty_like(input).bernoulli_(1.0 - p)
    a = 1.0 / ((saturation * saturation * p + 1.0) * (1.0 - p)) ** 0.5
    b = (keep - 1.0) * (saturation * a) + saturation * a * p
    return maybe_inplace(input, lambda x: x * (keep * a) + b, inplace)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Leaky ReLU whose negative slope is drawn from U(lower, upper) per element in training, and is
    (lower + upper) / 2 in evaluation."""
    if training:
        slope = ember.empty_like(input).uniform_(lower, upper)
    else:
        slope = (lower + upper) / 2
    return maybe_inplace(input, lambda x: ember.where(x > 0, x, x * slope), inplace)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


def channel_shuffle(input, groups):
    """[N, C, *] -> the channels regrouped: channel g * (C / groups) + i moves to i * groups + g."""
    if input.dim() < 3:
        raise RuntimeError(f"channel_shuffle: expected input with at least 3 dimensions, got {input.dim()}")
    if groups <= 0:
        raise RuntimeError(f"channel_shuffle: Number of groups to divide channels in must be positive. "
                           f"Value of groups:{groups}")
    c = input.shape[1]
    if c % groups != 0:
        raise RuntimeError(f"channel_shuffle: Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    n, rest = input.shape[0], tuple(input.shape[2:])
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)
