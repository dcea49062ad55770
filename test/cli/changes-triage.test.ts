import { expect } from 'chai';
import type { ChangeStep, PipelineChanges, TriagedChange } from '../../src/wire/changes.js';
import { changingPipelineLines } from '../support/change-data.js';
import { useProtectedService } from '../support/protected-service.js';
import { forEachStore } from '../support/stores.js';
import { envFor, runAdmin } from './helpers.js';

/**
 * monitor-admin changes triage against a real service with a tokens file, on each store: the pipeline of
 * test/support/change-data.ts (steps up at builds 20 and 24 that hold, one down at 15). Triaging needs the write
 * token; `changes --fail-on regression` fails until every step up is accepted or invalid, and says who triaged each.
 */

const day = (b: number): string => `2026-10-${String(b).padStart(2, '0')}T10:00:00`;

describe('monitor-admin changes triage (what people say of a change, over HTTP)', function () {
  this.timeout(180_000);

  forEachStore((fixture) =>
    describe('against a service with a tokens file', function () {
      const running = useProtectedService(fixture, { per: 'suite' });
      const admin = (args: string[], token: string | null = running().tokens.writer) =>
        runAdmin(['changes', ...args, '--server', running().url, '--pipeline', 'main'], {
          env: token === null ? {} : { MONITOR_TOKEN: token },
        });
      const stepsUp = async (): Promise<ChangeStep[]> => {
        const result = await admin(['--json', '--fail-on', 'none'], null);
        expect(result.code, result.stderr).to.equal(0);
        return (JSON.parse(result.stdout) as PipelineChanges).changes
          .flatMap((change) => change.steps)
          .filter((step) => step.change_pct > 0);
      };

      before(async function () {
        const res = await running().api.request('POST', '/api/v1/bulk', {
          raw: changingPipelineLines('main', day)
            .map((line) => JSON.stringify(line))
            .join('\n'),
          headers: { 'Content-Type': 'application/x-ndjson', Authorization: `Bearer ${running().tokens.writer}` },
        });
        expect(res.status, res.text).to.equal(200);
      });

      it('refuses a triage without a write token, a malformed or unknown id and a state a person cannot give', async function () {
        const [step] = await stepsUp();
        const id = (step as ChangeStep).id;
        const none = await admin(['triage', id, '--state', 'accepted'], null);
        expect(none.code).to.equal(4);
        expect(none.stderr).to.match(/needs a token to write \(HTTP 401\)/);
        const reader = await admin(['triage', id, '--state', 'accepted'], running().tokens.reader);
        expect(reader.code).to.equal(4);
        expect(reader.stderr).to.match(/refused the token from MONITOR_TOKEN \(HTTP 403\)/);
        const malformed = await admin(['triage', 'build-20', '--state', 'accepted']);
        expect(malformed.code).to.equal(2);
        expect(malformed.stderr).to.match(/"build-20" is not a change id: 16 hex digits/);
        const unknown = await admin(['triage', '0123456789abcdef', '--state', 'accepted']);
        expect(unknown.code).to.equal(2);
        expect(unknown.stderr).to.match(/no change 0123456789abcdef among the changes of pipeline "main"/);
        const fixed = await admin(['triage', id, '--state', 'fixed']);
        expect(fixed.code).to.equal(2);
        expect(fixed.stderr).to.match(/--state.*fixed.*invalid/s);
        expect((await stepsUp()).map((s) => s.state)).to.deep.equal((await stepsUp()).map(() => 'new'));
      });

      it('triages with the note and names who did it; the run passes once every step up is accepted or invalid', async function () {
        const up = await stepsUp();
        expect(up.length).to.be.greaterThan(1);
        expect((await admin(['--fail-on', 'regression'])).code).to.equal(1);

        const [first, ...rest] = up as [ChangeStep, ...ChangeStep[]];
        const acknowledged = await admin(['triage', first.id, '--state', 'acknowledged', '--note', 'the new parser']);
        expect(acknowledged.code, acknowledged.stderr).to.equal(0);
        expect(acknowledged.stdout).to.include(`change ${first.id} of main: acknowledged (ci-writer) (was new)`);
        expect(acknowledged.stdout).to.include('note: the new parser');
        // Acknowledged is still ours to fix: it fails the run as before.
        const table = await admin(['--fail-on', 'regression']);
        expect(table.code).to.equal(1);
        expect(table.stdout).to.match(new RegExp(`${first.id}.*holds +acknowledged \\(ci-writer\\)`));
        // The gate says so too: build 30 still holds the step, standing since its build, acknowledged by its writer.
        const check = await runAdmin(
          ['check', '--server', running().url, '--pipeline', 'main', '--build', '30', '--format', 'table'],
          { env: { MONITOR_TOKEN: running().tokens.reader } },
        );
        expect(check.code, check.stderr).to.equal(0);
        expect(check.stdout).to.include(
          `build ${first.build} (commit main-ref-${first.build}, session main-s-${first.build}), ` +
            `acknowledged by ci-writer, change ${first.id}`,
        );

        const json = await admin(['triage', first.id, '--state', 'accepted', '--json']);
        expect(json.code, json.stderr).to.equal(0);
        const answer = JSON.parse(json.stdout) as TriagedChange;
        expect(answer.transitions.map((t) => [t.from, t.to, t.by])).to.deep.equal([
          ['new', 'acknowledged', 'ci-writer'],
          ['acknowledged', 'accepted', 'ci-writer'],
        ]);
        for (const step of rest) expect((await admin(['triage', step.id, '--state', 'invalid'])).code).to.equal(0);
        expect((await admin(['--fail-on', 'regression'])).code).to.equal(0);
        expect((await stepsUp()).map((s) => s.state).sort()).to.deep.equal(
          ['accepted', ...rest.map(() => 'invalid')].sort(),
        );
      });

      it('keeps the triage through a purge of every build: the change is then answered from its record', async function () {
        const [step] = (await stepsUp()).filter((s) => s.state === 'accepted');
        const id = (step as ChangeStep).id;
        const purge = await runAdmin(['purge', '--before', '2026-11-01', '--yes'], { env: envFor(running().store) });
        expect(purge.code, purge.stderr).to.equal(0);
        const res = await running().api.request('GET', `/api/v1/pipelines/main/changes/${id}`);
        expect(res.status, res.text).to.equal(200);
        const answer = res.body as TriagedChange;
        expect(answer).to.deep.include({ id, state: 'accepted', in_period: false });
        expect(answer.change).to.deep.include({ id, build: (step as ChangeStep).build, state: 'accepted' });
        expect(answer.transitions.map((t) => t.to)).to.deep.equal(['acknowledged', 'accepted']);
        // A triage needs the change among the period's: none is left.
        const again = await admin(['triage', id, '--state', 'new']);
        expect(again.code).to.equal(2);
        expect(again.stderr).to.match(/no change .* among the changes of pipeline "main"/);
      });
    }),
  );
});
