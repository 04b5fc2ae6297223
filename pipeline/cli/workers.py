"""Independent tasks run here, in local processes, or on a Dask cluster:
what `hlo2penguin check` and `hlo2penguin regress` share.

A task is a module-level function and its arguments, so it pickles by name:
a spawned process, or a Dask worker with this package installed, imports the
function and runs it there. Arguments carry the data itself (a worker on
another machine does not see our files). Results come back in the order of
the tasks, whatever order they finish in, and `on_done(i)` is called as task
`i` finishes (a progress bar's tick). A task's exception ends the run: tasks
turn the failures they expect into results of their own.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import multiprocessing
import sys
from typing import Callable, Sequence

from passes.errors import first_line
from pipeline.cli.support import UsageError

CONNECT_TIMEOUT = 5  # seconds to reach a scheduler before saying it cannot be reached
INSTALL_HINT = "pip install 'hlo2penguin[distributed]'"


def run(function: Callable, tasks: Sequence[tuple], *, jobs: int = 1, scheduler: str | None = None,
        on_done: Callable[[int], None] | None = None) -> list:
    """`[function(*task) for task in tasks]`: in this process (`jobs` 1), in
    `jobs` spawned processes, or on the Dask scheduler at `scheduler`."""
    tick = on_done or (lambda i: None)
    if scheduler is not None:
        return _on_dask(function, tasks, scheduler, tick)
    if jobs <= 1 or len(tasks) <= 1:
        results = []
        for i, task in enumerate(tasks):
            results.append(function(*task))
            tick(i)
        return results
    return _in_processes(function, tasks, jobs, tick)


def _in_processes(function, tasks, jobs, tick) -> list:
    results: list = [None] * len(tasks)
    # spawn: a forked child would inherit XLA's threads mid-flight.
    context = multiprocessing.get_context("spawn")
    pool = concurrent.futures.ProcessPoolExecutor(min(jobs, len(tasks)), mp_context=context)
    futures = {pool.submit(function, *task): i for i, task in enumerate(tasks)}
    try:
        for future in concurrent.futures.as_completed(futures):
            results[futures[future]] = future.result()
            tick(futures[future])
    except BaseException:  # a task's bug, or ^C: do not start the queued ones
        # Each future cancelled by hand: `shutdown(cancel_futures=True)` only
        # sets a flag, which a second shutdown (a `with` block's exit) resets
        # before the pool reads it, and every queued task then still runs.
        for future in futures:
            future.cancel()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return results


def _on_dask(function, tasks, address: str, tick) -> list:
    client = connect(address)
    try:
        from distributed import as_completed

        futures = [client.submit(function, *task, pure=False) for task in tasks]
        index = {future.key: i for i, future in enumerate(futures)}
        results: list = [None] * len(tasks)
        for future in as_completed(futures, loop=client.loop):  # not set as the default client
            results[index[future.key]] = future.result()
            tick(index[future.key])
        return results
    finally:
        client.close()


def connect(address: str):
    """A `distributed.Client` on the scheduler at `address`; a UsageError
    (one line) if `distributed` is not installed or the scheduler cannot be
    reached within CONNECT_TIMEOUT seconds."""
    try:
        import distributed
    except ImportError:
        raise UsageError(f"--scheduler needs the optional 'distributed' package, which is not installed: "
                         f"{INSTALL_HINT}") from None
    # Reach it first: a Client whose constructor fails still tries to close at
    # garbage collection, and prints a traceback from there after a long wait.
    try:
        asyncio.run(_reach(address))
    except Exception as err:  # OSError (refused, timed out), ValueError (no port), TypeError (bad scheme)
        raise UsageError(f"cannot reach the Dask scheduler at '{address}': {first_line(err)}; "
                         "start one with 'dask scheduler' and give its address, e.g. tcp://HOST:8786") from None
    return distributed.Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)


async def _reach(address: str) -> None:
    from distributed.comm import connect as comm_connect
    from distributed.security import Security

    # TLS settings from dask's configuration, as the Client itself takes them.
    comm = await comm_connect(address, timeout=CONNECT_TIMEOUT, **Security().get_connection_args("client"))
    await comm.close()


def progress_bar(total: int, *, enabled: bool, unit: str):
    """A tqdm bar on stderr, or one that prints nothing (`enabled` False: not
    a terminal, or -q). Use it as a context manager; `update(1)` per task.
    It clears itself when done: the table follows, or an error line."""
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, file=sys.stderr, disable=not enabled, leave=False)
