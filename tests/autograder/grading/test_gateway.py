"""A class graded on a dask-gateway cluster (autograder.grading.gateway), tested without a gateway's server: what
is asked is set on the options a server offers (dask_gateway.options.Options, the client's own class, built here
as a server's answer would make it), each refusal says what to fix, a gateway out of reach stops the run with a
sentence, and the command line makes the same GatewayAccess."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

pytest.importorskip("dask_gateway", reason="dask-gateway is not installed: pip install -e '.[cluster]'")

from dask_gateway.options import Float, Integer, Options, String

from autograder.course import classroom
from autograder.grading.gateway import GatewayAccess
from autograder.grading.task import GradingError
from autograder.service import command as service_command

TRY_OPEN = """
import sys
from autograder.grading.gateway import GatewayAccess
from autograder.grading.task import GradingError
try:
    GatewayAccess(sys.argv[1]).open()
except GradingError as error:
    print(f"GradingError: {error}")
"""


def offered() -> Options:
    """The options a gateway's server offers (its c.Backend.cluster_options), with its own bounds."""
    return Options(
        Integer("worker_cores", default=1, min=1, max=4),
        Float("worker_memory", default=2, min=1, max=8),
        String("image", default="daskgateway/dask-gateway:latest"),
    )


def test_what_is_asked_is_set_on_the_servers_options():
    access = GatewayAccess("https://gw.example.edu", image="r/attention-grader:abc", cores=2.0, memory=3.5)
    options = access.fill(offered())
    assert dict(options) == {"worker_cores": 2, "worker_memory": 3.5, "image": "r/attention-grader:abc"}
    untouched = GatewayAccess("https://gw.example.edu").fill(offered())  # nothing asked: the server's defaults
    assert dict(untouched) == {"worker_cores": 1, "worker_memory": 2, "image": "daskgateway/dask-gateway:latest"}


def test_a_server_that_names_its_options_otherwise_is_told_in_its_own_names():
    renamed = {"image": "image", "cores": "cores", "memory": "memory_gib"}
    server = Options(Integer("cores", default=1), Float("memory_gib", default=2), String("image", default="x"))
    access = GatewayAccess("https://gw.example.edu", cores=3, memory=6, option_names=renamed)
    assert dict(access.fill(server)) == {"cores": 3, "memory_gib": 6, "image": "x"}


def test_each_refusal_names_the_option_and_what_to_do():
    with pytest.raises(GradingError, match=r"refuses worker_cores = 8: worker_cores must be <= 4"):
        GatewayAccess("https://gw.example.edu", cores=8).fill(offered())
    without_image = Options(Integer("worker_cores", default=1))
    with pytest.raises(GradingError, match=r"offers no option 'image' \(it offers worker_cores\): leave it out"):
        GatewayAccess("https://gw.example.edu", image="r/g:1").fill(without_image)
    with pytest.raises(GradingError, match=r"--adapt 5,2: the workers' bounds must be 0 <= minimum <= maximum"):
        GatewayAccess("https://gw.example.edu", minimum=5, maximum=2).asked()
    with pytest.raises(GradingError, match=r"--gateway-memory -1: it must be more than 0"):
        GatewayAccess("https://gw.example.edu", memory=-1).asked()


def test_a_gateway_out_of_reach_stops_the_run_with_a_sentence():
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # in a process of its own: dask-gateway's client leaves its event loop's thread behind, and after it CPython
    # 3.11's ast.parse in this process may fail ("AST constructor recursion depth mismatch", test_architecture)
    tried = subprocess.run(
        [sys.executable, "-c", TRY_OPEN, f"http://127.0.0.1:{port}"], capture_output=True, text=True, timeout=60
    )
    said = tried.stdout.strip()
    assert said.startswith(f"GradingError: the dask-gateway at http://127.0.0.1:{port} cannot start a cluster ("), said
    assert said.endswith("check the address and the authentication (dask-gateway's gateway.auth), or use --scheduler")


def test_the_command_line_makes_the_same_access_and_refuses_mixtures(capsys):
    flags = ["--gateway", "https://gw.example.edu", "--gateway-image", "r/g:1", "--gateway-cores", "2"]
    args = classroom.parser().parse_args([*flags, "--gateway-memory", "4", "--adapt", "2,30"])
    options = classroom.options_from(args)
    assert options.scheduler == GatewayAccess("https://gw.example.edu", "r/g:1", 2.0, 4.0, minimum=2, maximum=30)
    assert str(options.scheduler) == "the dask-gateway at https://gw.example.edu"
    assert classroom.main([*flags, "--scheduler", "tcp://10.0.0.5:8786"]) == 1
    assert "--gateway and --scheduler both given: grade on one of them" in capsys.readouterr().err
    assert classroom.main(["--gateway-cores", "2"]) == 1
    assert "--gateway-cores given without --gateway" in capsys.readouterr().err


def test_the_service_takes_the_same_gateway_options_and_refusals(capsys):
    """Refused by the service's command line, before the service (and the hub extra it needs) is imported."""
    with pytest.raises(SystemExit) as stopped:
        service_command.main(["--course", "c", "--exchange", "e", "--adapt", "1,8"])
    assert stopped.value.code == 2
    assert "--adapt given without --gateway: name the dask-gateway too" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stopped:
        service_command.main(
            ["--course", "c", "--exchange", "e", "--gateway", "https://gw.example.edu", "--adapt", "0,0"]
        )
    assert stopped.value.code == 2
    assert "--adapt 0,0: the workers' bounds must be 0 <= minimum <= maximum, maximum at least 1" in (
        capsys.readouterr().err
    )


def test_a_pool_on_any_worker_submits_without_holding_and_closes_its_cluster():
    pytest.importorskip("jupyterhub", reason="the grading service is a JupyterHub service: pip install -e '.[hub]'")
    from autograder.service import app  # after the skip: a JupyterHub service

    class Recorded:
        def __init__(self):
            self.calls, self.closed = [], False

        def submit(self, function, *args, **keywords):
            self.calls.append((function, args, keywords))

        def close(self):
            self.closed = True

    client, cluster = Recorded(), Recorded()
    pool = app.HeldTo(client, None, cluster)
    pool.submit(sum, [1], start=2)
    held = app.HeldTo(client, ["tls://10.0.0.7:4000"])
    held.submit(sum, [1])
    assert client.calls == [
        (sum, ([1],), {"start": 2}),
        (sum, ([1],), {"workers": ["tls://10.0.0.7:4000"], "allow_other_workers": False}),
    ]
    pool.close()
    assert client.closed and cluster.closed
