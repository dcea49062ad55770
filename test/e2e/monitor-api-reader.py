"""Reads a monitor-server the way a user of the original server's own Python client does: `monitor_api.Monitor`
(PyPI monitor-server-api 1.1.0, in the venv of scripts/monitor-api-venv.sh), its collections turned into pandas
DataFrames. Run by test/e2e/monitor-api-client.test.ts:

    python monitor-api-reader.py '<plan as JSON>'

The plan names the server and the records to ask about. Prints one JSON object on stdout: for every call, either
{"value": <what the client holds>} or {"error": "<exception>", "at": "<monitor_api file:line that raised>"}, so that
a call the client cannot make against the server is reported rather than ending the run.
"""

import datetime
import json
import math
import sys
import traceback
from urllib.parse import quote

import pandas as pd
from monitor_api import (
    Context,
    Contexts,
    Metrics,
    MetricScope,
    Monitor,
    ResourceMethod,
    ResourceType,
    Session,
    Sessions,
)


def plain(value):
    """What the client holds, as JSON: Metrics as the records of their DataFrame, Sessions and Contexts as
    {key: record}, a Session with its tags as a nested object. NaN (a tag a session does not have, in a
    DataFrame) becomes null; dates become ISO 8601 text."""
    if isinstance(value, Metrics):
        return frame(value.to_df())
    if isinstance(value, (Sessions, Contexts)):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, Session):
        return plain(value.to_dict())
    if isinstance(value, Context):
        return plain(value.to_dict())
    if isinstance(value, pd.DataFrame):
        return frame(value)
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (pd.Timestamp, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return plain(value.item())
    return value


def frame(df):
    return [plain(record) for record in df.to_dict(orient="records")]


def where(error):
    """The innermost frame of monitor_api in the traceback: the client code that could not cope."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if "/monitor_api/" in f.filename.replace("\\", "/")]
    if not frames:
        return None
    f = frames[-1]
    return f"monitor_api/{f.filename.replace(chr(92), '/').split('/monitor_api/', 1)[1]}:{f.lineno}"


def main():
    plan = json.loads(sys.argv[1])
    monitor = Monitor(plan["url"])
    results = {}

    def call(name, fn):
        try:
            results[name] = {"value": plain(fn())}
        except Exception as error:  # noqa: BLE001 - reported to the test, which decides
            results[name] = {"error": f"{type(error).__name__}: {error}", "at": where(error)}

    if plan.get("only") == "paging":
        call("count_metrics", lambda: monitor.count_metrics())
        call("list_metrics", lambda: monitor.list_metrics())
        print(json.dumps(results))
        return

    s, c = plan["sessions"], plan["contexts"]

    # Sessions: counts, the listing (as a user's DataFrame: one column per tag), one session, its metrics.
    call("count_sessions", lambda: monitor.count_sessions())
    call("list_sessions", lambda: monitor.list_sessions())
    call("list_sessions.to_df", lambda: monitor.list_sessions().to_df())
    call(
        "list_sessions.with_tags", lambda: monitor.list_sessions(with_tags=["pipeline_branch"], restrict_flags=["main"])
    )
    call(
        "list_sessions().with_tags(pipeline_branch=main)",
        lambda: monitor.list_sessions().with_tags(pipeline_branch="main"),
    )
    call("list_sessions().with_tags(__ci__)", lambda: monitor.list_sessions().with_tags("__ci__"))
    call("get_session", lambda: monitor.get_session(s["main41"]))
    call("get_session.unknown", lambda: monitor.get_session(plan["unknown_session"]))
    call("list_session_metrics", lambda: monitor.list_session_metrics(s["main41"]))
    call("list_session_metrics.unknown", lambda: monitor.list_session_metrics(plan["unknown_session"]))

    # Contexts.
    call("count_contexts", lambda: monitor.count_contexts())
    call("list_contexts", lambda: monitor.list_contexts())
    call("list_contexts.to_df", lambda: monitor.list_contexts().to_df())
    call("get_context", lambda: monitor.get_context(c["b"]))
    call("get_context.unknown", lambda: monitor.get_context(plan["unknown_context"]))
    call("list_context_metrics", lambda: monitor.list_context_metrics(c["b"]))

    # Metrics: counts under each condition, the listings and filters.
    call("count_metrics", lambda: monitor.count_metrics())
    call("count_metrics.session", lambda: monitor.count_metrics(session_h=s["main42"]))
    call("count_metrics.context", lambda: monitor.count_metrics(context_h=c["a"]))
    call("count_metrics.scm", lambda: monitor.count_metrics(scm_ref=plan["scm"]))
    call("list_metrics", lambda: monitor.list_metrics())
    call("list_metrics_by_type.function", lambda: monitor.list_metrics_by_type(MetricScope.FUNCTION))
    call("list_metrics_by_type.module", lambda: monitor.list_metrics_by_type(MetricScope.MODULE))
    call("list_metrics_by_scm_id", lambda: monitor.list_metrics_by_scm_id(plan["scm"]))
    call("list_item_metrics", lambda: monitor.list_item_metrics(plan["item"]))
    call("list_metrics_from_pattern.item", lambda: monitor.list_metrics_from_pattern(item=plan["item_pattern"]))
    call(
        "list_metrics_from_pattern.variant", lambda: monitor.list_metrics_from_pattern(variant=plan["variant_pattern"])
    )
    call("list_metrics_of_variant", lambda: monitor.list_metrics_of_variant(plan["variant"]))
    call(
        "list_metrics_of_variant.component",
        lambda: monitor.list_metrics_of_variant(plan["variant"], component=plan["component"]),
    )

    # Components.
    call("count_components", lambda: monitor.count_components())
    call("list_components", lambda: monitor.list_components())
    call("list_component_metrics", lambda: monitor.list_component_metrics(plan["component"]))
    call("list_component_metrics.none", lambda: monitor.list_component_metrics())
    call("list_component_pipelines", lambda: monitor.list_component_pipelines(plan["component"]))
    call(
        "list_component_pipeline_builds",
        lambda: monitor.list_component_pipeline_builds(plan["component"], plan["pipeline"]),
    )
    # The empty component (metrics that belong to none), where a user passes "".
    call("list_component_metrics.empty", lambda: monitor.list_component_metrics(""))
    call("list_component_pipelines.empty", lambda: monitor.list_component_pipelines(""))
    call(
        "list_metrics_of_variant.empty_component",
        lambda: monitor.list_metrics_of_variant(plan["variant"], component=""),
    )
    call(
        "list_metrics_resources_from_component.empty",
        lambda: monitor.list_metrics_resources_from_component("", ResourceType.MEMORY, ResourceMethod.TOP, 2),
    )

    # Pipelines and builds.
    call("list_pipelines", lambda: monitor.list_pipelines())
    call("list_pipeline_builds", lambda: monitor.list_pipeline_builds(plan["pipeline"]))
    call("list_build_sessions", lambda: monitor.list_build_sessions(plan["pipeline"], plan["build"]))
    # A Jenkins multibranch pipeline ("feature/login"): the client puts names into paths as they are.
    call("list_pipeline_builds.slash", lambda: monitor.list_pipeline_builds(plan["slash_pipeline"]))
    call(
        "list_pipeline_builds.slash_encoded",
        lambda: monitor.list_pipeline_builds(quote(plan["slash_pipeline"], safe="")),
    )
    call(
        "list_build_sessions.slash_encoded",
        lambda: monitor.list_build_sessions(quote(plan["slash_pipeline"], safe=""), plan["slash_build"]),
    )

    # Heaviest (TOP) and lightest (LOWEST) tests, everywhere and per component, pipeline and build.
    for resource in ResourceType:
        for method in ResourceMethod:
            call(
                f"list_metrics_resources.{resource.name}.{method.name}",
                lambda resource=resource, method=method: monitor.list_metrics_resources(resource, method, 3),
            )
    call(
        "list_metrics_resources_from_component",
        lambda: monitor.list_metrics_resources_from_component(
            plan["component"], ResourceType.MEMORY, ResourceMethod.TOP, 2
        ),
    )
    call(
        "list_metrics_resources_from_pipeline",
        lambda: monitor.list_metrics_resources_from_pipeline(
            plan["pipeline"], ResourceType.CPU, ResourceMethod.LOWEST, 2
        ),
    )
    call(
        "list_metrics_resources_from_build",
        lambda: monitor.list_metrics_resources_from_build(
            plan["pipeline"], plan["build"], ResourceType.TOTAL_TIME, ResourceMethod.TOP, 5
        ),
    )

    # Crossing collections, as a user joins them before analysing.
    def metrics_of_a_session_or_a_context():
        sessions, contexts = Sessions(), Contexts()
        sessions.add(monitor.get_session(s["main41"]))
        contexts.add(monitor.get_context(c["b"]))
        return monitor.list_metrics_from(sessions=sessions, contexts=contexts)

    call("list_metrics_from", metrics_of_a_session_or_a_context)
    call("list_sessions_from", lambda: monitor.list_sessions_from(monitor.list_context_metrics(c["b"])))
    call("list_contexts_from", lambda: monitor.list_contexts_from(monitor.list_session_metrics(s["main42"])))
    call(
        "list_metrics.to_df(sessions, contexts)",
        lambda: monitor.list_metrics().to_df(sessions=monitor.list_sessions(), contexts=monitor.list_contexts()),
    )

    print(json.dumps(results))


if __name__ == "__main__":
    main()
