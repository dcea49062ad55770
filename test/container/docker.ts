import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../e2e/client.js';

/**
 * The container image under test (built by scripts/image.sh) and the docker commands the container suite needs. Every
 * container runs as the Helm chart's pod does: uid/gid 10001, read-only root filesystem with a tmpfs on /tmp, every
 * capability dropped, no new privileges; on the host's network, listening on a 127.0.0.1 port.
 */

const execFileAsync = promisify(execFile);

/** Runs `docker <args>`; a failure carries the command and docker's own message. */
export async function docker(args: string[], timeoutMs = 120_000): Promise<string> {
  try {
    const { stdout } = await execFileAsync('docker', args, { timeout: timeoutMs, maxBuffer: 64 << 20 });
    return stdout.trim();
  } catch (error) {
    const { stderr = '', message } = error as { stderr?: string; message: string };
    throw new Error(`docker ${args.join(' ')} failed: ${stderr.trim() || message}`, { cause: error });
  }
}

/** The image the chart renders by default: `[registry/]repository:appVersion` (values.yaml `image`, Chart.yaml). */
export function chartDefaultImage(): string {
  const chartDir = join(REPO_ROOT, 'charts/monitor-server');
  const appVersion = /^appVersion:\s*"?([^"\s]+)"?\s*$/m.exec(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8'))?.[1];
  const values = readFileSync(join(chartDir, 'values.yaml'), 'utf8');
  const image = /^image:\n((?:[ \t].*\n|\n)*)/m.exec(values)?.[1] ?? '';
  const field = (name: string) => new RegExp(`^  ${name}:\\s*"?([^"\\s]*)"?\\s*$`, 'm').exec(image)?.[1] ?? '';
  if (appVersion === undefined || field('repository') === '') {
    throw new Error(`no appVersion in ${chartDir}/Chart.yaml or no image.repository in its values.yaml`);
  }
  const registry = field('registry');
  return `${registry === '' ? '' : `${registry}/`}${field('repository')}:${field('tag') || appVersion}`;
}

/** The image scripts/image.sh built and handed to this suite. */
export function imageUnderTest(): string {
  const image = process.env.MONITOR_IMAGE;
  if (!image) throw new Error('MONITOR_IMAGE is not set: run this suite through scripts/image.sh test');
  return image;
}

const TOKENS_DIR = '/etc/monitor-server/auth';

export interface ContainerSpec {
  name: string;
  port: number;
  env: Record<string, string>;
  /** A named volume mounted on /data (the chart's PVC), if any. */
  volume?: string;
  /** A host directory mounted read-only on TOKENS_DIR (the chart's tokens Secret). */
  tokensDir: string;
}

/** `docker run` arguments that reproduce the chart's pod securityContext and mounts. */
function hardenedRunArgs(spec: ContainerSpec): string[] {
  const env = {
    PORT: String(spec.port),
    HOST: '127.0.0.1',
    MONITOR_AUTH_TOKENS_FILE: `${TOKENS_DIR}/tokens`,
    ...spec.env,
  };
  return [
    ...['--name', spec.name, '--network', 'host'],
    ...['--user', '10001:10001', '--read-only', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges'],
    ...['--tmpfs', '/tmp:rw,nosuid,nodev,noexec,size=64m'],
    ...(spec.volume === undefined ? [] : ['--volume', `${spec.volume}:/data`]),
    ...['--volume', `${spec.tokensDir}:${TOKENS_DIR}:ro`],
    // The image's own HEALTHCHECK command, probed every second instead of every 30 s so the suite need not wait.
    ...['--health-interval', '1s'],
    ...Object.entries(env).flatMap(([key, value]) => ['--env', `${key}=${value}`]),
  ];
}

export async function startContainer(spec: ContainerSpec): Promise<void> {
  await docker(['run', '--detach', ...hardenedRunArgs(spec), imageUnderTest()]);
}

/**
 * Runs `command` in a one-off container of the image with the same securityContext and mounts; returns what it wrote
 * to stdout and stderr (a CLI reports on stderr). Fails with that output if the command exits non-zero.
 */
export async function runOnce(spec: ContainerSpec, command: string[]): Promise<string> {
  const args = ['run', '--rm', ...hardenedRunArgs(spec), imageUnderTest(), ...command];
  try {
    const { stdout, stderr } = await execFileAsync('docker', args, { timeout: 120_000 });
    return `${stdout}${stderr}`;
  } catch (error) {
    const { stdout = '', stderr = '', message } = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`docker ${args.join(' ')} failed: ${`${stdout}${stderr}`.trim() || message}`, { cause: error });
  }
}

/**
 * The retention CronJob's container command for a retention of `days` days, as the chart's template writes it
 * (templates/retention-cronjob.yaml: `command` and `args`, with `{{ int $retention.days }}d` filled in).
 */
export function chartRetentionCommand(days: number): string[] {
  const template = readFileSync(join(REPO_ROOT, 'charts/monitor-server/templates/retention-cronjob.yaml'), 'utf8');
  const list = (key: string): string[] => {
    const line = new RegExp(`^\\s*${key}:\\s*(\\[.*\\])\\s*$`, 'm').exec(template)?.[1];
    if (line === undefined) throw new Error(`no one-line \`${key}: [...]\` in retention-cronjob.yaml`);
    return JSON.parse(line.replace(/\{\{\s*int \$retention\.days\s*\}\}/g, String(days))) as string[];
  };
  return [...list('command'), ...list('args')];
}

/** Waits until the HEALTHCHECK reports healthy; fails at once, with the container's log, if it stops or turns unhealthy. */
export async function waitHealthy(name: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [running = '', health = ''] = (
      await docker(['inspect', '-f', '{{.State.Running}} {{.State.Health.Status}}', name])
    ).split(' ');
    if (health === 'healthy') return;
    if (running !== 'true' || health === 'unhealthy' || Date.now() > deadline) {
      const logs = await docker(['logs', '--tail', '50', name]).catch((error: unknown) => String(error));
      throw new Error(`container ${name}: running=${running}, health=${health}; its last log lines:\n${logs}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Removes a container (and its anonymous volumes) if it exists. */
export async function removeContainer(name: string): Promise<void> {
  await docker(['rm', '--force', '--volumes', name]).catch(() => undefined);
}
