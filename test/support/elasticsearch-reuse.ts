import type { Client, estypes } from '@elastic/elasticsearch';

/**
 * Index prefixes handed from one test's store to the next, emptied, so that the Elasticsearch fixture does not make
 * templates and indices anew for every test (stores.ts). A prefix is reused only when its layout, read from the node,
 * is exactly the one its first init made: the same indices with the same aliases, mappings and settings, and the
 * same index templates. Month indices a test's data made are dropped, and so are the indices written with external
 * versions (the run summaries), for the next init to make again; anything else a test changed (a template, a block, a
 * reindex's new index) drops the whole prefix. Emptied means no document on any of its indices, checked
 * again when the prefix is taken, so that a write that came late costs the reuse, never a test.
 */
export class ReusablePrefixes {
  /** The layout each prefix had right after its first init. */
  private readonly layouts = new Map<string, Layout>();
  private readonly free: string[] = [];

  constructor(
    private readonly connect: () => Client,
    private readonly options: {
      /** Deletes every index and template of a prefix. */
      drop: (prefix: string) => Promise<void>;
      /**
       * The indices of a prefix to delete rather than empty, so that the next init makes them anew: those written
       * with external versions. A deleted document's version outlives it (index.gc_deletes, 60 s), and the next
       * store's first versions would lose to it: its writes refused as stale, its reads empty.
       */
      remade: (prefix: string) => string[];
    },
  ) {}

  /** Notes the layout a fresh prefix's init made, so that the prefix can be given back once a test is done. */
  async remember(prefix: string): Promise<void> {
    await this.withClient(async (client) => this.layouts.set(prefix, await layoutOf(client, prefix)));
  }

  /** An emptied prefix of the original layout, or undefined when none is free (the caller makes a fresh one). */
  async take(): Promise<string | undefined> {
    const prefix = this.free.pop();
    if (prefix === undefined) return undefined;
    const empty = await this.withClient((client) => documentCount(client, prefix)).then((n) => n === 0);
    if (empty) return prefix;
    await this.forget(prefix);
    return undefined;
  }

  /** Empties a prefix whose store is closed and keeps it for the next store, or drops it when it cannot be reused. */
  async giveBack(prefix: string): Promise<void> {
    const original = this.layouts.get(prefix);
    const remade = this.options.remade(prefix);
    const reusable =
      original !== undefined && (await this.withClient((client) => emptyToLayout(client, prefix, original, remade)));
    if (reusable) this.free.push(prefix);
    else await this.forget(prefix);
  }

  /** Drops every prefix kept (the end of a test file). */
  async dropAll(): Promise<void> {
    const prefixes = [...this.layouts.keys()];
    this.free.length = 0;
    for (const prefix of prefixes) await this.forget(prefix);
  }

  private async forget(prefix: string): Promise<void> {
    this.layouts.delete(prefix);
    const at = this.free.indexOf(prefix);
    if (at >= 0) this.free.splice(at, 1);
    await this.options.drop(prefix);
  }

  private async withClient<T>(work: (client: Client) => Promise<T>): Promise<T> {
    const client = this.connect();
    try {
      return await work(client);
    } finally {
      await client.close();
    }
  }
}

interface Layout {
  indices: string[];
  /** The indices (aliases, mappings, settings) and templates of the prefix, as one comparable text. */
  fingerprint: string;
}

async function layoutOf(client: Client, prefix: string, only?: string[]): Promise<Layout> {
  const [indices, templates] = await Promise.all([
    client.indices.get({ index: `${prefix}-*`, expand_wildcards: 'all', allow_no_indices: true }),
    client.indices
      .getIndexTemplate({ name: `${prefix}-*` })
      .then((found) => found.index_templates)
      .catch(() => []),
  ]);
  const names = Object.keys(indices)
    .filter((name) => only === undefined || only.includes(name))
    .sort();
  const described = names.map((name) => [name, withoutIdentity(withoutCompleteMark(indices[name]!))]);
  const templated = [...templates].sort((a, b) => a.name.localeCompare(b.name));
  return { indices: Object.keys(indices).sort(), fingerprint: JSON.stringify({ described, templated }) };
}

/** An index made again under its name has another uuid and creation date, and the same layout. */
function withoutIdentity(index: estypes.IndicesIndexState): estypes.IndicesIndexState {
  const settings = index.settings?.index;
  if (settings === undefined) return index;
  const { uuid: _uuid, creation_date: _created, ...rest } = settings;
  return { ...index, settings: { ...index.settings, index: rest } };
}

/**
 * The names index marks its mapping `complete` once it holds every name (name-index.ts), a moment after a fresh init:
 * a mark of its content, not of the layout. An emptied names index marked so is what a fresh store is a moment after
 * its init.
 */
function withoutCompleteMark(index: estypes.IndicesIndexState): estypes.IndicesIndexState {
  const meta = index.mappings?._meta;
  if (meta === undefined || !('complete' in meta)) return index;
  const { complete: _complete, ...rest } = meta;
  const { _meta: _marked, ...mappings } = index.mappings!;
  return { ...index, mappings: Object.keys(rest).length > 0 ? { ...mappings, _meta: rest } : mappings };
}

/**
 * Brings a prefix back to its original layout, emptied: true when that worked. Indices the test added are deleted
 * first (months of its data), the rest compared with the original, then every document deleted.
 */
async function emptyToLayout(client: Client, prefix: string, original: Layout, remade: string[]): Promise<boolean> {
  const now = await layoutOf(client, prefix, original.indices);
  if (original.indices.some((name) => !now.indices.includes(name))) return false;
  const added = now.indices.filter((name) => !original.indices.includes(name));
  if (added.length > 0) await client.indices.delete({ index: added.join(','), ignore_unavailable: true });
  if (now.fingerprint !== original.fingerprint) return false;
  await client.indices.delete({ index: remade.join(','), ignore_unavailable: true });
  return deleteEveryDocument(client, prefix);
}

/**
 * The node has no delete-by-query (the integ-test zip lacks the reindex module): the documents are found by a search
 * (refreshed first, so that a write of the last moment is in it) and deleted by id. A prefix holding more than one
 * search page is not worth emptying: false, and it is dropped.
 */
async function deleteEveryDocument(client: Client, prefix: string): Promise<boolean> {
  await client.indices.refresh({ index: `${prefix}-*` });
  const found = await client.search({
    index: `${prefix}-*`,
    size: MAX_EMPTIED,
    _source: false,
    track_total_hits: MAX_EMPTIED + 1,
    query: { match_all: {} },
  });
  const total = typeof found.hits.total === 'number' ? found.hits.total : (found.hits.total?.value ?? 0);
  if (total > MAX_EMPTIED) return false;
  if (found.hits.hits.length === 0) return true;
  const response = await client.bulk({
    refresh: true,
    operations: found.hits.hits.map((hit) => ({ delete: { _index: hit._index, _id: hit._id! } })),
  });
  return !response.errors;
}

/** The most documents a prefix is emptied of for reuse; past it, making a fresh prefix is cheaper. */
const MAX_EMPTIED = 5_000;

async function documentCount(client: Client, prefix: string): Promise<number> {
  await client.indices.refresh({ index: `${prefix}-*` });
  return (await client.count({ index: `${prefix}-*` })).count;
}
