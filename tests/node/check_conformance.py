#!/usr/bin/env python3
"""Holds a conformance run to its baseline, check by check.

usage: check_conformance.py BASELINE.toml REVISION RESULTS_DIR

RESULTS_DIR is what `conformance server --requirements REVISION -o RESULTS_DIR` wrote: one
directory per scenario with a checks.json. The baseline lists, per revision and scenario, the
checks that cannot pass on a real vault server (they need the suite's own fixture tools,
prompts or resources), each with its reason. The run fails when
  - a check fails that the baseline does not list (a real failure), or
  - a listed check did not fail (it passes now, or its scenario no longer ran): the baseline
    must shrink with it, so it never hides a regression.
Scenario-level baselines would hide a regression in a scenario's other checks; this does not.
"""

import json
import pathlib
import re
import sys
import tomllib

TIMESTAMP = re.compile(r"-\d{4}-\d\d-\d\dT[\d-]+Z$")


def scenario_of(directory: pathlib.Path) -> str:
    name = TIMESTAMP.sub("", directory.name)
    return name.removeprefix("server-")


def main() -> int:
    baseline_path, revision, results = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
    with open(baseline_path, "rb") as file:
        allowed = tomllib.load(file).get(revision, {})
    runs = sorted(results.glob("*/checks.json"))
    if not runs:
        print(f"no scenario results under {results}: the suite did not run")
        return 1
    problems, expected, passed, warned = [], 0, 0, 0
    seen: dict[str, set[str]] = {}
    for checks_file in runs:
        scenario = scenario_of(checks_file.parent)
        failed = seen.setdefault(scenario, set())
        for check in json.loads(checks_file.read_text()):
            status, check_id = check.get("status"), check.get("id")
            if status == "FAILURE":
                failed.add(check_id)
                if check_id in allowed.get(scenario, {}):
                    expected += 1
                else:
                    message = (check.get("errorMessage") or "")[:300]
                    problems.append(f"unexpected failure: {scenario} / {check_id}: {message}")
            elif status == "WARNING":
                warned += 1
                message = (check.get("errorMessage") or "")[:200]
                print(f"   warning: {scenario} / {check_id}: {message}")
            elif status == "SUCCESS":
                passed += 1
    for scenario, checks in allowed.items():
        for check_id, reason in checks.items():
            if check_id not in seen.get(scenario, set()):
                problems.append(
                    f"stale baseline entry: {scenario} / {check_id} did not fail "
                    f"(listed because: {reason}); remove it from {baseline_path}"
                )
    print(
        f"   {revision}: {len(runs)} scenarios, {passed} checks passed, "
        f"{expected} failed as the baseline expects (fixture-only), {warned} warnings"
    )
    for problem in problems:
        print(f"   {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
