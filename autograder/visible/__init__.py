"""The visible checks made from the hidden ones: what an assignment's checks name, recorded as numbers on public inputs
for the notebook's check cells (lib.check reads them), and what those let through.

``record`` draws each check's public inputs and writes the reference's values and each named mistake's into
``source/<assignment>/visible_checks.json`` (``python -m autograder.visible``); ``gaps`` says, for validate, when that
file is stale and which named mistake no public input shows. It hands on the file nbgrader releases beside the
notebook, and validate's findings.
"""
