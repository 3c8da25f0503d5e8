import test from 'ava';
import { needing } from './helpers/requirements.js';
import { existsSync, readFileSync } from 'node:fs';
import { nextFreeSlots, type QueueSlot } from '../coordinator/src/social/slots.js';
import { canonicalTimeZone, isoInZone, parseDateTime, zonedToEpoch } from '../coordinator/src/social/zoned-time.js';

const at = (iso: string) => Date.parse(iso);
const slots = (timeZone: string, s: QueueSlot[], now: string, opts: { max?: number; taken?: string[]; count?: number } = {}) =>
  nextFreeSlots({
    slots: s,
    maxPostsPerSlot: opts.max ?? 1,
    timeZone,
    now: at(now),
    taken: (opts.taken ?? []).map(at),
    count: opts.count ?? 3,
  }).map((t) => new Date(t).toISOString());

const SUNDAY = 0;
const daily = (time: string): QueueSlot[] => [0, 1, 2, 3, 4, 5, 6].map((dayOfWeek) => ({ dayOfWeek, time }));

test('New York spring-forward: a 02:30 slot on 8 March 2026 does not exist and moves to 03:30 EDT', (t) => {
  t.deepEqual(slots('America/New_York', [{ dayOfWeek: SUNDAY, time: '02:30' }], '2026-03-07T12:00:00Z', { count: 2 }), [
    '2026-03-08T07:30:00.000Z', // 03:30 EDT
    '2026-03-15T06:30:00.000Z', // 02:30 EDT a week later
  ]);
});

test('New York: a daily 09:00 slot stays at 09:00 local across spring-forward, so UTC moves by an hour', (t) => {
  t.deepEqual(slots('America/New_York', daily('09:00'), '2026-03-07T00:00:00Z'), [
    '2026-03-07T14:00:00.000Z', // 09:00 EST
    '2026-03-08T13:00:00.000Z', // 09:00 EDT
    '2026-03-09T13:00:00.000Z',
  ]);
});

test('New York fall-back: 01:30 on 1 November 2026 happens twice and the first (EDT) is taken', (t) => {
  t.deepEqual(slots('America/New_York', [{ dayOfWeek: SUNDAY, time: '01:30' }], '2026-10-31T12:00:00Z', { count: 2 }), [
    '2026-11-01T05:30:00.000Z', // 01:30 EDT, not 06:30Z (01:30 EST)
    '2026-11-08T06:30:00.000Z', // 01:30 EST
  ]);
});

test('Berlin spring-forward: 02:30 on 29 March 2026 becomes 03:30 CEST; 09:00 slots follow local time', (t) => {
  t.deepEqual(slots('Europe/Berlin', [{ dayOfWeek: SUNDAY, time: '02:30' }], '2026-03-28T12:00:00Z', { count: 1 }), [
    '2026-03-29T01:30:00.000Z',
  ]);
  t.deepEqual(slots('Europe/Berlin', daily('09:00'), '2026-03-28T00:00:00Z', { count: 2 }), [
    '2026-03-28T08:00:00.000Z', // 09:00 CET
    '2026-03-29T07:00:00.000Z', // 09:00 CEST
  ]);
});

test('Berlin fall-back: 02:30 on 25 October 2026 happens twice; the CEST one counts', (t) => {
  t.deepEqual(slots('Europe/Berlin', [{ dayOfWeek: SUNDAY, time: '02:30' }], '2026-10-24T12:00:00Z', { count: 2 }), [
    '2026-10-25T00:30:00.000Z',
    '2026-11-01T01:30:00.000Z',
  ]);
  t.deepEqual(slots('Europe/Berlin', daily('09:00'), '2026-10-24T12:00:00Z', { count: 2 }), [
    '2026-10-25T08:00:00.000Z', // 09:00 CET
    '2026-10-26T08:00:00.000Z',
  ]);
});

test('a slot in the past today is skipped; the search starts from today in the zone, not in UTC', (t) => {
  // 23:30 UTC on Saturday is still Saturday 19:30 in New York: the Saturday 20:00 slot is next.
  t.deepEqual(slots('America/New_York', [{ dayOfWeek: 6, time: '20:00' }], '2026-06-13T23:30:00Z', { count: 1 }), [
    '2026-06-14T00:00:00.000Z',
  ]);
  t.deepEqual(slots('America/New_York', [{ dayOfWeek: 6, time: '19:00' }], '2026-06-13T23:30:00Z', { count: 1 }), [
    '2026-06-20T23:00:00.000Z',
  ]);
});

test('maxPostsPerSlot: a slot holding that many posts is full and the next one is offered', (t) => {
  const s = daily('09:00');
  t.deepEqual(slots('UTC', s, '2026-05-01T00:00:00Z', { max: 2, taken: ['2026-05-01T09:00:00Z'], count: 1 }), ['2026-05-01T09:00:00.000Z']);
  t.deepEqual(slots('UTC', s, '2026-05-01T00:00:00Z', { max: 2, taken: ['2026-05-01T09:00:00Z', '2026-05-01T09:00:00Z'], count: 1 }), [
    '2026-05-02T09:00:00.000Z',
  ]);
  // A post at another minute does not fill the slot.
  t.deepEqual(slots('UTC', s, '2026-05-01T00:00:00Z', { max: 1, taken: ['2026-05-01T09:05:00Z'], count: 1 }), ['2026-05-01T09:00:00.000Z']);
});

test('two slots that land on one instant (02:30 pushed onto 03:30) share one capacity and are listed once', (t) => {
  const s = [
    { dayOfWeek: SUNDAY, time: '02:30' },
    { dayOfWeek: SUNDAY, time: '03:30' },
  ];
  t.deepEqual(slots('America/New_York', s, '2026-03-07T12:00:00Z', { count: 2 }), ['2026-03-08T07:30:00.000Z', '2026-03-15T06:30:00.000Z']);
  t.deepEqual(slots('America/New_York', s, '2026-03-07T12:00:00Z', { count: 1, taken: ['2026-03-08T07:30:00Z'] }), [
    '2026-03-15T06:30:00.000Z',
  ]);
});

test('no slots, no answer', (t) => {
  t.deepEqual(slots('UTC', [], '2026-05-01T00:00:00Z'), []);
});

test('isoInZone writes the local time with the offset in force', (t) => {
  t.is(isoInZone(at('2026-03-08T07:30:00Z'), 'America/New_York'), '2026-03-08T03:30:00-04:00');
  t.is(isoInZone(at('2026-03-07T14:00:00Z'), 'America/New_York'), '2026-03-07T09:00:00-05:00');
  t.is(isoInZone(at('2026-03-29T01:30:00Z'), 'Europe/Berlin'), '2026-03-29T03:30:00+02:00');
  t.is(isoInZone(at('2026-01-01T00:00:00Z'), 'Asia/Kolkata'), '2026-01-01T05:30:00+05:30');
  t.is(isoInZone(at('2026-01-01T00:00:00Z'), 'UTC'), '2026-01-01T00:00:00+00:00');
});

test('parseDateTime: offsets are absolute; wall times are read in the zone with the same DST rules', (t) => {
  t.is(parseDateTime('2026-07-08T12:30:00Z', 'Europe/Berlin'), at('2026-07-08T12:30:00Z'));
  t.is(parseDateTime('2026-07-08T12:30:00+02:00', 'UTC'), at('2026-07-08T10:30:00Z'));
  t.is(parseDateTime('2026-07-08T12:30:00.250-0500', 'UTC'), at('2026-07-08T17:30:00.250Z'));
  t.is(parseDateTime('2026-03-08T02:30', 'America/New_York'), at('2026-03-08T07:30:00Z'));
  t.is(parseDateTime('2026-11-01T01:30:00', 'America/New_York'), at('2026-11-01T05:30:00Z'));
  for (const bad of ['2026-02-30T10:00:00Z', '2026-13-01T00:00Z', 'tomorrow', '2026-07-08', '2026-07-08T24:00Z', '']) {
    t.is(parseDateTime(bad, 'UTC'), undefined, bad);
  }
});

test('zonedToEpoch outside transitions is the plain offset', (t) => {
  t.is(zonedToEpoch({ year: 2026, month: 7, day: 1, hour: 12, minute: 0 }, 'America/Los_Angeles'), at('2026-07-01T19:00:00Z'));
  t.is(zonedToEpoch({ year: 2026, month: 12, day: 31, hour: 23, minute: 59 }, 'Australia/Sydney'), at('2026-12-31T12:59:00Z'));
});

test('canonicalTimeZone accepts IANA names in any case and refuses the rest', (t) => {
  t.is(canonicalTimeZone('America/New_York'), 'America/New_York');
  t.is(canonicalTimeZone('europe/berlin'), 'Europe/Berlin');
  t.is(canonicalTimeZone('UTC'), 'UTC');
  t.is(canonicalTimeZone('etc/utc'), 'Etc/UTC');
  for (const bad of ['Mars/Olympus', '+01:00', 'GMT+1 ', '', '../etc', 'Asia/Kolkata\u0000']) t.is(canonicalTimeZone(bad), undefined, bad);
});

test('canonicalTimeZone answers the zone the client sent, never the older alias ICU resolves it to', (t) => {
  // ICU's own names for these are Asia/Calcutta, America/Coral_Harbour and Europe/Kiev.
  t.is(canonicalTimeZone('Asia/Kolkata'), 'Asia/Kolkata');
  t.is(canonicalTimeZone('asia/kolkata'), 'Asia/Kolkata');
  t.is(canonicalTimeZone('ASIA/KOLKATA'), 'Asia/Kolkata');
  t.is(canonicalTimeZone('America/Atikokan'), 'America/Atikokan');
  t.is(canonicalTimeZone('america/atikokan'), 'America/Atikokan');
  t.is(canonicalTimeZone('Europe/Kyiv'), 'Europe/Kyiv');
  t.is(canonicalTimeZone('asia/ho_chi_minh'), 'Asia/Ho_Chi_Minh');
  // A client that sends the old name keeps it too: it names the same zone.
  t.is(canonicalTimeZone('asia/calcutta'), 'Asia/Calcutta');
  t.is(canonicalTimeZone('us/eastern'), 'US/Eastern');
  t.is(canonicalTimeZone('america/port-au-prince'), 'America/Port-au-Prince');
});

const TZDATA = '/usr/share/zoneinfo/tzdata.zi';
needing({ optional: { [`${TZDATA} (Debian's tzdata package)`]: existsSync(TZDATA) } })(
  'canonicalTimeZone spells every name of the host tz database as IANA does, whatever case it is sent in',
  (t) => {
    const file = TZDATA;
    const names = readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line) => {
        const [kind, a, b] = line.split(' ');
        return kind === 'Z' ? [a!] : kind === 'L' ? [b!] : [];
      });
    const known = names.filter((z) => z !== 'Factory');
    t.true(known.length > 500, `${known.length} names`);
    const wrong = known.flatMap((z) =>
      [z, z.toLowerCase(), z.toUpperCase()]
        .filter((sent) => canonicalTimeZone(sent) !== z)
        .map((sent) => `${sent} -> ${canonicalTimeZone(sent)}`),
    );
    t.deepEqual(wrong, []);
  },
);
