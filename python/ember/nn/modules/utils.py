"""Helpers of torch.nn.modules.utils that scripts import: consume_prefix_in_state_dict_if_present (load a
DataParallel / DDP checkpoint into the bare model) and the argument expanders _single, _pair, _triple,
_quadruple, _ntuple, _reverse_repeat_tuple, _list_with_default."""
import collections.abc
import itertools

__all__ = ["consume_prefix_in_state_dict_if_present"]


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Strips `prefix` (e.g. "module." of a DDP-wrapped model) from the keys of state_dict that start
    with it, in place; a renamed entry moves to the end, as torch does. The keys of the
    state_dict's `_metadata` (per-module versions, when the checkpoint has them) are stripped too, the
    wrapper's own entry "module" taking the root's place ""."""
    for key in [k for k in state_dict.keys() if k.startswith(prefix)]:
        state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is None:
        return
    bare = prefix.replace(".", "")
    for key in list(metadata.keys()):
        if key and (key == bare or key.startswith(prefix)):
            metadata[key[len(prefix):]] = metadata.pop(key)


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return (x,) * n

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """Each element of t, last first, repeated n times: (a, b), 2 -> (b, b, a, a) (F.pad's order from a
    per-dimension padding)."""
    return tuple(itertools.chain.from_iterable((x,) * n for x in reversed(t)))


def _list_with_default(out_size, defaults):
    """An adaptive pool's output size with each None replaced by the matching trailing entry of
    `defaults` (the input's size); an int passes through."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    tail = defaults[-len(out_size):]
    return [d if v is None else v for v, d in zip(out_size, tail)]
