import { expect } from 'chai';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import type { Metric } from '../../src/domain/records.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { aContext, aMetric, aSession } from '../support/builders.js';
import { deleteElasticsearchIndices, forEachStore } from '../support/stores.js';
import { envFor, runAdmin, seed, snapshot, tempDir } from './helpers.js';

const lines = (text: string): Array<Record<string, unknown>> =>
  text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

forEachStore((fixture) => {
  describe('monitor-admin export and import', function () {
    this.timeout(120_000);
    let source: Store;
    let target: Store;
    let dir: ReturnType<typeof tempDir>;
    beforeEach(async function () {
      [source, target] = [await fixture().create(), await fixture().create()];
      dir = tempDir();
    });
    afterEach(async function () {
      await fixture().destroy(source);
      await fixture().destroy(target);
      dir.remove();
    });

    describe('export', function () {
      it('writes a header, then contexts, sessions and metrics in insertion order, as API bodies with a type', async function () {
        const seeded = await seed(source);
        const result = await runAdmin(['export'], { env: envFor(source) });
        expect(result.code, result.stderr).to.equal(0);
        const [header, ...records] = lines(result.stdout);
        expect(header).to.include({
          type: 'header',
          format: 'monitor-server-export',
          version: 1,
          store: source.name,
          since: null,
          until: null,
        });
        expect(records.map((r) => r.type)).to.deep.equal([
          ...Array<string>(2).fill('context'),
          ...Array<string>(4).fill('session'),
          ...Array<string>(6).fill('metric'),
        ]);
        expect(records.filter((r) => r.type === 'context').map(({ type: _t, ...c }) => c)).to.deep.equal(
          seeded.contexts,
        );
        expect(records.filter((r) => r.type === 'metric').map(({ type: _t, ...m }) => m)).to.deep.equal(seeded.metrics);
        // Tags are written as the description object, in tag order (even keys a JS object would move first).
        const tagged = result.stdout.split('\n').find((line) => line.includes('"s-2026-01"'));
        expect(tagged).to.contain('"description":{"z":"1","2":"two","10":"{\\"x\\":1}"}');
        expect(result.stderr).to.match(/exported 2 contexts, 4 sessions and 6 metrics/);
      });

      it('--since/--until select sessions by run_date, with their metrics and the contexts those use', async function () {
        await seed(source);
        const january = lines(
          (await runAdmin(['export', '--since', '2026-01-01', '--until', '2026-02-01'], { env: envFor(source) }))
            .stdout,
        );
        expect(january[0]).to.include({ since: '2026-01-01', until: '2026-02-01' });
        expect(january.slice(1).map((r) => `${String(r.type)}:${String(r.h ?? r.session_h)}`)).to.deep.equal([
          'context:ctx-a',
          'context:ctx-b',
          'session:s-2026-01',
          'metric:s-2026-01',
          'metric:s-2026-01',
        ]);
        const recent = lines(
          (await runAdmin(['export', '--since', '2026-02-01'], { env: envFor(source) })).stdout,
        ).slice(1);
        expect(recent.map((r) => `${String(r.type)}:${String(r.h ?? r.session_h)}`)).to.deep.equal([
          'context:ctx-a',
          'session:s-2026-02',
          'session:s-2026-03',
          'metric:s-2026-02',
          'metric:s-2026-03',
        ]);
        const old = lines(
          (await runAdmin(['export', '--until', '2026-01-10 08:30'], { env: envFor(source) })).stdout,
        ).slice(1);
        expect(old.filter((r) => r.type === 'session').map((r) => r.session_h)).to.deep.equal(['s-2025-12']);
      });

      it('--output appears only once complete; a failed export leaves no file behind', async function () {
        await seed(source);
        const file = join(dir.path, 'backup.ndjson');
        const done = await runAdmin(['export', '-o', file], { env: envFor(source) });
        expect(done.code, done.stderr).to.equal(0);
        expect(done.stdout).to.equal('');
        expect(lines(readFileSync(file, 'utf8'))).to.have.length(13);
        expect(readdirSync(dir.path)).to.deep.equal(['backup.ndjson']);

        const prefix = `test-${randomBytes(4).toString('hex')}`;
        const nowhere =
          source instanceof SqliteStore
            ? { ...envFor(source), MONITOR_SQLITE_PATH: join(dir.path, 'absent.sqlite') }
            : { ...envFor(source), ELASTICSEARCH_INDEX_PREFIX: prefix };
        const failed = await runAdmin(['export', '-o', join(dir.path, 'failed.ndjson')], { env: nowhere });
        expect(failed.code).to.equal(1);
        expect(failed.stderr).to.match(/monitor-admin init/);
        expect(readdirSync(dir.path)).to.deep.equal(['backup.ndjson']);
        const badDir = await runAdmin(['export', '-o', join(dir.path, 'no', 'such', 'dir.ndjson')], {
          env: envFor(source),
        });
        expect(badDir.code).to.equal(1);
        expect(badDir.stderr).to.match(/cannot write .*dir.ndjson: ENOENT/);
        if (source.name === 'elasticsearch') await deleteElasticsearchIndices(prefix);
      });

      it('refuses a bad date or an empty range (exit 2)', async function () {
        const bad = await runAdmin(['export', '--since', 'yesterday'], { env: envFor(source) });
        expect(bad.code).to.equal(2);
        expect(bad.stderr).to.match(/--since must be an ISO 8601 date/);
        const empty = await runAdmin(['export', '--since', '2026-02-01', '--until', '2026-01-01'], {
          env: envFor(source),
        });
        expect(empty.code).to.equal(2);
        expect(empty.stdout).to.equal('');
      });
    });

    describe('round trip', function () {
      it('export → import into an empty store recreates every record, in order; a second import skips them all', async function () {
        await seed(source);
        // More metrics than one page of a walk (1000), over several sessions and contexts.
        const extra: Metric[] = [];
        for (let i = 0; i < 2500; i += 1) {
          extra.push(
            aMetric({
              session_h: i % 3 === 0 ? 's-2026-02' : 's-2026-03',
              context_h: i % 2 === 0 ? 'ctx-a' : 'ctx-b',
              item: `bulk_${i}`,
              total_time: i / 7,
              component: i % 5 === 0 ? `comp-${i % 3}` : '',
            }),
          );
        }
        await Promise.all(extra.map((metric) => source.createMetric(metric)));
        const file = join(dir.path, 'all.ndjson');
        expect((await runAdmin(['export', '-o', file], { env: envFor(source) })).code).to.equal(0);

        const first = await runAdmin(['import', file], { env: envFor(target) });
        expect(first.code, first.stderr).to.equal(0);
        expect(first.stderr).to.match(/contexts\s+2\s+0\s+0\n.*sessions\s+4\s+0\s+0\n.*metrics\s+2506\s+0\s+0\n/s);
        const [before, after] = [await snapshot(source), await snapshot(target)];
        expect(after.contexts).to.deep.equal(before.contexts);
        expect(after.sessions).to.deep.equal(before.sessions);
        expect(after.metrics.length).to.equal(2506);
        expect(after.metrics).to.deep.equal(before.metrics);
        const counts = (await runAdmin(['count', '--json'], { env: envFor(target) })).stdout;
        expect(counts).to.equal((await runAdmin(['count', '--json'], { env: envFor(source) })).stdout);

        const again = await runAdmin(['import', file], { env: envFor(target) });
        expect(again.code).to.equal(0);
        expect(again.stderr).to.match(/contexts\s+0\s+2\s+0\n.*sessions\s+0\s+4\s+0\n.*metrics\s+0\s+2506\s+0\n/s);
        expect((await snapshot(target)).metrics).to.have.length(2506);
      });

      it('reads NDJSON from stdin (-) and gzipped files', async function () {
        await seed(source);
        const exported = (await runAdmin(['export'], { env: envFor(source) })).stdout;
        const piped = await runAdmin(['import', '-'], { env: envFor(target), stdin: exported });
        expect(piped.code, piped.stderr).to.equal(0);
        expect(piped.stderr).to.match(/standard input/);
        expect(await snapshot(target)).to.deep.equal(await snapshot(source));
        const gz = join(dir.path, 'backup.ndjson.gz');
        writeFileSync(gz, gzipSync(exported));
        const zipped = await runAdmin(['import', gz], { env: envFor(target) });
        expect(zipped.code, zipped.stderr).to.equal(0);
        expect(zipped.stderr).to.match(/gzipped NDJSON.*metrics\s+0\s+6\s+0/s);
      });

      it('creates the store when it does not exist yet', async function () {
        await seed(source);
        const file = join(dir.path, 'all.ndjson');
        await runAdmin(['export', '-o', file], { env: envFor(source) });
        const prefix = `test-${randomBytes(4).toString('hex')}`;
        const fresh =
          source instanceof SqliteStore
            ? { ...envFor(source), MONITOR_SQLITE_PATH: join(dir.path, 'new', 'monitor.sqlite') }
            : { ...envFor(source), ELASTICSEARCH_INDEX_PREFIX: prefix };
        try {
          const result = await runAdmin(['import', file], { env: fresh });
          expect(result.code, result.stderr).to.equal(0);
          expect((await runAdmin(['count', 'metrics'], { env: fresh })).stdout).to.equal('6\n');
        } finally {
          if (source.name === 'elasticsearch') await deleteElasticsearchIndices(prefix);
        }
      });
    });

    describe('import of bad input', function () {
      it('rejects bad lines with their reasons, imports the rest, and exits 3', async function () {
        await target.createSession(aSession({ session_h: 'taken', run_date: '2026-01-01' }));
        const good = aMetric({ session_h: 's1', context_h: 'c1' });
        const file = join(dir.path, 'mixed.ndjson');
        writeFileSync(
          file,
          [
            JSON.stringify({ type: 'context', ...aContext({ h: 'c1' }) }),
            '{"type": "session", "session_h": "s1", "run_date": "2026-01-02T03:04:05", "scm_ref": null, "description": {"team": "perf"}}',
            '',
            '{not json',
            '[1, 2]',
            JSON.stringify({ type: 'widget', name: 'x' }),
            JSON.stringify({ type: 'context', ...aContext({ h: 'c2' }), cpu_count: 'two' }),
            JSON.stringify({ type: 'metric', ...good, session_h: 'nope' }),
            JSON.stringify({ type: 'session', session_h: 'taken', run_date: '2030-01-01', description: {} }),
            JSON.stringify({ type: 'metric', ...good }),
            // The API's aliases are accepted, as they are over HTTP.
            JSON.stringify({
              type: 'metric',
              ...good,
              item: 'aliased',
              context_h: undefined,
              ctx_h: 'c1',
              total_time: undefined,
              wall_time: 2,
            }),
          ].join('\n'),
        );
        const result = await runAdmin(['import', file], { env: envFor(target) });
        expect(result.code, result.stderr).to.equal(3);
        expect(result.stderr).to.match(
          /contexts\s+1\s+0\s+1\n.*sessions\s+1\s+0\s+1\n.*metrics\s+2\s+0\s+1\n.*unreadable lines\s+0\s+0\s+3\n/s,
        );
        expect(result.stderr).to.contain('line 4: not valid JSON');
        expect(result.stderr).to.contain('line 5: not a JSON object');
        expect(result.stderr).to.contain('line 6: "type" must be "context", "session" or "metric" (got "widget")');
        expect(result.stderr).to.match(/line 7 \(context\): the context is invalid: cpu_count must be a number/);
        expect(result.stderr).to.match(/line 8 \(metric\): no session with key "nope" exists/);
        expect(result.stderr).to.match(
          /line 9 \(session\): a session with key "taken" already exists with different content/,
        );
        const stored = await snapshot(target);
        expect(stored.sessions.map((s) => s.session_h)).to.deep.equal(['taken', 's1']);
        expect(stored.sessions[1]?.tags).to.deep.equal([{ key: 'team', value: 'perf' }]);
        expect(stored.metrics.map((m) => [m.item, m.total_time])).to.deep.equal([
          [good.item, good.total_time],
          ['aliased', 2],
        ]);
      });

      it('stops with exit 1 on a missing file, or an export of a newer format', async function () {
        const missing = await runAdmin(['import', join(dir.path, 'absent.ndjson')], { env: envFor(target) });
        expect(missing.code).to.equal(1);
        expect(missing.stderr).to.match(/cannot read .*absent.ndjson: no such file/);
        const newer = join(dir.path, 'newer.ndjson');
        writeFileSync(
          newer,
          `${JSON.stringify({ type: 'header', format: 'monitor-server-export', version: 99 })}\n${JSON.stringify({ type: 'context', ...aContext() })}\n`,
        );
        const result = await runAdmin(['import', newer], { env: envFor(target) });
        expect(result.code).to.equal(1);
        expect(result.stderr).to.match(/export format version 99, newer than this monitor-admin reads/);
        expect(await target.countContexts({})).to.equal(0);
      });

      it('an interrupted import keeps what it stored; running it again finishes it', async function () {
        await seed(source);
        await Promise.all(
          Array.from({ length: 2500 }, (_, i) =>
            source.createMetric(aMetric({ session_h: 's-2026-03', context_h: 'ctx-a', item: `m${i}` })),
          ),
        );
        const exported = (await runAdmin(['export'], { env: envFor(source) })).stdout;
        const all = exported.split('\n');
        const interrupt = new AbortController();
        // A reader that fires Ctrl-C once 1500 lines went in: the import stops at its next batch boundary.
        const stdin = Readable.from(
          (function* () {
            for (const [i, line] of all.entries()) {
              if (i === 1500) interrupt.abort();
              yield `${line}\n`;
            }
          })(),
        );
        const stopped = await runAdmin(['import', '-'], { env: envFor(target), stdin, signal: interrupt.signal });
        expect(stopped.code).to.equal(130);
        expect(stopped.stderr).to.match(/import stopped before the end/);
        expect(stopped.stderr).to.match(/the import was interrupted; run it again to finish/);
        const partial = (await snapshot(target)).metrics.length;
        expect(partial).to.be.greaterThan(0).and.lessThan(2506);
        const finished = await runAdmin(['import', '-'], { env: envFor(target), stdin: exported });
        expect(finished.code, finished.stderr).to.equal(0);
        expect(finished.stderr).to.match(new RegExp(`metrics\\s+${2506 - partial}\\s+${partial}\\s+0`));
        expect(await snapshot(target)).to.deep.equal(await snapshot(source));
      });
    });
  });
});
