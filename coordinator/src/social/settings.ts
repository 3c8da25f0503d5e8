import { z } from 'zod';
import type { Db, Queryable } from '../db/db.js';
import { NETWORKS, type Network } from './networks.js';
import { canonicalTimeZone } from './zoned-time.js';
import type { QueueSlot } from './slots.js';

export interface SocialSettings {
  isEnabled: boolean;
  approveApiPosts: boolean;
  defaultTimezone: string;
  defaultPlatforms: Network[];
  queueSlots: QueueSlot[];
  maxPostsPerSlot: number;
  maxShortsOfSameVideo: number;
  maxShortsPerWeek: number;
  minimumVideoDurationSeconds: number;
  processOnlyPlaylistId: string | null;
}

/** What an organization that never saved settings gets (contract 2.10: same fields, default shape).
 *  Enabled by default: the plan is the gate, and a fresh organization can publish once connected. */
export const DEFAULT_SETTINGS: Readonly<SocialSettings> = Object.freeze({
  isEnabled: true,
  approveApiPosts: false,
  defaultTimezone: 'UTC',
  defaultPlatforms: [],
  // A common posting rhythm, so next-slot and next_slot publishing work before anything is saved.
  queueSlots: [0, 1, 2, 3, 4, 5, 6].flatMap((dayOfWeek) => [
    { dayOfWeek, time: '09:00' },
    { dayOfWeek, time: '17:00' },
  ]),
  maxPostsPerSlot: 1,
  maxShortsOfSameVideo: 1,
  maxShortsPerWeek: 7,
  minimumVideoDurationSeconds: 0,
  processOnlyPlaylistId: null,
});

const timeZone = z.string().transform((v, ctx) => {
  const zone = canonicalTimeZone(v);
  if (!zone) {
    ctx.addIssue({ code: 'custom', message: `"${v}" is not an IANA time zone (for example Europe/Berlin)` });
    return z.NEVER;
  }
  return zone;
});

export const networkSchema = z.enum(NETWORKS, {
  error: (i) =>
    i.input === undefined
      ? `a network is required (one of ${NETWORKS.join(', ')})`
      : `"${String(i.input)}" is not a network; use one of ${NETWORKS.join(', ')}`,
});

const slotSchema = z.object({
  dayOfWeek: z
    .number({ error: 'dayOfWeek must be an integer from 0 (Sunday) to 6 (Saturday)' })
    .int('dayOfWeek must be an integer from 0 (Sunday) to 6 (Saturday)')
    .min(0, 'dayOfWeek must be an integer from 0 (Sunday) to 6 (Saturday)')
    .max(6, 'dayOfWeek must be an integer from 0 (Sunday) to 6 (Saturday)'),
  time: z
    .string({ error: 'time must be a string HH:mm (24 h)' })
    .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'time must be HH:mm in 24-hour form, 00:00 to 23:59'),
});

const count = (name: string) =>
  z
    .number({ error: `${name} must be a non-negative integer` })
    .int(`${name} must be a non-negative integer`)
    .min(0, `${name} must be a non-negative integer`);

/** PUT body: any subset of the fields, checked; unknown keys are refused so typos do not pass silently. */
export const settingsPatchSchema = z.strictObject(
  {
    organizationId: z.string().nullish(),
    isEnabled: z.boolean({ error: 'isEnabled must be a boolean' }).optional(),
    approveApiPosts: z.boolean({ error: 'approveApiPosts must be a boolean' }).optional(),
    defaultTimezone: timeZone.optional(),
    defaultPlatforms: z
      .array(networkSchema, { error: 'defaultPlatforms must be an array of network keys' })
      .transform((a) => [...new Set(a)])
      .optional(),
    queueSlots: z
      .array(slotSchema, { error: 'queueSlots must be an array of {dayOfWeek, time}' })
      .max(500, 'queueSlots holds at most 500 slots')
      .transform(dedupeSlots)
      .optional(),
    maxPostsPerSlot: z
      .number({ error: 'maxPostsPerSlot must be an integer from 1 to 100' })
      .int('maxPostsPerSlot must be an integer from 1 to 100')
      .min(1, 'maxPostsPerSlot must be an integer from 1 to 100')
      .max(100, 'maxPostsPerSlot must be an integer from 1 to 100')
      .optional(),
    maxShortsOfSameVideo: count('maxShortsOfSameVideo').optional(),
    maxShortsPerWeek: count('maxShortsPerWeek').optional(),
    minimumVideoDurationSeconds: z
      .number({ error: 'minimumVideoDurationSeconds must be a non-negative number' })
      .min(0, 'minimumVideoDurationSeconds must be a non-negative number')
      .optional(),
    processOnlyPlaylistId: z.string({ error: 'processOnlyPlaylistId must be a string or null' }).max(200).nullable().optional(),
  },
  { error: (i) => (i.code === 'unrecognized_keys' ? `Unknown settings field(s): ${i.keys.join(', ')}` : undefined) },
);

function dedupeSlots(slots: QueueSlot[]): QueueSlot[] {
  const keyed = new Map(slots.map((s) => [`${s.dayOfWeek} ${s.time}`, { dayOfWeek: s.dayOfWeek, time: s.time }]));
  return [...keyed.values()].sort((a, b) => a.dayOfWeek - b.dayOfWeek || a.time.localeCompare(b.time));
}

const COLUMNS = `is_enabled AS "isEnabled", approve_api_posts AS "approveApiPosts", default_timezone AS "defaultTimezone",
  default_platforms AS "defaultPlatforms", queue_slots AS "queueSlots", max_posts_per_slot AS "maxPostsPerSlot",
  max_shorts_of_same_video AS "maxShortsOfSameVideo", max_shorts_per_week AS "maxShortsPerWeek",
  minimum_video_duration_seconds AS "minimumVideoDurationSeconds", process_only_playlist_id AS "processOnlyPlaylistId"`;

export async function getSettings(db: Queryable, organizationId: string): Promise<SocialSettings> {
  const res = await db.query<SocialSettings>(`SELECT ${COLUMNS} FROM social_settings WHERE organization_id = $1`, [organizationId]);
  return res.rows[0] ?? { ...DEFAULT_SETTINGS };
}

export type SettingsPatch = Partial<SocialSettings>;

/** Merges a validated patch into the saved (or default) settings and stores the whole row; the
 *  lock keeps two concurrent partial updates from undoing each other. */
export async function updateSettings(database: Db, organizationId: string, patch: SettingsPatch): Promise<SocialSettings> {
  return database.tx(async (db) => {
    await db.query(`SELECT pg_advisory_xact_lock(hashtext('social-settings:' || $1))`, [organizationId]);
    const next: SocialSettings = { ...(await getSettings(db, organizationId)) };
    const take = <K extends keyof SocialSettings>(key: K) => {
      const value = patch[key];
      if (value !== undefined) next[key] = value;
    };
    for (const key of Object.keys(DEFAULT_SETTINGS) as Array<keyof SocialSettings>) take(key);
    const res = await db.query<SocialSettings>(
      `INSERT INTO social_settings (organization_id, is_enabled, approve_api_posts, default_timezone, default_platforms, queue_slots,
         max_posts_per_slot, max_shorts_of_same_video, max_shorts_per_week, minimum_video_duration_seconds, process_only_playlist_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT (organization_id) DO UPDATE SET
         is_enabled = EXCLUDED.is_enabled, approve_api_posts = EXCLUDED.approve_api_posts, default_timezone = EXCLUDED.default_timezone,
         default_platforms = EXCLUDED.default_platforms, queue_slots = EXCLUDED.queue_slots, max_posts_per_slot = EXCLUDED.max_posts_per_slot,
         max_shorts_of_same_video = EXCLUDED.max_shorts_of_same_video, max_shorts_per_week = EXCLUDED.max_shorts_per_week,
         minimum_video_duration_seconds = EXCLUDED.minimum_video_duration_seconds, process_only_playlist_id = EXCLUDED.process_only_playlist_id,
         updated_at = now()
       RETURNING ${COLUMNS}`,
      [
        organizationId,
        next.isEnabled,
        next.approveApiPosts,
        next.defaultTimezone,
        next.defaultPlatforms,
        JSON.stringify(next.queueSlots),
        next.maxPostsPerSlot,
        next.maxShortsOfSameVideo,
        next.maxShortsPerWeek,
        next.minimumVideoDurationSeconds,
        next.processOnlyPlaylistId,
      ],
    );
    return res.rows[0];
  });
}
