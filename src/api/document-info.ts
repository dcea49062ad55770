import { packageVersion } from '../version.js';
import type { DocumentInfo } from './openapi.js';

/** What the OpenAPI document says about the API as a whole; every route describes itself in the route table. */
export const DOCUMENT_INFO: DocumentInfo = {
  version: packageVersion(),
  description: [
    'Collects the resource measurements test suites take while they run (wall, user and kernel time, CPU and memory',
    'per test item) with the machine that ran them (the *execution context*) and the run itself (the *session*), and',
    'serves them back. It is the remote server of the pytest plugin pytest-monitor: `pytest --remote-server',
    'http://HOST:8181/api/v1`. The whole contract, for people, is docs/api.md in the repository.',
    '',
    '**Addressing.** Every route answers with and without a trailing slash; runs of slashes collapse; path parameters',
    'are percent-decoded (a `/` inside a value is `%2F`). Static segments win over parameters (`/contexts/count` is the',
    'count). GET (and HEAD) read, POST creates; any other method answers 405 with `Allow`.',
    '',
    '**Listings** are paged with `page` (1 = first, -1 = last) and `per_page`; the answer carries `prev_url`,',
    '`next_url` (relative, other query parameters kept, null at the ends) and `total_page`. A page beyond the last',
    'answers 404; page 1 (or -1) of an empty listing answers 200 with `[]`. Records come in insertion order;',
    'identifier lists (components, pipelines, builds, session ids) in ascending byte order. Counts are exact.',
    '',
    '**Creates** accept older field names too (each listed beside its field); unknown members are ignored. Replaying',
    'a create with the same content answers 201; the same key with other content answers 409.',
    '',
    '**Errors** are JSON: `{ "message": "...", "errors": { "<field>": "<what is wrong>" } }`, a field named as the',
    'caller sent it. Bad input never changes stored data.',
  ].join('\n'),
  /** The tags that group the operations, in the order the document lists them: name → what they hold. */
  tags: {
    contexts: 'Execution contexts: the machines runs used.',
    sessions: 'Sessions: one run of a test suite each, with its tags.',
    metrics: 'The measures of one test item in one session.',
    filters: 'Metrics and sessions by SCM reference, metrics by scope.',
    components: 'Metrics per component, and the pipelines, builds and sessions of a component.',
    pipelines: 'CI pipelines and builds, from the session tags `pipeline_branch` and `pipeline_build_no`.',
    resources: 'The heaviest (head) or lightest (tail) metrics by a resource.',
    items: 'Metrics of a test item, exact or by pattern.',
    variants: 'Metrics of a test variant, exact or by pattern.',
    insight: "A test's values over time, and the regressions of a build or session against its baseline.",
    cost:
      'What a suite costs: totals per build and session, trends per pipeline, the costliest tests and components, ' +
      'the tests that creep, and the noise of each machine class.',
    changes:
      "Which commit did it: the builds at which tests' levels stepped up or down over a pipeline's history, " +
      'grouped by build and ranked by the CPU-seconds they add.',
    bulk: 'Many records in one request: a whole run, as NDJSON.',
    documentation: 'This document.',
    operations: 'Liveness, readiness and Prometheus metrics (outside /api/v1).',
  },
};
