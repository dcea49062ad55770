/** A target's verdict cell: n/a when the run did not measure what the target is about. */
export function verdict(ok: boolean | undefined): string {
  return ok === undefined ? 'n/a' : ok ? '**met**' : '**missed**';
}
