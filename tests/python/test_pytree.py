"""ember.utils._pytree: flatten/unflatten round trips over dicts, lists,
tuples, named tuples, None and registered classes; tree_map over one and
several trees; tree_map_only; structure errors. Compared with
torch.utils._pytree (leaves, structure repr, results) when importable."""
import collections

import pytest

import ember
import ember.utils._pytree as pytree
from harness import torch

CASES = []  # no OpCase rows: container utilities

Pair = collections.namedtuple("Pair", "first second")


def sample_tree():
    return {
        "b": [1, (2, 3)],
        "a": None,
        "c": Pair(4, [5]),
        "d": collections.OrderedDict(z=6, y=7),
        "e": collections.deque([8], maxlen=4),
        "f": collections.defaultdict(list, {"k": 9}),
        "t": ember.ones(2),
    }


def test_flatten_order_and_leaves():
    tree = sample_tree()
    leaves, spec = pytree.tree_flatten(tree)
    assert leaves[:10] == [1, 2, 3, None, 4, 5, 6, 7, 8, 9]
    assert leaves[10] is tree["t"]
    assert spec.num_leaves == 11
    assert pytree.tree_leaves(tree)[:3] == [1, 2, 3]
    assert list(pytree.tree_iter(tree))[:3] == [1, 2, 3]


def test_round_trip_keeps_types_and_context():
    tree = sample_tree()
    leaves, spec = pytree.tree_flatten(tree)
    back = pytree.tree_unflatten(leaves, spec)
    assert list(back) == list(tree)  # dict key order kept
    assert isinstance(back["c"], Pair) and back["c"].second == [5]
    assert type(back["d"]) is collections.OrderedDict and list(back["d"]) == ["z", "y"]
    assert back["e"].maxlen == 4
    assert back["f"].default_factory is list
    assert isinstance(back["b"][1], tuple)
    assert back["t"] is tree["t"]


def test_none_and_scalars_are_leaves():
    assert pytree.tree_flatten(None)[0] == [None]
    assert pytree.tree_flatten(5)[0] == [5]
    assert pytree.tree_structure(5).is_leaf()
    leaves, spec = pytree.tree_flatten([])
    assert leaves == [] and spec.num_leaves == 0 and pytree.tree_unflatten([], spec) == []


def test_tree_structure_equality():
    assert pytree.tree_structure([1, (2, 3)]) == pytree.tree_structure(["a", ("b", None)])
    assert pytree.tree_structure([1, (2, 3)]) != pytree.tree_structure([1, [2, 3]])
    assert pytree.tree_structure({"a": 1}) != pytree.tree_structure({"b": 1})
    assert pytree.tree_structure(Pair(1, 2)) != pytree.tree_structure((1, 2))


def test_tree_map_single_and_multiple_trees():
    tree = {"w": [1, 2], "b": (3,)}
    assert pytree.tree_map(lambda x: x * 10, tree) == {"w": [10, 20], "b": (30,)}
    other = {"b": (300,), "w": [100, 200]}  # same keys, another order
    assert pytree.tree_map(lambda x, y: x + y, tree, other) == {"w": [101, 202], "b": (303,)}


def test_tree_map_over_tensors():
    grads = {"w": ember.ones(2, 2), "b": ember.zeros(2)}
    scaled = pytree.tree_map(lambda g: g * 0.5, grads)
    ember.testing.assert_close(scaled["w"], ember.full((2, 2), 0.5))
    assert scaled["b"].shape == ember.Size([2])


def test_tree_map_structure_mismatch_raises():
    with pytest.raises(ValueError):
        pytree.tree_map(lambda x, y: x + y, [1, 2], [1, 2, 3])
    with pytest.raises(ValueError):
        pytree.tree_map(lambda x, y: x + y, {"a": 1}, {"b": 1})
    with pytest.raises(ValueError):
        pytree.tree_map(lambda x, y: x + y, [1, 2], (1, 2))


def test_unflatten_wrong_leaf_count_raises():
    spec = pytree.tree_structure([1, 2])
    with pytest.raises(ValueError, match="has length 1"):
        pytree.tree_unflatten([1], spec)
    with pytest.raises(TypeError):
        pytree.tree_unflatten([1, 2], [1, 2])


def test_tree_map_only_by_type_tuple_and_predicate():
    tree = [1, "a", 2.5, ember.ones(1), (3,)]
    out = pytree.tree_map_only(int, lambda x: x + 1, tree)
    assert out[:3] == [2, "a", 2.5] and out[4] == (4,)
    out = pytree.tree_map_only((int, float), lambda x: -x, tree)
    assert out[0] == -1 and out[2] == -2.5
    out = pytree.tree_map_only(ember.Tensor, lambda t: t * 3, tree)
    assert out[3].tolist() == [3.0]
    out = pytree.tree_map_only(lambda x: isinstance(x, str), str.upper, tree)
    assert out[1] == "A"


def test_is_leaf_stops_descent():
    tree = {"pair": (1, 2), "x": [3]}
    leaves, spec = pytree.tree_flatten(tree, is_leaf=lambda n: isinstance(n, tuple))
    assert leaves == [(1, 2), 3]
    assert pytree.tree_map(lambda x: x, tree, is_leaf=lambda n: isinstance(n, tuple)) == tree


def test_tree_all_any_and_in_place_map():
    assert pytree.tree_all(lambda x: x > 0, [1, (2, 3)])
    assert not pytree.tree_any(lambda x: x > 5, [1, (2, 3)])
    assert pytree.tree_all_only(int, lambda x: x > 0, [1, "x", -2.0])
    seen = []
    tree = [1, [2]]
    assert pytree.tree_map_(seen.append, tree) is tree
    assert seen == [1, 2]


class Point:
    def __init__(self, x, y, name):
        self.x, self.y, self.name = x, y, name


pytree.register_pytree_node(Point, lambda p: ([p.x, p.y], p.name), lambda children, name: Point(*children, name))


def test_registered_class():
    leaves, spec = pytree.tree_flatten([Point(1, 2, "p")])
    assert leaves == [1, 2]
    back = pytree.tree_map(lambda v: v * 2, [Point(1, 2, "p")])[0]
    assert (back.x, back.y, back.name) == (2, 4, "p")
    with pytest.raises(ValueError, match="already registered"):
        pytree.register_pytree_node(Point, lambda p: ([], None), lambda c, ctx: None)


def test_ember_return_types_are_named_tuple_nodes():
    result = ember.max(ember.tensor([[1.0, 3.0], [2.0, 0.0]]), 1)
    shapes = pytree.tree_map(lambda t: tuple(t.shape), result)
    assert type(shapes) is type(result) and shapes.values == (2,) and shapes.indices == (2,)


@pytest.mark.skipif(torch is None, reason="torch not importable")
def test_matches_torch_pytree():
    import torch.utils._pytree as tp
    tree = sample_tree()
    del tree["t"]
    e_leaves, e_spec = pytree.tree_flatten(tree)
    t_leaves, t_spec = tp.tree_flatten(tree)
    assert e_leaves == t_leaves
    assert repr(e_spec) == repr(t_spec)
    assert e_spec.num_nodes == t_spec.num_nodes and e_spec.num_leaves == t_spec.num_leaves
    f = lambda x: None if x is None else x + 1  # noqa: E731
    assert pytree.tree_map(f, tree) == tp.tree_map(f, tree)
    mixed = [1, "a", 2.0, True]
    assert pytree.tree_map_only(int, lambda x: x + 1, mixed) == tp.tree_map_only(int, lambda x: x + 1, mixed)
