"""schemathesis hooks for scripts/schemathesis.sh: sends `application/x-ndjson` bodies (POST /api/v1/bulk).

The OpenAPI document describes an NDJSON body as an array whose items are its lines; schemathesis has no serializer
for that media type, so without this one it could not call the route. A generated array becomes one JSON line per
item; anything else (negative cases: an object, a string, null) becomes one line holding that JSON value. The
function returns the body's bytes, as `schemathesis.serializer` expects (a dict would be sent form-encoded).
"""

import json

import schemathesis


@schemathesis.serializer("application/x-ndjson")
def ndjson(_ctx, value):
    if isinstance(value, bytes):
        return value
    items = value if isinstance(value, list) else [value]
    return "".join(json.dumps(item) + "\n" for item in items).encode("utf8")
