"""A generated suite of about 200 tests for bench/studies/gate/gate.ts's recorded series, run many times by
record-suite.py.

Each family does a kind of work a real suite does — CPU loops, hashing, sleeps, small and large allocations, one
allocation that is small or large from run to run, file I/O, a mix — and each test of a family its own amount of it,
drawn once from a fixed seed (the suite is the same in every run). The noise is the machine's own (scheduler, page
cache, allocator, the background load record-suite.py runs beside it), except in the tests that say they draw.
"""

import hashlib
import os
import random
import tempfile
import time

import pytest

_PLAN = random.Random(32)


def _amounts(count, low, high):
    """`count` amounts log-uniform in [low, high], fixed by the suite's seed."""
    return [round(low * (high / low) ** _PLAN.random()) for _ in range(count)]


CPU_LOOPS = _amounts(50, 2_000, 300_000)
HASHES = _amounts(30, 200, 30_000)
SLEEPS_MS = _amounts(25, 1, 80)
SMALL_ALLOCS_KB = _amounts(30, 16, 6_000)
LARGE_ALLOCS_MB = _amounts(8, 20, 120)
FILE_WRITES_KB = _amounts(14, 16, 4_000)
MANY_FILES = _amounts(6, 10, 400)
MIXED = _amounts(20, 1_000, 30_000)
TINY = list(range(15))
VARYING = _amounts(5, 20_000, 200_000)


def _touched(size):
    # Every page written, so that the memory is resident (memory_profiler samples the RSS).
    block = bytearray(size)
    for offset in range(0, len(block), 4096):
        block[offset] = 1
    return block


@pytest.mark.parametrize("n", CPU_LOOPS)
def test_cpu_loop(n):
    total = 0
    for i in range(n):
        total += i * i % 7
    assert total >= 0


@pytest.mark.parametrize("n", HASHES)
def test_hash(n):
    digest = b"seed"
    for _ in range(n):
        digest = hashlib.sha256(digest).digest()
    assert len(digest) == 32


@pytest.mark.parametrize("ms", SLEEPS_MS)
def test_sleep(ms):
    time.sleep(ms / 1000)


@pytest.mark.parametrize("kb", SMALL_ALLOCS_KB)
def test_alloc_small(kb):
    blocks = [bytearray(1024) for _ in range(kb)]
    assert len(blocks) == kb


@pytest.mark.parametrize("mb", LARGE_ALLOCS_MB)
def test_alloc_large(mb):
    block = _touched(mb * 1024 * 1024)
    # Held a while: the client samples memory at intervals.
    time.sleep(0.12)
    assert block[0] == 1


def test_alloc_bimodal():
    # An input that is large in about one run in five: 45 MB, else 2 MB.
    mb = 45 if random.random() < 0.2 else 2
    block = _touched(mb * 1024 * 1024)
    time.sleep(0.12)
    assert block[0] == 1


@pytest.mark.parametrize("kb", FILE_WRITES_KB)
def test_file_write_read(kb):
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "data.bin")
        payload = os.urandom(kb * 1024)
        with open(path, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        with open(path, "rb") as handle:
            assert handle.read() == payload


@pytest.mark.parametrize("count", MANY_FILES)
def test_many_files(count):
    with tempfile.TemporaryDirectory() as directory:
        for i in range(count):
            with open(os.path.join(directory, f"f{i}"), "w") as handle:
                handle.write("x" * 100)
        assert len(os.listdir(directory)) == count


@pytest.mark.parametrize("n", MIXED)
def test_mixed(n):
    time.sleep(0.005)
    digest = b"mixed"
    for _ in range(n):
        digest = hashlib.md5(digest).digest()
    blocks = [bytearray(64 * 1024) for _ in range(n // 2_000 + 1)]
    assert len(blocks) >= 1


@pytest.mark.parametrize("i", TINY)
def test_tiny(i):
    assert sum(range(i * 100)) >= 0


@pytest.mark.parametrize("n", VARYING)
def test_varying_input(n):
    # A test over inputs of varying size: wide noise of its own.
    size = int(n * random.uniform(0.7, 1.3))
    assert sum(i % 3 for i in range(size)) >= 0
