"""Workloads whose resource use pytest-monitor records, run many times by
bench/studies/model-accuracy/real-series/record.py.

Each test does a kind of work a real suite does: allocate a little or a lot, sleep, compute, touch the disk, or a mix.
The noise is the machine's own (scheduler, page cache, allocator), except where a test says it draws its size, as a
test over varying inputs would.
"""

import hashlib
import os
import random
import tempfile
import time


def test_small_alloc():
    blocks = [bytearray(64 * 1024) for _ in range(48)]
    assert len(blocks) == 48


def test_tiny_alloc():
    data = [str(i) for i in range(20_000)]
    assert data[-1] == "19999"


def test_large_alloc():
    block = bytearray(100 * 1024 * 1024)
    block[::4096] = b"x" * len(block[::4096])
    # Held a while: the client samples memory at intervals.
    time.sleep(0.2)
    assert block[0] == ord("x")


def test_medium_alloc_list():
    values = list(range(1_500_000))
    assert sum(values[:10]) == 45


def test_sleep_short():
    time.sleep(0.05)


def test_sleep_long():
    time.sleep(0.3)


def test_compute_hash():
    digest = b"seed"
    for _ in range(400_000):
        digest = hashlib.sha256(digest).digest()
    assert len(digest) == 32


def test_compute_python_loop():
    total = 0
    for i in range(1_200_000):
        total += i * i % 7
    assert total > 0


def test_compute_tiny():
    assert sum(i for i in range(2_000)) == 1_999_000


def test_io_write_read():
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "data.bin")
        payload = os.urandom(8 * 1024 * 1024)
        with open(path, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        with open(path, "rb") as handle:
            assert handle.read() == payload


def test_io_many_files():
    with tempfile.TemporaryDirectory() as directory:
        for i in range(300):
            with open(os.path.join(directory, f"f{i}"), "w") as handle:
                handle.write("x" * 100)
        assert len(os.listdir(directory)) == 300


def test_mixed_sleep_compute():
    time.sleep(0.02)
    digest = b"mixed"
    for _ in range(20_000):
        digest = hashlib.md5(digest).digest()
    blocks = [bytearray(1024 * 1024) for _ in range(3)]
    assert len(blocks) == 3


def test_varying_input_compute():
    # A test over inputs of varying size: wide noise of its own.
    size = int(400_000 * random.uniform(0.7, 1.3))
    assert sum(i % 3 for i in range(size)) >= 0


def test_varying_input_alloc():
    size = int(20 * 1024 * 1024 * random.uniform(0.5, 1.5))
    block = bytearray(size)
    block[::4096] = b"y" * len(block[::4096])
    time.sleep(0.1)
    assert len(block) == size


def test_sort_strings():
    words = [hashlib.md5(str(i).encode()).hexdigest() for i in range(120_000)]
    words.sort()
    assert len(words) == 120_000
