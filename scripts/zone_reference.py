#!/usr/bin/env python3
"""UTC offsets from Python's zoneinfo: the reference for Vitrine's TZif reader.

Reads JSON from argv[1]: {"zones": [...], "instants": [unix seconds, ...],
"locals": ["2026-03-29T02:30:00", ...]} and writes
{"offsets": {zone: [seconds east, ...]}, "instants": {zone: [unix seconds for each local, fold=0]}}.
"""
import json
import sys
from datetime import datetime, timezone, timedelta
from zoneinfo import ZoneInfo


def main():
    request = json.load(open(sys.argv[1]))
    offsets, instants = {}, {}
    for name in request["zones"]:
        zone = ZoneInfo(name)
        offsets[name] = [int(datetime.fromtimestamp(t, timezone.utc).astimezone(zone).utcoffset().total_seconds())
                         for t in request["instants"]]
        converted = []
        for text in request["locals"]:
            naive = datetime.fromisoformat(text)
            aware = naive.replace(tzinfo=zone, fold=0)
            # A wall time in a gap: RFC 5545 reads it with the offset before the gap, which is
            # what fold=0 gives in Python (the "earlier" offset applied to a missing time).
            converted.append(int((aware - datetime(1970, 1, 1, tzinfo=timezone.utc)).total_seconds()))
        instants[name] = converted
    json.dump({"offsets": offsets, "instants": instants}, sys.stdout)


if __name__ == "__main__":
    main()
