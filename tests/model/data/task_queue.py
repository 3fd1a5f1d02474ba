"""A small task queue with priorities, retries and a worker pool.

This module is test data for nanoserve: ordinary Python source that the pycoder model
has never seen, to measure its perplexity with each of its weight types.
"""

import heapq
import itertools
import logging
import threading
import time

__all__ = ["Task", "TaskQueue", "Worker", "QueueClosed"]

logger = logging.getLogger(__name__)


class QueueClosed(Exception):
    """Raised when a task is added to a queue that has been closed."""


class Task:
    """A unit of work: a callable with its arguments and a priority."""

    _counter = itertools.count()

    def __init__(self, func, *args, priority=0, retries=0, **kwargs):
        if not callable(func):
            raise TypeError("func must be callable, not %r" % (func,))
        if retries < 0:
            raise ValueError("retries must be non-negative")
        self.func = func
        self.args = args
        self.kwargs = kwargs
        self.priority = priority
        self.retries = retries
        self.attempts = 0
        self.result = None
        self.error = None
        self._order = next(self._counter)

    def __lt__(self, other):
        if self.priority != other.priority:
            return self.priority > other.priority
        return self._order < other._order

    def __repr__(self):
        name = getattr(self.func, "__name__", repr(self.func))
        return "<Task %s priority=%d attempts=%d>" % (name, self.priority, self.attempts)

    def run(self):
        """Call the function once and remember its result or its exception."""
        self.attempts += 1
        try:
            self.result = self.func(*self.args, **self.kwargs)
        except Exception as exc:
            self.error = exc
            return False
        self.error = None
        return True

    @property
    def can_retry(self):
        return self.error is not None and self.attempts <= self.retries


class TaskQueue:
    """A thread-safe priority queue of tasks."""

    def __init__(self, maxsize=0):
        self.maxsize = maxsize
        self._heap = []
        self._lock = threading.Lock()
        self._not_empty = threading.Condition(self._lock)
        self._not_full = threading.Condition(self._lock)
        self._closed = False

    def __len__(self):
        with self._lock:
            return len(self._heap)

    def put(self, task, timeout=None):
        with self._not_full:
            if self._closed:
                raise QueueClosed("queue is closed")
            if self.maxsize > 0:
                deadline = None if timeout is None else time.monotonic() + timeout
                while len(self._heap) >= self.maxsize:
                    remaining = None if deadline is None else deadline - time.monotonic()
                    if remaining is not None and remaining <= 0:
                        raise TimeoutError("queue is full")
                    self._not_full.wait(remaining)
            heapq.heappush(self._heap, task)
            self._not_empty.notify()

    def get(self, timeout=None):
        with self._not_empty:
            while not self._heap:
                if self._closed:
                    return None
                if not self._not_empty.wait(timeout):
                    return None
            task = heapq.heappop(self._heap)
            self._not_full.notify()
            return task

    def close(self):
        with self._lock:
            self._closed = True
            self._not_empty.notify_all()
            self._not_full.notify_all()


class Worker(threading.Thread):
    """Takes tasks from a queue and runs them until the queue is closed."""

    def __init__(self, queue, name=None):
        super().__init__(name=name, daemon=True)
        self.queue = queue
        self.done = []
        self.failed = []

    def run(self):
        while True:
            task = self.queue.get(timeout=1.0)
            if task is None:
                if self.queue._closed:
                    break
                continue
            if task.run():
                self.done.append(task)
            elif task.can_retry:
                logger.debug("retrying %r after %s", task, task.error)
                self.queue.put(task)
            else:
                logger.warning("task %r failed: %s", task, task.error)
                self.failed.append(task)


def run_all(funcs, workers=4):
    """Run every function on a pool of workers and return their results in order."""
    queue = TaskQueue()
    tasks = [Task(func) for func in funcs]
    for task in tasks:
        queue.put(task)
    pool = [Worker(queue, name="worker-%d" % i) for i in range(workers)]
    for worker in pool:
        worker.start()
    while len(queue):
        time.sleep(0.01)
    queue.close()
    for worker in pool:
        worker.join()
    return [task.result for task in tasks]
