"""nbgrader for the instructor on the course's JupyterHub: the course folder's own configuration (made by
autograder.course.classroom: the repository's steps, the course root, the gradebook), the exchange, and a collect that
takes only what each student made.

JupyterHub (hub/jupyterhub_config.py) puts this folder on the instructor's JUPYTER_CONFIG_PATH and names the
course folder, its name and the exchange in ATTENTION_HUB_COURSE, ATTENTION_HUB_COURSE_ID and
ATTENTION_HUB_EXCHANGE, so Formgrader, release, collect and release_feedback all work on the one course whichever
folder the instructor's server is in.
"""

import os

c = get_config()  # noqa: F821 (nbgrader provides it)
_course_config = os.path.join(os.environ["ATTENTION_HUB_COURSE"], "nbgrader_config.py")
if not os.path.exists(_course_config):  # load_subconfig would skip a missing file without a word
    raise FileNotFoundError(f"the course configuration {_course_config} is missing: start the hub with make hub")
load_subconfig(_course_config)  # noqa: F821
c.CourseDirectory.course_id = os.environ["ATTENTION_HUB_COURSE_ID"]
c.Exchange.root = os.environ["ATTENTION_HUB_EXCHANGE"]
# nbgrader's collect follows symbolic links and collects a submission in another's name with a warning only:
# autograder.hub.collect refuses both (nbgrader's plugin point; docs/upstream/nbgrader-collect.md)
c.ExchangeFactory.collect = "autograder.hub.collect.OwnCollect"
