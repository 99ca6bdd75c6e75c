"""The named mistakes of compare(...) checks: each must be caught on the inputs its check draws, and no
two may share an id.
"""

from __future__ import annotations

from autograder import assignments
from autograder.checks import (
    EXACT,
    Compared,
    close,
    computed,
    describe_call,
)
from autograder.validate.findings import Finding
from autograder.validate.notebook import checks_place, raise_place
from autograder.verdicts import Named, named_after


def mistake_findings(checks: assignments.AssignmentChecks, kept: dict) -> list[Finding]:
    """Each named mistake of a compare(...) check, run on the inputs each seed drew: one that raises on every input
    can never be named (``mistake-raises``; raising on some, it is tried on the others); one that returns what the
    reference returns on every call of a seed cannot be told from a right answer by that seed's draws
    (``mistake-not-seen``); one that returns what an earlier one returns wherever it applies is never named, the
    earlier one being tried first (``mistake-shadowed``). A call on which the reference itself raises is left out
    (reference_findings names it)."""
    found = {}
    checks_path = assignments.checks_path(checks.folder)
    for seed, outputs in kept.items():
        for check_id, out in outputs.items():
            check = checks.checks[check_id]
            if not isinstance(check, Compared):
                continue
            calls, expected = [], []
            for number in out.numbers():
                try:
                    expected.append(computed(check.reference, out.calls[number], check.items))
                    calls.append(out.calls[number])
                except Exception:  # noqa: BLE001 - the reference's own error: reference_findings says it
                    continue
            made_by = {}  # {message: [its result per call, None where it raises]}
            for message, wrong in check.mistakes:
                key = (check_id, message)
                results, error = [], None
                for call in calls:
                    try:
                        results.append(computed(wrong, call, check.items))
                    except Exception as failure:  # noqa: BLE001 - the instructor's code: said with its place
                        results.append(None)
                        error = error or (failure, call)
                made_by[message] = results
                if key in found:
                    continue
                if calls and all(result is None for result in results):
                    failure, call = error
                    found[key] = Finding(
                        "mistake-raises",
                        raise_place(failure, checks_path),
                        f"{check_id}'s mistake {message[:60]!r} raises {type(failure).__name__}: {failure} on every "
                        f"input drawn (seed {seed}, e.g. {describe_call(call)}): it can never be named; correct it",
                    )
                    continue
                if not any(
                    result is not None and not all(close(a, b, EXACT) for a, b in zip(result, wanted))
                    for result, wanted in zip(results, expected)
                ):
                    found[key] = Finding(
                        "mistake-not-seen",
                        checks_place(checks_path, check_id),
                        f"{check_id}'s mistake {message[:60]!r} returns what the reference returns on every input "
                        f"drawn under seed {seed}: a student who makes it loses nothing. Draw inputs on which it "
                        "differs (in one of the inputs' properties), or correct the mistake's function",
                    )
                    continue
                for earlier, theirs in list(made_by.items())[:-1]:
                    if earlier != message and all(
                        mine is None or (other is not None and all(close(a, b, EXACT) for a, b in zip(mine, other)))
                        for mine, other in zip(results, theirs)
                    ):
                        found[key] = Finding(
                            "mistake-shadowed",
                            checks_place(checks_path, check_id),
                            f"{check_id}'s mistake {message[:60]!r} returns what the earlier {earlier[:60]!r} "
                            f"returns on every input drawn (seed {seed}): the earlier one is tried first, so this one "
                            "is never named; delete it, or make it another mistake",
                        )
                        break
    return list(found.values())


def mistake_id_findings(checks: assignments.AssignmentChecks) -> list[Finding]:
    """Named mistakes of compare(...) checks whose words before the colon differ but give the same id
    (verdicts.named_after: those words, lowercase letters only, eight at most): the report would count them as one
    mistake. The same words in two checks (the fix after the colon worded for each) are one mistake on purpose, and
    a message Named with its own id keeps it: neither is reported."""
    checks_path = assignments.checks_path(checks.folder)
    named: dict = {}  # {id: {the words before the colon: (the first message with them, its check)}}
    for check_id, check in checks.checks.items():
        for message, _ in check.mistakes if isinstance(check, Compared) else ():
            if not isinstance(message, Named):
                words = message.split(":", 1)[0].strip()
                named.setdefault(named_after(message), {}).setdefault(words, (message, check_id))
    findings = []
    for mistake, said in named.items():
        (first, first_check), *others = said.values()
        for message, check_id in others:
            cuts = (len(message), 60, 40)
            line = next(filter(None, (assignments.checks_line(checks.folder, message[:most]) for most in cuts)), None)
            findings.append(
                Finding(
                    "mistake-ids-collide",
                    f"{line[0]}:{line[1]}" if line else checks_place(checks_path, check_id),
                    f"the mistakes {first[:60]!r} ({first_check}) and {message[:60]!r} ({check_id}) both get the id "
                    f"{mistake!r}, so the class's report counts them as one mistake: make their words before the "
                    "colon differ in letters within the first eight words (the id is made of them; numbers and signs "
                    "are left out), or give both the same words if they are one mistake",
                )
            )
    return findings
