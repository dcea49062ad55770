import Joi from 'joi';

/**
 * src/wire/: the HTTP contract, declared once — every answer the CLI or the dashboard reads, and the query of the
 * regression routes. The service's presenters return these types, the CLI and the dashboard read them
 * (`import type`: nothing of this folder but types reaches the browser), and the OpenAPI document's schemas are
 * joi objects whose members the compiler checks against the same types.
 *
 * The direction: the TypeScript type is the source, the joi schema follows it through `membersOf` below. A type
 * is what three audiences read (presenter, CLI, dashboard), costs nothing at run time and needs no generator step
 * in the build; a joi schema typed as `MembersOf<T>` must name every member of T and no other (an extra or a
 * missing key is a compile error), and a presenter annotated with T cannot return a member T lacks. Generating
 * types from joi would need either a build step or joi's weak inference (descriptions, ids and `allow(null)` lost).
 *
 * What an older service leaves out is said once per answer with `SentByAnyVersion` (regression-report.ts).
 */

/** A schema for each member of T: none missing, none extra. */
export type MembersOf<T> = { [K in keyof Required<T>]-?: Joi.Schema };

/** The joi object of T's members, in the order given (the OpenAPI document's order). */
export const membersOf = <T>(members: MembersOf<T>): Joi.ObjectSchema<T> => Joi.object<T>(members);
