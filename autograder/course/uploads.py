"""Uploads: what a submissions folder holds (each student's notebook, and every upload not graded, with why),
and its collection into the course's submitted/ folder, as nbgrader lays it out."""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from autograder.assignments import Layout
from autograder.files import atomic_path
from autograder.grading.task import folder_files
from autograder.students import id_problem


class PipelineError(RuntimeError):
    """A step of the class's run failed; the message says which and why."""


def copy_pattern(notebook: str) -> re.Pattern:
    """A copy of the notebook as a browser or a file manager names it: "attention (1)", "attention-copy",
    "Attention 2"."""
    return re.compile(rf"{re.escape(notebook)}(?:\s*\(\d+\)|[ _-]?copy(?:\s*\d+)?|[ _-]\d+)?", re.IGNORECASE)


@dataclass
class Uploads:
    """What a submissions folder holds: the notebook graded for each student, and every upload that is not
    graded, with why (``not_graded``: {path under the submissions folder: why})."""

    folders: dict = field(default_factory=dict)  # {student: the folder handed in as submitted/<student>/<assignment>/}
    notebooks: dict = field(default_factory=dict)  # {student: the notebook's name in that folder}
    not_graded: dict = field(default_factory=dict)
    students_not_graded: dict = field(default_factory=dict)  # {student id: why none of their uploads is graded}

    @property
    def students(self) -> list[str]:
        return sorted(self.folders)

    def notes(self) -> dict[str, str]:
        """{student: "not graded: ..."} for the table."""
        notes = dict(self.students_not_graded)
        for path, why in self.not_graded.items():
            student = path.split("/", 1)[0]
            if student in self.folders:
                notes[student] = "; ".join(filter(None, [notes.get(student), f"{path.split('/', 1)[1]}: {why}"]))
        return {
            student: note if note.startswith("not graded") else f"not graded: {note}" for student, note in notes.items()
        }


def survey(submissions: Path, layout: Layout, others: tuple[str, ...] = ()) -> Uploads:
    """Each student's notebook under ``submissions``, by nbgrader's layout (<student>/<assignment>/<notebook>.ipynb)
    and the course's own rules for what students actually hand in: the name in another case
    (``Attention.ipynb``, an ``Attention/`` folder), a copy (``attention (1).ipynb``) when it is the only one,
    the notebook directly in the student's folder. Every other upload is listed with why it is not graded.
    Names starting with a dot (.ipynb_checkpoints, .DS_Store) are not uploads and are left out. A student whose
    uploads all lie in folders of ``others`` (the course's other assignments) handed in none of this one: left out,
    as a student without a folder is."""
    if not submissions.is_dir():
        raise PipelineError(
            f"no submissions folder {submissions}" + (" (it is a file)" if submissions.exists() else "")
        )
    expected = f"<student>/{layout.name}/{layout.notebook}.ipynb"
    found = Uploads()
    for entry in sorted(submissions.iterdir()):
        name = entry.name
        if name.startswith("."):
            continue
        if not entry.is_dir() or entry.is_symlink():
            found.not_graded[name] = f"not in a student's folder (expected {expected})"
        elif id_problem(name):  # a student id reaches file names and pages: only a safe pattern
            found.students_not_graded[name] = f"not graded: {id_problem(name)}"
            found.not_graded[name] = id_problem(name)
        else:
            student_upload(entry, layout, submissions=submissions, found=found, others=others)
    if not found.folders:
        raise PipelineError(
            f"no submissions in {submissions}: expected {expected} folders"
            + "".join(f"\n  not graded: {path}: {why}" for path, why in found.not_graded.items())
        )
    return found


def assignment_folder_of(entry: Path, assignment: str) -> Path:
    """The student's folder of the assignment: <student>/<assignment>/, the name in another case, or the
    student's own folder (the notebook directly in it)."""
    folder = entry / assignment
    if folder.is_dir():
        return folder
    same = [inner for inner in sorted(entry.iterdir()) if inner.is_dir() and inner.name.lower() == assignment.lower()]
    return same[0] if same else entry


def student_upload(
    entry: Path, layout: Layout, *, submissions: Path, found: Uploads, others: tuple[str, ...] = ()
) -> None:
    """The notebook graded of the student whose folder is ``entry`` into ``found``, and the uploads not graded
    (nothing when all of them are in folders of ``others``, the course's other assignments)."""
    name, notebook, copy = entry.name, layout.notebook, copy_pattern(layout.notebook)
    folder = assignment_folder_of(entry, layout.name)
    notebooks = sorted(
        path.name
        for path in folder.iterdir()
        if path.suffix.lower() == ".ipynb"
        and path.is_file()
        and not path.is_symlink()
        and not path.name.startswith(".")
    )
    exact = [n for n in notebooks if n == f"{notebook}.ipynb"]
    close = (
        exact
        or [n for n in notebooks if n[:-6].lower() == notebook.lower()]
        or [n for n in notebooks if copy.fullmatch(n[:-6])]
    )
    if not close:
        uploads = sorted(
            path.relative_to(entry).as_posix()
            for path in entry.rglob("*")
            if path.is_file() and not any(part.startswith(".") for part in path.relative_to(entry).parts)
        )
        if uploads and all(Path(upload).parts[0] in others for upload in uploads):
            return  # another assignment's submission only (nbgrader's <student>/<other>/): none of this one
        listed = ", ".join(uploads[:5]) + (f" and {len(uploads) - 5} more" if len(uploads) > 5 else "")
        why = f"no {notebook}.ipynb" + (f" (found {listed})" if uploads else " (the folder is empty)")
        found.students_not_graded[name] = f"not graded: {why}"
        found.not_graded[name] = why
        return
    chosen = close[0] if len(close) == 1 or exact else max(close, key=lambda n: ((folder / n).stat().st_mtime, n))
    found.folders[name], found.notebooks[name] = folder, chosen
    prefix = folder.relative_to(submissions).as_posix()
    for other in notebooks:
        if other != chosen:
            why = (
                f"another copy of the notebook ({chosen} is graded)"
                if other in close or copy.fullmatch(other[:-6])
                else f"not the assignment's notebook ({chosen} is graded)"
            )
            found.not_graded[f"{prefix}/{other}"] = why


def collect(course: Path, submissions: Path, layout: Layout, students: list[str] | Uploads) -> list[str]:
    """Manual collection: each student's assignment folder goes to submitted/<student>/<assignment>/, byte for
    byte, when it differs from what is there (a new folder is swapped in whole), its notebook named as the
    assignment's and the other notebooks (copies, other names: not graded, see ``survey``) left out.
    ``students``: a survey, or ids laid out as nbgrader's <student>/<assignment>/<notebook>.ipynb. Returns the
    students copied."""
    named = f"{layout.notebook}.ipynb"
    if not isinstance(students, Uploads):
        students = Uploads({s: submissions / s / layout.name for s in students}, {s: named for s in students})
    copied = []
    for student in students.students:
        source, target = students.folders[student], course / "submitted" / student / layout.name
        notebook = students.notebooks[student]
        wanted = {
            (named if path == notebook else path): data
            for path, data in folder_files(source).items()
            if path == notebook or not path.lower().endswith(".ipynb") or "/" in path
        }
        if target.exists() and folder_files(target) == wanted:
            continue
        with atomic_path(target) as fresh:
            shutil.copytree(
                source,
                fresh,
                symlinks=True,  # links stay links
                ignore=lambda folder, names, source=source, notebook=notebook: [
                    n
                    for n in names
                    if n == ".ipynb_checkpoints"
                    or (Path(folder) == source and n.lower().endswith(".ipynb") and n != notebook)
                ],
            )
            if notebook != named:
                os.replace(fresh / notebook, fresh / named)
        copied.append(student)
    return copied
