import { expect } from 'chai';
import { baselineBuilds, buildRuns } from '../../../src/application/regressions/baseline-builds.js';
import type { Tag } from '../../../src/domain/records.js';
import type { PipelineSession } from '../../../src/store/store.js';
import { aSession } from '../../support/builders.js';

/** Which earlier builds a build is compared with: by start (an instant), tags and window. */

const session = (build: string, run_date: string, tags: Tag[] = [], scm_ref = `ref-${build}`): PipelineSession => ({
  build,
  session: aSession({ session_h: `${build}-${run_date}`, run_date, scm_ref, tags }),
});

describe('application/regressions/baseline-builds', function () {
  it("starts a build at its earliest session (as an instant), with that session's commit", function () {
    const [run] = buildRuns([
      session('1', '2026-11-02T10:00:00+02:00', [], 'later'),
      // 07:00Z is before 08:00Z (10:00+02:00), though its text sorts after.
      session('1', '2026-11-02T07:00:00Z', [], 'earliest'),
    ]);
    expect(run).to.include({ build: '1', started: '2026-11-02T07:00:00Z', scm_ref: 'earliest', order: 0 });
    expect(run?.tags).to.have.length(2);
  });

  it('takes the `window` latest builds started before the head, holding every tag asked for', function () {
    const main = [{ key: 'branch', value: 'main' }];
    const runs = buildRuns([
      session('1', '2026-11-01T08:00:00', main),
      session('2', '2026-11-02T08:00:00'),
      session('3', '2026-11-03T08:00:00', main),
      session('4', '2026-11-04T08:00:00', main),
      session('5', '2026-11-05T08:00:00'),
      session('6', '2026-11-06T08:00:00', main),
    ]);
    const head = runs.at(-1) as (typeof runs)[number];
    const names = (options: { samePipeline?: boolean; tags?: Tag[]; window?: number }) =>
      baselineBuilds(runs, head, { samePipeline: true, tags: [], window: 20, ...options }).map((r) => r.build);
    expect(names({})).to.deep.equal(['1', '2', '3', '4', '5']);
    expect(names({ window: 2 })).to.deep.equal(['4', '5']);
    expect(names({ tags: main })).to.deep.equal(['1', '3', '4']);
    expect(names({ tags: [{ key: 'branch', value: 'dev' }] })).to.deep.equal([]);
  });

  it('breaks a tie on the start by storage order in its own pipeline; across pipelines a tie is not before', function () {
    const runs = buildRuns([
      session('a', '2026-11-01T08:00:00'),
      session('b', '2026-11-01T08:00:00'),
      session('c', '2026-11-01T08:00:00'),
    ]);
    const head = runs[1] as (typeof runs)[number];
    const options = { tags: [], window: 20 };
    expect(baselineBuilds(runs, head, { ...options, samePipeline: true }).map((r) => r.build)).to.deep.equal(['a']);
    expect(baselineBuilds(runs, head, { ...options, samePipeline: false })).to.deep.equal([]);
  });
});
