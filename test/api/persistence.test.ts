import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { RunningService } from '../../src/server.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { ciTags } from '../support/builders.js';
import { ApiClient, startTestService } from '../support/service.js';
import {
  aContext,
  aMetric,
  aSession,
  contextAsRead,
  create,
  getListing,
  getOk,
  sessionAsRead,
  sessionBody,
  V1,
} from './helpers.js';

/** The SQLite store keeps what the API acknowledged: a new service on the same file finds every record. */
describe('API: persistence [sqlite file]', function () {
  let dir: string;
  let service: RunningService | undefined;

  beforeEach(function () {
    dir = mkdtempSync(join(tmpdir(), 'monitor-persist-'));
  });
  afterEach(async function () {
    await service?.stop();
    service = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  async function start(): Promise<ApiClient> {
    service = await startTestService(new SqliteStore({ path: join(dir, 'monitor.sqlite'), synchronous: 'FULL' }));
    return new ApiClient(service.url);
  }

  it('finds every record created through the API after a restart on the same file', async function () {
    const contexts = [aContext({ h: 'ctx-1' }), aContext({ h: 'ctx-2', cpu_vendor: '' })];
    const sessions = [
      aSession({ session_h: 's-1', tags: ciTags('main', '1') }),
      aSession({ session_h: 's-2', scm_ref: null, tags: [] }),
    ];
    const metrics = [
      aMetric({ session_h: 's-1', context_h: 'ctx-1', item: 'a', component: 'db', mem_usage: -1.25 }),
      aMetric({ session_h: 's-2', context_h: 'ctx-2', item: 'b', total_time: 0.1 + 0.2 }),
      aMetric({ session_h: 's-1', context_h: 'ctx-2', item: 'c', kind: 'module' }),
    ];

    let api = await start();
    for (const c of contexts) await create(api, 'contexts', c);
    for (const s of sessions) await create(api, 'sessions', sessionBody(s));
    for (const m of metrics) await create(api, 'metrics', m);
    await service!.stop();
    service = undefined;

    api = await start();
    expect(await getListing(api, `${V1}/contexts/`, 'contexts')).to.deep.equal(contexts.map(contextAsRead));
    expect(await getListing(api, `${V1}/sessions/`, 'sessions')).to.deep.equal(sessions.map(sessionAsRead));
    expect(await getListing(api, `${V1}/metrics/`, 'metrics')).to.deep.equal(metrics);
    expect(await getListing(api, `${V1}/contexts/ctx-2`, 'contexts')).to.deep.equal([contextAsRead(contexts[1]!)]);
    expect(await getOk(api, `${V1}/sessions/s-1/metrics/count`)).to.deep.equal({ count: 2 });
    expect(await getListing(api, `${V1}/pipelines/main/builds`, 'builds')).to.deep.equal([
      { id: '1', sessions: ['s-1'] },
    ]);
    expect(await getListing(api, `${V1}/components/`, 'components')).to.deep.equal(['db']);

    // Replays after the restart are still recognised: nothing is stored twice.
    expect((await api.post(`${V1}/metrics/`, metrics[0])).status).to.equal(201);
    expect((await api.post(`${V1}/contexts/`, contexts[0])).status).to.equal(201);
    expect((await api.post(`${V1}/contexts/`, { ...contexts[0], ram_total: 1 })).status).to.equal(409);
    expect(await getOk(api, `${V1}/metrics/count`)).to.deep.equal({ count: 3 });
  });
});
