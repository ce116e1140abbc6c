"""Recurrent layers as torch.nn: RNN (tanh/relu), LSTM, GRU and their one-step cells.

Same constructor arguments, parameter names, shapes, init (U(-1/sqrt(hidden), 1/sqrt(hidden))) and
gate order as torch (LSTM i, f, g, o; GRU r, z, n with n = tanh(W_in x + b_in + r * (W_hn h + b_hn))),
so a torch state_dict loads and gives the same outputs. Written with ember ops, so they run on any
device with autograd: each layer/direction projects the whole input sequence with one matmul, then
loops over time in Python doing one small matmul per step. PackedSequence input runs as the
padded batch with a per-step mask (a finished sequence keeps its state) and comes back packed.
"""
import math
import warnings

import ember
from ember.nn import functional as F
from ember.nn import init
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter
from ember.nn.utils.rnn import PackedSequence, _pack_like, pad_packed_sequence

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# ---- one time step of each cell kind; `xp` is the input's projection W_ih x + b_ih -----------------

def _rnn_step(nonlinearity):
    act = ember.tanh if nonlinearity == "tanh" else ember.relu

    def step(xp, h, w_hh, b_hh, w_hr=None):  # w_hr: LSTM only, always None here
        return act(xp + _hidden_projection(h, w_hh, b_hh))
    return step


def _lstm_step(xp, state, w_hh, b_hh, w_hr=None):
    h, c = state
    i, f, g, o = (xp + _hidden_projection(h, w_hh, b_hh)).chunk(4, -1)
    c = ember.sigmoid(f) * c + ember.sigmoid(i) * ember.tanh(g)
    h = ember.sigmoid(o) * ember.tanh(c)
    if w_hr is not None:  # LSTM with projections: h = W_hr (o * tanh(c))
        h = ember.matmul(h, w_hr.t())
    return h, c


def _gru_step(xp, h, w_hh, b_hh, w_hr=None):  # w_hr: LSTM only, always None here
    x_r, x_z, x_n = xp.chunk(3, -1)
    h_r, h_z, h_n = _hidden_projection(h, w_hh, b_hh).chunk(3, -1)
    r = ember.sigmoid(x_r + h_r)
    z = ember.sigmoid(x_z + h_z)
    n = ember.tanh(x_n + r * h_n)
    return n + z * (h - n)  # = (1 - z) * n + z * h


def _hidden_projection(h, w_hh, b_hh):
    if b_hh is not None and h.dim() == 2:
        return ember.addmm(b_hh, h, w_hh.t())
    out = ember.matmul(h, w_hh.t())
    return out if b_hh is None else out + b_hh


# ---- the multi-layer modules --------------------------------------------------------------------

class RNNBase(Module):
    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if not isinstance(dropout, (int, float)) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if not isinstance(hidden_size, int) or isinstance(hidden_size, bool):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        factory = dict(device=device, dtype=dtype)
        # Registration order is torch's _flat_weights_names: per layer, per direction.
        self._flat_weights_names = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_in = input_size if layer == 0 else real_hidden * num_directions
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = [("weight_ih", (gate_size, layer_in)), ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for name, shape in shapes:
                    setattr(self, name + suffix, Parameter(ember.empty(*shape, **factory)))
                    self._flat_weights_names.append(name + suffix)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def flatten_parameters(self):
        """A no-op: ember keeps no fused (cuDNN) weight buffer to compact."""

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        per = len(self._flat_weights_names) // (self.num_layers * (2 if self.bidirectional else 1))
        flat = self._flat_weights
        return [flat[i:i + per] for i in range(0, len(flat), per)]

    def _layer_weights(self, layer, direction):
        suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
        return tuple(getattr(self, name + suffix, None)
                     for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"))

    def _check_input(self, input, name):
        if not isinstance(input, ember.Tensor):
            raise TypeError(f"{name}: expected a Tensor input, got {type(input).__name__}")
        if input.dim() not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D tensor instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.shape[-1]}")

    def _check_hidden(self, hx, expected, batched, what="hidden"):
        if batched and hx.dim() != 3:
            raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
        if not batched and hx.dim() != 2:
            raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
        if tuple(hx.shape) != tuple(expected):
            raise RuntimeError(f"Expected {what} size {tuple(expected)}, got {list(hx.shape)}")

    def _run(self, input, states, step, masks=None):
        """Runs every layer and direction. `states[k]` is the initial state (a tensor, or an (h, c)
        pair) of layer/direction k, each [N, *]; input is [T, N, in]. `masks[t]` ([N, 1] bool, for packed
        sequences) says which sequences have a step t: the others keep their state, so each direction
        starts and ends at the sequence's own ends. Returns (output, final states)."""
        num_directions = 2 if self.bidirectional else 1
        x = input
        finals = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(num_directions):
                w_ih, w_hh, b_ih, b_hh, w_hr = self._layer_weights(layer, direction)
                projected = F.linear(x, w_ih, b_ih).unbind(0)  # every step's W_ih x + b_ih in one matmul
                state = states[layer * num_directions + direction]
                order = range(len(projected)) if direction == 0 else reversed(range(len(projected)))
                hs = [None] * len(projected)
                for t in order:
                    new = step(projected[t], state, w_hh, b_hh, w_hr)
                    if masks is not None:
                        new = tuple(ember.where(masks[t], a, b) for a, b in zip(new, state)) \
                            if isinstance(new, tuple) else ember.where(masks[t], new, state)
                    state = new
                    hs[t] = state[0] if isinstance(state, tuple) else state
                finals.append(state)
                if hs:
                    outputs.append(ember.stack(hs, 0))
                else:  # an empty sequence: no steps, an empty output
                    width = w_hh.shape[1] if w_hr is None else w_hr.shape[0]
                    outputs.append(ember.zeros(0, x.shape[1], width, dtype=x.dtype, device=x.device))
            x = outputs[0] if num_directions == 1 else ember.cat(outputs, -1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, finals

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def _prepare(self, input, name):
        """input -> ([T, N, in], batched, masks); masks is None unless input is a PackedSequence."""
        if isinstance(input, PackedSequence):  # batch_first does not apply to packed input
            padded, lengths = pad_packed_sequence(input)
            self._check_input(padded, name)
            steps = ember.arange(padded.shape[0], device=padded.device).unsqueeze(1)
            alive = lengths.to(padded.device).unsqueeze(0) > steps  # [T, N]
            return padded, True, list(alive.unsqueeze(-1).unbind(0))
        self._check_input(input, name)
        batched = input.dim() == 3
        if not batched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        return input, batched, None

    def _finish_output(self, output, batched, input):
        if isinstance(input, PackedSequence):
            return _pack_like(output, input)
        if not batched:
            return output.squeeze(1)
        return output.transpose(0, 1) if self.batch_first else output

    def _zeros_state(self, input, width):
        num_directions = 2 if self.bidirectional else 1
        return ember.zeros(self.num_layers * num_directions, input.shape[1], width, dtype=input.dtype,
                           device=input.device)


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh) (or relu)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        # torch's order: RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True, ...)
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        x, batched, masks = self._prepare(input, "RNN")
        num_directions = 2 if self.bidirectional else 1
        if hx is None:
            h0 = self._zeros_state(x, self.hidden_size)
        else:
            self._check_hidden(hx, (self.num_layers * num_directions,) + ((x.shape[1],) if batched else ()) +
                               (self.hidden_size,), batched)
            h0 = hx if batched else hx.unsqueeze(1)
        output, finals = self._run(x, list(h0.unbind(0)), _rnn_step(self.nonlinearity), masks)
        h_n = ember.stack(finals, 0)
        return self._finish_output(output, batched, input), (h_n if batched else h_n.squeeze(1))


class LSTM(RNNBase):
    """Long short-term memory: gates i, f, g, o; returns (output, (h_n, c_n)). With proj_size > 0 the
    hidden state is projected to proj_size features by weight_hr (torch's LSTM with projections)."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        x, batched, masks = self._prepare(input, "LSTM")
        num_directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        if hx is None:
            h0, c0 = self._zeros_state(x, real_hidden), self._zeros_state(x, self.hidden_size)
        else:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise RuntimeError("LSTM: hx must be a tuple (h_0, c_0)")
            h0, c0 = hx
            lead = (self.num_layers * num_directions,) + ((x.shape[1],) if batched else ())
            self._check_hidden(h0, lead + (real_hidden,), batched)
            self._check_hidden(c0, lead + (self.hidden_size,), batched, "cell")
            if not batched:
                h0, c0 = h0.unsqueeze(1), c0.unsqueeze(1)
        states = list(zip(h0.unbind(0), c0.unbind(0)))
        output, finals = self._run(x, states, _lstm_step, masks)
        h_n = ember.stack([h for h, _ in finals], 0)
        c_n = ember.stack([c for _, c in finals], 0)
        if not batched:
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return self._finish_output(output, batched, input), (h_n, c_n)


class GRU(RNNBase):
    """Gated recurrent unit: gates r, z, n; h_t = (1 - z) * n + z * h_{t-1}."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        x, batched, masks = self._prepare(input, "GRU")
        num_directions = 2 if self.bidirectional else 1
        if hx is None:
            h0 = self._zeros_state(x, self.hidden_size)
        else:
            self._check_hidden(hx, (self.num_layers * num_directions,) + ((x.shape[1],) if batched else ()) +
                               (self.hidden_size,), batched)
            h0 = hx if batched else hx.unsqueeze(1)
        output, finals = self._run(x, list(h0.unbind(0)), _gru_step, masks)
        h_n = ember.stack(finals, 0)
        return self._finish_output(output, batched, input), (h_n if batched else h_n.squeeze(1))


# ---- single-step cells --------------------------------------------------------------------------

class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        factory = dict(device=device, dtype=dtype)
        self.weight_ih = Parameter(ember.empty(num_chunks * hidden_size, input_size, **factory))
        self.weight_hh = Parameter(ember.empty(num_chunks * hidden_size, hidden_size, **factory))
        if bias:
            self.bias_ih = Parameter(ember.empty(num_chunks * hidden_size, **factory))
            self.bias_hh = Parameter(ember.empty(num_chunks * hidden_size, **factory))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _prepare(self, input, hx, name):
        """(input [N, in], hx list of [N, hidden] or None, batched)."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"{name}: input has inconsistent input_size: got {input.shape[-1]} "
                               f"expected {self.input_size}")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            return input, None, batched
        parts = list(hx) if isinstance(hx, (tuple, list)) else [hx]
        out = []
        for h in parts:
            if h.dim() != input.dim() - (0 if batched else 1):
                raise RuntimeError(f"{name}: Expected hidden to be {input.dim() - (0 if batched else 1)}D, "
                                   f"got {h.dim()}D instead")
            h = h if batched else h.unsqueeze(0)
            if tuple(h.shape) != (input.shape[0], self.hidden_size):
                raise RuntimeError(f"{name}: Expected hidden size {(input.shape[0], self.hidden_size)}, "
                                   f"got {list(h.shape)}")
            out.append(h)
        return input, out, batched

    def _zeros(self, input):
        return ember.zeros(input.shape[0], self.hidden_size, dtype=input.dtype, device=input.device)


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        x, hx, batched = self._prepare(input, hx, "RNNCell")
        h = hx[0] if hx is not None else self._zeros(x)
        out = _rnn_step(self.nonlinearity)(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh,
                                           self.bias_hh)
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        x, hx, batched = self._prepare(input, hx, "LSTMCell")
        if hx is None:
            hx = [self._zeros(x), self._zeros(x)]
        elif len(hx) != 2:
            raise RuntimeError("LSTMCell: hx must be a tuple (h_0, c_0)")
        h, c = _lstm_step(F.linear(x, self.weight_ih, self.bias_ih), tuple(hx), self.weight_hh, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        x, hx, batched = self._prepare(input, hx, "GRUCell")
        h = hx[0] if hx is not None else self._zeros(x)
        out = _gru_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return out if batched else out.squeeze(0)
