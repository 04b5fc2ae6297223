"""Test support: this process's live children, as Linux lists them (the
chain must leave no XLA child behind)."""

from __future__ import annotations

import os


def live_children() -> set[int]:
    found = set()
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/children") as f:
                found.update(int(pid) for pid in f.read().split())
        except FileNotFoundError:  # a thread that ended since the listing: it has no children now
            continue
    return found
