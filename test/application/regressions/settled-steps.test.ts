import { expect } from 'chai';
import { buildRuns } from '../../../src/application/regressions/baseline-builds.js';
import { settledSteps } from '../../../src/application/regressions/settled-steps.js';
import type { ChangeStep } from '../../../src/domain/changes/steps.js';
import type { TriageState } from '../../../src/domain/changes/triage.js';
import type { PipelineSession, TriageRecord } from '../../../src/store/store.js';
import { aSession } from '../../support/builders.js';

/** Where a triaged change falls among a baseline's builds: by when its builds started. */

const runs = buildRuns(
  Array.from({ length: 10 }, (_, b): PipelineSession => ({
    build: String(b + 1),
    session: aSession({ session_h: `s${b + 1}`, run_date: `2026-11-${String(b + 1).padStart(2, '0')}T08:00:00` }),
  })),
);
/** Builds 4-9: the baseline of build 10 with a window of 6. */
const units = runs.slice(3, 9);

const record = (state: TriageState, build: string, gone: string | null = null, resource = 'memory'): TriageRecord => ({
  id: `id-${build}`,
  pipeline: 'main',
  state,
  transitions: [],
  change: {
    item_variant: 'test_a',
    component: 'core',
    machine_class: 'class-1',
    resource,
    build,
    first_build: build,
    gone_build: gone,
  } as ChangeStep,
});

describe('application/regressions/settled-steps', function () {
  it('places an accepted step at its build among the baseline, and an invalid one up to where its level came back', function () {
    const steps = settledSteps([record('accepted', '6'), record('invalid', '5', '7', 'total_time')], runs, units);
    expect(steps).to.deep.equal([
      {
        item_variant: 'test_a',
        component: 'core',
        machine_class: 'class-1',
        resource: 'memory',
        state: 'accepted',
        from: 2,
        until: null,
      },
      {
        item_variant: 'test_a',
        component: 'core',
        machine_class: 'class-1',
        resource: 'total_time',
        state: 'invalid',
        from: 1,
        until: 3,
      },
    ]);
  });

  it('a step before the baseline settles from its first build; new and acknowledged ones, and purged builds, settle nothing', function () {
    const steps = settledSteps(
      [record('accepted', '2'), record('new', '6'), record('acknowledged', '7'), record('invalid', 'gone-build')],
      runs,
      units,
    );
    expect(steps.map((s) => [s.state, s.from, s.until])).to.deep.equal([['accepted', 0, null]]);
  });
});
