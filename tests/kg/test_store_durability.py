"""Every batch the KG store appends reaches the disk (fsync) before `add_many` returns."""

import os

from core.types import Triple
from kg.store import KGStore


def test_each_batch_is_fsynced(tmp_path, monkeypatch):
    synced = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(os.readlink(f"/proc/self/fd/{fd}")) or real(fd))
    store = KGStore(tmp_path)
    store.add_many([("p1", [Triple.make("Nile", "flows", "north", "p1")], 0)])
    store.add_many([("p2", [], 1)])
    assert synced == [str(store.log_path)] * 2
