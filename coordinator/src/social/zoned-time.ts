// Wall-clock time in an IANA zone, from Intl alone (no tz library). Wall times that do not exist
// (spring-forward gap) or exist twice (fall-back overlap) resolve like Temporal's 'compatible'
// disambiguation: a skipped time moves forward by the gap, a repeated time takes the earlier instant.

export interface LocalDate {
  year: number;
  month: number;
  day: number;
}
export interface WallTime extends LocalDate {
  hour: number;
  minute: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let fmt = formatters.get(timeZone);
  if (!fmt) {
    fmt = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, fmt);
  }
  return fmt;
}

/**
 * The IANA name of the zone the client sent, spelled as IANA spells it, or undefined when it is no
 * zone. The client's own name is kept: ICU (Node 20's time-zone data) resolves Asia/Kolkata to
 * Asia/Calcutta and America/Atikokan to America/Coral_Harbour, names a client did not send.
 * Offsets like "+01:00" are not zones.
 */
export function canonicalTimeZone(name: string): string | undefined {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name)) return undefined;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
  const lower = name.toLowerCase();
  if (resolved.toLowerCase() === lower) return resolved;
  return icuNames().get(lower) ?? ianaSpelling(lower);
}

let byLowerCase: Map<string, string> | undefined;
function icuNames(): Map<string, string> {
  byLowerCase ??= new Map(Intl.supportedValuesOf('timeZone').map((z) => [z.toLowerCase(), z]));
  return byLowerCase;
}

// ICU lists only its primary names and has no API that spells a link (Asia/Kolkata, US/Eastern), so
// a link's spelling follows IANA's naming rule: each word capitalised. These are the words that
// break the rule in the tz database (a test checks every name against the host's copy of it).
const IRREGULAR_WORDS = new Map(
  [
    'CET',
    'CST',
    'CDT',
    'EET',
    'EST',
    'EDT',
    'GMT',
    'UTC',
    'UCT',
    'HST',
    'MET',
    'MST',
    'MDT',
    'PST',
    'PDT',
    'WET',
    'ACT',
    'LHI',
    'NSW',
    'GB',
    'NZ',
    'CHAT',
    'PRC',
    'ROC',
    'ROK',
    'US',
    'W',
    'SU',
    'IN',
    'au',
    'es',
    'of',
    'DeNoronha',
    'EasterIsland',
    'BajaNorte',
    'BajaSur',
    'ComodRivadavia',
    'McMurdo',
    'DumontDUrville',
  ].map((w) => [w.toLowerCase(), w]),
);

function ianaSpelling(lower: string): string {
  return lower.replace(/[a-z]+/g, (word) => IRREGULAR_WORDS.get(word) ?? word[0]!.toUpperCase() + word.slice(1));
}

/** The wall-clock fields of an instant in a zone. */
export function wallTimeAt(epochMs: number, timeZone: string): WallTime & { second: number } {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(epochMs))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  return { year: parts.year!, month: parts.month!, day: parts.day!, hour: parts.hour!, minute: parts.minute!, second: parts.second! };
}

/** The zone's UTC offset at an instant, in milliseconds (positive east of Greenwich). */
export function offsetAt(epochMs: number, timeZone: string): number {
  const w = wallTimeAt(epochMs, timeZone);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return asUtc - Math.floor(epochMs / 1000) * 1000;
}

/** The instant a wall-clock time names in a zone (see the disambiguation rule at the top). */
export function zonedToEpoch(t: WallTime, timeZone: string): number {
  const naive = Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute);
  // Offsets a day either side bracket any transition near this wall time.
  const before = offsetAt(naive - 86_400_000, timeZone);
  const after = offsetAt(naive + 86_400_000, timeZone);
  const valid = [naive - before, naive - after].filter((e) => offsetAt(e, timeZone) === naive - e);
  if (valid.length) return Math.min(...valid);
  // In the gap: read the wall time with the offset in force before it, which lands after the jump.
  return naive - before;
}

/** Day of week (0 = Sunday) of a calendar date. */
export const dayOfWeek = (d: LocalDate): number => new Date(Date.UTC(d.year, d.month - 1, d.day)).getUTCDay();

export function addDays(d: LocalDate, days: number): LocalDate {
  const t = new Date(Date.UTC(d.year, d.month - 1, d.day + days));
  return { year: t.getUTCFullYear(), month: t.getUTCMonth() + 1, day: t.getUTCDate() };
}

const pad = (n: number, w = 2) => String(Math.abs(n)).padStart(w, '0');

/** ISO 8601 with the zone's offset at that instant, e.g. 2026-03-08T03:30:00-04:00. */
export function isoInZone(epochMs: number, timeZone: string): string {
  const w = wallTimeAt(epochMs, timeZone);
  const offMin = Math.round(offsetAt(epochMs, timeZone) / 60_000);
  const sign = offMin < 0 ? '-' : '+';
  return `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}T${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}${sign}${pad(Math.trunc(offMin / 60))}:${pad(offMin % 60)}`;
}

const ISO_RE = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** Reads an ISO 8601 date-time. One without an offset is a wall time in `timeZone`.
 *  Undefined when it is not such a string or names an impossible date. */
export function parseDateTime(value: string, timeZone: string): number | undefined {
  const m = ISO_RE.exec(value.trim());
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const check = new Date(Date.UTC(year, month - 1, day));
  if (check.getUTCMonth() !== month - 1) return undefined; // 31 April and the like
  const ms = m[7] ? Math.round(Number(`0.${m[7]}`) * 1000) : 0;
  const zone = m[8];
  if (zone) {
    let offset = 0;
    if (zone.toUpperCase() !== 'Z') {
      const digits = zone.replace(':', '');
      offset = (Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5))) * 60_000 * (digits[0] === '-' ? -1 : 1);
    }
    return Date.UTC(year, month - 1, day, hour, minute, second, ms) - offset;
  }
  return zonedToEpoch({ year, month, day, hour, minute }, timeZone) + second * 1000 + ms;
}
