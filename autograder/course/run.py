"""A course folder and a whole class's run through it, as a library: ``grade_course(options)``.

    from autograder.course.run import CourseOptions, grade_course
    run = grade_course(CourseOptions(course=Path("demo"), submissions=Path("examples/submissions")))

The steps, each checked (autograder.course.classroom is the command line over them):

0. the assignment checked before anything is made (autograder.validate.check_before_grading: the notebook's ids and
   points against checks.py, code in hidden-tests blocks, one seed of the solution): an instructor's mistake stops
   the run, saying what to fix, before any student is graded;
1. the course folder (``prepare_course``): made on the first run (``lib`` linked in, so the notebooks' setup cell
   finds the course library as it does in the repository); later runs keep it and its gradebook; each run copies
   the assignment's folder (its notebook and checks.py) from the source folder into the course's source/, writes
   the configuration the project generates (autograder_config.py, autograder.course.config) and, only when it is
   missing, the instructor's nbgrader_config.py, then reads the course's settings (autograder.settings);
2. the assignment and the new students in the gradebook (``register``: nbgrader's Gradebook API, as
   ``nbgrader db assignment add`` and ``nbgrader db student import`` do);
3. ``release``: nbgrader's generate_assignment (NbGraderAPI, in this process), skipped when source/ has not
   changed since the last release;
4. collection (autograder.course.uploads.collect): each student's folder copied to submitted/<student>/<assignment>/;
5. grading (autograder.grading.grade_class): each new or changed submission one task on a Dask worker, recorded
   in the gradebook as it arrives, atomically; then the feedback pages whose hand grades changed made again;
6. ``export``: grades.csv (nbgrader's CsvExportPlugin) and checks.csv (autograder.course.export.ChecksExport);
7. the class's grade table (autograder.course.table) and the instructor's report (autograder.report).

Which assignment: the one named (``assignment``), else the only one in the source folder, else the one the
submissions hold (a student's folder with a folder of that name, or its notebook): ``assignments_to_grade`` lists
them, and the class command grades each in turn. A source folder may hold any number of assignments.

The course folder: one this module made (a ``.classroom`` file in it), a new or empty folder, or an nbgrader course
folder of the instructor's (one holding an nbgrader_config.py, where nbgrader's own commands run), which is adopted:
its source/ is then the default source folder and is never copied over, ``--fresh`` deletes only what the class
command writes there, and its nbgrader_config.py stays the instructor's. Any other existing, non-empty folder is
refused. Nothing is written under the repository's source/ or examples/, nor into the submissions.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.api import Gradebook
from nbgrader.plugins import CsvExportPlugin

from autograder import REPOSITORY
from autograder.assignments import Layout, NoAssignment, find, names, notebooks
from autograder.course.config import find_alembic, write_course_files
from autograder.course.export import MalformedNotebook, course_check_rows, write_checks
from autograder.course.table import grade_table, kernel_notes
from autograder.course.uploads import PipelineError, Uploads, collect, copy_pattern, survey
from autograder.files import atomic_path, write_json
from autograder.grading.dispatch import ClassOptions, Summary, grade_class
from autograder.grading.gateway import GatewayAccess
from autograder.grading.ledger import assignment_folder
from autograder.grading.lock import CourseLock
from autograder.grading.refresh import refresh
from autograder.grading.scheduler import SchedulerAccess
from autograder.grading.task import LEDGER, GradingError, digest, folder_files
from autograder.notebook.pipeline import ChainOptions, nbgrader_api
from autograder.report import ReportOptions, write_report
from autograder.settings import GENERATED_FILE, INSTRUCTOR_FILE, Course, CourseSettings, SettingsError, shown_url
from autograder.validate import AuthoringError, check_before_grading

MARKER = ".classroom"  # written into every course folder this module makes
MARKER_TEXT = "made by python -m autograder.course; --fresh deletes and recreates this folder\n"
ADOPTED_TEXT = (  # the marker of an nbgrader course folder the instructor made
    "adopted by python -m autograder.course: an nbgrader course of the instructor's; its source/ is the default "
    "--source, and --fresh deletes only what the class command writes here\n"
)
WRITTEN = (  # what the class command writes in a course folder (--fresh deletes these only, in an adopted one)
    "gradebook.db",
    "gradebook.db-journal",
    "submitted",
    "autograded",
    "feedback",
    "release",
    "reports",
    "grades.csv",
    "checks.csv",
    "lms",
    LEDGER,
)

__all__ = [
    "CourseOptions",
    "CourseRun",
    "PipelineError",
    "assignments_to_grade",
    "feedback_only",
    "grade_course",
    "prepare_course",
]


@dataclass(frozen=True)
class CourseOptions:
    """One run over a course folder (grade_course)."""

    course: Path  # the course folder, made on the first run and kept
    submissions: Path | None = None  # <student>/<assignment>/<notebook>.ipynb folders (not for feedback_only)
    assignment: str | None = None  # a folder of ``source`` (default: the only one there, else the submissions')
    source: Path | None = None  # the folder holding the assignments (default: ``default_source(course)``)
    chain: ChainOptions = (
        ChainOptions()
    )  # the grading chain's options (--cell-timeout: chain.cell_timeout, else the course's)
    jobs: int | None = None  # local worker processes (default: one per core)
    # a Dask scheduler, tcp:// or tls://, or a dask-gateway's new cluster (GatewayAccess); default: this machine
    scheduler: str | SchedulerAccess | GatewayAccess | None = None
    regrade: bool = False  # grade every submission again
    fresh: bool = False  # delete the course folder (its gradebook.db included, not its configuration) first
    progress: bool = True  # a progress bar
    db: str | None = None  # the gradebook's URL (default: the course's settings', autograder.settings)
    wait: bool = False  # wait for another run grading the course instead of refusing


@dataclass
class CourseRun:
    """What a run did: the students, their table and notes, the grading's summary, each step's seconds."""

    students: list
    table: object  # pandas DataFrame (autograder.course.table.grade_table)
    notes: dict
    summary: Summary
    uploads: Uploads
    layout: Layout
    db: str
    report: str  # the report's path, or why it was not written
    seconds: dict = field(default_factory=dict)


def say(message: str) -> None:
    print(message, flush=True)


def nbgrader_environment() -> dict:
    """This environment, with the venv's bin/ first on PATH (nbgrader runs alembic) and the repository importable."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join([str(REPOSITORY), *filter(None, [env.get("PYTHONPATH")])])
    env.setdefault("MPLBACKEND", "Agg")
    return env


def release_notebook(source: Path, scratch: Path) -> bytes:
    """The release version of the assignment folder ``source`` (source/<assignment>/), made by nbgrader's
    generate_assignment in ``scratch``."""
    layout = find(source.parent, source.name)
    find_alembic()  # nbgrader makes the scratch gradebook with alembic
    (scratch / "source").mkdir(parents=True)
    shutil.copytree(source, scratch / "source" / layout.name)
    result = nbgrader_api(scratch).generate_assignment(layout.name, force=True)
    if not result.get("success"):
        raise PipelineError(f"nbgrader generate_assignment failed:\n{result.get('log', '')[-3000:]}")
    return (scratch / "release" / layout.name / f"{layout.notebook}.ipynb").read_bytes()


def is_adopted(course: Path) -> bool:
    """Whether ``course`` is an nbgrader course folder of the instructor's: adopted by an earlier run, or not made
    by this module and holding an nbgrader_config.py (what nbgrader's commands read there)."""
    marker = course / MARKER
    if marker.is_file():
        return marker.read_text(encoding="utf-8", errors="replace").startswith("adopted")
    return (course / INSTRUCTOR_FILE).is_file()


def default_source(course: Path) -> Path:
    """The source folder when none is named: an adopted course's own source/, else the repository's source/."""
    return course / "source" if is_adopted(course) else REPOSITORY / "source"


def adopt(course: Path) -> None:
    """Write the course folder's marker: an nbgrader course of the instructor's is marked adopted."""
    if not (course / MARKER).exists():
        (course / MARKER).write_text(ADOPTED_TEXT if is_adopted(course) else MARKER_TEXT)


def check_course_folder(course: Path) -> None:
    """Refuse a course folder that is a file, the repository, inside its source/ or examples/, or a non-empty
    folder that is neither made by this module nor an nbgrader course folder (nbgrader_config.py)."""
    if course.exists() and not course.is_dir():
        raise PipelineError(f"--course {course} is a file, not a folder: name a folder (made on the first run)")
    resolved = course.resolve()
    inside = [
        folder
        for folder in (REPOSITORY / "source", REPOSITORY / "examples")
        if resolved == folder or folder in resolved.parents
    ]
    if resolved == REPOSITORY or inside:
        raise PipelineError(
            f"refusing to use {course} as the course folder: it is the repository or inside its source/ or examples/ "
            "(the class command grades the repository's source/ into a course folder of its own: --course DIR)"
        )
    if course.exists() and any(course.iterdir()) and not (course / MARKER).exists() and not is_adopted(course):
        raise PipelineError(
            f"{course} exists and is not a course folder made by autograder.course.classroom "
            f"(no {MARKER} file in it) nor an nbgrader course folder (no {INSTRUCTOR_FILE} in it): choose another "
            "--course, or empty it yourself"
        )


def remove(entry: Path) -> None:
    shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()


def forget(course: Path, db: str | None) -> None:
    """--fresh: everything in the course folder but the lock this run holds and the course's configuration (the
    instructor's nbgrader_config.py, and what the project generates with the gradebook it names); in an adopted
    course, only what the class command writes (WRITTEN): the instructor's source/ and files stay."""
    kept, adopted = course_db(course, db), is_adopted(course)
    for entry in course.iterdir():
        if entry.name in (INSTRUCTOR_FILE, GENERATED_FILE, MARKER) or entry.name.startswith(f"{INSTRUCTOR_FILE}.bak"):
            continue
        if adopted and entry.name not in WRITTEN:
            continue
        inner = [path for path in entry.iterdir() if path.name != "lock"] if entry.name == LEDGER else [entry]
        for path in inner:
            remove(path)
    if not kept.startswith("sqlite"):
        say(
            f"      --fresh: the gradebook at {shown_url(kept)} is kept (only the course's own gradebook.db is deleted)"
        )


def prepare_course(
    course: Path,
    *,
    source: Path,
    layout: Layout,
    cell_timeout: int | None = None,
    fresh: bool = False,
    db: str | None = None,
) -> CourseSettings:
    """Make the course folder, or keep the one an earlier run made (with its gradebook and configuration); copy the
    assignment's folder from ``source`` into its source/; write what the project generates for the course
    (autograder.course.config's autograder_config.py: ``db`` and ``cell_timeout``, when given, are recorded there,
    so nbgrader's own commands, Formgrader and later runs use them too) and the instructor's nbgrader_config.py
    only when it is missing. Returns the course's settings as they now are (autograder.settings)."""
    check_course_folder(course)
    if fresh and course.exists():
        forget(course, db)
    course.mkdir(parents=True, exist_ok=True)
    adopt(course)
    if (course / "source" / layout.name).resolve() != (source / layout.name).resolve():  # not the course's own
        shutil.rmtree(course / "source" / layout.name, ignore_errors=True)
        shutil.copytree(
            source / layout.name,
            course / "source" / layout.name,
            ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"),
        )
    if not (course / "lib").is_symlink() and not (course / "lib").exists():
        (course / "lib").symlink_to(REPOSITORY / "lib", target_is_directory=True)
    try:
        for note in write_course_files(course, db=db, cell_timeout=cell_timeout):
            say(f"      {note}")
        return CourseSettings.read(course)
    except SettingsError as error:
        raise PipelineError(str(error)) from None


def course_settings(course: Path, db: str | None = None) -> CourseSettings:
    """The course's settings (autograder.settings), a PipelineError when its configuration cannot be read."""
    try:
        return CourseSettings.read(course, db=db)
    except SettingsError as error:
        raise PipelineError(str(error)) from None


def course_db(course: Path, db: str | None = None) -> str:
    """The gradebook's URL: ``db``, else the course's settings'; a PipelineError when they cannot be read."""
    return course_settings(course, db).db


def register(course: Path, layout: Layout, students: list[str], db: str | None = None) -> list[str]:
    """The assignment and the students in the gradebook (nbgrader's Gradebook API, what ``nbgrader db assignment
    add`` and ``nbgrader db student import`` do); returns the students added."""
    find_alembic()  # a new gradebook runs alembic from PATH
    with Gradebook(db or course_db(course)) as gradebook:
        gradebook.update_or_create_assignment(layout.name)
        known = {student.id for student in gradebook.students}
        added = [student for student in students if student not in known]
        for student in added:
            gradebook.update_or_create_student(student, first_name=student.replace("_", " "))
    return added


def release(course: Path, layout: Layout, db: str | None = None) -> bool:
    """nbgrader generate_assignment (in-process, nbgrader's NbGraderAPI) when the assignment's source changed
    since its last release or its release is missing; returns whether it ran."""
    stamp = assignment_folder(course, layout.name) / "release.json"
    source = digest(folder_files(course / "source" / layout.name).items())
    released = course / "release" / layout.name / f"{layout.notebook}.ipynb"
    if released.exists() and stamp.exists() and json.loads(stamp.read_text()).get("source") == source:
        return False
    result = nbgrader_api(course, db=db or course_db(course)).generate_assignment(layout.name, force=True)
    if not result.get("success"):
        raise PipelineError(
            "nbgrader generate_assignment failed in"
            f" {course}:\n{result.get('log', '')[-3000:]}\n{result.get('error', '')}"
        )
    write_json(stamp, {"source": source}, durable=False)
    return True


def export(course: Path, db: str | None = None) -> list[dict]:
    """grades.csv (nbgrader's CsvExportPlugin, what ``nbgrader export`` writes) and checks.csv (what ChecksExport
    writes), each written whole, then renamed into place (the old file stays when writing fails); returns the
    rows of checks.csv (autograder.course.export.check_rows), which the closing table reads."""
    with Gradebook(db or course_db(course)) as gradebook:
        try:
            rows = course_check_rows(gradebook, course)
        except MalformedNotebook as error:  # the course's copy of a source notebook: the grades are recorded
            raise PipelineError(f"exporting checks.csv: {error}") from None
        writers = (
            ("grades.csv", lambda path: CsvExportPlugin(to=path).export(gradebook)),
            ("checks.csv", lambda path: write_checks(rows, path)),
        )
        for name, write in writers:
            try:
                with atomic_path(course / name) as temporary:
                    write(str(temporary))
            except OSError as error:
                raise PipelineError(f"could not write {course / name}: {error}") from None
    return rows


def refresh_feedback(course: Course, assignment: str) -> list[str]:
    """The feedback pages made again where hand grades changed since they were made (autograder.grading.refresh)."""
    try:
        return refresh(course, assignment)
    except Exception as error:  # noqa: BLE001 - nbgrader's template or the gradebook: say which
        raise PipelineError(f"regenerating the feedback: {type(error).__name__}: {error}") from None


def locked(options: CourseOptions, say_to=say) -> CourseLock:
    """The course's lock (entered by the caller), a PipelineError when another run holds it."""
    (options.course / LEDGER).mkdir(parents=True, exist_ok=True)
    return CourseLock(options.course, wait=options.wait, say=say_to)


def assignments_to_grade(options: CourseOptions) -> list[str]:
    """The assignments a run over ``options`` grades: the one named, else the only one in the source folder, else
    every one that the submissions hold (a student's folder with a folder of its name, or its notebook); a
    PipelineError when none can be told."""
    source = (options.source or default_source(options.course.absolute())).absolute()
    try:
        if options.assignment is not None or len(names(source)) == 1:
            return [find(source, options.assignment).name]
    except NoAssignment as error:
        raise PipelineError(str(error)) from None
    if options.submissions is None or not options.submissions.is_dir():
        return [find_or_fail(source, None)]
    held = held_assignments(options.submissions, source)
    if not held:
        raise PipelineError(
            f"{source} holds {len(names(source))} assignments ({', '.join(names(source)) or 'none'}) and no student's "
            f"folder in {options.submissions} holds one of them: name one with --assignment"
        )
    return held


def find_or_fail(source: Path, name: str | None) -> str:
    try:
        return find(source, name).name
    except NoAssignment as error:
        raise PipelineError(str(error)) from None


def held_assignments(submissions: Path, source: Path) -> list[str]:
    """The assignments of ``source`` that some student's folder under ``submissions`` holds: a folder of the
    assignment's name (in any case), or its notebook (or a copy of it) directly in the student's folder."""
    students = [entry for entry in submissions.iterdir() if entry.is_dir() and not entry.name.startswith(".")]
    held = []
    for name in names(source):
        notebook = copy_pattern(find(source, name).notebook) if len(notebooks(source / name)) == 1 else None
        for student in students:
            inside = list(student.iterdir())
            if any(p.is_dir() and p.name.lower() == name.lower() for p in inside) or (
                notebook is not None and any(p.suffix == ".ipynb" and notebook.fullmatch(p.stem) for p in inside)
            ):
                held.append(name)
                break
    return held


def grade_course(options: CourseOptions) -> CourseRun:
    """Every step, holding the course's lock (one run per course at a time; ``options.wait``: wait for a running
    one instead of refusing), for one assignment (``assignments_to_grade``: a PipelineError when the submissions
    hold several and none is named; the class command grades each in turn). Raises PipelineError when a step
    fails."""
    course = options.course.absolute()
    check_course_folder(course)
    options = dataclasses.replace(
        options,
        course=course,
        submissions=options.submissions.absolute(),
        source=(options.source or default_source(course)).absolute(),
    )
    chosen = assignments_to_grade(options)
    if len(chosen) > 1:
        raise PipelineError(
            f"the submissions in {options.submissions} hold {len(chosen)} assignments ({', '.join(chosen)}): "
            "name one with --assignment (the class command, without it, grades each in turn)"
        )
    try:
        layout = find(options.source, chosen[0])
        check_before_grading(options.source / layout.name)  # an instructor's mistake stops the run, before grading
    except (NoAssignment, AuthoringError) as error:
        raise PipelineError(str(error)) from None
    uploads = survey(options.submissions, layout, others=tuple(n for n in names(options.source) if n != layout.name))
    options.course.mkdir(parents=True, exist_ok=True)
    adopt(options.course)
    try:
        with locked(options, say_to=lambda message: say(f"      {message}")):
            return run_steps(options, layout, uploads)
    except GradingError as error:
        raise PipelineError(str(error)) from None


class Steps:
    """The numbered steps' headings and times."""

    def __init__(self, total: int = 7):
        self.total, self.seconds, self.name, self.started = total, {}, None, 0.0

    def start(self, number: int, name: str, title: str) -> None:
        self.stop()
        say(f"[{number}/{self.total}] {title}")
        self.name, self.started = name, time.monotonic()

    def stop(self) -> None:
        if self.name is not None:
            self.seconds[self.name] = time.monotonic() - self.started
        self.name = None


def run_steps(options: CourseOptions, layout: Layout, uploads: Uploads) -> CourseRun:
    """Steps 1 to 7 (see the module's docstring), the course locked."""
    course, students, steps = options.course, uploads.students, Steps()
    steps.start(1, "prepare", f"the course folder {course}, assignment {layout.name}")
    settings = prepare_course(
        course,
        source=options.source,
        layout=layout,
        cell_timeout=options.chain.cell_timeout,
        fresh=options.fresh,
        db=options.db,
    )
    db = settings.db  # the run grades with the course's settings, as nbgrader's commands and Formgrader do
    chain = dataclasses.replace(
        options.chain,
        cell_timeout=settings.cell_timeout,
        notebook_budget=settings.notebook_budget,
        checks_budget=settings.checks_budget,
        idle_timeout=settings.idle_timeout,
        late_penalty=settings.late_penalty,
    )  # the course's limits: c.SurvivingExecute.timeout, .notebook_timeout, .idle_timeout; c.ExternalVerdicts.timeout;
    # its late penalty, c.LateSubmissionPlugin.penalty_method
    options = dataclasses.replace(options, chain=chain)
    steps.start(2, "gradebook", f"the assignment and {len(students)} students in the gradebook {shown_url(db)}")
    say(f"      {len(register(course, layout, students, db))} new students")
    steps.start(3, "release", "releasing: nbgrader generate_assignment")
    say(
        "      released"
        if release(course, layout, db)
        else f"      source/{layout.name} unchanged since the last release"
    )
    steps.start(4, "collect", f"collecting {len(students)} submissions from {options.submissions} into submitted/")
    say(f"      {len(collect(course, options.submissions, layout, uploads))} new or changed")
    where = (
        f"the Dask scheduler {options.scheduler}"
        if options.scheduler
        else f"{options.jobs or os.cpu_count()} local workers"
    )
    steps.start(
        5,
        "grade",
        f"grading new and changed submissions on {where}: nbgrader autograde and feedback, "
        "each notebook in its own sandboxed kernel, the hidden checks outside it",
    )
    summary = grade(options, layout, students, Course(settings.course, settings))
    steps.start(
        6, "export", "exporting grades.csv (nbgrader's CSV) and checks.csv (autograder.course.export.ChecksExport)"
    )
    rows = export(course, db)
    steps.start(7, "report", "the class's grades")
    table, notes = class_table(course, layout, uploads, summary, rows)
    report = instructor_report(course, layout, db)
    steps.stop()
    return CourseRun(students, table, notes, summary, uploads, layout, db, report, steps.seconds)


def grade(options: CourseOptions, layout: Layout, students: list[str], course: Course) -> Summary:
    """Step 5: the class graded (autograder.grading), then the feedback pages whose hand grades changed."""
    class_options = ClassOptions(
        scheduler=options.scheduler,
        jobs=options.jobs,
        chain=options.chain,
        progress=options.progress,
        regrade=options.regrade,
        db=course.db,
    )
    summary = grade_class(options.course, layout.name, students, options=class_options)
    for student, what in summary.repaired.items():
        say(f"      repaired what a stopped run left of {student}: {what}")
    for worker, why in summary.refused_workers.items():
        say(f"      worker {worker} not used: {why}")
    say(f"      graded {len(summary.graded)}, up to date {len(summary.skipped)}, failed {len(summary.failed)}")
    regenerated = refresh_feedback(course, layout.name)
    say(f"      feedback regenerated for {len(regenerated)} students (hand grades changed)")
    return summary


def class_table(course: Path, layout: Layout, uploads: Uploads, summary: Summary, rows: list[dict]) -> tuple:
    """Step 7: (the grade table, {student: note}) from checks.csv's ``rows``: the kernels' notes, the grading's,
    the uploads'."""
    notes = kernel_notes(course, layout, [s for s in uploads.students if s not in summary.failed])
    for student, note in summary.notes.items():
        notes[student] = "; ".join(filter(None, [note, notes.get(student)]))
    for student, note in uploads.notes().items():
        notes[student] = "; ".join(filter(None, [notes.get(student), note]))
    table = grade_table(rows, notes, layout.name)
    for student in sorted(uploads.students_not_graded):  # a row each, with why
        table.loc[student] = ""
        table.loc[student, "note"] = uploads.students_not_graded[student]
    return table, notes


def instructor_report(course: Path, layout: Layout, db: str) -> str:
    """The instructor's report (autograder.report): its path, or why it was not written (no grade is lost)."""
    try:
        return write_report(course=course, assignment=layout.name, options=ReportOptions(db=db)).summary()
    except Exception as error:  # noqa: BLE001 - said in the closing lines, the grades are recorded
        return f"not written ({type(error).__name__}: {error})"


def feedback_only(options: CourseOptions) -> list[str]:
    """After hand grading in Formgrader: the pages of exactly the students whose hand grades changed, holding the
    course's lock; nothing is graded, released or collected. Returns those students; PipelineError when the
    folder is not a course or the lock is held."""
    course = options.course.absolute()
    if not (course / MARKER).exists():
        raise PipelineError(f"{course} is not a course folder made by python -m autograder.course")
    try:  # every assignment the course has been given (its own source/), or the one named
        chosen = [find(course / "source", options.assignment).name] if options.assignment else names(course / "source")
        value = Course.read(course, db=options.db)  # the course, read once for every assignment
        with CourseLock(course, wait=options.wait, say=say):
            return sorted({student for name in chosen for student in refresh_feedback(value, name)})
    except (NoAssignment, GradingError) as error:
        raise PipelineError(str(error)) from None
