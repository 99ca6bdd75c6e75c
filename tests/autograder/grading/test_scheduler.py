"""A class graded through a Dask scheduler reached over TLS (autograder.grading.scheduler): a real scheduler and
worker on 127.0.0.1 speaking tls:// with certificates made here, a worker holding another grader refused with a
sentence, and every disagreement between the address and the certificate files refused before anything is sent.
The grading task is the instant one (tests/gradebooks.py), so no kernel runs."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from distributed import LocalCluster
from distributed.security import Security
from gradebooks import instant, scores, synthetic_course

from autograder.course import classroom
from autograder.grading import dispatch
from autograder.grading.scheduler import SchedulerAccess, connect
from autograder.grading.task import GradingError
from autograder.service import command as service_command

NO_HUB = "the grading service is a JupyterHub service: pip install -e '.[hub]'"
OTHER_GRADER = """
import autograder.grading.task as task

task.grader_fingerprint = lambda: "f" * 64  # a worker at another commit of the grader
"""


@pytest.fixture(scope="module")
def certificates(tmp_path_factory) -> dict[str, Path]:
    """A CA-signed certificate and its key (distributed's own Security.temporary: the CA and the certificate are
    one self-signed certificate), written to files as an instructor's would be."""
    folder = tmp_path_factory.mktemp("tls")
    made = Security.temporary()
    files = {"ca_file": made.tls_ca_file, "cert_file": made.tls_client_cert, "key_file": made.tls_client_key}
    for name, contents in files.items():
        (folder / f"{name}.pem").write_text(contents)
    return {name: folder / f"{name}.pem" for name in files}


@pytest.fixture(scope="module")
def tls_cluster(certificates):
    """A scheduler and one worker on 127.0.0.1 that accept TLS connections only (require_encryption)."""
    ca, cert, key = (str(certificates[name]) for name in ("ca_file", "cert_file", "key_file"))
    security = Security(
        tls_ca_file=ca,
        tls_scheduler_cert=cert,
        tls_scheduler_key=key,
        tls_worker_cert=cert,
        tls_worker_key=key,
        tls_client_cert=cert,
        tls_client_key=key,
        require_encryption=True,
    )
    with LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,
        protocol="tls://",
        host="127.0.0.1",
        security=security,
        dashboard_address=None,
        silence_logs=40,
    ) as cluster:
        yield cluster.scheduler_address


def test_the_scheduler_speaks_tls_only(tls_cluster):
    assert tls_cluster.startswith("tls://127.0.0.1:")
    plain = tls_cluster.replace("tls://", "tcp://")
    with pytest.raises(GradingError, match=f"cannot reach the Dask scheduler at {plain}"):
        connect(plain, timeout="2s")  # a plain connection is not answered


@pytest.fixture(scope="module")
def other_worker(tls_cluster, certificates, tmp_path_factory):
    """A worker process joined over TLS whose grader fingerprint is another's (a preload replaces it); its
    address."""
    folder = tmp_path_factory.mktemp("other")
    (folder / "other_grader.py").write_text(OTHER_GRADER)
    other = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "distributed.cli.dask_worker",
            tls_cluster,
            "--nthreads=1",
            "--no-nanny",
            "--no-dashboard",
            "--name=other",
            f"--tls-ca-file={certificates['ca_file']}",
            f"--tls-cert={certificates['cert_file']}",
            f"--tls-key={certificates['key_file']}",
            "--preload",
            str(folder / "other_grader.py"),
        ],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with connect(SchedulerAccess(tls_cluster, **certificates)) as client:
            client.wait_for_workers(2, timeout=60)
            names = {w["name"]: a for a, w in client.scheduler_info(n_workers=-1)["workers"].items()}
        yield names["other"]
    finally:
        other.terminate()
        other.wait(20)


def test_a_class_is_graded_over_tls_and_a_worker_with_another_grader_is_refused(
    tls_cluster, certificates, other_worker, tmp_path
):
    assert other_worker.startswith("tls://127.0.0.1:")
    students = {"ada": "1", "bo": "0", "cy": "1"}
    course, url = synthetic_course(tmp_path, students)
    access = SchedulerAccess(tls_cluster, **certificates)
    options = dispatch.ClassOptions(scheduler=access, progress=False, db=url, task=instant)
    summary = dispatch.grade_class(course, "attention", list(students), options=options)
    assert sorted(summary.graded) == ["ada", "bo", "cy"] and summary.failed == {}
    assert {student: scores(url, student)["check_a"][0] for student in students} == {"ada": 1, "bo": 0, "cy": 1}
    assert list(summary.refused_workers) == [other_worker]
    why = summary.refused_workers[other_worker]
    assert why.startswith("has other grading code (fingerprint ffffffffffff, here ")
    assert why.endswith("install the same commit there")


def test_the_services_checks_refuse_that_worker_too(tls_cluster, certificates, other_worker, tmp_path):
    pytest.importorskip("jupyterhub", reason=NO_HUB)
    from autograder.service import app  # after the skip: a JupyterHub service

    access = SchedulerAccess(tls_cluster, **certificates)
    pool = app.make_pool(app.ServiceOptions(course=tmp_path, exchange=tmp_path, scheduler=access))
    try:
        assert isinstance(pool, app.HeldTo) and other_worker not in pool.workers and len(pool.workers) == 1
        assert pool.submit(sum, [1, 2, 3]).result(timeout=30) == 6
    finally:
        pool.close()


def test_the_address_and_the_certificates_must_agree(certificates, tmp_path):
    with pytest.raises(GradingError, match="give --tls-cert, --tls-key as well"):
        SchedulerAccess("tls://10.0.0.5:8786", ca_file=certificates["ca_file"]).security()
    with pytest.raises(GradingError, match=r"--tls-ca-file given but the scheduler's address tcp://10.0.0.5:8786"):
        SchedulerAccess("tcp://10.0.0.5:8786", ca_file=certificates["ca_file"]).security()
    missing = tmp_path / "nowhere.pem"
    with pytest.raises(GradingError, match=f"--tls-key {missing} cannot be read"):
        SchedulerAccess("tls://10.0.0.5:8786", **{**certificates, "key_file": missing}).security()
    security = SchedulerAccess("tls://10.0.0.5:8786", **certificates).security()
    assert security.require_encryption is True
    assert security.tls_client_cert == str(certificates["cert_file"])
    assert SchedulerAccess("tcp://10.0.0.5:8786").security() is None
    assert str(SchedulerAccess("tls://10.0.0.5:8786", **certificates)) == "tls://10.0.0.5:8786"


def test_the_commands_take_the_certificates_and_refuse_them_without_a_tls_scheduler(certificates, capsys):
    flags = [f"--tls-ca-file={certificates['ca_file']}", f"--tls-cert={certificates['cert_file']}"]
    flags.append(f"--tls-key={certificates['key_file']}")
    args = classroom.parser().parse_args(["--scheduler", "tls://10.0.0.5:8786", *flags])
    options = classroom.options_from(args)
    assert options.scheduler == SchedulerAccess("tls://10.0.0.5:8786", **certificates)
    assert classroom.main(flags) == 1  # certificates without a scheduler: refused before any step
    assert "--tls-ca-file, --tls-cert, --tls-key given without --scheduler" in capsys.readouterr().err


def test_the_service_refuses_certificates_without_a_tls_scheduler(certificates, capsys):
    """Refused by the service's command line, before the service (and the hub extra it needs) is imported."""
    flags = [f"--tls-ca-file={certificates['ca_file']}", f"--tls-cert={certificates['cert_file']}"]
    with pytest.raises(SystemExit) as stopped:
        service_command.main(["--course", "c", "--exchange", "e", "--scheduler", "tcp://10.0.0.5:8786", *flags])
    assert stopped.value.code == 2
    assert "given but the scheduler's address tcp://10.0.0.5:8786 is not tls://" in capsys.readouterr().err


def test_a_tls_client_without_the_ca_is_not_let_in(tls_cluster, tmp_path):
    stranger = Security.temporary()  # another CA: the scheduler does not trust its certificate, nor it the scheduler's
    for name, contents in (("ca", stranger.tls_ca_file), ("cert", stranger.tls_client_cert)):
        (tmp_path / f"{name}.pem").write_text(contents)
    (tmp_path / "key.pem").write_text(stranger.tls_client_key)
    access = SchedulerAccess(tls_cluster, tmp_path / "ca.pem", tmp_path / "cert.pem", tmp_path / "key.pem")
    started = time.monotonic()
    with pytest.raises(GradingError, match="over TLS"):
        connect(access, timeout="3s")
    assert time.monotonic() - started < 20
