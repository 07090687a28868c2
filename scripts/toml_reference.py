#!/usr/bin/env python3
"""Reads TOML documents with Python's tomllib: the reference for Vitrine's TOML reader.

Reads JSON from the file named by argv[1] (or stdin): a list of TOML documents as strings.
Writes JSON to stdout, one result per document, in order:
  {"accepted": true, "value": "<canonical form>"}  or  {"accepted": false, "error": "..."}

tomllib implements TOML 1.0 but keeps integers of any size; the specification requires an
error for integers outside the signed 64-bit range, so such documents are reported as rejected.

The canonical form (Tests/ScheduleTests/TOMLReferenceTests.swift writes the same one):
  table     {key=value,...}  keys sorted by their UTF-8 bytes, each written as a string
  array     [value,...]
  string    s<UTF-8 byte count>:<text>
  integer   i<decimal>
  float     fnan, or f<IEEE 754 bit pattern as an unsigned decimal>
  boolean   btrue / bfalse
  offset date-time  D<YYYY-MM-DDTHH:MM:SS.ffffff><offset in minutes, signed>
  local date-time   L<YYYY-MM-DDTHH:MM:SS.ffffff>
  local date        d<YYYY-MM-DD>
  local time        t<HH:MM:SS.ffffff>
"""
import datetime
import json
import math
import struct
import sys
import tomllib

INT64 = range(-(2**63), 2**63)


class OutOfRange(Exception):
    pass


def string(text):
    return "s%d:%s" % (len(text.encode("utf-8")), text)


def clock(t):
    return "%02d:%02d:%02d.%06d" % (t.hour, t.minute, t.second, t.microsecond)


def day(d):
    return "%04d-%02d-%02d" % (d.year, d.month, d.day)


def canonical(value):
    if isinstance(value, bool):
        return "btrue" if value else "bfalse"
    if isinstance(value, int):
        if value not in INT64:
            raise OutOfRange("integer %d is out of the 64-bit range" % value)
        return "i%d" % value
    if isinstance(value, float):
        if math.isnan(value):
            return "fnan"
        return "f%d" % struct.unpack("<Q", struct.pack("<d", value))[0]
    if isinstance(value, str):
        return string(value)
    if isinstance(value, datetime.datetime):
        text = day(value) + "T" + clock(value)
        if value.tzinfo is None:
            return "L" + text
        return "D" + text + "%d" % (value.utcoffset().total_seconds() // 60)
    if isinstance(value, datetime.date):
        return "d" + day(value)
    if isinstance(value, datetime.time):
        return "t" + clock(value)
    if isinstance(value, list):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: k.encode("utf-8"))
        return "{" + ",".join(string(k) + "=" + canonical(value[k]) for k in keys) + "}"
    raise TypeError(type(value))


def read(document):
    try:
        return {"accepted": True, "value": canonical(tomllib.loads(document))}
    except (tomllib.TOMLDecodeError, OutOfRange) as error:
        return {"accepted": False, "error": str(error)}
    except RecursionError:
        return {"accepted": False, "error": "nesting too deep"}


def main():
    source = open(sys.argv[1], encoding="utf-8") if len(sys.argv) > 1 else sys.stdin
    documents = json.load(source)
    json.dump([read(d) for d in documents], sys.stdout)


if __name__ == "__main__":
    main()
