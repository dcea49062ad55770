import os
import socket
import tempfile
import threading

import pytest
from work import SCALE

FILE_KB = [16, 64, 256, 1024, 4096, 8192]
FILES = [10, 50, 200, 500]
SOCKET_KB = [64, 512, 4096, 16384]


@pytest.mark.parametrize("kb", FILE_KB, ids=lambda kb: f"file_{kb}kb")
def test_file_write_read(kb, tmp_path):
    path = tmp_path / "data.bin"
    payload = os.urandom(int(kb * 1024 * SCALE))
    with open(path, "wb") as handle:
        handle.write(payload)
        handle.flush()
        os.fsync(handle.fileno())
    assert path.read_bytes() == payload


@pytest.mark.parametrize("count", FILES, ids=lambda n: f"files_{n}")
def test_many_files(count):
    with tempfile.TemporaryDirectory() as directory:
        for i in range(int(count * SCALE)):
            with open(os.path.join(directory, f"f{i}"), "w") as handle:
                handle.write("x" * 100)
        assert len(os.listdir(directory)) == int(count * SCALE)


def _echo(server):
    connection, _ = server.accept()
    with connection:
        while chunk := connection.recv(65536):
            connection.sendall(chunk)


@pytest.mark.parametrize("kb", SOCKET_KB, ids=lambda kb: f"echo_{kb}kb")
def test_socket_echo(kb):
    # A TCP echo over loopback: the kernel's time more than the test's own.
    with socket.create_server(("127.0.0.1", 0)) as server:
        thread = threading.Thread(target=_echo, args=(server,))
        thread.start()
        payload = os.urandom(int(kb * 1024 * SCALE))
        received = bytearray()
        with socket.create_connection(server.getsockname()) as client:
            sender = threading.Thread(target=client.sendall, args=(payload,))
            sender.start()
            while len(received) < len(payload):
                received += client.recv(65536)
            sender.join()
        thread.join()
        assert bytes(received) == payload
