import type { Client, estypes } from '@elastic/elasticsearch';
import type { LayoutFinding } from '../../admin.js';
import { indicesOf } from './index-reads.js';
import { isNotFound } from '../errors.js';
import { INDEX_KINDS, MAPPING_VERSION, templateBody, type IndexKind, type IndexNames } from '../indices.js';

/**
 * What monitor-admin init and init --check compare: each kind's index template against the one this version
 * puts, each alias against "exists and points at one index", and that index's mapping and sort against the
 * template's. Differences an update can fix (a missing template, alias or field) are init's; the others (a field
 * of another type, an unexpected field, another index sort) need a reindex.
 */

type Properties = Record<string, estypes.MappingProperty>;

/** Aliases that mark a reindex in progress: they name its source and its target, so a re-run resumes it. */
export function reindexMarkers(names: IndexNames, kind: IndexKind): { source: string; target: string } {
  return { source: `${names.alias(kind)}-reindex-source`, target: `${names.alias(kind)}-reindex-target` };
}

function expectedProperties(names: IndexNames, kind: IndexKind): Properties {
  return templateBody(names, kind).template?.mappings?.properties ?? {};
}

function describeProperty(property: estypes.MappingProperty | undefined): string {
  if (!property) return 'absent';
  const { type, enabled } = property as { type?: string; enabled?: boolean };
  return `${type ?? 'object'}${enabled === false ? ' (not indexed)' : ''}`;
}

/** Settings flattened to "index.a.b" → text, the way Elasticsearch reports them. */
function flatSettings(settings: Record<string, unknown> | undefined, prefix = ''): Map<string, string> {
  const flat = new Map<string, string>();
  for (const [key, value] of Object.entries(settings ?? {})) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [k, v] of flatSettings(value as Record<string, unknown>, path)) flat.set(k, v);
    } else {
      flat.set(
        path.startsWith('index.') ? path : `index.${path}`,
        Array.isArray(value) && value.length === 1 ? String(value[0]) : String(value),
      );
    }
  }
  return flat;
}

/** A setting as flatSettings writes it: a list joined with commas. */
function settingText(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) return value.join(',');
  return typeof value === 'string' ? value : JSON.stringify(value);
}

interface PropertyDifference {
  /** `missing`: an update can add it; the others need a new index. */
  kind: 'missing' | 'different' | 'unexpected';
  text: string;
}

function propertyDifferences(expected: Properties, actual: Properties): PropertyDifference[] {
  const differences: PropertyDifference[] = [];
  for (const [field, property] of Object.entries(expected)) {
    const found = describeProperty(actual[field]);
    if (found !== describeProperty(property)) {
      differences.push({
        kind: actual[field] ? 'different' : 'missing',
        text: `field ${field} is ${found}, expected ${describeProperty(property)}`,
      });
    }
  }
  for (const field of Object.keys(actual)) {
    if (!(field in expected)) differences.push({ kind: 'unexpected', text: `unexpected field ${field}` });
  }
  return differences;
}

async function templateFindings(client: Client, names: IndexNames, kind: IndexKind): Promise<LayoutFinding[]> {
  const expected = templateBody(names, kind);
  const object = `template ${expected.name}`;
  let actual: estypes.IndicesIndexTemplate | undefined;
  try {
    actual = (await client.indices.getIndexTemplate({ name: expected.name })).index_templates[0]?.index_template;
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  if (!actual) return [{ object, problem: 'missing', fix: 'init' }];
  const differences: string[] = [];
  const patterns = (list: string | string[] | undefined) => JSON.stringify([list ?? []].flat().sort());
  if (patterns(actual.index_patterns) !== patterns(expected.index_patterns)) differences.push('index patterns');
  if ((actual.priority ?? 0) !== expected.priority) differences.push('priority');
  if ((actual._meta as { mapping_version?: number } | undefined)?.mapping_version !== MAPPING_VERSION)
    differences.push('mapping version');
  const wantedSettings = flatSettings(expected.template?.settings);
  const foundSettings = flatSettings(actual.template?.settings);
  if (
    [...wantedSettings].some(([key, value]) => foundSettings.get(key) !== value) ||
    foundSettings.size !== wantedSettings.size
  ) {
    differences.push('settings');
  }
  if (actual.template?.mappings?.dynamic !== 'strict') differences.push('dynamic mapping');
  const properties = (actual.template?.mappings?.properties ?? {}) as Properties;
  differences.push(...propertyDifferences(expectedProperties(names, kind), properties).map((d) => d.text));
  return differences.length === 0
    ? []
    : [{ object, problem: `differs from this version's: ${differences.join(', ')}`, fix: 'init' }];
}

async function indexFindings(client: Client, names: IndexNames, kind: IndexKind): Promise<LayoutFinding[]> {
  const alias = names.alias(kind);
  const indices = await indicesOf(client, alias);
  if (indices.length === 0) return [{ object: `alias ${alias}`, problem: 'missing', fix: 'init' }];
  const layout = kind === 'metrics' ? monthLayoutFindings(names, indices) : oneIndexFindings(alias, indices);
  if (layout.some((finding) => finding.fix === 'manual')) return layout;
  const findings = [...layout];
  for (const index of indices) findings.push(...(await mappingFindings(client, names, kind, index)));
  return findings;
}

function oneIndexFindings(alias: string, indices: string[]): LayoutFinding[] {
  return indices.length === 1
    ? []
    : [
        {
          object: `alias ${alias}`,
          problem: `points at ${indices.length} indices (${indices.join(', ')}); it must point at one`,
          fix: 'manual',
        },
      ];
}

/** Metrics: one index per month (metric-partitions.ts), or the single index of a store made before partitioning. */
function monthLayoutFindings(names: IndexNames, indices: string[]): LayoutFinding[] {
  const alias = names.alias('metrics');
  const unpartitioned = indices.filter((index) => names.monthOfIndex(index) === undefined);
  if (unpartitioned.length === 1 && indices.length === 1) {
    return [
      {
        object: `alias ${alias}`,
        problem: `keeps every metric in one index (${indices[0]}), not one index per month that retention can drop`,
        fix: 'reindex',
      },
    ];
  }
  const byMonth = new Map<string, string[]>();
  for (const index of indices) {
    const month = names.monthOfIndex(index) ?? 'none';
    byMonth.set(month, [...(byMonth.get(month) ?? []), index]);
  }
  const doubled = [...byMonth.values()].filter((list) => list.length > 1).flat();
  if (unpartitioned.length === 0 && doubled.length === 0) return [];
  return [
    {
      object: `alias ${alias}`,
      problem: `must point at one index per month; it points at ${indices.join(', ')}`,
      fix: 'manual',
    },
  ];
}

/** One index's mapping and sort against the template's. */
async function mappingFindings(
  client: Client,
  names: IndexNames,
  kind: IndexKind,
  index: string,
): Promise<LayoutFinding[]> {
  const findings: LayoutFinding[] = [];
  const mapping = (await client.indices.getMapping({ index }))[index]?.mappings ?? {};
  if (mapping.dynamic !== 'strict')
    findings.push({ object: `index ${index}`, problem: 'dynamic mapping is not strict', fix: 'init' });
  const expected = expectedProperties(names, kind);
  const actual = (mapping.properties ?? {}) as Properties;
  for (const difference of propertyDifferences(expected, actual)) {
    findings.push({
      object: `index ${index}`,
      problem: difference.text,
      fix: difference.kind === 'missing' ? 'init' : 'reindex',
    });
  }
  const settings = (await client.indices.getSettings({ index, flat_settings: true }))[index]?.settings;
  const wantedSort = flatSettings(templateBody(names, kind).template?.settings).get('index.sort.field');
  const foundSortText = settingText(settings?.['index.sort.field']);
  if (foundSortText !== wantedSort) {
    findings.push({
      object: `index ${index}`,
      problem: `index sort is ${foundSortText ?? 'none'}, expected ${wantedSort ?? 'none'}`,
      fix: 'reindex',
    });
  }
  return findings;
}

async function markerFindings(client: Client, names: IndexNames, kind: IndexKind): Promise<LayoutFinding[]> {
  const markers = reindexMarkers(names, kind);
  const found = [...(await indicesOf(client, markers.source)), ...(await indicesOf(client, markers.target))];
  return found.length === 0
    ? []
    : [
        {
          object: `alias ${names.alias(kind)}`,
          problem: 'a reindex was interrupted; run monitor-admin reindex to finish it',
          fix: 'reindex',
        },
      ];
}

/** Every difference between the cluster and this version's templates, aliases and mappings; changes nothing. */
export async function schemaFindings(client: Client, names: IndexNames): Promise<LayoutFinding[]> {
  const findings: LayoutFinding[] = [];
  for (const kind of INDEX_KINDS) {
    findings.push(...(await templateFindings(client, names, kind)));
    findings.push(...(await indexFindings(client, names, kind)));
    findings.push(...(await markerFindings(client, names, kind)));
  }
  return findings;
}

/** Adds the fields an index lacks and makes its mapping strict: the in-place part of a mapping change. */
export async function addMissingFields(client: Client, names: IndexNames, kind: IndexKind): Promise<string[]> {
  const indices = await indicesOf(client, names.alias(kind));
  if (kind !== 'metrics' && indices.length !== 1) return [];
  const actions: string[] = [];
  for (const index of indices) actions.push(...(await addMissingFieldsTo(client, names, kind, index)));
  return actions;
}

async function addMissingFieldsTo(
  client: Client,
  names: IndexNames,
  kind: IndexKind,
  index: string,
): Promise<string[]> {
  const mapping = (await client.indices.getMapping({ index }))[index]?.mappings ?? {};
  const actual = (mapping.properties ?? {}) as Properties;
  const missing = Object.entries(expectedProperties(names, kind)).filter(([field]) => !(field in actual));
  if (missing.length === 0 && mapping.dynamic === 'strict') return [];
  await client.indices.putMapping({ index, dynamic: 'strict', properties: Object.fromEntries(missing) });
  return [
    ...(mapping.dynamic === 'strict' ? [] : [`made the mapping of ${index} strict`]),
    ...missing.map(([field]) => `added field ${field} to ${index}`),
  ];
}
