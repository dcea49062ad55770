import { expect } from 'chai';
import { sqliteFixture } from '../support/stores.js';
import { expectError, getOk, useService, V1 } from './helpers.js';

/**
 * Issue 40, point 10: the regressions routes refuse some query parameters together (`baseline_session` with any other
 * baseline parameter, `baseline_build` with `baseline_tag`, `match` with `same_context`), and the document allowed
 * them, so schemathesis at its defaults found a valid request refused. The document now says it: the parameters a
 * conflict joins are one object parameter, sent exploded (each member its own query parameter), whose schema refuses
 * each pair that conflicts. Every pair of members of every such group is sent: the service refuses exactly the pairs
 * the document does, with a 400 naming one of them.
 */

interface Schema {
  type?: string;
  enum?: unknown[];
  items?: Schema;
  properties?: Record<string, Schema>;
  not?: { anyOf?: Array<{ required: string[] }>; required?: string[] };
}
interface Parameter {
  name: string;
  in: string;
  style?: string;
  explode?: boolean;
  example?: string | number;
  schema: Schema;
}
interface Document {
  paths: Record<string, Record<string, { operationId: string; parameters?: Parameter[] }>>;
}

/** A value the member's schema takes, as query text. */
function valueOf(name: string, schema: Schema): string {
  if (schema.enum) return String(schema.enum[0]);
  if (schema.type === 'boolean') return 'true';
  if (schema.type === 'array') return 'branch=main';
  return `some-${name}`;
}

describe('API: query parameters that go together only as the document says (conflicts)', function () {
  this.timeout(60_000);
  const api = useService(() => sqliteFixture);

  it('refuses exactly the pairs the document refuses, naming a parameter of the pair; each member alone is taken', async function () {
    const document = (await getOk(api(), `${V1}/openapi.json`)) as Document;
    const grouped = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.values(item).flatMap((operation) =>
        (operation.parameters ?? [])
          .filter((p) => p.in === 'query' && p.schema.type === 'object')
          .map((group) => ({ path, operation, group })),
      ),
    );
    expect(new Set(grouped.map(({ operation }) => operation.operationId))).to.include.members([
      'findBuildRegressions',
      'findSessionRegressions',
    ]);
    expect(new Set(grouped.map(({ group }) => group.name))).to.have.members(['baseline', 'matching']);
    for (const { path, operation, group } of grouped) {
      expect(group.style, group.name).to.equal('form');
      expect(group.explode, group.name).to.equal(true);
      const { not } = group.schema;
      const clauses = not?.anyOf ?? (not?.required ? [{ required: not.required }] : []);
      expect(clauses, group.name).to.not.be.empty;
      const refused = clauses.map((clause) => [...clause.required].sort().join('+'));
      const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => {
        const parameter = operation.parameters?.find((p) => p.in === 'path' && p.name === name);
        return encodeURIComponent(String(parameter?.example ?? 'x'));
      });
      const members = Object.entries(group.schema.properties ?? {});
      const query = (names: string[]) =>
        names
          .map((name) => `${name}=${encodeURIComponent(valueOf(name, group.schema.properties?.[name] ?? {}))}`)
          .join('&');
      for (const [name] of members) {
        const res = await api().get(`${filled}?${query([name])}`);
        expect(res.status, `${operation.operationId} ${name} alone: ${res.text}`).to.not.equal(400);
      }
      for (const [i, [a]] of members.entries()) {
        for (const [b] of members.slice(i + 1)) {
          const request = `${filled}?${query([a, b])}`;
          const res = await api().get(request);
          if (refused.includes([a, b].sort().join('+'))) {
            const error = expectError(res, 400);
            expect(Object.keys(error.errors ?? {}), request).to.satisfy((keys: string[]) =>
              keys.some((key) => key === a || key === b),
            );
          } else expect(res.status, `${request}: ${res.text}`).to.not.equal(400);
        }
      }
    }
  });
});
