import { expect } from 'chai';
import { changeId } from '../../src/application/changes/change-id.js';
import { STEP_EXAMPLE } from '../../src/api/routes/changes.js';
import { EXAMPLES } from '../../src/api/schemas.js';
import type { Context } from '../../src/domain/records.js';
import { DEFAULT_CLASS_FIELDS, machineClassOf } from '../../src/domain/machine-class.js';

/**
 * The document's example change is a real one: the change scripts/lib/schemathesis-seed.py seeds around the example
 * build, whose id schemathesis' examples phase reads and triages (a made-up id would never be accepted).
 */
describe('API: the example change of the document', function () {
  it("is the example metric's test at the example build, on the example context's machine class, with its id", function () {
    const metric = EXAMPLES.createMetric;
    const session = EXAMPLES.createSession as unknown as {
      scm_ref: string;
      run_date: string;
      description: Record<string, string>;
    };
    expect(STEP_EXAMPLE).to.include({
      item_variant: metric.item_variant,
      item: metric.item,
      component: metric.component,
      build: session.description.pipeline_build_no,
      first_build: session.description.pipeline_build_no,
      scm_ref: session.scm_ref,
      started: session.run_date,
      after: metric.total_time,
    });
    const machineClass = machineClassOf(EXAMPLES.createContext as unknown as Context, DEFAULT_CLASS_FIELDS);
    expect(STEP_EXAMPLE.machine_class).to.equal(machineClass);
    expect(STEP_EXAMPLE.id).to.equal(
      changeId({
        pipeline: session.description.pipeline_branch as string,
        component: STEP_EXAMPLE.component,
        item_variant: STEP_EXAMPLE.item_variant,
        machine_class: machineClass,
        resource: 'total_time',
        first_build: STEP_EXAMPLE.first_build,
      }),
    );
  });
});
