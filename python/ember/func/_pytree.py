"""Nested tuples / lists / dicts of tensors flattened to a list of leaves and
rebuilt: the function transforms accept and return such structures."""


def tree_flatten(tree):
    """(leaves, spec): leaves in order; spec rebuilds the structure around new leaves."""
    if isinstance(tree, (tuple, list)):
        leaves, specs = [], []
        for item in tree:
            sub_leaves, sub_spec = tree_flatten(item)
            leaves += sub_leaves
            specs.append(sub_spec)
        return leaves, (type(tree), specs)
    if isinstance(tree, dict):
        leaves, specs = [], []
        for key, item in tree.items():
            sub_leaves, sub_spec = tree_flatten(item)
            leaves += sub_leaves
            specs.append((key, sub_spec))
        return leaves, (dict, specs)
    return [tree], None


def tree_unflatten(leaves, spec):
    leaves = iter(leaves)
    return _build(leaves, spec)


def _build(leaves, spec):
    if spec is None:
        return next(leaves)
    kind, specs = spec
    if kind is dict:
        return {key: _build(leaves, sub) for key, sub in specs}
    items = [_build(leaves, sub) for sub in specs]
    if kind is tuple or kind is list:
        return kind(items)
    return kind(*items)  # a named tuple


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(leaf) for leaf in leaves], spec)
