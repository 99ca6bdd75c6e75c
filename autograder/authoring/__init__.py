"""Authoring: what an instructor's assignment is checked with before it is released.

- autograder.authoring.copies: the reference's and the solution's statements found again in other code (a
  release), compared as syntax trees with the variables renamed, so a pasted answer is found however it is spaced.

Hands on findings to ``python -m autograder.validate`` (the release's ``release-holds-reference``).
"""
