import type Joi from 'joi';
import type { UnitTarget } from '../../application/unit-target.js';
import { build, pipeline, sessionKey } from '../parameters.js';

/**
 * The routes that answer the same question of a build and of a session (…/builds/{build}/cost and
 * /sessions/{h}/cost, likewise regressions): what each form declares of its own, and the two forms' path values.
 */

type Params = Record<string, string>;

/** The path values of one form and the target they name. */
interface UnitForm {
  params: Record<string, Joi.Schema>;
  target: (params: Params) => UnitTarget;
}

/** One form of a unit route: its name and path, and the target its path values name. */
export interface UnitRouteSpec extends UnitForm {
  operationId: string;
  path: string;
  summary: string;
}

export const BUILD_FORM: UnitForm = {
  params: { pipeline, build },
  target: (p) => ({ pipeline: p.pipeline as string, build: p.build as string }),
};

export const SESSION_FORM: UnitForm = {
  params: { h: sessionKey },
  target: (p) => ({ session: p.h as string }),
};
