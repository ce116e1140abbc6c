"""ember.utils.data.DistributedSampler: shares of a dataset per process, as torch's."""
import pytest

import ember
import ember.distributed as dist
from ember.utils.data import DataLoader, DistributedSampler, TensorDataset


class Range:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i


def shares(n, replicas, **kw):
    return [list(DistributedSampler(Range(n), num_replicas=replicas, rank=r, **kw)) for r in range(replicas)]


@pytest.mark.parametrize("n, replicas", [(12, 4), (10, 3), (5, 2), (7, 7), (1, 3)])
@pytest.mark.parametrize("shuffle", [False, True])
def test_shares_cover_the_dataset_with_equal_lengths(n, replicas, shuffle):
    parts = shares(n, replicas, shuffle=shuffle)
    per = -(-n // replicas)
    assert all(len(p) == per for p in parts)
    assert all(len(DistributedSampler(Range(n), replicas, r)) == per for r in range(replicas))
    together = sorted(i for p in parts for i in p)
    assert set(together) == set(range(n))
    assert len(together) == per * replicas  # padded by repeating indices


def test_padding_repeats_the_first_indices_in_order():
    assert shares(10, 4, shuffle=False) == [[0, 4, 8], [1, 5, 9], [2, 6, 0], [3, 7, 1]]
    # Fewer samples than replicas: the list is repeated as often as needed.
    assert shares(2, 5, shuffle=False) == [[0], [1], [0], [1], [0]]


def test_drop_last_drops_the_uneven_tail():
    parts = shares(10, 4, shuffle=False, drop_last=True)
    assert parts == [[0, 4], [1, 5], [2, 6], [3, 7]]
    parts = shares(10, 3, shuffle=True, drop_last=True, seed=3)
    assert all(len(p) == 3 for p in parts)
    flat = [i for p in parts for i in p]
    assert len(set(flat)) == 9  # no index twice
    assert len(DistributedSampler(Range(10), 3, 0, drop_last=True)) == 3


def test_shuffle_depends_on_seed_and_epoch_only():
    a = DistributedSampler(Range(50), num_replicas=2, rank=1, seed=7)
    b = DistributedSampler(Range(50), num_replicas=2, rank=1, seed=7)
    ember.manual_seed(1)
    first = list(a)
    ember.manual_seed(2)  # the global generator plays no part
    assert list(b) == first and list(a) == first
    assert first != list(range(1, 50, 2))
    a.set_epoch(1)
    assert list(a) != first
    b.set_epoch(1)
    assert list(a) == list(b)
    c = DistributedSampler(Range(50), num_replicas=2, rank=1, seed=8)
    assert list(c) != first
    # Every rank draws the same permutation in an epoch: shares stay disjoint.
    for epoch in range(3):
        samplers = [DistributedSampler(Range(21), 3, r, seed=5) for r in range(3)]
        for s in samplers:
            s.set_epoch(epoch)
        assert sorted(i for s in samplers for i in s) == list(range(21))


def test_works_as_a_data_loader_sampler():
    data = TensorDataset(ember.arange(12, dtype=ember.float32))
    loader = DataLoader(data, batch_size=2, sampler=DistributedSampler(data, 3, 2, shuffle=False))
    got = [b[0].tolist() for b in loader]
    assert got == [[2.0, 5.0], [8.0, 11.0]]


def test_defaults_come_from_the_process_group(monkeypatch):
    monkeypatch.setattr(dist, "is_initialized", lambda: False, raising=False)
    with pytest.raises(ValueError, match="process group has not been initialized"):
        DistributedSampler(Range(4))
    DistributedSampler(Range(4), num_replicas=2, rank=0)  # explicit values need no group
    monkeypatch.setattr(dist, "is_initialized", lambda: True, raising=False)
    monkeypatch.setattr(dist, "get_world_size", lambda: 4, raising=False)
    monkeypatch.setattr(dist, "get_rank", lambda: 3, raising=False)
    s = DistributedSampler(Range(8), shuffle=False)
    assert (s.num_replicas, s.rank, list(s)) == (4, 3, [3, 7])


def test_bad_rank_and_replicas():
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"):
        DistributedSampler(Range(4), num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="Invalid rank -1"):
        DistributedSampler(Range(4), num_replicas=2, rank=-1)
    with pytest.raises(ValueError, match="num_replicas"):
        DistributedSampler(Range(4), num_replicas=0, rank=0)


def test_defaults_from_a_real_gloo_group_under_the_launcher(tmp_path):
    import os
    import subprocess
    import sys
    import textwrap
    if not dist.is_gloo_available():
        pytest.skip("this build has no gloo backend")
    script = tmp_path / "sampler_worker.py"
    script.write_text(textwrap.dedent("""
        import datetime, os
        import ember, ember.distributed as dist
        from ember.utils.data import DistributedSampler
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=10))
        s = DistributedSampler(list(range(10)), seed=1)
        assert (s.num_replicas, s.rank) == (dist.get_world_size(), dist.get_rank())
        parts = [ember.zeros(4) for _ in range(dist.get_world_size())]
        dist.all_gather(parts, ember.tensor(list(s), dtype=ember.float32))
        if dist.get_rank() == 0:
            os.write(1, repr(sorted(int(v) for p in parts for v in p.tolist())).encode())
        dist.destroy_process_group()
    """))
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.path.join(root, "python"))
    p = subprocess.run([sys.executable, "-m", "ember.distributed.run", "--standalone", "--nproc-per-node", "3",
                        str(script)], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    # 10 indices over 3 ranks: 4 each, the first two repeated as padding.
    assert eval(p.stdout) == sorted(list(range(10)) + _padding(10, 3))


def _padding(n, replicas):
    """The indices the sampler repeats to fill n up to a multiple of replicas (from its own order)."""
    g = ember.Generator()
    g.manual_seed(1)
    order = ember.randperm(n, generator=g).tolist()
    missing = -(-n // replicas) * replicas - n
    return order[:missing]
