"""autograder.lms.lti.placement alone: a Deep Linking launch's cookie (https: one no other subdomain can set; http:
host-only under the tool's /deeplink), and its record, used once, from the browser holding that cookie. The whole
way through the tool and the platform is test_identity.py's."""

from __future__ import annotations

import threading

from autograder.lms.lti import placement
from autograder.lms.lti.store import OneTimeStore

LAUNCH = "lti1p3-launch-0b1e"


def remembered(tool_url="http://localhost:8020/lti") -> tuple[OneTimeStore, placement.PlacementCookie]:
    store, cookie = OneTimeStore(), placement.new_cookie(tool_url=tool_url)
    placement.remember(store=store, launch_id=LAUNCH, cookie=cookie)
    return store, cookie


def test_on_https_the_cookie_is_one_no_other_subdomain_can_set():
    cookie = placement.new_cookie(tool_url="https://hub.school.edu/lti")
    assert cookie.name.startswith("__Host-attention-lti-placement-") and (cookie.path, cookie.secure) == ("/", True)
    assert cookie.same_site == "None"  # the LMS may frame the page: sent there, over TLS only


def test_on_http_the_cookie_is_host_only_under_the_tools_deeplink():
    cookie = placement.new_cookie(tool_url="http://localhost:8020/lti/")
    assert cookie.name.startswith("attention-lti-placement-") and not cookie.secure
    assert (cookie.path, cookie.same_site) == ("/lti/deeplink", "Lax")


def test_each_launch_has_a_cookie_and_a_value_of_its_own():
    one, other = placement.new_cookie(tool_url="http://x/lti"), placement.new_cookie(tool_url="http://x/lti")
    assert one.name != other.name and one.value != other.value and len(one.value) >= 40


def test_only_the_browser_holding_the_launchs_cookie_may_place():
    store, cookie = remembered()
    assert placement.refusal(store=store, launch_id=LAUNCH, cookie_of={cookie.name: cookie.value}.get) is None
    for held in ({}, {cookie.name: "another-value"}, {"attention-lti-placement-other": cookie.value}):
        assert placement.refusal(store=store, launch_id=LAUNCH, cookie_of=held.get) == placement.ANOTHER_BROWSER
    assert placement.refusal(store=store, launch_id="lti1p3-launch-unknown", cookie_of={}.get) == placement.EXPIRED
    assert placement.refusal(store=store, launch_id="", cookie_of={}.get) == placement.EXPIRED


def test_a_launch_is_taken_once_and_then_said_to_be_made():
    store, cookie = remembered()
    assert placement.take(store=store, launch_id=LAUNCH) == {
        "cookie": cookie.name,
        "path": cookie.path,
        "secure": False,
    }
    assert placement.take(store=store, launch_id=LAUNCH) is None
    held = {cookie.name: cookie.value}.get
    assert placement.refusal(store=store, launch_id=LAUNCH, cookie_of=held) == placement.MADE_ALREADY


def test_of_many_requests_at_once_one_takes_the_launch():
    store, _ = remembered()
    taken, start = [], threading.Barrier(8)

    def place():
        start.wait()
        taken.append(placement.take(store=store, launch_id=LAUNCH))

    threads = [threading.Thread(target=place) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(taken) == 8 and sum(result is not None for result in taken) == 1
