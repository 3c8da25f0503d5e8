import type { ApiContext } from './http.js';
import type { Coordinator } from '../context.js';
import { AppError } from '../errors.js';
import { requireOrg } from './auth-context.js';
import { DEFAULT_ORG_MESSAGES, type OrganizationMessages } from '../tenancy/auth.js';

export const EXAMPLE_JOB_ID = '0b5c8e0e-6f0a-4d7e-9a51-2f0d8c3b9e11';
export const EXAMPLE_ORG_ID = '5d1c2b7e-3a44-4f0e-8f53-1f7a9e2c6b10';

/** Contract section 7 words the jobs routes' 403 `Not allowed`, a key bound to another organization included. */
export const JOBS_ORG_MESSAGES: OrganizationMessages = {
  ...DEFAULT_ORG_MESSAGES,
  mismatch: new AppError(403, 'Not allowed', 'Organization ID mismatch: the API key is bound to a different organization'),
};

/** The organization a jobs route acts for (contract section 5), with the jobs routes' wording. */
export function jobOrg(app: Coordinator, ctx: ApiContext, supplied: unknown): Promise<string> {
  return requireOrg(app, ctx, supplied, JOBS_ORG_MESSAGES);
}
