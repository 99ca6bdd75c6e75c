"""autograder.lms.lti.accounts' rules alone: who counts as a Learner, and the account derived from the identity the
platform signs (issuer, deployment, sub), never from a name."""

from __future__ import annotations

import pytest

from autograder.lms.lti import accounts
from autograder.lms.lti.store import USERNAME

MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership#"
INSTITUTION = "http://purl.imsglobal.org/vocab/lis/v2/institution/person#"


def launch(roles, sub="user-1", iss="https://lms.example", deployment="d1", aud="client-1"):
    return {
        "iss": iss,
        "aud": aud,
        "sub": sub,
        "preferred_username": "ada",
        accounts.ROLES_CLAIM: roles,
        "https://purl.imsglobal.org/spec/lti/claim/deployment_id": deployment,
    }


@pytest.mark.parametrize(
    "roles, learner",
    [
        ([MEMBERSHIP + "Learner"], True),
        (["Learner"], True),
        ([MEMBERSHIP + "Learner", INSTITUTION + "Student"], True),
        ([MEMBERSHIP + "Learner", MEMBERSHIP + "Instructor"], False),
        (
            ["http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant", MEMBERSHIP + "Learner"],
            False,
        ),
        ([MEMBERSHIP + "Learner", INSTITUTION + "Faculty"], False),
        (["http://purl.imsglobal.org/vocab/lis/v2/system/person#SysAdmin", "Learner"], False),
        ([MEMBERSHIP + "Instructor"], False),
        ([], False),
        ("Learner", False),  # not a list: no roles
    ],
)
def test_only_a_learner_with_no_staff_role_is_a_student(roles, learner):
    assert accounts.is_learner_only(launch(roles)) is learner


def test_the_identity_is_issuer_deployment_and_sub():
    identity = accounts.identity_of(launch(["Learner"], aud=["client-1", "other"]))
    assert identity == {
        "issuer": "https://lms.example",
        "client_id": "client-1",
        "deployment_id": "d1",
        "sub": "user-1",
    }


def test_the_derived_account_is_stable_valid_and_ignores_the_username():
    one = accounts.derived_account(accounts.identity_of(launch(["Learner"])))
    renamed = launch(["Learner"])
    renamed["preferred_username"] = "bob"
    assert accounts.derived_account(accounts.identity_of(renamed)) == one
    assert one.startswith("lti-") and len(one) == 16 and USERNAME.match(one)


@pytest.mark.parametrize("change", [{"sub": "user-2"}, {"iss": "https://other.example"}, {"deployment": "d2"}])
def test_another_person_on_any_of_the_three_gets_another_account(change):
    one = accounts.derived_account(accounts.identity_of(launch(["Learner"])))
    assert accounts.derived_account(accounts.identity_of(launch(["Learner"], **change))) != one


def test_a_staff_launch_is_refused_with_the_reason():
    with pytest.raises(accounts.NoAccount, match="not a student's"):
        accounts.account_for(config=None, links=None, body=launch([MEMBERSHIP + "Instructor"]))
