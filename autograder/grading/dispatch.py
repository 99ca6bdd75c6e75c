"""Dispatch: a class graded on every core, or on a Dask cluster, into one nbgrader gradebook.

    from autograder.grading.dispatch import ClassOptions, grade_class
    summary = grade_class(Path("course"), "attention", ["ada", "bob"])                      # one worker per core
    summary = grade_class(course, "attention", students, options=ClassOptions(scheduler="tcp://10.0.0.5:8786"))
    tls = SchedulerAccess("tls://10.0.0.5:8786", ca_file=ca, cert_file=cert, key_file=key)   # scheduler.py
    summary = grade_class(course, "attention", students, options=ClassOptions(scheduler=tls))

Each new or changed submission is one task, ``grade_submission(assignment, submission)`` (autograder.grading.
worker), run by a Dask worker. The coordinator (this process) records each outcome as it arrives, each whole and
on its own, a few at once on RECORDERS threads (``Recorders``), through ``autograder.grading.ledger.record``
(journal, files, one gradebook transaction, ledger). The caller holds the course's lock (CourseLock).
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import queue
import socket
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from dask.distributed import Client, LocalCluster, as_completed
from tqdm import tqdm

from autograder import assignments, model, sandbox
from autograder.grading.forward import class_forward_cache
from autograder.grading.gateway import GatewayAccess
from autograder.grading.gradebook import GradebookWriter, gradebook_template, students_in_gradebook
from autograder.grading.ledger import file_key, ledger, record, repair, tidy, up_to_date
from autograder.grading.scheduler import SchedulerAccess, connect
from autograder.grading.task import (
    Assignment,
    GradingError,
    Outcome,
    Submission,
    digest,
    folder_files,
    grader_fingerprint,
)
from autograder.grading.worker import grade_submission, sweep_temporary
from autograder.notebook.pipeline import ChainOptions
from autograder.settings import CourseSettings, GradebookDates
from autograder.term import Term


@dataclass(frozen=True)
class ClassOptions:
    """How a class is graded (grade_class)."""

    # a Dask scheduler (its address, or TLS too), a dask-gateway's cluster (GatewayAccess); None: a local cluster
    scheduler: str | SchedulerAccess | GatewayAccess | None = None
    jobs: int | None = None  # local worker processes (default: one per core)
    chain: ChainOptions = ChainOptions()  # the grading chain's options (the cell limit, the seed)
    progress: bool = True  # a progress bar on stdout
    regrade: bool = False  # grade every submission again, not only new or changed ones
    db: str | None = None  # the gradebook's URL (default: the one the course's settings name)
    # lib's forward passes shared by every notebook (autograder.grading.forward): True, built if missing; False,
    # not used; None, used when built already, built for FORWARD_CACHE_FROM or more new submissions
    forward_cache: bool | None = None
    wait_for_workers: float = 30.0  # seconds for a scheduler's first worker to join
    task: Callable | None = None  # replaces grade_submission (benchmarks and tests: an instant grader)


@dataclass
class Summary:
    graded: list  # students graded in this run
    skipped: list  # students whose grades were up to date
    failed: dict  # {student: why nothing could be recorded}
    notes: dict  # {student: note}
    seconds: float
    repaired: dict = field(default_factory=dict)  # {student: what repair did} for an earlier run's leftovers
    refused_workers: dict = field(default_factory=dict)  # {worker address: why it was not used}


def make_client(scheduler: str | SchedulerAccess | GatewayAccess | None, jobs: int | None):
    """A Dask client and the cluster to close after: of the cluster at ``scheduler`` (autograder.grading.scheduler:
    tcp://, or tls:// with its certificates), of a new dask-gateway cluster (autograder.grading.gateway), or of a
    local cluster (one single-threaded worker process per job, default one per core)."""
    if isinstance(scheduler, GatewayAccess):
        return scheduler.open()
    if scheduler:
        return connect(scheduler), None
    workers = jobs or os.cpu_count() or 1
    cluster = LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        worker_dashboard_address=None,
        silence_logs=40,
    )
    return Client(cluster), cluster


WORKER_CHECK = "__import__('autograder.grading.task', fromlist=['task']).grader_fingerprint()"


def usable_workers(client, where: str, wait: float = 30.0) -> tuple[list, dict]:
    """(the workers that can grade, {worker: why not}): a worker must import the project and hold the same
    grader code (its fingerprint) as this process. Raises GradingError when no worker joins in ``wait``
    seconds, or when none can grade."""
    if not client.nthreads():
        try:
            client.wait_for_workers(1, timeout=wait)
        except Exception:  # noqa: BLE001 - a TimeoutError (asyncio's or distributed's)
            raise GradingError(
                f"the Dask scheduler {where} has no workers (none joined in {wait:g} s): start "
                "some with `dask worker <scheduler address>`, or leave out --scheduler"
            ) from None
    # eval is sent by reference (a builtin), so a worker without the project can run the check and say so
    # (on_error="return": its ModuleNotFoundError comes back as the answer), where scatter or a task would
    # fail with the raw error deep inside Dask
    answers = client.run(eval, WORKER_CHECK, on_error="return")
    mine = grader_fingerprint()
    good, bad = [], {}
    for address, answer in sorted(answers.items()):
        if isinstance(answer, BaseException):
            bad[address] = (
                f"cannot import the project ({type(answer).__name__}: {answer}): install it there "
                "(pip install -e . in a checkout of the same commit)"
            )
        elif answer != mine:
            bad[address] = (
                f"has other grading code (fingerprint {str(answer)[:12]}, here {mine[:12]}): "
                "install the same commit there"
            )
        else:
            good.append(address)
    if not good:
        raise GradingError(
            f"no Dask worker of {where} can grade:\n" + "\n".join(f"  {address}: {why}" for address, why in bad.items())
        )
    return good, bad


def grade_class(
    course: Path, assignment: str, students: list[str], *, options: ClassOptions = ClassOptions()
) -> Summary:
    """Grade the submitted/ notebooks of ``assignment`` of ``students`` in ``course`` that are new or changed (all
    with ``options.regrade``), in parallel, recording each as it finishes into the gradebook. The course must
    have run generate_assignment. The caller holds the course's lock (CourseLock)."""
    started = time.monotonic()
    course = course.resolve()
    settings = CourseSettings.read(course)
    db = options.db or settings.db  # the course's gradebook, SQLite or not
    task = options.task or grade_submission
    tidy(course)
    sweep_temporary()
    writer = GradebookWriter(db)
    try:
        repaired = repair(course, writer)
        warned = {socket.gethostname(): sandbox.warn_once()} if task is grade_submission else {}
        loaded = load_assignment(course, assignment, chain=options.chain, db=db)
        extensions = own_extensions(settings, db, loaded.name)
        submissions = [
            load_submission(course, student, loaded, extension=extensions.get(student)) for student in students
        ]
        in_gradebook = set() if options.regrade else students_in_gradebook(db, loaded.name)
        todo = [s for s in submissions if options.regrade or not up_to_date(course, loaded, s, in_gradebook)]
        summary = Summary([], [s.student for s in submissions if s not in todo], {}, {}, 0.0, repaired)
        if todo:
            if task is grade_submission:
                loaded = prepared(course, loaded, new=len(todo), options=options)
            run = Run(course, loaded, todo, summary, writer, warned, task)
            dispatch(run, options)
    finally:
        writer.close()
    for student in summary.skipped:
        note = ledger(course, loaded.name, student).get("note")
        if note:
            summary.notes[student] = note
    summary.seconds = time.monotonic() - started
    return summary


def prepared(course: Path, assignment: Assignment, *, new: int, options: ClassOptions) -> Assignment:
    """The assignment as the real grader needs it: the model measured once here (not in every local worker at
    once), and the forward cache its checks.py declares, built when it pays."""
    if model.available():
        model.cache()
    declared = assignments.load(course / "source" / assignment.name)
    cache = class_forward_cache(
        declared.forward_texts,
        course=course,
        new=new,
        wanted=options.forward_cache,
        forward_probabilities=declared.forward_probabilities,
    )
    return dataclasses.replace(assignment, chain=dataclasses.replace(assignment.chain, forward_cache=cache))


@dataclass
class Run:
    """One run's state, shared by dispatch and the recorders."""

    course: Path
    assignment: Assignment
    todo: list  # the Submissions to grade
    summary: Summary
    writer: GradebookWriter
    warned: dict  # {host: its missing protections}, said once per host
    task: Callable


def dispatch(run: Run, options: ClassOptions) -> None:
    """Every submission of ``run.todo`` a task on the Dask workers that can grade; each outcome recorded as it
    arrives."""
    client, cluster = make_client(options.scheduler, options.jobs)
    try:
        where = str(options.scheduler) if options.scheduler else "of this machine"
        good, run.summary.refused_workers = usable_workers(client, where, options.wait_for_workers)
        for address, why in run.summary.refused_workers.items():
            print(f"WARNING: Dask worker {address} is not used: {why}", file=sys.stderr, flush=True)
        # held to the workers that can grade only when some cannot: a worker that died and was started again by
        # its nanny has a new address, and held to the first list it would never be given a task again (a class
        # of 200 ran on one of two cores after one worker died)
        only = good if run.summary.refused_workers else None
        shared = client.scatter(run.assignment, broadcast=True, workers=only)
        name = file_key(run.assignment.name)
        futures = [
            client.submit(
                run.task,
                shared,
                submission,
                key=f"grade-{name}-{file_key(submission.student)}-{submission.fingerprint[:12]}",
                pure=False,
                retries=0,
                workers=only,
                allow_other_workers=False,
            )
            for submission in run.todo
        ]
        student_of = {future.key: submission.student for future, submission in zip(futures, run.todo)}
        bar = tqdm(
            total=len(futures),
            desc="grading",
            unit="notebook",
            disable=not options.progress,
            file=sys.stdout,
            mininterval=0.5,
        )
        # results fetched by Dask's event loop as tasks finish (with_results), taken here in batches, instead of
        # a round trip to the loop per result (a worker lost or a task that raised: its exception, not an Outcome)
        completed = as_completed(futures, with_results=True, raise_errors=False)
        with Recorders(run, bar) as recorders:
            for batch in completed.batches():
                for future, result in batch:
                    recorders.take(student_of[future.key], future.status, result)
                    future.release()
        bar.close()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


RECORDERS = 4  # results recorded at the same time, each by its own GradebookWriter (see Recorders)


class Recorders:
    """Records finished outcomes on RECORDERS threads, each with a GradebookWriter of its own. Each outcome is
    still recorded whole by ``record``, in its order (journal, files, one transaction, ledger); different
    students' recordings overlap, so that one's wait for the disk (the journal's and the database's flush to
    disk, which on a busy machine take longer than everything else a result costs) is another's time to work.
    The gradebook orders the transactions (SQLite: one writer at a time, the others wait; PostgreSQL: rows of
    different students). Leaving the block waits for every recording taken."""

    def __init__(self, run: Run, bar, threads: int = RECORDERS):
        self.run, self.bar = run, bar
        self.writers = [run.writer]
        self.idle = queue.SimpleQueue()
        self.idle.put(run.writer)
        self.threads = threads
        self.pool = ThreadPoolExecutor(threads, thread_name_prefix="record")
        self.pending = set()

    def _writer(self):
        try:
            return self.idle.get_nowait()
        except queue.Empty:
            writer = GradebookWriter(self.writers[0].url)  # at most one per thread
            self.writers.append(writer)
            return writer

    def _record(self, student, status, result):
        writer = self._writer()
        try:
            take(self.run, student, status, result, writer=writer, bar=self.bar)
        finally:
            self.idle.put(writer)
        return student

    def _collect(self, done):
        for job in done:
            self.pending.discard(job)
            student = job.result()  # a bug in recording itself stops the run, as it did before
            self.bar.set_postfix_str(student, refresh=False)
            self.bar.update()

    def take(self, student, status, result):
        self.pending.add(self.pool.submit(self._record, student, status, result))
        if len(self.pending) >= 2 * self.threads:  # a bounded queue: outcomes are not held by the thousand
            done, _ = wait_for(self.pending, return_when=FIRST_COMPLETED)
            self._collect(done)
        self._collect([job for job in list(self.pending) if job.done()])

    def __enter__(self):
        return self

    def __exit__(self, kind, *_):
        try:
            done, _ = wait_for(self.pending)  # stopped or not, what was taken is recorded (or journalled) whole
            self.pool.shutdown(wait=True)
            if kind is None:
                self._collect(done)
        finally:
            for writer in self.writers[1:]:
                writer.close()


def take(run: Run, student: str, status: str, result, *, writer: GradebookWriter, bar) -> None:
    """One finished task: its outcome recorded, or why not in run.summary.failed."""
    summary, warned = run.summary, run.warned
    if status != "finished" or not isinstance(result, Outcome):
        error = result[1] if isinstance(result, tuple) and len(result) == 3 else result  # (type, exception, traceback)
        summary.failed[student] = f"{type(error).__name__}: {error}"
        return
    outcome = result
    host = outcome.worker.rsplit(":", 1)[0]
    if outcome.unprotected and host not in warned:  # a worker on another machine, once per machine
        warned[host] = outcome.unprotected
        bar.write(f"WARNING: on {host}: {outcome.unprotected}")
    if outcome.error:
        summary.failed[student] = outcome.error
        return
    try:
        record(run.course, outcome, writer)
    except Exception as error:  # noqa: BLE001 - a full disk, the database refusing: this student only
        summary.failed[student] = f"not recorded ({type(error).__name__}: {error}); graded again next run"
        try:
            repair(run.course, writer, only=student)
        except Exception:  # noqa: BLE001 - the journal stays; the next run repairs it
            pass
    else:
        summary.graded.append(student)
        if outcome.note:
            summary.notes[student] = outcome.note


def load_assignment(
    course: Path, name: str, *, chain: ChainOptions = ChainOptions(), db: str | None = None
) -> Assignment:
    """The Assignment ``name`` of ``course`` (after nbgrader generate_assignment), graded with ``chain``, its
    gradebook at ``db`` (default the one the course's settings name)."""
    (notebook,) = assignments.notebooks(course / "source" / name)
    gradebook = gradebook_template(db or CourseSettings.read(course).db)
    source = folder_files(course / "source" / name)
    release = (course / "release" / name / f"{notebook}.ipynb").read_bytes()
    fingerprint = digest(
        [
            *(("source/" + k, v) for k, v in source.items()),
            # the chain's limits and seed, not the forward cache
            (
                "chain",
                repr(
                    (chain.cell_timeout, chain.notebook_budget, chain.checks_budget, chain.idle_timeout, chain.seed)
                    + ((chain.late_penalty,) if chain.late_penalty is not None else ())
                ).encode(),
            ),
            ("grader", grader_fingerprint().encode()),
        ]
    )
    return Assignment(name, notebook, gradebook, source, release, chain, fingerprint)


def load_submission(
    course: Path, student: str, assignment: Assignment, *, extension: datetime.timedelta | None = None
) -> Submission:
    """``student``'s submission of ``assignment``; ``extension``: their own due date less the assignment's (a change
    of it changes the fingerprint: that student, and only them, is graded again)."""
    files = folder_files(course / "submitted" / student / assignment.name)
    own = [("extension", repr(extension.total_seconds()).encode())] if extension else []
    fingerprint = digest([*files.items(), ("assignment", assignment.fingerprint.encode()), *own])
    return Submission(student, files, fingerprint, extension)


def own_extensions(settings: CourseSettings, db: str, name: str) -> dict[str, datetime.timedelta]:
    """{student: their own due date less the gradebook's due date of ``name``} of each student whose due date is
    their own (an extension, late days: autograder.course.term), as nbgrader's late penalty takes it
    (SubmittedAssignment.extension); {} when the assignment has no due date (nbgrader extends none)."""
    dates = GradebookDates(db)
    term = Term(db, rule=settings.late_days)
    try:
        base = dates.due(name)
        if base is None:
            return {}
        standings = term.standings(assignment=name, base=base)
        return {student: standing.extension for student, standing in standings.items() if standing.extension}
    finally:
        dates.close()
        term.close()
