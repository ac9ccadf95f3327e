"""The object store's thread hops: blocking work (database, files) run off the event loop
on a pool of its own, with the caller's context (the cloud's runtime) copied, as
starlette's ``run_in_threadpool`` does but through asyncio's executor directly: anyio's
cancel scopes and capacity limiter cost ~4 times the hop itself, and a small object's
request makes several."""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools

MAX_THREADS = 40  # starlette's default capacity: uploads wait on fsync in these

_pool: concurrent.futures.ThreadPoolExecutor | None = None


def _executor() -> concurrent.futures.ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = concurrent.futures.ThreadPoolExecutor(MAX_THREADS,
                                                      thread_name_prefix="objectstore")
    return _pool


async def run_in_threadpool(func, *args, **kwargs):
    context = contextvars.copy_context()
    call = functools.partial(context.run, func, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(_executor(), call)
