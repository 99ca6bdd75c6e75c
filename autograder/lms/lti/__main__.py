"""python -m autograder.lms.lti serve|passback|roster --config tool.json: the LTI tool's service, the scores to the
LMS, or the course's members from the LMS (Names and Role Provisioning Services)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import requests
import tornado.ioloop
from pylti1p3.exception import LtiException

from autograder.lms.lti.config import ConfigError, load_config
from autograder.lms.lti.passback import PassbackOptions, send_scores
from autograder.lms.lti.roster import RosterError, sync_members
from autograder.lms.lti.tool import make_app


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.lms.lti", description=__doc__)
    parser.add_argument("command", choices=("serve", "passback", "roster"))
    parser.add_argument("--config", type=Path, required=True, help="the LTI config file (see the README)")
    parser.add_argument("--port", type=int, default=8020, help="serve: the port on 127.0.0.1 (default 8020)")
    parser.add_argument("--db", default=None, help="passback: the gradebook's URL (default: the course's)")
    args = parser.parse_args(argv)
    try:
        config = load_config(args.config)
    except ConfigError as error:
        print(f"FAILED: {error}", file=sys.stderr)
        return 1
    if args.command == "roster":
        try:
            change = sync_members(config)
        except (RosterError, LtiException, requests.RequestException) as error:
            print(f"FAILED: the course's members could not be read from the LMS: {error}", file=sys.stderr)
            return 1
        print("\n".join(change.lines()))
        return 0
    if args.command == "passback":
        result = send_scores(PassbackOptions(config=config, db=args.db))
        print("\n".join(result.summary()))
        return 2 if result.pending else 0
    make_app(config).listen(args.port, address="127.0.0.1")
    print(f"LTI tool on http://127.0.0.1:{args.port} for {config.tool_url}", flush=True)
    tornado.ioloop.IOLoop.current().start()
    return 0


if __name__ == "__main__":
    sys.exit(main())
