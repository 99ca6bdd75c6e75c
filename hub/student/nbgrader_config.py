"""nbgrader for a student on the course's JupyterHub: the exchange to fetch from and submit to, nothing else.

JupyterHub (hub/jupyterhub_config.py) puts this folder on the student's JUPYTER_CONFIG_PATH and names the
exchange and the course in ATTENTION_HUB_EXCHANGE and ATTENTION_HUB_COURSE_ID. Submissions go by the student's
system account, whose name nbgrader reads from the operating system: a student cannot submit in another's name
(a folder made by hand in the inbound under another's name is refused by the instructor's collect,
autograder.collect.OwnCollect).
"""

import os

c = get_config()  # noqa: F821 (nbgrader provides it)
c.CourseDirectory.course_id = os.environ["ATTENTION_HUB_COURSE_ID"]
c.Exchange.root = os.environ["ATTENTION_HUB_EXCHANGE"]
