"""The course's time limits, each defined here once with the setting that changes it: what holds where the course's
configuration sets none (autograder.settings.CourseSettings reads the settings, None for one not set; the chain,
the class run and the grading service take the value from there). Every setting of the course, with its default and
who reads it: docs/configuration.md.

Nothing is imported here, so the grading service's workers (autograder.service.checking) read these without
nbgrader or a database.
"""

CELL_TIMEOUT = 60  # c.SurvivingExecute.timeout: seconds per cell in the student's kernel; a cell past it is
# interrupted and the rest of the notebook still runs (the hidden checks have their own limits, CHECKS_BUDGET)
# c.SurvivingExecute.notebook_timeout: the notebook's wall-clock seconds in the student's kernel, every cell together.
# A notebook of the course runs in about 5 s on a quiet machine and 10-20 s on a loaded one: the budget leaves room
# for that load. Alone it let 10 sleeping notebooks make a class of 200 take 1.24 x its time on two workers
# (benchmarks/sleepers.py --idle 0, quiet): IDLE_TIMEOUT stops a sleeping one after a few seconds instead.
NOTEBOOK_BUDGET = 45
# c.SurvivingExecute.idle_timeout: seconds a cell may wait without computing or printing before the kernel is stopped
# (0: no limit; the hidden checks' runner stops a call after autograder.answers.budget.IDLE_LIMIT, 2 s); no cell of
# the course waits at all
IDLE_TIMEOUT = 5.0
CHECKS_BUDGET = 120.0  # c.ExternalVerdicts.timeout: CPU seconds for all of a notebook's hidden checks
