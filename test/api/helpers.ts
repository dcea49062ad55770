import { expect } from 'chai';
import type { Config } from '../../src/config.js';
import type { Context, Metric, Session } from '../../src/domain/records.js';
import type { RunningService } from '../../src/server.js';
import type { Store } from '../../src/store/store.js';
import {
  aContext,
  aMetric,
  aSession,
  contextAsRead,
  sessionAsRead,
  tagsAsRead,
  type ContextRead,
  type SessionRead,
} from '../support/builders.js';
import { ApiClient, startTestService, type ApiResponse } from '../support/service.js';
import type { StoreFixture } from '../support/stores.js';

/** Shared pieces of the HTTP tests: a fresh service per test, wire bodies, seeding through the API, assertions. */

export const V1 = '/api/v1';

/**
 * Registers beforeEach/afterEach hooks that give every test a fresh store from the fixture and a real service over
 * it, stopped afterwards. Returns an accessor for the current test's client.
 */
export function useService(fixture: () => StoreFixture, overrides: Partial<Config> = {}): () => ApiClient {
  let store: Store | undefined;
  let service: RunningService | undefined;
  let client: ApiClient | undefined;
  beforeEach(async function () {
    store = await fixture().create();
    service = await startTestService(store, overrides);
    client = new ApiClient(service.url);
  });
  afterEach(async function () {
    await service?.stop();
    if (store) await fixture().destroy(store);
    store = undefined;
    service = undefined;
    client = undefined;
  });
  return () => {
    if (!client) throw new Error('no service is running outside a test');
    return client;
  };
}

/** A session as pytest-monitor posts it: tags travel as the `description` object. */
export function sessionBody(session: Session = aSession()): Record<string, unknown> {
  return {
    session_h: session.session_h,
    run_date: session.run_date,
    scm_ref: session.scm_ref,
    description: Object.fromEntries(session.tags.map((t) => [t.key, t.value])),
  };
}

/** What each create route answers: the stored record in read form. */
interface Created {
  contexts: ContextRead;
  sessions: SessionRead;
  metrics: Metric;
}

/** POSTs a create body and insists on 201; returns the response body (the stored record in read form). */
export async function create<K extends keyof Created>(api: ApiClient, kind: K, body: unknown): Promise<Created[K]> {
  const res = await api.post<Created[K]>(`${V1}/${kind}/`, body);
  expect(res.status, `POST /${kind}/ → ${res.status} ${res.text}`).to.equal(201);
  return res.body;
}

export const seedContext = (api: ApiClient, overrides: Partial<Context> = {}): Promise<ContextRead> =>
  create(api, 'contexts', aContext(overrides));

export const seedSession = (api: ApiClient, overrides: Partial<Session> = {}): Promise<SessionRead> =>
  create(api, 'sessions', sessionBody(aSession(overrides)));

/** Creates the metrics one after the other (so insertion order is the array order); returns them in read form. */
export async function seedMetrics(api: ApiClient, overrides: Array<Partial<Metric>>): Promise<Metric[]> {
  const created: Metric[] = [];
  for (const o of overrides) created.push(await create(api, 'metrics', aMetric(o)));
  return created;
}

/** The default context and session of the builders, then one metric per entry (all on that session). */
export async function seedRun(api: ApiClient, metrics: Array<Partial<Metric>>): Promise<Metric[]> {
  await seedContext(api);
  await seedSession(api);
  return seedMetrics(api, metrics);
}

/** `n` metrics on the default context and session, told apart by `item` = `m0`, `m1`, ... */
export function numbered(n: number, each: (i: number) => Partial<Metric> = () => ({})): Array<Partial<Metric>> {
  return Array.from({ length: n }, (_, i) => ({ item: `m${i}`, item_variant: `m${i}`, ...each(i) }));
}

export const items = (metrics: Array<{ item: string }>): string[] => metrics.map((m) => m.item);

/** A count answer. */
interface Count {
  count: number;
}

/** How many records of each kind the service holds, through the count routes. */
export async function counts(api: ApiClient): Promise<{ contexts: number; sessions: number; metrics: number }> {
  const count = async (kind: string): Promise<number> => {
    const res = await api.get<Count>(`${V1}/${kind}/count`);
    expect(res.status).to.equal(200);
    return res.body.count;
  };
  return { contexts: await count('contexts'), sessions: await count('sessions'), metrics: await count('metrics') };
}

/** An error answer of the contract. */
interface ErrorBody {
  message: string;
  errors?: Record<string, string>;
}

/**
 * An error response of the contract: the status, a JSON body `{ message, errors? }` with a sentence in `message`,
 * and, when `field` is given, an `errors` entry naming it (`description` also matches `description.<tag>`).
 * Returns the body, for what a test checks further.
 */
export function expectError(res: ApiResponse, status: number, field?: string): ErrorBody {
  expect(res.status, res.text).to.equal(status);
  expect(res.headers.get('content-type')).to.match(/^application\/json/);
  expect(res.body).to.be.an('object');
  const body = res.body as ErrorBody;
  expect(body.message).to.be.a('string').that.is.not.empty;
  expect(Object.keys(body).filter((k) => k !== 'message' && k !== 'errors')).to.deep.equal([]);
  if (field !== undefined) {
    expect(body.errors, `errors naming "${field}" in ${res.text}`).to.be.an('object');
    const errors = body.errors ?? {};
    const named = Object.keys(errors).filter((k) => k === field || k.startsWith(`${field}.`));
    expect(named, `errors naming "${field}" in ${res.text}`).to.not.be.empty;
    for (const k of named) expect(errors[k]).to.be.a('string').that.is.not.empty;
  }
  return body;
}

/** A listing envelope, compared whole. */
export function expectListing(
  res: ApiResponse,
  name: string,
  entries: unknown[],
  paging: { total_page: number; prev_url?: string | null; next_url?: string | null } = {
    total_page: entries.length ? 1 : 0,
  },
  extra: Record<string, unknown> = {},
): void {
  expect(res.status, res.text).to.equal(200);
  expect(res.body).to.deep.equal({
    ...extra,
    [name]: entries,
    prev_url: paging.prev_url ?? null,
    next_url: paging.next_url ?? null,
    total_page: paging.total_page,
  });
}

/** GETs a path and returns the body after checking for 200. */
export async function getOk(api: ApiClient, path: string): Promise<unknown> {
  const res = await api.get(path);
  expect(res.status, `GET ${path} → ${res.status} ${res.text}`).to.equal(200);
  return res.body;
}

/** The links and page count of a listing answer (a top-N answer has no prev_url). */
interface Paging {
  prev_url?: string | null;
  next_url: string | null;
  total_page: number;
}

/** A listing answer: its body as sent, and its entries (the array under the listing's name) as `entries`. */
type Page<T> = Paging & Record<string, unknown> & { entries: T[] };

/**
 * A listing answer after checking for 200 and for an array under `name`; `T` is what the caller reads of each
 * entry (not checked: the test's own assertions do that).
 */
export function listingPage<T = unknown>(res: ApiResponse, name: string): Page<T> {
  expect(res.status, `${res.request} → ${res.status} ${res.text}`).to.equal(200);
  expect(res.body, `${res.request}: no "${name}" list in ${res.text}`)
    .to.be.an('object')
    .with.property(name)
    .that.is.an('array');
  const body = res.body as Paging & Record<string, unknown>;
  return { ...body, entries: body[name] as T[] };
}

/** GETs a listing and returns its entries (see listingPage). */
export const getListing = async <T = unknown>(api: ApiClient, path: string, name: string): Promise<T[]> =>
  listingPage<T>(await api.get(path), name).entries;

/** GETs a listing of metrics and returns them (see listingPage). */
export const getMetrics = (api: ApiClient, path: string): Promise<Metric[]> => getListing<Metric>(api, path, 'metrics');

export { aContext, aMetric, aSession, contextAsRead, sessionAsRead, tagsAsRead };
