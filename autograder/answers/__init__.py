"""The hidden checks' side of grading: draw inputs, call the student's functions in a sandboxed runner
(``runner``, ``process``, ``session``, ``sandbox``, ``budget``), judge the results here (``grading``), with
stand-ins for graded functions the student's may call.

Hands one verdict per graded function (``autograder.verdicts.Verdict``) to the notebook's chain.
"""
