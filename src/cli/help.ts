/** The "Examples:" block every command's --help ends with. */
export function examples(...lines: Array<[command: string, comment: string]>): string {
  const width = Math.max(...lines.map(([command]) => command.length));
  return `\nExamples:\n${lines.map(([command, comment]) => `  $ ${command.padEnd(width)}  # ${comment}`).join('\n')}\n`;
}
