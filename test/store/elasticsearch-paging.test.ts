import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Client } from '@elastic/elasticsearch';
import { createElasticsearchClient } from '../../src/store/elasticsearch/client.js';
import { sliceInOrder } from '../../src/store/elasticsearch/paging.js';
import { deleteElasticsearchIndices, elasticsearchTestConfig, selectedStoreNames } from '../support/stores.js';

/**
 * Large listings are read through a window of seq values located by range counts (paging.ts). Insertion stamps are
 * not evenly spread in real life (quiet nights, bursts, several replicas stamping the same microsecond): the slices
 * must be exact whatever the spread, compared here with the order computed from the documents themselves.
 */
(selectedStoreNames().includes('elasticsearch') ? describe : describe.skip)(
  '[elasticsearch] deep slices in insertion order',
  function () {
    this.timeout(120_000);
    const prefix = `test-paging-${randomBytes(4).toString('hex')}`;
    const index = `${prefix}-docs`;
    let client: Client;
    interface Doc {
      key: string;
      seq: number;
      even: boolean;
    }
    const docs: Doc[] = [];

    before(async function () {
      client = createElasticsearchClient(elasticsearchTestConfig());
      // Dense stamps, then 300 documents sharing one stamp, then sparse stamps far apart: 25,300 in all.
      for (let i = 0; i < 15_000; i += 1)
        docs.push({ key: `a${String(i).padStart(5, '0')}`, seq: 1_000 + i, even: i % 2 === 0 });
      for (let i = 0; i < 300; i += 1)
        docs.push({ key: `t${String(299 - i).padStart(3, '0')}`, seq: 20_000, even: i % 2 === 0 });
      for (let i = 0; i < 10_000; i += 1)
        docs.push({ key: `z${String(i).padStart(5, '0')}`, seq: 1e9 + i * 1e6, even: i % 2 === 0 });
      await client.indices.create({
        index,
        mappings: {
          dynamic: 'strict',
          properties: { key: { type: 'keyword' }, seq: { type: 'long' }, even: { type: 'boolean' } },
        },
      });
      const shuffled = [...docs].sort(() => Math.random() - 0.5);
      for (let start = 0; start < shuffled.length; start += 5_000) {
        const operations = shuffled
          .slice(start, start + 5_000)
          .flatMap((doc) => [{ index: { _index: index, _id: doc.key } }, doc]);
        const response = await client.bulk({ operations, refresh: false });
        expect(response.errors).to.equal(false);
      }
      await client.indices.refresh({ index });
    });
    after(async () => {
      await deleteElasticsearchIndices(prefix);
      await client.close();
    });

    const inOrder = (list: Doc[]) =>
      [...list].sort((a, b) => a.seq - b.seq || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).map((d) => d.key);

    async function expectSlices(query: object, expected: string[], offsets: number[], limit: number) {
      for (const offset of offsets) {
        const slice = await sliceInOrder<Doc>(
          client,
          { index, query, keyField: 'key' },
          { offset, limit, total: expected.length },
        );
        expect(
          slice.map((d) => d.key),
          `offset ${offset}, limit ${limit}`,
        ).to.deep.equal(expected.slice(offset, offset + limit));
      }
    }

    it('slices every depth of an unevenly stamped listing exactly, ties included', async function () {
      const expected = inOrder(docs);
      const offsets = [
        0,
        499,
        2_500,
        9_990,
        12_345,
        14_900,
        15_100,
        15_250,
        15_290,
        20_000,
        expected.length - 500,
        expected.length - 1,
      ];
      await expectSlices({ match_all: {} }, expected, offsets, 500);
      await expectSlices({ match_all: {} }, expected, [0, 14_999, 15_150, 25_000], 37);
    });

    it('slices a filtered listing exactly', async function () {
      const expected = inOrder(docs.filter((d) => d.even));
      await expectSlices({ term: { even: true } }, expected, [0, 7_400, 7_480, 7_600, expected.length - 100], 100);
    });
  },
);
