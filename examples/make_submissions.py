"""Write the bundled example submissions, examples/submissions/<student>/attention/attention.ipynb.

    .venv/bin/python examples/make_submissions.py                 # regenerate them in place
    .venv/bin/python examples/make_submissions.py --out DIR       # write them elsewhere (the up-to-date test)
    .venv/bin/python examples/make_submissions.py --release PATH  # start from this release notebook

Every submission starts from the RELEASE notebook, the one students get: by default it is made here from
source/attention/ with nbgrader generate_assignment, in a temporary course folder with the repository's
nbgrader_config.py. Each answer cell is then filled in as a student would type it: the code between
### BEGIN SOLUTION and ### END SOLUTION in the source notebook replaces the stub
(`# YOUR CODE HERE` / `raise NotImplementedError()`). The mistakes are small edits of one answer cell each.

The students (their expected points, per check, are in examples/expected.json, written by hand):

- full_solution              every answer, and the four written answers;
- blank_release              the release notebook, untouched (same bytes);
- mask_after_softmax         attention zeroes the masked weights after softmax instead of masking the scores;
- no_sqrt_scaling            attention forgets to divide the scores by sqrt(d);
- previous_token_off_by_one  previous_token_weight reads pattern[:, i, i] (itself), one column off i - 1;
- split_heads_reshape_order  split_heads reshapes straight to (heads, T, d);
- kernel_crash               correct answers, and a scratch cell after section 4 that kills the kernel (os._exit);
- never_ends                 correct answers, and a scratch cell `while True: pass` (the per-cell timeout stops it).

The output is deterministic: the same release gives the same bytes on every run (nbformat's JSON, sorted keys,
fixed ids for the added cells, no outputs).
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))

from autograder.classroom import ASSIGNMENT, NOTEBOOK, release_notebook  # noqa: E402

SOURCE = REPOSITORY / "source" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
OUT = Path(__file__).resolve().parent / "submissions"
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
STUB = re.compile(r"^([ \t]*)# YOUR CODE HERE\n\1raise NotImplementedError\(\)$", re.M)


@dataclass(frozen=True)
class Edit:
    """In answer cell ``cell`` (its grade_id, the function's name), replace ``old`` (found exactly once) with ``new``."""

    cell: str
    old: str
    new: str


@dataclass(frozen=True)
class Scratch:
    """A code cell the student added (no nbgrader metadata), placed after the cell with grade_id ``after``."""

    after: str
    cell_id: str
    source: str


@dataclass(frozen=True)
class Student:
    edits: tuple[Edit, ...] = ()
    scratch: tuple[Scratch, ...] = ()
    written: dict = field(default_factory=dict)  # grade_id of a written-answer cell -> the student's markdown
    answered: bool = True  # False: the release as it is


# The solution student's written answers (their own words; graded by hand, not checked against anything).
WRITTEN = {
    "answer_scaling_prediction": (
        "I expect the average largest weight to be near 1, maybe 0.9 or more. With d = 256 and no division the "
        "dot products are sums of 256 random products, so they are spread out by about 16 instead of about 1. "
        "The winning key is then usually ahead of the runner-up by several units, and after exp that is a factor "
        "of e^several, so softmax gives almost all of the weight to one key."
    ),
    "answer_read_a_head": (
        "I picked layer 4, head 1. At the position I looked at, most of its weight goes to a token of the product "
        "name that followed an earlier copy of the current word, and little goes to its neighbours; that row of the "
        "heatmap is the darkest spot away from the diagonal. So it looks like it finds the earlier occurrence and "
        "looks at what came next. The weights only show where the average comes from, not that the prediction "
        "depends on it: for that I would have to change the input and see whether the prediction changes."
    ),
    "answer_copy_prediction": (
        "If the model copies from the name, taking `cover` out of the name should make P(cover) drop a lot, and "
        "with the name ending in `set` P(set) should go up and P(cover) down. If it only uses the description, "
        "which stays the same, the probabilities should barely move for the three names. So a big change that "
        "follows the name means copying; no change means the description alone drives it."
    ),
    "answer_mask_after_softmax": (
        "When the mask comes after softmax, each row was normalised over all positions, including the later ones, "
        "and zeroing those afterwards takes their share away, so the rows add up to less than 1 (except the last "
        "row). The later tokens are still inside the denominator of every earlier weight, so changing the last "
        "token changes the weights coffee puts on the earlier tokens and therefore its output, even with a weight "
        "of 0 on table. Nothing crashes and training still lowers the loss (it can even use the leak), so you only "
        "notice with a check like rows summing to 1 or changing a later token."
    ),
}

STUDENTS = {
    "full_solution": Student(written=WRITTEN),
    "blank_release": Student(answered=False),
    "mask_after_softmax": Student(edits=(Edit(
        "attention",
        "    if mask is not None:\n"
        "        scores = np.where(mask, scores, -np.inf)                  # hidden positions: weight exactly 0\n"
        "    weights = softmax(scores)\n",
        "    weights = softmax(scores)\n"
        "    if mask is not None:\n"
        "        weights = weights * mask                                  # hide the later positions\n",
    ),)),
    "no_sqrt_scaling": Student(edits=(Edit("attention", " / np.sqrt(d)", ""),)),
    "previous_token_off_by_one": Student(edits=(Edit("previous_token_weight", "pattern[:, rows, rows - 1]", "pattern[:, rows, rows]"),)),
    "split_heads_reshape_order": Student(edits=(Edit(
        "split_heads", "x.reshape(positions, heads, width // heads).transpose(1, 0, 2)", "x.reshape(heads, positions, width // heads)"),)),
    "kernel_crash": Student(scratch=(Scratch("s4_after", "scratch-crash", "# trying something\nimport os; os._exit(1)"),)),
    "never_ends": Student(scratch=(Scratch("s3_after", "scratch-loop", "# waiting for something\nwhile True: pass"),)),
}


def grade_id(cell) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def is_answer(cell) -> bool:
    return cell.cell_type == "code" and cell.get("metadata", {}).get("nbgrader", {}).get("solution", False)


def solution_body(source: str, where: str) -> str:
    """The lines strictly between the BEGIN and END SOLUTION markers of ``source``."""
    lines = source.split("\n")
    starts = [i for i, line in enumerate(lines) if line.strip() == BEGIN]
    ends = [i for i, line in enumerate(lines) if line.strip() == END]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise ValueError(f"{where}: expected one {BEGIN} ... {END} block in the source notebook")
    return "\n".join(lines[starts[0] + 1:ends[0]])


def without_markers(source: str) -> str:
    return "\n".join(line for line in source.split("\n") if line.strip() not in (BEGIN, END))


def type_answer(release_source: str, source: str, where: str) -> str:
    """The release cell with its stub replaced by the source's solution code, as a student would type it."""
    found = list(STUB.finditer(release_source))
    if len(found) != 1:
        raise ValueError(f"{where}: expected one `# YOUR CODE HERE` / `raise NotImplementedError()` stub in the release cell")
    stub = found[0]
    typed = release_source[:stub.start()] + solution_body(source, where) + release_source[stub.end():]
    if typed != without_markers(source):
        raise ValueError(f"{where}: the release cell around the stub differs from the source cell: "
                         "regenerate the release (nbgrader generate_assignment) from this source notebook")
    return typed


def solved(release, source) -> nbformat.NotebookNode:
    """The release notebook with every answer cell typed in from the source notebook's solutions."""
    solutions = {grade_id(cell): cell.source for cell in source.cells if is_answer(cell)}
    notebook = nbformat.from_dict(release)
    answers = [cell for cell in notebook.cells if is_answer(cell)]
    if {grade_id(cell) for cell in answers} != set(solutions):
        raise ValueError("the release and source notebooks have different answer cells")
    for cell in answers:
        cell.source = type_answer(cell.source, solutions[grade_id(cell)], f"answer cell {grade_id(cell)}")
    return notebook


def apply(notebook, student: Student, name: str) -> nbformat.NotebookNode:
    notebook = nbformat.from_dict(notebook)
    by_id = {grade_id(cell): cell for cell in notebook.cells if grade_id(cell)}
    for edit in student.edits:
        cell = by_id[edit.cell]
        count = cell.source.count(edit.old)
        if count != 1:
            raise ValueError(f"{name}: the solution of {edit.cell} contains {edit.old!r} {count} times, not once: update this mistake")
        cell.source = cell.source.replace(edit.old, edit.new)
    for answer_id, text in student.written.items():
        cell = by_id[answer_id]
        if cell.cell_type != "markdown" or not cell.metadata["nbgrader"].get("solution"):
            raise ValueError(f"{name}: {answer_id} is not a written-answer cell")
        cell.source = text
    for scratch in student.scratch:
        position = [i for i, cell in enumerate(notebook.cells) if grade_id(cell) == scratch.after]
        if len(position) != 1:
            raise ValueError(f"{name}: no cell {scratch.after} to put the scratch cell after")
        added = nbformat.v4.new_code_cell(scratch.source)
        added.id = scratch.cell_id
        notebook.cells.insert(position[0] + 1, added)
    nbformat.validate(notebook)
    return notebook


def submissions(release_bytes: bytes, source_path: Path = SOURCE) -> dict[str, bytes]:
    """{student: notebook bytes} for every student of STUDENTS."""
    release = nbformat.reads(release_bytes.decode("utf-8"), as_version=4)
    source = nbformat.read(str(source_path), as_version=4)
    answered = solved(release, source)
    made = {}
    for name, student in STUDENTS.items():
        if not student.answered:
            made[name] = release_bytes
            continue
        made[name] = (nbformat.writes(apply(answered, student, name)) + "\n").encode("utf-8")
    return made


def write(out: Path, made: dict[str, bytes]) -> None:
    """Write one <student>/attention/attention.ipynb per student into ``out``, after removing the submission
    folders already there (those holding attention/attention.ipynb; nothing else in ``out`` is touched)."""
    if out.exists():
        for folder in out.iterdir():
            if folder.is_dir() and (folder / ASSIGNMENT / f"{NOTEBOOK}.ipynb").exists():
                shutil.rmtree(folder)
    for name, data in made.items():
        folder = out / name / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / f"{NOTEBOOK}.ipynb").write_bytes(data)


def generated_release() -> bytes:
    with tempfile.TemporaryDirectory(prefix="release-") as scratch:
        return release_notebook(SOURCE.parent, Path(scratch) / "course")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="folder to write the submissions to (replaced)")
    parser.add_argument("--release", type=Path, default=None,
                        help="the release notebook to start from (default: generated now from source/ with nbgrader)")
    args = parser.parse_args(argv)
    release = args.release.read_bytes() if args.release else generated_release()
    made = submissions(release)
    write(args.out, made)
    for name in made:
        print(f"wrote {args.out / name / ASSIGNMENT / (NOTEBOOK + '.ipynb')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
