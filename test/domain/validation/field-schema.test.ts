import { expect } from 'chai';
import { CONTEXT_FIELDS, METRIC_FIELDS, type FieldTable } from '../../../src/domain/fields.js';
import { createBodyCheck, createSchema } from '../../../src/domain/validation/field-schema.js';

/**
 * The fast path of create validation (createBodyCheck) must never accept what joi (createSchema) refuses or would
 * change: a body it accepts is stored without joi. Each field of the context and metric tables is set, in a body
 * otherwise made of the catalogue's examples, to values at and beyond every limit.
 */
const TRICKY: unknown[] = [
  '',
  ' ',
  'a',
  'x'.repeat(16),
  'x'.repeat(17),
  'x'.repeat(32),
  'x'.repeat(33),
  'x'.repeat(64),
  'x'.repeat(65),
  'x'.repeat(128),
  'x'.repeat(129),
  'x'.repeat(256),
  'x'.repeat(257),
  'x'.repeat(512),
  'x'.repeat(513),
  'x'.repeat(2048),
  'x'.repeat(2049),
  'x'.repeat(4096),
  'x'.repeat(4097),
  '\ud800',
  'a\udc00b',
  '\0',
  'a\u0000b',
  // A line break to Python's str.splitlines(): refused in a test's names and paths (oneLine), a character elsewhere.
  'a\nb',
  'a\rb',
  '\v',
  '\f',
  '\x1c',
  '\x1e',
  '\x85',
  'a\u2028b',
  '\u2029',
  '\t',
  '😀',
  'é',
  '2026-11-22T05:10:45.684828',
  '2026-11-22 05:10:45',
  '2026-11-22',
  '2026-02-29T00:00:00',
  '2024-02-29T00:00:00',
  '2026-13-01T00:00:00',
  '2026-11-22T24:00:00',
  '2026-11-22T05:10:60',
  '2026-11-22T05:10:45Z',
  '2026-11-22T05:10:45+01:00',
  '2026-11-22T05:10:45.1234567890',
  '2026-11-22T05:10',
  '2026-11-22T05:10:45.684828' + 'x'.repeat(40),
  '22/11/2026',
  0,
  -0,
  1,
  -1,
  2,
  0.5,
  -0.5,
  2599.998,
  1e300,
  -1e300,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 1,
  -Number.MAX_SAFE_INTEGER,
  -Number.MAX_SAFE_INTEGER - 1,
  5e-324,
  '1',
  '0.5',
  true,
  false,
  null,
  undefined,
  [],
  ['a'],
  {},
  { a: 1 },
];

const example = (table: FieldTable): Record<string, unknown> =>
  Object.fromEntries(Object.entries(table).map(([name, spec]) => [name, spec.example]));

function agrees(table: FieldTable, label: string): void {
  const schema = createSchema(table);
  const accepts = createBodyCheck(table);
  const options = { abortEarly: false, convert: false, stripUnknown: true } as const;

  describe(`create validation fast path: ${label}`, () => {
    it('accepts the catalogue examples (so bodies like them skip joi)', () => {
      expect(accepts(example(table))).to.equal(true);
      expect(accepts({ ...example(table), unknown_member: 'x' })).to.equal(true);
    });

    for (const name of Object.keys(table)) {
      it(`${name}: accepts only what joi accepts unchanged`, () => {
        for (const value of TRICKY) {
          const body = { ...example(table), [name]: value };
          if (value === undefined) Reflect.deleteProperty(body, name);
          if (!accepts(body)) continue;
          const { value: validated, error } = schema.validate(body, options) as {
            value: Record<string, unknown>;
            error?: Error;
          };
          const shown =
            typeof value === 'string' && value.length > 20 ? `${value.slice(0, 20)}… (${value.length})` : value;
          expect(error, `${name} = ${String(shown)}: joi refuses it`).to.equal(undefined);
          expect(Object.is(validated[name], value), `${name} = ${String(shown)}: joi changes it`).to.equal(true);
        }
      });

      it(`${name}: refuses what joi refuses`, () => {
        // The converse is not required (a body the fast path refuses goes to joi), but a fast path that refuses
        // valid values would send them all to joi: the examples' own types must pass.
        for (const value of TRICKY) {
          const body = { ...example(table), [name]: value };
          if (value === undefined) Reflect.deleteProperty(body, name);
          if (schema.validate(body, options).error !== undefined) expect(accepts(body)).to.equal(false);
        }
      });
    }
  });
}

agrees(CONTEXT_FIELDS, 'context');
agrees(METRIC_FIELDS, 'metric');
