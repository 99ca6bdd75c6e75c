"""Connections carried between two network namespaces through Unix sockets, then a command run beside them.

A student's Jupyter server on the hub runs in a sandbox with a network of its own (bubblewrap --unshare-net: only
its own loopback), so nothing on the machine's 127.0.0.1 (the hub's API, the proxy's API, other users' servers)
can be reached from it. Two doors are opened, each a pair of forwarders joined by a Unix socket in a folder both
sides see:

- in: the proxy connects to 127.0.0.1:PORT on the machine -> socket -> 127.0.0.1:PORT inside (the server);
- out: the server (and its kernels) connect to 127.0.0.1:PUBLIC inside -> socket -> 127.0.0.1:PUBLIC on the machine,
  the proxy's public port, the one way to the hub (its API under /hub/api) and to other servers, as for a browser.

    python -m autograder.hub.bridge --forward tcp:8123=unix:/run/in.sock --forward unix:/run/out.sock=tcp:8000 -- CMD...

Each --forward listens on the left and connects every accepted connection to the right. The command runs as a child;
the bridge ends when it ends (with its exit status) and passes SIGTERM and SIGINT on to it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

CHUNK = 65536


@dataclass(frozen=True)
class Endpoint:
    """One side of a forward: a TCP port on 127.0.0.1 or a Unix socket's path."""

    port: int | None = None
    path: Path | None = None

    @classmethod
    def parse(cls, text: str) -> Endpoint:
        kind, _, where = text.partition(":")
        if kind == "tcp" and where.isdigit():
            return cls(port=int(where))
        if kind == "unix" and where:
            return cls(path=Path(where))
        raise argparse.ArgumentTypeError(f"{text!r} is neither tcp:PORT nor unix:PATH")

    async def connect(self):
        if self.port is not None:
            return await asyncio.open_connection("127.0.0.1", self.port)
        return await asyncio.open_unix_connection(str(self.path))

    async def listen(self, handler):
        if self.port is not None:
            return await asyncio.start_server(handler, "127.0.0.1", self.port)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        server = await asyncio.start_unix_server(handler, str(self.path))
        self.path.chmod(0o600)  # the account's own: another user on the machine cannot use the door
        return server


def parse_forward(text: str) -> tuple[Endpoint, Endpoint]:
    left, separator, right = text.partition("=")
    if not separator:
        raise argparse.ArgumentTypeError(f"{text!r} is not LISTEN=CONNECT (tcp:8123=unix:/run/in.sock)")
    return Endpoint.parse(left), Endpoint.parse(right)


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copies ``reader`` to ``writer`` until it ends, then ends ``writer`` too: half-closed after an end of file,
    closed after an error. A reset (the far side closed with our data unread: the sandbox's half when the server
    behind it was not listening yet) must close the near connection, else its client waits for an answer for ever."""
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        writer.close()


def forwarder(target: Endpoint):
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        far_writer = None
        try:
            far_reader, far_writer = await target.connect()
            await asyncio.gather(pipe(reader, far_writer), pipe(far_reader, writer))
        except OSError:  # the other side is not there (yet): the connection is closed, the client tries again
            pass
        except asyncio.CancelledError:  # the command ended: the bridge closes every connection with it
            pass
        finally:  # whatever ended it (asyncio logs an unexpected error), neither side is left open
            for side in (writer, far_writer):
                if side is not None:
                    side.close()

    return handle


async def serve(forwards: list[tuple[Endpoint, Endpoint]], command: list[str]) -> int:
    servers = [await listen.listen(forwarder(target)) for listen, target in forwards]
    child = await asyncio.create_subprocess_exec(*command)
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, lambda number=number: child.returncode is None and child.send_signal(number))
    status = await child.wait()
    for server in servers:
        server.close()
    return status


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.hub.bridge", description=__doc__.split("\n\n")[0])
    parser.add_argument("--forward", type=parse_forward, action="append", default=[], help="LISTEN=CONNECT")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- the command to run beside the forwarders")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("name the command to run after --")
    status = asyncio.run(serve(args.forward, command))
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main())
