"""docs/configuration.md lists every setting a course's nbgrader_config.py may set for the project, once: the
sections the project declares (c.InstantChecks.*, c.LateDays.*, c.ExchangeService.*, c.Cluster.*) and the nbgrader
settings autograder.settings reads."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from autograder.cluster.settings import SECTION, ClusterSettings
from autograder.policy import InstantChecks
from autograder.settings import ExchangeService
from autograder.term import LateDays

REPOSITORY = Path(__file__).resolve().parents[2]
READ = {  # what autograder.settings.CourseSettings.read takes from nbgrader's own sections
    "c.CourseDirectory.db_url",
    "c.SurvivingExecute.timeout",
    "c.SurvivingExecute.notebook_timeout",
    "c.SurvivingExecute.idle_timeout",
    "c.ExternalVerdicts.timeout",
    "c.LateSubmissionPlugin.penalty_method",
}


def declared() -> set[str]:
    names = {
        f"c.{kind.__name__}.{name}"
        for kind in (InstantChecks, LateDays, ExchangeService)
        for name in kind.class_trait_names(config=True)
    }
    names |= {f"c.{SECTION}.{field.name}" for field in dataclasses.fields(ClusterSettings)}
    return names | READ


def test_every_setting_is_listed_once_on_the_page():
    page = (REPOSITORY / "docs" / "configuration.md").read_text()
    table = page[page.index("## Every setting of the course") :]
    listed = re.findall(r"^\| `(c\.\w+\.\w+)` \|", table, re.M)
    assert sorted(set(listed)) == sorted(listed), "a setting listed twice"
    assert declared() - set(listed) == set(), "list the setting on docs/configuration.md"
    assert set(listed) - declared() == set(), "the page lists a setting no code declares"


def test_the_readme_links_the_page():
    assert "docs/configuration.md" in (REPOSITORY / "README.md").read_text()
