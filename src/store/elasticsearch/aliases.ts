import type { Client } from '@elastic/elasticsearch';
import { isNotFound } from './errors.js';

/** The indices an alias points at, sorted (none when it does not exist). */
export async function indicesOf(client: Client, alias: string): Promise<string[]> {
  try {
    return Object.keys(await client.indices.getAlias({ name: alias })).sort();
  } catch (error) {
    if (isNotFound(error)) return [];
    throw error;
  }
}
