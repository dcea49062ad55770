import Joi from 'joi';
import { RECORD_RULES, validateBatch, type IngestOutcome } from '../../application/ingest.js';
import { ValidationError } from '../../domain/errors.js';
import { RECORD_KINDS, type RecordKind } from '../../domain/records.js';
import { nameAsSent } from '../../domain/validation/validate.js';
import { StoreUnavailableError } from '../../store/errors.js';
import type { ServiceMetrics } from '../../observability/metrics.js';
import { badRequest, fromStoreError, serviceUnavailable, type HttpError } from '../errors.js';
import { NDJSON, type NdjsonRecord } from '../ndjson-body.js';
import type { BulkAnswer, BulkLineResult } from '../../wire/bulk.js';
import { membersOf } from '../../wire/schema.js';
import { route, type Reply, type Route, type RouteDeps, type RouteRequest } from '../routing/route.js';
import { outcomeOf } from '../routing/route-kinds.js';
import { EXAMPLES } from '../schemas.js';

/** A refused line's status → its outcome in monitor_records_ingested_total (as the create routes count it). */
const OUTCOME_OF: Record<number, string> = { 400: 'rejected', 409: 'conflict', 422: 'unknown_reference' };

/** Counts lines in monitor_records_ingested_total, one increment per (kind, outcome). */
function countIngested(metrics: ServiceMetrics, lines: ReadonlyArray<readonly [string, string]>): void {
  const tally = new Map<string, { kind: string; outcome: string; n: number }>();
  for (const [kind, outcome] of lines) {
    const key = `${kind} ${outcome}`;
    const entry = tally.get(key) ?? { kind, outcome, n: 0 };
    entry.n += 1;
    tally.set(key, entry);
  }
  for (const { kind, outcome, n } of tally.values()) metrics.recordsIngested.inc({ kind, outcome }, n);
}

/** What the single create route would have answered for this line's refusal. */
function httpErrorOf(error: unknown, { type, body }: NdjsonRecord): HttpError {
  if (error instanceof ValidationError) {
    return badRequest(error.message, Object.keys(error.fieldErrors).length > 0 ? error.fieldErrors : undefined);
  }
  const http = fromStoreError(error, (name) => nameAsSent(body, RECORD_RULES[type as RecordKind].fields, name));
  if (!http) throw error;
  return http;
}

function lineResult(line: NdjsonRecord, outcome: IngestOutcome): BulkLineResult {
  const type = line.type as RecordKind;
  if (outcome.ok) return { line: line.line, type, outcome: outcome.replayed ? 'replayed' : 'created' };
  const error = httpErrorOf(outcome.error, line);
  return {
    line: line.line,
    type,
    outcome: 'error',
    status: error.status,
    message: error.message,
    ...(error.fieldErrors ? { errors: error.fieldErrors } : {}),
  };
}

const recordSchema = Joi.object({
  type: Joi.string()
    .valid(...RECORD_KINDS)
    .required()
    .description('What the line creates; the other members are the body of that create route.'),
})
  .unknown(true)
  .id('BulkRecord')
  .description(
    'One line: `type` and the create body of `POST /contexts`, `/sessions` or `/metrics` (ContextCreate, ' +
      'SessionCreate, MetricCreate).',
  );

const lineSchema = membersOf<BulkLineResult>({
  line: Joi.number().integer().min(1).required().description('The line of the body, 1 for the first.'),
  type: Joi.string()
    .valid(...RECORD_KINDS)
    .required(),
  outcome: Joi.string()
    .valid('created', 'replayed', 'error')
    .required()
    .description('`created`; `replayed`: an exact replay of a stored record (nothing new); `error`: refused.'),
  status: Joi.number()
    .integer()
    .valid(400, 409, 422)
    .description(
      'With `error`: what the create route would have answered (400 invalid, 409 conflict, 422 unknown reference).',
    ),
  message: Joi.string().description('With `error`: what is wrong.'),
  errors: Joi.object()
    .pattern(/^/, Joi.string())
    .description('With `error`: each field at fault, named as the line sent it.'),
}).id('BulkLine');

const counter = (what: string) => Joi.number().integer().min(0).required().description(what);

const answerSchema = membersOf<BulkAnswer>({
  created: counter('Lines whose record was created.'),
  replayed: counter('Lines that replayed a stored record exactly (nothing new stored).'),
  failed: counter('Lines refused (each listed with its error).'),
  lines: Joi.array().items(lineSchema).required().description('Every record line, in body order.'),
}).id('BulkAnswer');

const EXAMPLE_BODY = [
  { type: 'context', ...EXAMPLES.createContext },
  { type: 'session', ...EXAMPLES.createSession },
  { type: 'metric', ...EXAMPLES.createMetric },
];

const partialExample = {
  created: 2,
  replayed: 0,
  failed: 1,
  lines: [
    { line: 1, type: 'context', outcome: 'created' },
    { line: 2, type: 'session', outcome: 'created' },
    {
      line: 3,
      type: 'metric',
      outcome: 'error',
      status: 422,
      message: 'no context with key "0000" exists; create it first',
      errors: { context_h: 'unknown context' },
    },
  ],
};

/**
 * `POST /bulk`: a whole run in one request. The body is checked whole before anything is stored (a malformed line
 * is a 400 naming it); then each line is validated and created as its own create route would, in body order, in one
 * batch of the store — so a line's refusal (400, 409, 422) is its own, listed in a 207, and the others are stored.
 */
export function bulkRoutes(): Route[] {
  return [
    route({
      operationId: 'createBulk',
      method: 'POST',
      path: '/bulk',
      tag: 'bulk',
      summary: 'Store many contexts, sessions and metrics at once (NDJSON)',
      description:
        'One record per line (`application/x-ndjson`, gzipped with `Content-Encoding: gzip` or not), each ' +
        '`{"type": "context"|"session"|"metric", ...the create body}`, at most `MAX_BULK_LINES` lines and ' +
        '`MAX_BULK_BYTES` (decompressed). A malformed body — a line that is not a JSON object or has no known `type`, ' +
        'no line at all, too many — is refused whole (400 or 413, naming the line) and nothing is stored. Otherwise ' +
        'every line is validated and created exactly as by its create route, in body order: a metric may name a ' +
        'context or session created by an earlier line. The answer lists each line: `created`, `replayed`, or ' +
        'its error with the status its create route would have answered; 200 when no line failed, 207 otherwise. ' +
        'Sending the same body again stores nothing new (every line is a replay). A 503 may leave part of the ' +
        'body stored: send it again. An instance stores at most `MAX_BULK_CONCURRENCY` bodies at once; a body ' +
        'sent meanwhile waits its turn, unread; a body that stalls while it is read (less than 1 KiB in ' +
        '`BULK_BODY_IDLE_TIMEOUT_MS`) is refused with 408 and nothing of it is stored.',
      body: {
        schema: Joi.array()
          .items(recordSchema)
          .min(1)
          .description('The lines of the body, each one JSON object (shown here as an array: one item per line).'),
        example: EXAMPLE_BODY,
        description: 'NDJSON: one record per line.',
        contentType: NDJSON,
      },
      success: {
        status: 200,
        description: 'Every line was stored (created, or an exact replay).',
        schema: answerSchema,
        example: {
          created: 3,
          replayed: 0,
          failed: 0,
          lines: EXAMPLE_BODY.map(({ type }, index) => ({ line: index + 1, type, outcome: 'created' })),
        },
      },
      alsoAnswers: [
        {
          status: 207,
          description: 'Some lines were refused (each with its error); the others were stored.',
          schema: answerSchema,
          example: partialExample,
        },
      ],
      errors: [400, 408, 413, 415, 503],
      handle: (request, deps) => deps.bulkSlots.hold(() => storeBody(request, deps)),
    }),
  ];
}

/**
 * A body, once it holds one of the instance's bulk slots: read, checked whole, validated line by line, stored as one
 * batch, answered line by line.
 */
async function storeBody(request: RouteRequest, { store, metrics }: RouteDeps): Promise<Reply> {
  const lines = await request.readNdjson(RECORD_KINDS);
  const batch = validateBatch(lines.map(({ type, body, text }) => ({ kind: type as RecordKind, body, text })));
  let outcomes: IngestOutcome[];
  try {
    outcomes = await batch.create(store);
  } catch (error) {
    const outcome = outcomeOf(error);
    countIngested(
      metrics,
      lines.map(({ type }, index) => [type, batch.invalid[index] ? 'rejected' : outcome]),
    );
    throw error instanceof StoreUnavailableError
      ? serviceUnavailable(
          `the store is unavailable: ${error.message}; part of the body may be stored: send it again later ` +
            '(what is stored already is replayed)',
          error.retryAfterSeconds,
        )
      : error;
  }
  const answered = lines.map((line, index) => lineResult(line, outcomes[index] as IngestOutcome));
  countIngested(
    metrics,
    answered.map((result) => [
      result.type,
      result.status === undefined ? result.outcome : (OUTCOME_OF[result.status] ?? 'error'),
    ]),
  );
  const created = answered.filter((result) => result.outcome === 'created').length;
  const replayed = answered.filter((result) => result.outcome === 'replayed').length;
  const refused = answered.length - created - replayed;
  const body: BulkAnswer = { created, replayed, failed: refused, lines: answered };
  return { status: refused === 0 ? 200 : 207, body };
}
