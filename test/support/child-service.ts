import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Starts the real entry point (src/server.ts) as a child process (with `nodeOptions` before it) and resolves once it
 * listens; `output()` is what it printed so far.
 */
export async function startChild(
  env: Record<string, string>,
  nodeOptions: string[] = [],
): Promise<{ child: ChildProcess; url: string; exited: Promise<number | null>; output: () => string }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', ...nodeOptions, 'src/server.ts'], {
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let output = '';
  const listening = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the service did not start:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('monitor-server listening')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', () => reject(new Error(`the service exited before listening:\n${output}`)));
  });
  await listening;
  return { child, url: `http://127.0.0.1:${port}/api/v1`, exited, output: () => output };
}
