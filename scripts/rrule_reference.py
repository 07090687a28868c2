#!/usr/bin/env python3
"""Expands recurrence rules with python-dateutil: the reference for Vitrine's RRULE subset.

Reads JSON from the file named by argv[1] (or stdin):
  [{"id": 0, "dtstart": "2026-01-31T09:00:00", "rrule": "FREQ=MONTHLY;...",
    "exdates": ["2026-03-31"], "limit": 60, "through": "2030-12-31"}, ...]
and writes JSON to stdout: [{"id": 0, "dates": ["2026-01-31", ...]}, ...]
(the dates of the first `limit` occurrences on or before `through`, EXDATEs removed).

Vitrine reads a date-only UNTIL as the whole of that day; dateutil reads it as midnight,
so such an UNTIL is passed to dateutil as 23:59:59 of that day.
"""
import json
import sys
from datetime import datetime, date
from itertools import islice

from dateutil import rrule


def expand(case):
    dtstart = datetime.fromisoformat(case["dtstart"])
    text = case["rrule"]
    parts = []
    for part in text.split(";"):
        name, _, value = part.partition("=")
        if name.upper() == "UNTIL" and len(value) == 8:
            value = value + "T235959"
        parts.append(name + "=" + value)
    rule = rrule.rrulestr(";".join(parts), dtstart=dtstart)
    ruleset = rrule.rruleset()
    ruleset.rrule(rule)
    for exdate in case.get("exdates", []):
        day = date.fromisoformat(exdate)
        ruleset.exdate(datetime(day.year, day.month, day.day, dtstart.hour, dtstart.minute, dtstart.second))
    through = datetime.fromisoformat(case["through"] + "T23:59:59")
    dates = []
    for occurrence in islice(ruleset, case["limit"] + len(case.get("exdates", []))):
        if occurrence > through or len(dates) >= case["limit"]:
            break
        dates.append(occurrence.date().isoformat())
    return {"id": case["id"], "dates": dates}


def main():
    source = open(sys.argv[1]) if len(sys.argv) > 1 else sys.stdin
    cases = json.load(source)
    json.dump([expand(case) for case in cases], sys.stdout)


if __name__ == "__main__":
    main()
