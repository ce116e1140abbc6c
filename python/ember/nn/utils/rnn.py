"""Sequence helpers of torch.nn.utils.rnn: pad_sequence."""
import ember


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
