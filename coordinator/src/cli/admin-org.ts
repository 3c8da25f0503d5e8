import { createOrganization, listOrganizations, requireOrganization, updateOrganization } from '../tenancy/tenancy.js';
import { need, num, print, type AdminCommand } from './admin-command.js';

function strip<T extends { webhookSecret?: string }>(org: T): Omit<T, 'webhookSecret'> {
  const { webhookSecret: _secret, ...rest } = org;
  return rest;
}

export const orgCreate: AdminCommand = async ({ db, values, json }) => {
  print(
    strip(await createOrganization(db, { name: need(values.name, '--name'), plan: values.plan, credits: num(values.credits, 'credits') })),
    json,
  );
};

export const orgList: AdminCommand = async ({ db, json }) => {
  print((await listOrganizations(db)).map(strip), json);
};

/** Includes the webhook signing secret. */
export const orgShow: AdminCommand = async ({ db, arg, json }) => {
  print(await requireOrganization(db.pool, need(arg, 'organization id')), json);
};

export const orgSet: AdminCommand = async ({ db, values, arg, json }) => {
  const pv = values['phone-verification'];
  print(
    strip(
      await updateOrganization(db, need(arg, 'organization id'), {
        plan: values.plan,
        credits: num(values.credits, 'credits'),
        retentionDays: num(values['retention-days'], 'retention-days'),
        phoneVerificationRequired: pv === undefined ? undefined : pv === 'on' || pv === 'true',
        name: values.name,
      }),
    ),
    json,
  );
};
