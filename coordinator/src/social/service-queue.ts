import { badRequest } from '../errors.js';
import { ProviderError } from './provider.js';
import { findProfile } from './profiles.js';
import { getSettings } from './settings.js';
import { canonicalTimeZone, isoInZone } from './zoned-time.js';
import { applyOutcome, dueScheduled, listPosts } from './posts.js';
import { SLOT_HORIZON_DAYS, freeSlots, type SocialCore } from './service-core.js';

/** Due posts asked about per list call; the rest on the next one. */
const REFRESH_BATCH = 20;

export async function nextSlot(core: SocialCore, organizationId: string, timezone: string | undefined, count: number) {
  const settings = await getSettings(core.db.pool, organizationId);
  const timeZone = timezone ? canonicalTimeZone(timezone) : settings.defaultTimezone;
  if (!timeZone) throw badRequest(`timezone "${timezone}" is not an IANA time zone (for example Europe/Berlin)`);
  const slots = await freeSlots(core, organizationId, timeZone, count);
  if (!slots.length) throw badRequest(`Every queue slot in the next ${SLOT_HORIZON_DAYS} days is full`);
  return { timezone: timeZone, nextSlot: isoInZone(slots[0]!, timeZone), nextSlots: slots.map((s) => isoInZone(s, timeZone)) };
}

export async function list(core: SocialCore, organizationId: string, limit: number, offset: number) {
  await refreshDue(core, organizationId);
  return listPosts(core.db.pool, organizationId, limit, offset);
}

/** Asks the provider about scheduled posts that are due. A provider that cannot answer now
 *  leaves them as they are: the list must not fail because of it. */
async function refreshDue({ db, provider, log }: SocialCore, organizationId: string): Promise<void> {
  const due = await dueScheduled(db.pool, organizationId, REFRESH_BATCH);
  if (!due.length) return;
  const profile = await findProfile(db, organizationId, provider.name);
  if (!profile) return;
  try {
    const outcomes = await provider.refresh(
      profile,
      due.map((p) => p.providerJobId!),
    );
    for (const o of outcomes) await applyOutcome(db.pool, organizationId, o);
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    log?.warn('social post refresh failed', { organizationId, err: err.message });
  }
}
