import type { Readable } from 'node:stream';
import { Option, type Command } from 'commander';
import { newToken, ROLES, TokenFileError, tokenLine, type Role } from '../../auth/tokens.js';
import { examples } from '../help.js';
import { UsageError } from '../io.js';
import type { Invocation } from '../invocation.js';

/**
 * API tokens for the service's tokens file (MONITOR_AUTH_TOKENS_FILE). Neither subcommand reads the configuration or
 * opens a store: they only make or hash a token and print the file's line, so they work anywhere.
 */

interface TokenOptions {
  name: string;
  role: Role;
}

/** More than any token could be: standard input is not buffered without bound. */
const MAX_TOKEN_BYTES = 4096;

/** The tokens-file line, a bad name being a usage error (exit 2). */
function lineOf(name: string, role: Role, token: string): string {
  try {
    return tokenLine(name, role, token);
  } catch (error) {
    if (error instanceof TokenFileError) throw new UsageError(`--name: ${error.message}`);
    throw error;
  }
}

/** The token on standard input: one trailing line break is dropped; nothing else is changed. */
async function readToken(stdin: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin as AsyncIterable<Buffer | string>) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += bytes.length;
    if (size > MAX_TOKEN_BYTES)
      throw new UsageError(`standard input holds more than ${MAX_TOKEN_BYTES} bytes: that is not a token`);
    chunks.push(bytes);
  }
  const token = Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
  if (token === '')
    throw new UsageError(
      'standard input is empty: pipe the token in (printf %s "$TOKEN" | monitor-admin token hash ...)',
    );
  // Never echo the token itself: this message may end up in a log.
  if (/\s/.test(token))
    throw new UsageError(
      'the token contains whitespace (a space, tab or line break other than one at the end): a token sent as "Authorization: Bearer <token>" cannot',
    );
  return token;
}

const nameOption = (): Option =>
  new Option(
    '--name <name>',
    'who uses the token (1 to 64 letters, digits, "_", ".", "@" or "-"): logged with each request',
  ).makeOptionMandatory();
const roleOption = (): Option =>
  new Option('--role <role>', 'write: create records and read them; read: read only')
    .choices(ROLES)
    .makeOptionMandatory();

export function registerTokenCommand(program: Command, invocation: Invocation): void {
  const token = program
    .command('token')
    .description('make API tokens and the lines of the tokens file (MONITOR_AUTH_TOKENS_FILE); no store is opened')
    .addHelpText(
      'after',
      `
The tokens file holds one line per token, <name>:<role>:sha256:<hex digest>, never the token itself; the service
re-reads it when it changes. To revoke a token, delete its line.
${examples(
  ['monitor-admin token create --name ci --role write', 'a new token, and its line'],
  [
    'vault kv get -field=token secret/monitor | monitor-admin token hash --name ci --role write',
    'a token made elsewhere',
  ],
)}`,
    );

  token
    .command('create')
    .description('make a new random token (256 bits, 43 base64url characters) and print it once, with its line')
    .addOption(nameOption())
    .addOption(roleOption())
    .option('--json', 'answer with {"name","role","token","line"} on stdout and nothing on stderr')
    .addHelpText(
      'after',
      `
The token goes to stdout alone, on one line; the line to add to the tokens file and how to use the token go to
stderr, so TOKEN=$(monitor-admin token create ...) captures just the token. The token is not stored anywhere: keep it
in a secret store now.
${examples(
  ['monitor-admin token create --name ci --role write', 'for pytest-monitor in CI'],
  ['monitor-admin token create --name grafana --role read', 'for a dashboard'],
  ['monitor-admin token create --name ci --role write --json | jq -r .line >> tokens', 'from a script'],
)}`,
    )
    .action(async (options: TokenOptions & { json?: boolean }) => {
      const token = newToken();
      const line = lineOf(options.name, options.role, token);
      if (options.json) {
        await invocation.out(`${JSON.stringify({ name: options.name, role: options.role, token, line })}\n`);
        return;
      }
      await invocation.out(`${token}\n`);
      await invocation.err(
        [
          `token "${options.name}" (${options.role}) made: it is shown only this once, keep it in a secret store.`,
          'Add this line to $MONITOR_AUTH_TOKENS_FILE (the service picks it up within a second):',
          `  ${line}`,
          'Send the token as "Authorization: Bearer <token>"; for pytest-monitor:',
          `  --remote-server http://${options.name}:<token>@host:8181/api/v1`,
          '',
        ].join('\n'),
      );
    });

  token
    .command('hash')
    .description('print the tokens-file line of a token read on stdin (a token made elsewhere, e.g. in a vault)')
    .addOption(nameOption())
    .addOption(roleOption())
    .addHelpText(
      'after',
      `
Standard input holds the token; one trailing line break is dropped. An empty token, or one with whitespace in it,
is refused. Standard input must not be a terminal (the token would show on the screen): pipe it.
${examples(
  ['vault kv get -field=token secret/monitor | monitor-admin token hash --name ci --role write', 'from a vault'],
  ['monitor-admin token hash --name ci --role write < token.txt >> tokens', 'from a file'],
)}`,
    )
    .action(async (options: TokenOptions) => {
      if (invocation.io.stdinIsTTY)
        throw new UsageError(
          'pipe the token on standard input (e.g. printf %s "$TOKEN" | monitor-admin token hash ...): typed on a terminal, it would show on the screen',
        );
      const line = lineOf(options.name, options.role, await readToken(invocation.io.stdin));
      await invocation.out(`${line}\n`);
    });
}
