"""autograder.hub.bridge: connections carried through a Unix socket, and the command beside them."""

from __future__ import annotations

import socket
import socketserver
import subprocess
import sys
import threading
import time

import pytest

from autograder.hub import bridge
from autograder.hub.launch import free_port


class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        while data := self.request.recv(1024):
            self.request.sendall(data.upper())


def connect(port: int, timeout: float = 10) -> socket.socket:
    deadline = time.monotonic() + timeout
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=5)
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_a_connection_goes_through_the_unix_socket_and_back(tmp_path):
    with socketserver.ThreadingTCPServer(("127.0.0.1", 0), Echo) as far:
        threading.Thread(target=far.serve_forever, daemon=True).start()
        door, near = tmp_path / "door.sock", free_port()
        forwards = ["--forward", f"tcp:{near}=unix:{door}", "--forward", f"unix:{door}=tcp:{far.server_address[1]}"]
        command = [sys.executable, "-m", "autograder.hub.bridge", *forwards, "--", "sleep", "30"]
        process = subprocess.Popen(command)
        try:
            with connect(near) as client:
                client.sendall(b"through the door")
                assert client.recv(1024) == b"THROUGH THE DOOR"
            assert door.stat().st_mode & 0o777 == 0o600  # the account's own
        finally:
            process.terminate()
            assert process.wait(10) == 128 + 15  # the command stopped by the SIGTERM passed on, the bridge with it
            far.shutdown()


def test_a_far_side_that_hangs_up_on_unread_data_closes_the_near_connection(tmp_path):
    """The far side accepts, then closes with the request unread (the sandbox's half of the bridge when the server
    behind it is not listening yet): the bridge reads a reset, and must close the near connection too. Left open,
    the hub waited on it for aiohttp's 300 s, past its own 120 s, and the student's server never became ready."""
    door, near = tmp_path / "door.sock", free_port()
    with socket.socket(socket.AF_UNIX) as far:
        far.bind(str(door))
        far.listen()
        command = [sys.executable, "-m", "autograder.hub.bridge", "--forward", f"tcp:{near}=unix:{door}", "--"]
        process = subprocess.Popen([*command, "sleep", "30"])
        try:
            with connect(near) as client:
                client.sendall(b"GET /user/student1/api HTTP/1.1\r\n\r\n")
                accepted, _ = far.accept()
                accepted.settimeout(10)
                assert accepted.recv(64, socket.MSG_PEEK)  # the request is there, unread
                accepted.close()  # with data unread: the bridge's next read is a reset
                client.settimeout(10)
                try:
                    answer = client.recv(1024)
                except ConnectionResetError:
                    answer = b""
                assert answer == b"", answer  # closed, not left waiting (socket.timeout)
        finally:
            process.terminate()
            process.wait(10)


def test_the_bridge_ends_with_its_command_and_its_status():
    done = subprocess.run([sys.executable, "-m", "autograder.hub.bridge", "--", "sh", "-c", "exit 3"], timeout=30)
    assert done.returncode == 3


def test_a_forward_that_is_not_listen_equals_connect_is_refused():
    with pytest.raises(Exception, match="is not LISTEN=CONNECT"):
        bridge.parse_forward("tcp:80")
    with pytest.raises(Exception, match="is neither tcp:PORT nor unix:PATH"):
        bridge.parse_forward("tcp:http=unix:/x")
