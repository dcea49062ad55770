import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startChild } from '../support/child-service.js';

/**
 * A promise rejection no code handled is a bug, wherever it comes from; it must not take the service down (with
 * every replica meeting the same bug at once, a crash is a crash loop of the whole service). The real entry point is
 * started with a rejection planted, made once it listens: it logs the rejection with its stack, counts it in
 * monitor_unhandled_rejections_total (an alert rule watches it), and goes on serving.
 */
describe('an unhandled promise rejection', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'monitor-rejection-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('is logged with its stack and counted, and the service keeps serving', async function () {
    // The rejection is made when the test sends SIGUSR2, once the service listens.
    const plant =
      'data:text/javascript,process.on("SIGUSR2",function plantedBug(){Promise.reject(new Error("planted rejection"))})';
    const { child, url, exited, output } = await startChild(
      { MONITOR_STORE: 'sqlite', MONITOR_SQLITE_PATH: join(dir, 'monitor.sqlite') },
      ['--import', plant],
    );
    try {
      child.kill('SIGUSR2');
      const exitedEarly = await Promise.race([
        exited.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 2500)),
      ]);
      expect(exitedEarly, `the service exited:\n${output()}`).to.equal(false);
      const base = url.replace(/\/api\/v1$/, '');
      expect((await fetch(`${base}/healthz`)).status).to.equal(200);
      expect((await fetch(`${url}/metrics/count`)).status).to.equal(200);
      expect(await (await fetch(`${base}/metrics`)).text()).to.match(/^monitor_unhandled_rejections_total 1$/m);
      const logged = output()
        .split('\n')
        .filter((line) => line.includes('unhandled promise rejection'))
        .map((line) => JSON.parse(line) as { level: number; err?: { message?: string; stack?: string } });
      expect(logged).to.have.length(1);
      expect(logged[0]?.err?.message).to.equal('planted rejection');
      expect(logged[0]?.err?.stack).to.match(/plantedBug/);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});
