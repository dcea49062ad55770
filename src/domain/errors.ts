/** What is wrong with each field at fault, named as the caller sent it. */
export type FieldErrors = Record<string, string>;

/**
 * Input that breaks the rules of the domain: a create body, a like-pattern, a query value. The API answers it with
 * 400 and the field errors; the CLI's importer reports it as a rejected record.
 */
export class ValidationError extends Error {
  constructor(
    message: string,
    readonly fieldErrors: FieldErrors = {},
  ) {
    super(message);
    this.name = 'ValidationError';
  }
}

/** Throws one ValidationError naming every field at fault, when there is any. */
export function throwIfAny(record: string, errors: FieldErrors): void {
  const names = Object.keys(errors);
  if (names.length === 0) return;
  const summary = names.map((name) => `${name} ${errors[name]}`).join('; ');
  throw new ValidationError(`the ${record} is invalid: ${summary}`, errors);
}
