"""A real ngshare (the PyPI package's tornado application, its handlers, database and storage) on 127.0.0.1, for the
exchange's tests, with a stand-in for the one JupyterHub API it asks: ``GET <hub>/user`` with ``Authorization: token
T``, answered from a table of tokens, as a hub answers for its accounts. So each request's user is the one its token
proves (ngshare's production path, not its ``--vngshare`` mode, where any caller names any user in the query).

ngshare's own entry point listens on 0.0.0.0 outside vngshare mode; this one builds the same application and listens
on 127.0.0.1 only, on a port the system picks, and prints it. It stops when its parent (the test) closes its input.

    python tests/ngshare_service.py DIR TOKENS_JSON ADMIN   # prints "ngshare on http://127.0.0.1:PORT/api/"
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def hub_stand_in(tokens: dict[str, str]) -> ThreadingHTTPServer:
    """JupyterHub's ``/hub/api/user`` for the accounts in ``tokens`` (token: account name), in a thread of its own:
    ngshare asks it synchronously from inside its event loop."""

    class User(BaseHTTPRequestHandler):
        def do_GET(self):
            header = self.headers.get("Authorization", "")
            name = tokens.get(header.removeprefix("token ")) if self.path == "/hub/api/user" else None
            body = json.dumps({"kind": "user", "name": name, "admin": False} if name else {"error": "no"}).encode()
            self.send_response(200 if name else 403)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), User)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main(folder: Path, tokens: dict[str, str], admin: str) -> None:
    hub = hub_stand_in(tokens)
    os.environ.update(
        JUPYTERHUB_API_URL=f"http://127.0.0.1:{hub.server_address[1]}/hub/api",
        JUPYTERHUB_API_TOKEN="ngshare-service-token",
        JUPYTERHUB_CLIENT_ID="service-ngshare",
        JUPYTERHUB_SERVICE_PREFIX="/services/ngshare/",
    )
    from ngshare import dbutil
    from ngshare.ngshare import MyApplication
    from tornado.httpserver import HTTPServer
    from tornado.ioloop import IOLoop

    database, storage = f"sqlite:///{folder / 'ngshare.db'}", str(folder / "files") + "/"
    dbutil.upgrade(database)
    app = MyApplication("/api/", database, storage, admin=[admin], autoreload=False)
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen(128)
    listening.setblocking(False)
    HTTPServer(app, max_body_size=200 * 2**20).add_sockets([listening])
    loop = IOLoop.current()

    def stop_when_parent_goes():
        sys.stdin.read()  # the test closes its end (or dies): stop
        loop.add_callback(loop.stop)

    threading.Thread(target=stop_when_parent_goes, daemon=True).start()
    print(f"ngshare on http://127.0.0.1:{listening.getsockname()[1]}/api/", flush=True)
    loop.start()


if __name__ == "__main__":
    main(Path(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3])
