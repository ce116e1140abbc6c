"""Sequence helpers of torch.nn.utils.rnn: pad_sequence, unpad_sequence, PackedSequence, pack_padded_sequence,
pad_packed_sequence, pack_sequence, unpack_sequence, invert_permutation.

A PackedSequence holds the steps of a batch of sequences of different lengths without padding: the
batch sorted by decreasing length, `data` = the first step of every sequence, then the second step of
those still running, ...; `batch_sizes[t]` (a CPU int64 tensor) says how many sequences step t has.
"""
from typing import NamedTuple, Optional

import numpy as np

import ember

__all__ = ["pad_sequence", "unpad_sequence", "PackedSequence", "pack_padded_sequence", "pad_packed_sequence",
           "pack_sequence", "unpack_sequence", "invert_permutation"]


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks tensors of shapes [L_i, *] into [L_max, B, *] ([B, L_max, *] with batch_first), filling the
    missing steps with padding_value after each sequence (padding_side='right') or before it ('left')."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if isinstance(sequences, ember.Tensor):
        sequences = list(sequences.unbind(0))
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("pad_sequence: received an empty list of sequences")
    trailing = tuple(sequences[0].shape[1:])
    for i, s in enumerate(sequences):
        if s.dim() == 0 or tuple(s.shape[1:]) != trailing:
            raise RuntimeError(f"pad_sequence: sequence {i} has shape {list(s.shape)}, but every sequence must "
                               f"be [L, {', '.join(map(str, trailing))}]".replace("[L, ]", "[L]"))
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        missing = longest - s.shape[0]
        if missing == 0:
            padded.append(s)
            continue
        fill = ember.full((missing,) + trailing, padding_value, dtype=s.dtype, device=s.device)
        padded.append(ember.cat([s, fill] if padding_side == "right" else [fill, s], 0))
    return ember.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The inverse of pad_sequence (right padding): the list of [L_i, *] tensors."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences.unbind(0), _lengths_array(lengths))]


class PackedSequence(NamedTuple):
    data: ember.Tensor
    batch_sizes: ember.Tensor
    sorted_indices: Optional[ember.Tensor] = None
    unsorted_indices: Optional[ember.Tensor] = None

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        index = lambda t: None if t is None else t.to(data.device)  # noqa: E731
        return PackedSequence(data, self.batch_sizes, index(self.sorted_indices), index(self.unsorted_indices))

    def cuda(self, *args, **kwargs):
        return self.to("cuda" if not args else args[0])

    def cpu(self):
        return self.to("cpu")

    def double(self):
        return self.to(ember.float64)

    def float(self):
        return self.to(ember.float32)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return self.data.is_pinned()


def invert_permutation(permutation):
    """The permutation q with q[permutation[i]] = i (a PackedSequence's unsorted_indices from its
    sorted_indices); None stays None."""
    if permutation is None:
        return None
    positions = ember.arange(permutation.numel(), dtype=permutation.dtype, device=permutation.device)
    return ember.empty_like(permutation).scatter_(0, permutation, positions)


def _lengths_array(lengths):
    if isinstance(lengths, ember.Tensor):
        return np.asarray(lengths.detach().cpu().numpy(), dtype=np.int64).reshape(-1)
    return np.asarray(list(lengths), dtype=np.int64).reshape(-1)


def _pack_sorted(sorted_input, batch_sizes):
    """data of a PackedSequence from [T, B, *] input whose batch is sorted by decreasing length."""
    steps = [sorted_input[t, :int(b)] for t, b in enumerate(batch_sizes)]
    return ember.cat(steps, 0)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch [T, B, *] ([B, T, *] with batch_first) of sequences of the given lengths.
    With enforce_sorted=False the batch may be in any order; it is sorted here and unsorted by
    pad_packed_sequence (and by the recurrent layers' h_n)."""
    lengths = _lengths_array(lengths)
    if batch_first:
        input = input.transpose(0, 1)
    if lengths.shape[0] != input.shape[1]:
        raise RuntimeError(f"pack_padded_sequence: expected {input.shape[1]} lengths (the batch size), "
                           f"got {lengths.shape[0]}")
    if lengths.size and lengths.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if lengths.size and lengths.max() > input.shape[0]:
        raise RuntimeError(f"pack_padded_sequence: a length of {lengths.max()} is longer than the input's "
                           f"{input.shape[0]} steps")
    if enforce_sorted:
        if np.any(lengths[1:] > lengths[:-1]):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
                               "to sidestep this requirement if you do not need ONNX exportability.")
        sorted_indices = unsorted_indices = None
    else:
        order = np.argsort(-lengths, kind="stable")
        lengths = lengths[order]
        sorted_indices = ember.tensor(order, dtype=ember.int64, device=input.device)
        unsorted_indices = ember.tensor(np.argsort(order, kind="stable"), dtype=ember.int64, device=input.device)
        input = input.index_select(1, sorted_indices)
    batch_sizes = np.array([(lengths > t).sum() for t in range(int(lengths[0]))], dtype=np.int64)
    data = _pack_sorted(input, batch_sizes)
    return PackedSequence(data, ember.tensor(batch_sizes, dtype=ember.int64), sorted_indices, unsorted_indices)


def _sorted_lengths(batch_sizes):
    sizes = _lengths_array(batch_sizes)
    return np.array([(sizes > b).sum() for b in range(int(sizes[0]))], dtype=np.int64)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The inverse of pack_padded_sequence: (padded [T, B, *] or [B, T, *], lengths) with the batch in
    its original order and lengths a CPU int64 tensor."""
    data, batch_sizes = sequence.data, _lengths_array(sequence.batch_sizes)
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {steps}")
    else:
        total_length = steps
    batch = int(batch_sizes[0])
    trailing = tuple(data.shape[1:])
    rows = []
    offset = 0
    for b in batch_sizes:
        b = int(b)
        step = data.narrow(0, offset, b)
        offset += b
        if b < batch:
            step = ember.cat([step, ember.full((batch - b,) + trailing, padding_value, dtype=data.dtype,
                                               device=data.device)], 0)
        rows.append(step)
    rows += [ember.full((batch,) + trailing, padding_value, dtype=data.dtype, device=data.device)] * \
        (total_length - steps)
    padded = ember.stack(rows, 0)
    lengths = _sorted_lengths(batch_sizes)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths[_lengths_array(sequence.unsorted_indices)]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, ember.tensor(lengths, dtype=ember.int64)


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of [L_i, *] tensors."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of [L_i, *] tensors a PackedSequence holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return [padded[i, :int(n)] for i, n in enumerate(lengths.tolist())]


def _pack_like(padded, like):
    """Packs [T, B, *] (batch in original order) with the batch sizes and order of PackedSequence `like`."""
    if like.sorted_indices is not None:
        padded = padded.index_select(1, like.sorted_indices)
    return PackedSequence(_pack_sorted(padded, _lengths_array(like.batch_sizes)), like.batch_sizes,
                          like.sorted_indices, like.unsorted_indices)
