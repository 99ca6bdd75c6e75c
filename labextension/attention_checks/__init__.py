"""The student's newest verdict for their JupyterLab: a Jupyter server extension on the student's own server.

    GET <server>/attention-checks/latest   ->   the grading service's api/latest, asked as the server's owner

The Lab extension beside it (lib/index.js) asks this server, on the student's own origin; this server asks the
course's grading service (autograder.service.app) through the hub's proxy, with its own JupyterHub token
(``JUPYTERHUB_API_TOKEN``, the token of the server's owner, which JupyterHub lets open the service:
``c.Spawner.server_token_scopes`` in hub/jupyterhub_config.py). So the browser never talks to another origin
and the service needs no CORS header: the service answers with the token owner's own attempts, and nothing a
request to this handler carries (no parameter, no header) is passed on. Only the server's owner may call it
(Jupyter's own authentication, as for every API of the server).

The hub names where things are (hub/jupyterhub_config.py's give_role):

    ATTENTION_HUB_CHECKS_URL   the service's public page, e.g. http://grading--service.localhost:8000/services/grading/
    ATTENTION_HUB_PROXY_URL    where this server reaches the hub's proxy, e.g. http://127.0.0.1:8000 (in a
                               student's sandbox, the bridge's one door out)

It imports nothing of the course's grader: it runs in the student's sandbox, which shows none of it.
"""

from __future__ import annotations

import json
import os
from urllib.parse import urlsplit

from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import httpclient, web

__version__ = "0.1.0"
CHECKS_URL = "ATTENTION_HUB_CHECKS_URL"
PROXY_URL = "ATTENTION_HUB_PROXY_URL"
TIMEOUT = 10.0  # seconds for the service's answer


def service_request(environment: dict) -> httpclient.HTTPRequest | None:
    """The request for the owner's newest verdict: to the proxy, with the service's host name (the proxy routes
    by it) and the server's own token; None when the hub named no service."""
    page, proxy, token = (environment.get(name, "") for name in (CHECKS_URL, PROXY_URL, "JUPYTERHUB_API_TOKEN"))
    if not (page and proxy and token):
        return None
    public = urlsplit(page)
    return httpclient.HTTPRequest(
        proxy.rstrip("/") + url_path_join(public.path, "api", "latest"),
        headers={"Host": public.netloc, "Authorization": f"token {token}", "Accept": "application/json"},
        follow_redirects=False,
        request_timeout=TIMEOUT,
    )


class Latest(APIHandler):
    """The owner's newest Submit and its verdict, as the grading service shows it to them, and its page's address."""

    @web.authenticated
    async def get(self):
        request = service_request(dict(os.environ))
        if request is None:
            raise web.HTTPError(404, "no grading service on this hub")
        response = await httpclient.AsyncHTTPClient().fetch(request, raise_error=False)
        if response.code != 200:
            self.log.warning("the grading service answered %s to %s", response.code, request.url)
            raise web.HTTPError(502, f"the grading service answered {response.code}")
        answer = json.loads(response.body)
        answer["page"] = os.environ[CHECKS_URL]
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps(answer))


def _jupyter_server_extension_points():
    return [{"module": "attention_checks"}]


def _jupyter_labextension_paths():
    return [{"src": "labextension", "dest": "@attention-course/checks"}]


def _load_jupyter_server_extension(server_app):
    base = server_app.web_app.settings["base_url"]
    server_app.web_app.add_handlers(".*$", [(url_path_join(base, "attention-checks", "latest"), Latest)])
