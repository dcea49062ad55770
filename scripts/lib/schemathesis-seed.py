"""Seeds the service that scripts/schemathesis.sh tests with a little data, so that reads answer with records, not
only empty pages.

  schemathesis-seed.py BASE_URL

The records: the OpenAPI document's own create examples (the examples phase then reads the very keys they hold), plus
records that differ from them — another context and session, sessions of other builds and without tags, metrics of
another scope, without component, of another item. Then builds of the example's pipeline around the example's build
(4242) in which the example test takes half its time before it: the change the change routes' examples name (its id
is the document's example, src/api/routes/changes.ts STEP_EXAMPLE), so that reading and triaging it are accepted. Exits
1 naming the request at the first answer other than 201 (200 for the builds' /bulk).
"""

import json
import sys
import urllib.error
import urllib.request


def call(base, method, path, body=None):
    """(status, parsed JSON body) of METHOD BASE+PATH with the JSON BODY; exits naming the request on an HTTP error."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        base + path, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        sys.exit(f"seeding: {method} {path} answered {error.code}: {error.read().decode(errors='replace')}")


def seed_records(document):
    """[(path, [record, ...]), ...]: what to POST, in order (contexts, then sessions, then metrics), made from the
    create examples of the OpenAPI DOCUMENT."""

    def example(path):
        return document["paths"][path]["post"]["requestBody"]["content"]["application/json"]["example"]

    context, session, metric = example("/api/v1/contexts"), example("/api/v1/sessions"), example("/api/v1/metrics")
    other_context = {**context, "h": "f00dfeed" + context["h"][8:], "cpu_vendor": None, "machine_node": "ci-runner-8"}
    sessions = [
        session,
        {
            **session,
            "session_h": "5e55" + session["session_h"][4:],
            "run_date": "2026-11-23T08:00:00",
            "description": {**session["description"], "pipeline_build_no": "4243", "__ci__": "gitlabci", "attempt": 2},
        },
        {**session, "session_h": "0ddba11", "scm_ref": None, "run_date": "2026-11-24", "description": "nightly run"},
    ]
    metrics = [
        metric,
        {
            **metric,
            "item_start_time": "2026-11-22T05:10:46",
            "item": "test_read",
            "item_variant": "test_read[big]",
            "total_time": 2.5,
            "mem_usage": -1.25,
        },
        {
            **metric,
            "session_h": sessions[1]["session_h"],
            "context_h": other_context["h"],
            "component": "",
            "kind": "module",
            "item": "",
            "item_variant": "",
            "item_path": "tests.test_toy",
            "cpu_usage": 0.9,
        },
        {**metric, "session_h": sessions[1]["session_h"], "component": "network", "kind": "package", "user_time": 1.5},
        {
            **metric,
            "session_h": sessions[2]["session_h"],
            "context_h": other_context["h"],
            "component": None,
            "kernel_time": 0.5,
        },
    ]
    return [
        ("/api/v1/contexts", [context, other_context]),
        ("/api/v1/sessions", sessions),
        ("/api/v1/metrics", metrics),
    ]


def change_lines(document):
    """NDJSON lines of POST /bulk: builds 4230-4241 of the example pipeline, the example test at half its example time
    (a few % of noise), and builds 4244-4246 at its example time, as the example build 4242 has it: a step at 4242."""

    def example(path):
        return document["paths"][path]["post"]["requestBody"]["content"]["application/json"]["example"]

    context, session, metric = example("/api/v1/contexts"), example("/api/v1/sessions"), example("/api/v1/metrics")
    lines = [{"type": "context", **context}]
    builds = [(b, 0.5) for b in range(4230, 4242)] + [(b, 1.0) for b in range(4244, 4247)]
    for i, (build, level) in enumerate(builds):
        day = 10 + i if build < 4242 else 25 + (build - 4244)
        h = f"c4a9e{build}" + session["session_h"][9:]
        description = {**session["description"], "pipeline_build_no": str(build)}
        lines.append(
            {
                "type": "session",
                **session,
                "session_h": h,
                "run_date": f"2026-11-{day:02d}T05:00:00",
                "description": description,
            }
        )
        noise = 1 + 0.02 * ((i * 7) % 5 - 2)
        lines.append(
            {
                "type": "metric",
                **metric,
                "session_h": h,
                "item_start_time": f"2026-11-{day:02d}T05:00:01",
                "total_time": round(metric["total_time"] * level * noise, 6),
            }
        )
    return lines


def main(argv):
    base = argv[1]
    _, document = call(base, "GET", "/api/v1/openapi.json")
    batches = seed_records(document)
    for path, records in batches:
        for record in records:
            status, body = call(base, "POST", path, record)
            if status != 201:
                sys.exit(f"seeding: POST {path} answered {status}: {body}")
    counts = {path: len(records) for path, records in batches}
    lines = change_lines(document)
    request = urllib.request.Request(
        base + "/api/v1/bulk",
        data="\n".join(json.dumps(line) for line in lines).encode(),
        method="POST",
        headers={"Content-Type": "application/x-ndjson"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            if response.status != 200:
                sys.exit(f"seeding: POST /bulk answered {response.status}: {response.read().decode(errors='replace')}")
    except urllib.error.HTTPError as error:
        sys.exit(f"seeding: POST /bulk answered {error.code}: {error.read().decode(errors='replace')}")
    print(
        f"seeded {counts['/api/v1/contexts']} contexts, {counts['/api/v1/sessions']} sessions, "
        f"{counts['/api/v1/metrics']} metrics, and {len(lines) // 2} builds of a change",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main(sys.argv)
