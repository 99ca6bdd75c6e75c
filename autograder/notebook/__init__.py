"""One notebook through nbgrader: the chain of steps (``pipeline``), the student's kernel in its
sandbox (``kernel``), each check's verdict written (``autograde``), student content made inert (``sanitise``)
and the feedback page (``feedback``).

Hands a graded notebook and its verdicts (``autograder.verdicts``) to the gradebook and the page.
"""
