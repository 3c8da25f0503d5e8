// DECISION (social posting and plans): social posting is a feature of the pro and business plans.
// Free and starter organizations get 403 on every social route, with an `error` naming the plan
// rule and a `message` saying which plans include it. On top of the plan, the organization's own
// `isEnabled` setting (2.10) is enforced on the routes that send or change posts (publish, edit):
// 403 while it is false. Cancelling (remove), settings, accounts and listing stay available, so an
// organization can always switch posting back on or stop what is queued.
import { AppError } from '../errors.js';
import type { Organization } from '../tenancy/tenancy.js';
import type { Plan } from '../tenancy/plans.js';
import { DEFAULT_ORG_MESSAGES, type OrganizationMessages } from '../tenancy/auth.js';
import type { SocialSettings } from './settings.js';

export const SOCIAL_PLANS: readonly Plan[] = ['pro', 'business'];

export const PLAN_RULE_TEXT = 'Social posting is included in the pro and business plans; free and starter organizations get 403.';

export function assertSocialPlan(org: Organization): void {
  if (!SOCIAL_PLANS.includes(org.plan)) {
    throw new AppError(
      403,
      'Social posting is not included in this plan',
      `Social posting requires the pro or business plan; this organization is on the ${org.plan} plan`,
    ).withCode('over_plan_limit');
  }
}

export function assertPostingEnabled(settings: SocialSettings): void {
  if (!settings.isEnabled) {
    throw new AppError(
      403,
      'Social posting is disabled',
      'Social posting is disabled for this organization: set isEnabled to true in the social settings',
    );
  }
}

/** Contract 4: in the social routes the `error` key itself says organizationId is required. */
const MISSING_ORG = 'organizationId is required when not using an API key';
export const SOCIAL_ORG_MESSAGES: OrganizationMessages = {
  ...DEFAULT_ORG_MESSAGES,
  missing: new AppError(400, MISSING_ORG, MISSING_ORG),
};
