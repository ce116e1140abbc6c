"""ember.utils._pytree: nested containers as trees, as torch.utils._pytree.

A pytree is a leaf or a node whose children are pytrees. Nodes are lists,
tuples, named tuples (ember.return_types too), dicts (keys kept in insertion
order), OrderedDicts, defaultdicts, deques and the classes given to
``register_pytree_node``; everything else, None included (as torch), is a
leaf. ``tree_flatten`` gives the leaves in order and a ``TreeSpec`` of the
structure; ``tree_unflatten`` rebuilds it from new leaves; ``tree_map``
applies a function to the leaves of one tree (or of several with the same
structure).
"""
import collections
import dataclasses

__all__ = ["TreeSpec", "LeafSpec", "register_pytree_node", "tree_flatten", "tree_unflatten", "tree_leaves",
           "tree_structure", "tree_iter", "tree_map", "tree_map_", "tree_map_only", "tree_map_only_", "tree_all",
           "tree_any", "tree_all_only", "tree_any_only", "tree_is_leaf"]


@dataclasses.dataclass(frozen=True)
class _NodeDef:
    flatten: object  # node -> (children, context)
    unflatten: object  # (children, context) -> node


_NODES = {}


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None, to_dumpable_context=None,
                         from_dumpable_context=None, flatten_with_keys_fn=None):
    """Makes instances of `cls` nodes: flatten_fn(node) -> (children, context) and
    unflatten_fn(children, context) -> node. (The serialization arguments are
    accepted for torch's signature; ember does not serialize tree specs.)"""
    if cls in _NODES:
        raise ValueError(f"{cls} is already registered as a pytree node.")
    _NODES[cls] = _NodeDef(flatten_fn, unflatten_fn)


def _register_pytree_node(cls, flatten_fn, unflatten_fn, *args, **kwargs):
    """The older private spelling some libraries call."""
    register_pytree_node(cls, flatten_fn, unflatten_fn)


def _is_namedtuple_type(cls):
    return issubclass(cls, tuple) and hasattr(cls, "_fields")


register_pytree_node(list, lambda x: (list(x), None), lambda children, _: list(children))
register_pytree_node(tuple, lambda x: (list(x), None), lambda children, _: tuple(children))
register_pytree_node(dict, lambda x: (list(x.values()), list(x.keys())),
                     lambda children, keys: dict(zip(keys, children)))
register_pytree_node(collections.OrderedDict, lambda x: (list(x.values()), list(x.keys())),
                     lambda children, keys: collections.OrderedDict(zip(keys, children)))
register_pytree_node(collections.defaultdict, lambda x: (list(x.values()), [x.default_factory, list(x.keys())]),
                     lambda children, ctx: collections.defaultdict(ctx[0], zip(ctx[1], children)))
register_pytree_node(collections.deque, lambda x: (list(x), x.maxlen),
                     lambda children, maxlen: collections.deque(children, maxlen=maxlen))
# Named tuples are one node type whose context is the class (so each class need not register).
_NAMEDTUPLE = "namedtuple"
_NODES[_NAMEDTUPLE] = _NodeDef(lambda x: (list(x), type(x)), lambda children, cls: cls(*children))


def _node_kind(tree):
    """The key of tree's node definition in _NODES, or None for a leaf."""
    cls = type(tree)
    if cls in _NODES:
        return cls
    if _is_namedtuple_type(cls):
        return _NAMEDTUPLE
    return None


def tree_is_leaf(tree, is_leaf=None):
    """Whether tree is a leaf: not a node type, or chosen by is_leaf."""
    return (is_leaf is not None and is_leaf(tree)) or _node_kind(tree) is None


class TreeSpec:
    """The structure of a pytree: the node type, its context (dict keys, the
    named tuple class, ...) and one TreeSpec per child. Leaves are LeafSpec."""

    def __init__(self, type, context, children_specs):  # noqa: A002  (torch's argument name)
        self.type = type
        self.context = context
        self.children_specs = list(children_specs)
        self.num_nodes = 1 + sum(c.num_nodes for c in self.children_specs)
        self.num_leaves = sum(c.num_leaves for c in self.children_specs)
        self.num_children = len(self.children_specs)

    def is_leaf(self):
        return False

    def children(self):
        return list(self.children_specs)

    def child(self, index):
        return self.children_specs[index]

    def _kind(self):
        return _NAMEDTUPLE if self.type is _NamedTupleType else self.type

    def unflatten(self, leaves):
        """The tree of this structure holding `leaves` in order."""
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers "
                             f"to a pytree that holds {self.num_leaves} items ({self}).")
        return self._build(iter(leaves))

    def _build(self, leaves):
        children = [c._build(leaves) for c in self.children_specs]
        return _NODES[self._kind()].unflatten(children, self.context)

    def flatten_up_to(self, tree):
        """tree's subtrees at the places of this structure's leaves (tree must have
        this structure down to them)."""
        out = []
        self._flatten_up_to(tree, out)
        return out

    def _flatten_up_to(self, tree, out):
        kind = _node_kind(tree)
        if kind != self._kind():
            raise ValueError(f"Node type mismatch; expected {self._type_name()}, but got {type(tree).__name__}.")
        children, context = _NODES[kind].flatten(tree)
        if len(children) != self.num_children:
            raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got {len(children)}.")
        if context != self.context and not (kind in (dict, collections.OrderedDict, collections.defaultdict)
                                            and _same_keys(context, self.context, kind)):
            raise ValueError(f"Node context mismatch for {self._type_name()}: expected {self.context!r}, "
                             f"got {context!r}.")
        if kind in (dict, collections.defaultdict) and context != self.context:
            # Same keys in another order: read the children in this spec's key order.
            values = dict(zip(context if kind is dict else context[1], children))
            children = [values[k] for k in (self.context if kind is dict else self.context[1])]
        for spec, child in zip(self.children_specs, children):
            spec._flatten_up_to(child, out)

    def _type_name(self):
        return "namedtuple" if self.type is _NamedTupleType else self.type.__name__

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and not other.is_leaf() and self.type is other.type
                and self.context == other.context and self.children_specs == other.children_specs)

    def __hash__(self):
        return hash((self.type, repr(self.context), tuple(self.children_specs)))

    def __repr__(self, indent=0):
        pad = " " * (indent + 2)
        parts = [c.__repr__(indent + 2) for c in self.children_specs]
        inner = (",\n" + pad).join(parts)
        return f"TreeSpec({self._type_name()}, {self.context!r}, [{inner}])"


def _same_keys(a, b, kind):
    if kind is collections.defaultdict:
        return a[0] == b[0] and set(a[1]) == set(b[1])
    if kind is collections.OrderedDict:
        return False  # an OrderedDict's order is part of its value
    return set(a) == set(b)


class _NamedTupleType:
    """The TreeSpec.type of named tuples (their class is the context)."""


class LeafSpec(TreeSpec):
    """The structure of a leaf."""

    def __init__(self):
        self.type = None
        self.context = None
        self.children_specs = []
        self.num_nodes = 1
        self.num_leaves = 1
        self.num_children = 0

    def is_leaf(self):
        return True

    def _build(self, leaves):
        return next(leaves)

    def _flatten_up_to(self, tree, out):
        out.append(tree)

    def __eq__(self, other):
        return isinstance(other, LeafSpec)

    def __hash__(self):
        return hash(LeafSpec)

    def __repr__(self, indent=0):
        return "*"


def _flatten(tree, is_leaf, leaves):
    if tree_is_leaf(tree, is_leaf):
        leaves.append(tree)
        return LeafSpec()
    kind = _node_kind(tree)
    children, context = _NODES[kind].flatten(tree)
    specs = [_flatten(c, is_leaf, leaves) for c in children]
    return TreeSpec(_NamedTupleType if kind == _NAMEDTUPLE else kind, context, specs)


def tree_flatten(tree, is_leaf=None):
    """(leaves in order, TreeSpec of the structure)."""
    leaves = []
    spec = _flatten(tree, is_leaf, leaves)
    return leaves, spec


def tree_unflatten(leaves, treespec):
    """The tree of structure `treespec` holding `leaves`."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance of TreeSpec but "
                        f"got item of type {type(treespec)}.")
    return treespec.unflatten(leaves)


def tree_leaves(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_iter(tree, is_leaf=None):
    """The leaves one at a time, without building a TreeSpec."""
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    for child in _NODES[_node_kind(tree)].flatten(tree)[0]:
        yield from tree_iter(child, is_leaf)


def tree_map(func, tree, *rests, is_leaf=None):
    """The tree with each leaf x replaced by func(x, *the matching leaves of rests);
    rests must have tree's structure (their leaves may be subtrees)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(*xs) for xs in zip(leaves, *others))


def tree_map_(func, tree, *rests, is_leaf=None):
    """Calls func on the leaves (for its side effects) and returns tree itself."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    for xs in zip(leaves, *others):
        func(*xs)
    return tree


def _matcher(type_or_types_or_pred):
    if isinstance(type_or_types_or_pred, (type, tuple)) or hasattr(type_or_types_or_pred, "__args__"):
        return lambda x: isinstance(x, type_or_types_or_pred)
    if callable(type_or_types_or_pred):
        return type_or_types_or_pred
    raise TypeError(f"expected a type, a tuple of types or a predicate, got {type_or_types_or_pred!r}")


def _only(type_or_types_or_pred, func):
    match = _matcher(type_or_types_or_pred)
    return lambda x: func(x) if match(x) else x


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None):
    """tree_map applying func only to the leaves of the given type(s) (or that the
    predicate accepts); other leaves are kept."""
    return tree_map(_only(type_or_types_or_pred, func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func, tree, is_leaf=None):
    return tree_map_(_only(type_or_types_or_pred, func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    return all(pred(x) for x in tree_iter(tree, is_leaf))


def tree_any(pred, tree, is_leaf=None):
    return any(pred(x) for x in tree_iter(tree, is_leaf))


def tree_all_only(type_or_types, /, pred, tree, is_leaf=None):
    match = _matcher(type_or_types)
    return all(pred(x) for x in tree_iter(tree, is_leaf) if match(x))


def tree_any_only(type_or_types, /, pred, tree, is_leaf=None):
    match = _matcher(type_or_types)
    return any(pred(x) for x in tree_iter(tree, is_leaf) if match(x))
