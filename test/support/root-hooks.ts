import { dropKeptElasticsearchPrefixes } from './stores.js';

/**
 * Mocha's root hooks (.mocharc.json `require`): after the last test of a run (of each file, when files run in
 * parallel workers), the indices the Elasticsearch fixture kept for reuse go, so that a run leaves the node as it
 * found it.
 */
export const mochaHooks = {
  async afterAll(): Promise<void> {
    await dropKeptElasticsearchPrefixes();
  },
};
