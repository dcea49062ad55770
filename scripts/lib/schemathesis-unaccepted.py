"""The operations that schemathesis called but that never accepted a request (scripts/schemathesis.sh).

  schemathesis-unaccepted.py REPORT.har BASE_URL

Every operation schemathesis called must have accepted at least one of its requests (a 2xx): its checks only say that
each answer conformed, so an operation whose every request was turned away (a body the client could not encode, a
schema nobody can satisfy) would pass them without ever being exercised. Reads the HAR report and the service's OpenAPI
document (BASE_URL/api/v1/openapi.json); prints each such operation on stderr and their number on stdout (0 when all
did).
"""

import collections
import json
import re
import sys
import urllib.parse
import urllib.request

METHODS = ("get", "put", "post", "delete", "patch", "head")


def operations_of(document):
    """[(METHOD, path template, regex of its paths), ...] of the OpenAPI DOCUMENT, templates with fewer parameters
    first, so that /sessions/count is not taken for /sessions/{h}."""
    return sorted(
        (
            (method.upper(), path, re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(path)) + "$"))
            for path, item in document["paths"].items()
            for method in item
            if method in METHODS
        ),
        key=lambda operation: operation[1].count("{"),
    )


def unaccepted(operations, entries):
    """[(METHOD path, requests sent), ...]: the operations of OPERATIONS (operations_of) that the HAR ENTRIES called
    and that never answered 2xx, in the order of OPERATIONS."""
    called, accepted = collections.Counter(), collections.Counter()
    for entry in entries:
        method, path = entry["request"]["method"], urllib.parse.urlsplit(entry["request"]["url"]).path
        operation = next(((m, p) for m, p, rx in operations if m == method and rx.match(path)), None)
        if operation:
            called[operation] += 1
            accepted[operation] += 200 <= entry["response"]["status"] < 300
    return [(f"{m} {p}", called[(m, p)]) for m, p, _ in operations if called[(m, p)] and not accepted[(m, p)]]


def main(argv):
    har, base = argv[1], argv[2]
    with urllib.request.urlopen(base + "/api/v1/openapi.json", timeout=30) as response:
        document = json.load(response)
    with open(har) as file:
        entries = json.load(file)["log"]["entries"]
    never = unaccepted(operations_of(document), entries)
    for operation, sent in never:
        print(f"never accepted a request: {operation} ({sent} sent)", file=sys.stderr)
    print(len(never))


if __name__ == "__main__":
    main(sys.argv)
