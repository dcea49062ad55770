import { expect } from 'chai';
import type { ChangeStep, PipelineChanges, TriagedChange } from '../../src/wire/changes.js';
import { changingPipelineLines } from '../support/change-data.js';
import { useProtectedService } from '../support/protected-service.js';
import type { ApiClient } from '../support/service.js';
import { forEachStore } from '../support/stores.js';
import { expectError, V1 } from './helpers.js';

/**
 * What people say of a change, over HTTP with access control on: the 30 builds of test/support/change-data.ts (steps
 * at builds 15, 20 and 24), each step with its id and state; a triage needs a write token, names who sent it, and
 * refuses bad input with nothing changed.
 */

const started = (b: number): string => `2026-10-${String(b).padStart(2, '0')}T10:00:00`;
const bearer = (token: string): Record<string, string> => ({ Authorization: `Bearer ${token}` });

forEachStore((fixture) => {
  describe('API: triage of changes', function () {
    this.timeout(180_000);
    const running = useProtectedService(fixture, { per: 'suite' });
    const api = (): ApiClient => running().api;

    before(async function () {
      const res = await api().request('POST', `${V1}/bulk`, {
        raw: changingPipelineLines('main', started)
          .map((line) => JSON.stringify(line))
          .join('\n'),
        headers: { 'Content-Type': 'application/x-ndjson', ...bearer(running().tokens.writer) },
      });
      expect(res.status, res.text).to.equal(200);
    });

    async function steps(query = ''): Promise<ChangeStep[]> {
      const res = await api().request('GET', `${V1}/pipelines/main/changes${query}`);
      expect(res.status, res.text).to.equal(200);
      return (res.body as PipelineChanges).changes.flatMap((change) => change.steps);
    }
    const stepAt = async (build: string): Promise<ChangeStep> =>
      (await steps()).find((s) => s.build === build) as ChangeStep;

    /** A triage sent with `token` (default: the writer's; null: none). */
    const triage = (id: string, body: unknown, token: string | null = running().tokens.writer) =>
      api().request('POST', `${V1}/pipelines/main/changes/${id}/triage`, {
        body,
        headers: token === null ? {} : bearer(token),
      });

    it('gives every step an id of its own that later builds do not change, new and never triaged', async function () {
      const all = await steps();
      // Build 20: 3 tests in wall and CPU time; build 15: 1 test in both; build 24: 1 test's memory.
      expect(all).to.have.length(9);
      for (const step of all) {
        expect(step.id).to.match(/^[0-9a-f]{16}$/);
        expect(step).to.include({ state: 'new', triage: null, first_build: step.build });
      }
      expect(new Set(all.map((s) => s.id)).size).to.equal(all.length);
      // The period cut at build 26 (before build 24's memory step is reported): builds 15 and 20's steps, same ids.
      const shorter = await steps('?until=2026-10-27');
      const early = all.filter((s) => s.build === '15' || s.build === '20');
      expect(shorter.map((s) => s.id).sort()).to.deep.equal(early.map((s) => s.id).sort());
    });

    it('refuses a triage without a write token, with a bad body or for an unknown change, changing nothing', async function () {
      const { id } = await stepAt('24');
      expect((await triage(id, { state: 'accepted' }, null)).status).to.equal(401);
      expect((await triage(id, { state: 'accepted' }, running().tokens.reader)).status).to.equal(403);
      expectError(await triage(id, { state: 'fixed' }), 400, 'state');
      expectError(await triage(id, { state: 'done' }), 400, 'state');
      expectError(await triage(id, {}), 400, 'state');
      expectError(await triage(id, { state: 'accepted', note: 7 }), 400, 'note');
      expectError(await triage(id, { state: 'accepted', notes: 'a typo' }), 400, 'notes');
      expectError(await triage(id, { state: 'accepted', note: 'x'.repeat(2_001) }), 400, 'note');
      expectError(await triage('0123456789abcdef', { state: 'accepted' }), 404);
      expectError(await triage('not-an-id', { state: 'accepted' }), 400, 'id');
      const res = await api().request('GET', `${V1}/pipelines/main/changes/${id}`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.include({ state: 'new', transitions: [], in_period: true });
      expectError(await api().request('GET', `${V1}/pipelines/main/changes/0123456789abcdef`), 404);
    });

    it("records each triage with the token's name and note; every answer shows the state", async function () {
      const { id } = await stepAt('15');
      const first = await triage(id, { state: 'acknowledged', note: 'the new parser' });
      expect(first.status, first.text).to.equal(200);
      const answer = first.body as TriagedChange;
      expect(answer).to.deep.include({ pipeline: 'main', id, state: 'acknowledged', in_period: true });
      expect(answer.transitions).to.have.length(1);
      expect(answer.transitions[0]).to.include({
        from: 'new',
        to: 'acknowledged',
        by: 'ci-writer',
        note: 'the new parser',
      });
      expect(Date.parse(answer.transitions[0]?.at ?? '')).to.be.closeTo(Date.now(), 60_000);
      expect(await stepAt('15')).to.deep.include({ state: 'acknowledged', triage: answer.transitions[0] });

      const second = await triage(id, { state: 'accepted' });
      expect(second.status, second.text).to.equal(200);
      const read = await api().request('GET', `${V1}/pipelines/main/changes/${id}`);
      const triaged = read.body as TriagedChange;
      expect(triaged.state).to.equal('accepted');
      expect(triaged.transitions.map((t) => [t.from, t.to, t.note])).to.deep.equal([
        ['new', 'acknowledged', 'the new parser'],
        ['acknowledged', 'accepted', null],
      ]);
      // The other changes are untouched.
      expect((await steps()).filter((s) => s.id !== id).map((s) => s.state)).to.deep.equal(Array(8).fill('new'));
    });
  });
});
