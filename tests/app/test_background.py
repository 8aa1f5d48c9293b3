"""Reference cycles are collected on the GUI thread, never on a worker that happens to allocate.

The hang this prevents: a worker thread (importing librosa) ran the collector, which found a closed window
in a cycle and began destroying its widgets there while the GUI thread freed the same tree; each thread then
waited on a lock the other held."""
from __future__ import annotations

import gc
import threading
import weakref

from app.background import collect_garbage_on_gui_thread
from tests.app.conftest import wait_for


class Node:
    pass


def test_a_cycle_dropped_while_a_worker_allocates_is_collected_on_the_gui_thread(qapp):
    collect_garbage_on_gui_thread(qapp)
    collected_on = []
    node = Node()
    node.self = node                      # only the collector can free it
    weakref.finalize(node, lambda: collected_on.append(threading.current_thread().name))
    del node

    kept = []                             # held past the worker: the GUI timer sees the allocation count
    worker = threading.Thread(target=lambda: kept.extend([] for _ in range(200_000)), name="worker")
    worker.start()
    worker.join()
    assert collected_on == [], "the worker thread ran the collector"

    wait_for(lambda: collected_on, "the GUI thread's collection", give_up_s=30)
    assert collected_on == [threading.main_thread().name]
    assert not gc.isenabled()


def test_the_collector_is_installed_once_per_application(qapp):
    collect_garbage_on_gui_thread(qapp)
    first = qapp._gui_thread_gc
    collect_garbage_on_gui_thread(qapp)
    assert qapp._gui_thread_gc is first
