import time


def test_allocates_memory():
    # 50 MiB, every page touched, held long enough for memory_profiler (0.1 s sampling) to see it.
    block = bytearray(50 * 1024 * 1024)
    for offset in range(0, len(block), 4096):
        block[offset] = 1
    time.sleep(0.3)
    assert block[4096] == 1
    del block
