"""The grading service: instant checks of each Submit (``instant``; what its workers run: ``checking``), recorded
(autograder.attempts) under the instructor's policy (autograder.policy), shown on a JupyterHub service's
pages (``app``).

Hands verdicts to the student's page and, where the policy says so, scores to the LMS.

Its worker processes start by importing this package: jsonschema (under nbformat, which reads each Submit) imports
rfc3987_syntax when installed, only to check the "iri" string format, and that builds a grammar at import, about 1 s
of CPU, half of a worker's start before its first check. No schema read here uses that format, so the service and
its workers never import it (jsonschema leaves the format unchecked; a process that imported it already keeps it).
"""

import sys

sys.modules.setdefault("rfc3987_syntax", None)  # an import of it raises ImportError, which jsonschema expects
