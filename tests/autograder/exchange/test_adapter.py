"""The folder exchange behind the adapter (autograder.exchange.adapter): what the service and Collect read from
nbgrader's inbound, as they read it before the adapter; and the settings' choice of exchange."""

from __future__ import annotations

import datetime
import os

from autograder.exchange.adapter import Folder, open_exchange
from autograder.exchange.ngshare import NgShare
from autograder.settings import ExchangeService

STATED = datetime.datetime(2020, 1, 1)  # a time a name may state: never the Submit's time


def test_a_folder_submit_is_timed_by_its_change_time_and_other_entries_are_judged_alone(tmp_path):
    inbound = tmp_path / "inbound"
    exchange = Folder(inbound)
    assert (exchange.marker(), exchange.names()) == (None, set())  # no inbound yet: nothing, no error
    name = f"ada+attention+{STATED:%Y-%m-%d %H:%M:%S.%f} UTC+1"
    (inbound / name).mkdir(parents=True)
    (inbound / name / "attention.ipynb").write_text("{}")
    (inbound / "ada+attention+link").symlink_to(inbound / name)
    os.symlink(inbound / name, inbound / f"bo+attention+{STATED:%Y-%m-%d %H:%M:%S.%f} UTC+2")
    (stamp, changed) = exchange.marker()
    assert stamp == ((inbound.stat().st_ino, inbound.stat().st_mtime_ns)) and changed == inbound.stat().st_mtime
    assert len(exchange.names()) == 3
    submit = exchange.examine(os.fsencode(name), "attention", "attention.ipynb")
    assert (submit.student, submit.stated, submit.folder) == ("ada", STATED, inbound / name)
    assert submit.observed > STATED + datetime.timedelta(days=365)  # the system's change time, not the name's
    assert exchange.examine(os.fsencode(name), "positions", "positions.ipynb") is None  # another assignment's
    assert "the time in its name is not one nbgrader writes" in exchange.examine(
        b"ada+attention+link", "attention", "attention.ipynb"
    )
    forged = f"bo+attention+{STATED:%Y-%m-%d %H:%M:%S.%f} UTC+2"
    assert exchange.examine(os.fsencode(forged), "attention", "x") == "it is a symbolic link, not a folder"


def test_the_settings_choose_the_exchange(tmp_path, monkeypatch):
    folder = open_exchange(ExchangeService(), folder=tmp_path / "course101", course_id="course101")
    assert isinstance(folder, Folder) and folder.inbound == tmp_path / "course101" / "inbound" and folder.settles
    monkeypatch.setenv("TOKEN", "secret")
    chosen = ExchangeService(kind="ngshare", url="http://127.0.0.1:9/api", token_env="TOKEN")
    ngshare = open_exchange(chosen, folder=tmp_path / "course101", course_id="course101")
    assert isinstance(ngshare, NgShare) and not ngshare.settles and ngshare.url == "http://127.0.0.1:9/api/"
    assert ngshare.inbound == tmp_path / "course101" / "ngshare-copies" and ngshare.inbound.stat().st_mode & 0o077 == 0
    monkeypatch.delenv("TOKEN")
    try:
        open_exchange(chosen, folder=tmp_path / "course101", course_id="course101")
    except RuntimeError as error:
        assert "$TOKEN holds no token: set it to the hub API token of an instructor" in str(error)
    else:
        raise AssertionError("an ngshare exchange without a token was opened")
