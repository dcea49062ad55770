import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { newToken, tokenLine, type Role } from '../../src/auth/tokens.js';
import type { RunningService } from '../../src/server.js';
import type { Store } from '../../src/store/store.js';
import { ApiClient, startTestService } from './service.js';
import type { StoreFixture } from './stores.js';

/**
 * A real service with access control on: a tokens file (MONITOR_AUTH_TOKENS_FILE) of its own, holding a write token
 * named "ci-writer" and a read token named "dashboard" (and any extra ones), written as `monitor-admin token create`
 * prints them, with a comment and a blank line between.
 */

export const WRITER_NAME = 'ci-writer';
const READER_NAME = 'dashboard';

interface TestTokens {
  /** The write token ("ci-writer"). */
  writer: string;
  /** The read token ("dashboard"). */
  reader: string;
  /** Every token of the file by its name: the writer's, the reader's and the extra ones. */
  byName: Record<string, string>;
}

/** The tokens of a tokens file: the writer's and the reader's (new ones unless given), and any extra ones. */
interface TokensFileOptions {
  /** The writer's and the reader's tokens, for a test that names them once for several suites (default: new ones). */
  tokens?: { writer?: string; reader?: string };
  /** More tokens in the file: name → role (each gets a new token, in `tokens.byName`). */
  extraTokens?: Record<string, Role>;
}

export interface ProtectedServiceOptions extends TokensFileOptions {
  /** MONITOR_AUTH_READS: reads need a token too (default: open). */
  reads?: boolean;
  /** MONITOR_AUTH_METRICS: /metrics needs a token (default: open). */
  metrics?: boolean;
  /** Keeps the service's log lines (level info) in `logs`; otherwise it is quiet unless TEST_LOG_LEVEL is set. */
  captureLogs?: boolean;
}

export interface ProtectedService {
  api: ApiClient;
  /** The service's base URL, http://127.0.0.1:<port>. */
  url: string;
  service: RunningService;
  store: Store;
  tokens: TestTokens;
  /** The tokens file, for a test that rewrites it (rotation). */
  tokensFile: string;
  /** The service's log lines (JSON), with `captureLogs`; empty otherwise. */
  logs: string[];
}

/**
 * Writes the tokens file at `file` and returns the tokens it holds. startProtectedService writes its service's file
 * with it; a test whose service runs elsewhere (in a container) writes the file that service reads.
 */
export function writeTokensFile(file: string, options: TokensFileOptions = {}): TestTokens {
  const writer = options.tokens?.writer ?? newToken();
  const reader = options.tokens?.reader ?? newToken();
  const extra = Object.entries(options.extraTokens ?? {}).map(([name, role]) => ({ name, role, token: newToken() }));
  const byName: Record<string, string> = { [WRITER_NAME]: writer, [READER_NAME]: reader };
  for (const { name, token } of extra) byName[name] = token;
  writeFileSync(
    file,
    [
      '# test tokens',
      tokenLine(WRITER_NAME, 'write', writer),
      '',
      tokenLine(READER_NAME, 'read', reader),
      ...extra.map(({ name, role, token }) => tokenLine(name, role, token)),
      '',
    ].join('\n'),
  );
  return { writer, reader, byName };
}

/**
 * Starts a service over `store` with a fresh tokens file. `stop()` stops the service and removes the file; the store
 * stays the caller's.
 */
export async function startProtectedService(
  store: Store,
  options: ProtectedServiceOptions = {},
): Promise<ProtectedService & { stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'monitor-tokens-'));
  const tokensFile = join(dir, 'tokens');
  const tokens = writeTokensFile(tokensFile, options);
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  let service: RunningService;
  try {
    service = await startTestService(
      store,
      { auth: { tokensFile, reads: options.reads ?? false, metrics: options.metrics ?? false } },
      options.captureLogs ? pino({ level: 'info' }, sink) : undefined,
    );
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    api: new ApiClient(service.url),
    url: service.url,
    service,
    store,
    tokens,
    tokensFile,
    logs,
    async stop() {
      try {
        await service.stop();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * Registers hooks that give each test (`per: 'test'`, the default) or the whole suite (`per: 'suite'`) a fresh store
 * from the fixture and a protected service over it (see startProtectedService), both removed afterwards. Returns an
 * accessor for what is running; hooks registered after this call run after the service has started.
 */
export function useProtectedService(
  fixture: () => StoreFixture,
  options: ProtectedServiceOptions & { per?: 'test' | 'suite' } = {},
): () => ProtectedService {
  let store: Store | undefined;
  let running: (ProtectedService & { stop(): Promise<void> }) | undefined;
  const [setUp, tearDown] = options.per === 'suite' ? [before, after] : [beforeEach, afterEach];
  setUp(async function () {
    store = await fixture().create();
    running = await startProtectedService(store, options);
  });
  tearDown(async function () {
    await running?.stop();
    if (store) await fixture().destroy(store);
    running = undefined;
    store = undefined;
  });
  return () => {
    if (!running) throw new Error('no protected service is running here: use it inside a test or a later hook');
    return running;
  };
}
