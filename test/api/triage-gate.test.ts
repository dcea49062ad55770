import { expect } from 'chai';
import type { ChangeStep, PipelineChanges } from '../../src/wire/changes.js';
import { seedChangingPipeline } from '../support/change-data.js';
import { forEachStore } from '../support/stores.js';
import type { ApiClient } from '../support/service.js';
import { getOk, useService, V1 } from './helpers.js';

/**
 * The gate reads what people said of a change (docs/changes.md): on the 30 builds of test/support/change-data.ts
 * (from build 20 three tests of `storage` 80 % slower, from build 24 one test of `api` 40 MB larger), build 30 holds
 * every step as standing. A step accepted is the baseline from its build on: it stands no more, and only the resource
 * accepted. A step called invalid leaves the history: build 30 is judged against the builds before it, so a level
 * that stayed fails again.
 */

const started = (b: number): string => `2026-10-${String(b).padStart(2, '0')}T10:00:00`;

interface Finding {
  item_variant: string;
  resource: string;
  since: { unit: string; triage: { id: string; state: string; by: string | null } | null } | null;
}
interface Report {
  verdict: string;
  regressions: Finding[];
  standing: Finding[];
  insufficient_history: number;
}

const named = (findings: readonly Finding[]): string[] =>
  findings.map((f) => `${f.item_variant} ${f.resource}${f.since ? ` since ${f.since.unit}` : ''}`).sort();

forEachStore((fixture) => {
  describe('API: the gate reads triage', function () {
    this.timeout(180_000);
    const api = useService(fixture);
    beforeEach(async function () {
      await seedChangingPipeline(api(), 'main', started);
    });

    const build30 = async (client: ApiClient): Promise<Report> =>
      (await getOk(client, `${V1}/pipelines/main/builds/30/regressions`)) as Report;
    async function triage(item: string, resource: string, state: string): Promise<string> {
      const body = (await getOk(api(), `${V1}/pipelines/main/changes`)) as PipelineChanges;
      const step = body.changes
        .flatMap((change) => change.steps)
        .find((s: ChangeStep) => s.item_variant === item && s.resource === resource);
      expect(step, `${item} ${resource} among the changes`).to.not.equal(undefined);
      const res = await api().request('POST', `${V1}/pipelines/main/changes/${step?.id}/triage`, {
        body: { state, note: `said ${state}` },
      });
      expect(res.status, res.text).to.equal(200);
      return step?.id ?? '';
    }

    it('before anyone triages, build 30 holds every step as standing and passes', async function () {
      const report = await build30(api());
      expect(report.verdict).to.equal('pass');
      expect(named(report.standing)).to.include.members([
        'test_0 total_time since 20',
        'test_0 user_time since 20',
        'test_7 memory since 24',
      ]);
      expect(report.regressions).to.deep.equal([]);
    });

    it('an acknowledged step stands as before, and says so: its change id, its state, who said it', async function () {
      const id = await triage('test_7', 'memory', 'acknowledged');
      const report = await build30(api());
      expect(report.verdict).to.equal('pass');
      const memory = report.standing.find((f) => f.item_variant === 'test_7' && f.resource === 'memory');
      expect(memory?.since).to.deep.include({ unit: '24', triage: { id, state: 'acknowledged', by: null } });
      // The others, never triaged, say nothing of it.
      const time = report.standing.find((f) => f.item_variant === 'test_0' && f.resource === 'total_time');
      expect(time?.since?.triage).to.equal(null);
    });

    it('an accepted step is the baseline from its build on: it stands no more, for that resource alone', async function () {
      const before = await build30(api());
      await triage('test_7', 'memory', 'accepted');
      await triage('test_0', 'total_time', 'accepted');
      const after = await build30(api());
      expect(after.verdict).to.equal('pass');
      expect(named(after.standing)).to.not.include.members(['test_7 memory since 24', 'test_0 total_time since 20']);
      expect(named(after.standing)).to.include('test_0 user_time since 20');
      expect(named(after.standing)).to.have.length(before.standing.length - 2);
      expect(after.regressions).to.deep.equal([]);
      // Six builds of test_7's new memory level and ten of test_0's time: enough history (5), every series judged.
      expect(after.insufficient_history).to.equal(before.insufficient_history);
    });

    it('a step called invalid leaves the history: a level that stayed fails the build again', async function () {
      await triage('test_1', 'total_time', 'invalid');
      const report = await build30(api());
      expect(report.verdict).to.equal('fail');
      expect(named(report.regressions)).to.deep.equal(['test_1 total_time']);
      expect(named(report.standing)).to.include('test_1 user_time since 20');
      expect(named(report.standing)).to.not.include('test_1 total_time since 20');
    });
  });
});
