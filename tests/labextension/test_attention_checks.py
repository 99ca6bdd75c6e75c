"""labextension/attention_checks: the student's server asks the grading service for its owner's newest verdict
through the hub's proxy, with the service's host name and the server's own token, and nothing of the request it
answers (tests/autograder/hub/test_launch.py drives it in a browser, with the Lab extension, on a real hub)."""

import asyncio
import sys
from pathlib import Path

import pytest

pytest.importorskip("jupyter_server", reason="the server extension runs in a Jupyter server: pip install jupyterlab")

from tornado import httpclient, web

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "labextension"))
import attention_checks

HUB = {
    "ATTENTION_HUB_CHECKS_URL": "http://grading--service.localhost:8123/services/grading/",
    "ATTENTION_HUB_PROXY_URL": "http://127.0.0.1:8123",
    "JUPYTERHUB_API_TOKEN": "the-servers-own-token",
}


def test_the_request_goes_to_the_proxy_with_the_services_host_name_and_the_servers_own_token():
    request = attention_checks.service_request(HUB)
    assert request.url == "http://127.0.0.1:8123/services/grading/api/latest"
    assert request.headers["Host"] == "grading--service.localhost:8123"  # the proxy routes by it
    assert request.headers["Authorization"] == "token the-servers-own-token"
    assert request.follow_redirects is False  # a login page is an error here, never followed
    for missing in HUB:  # a server the hub did not set up for it asks nobody
        assert attention_checks.service_request({k: v for k, v in HUB.items() if k != missing}) is None


def test_the_proxy_receives_what_the_service_needs_and_nothing_else():
    seen = {}

    class Proxy(web.RequestHandler):  # stands in for the proxy and the service behind it
        def get(self):
            seen.update(path=self.request.path, query=self.request.query, headers=dict(self.request.headers))
            self.finish({"student": "student1", "newest": None})

    async def ask():
        server = web.Application([(r"/services/grading/api/latest", Proxy)]).listen(0, address="127.0.0.1")
        port = next(iter(server._sockets.values())).getsockname()[1]
        request = attention_checks.service_request(HUB | {"ATTENTION_HUB_PROXY_URL": f"http://127.0.0.1:{port}"})
        try:
            return await httpclient.AsyncHTTPClient().fetch(request)
        finally:
            server.stop()

    response = asyncio.run(ask())
    assert response.code == 200 and b'"student": "student1"' in response.body
    assert seen["path"] == "/services/grading/api/latest" and seen["query"] == ""
    assert seen["headers"]["Host"] == "grading--service.localhost:8123"
    assert seen["headers"]["Authorization"] == "token the-servers-own-token"
    assert "Cookie" not in seen["headers"]  # the browser's cookies stay with the student's server
