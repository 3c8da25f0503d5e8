import test from 'ava';
import { z } from 'zod';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { FakeAgent } from './helpers/fake-agent.js';
import { storeFile } from '../coordinator/src/files/store-file.js';
import { createLoginLink } from '../coordinator/src/tenancy/sessions.js';
import { createUser, issueApiKey } from '../coordinator/src/tenancy/tenancy.js';
import { renderOptionsSchema } from '@shorts/common/render/options';
import type { Parsed } from './helpers/parsed.js';

// Generated from /openapi.json: every route and method, fed wrong types, missing and extra fields,
// huge and deeply nested bodies, unicode and control characters in every string (top level, inside
// arrays and nested objects), other organizations' ids in paths, bodies and queries, and
// case-changed paths; then the routes /openapi.json does not list (tus uploads, signed /objects/,
// the studio's files). Every answer must be a success or a 4xx JSON error ({error, message}), never
// a 5xx. A second coordinator with real, low rate limits checks that no bad input, path spelling or
// credential gets a caller past its limit. Requests are bounded (a few thousand, eight at a time).
let cluster: TestCluster;
let limited: TestCluster;
/** Only for the forged-address sweep: its sign-in flood empties 127.0.0.1's bucket, which the other tests' sign-ins need. */
let forwarded: TestCluster;

type Schema = Record<string, Parsed>;
interface Op {
  method: string;
  path: string;
  body?: Schema;
  query: Array<{ name: string }>;
  public: boolean;
}
interface Probe {
  method: string;
  url: string;
  body?: string;
  key?: string;
  headers?: Record<string, string>;
  why: string;
  expectNot2xx?: boolean;
  /** The exact refusal expected (another organization's id): 403 or 404 as the contract says. */
  expectStatus?: number;
}

const NASTY = [
  '\u0000',
  'a\u0007b\u001b[31m\u202eevil',
  '💥🧨'.repeat(500),
  '\ud800 lone surrogate',
  '../../../etc/passwd',
  ' ',
  'Ω'.repeat(20_000),
  '%00%ZZ%',
  '<script>alert(1)</script>',
  "'; DROP TABLE jobs; --",
];
const QUERY_VALUES = [
  '\u0000',
  '-1',
  '1e309',
  'x'.repeat(5000),
  '%E0%A4%A',
  '💥',
  '[]',
  'true',
  // Numbers a schema may take for integers but the database cannot hold (issue 36: offset answered 500).
  '9223372036854775807',
  '-9223372036854775809',
  '99999999999999999999999',
  '1e18',
  '2147483648',
  '0.5',
  '0x10',
];
/** Headers every route reads or could read, each sent with hostile values (fetch refuses control
 *  characters in a header; Node's parser would answer 400 to them before any route). */
const HOSTILE_HEADERS = [
  'authorization',
  'x-api-key',
  'cookie',
  'x-csrf-token',
  'content-type',
  'accept',
  'accept-encoding',
  'origin',
  'sec-fetch-site',
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
  'range',
  'if-none-match',
  'if-modified-since',
  'tus-resumable',
  'upload-length',
  'upload-offset',
  'upload-metadata',
  'upload-defer-length',
];
const HEADER_VALUES = [
  '9223372036854775807',
  '-1',
  'bytes=99999999999999999999-',
  'x'.repeat(6000),
  '\u00ff\u00e9 latin-1 \u00a0bytes',
  'Bearer ',
  '%00%ZZ%',
  'a, b; c="d\\", =',
  'application/json; charset=utf-99',
  '1e309',
];
const PER_MINUTE = 5;

function resolveRef(root: Schema, s: Schema | undefined): Schema {
  if (s && typeof s.$ref === 'string' && s.$ref.startsWith('#/')) {
    return (
      s.$ref
        .slice(2)
        .split('/')
        .reduce((o: Parsed, k: string) => o?.[k], root) ?? {}
    );
  }
  return s ?? {};
}

const typeOf = (s: Schema): string | undefined => (Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type);

/** The option of an anyOf/oneOf that can hold `want` ('object', 'array'), or the first non-null one. */
function pick(root: Schema, s: Schema, want?: string): Schema {
  s = resolveRef(root, s);
  const options = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (!Array.isArray(options)) return s;
  const real = options.map((o) => resolveRef(root, o)).filter((o) => o.type !== 'null');
  return real.find((o) => !want || typeOf(o) === want) ?? real[0] ?? {};
}

/** The least value a schema accepts, so a mutation of one field gets past the others. */
function minimal(s: Schema, depth = 0): unknown {
  if (depth > 6) return null;
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  const options = s.anyOf ?? s.oneOf;
  if (Array.isArray(options)) return minimal(options.find((o: Schema) => o.type !== 'null') ?? options[0], depth + 1);
  switch (typeOf(s)) {
    case 'string':
      return 'x'.repeat(Math.max(1, s.minLength ?? 1));
    case 'number':
    case 'integer':
      return s.minimum ?? 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const name of s.required ?? []) out[name] = minimal(s.properties?.[name] ?? {}, depth + 1);
      return out;
    }
    default:
      return 'x';
  }
}

function wrongValues(s: Schema): unknown[] {
  switch (typeOf(s)) {
    case 'string':
      return [123, { a: 1 }, ['x'], false];
    case 'number':
    case 'integer':
      return ['12', [], true, -1e308, 0.5];
    case 'boolean':
      return ['true', 1, null];
    case 'array':
      return ['a', { 0: 'a' }, [null, { deep: [1] }]];
    case 'object':
      return ['a', [], 1, null];
    default:
      return [123, 'x', null, [], {}];
  }
}

type Path = Array<string | number>;

/** Every place below the top level where a scalar sits: through objects, records and array items. */
function leafPaths(root: Schema, schema: Schema, at: Path = [], depth = 0): Path[] {
  if (depth > 5) return [];
  const obj = pick(root, schema, 'object');
  const arr = pick(root, schema, 'array');
  const out: Path[] = [];
  if (typeOf(obj) === 'object') {
    const props = Object.keys(obj.properties ?? {});
    for (const name of props) out.push(...leafPaths(root, obj.properties[name], [...at, name], depth + 1));
    if (!props.length && obj.additionalProperties !== false) out.push([...at, 'k'], [...at, 'k', 0], [...at, 'k', 'deeper']);
  }
  if (typeOf(arr) === 'array') out.push(...leafPaths(root, arr.items ?? {}, [...at, 0], depth + 1));
  if (!out.length && at.length) out.push(at);
  return out;
}

/** The least value of `schema` with `value` placed at `at` (creating the arrays and objects on the way). */
function withValueAt(root: Schema, schema: Schema, at: Path, value: unknown): unknown {
  if (!at.length) return value;
  const [head, ...rest] = at;
  if (typeof head === 'number') {
    const s = pick(root, schema, 'array');
    return [withValueAt(root, s.items ?? {}, rest, value)];
  }
  const s = pick(root, schema, 'object');
  const base = typeOf(s) === 'object' ? (minimal(s) as Record<string, unknown>) : {};
  const child = s.properties?.[head] ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : {});
  return { ...base, [head]: withValueAt(root, child, rest, value) };
}

const nest = (depth: number) => {
  let v: unknown = 'bottom';
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
};

/** Half the letters upper-cased: a path the router must not treat as the real one. */
const caseChanged = (url: string) => {
  const [p, q] = url.split('?');
  return p!.replace(/[a-z]/g, (c, i: number) => (i % 2 ? c.toUpperCase() : c)) + (q === undefined ? '' : `?${q}`);
};

/** Sends every probe (eight at a time) and returns what broke the rules, with a count by status. */
async function sweep(base: string, probes: Probe[], extraCheck?: (p: Probe, res: Response) => string | undefined) {
  const failures: string[] = [];
  const statuses = new Map<number, number>();
  let next = 0;
  const worker = async () => {
    while (next < probes.length) {
      const p = probes[next++]!;
      const headers: Record<string, string> = { 'content-type': 'application/json', ...p.headers };
      if (p.key) headers.authorization = `Bearer ${p.key}`;
      const bodyless = p.method === 'GET' || p.method === 'HEAD';
      let res: Response;
      try {
        res = await fetch(base + p.url, { method: p.method, headers, body: bodyless ? undefined : p.body, redirect: 'manual' });
      } catch (err) {
        failures.push(`${p.method} ${p.url.slice(0, 80)} (${p.why}): no answer (${(err as Error).message})`);
        continue;
      }
      const text = await res.text();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const where = `${p.method} ${p.url.slice(0, 80)} (${p.why}) -> ${res.status}`;
      // A checkout whose studio was never built (npm test and npm start build it) says so with a 503.
      const unbuiltStudio = res.status === 503 && p.url.startsWith('/studio/') && text.includes('npm run build:studio');
      if (res.status >= 500 && !unbuiltStudio) {
        failures.push(`${where}: ${text.slice(0, 200)}`);
        continue;
      }
      if (p.expectNot2xx && res.status < 300) failures.push(`${where}: expected a refusal`);
      if (p.expectStatus !== undefined && res.status !== p.expectStatus)
        failures.push(`${where}: expected ${p.expectStatus}: ${text.slice(0, 160)}`);
      if (res.status >= 400 && p.method !== 'HEAD') {
        let body: { error?: unknown; message?: unknown } | undefined;
        try {
          body = JSON.parse(text) as typeof body;
        } catch {
          /* checked below */
        }
        if (typeof body?.error !== 'string' || typeof body?.message !== 'string')
          failures.push(`${where}: not a JSON error: ${text.slice(0, 120)}`);
      }
      const extra = extraCheck?.(p, res);
      if (extra) failures.push(`${where}: ${extra}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return { failures, statuses };
}

const b64 = (s: string) => Buffer.from(s).toString('base64');
const WORDS = [{ text: 'hello', start: 0.5, end: 0.9 }];
const SOCIAL = '/api/organizations/social-posts';
const TUS = '/api/uploads/tus';

/** An organization with one of everything the API can name by id, and credentials to act for it. */
async function tenant(c: TestCluster) {
  const o = await c.org({ plan: 'business', credits: 50 });
  const orgId = o.org.id;
  const jobId = await insertCompletedJob(c.app, { organizationId: orgId, words: WORDS, shorts: [{ startTime: 0, endTime: 2 }] });
  const sourceFileId = (await c.app.db.one<{ id: string }>('SELECT id FROM files WHERE job_id = $1', [jobId]))!.id;
  const image = await storeFile(c.app, { organizationId: orgId, name: 'f.png', source: Buffer.alloc(100, 1), type: 'image' });
  const must = async (method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
    const r = await c.api(method, path, { key: o.key, body, headers });
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r;
  };
  const renderId = (await must('POST', '/api/render', { id: jobId, target: 0 })).body.renderId as string;
  const brandingId = (await must('POST', '/api/organizations/brandings', { name: 'b' })).body.id as string;
  const probeId = (await must('POST', '/api/probes', { url: 'https://example.com/v.mp4' })).body.id as string;
  const connect = await must('POST', `${SOCIAL}/connect`, { platform: 'linkedin' });
  if ((await fetch(connect.body.access_url)).status !== 200) throw new Error('consent page');
  const accountId = (await must('GET', `${SOCIAL}/profile`)).body.accountLinks[0].accountId as string;
  const scheduledAt = new Date(Date.now() + 2 * 86_400_000).toISOString();
  const post = (
    await must('POST', `${SOCIAL}/publish`, {
      postType: 'text',
      caption: 'ours',
      platforms: ['linkedin'],
      publishMode: 'schedule',
      scheduledAt,
    })
  ).body.socialPost;
  const upload = await fetch(c.app.httpUrl + TUS, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${o.key}`,
      'tus-resumable': '1.0.0',
      'upload-length': '1000',
      'upload-metadata': `filename ${b64('v.mp4')}`,
    },
  });
  if (upload.status !== 201) throw new Error(`tus create: ${upload.status} ${await upload.text()}`);
  const uploadId = ((await upload.json()) as { id: string }).id;
  // A studio user of this organization, signed in by a one-time link (no password hashing).
  const user = await createUser(c.app.db, {
    email: `u${Math.random().toString(36).slice(2)}@sweep.test`,
    organizationId: orgId,
    role: 'owner',
  });
  const signIn = await fetch(c.app.httpUrl + '/api/session', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token: await createLoginLink(c.app.db, user.id) }),
  });
  if (signIn.status !== 200) throw new Error(`sign-in: ${signIn.status}`);
  const session = {
    cookie: signIn.headers
      .getSetCookie()
      .map((s) => s.split(';')[0])
      .join('; '),
    'x-csrf-token': ((await signIn.json()) as { csrfToken: string }).csrfToken,
  };
  const token = await c.app.signer.issue(user.id);
  return {
    ...o,
    orgId,
    jobId,
    sourceFileId,
    imageId: image.id,
    imageKey: image.objectKey,
    renderId,
    brandingId,
    probeId,
    accountId,
    postId: post.id as string,
    providerJobId: post.providerJobId as string,
    uploadId,
    userId: user.id,
    session,
    token,
  };
}
type Tenant = Awaited<ReturnType<typeof tenant>>;

/** Every row of an organization in every table that carries organization_id, and the organization itself. */
async function snapshot(c: TestCluster, orgId: string): Promise<unknown> {
  const tables = await c.app.db.query<{ t: string }>(
    `SELECT table_name AS t FROM information_schema.columns WHERE column_name = 'organization_id' AND table_schema = current_schema() ORDER BY 1`,
  );
  const out: Record<string, unknown> = { organization: await c.app.db.query('SELECT * FROM organizations WHERE id = $1', [orgId]) };
  for (const { t } of tables) out[t] = await c.app.db.query(`SELECT * FROM "${t}" WHERE organization_id = $1 ORDER BY 1`, [orgId]);
  return JSON.parse(JSON.stringify(out));
}

test.before(async () => {
  [cluster, limited, forwarded] = await Promise.all([
    startCluster('abuse_sweep', {
      rateLimitFilesPerMinute: '100000,100000,100000,100000',
      rateLimitSocialPerMinute: 100000,
      rateLimitJobsPerMinute: '100000,100000,100000,100000',
      renderActiveLimit: 1000,
    }),
    startCluster('abuse_sweep_limits', {
      rateLimitFilesPerMinute: Array(4).fill(PER_MINUTE).join(','),
      rateLimitSocialPerMinute: PER_MINUTE,
    }),
    startCluster('abuse_sweep_forwarded'),
  ]);
});
test.after.always(() => Promise.all([cluster?.close(), limited?.close(), forwarded?.close()]));

test('every route and method answers hostile input with a success or a 4xx JSON error, never a 5xx', async (t) => {
  const mine = await cluster.org({ plan: 'business', credits: 50 });
  const theirs = await cluster.org({ plan: 'business', credits: 50 });
  const ids = async (o: typeof mine) => {
    const jobId = await insertCompletedJob(cluster.app, { organizationId: o.org.id, words: WORDS, shorts: [{ startTime: 0, endTime: 2 }] });
    const file = await storeFile(cluster.app, { organizationId: o.org.id, name: 'f.bin', source: Buffer.alloc(100, 1), type: 'image' });
    const render = (await cluster.api('POST', '/api/render', { key: o.key, body: { id: jobId, target: 0 } })).body.renderId as string;
    const branding = (await cluster.api('POST', '/api/organizations/brandings', { key: o.key, body: { name: 'b' } })).body.id as string;
    const probe = (await cluster.api('POST', '/api/probes', { key: o.key, body: { url: 'https://example.com/v.mp4' } })).body.id as string;
    return { jobId, fileId: file.id, renderId: render, brandingId: branding, probeId: probe, fileKey: file.objectKey };
  };
  const my = await ids(mine);
  const their = await ids(theirs);

  const doc = (await cluster.api('GET', '/openapi.json')).body;
  // `options` of renders and brand presets is an open record on the wire; its real shape goes deeper.
  const optionsSchema = z.toJSONSchema(renderOptionsSchema, { io: 'input', unrepresentable: 'any' }) as Schema;
  const ops: Op[] = [];
  for (const [p, methods] of Object.entries(doc.paths as Record<string, Record<string, Schema>>)) {
    for (const [method, op] of Object.entries(methods)) {
      let body = op.requestBody?.content?.['application/json']?.schema as Schema | undefined;
      if (body && /^\/api\/(render|organizations\/brandings)/.test(p))
        body = { ...body, properties: { ...body.properties, options: optionsSchema } };
      ops.push({
        method: method.toUpperCase(),
        path: p,
        body: body ? resolveRef(doc, body) : undefined,
        query: (op.parameters ?? []).filter((x: Schema) => x.in === 'query'),
        public: !op.security,
      });
    }
  }
  t.true(ops.length >= 25, `${ops.length} operations in /openapi.json`);

  const idFor = (p: string, param: string, set: typeof my) => {
    if (param === 'jobId') return set.jobId;
    if (param === 'renderId') return set.renderId;
    if (param === 'fileId') return set.fileId;
    if (p.startsWith('/api/probes')) return set.probeId;
    return set.brandingId;
  };
  const fill = (p: string, set: typeof my | string) =>
    p.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(typeof set === 'string' ? set : idFor(p, name, set)));

  const probes: Probe[] = [];
  let nestedProbes = 0;
  for (const op of ops) {
    const url = fill(op.path, my);
    const base = op.body ? (minimal(op.body) as Record<string, unknown>) : undefined;
    const send = (why: string, body: unknown, extra: Partial<Probe> = {}) =>
      probes.push({ method: op.method, url, body: body === undefined ? undefined : JSON.stringify(body), key: mine.key, why, ...extra });

    send('as documented', base);
    send('no credentials', base, { key: undefined });
    if (op.body) {
      const props = (op.body.properties ?? {}) as Record<string, Schema>;
      for (const whole of [{}, null, [], 'text', 42, true]) send(`body ${JSON.stringify(whole)}`, whole);
      send('extra and prototype keys', undefined, {
        body: JSON.stringify(base).replace(/^\{/, '{"__proto__":{"isAdmin":true},"constructor":{"prototype":{"x":1}},"extra":1,'),
      });
      send('not JSON', undefined, { body: '{"unterminated": ' });
      send('JSON sent as text/plain', base, { headers: { 'content-type': 'text/plain' } });
      send('2 MB string', { ...base, [Object.keys(props)[0] ?? 'x']: 'A'.repeat(2_000_000) });
      send('deep nesting in a field', { ...base, [Object.keys(props)[0] ?? 'x']: nest(2000) });
      send('very deep raw nesting', undefined, { body: '['.repeat(200_000) + ']'.repeat(200_000) });
      for (const [name, schema] of Object.entries(props)) {
        const s = resolveRef(doc, schema);
        const rest = { ...base };
        delete rest[name];
        send(`missing ${name}`, rest);
        for (const wrong of wrongValues(s)) send(`${name} = ${JSON.stringify(wrong)}`, { ...base, [name]: wrong });
        for (const nasty of NASTY) send(`${name} nasty string`, { ...base, [name]: nasty });
        // Inside arrays and nested objects, at every depth the schema names (and in open records).
        for (const at of leafPaths(doc, s, [name])) {
          for (const nasty of NASTY.slice(0, 5)) {
            send(`${at.join('.')} nasty`, withValueAt(doc, op.body, at, nasty));
            nestedProbes++;
          }
          send(`${at.join('.')} wrong type`, withValueAt(doc, op.body, at, { [NASTY[1]!]: [NASTY[0]] }));
        }
        if (typeOf(pick(doc, s, 'array')) === 'array') send(`${name} array of nasty strings`, { ...base, [name]: NASTY.slice(0, 6) });
        if (typeOf(pick(doc, s, 'object')) === 'object')
          send(`${name} nasty keys`, { ...base, [name]: Object.fromEntries(NASTY.slice(0, 5).map((k) => [k.slice(0, 300), k])) });
      }
    }
    for (const q of op.query) {
      for (const v of QUERY_VALUES)
        probes.push({ method: op.method, url: `${url}?${q.name}=${encodeURIComponent(v)}`, key: mine.key, why: `query ${q.name}` });
      probes.push({ method: op.method, url: `${url}?${q.name}=a&${q.name}=b`, key: mine.key, why: `query ${q.name} repeated` });
      probes.push({
        method: op.method,
        url: `${url}?${q.name}[deep][er]=${encodeURIComponent(NASTY[1]!)}`,
        key: mine.key,
        why: `query ${q.name} bracketed`,
      });
    }
    // Every header alone (each with one of the values, in turn), then all of them at once.
    HOSTILE_HEADERS.forEach((name, i) => {
      const value = HEADER_VALUES[(i + probes.length) % HEADER_VALUES.length]!;
      const credentialHeader = name === 'authorization' || name === 'x-api-key' || name === 'cookie';
      probes.push({
        method: op.method,
        url,
        body: base && JSON.stringify(base),
        key: name === 'authorization' ? undefined : mine.key,
        headers: { [name]: value },
        why: `header ${name}${credentialHeader ? ' (credential)' : ''}`,
      });
    });
    probes.push({
      method: op.method,
      url,
      body: base && JSON.stringify(base),
      key: mine.key,
      headers: Object.fromEntries(
        HOSTILE_HEADERS.filter((h) => h !== 'authorization').map((h, i) => [h, HEADER_VALUES[i % HEADER_VALUES.length]!]),
      ),
      why: 'every header hostile at once',
    });
    if (/\{\w+\}/.test(op.path)) {
      probes.push({
        method: op.method,
        url: fill(op.path, their),
        key: mine.key,
        why: "another organization's id",
        body: base && JSON.stringify(base),
        expectNot2xx: true,
      });
      for (const garbage of ['%00', '..', 'x'.repeat(3000), 'ΩΩ', '1 OR 1=1', '00000000-0000-0000-0000-000000000000']) {
        probes.push({
          method: op.method,
          url: fill(op.path, garbage),
          key: mine.key,
          why: `id ${garbage.slice(0, 10)}`,
          body: base && JSON.stringify(base),
        });
      }
    }
    // Case-changed: never a route, so never a success (and never a way around a rate limit).
    probes.push({
      method: op.method,
      url: caseChanged(url),
      key: mine.key,
      why: 'case-changed path',
      body: base && JSON.stringify(base),
      expectNot2xx: true,
    });
    probes.push({ method: 'PATCH', url, key: mine.key, why: 'undocumented method', expectNot2xx: true });
  }
  t.log(`${probes.length} requests over ${ops.length} operations (${nestedProbes} with a nasty string below the top level)`);
  t.true(nestedProbes > 300, 'arrays and nested objects are reached');
  t.true(probes.length < 8000, 'bounded');

  const limitedRoute = (url: string) => /^\/api\/(uploads|organizations\/social-posts)(\/|\?|$)/.test(url);
  const { failures, statuses } = await sweep(cluster.app.httpUrl, probes, (p, res) =>
    res.status < 300 && p.key === mine.key && limitedRoute(p.url) && !res.headers.get('ratelimit-limit')
      ? 'a limited route answered without its rate limit'
      : undefined,
  );
  t.log('answers by status', Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])));
  // The sweep reached past authentication and validation, not only to the first refusal.
  t.true((statuses.get(200) ?? 0) + (statuses.get(201) ?? 0) > 50, 'many successes');
  t.true((statuses.get(400) ?? 0) > 300, 'many validation refusals');
  t.deepEqual(failures, [], failures.slice(0, 40).join('\n'));

  // Nothing of the other organization was touched.
  t.truthy(await cluster.app.store.stat(their.fileKey));
  for (const [p, id] of [
    ['/api/jobs', their.jobId],
    ['/api/render', their.renderId],
    ['/api/uploads/files', their.fileId],
    ['/api/probes', their.probeId],
  ] as const) {
    t.is((await cluster.api('GET', `${p}/${id}`, { key: theirs.key })).status, 200, `${p} of the other organization still there`);
  }
  const brandings = (await cluster.api('GET', '/api/organizations/brandings', { key: theirs.key })).body;
  t.is((Array.isArray(brandings) ? brandings : brandings.brandings).length, 1);
});

test("another organization's ids in bodies, queries, nested fields and tus uploads are refused (403/404) and touch nothing of it", async (t) => {
  const [me, them] = await Promise.all([tenant(cluster), tenant(cluster)]);
  const before = await snapshot(cluster, them.orgId);
  const theirObjects = [them.imageKey];

  // Each case is a request that succeeds with my own ids (`control`), sent again with one field
  // naming the other organization's resource. Statuses as the contract has them: an object of
  // another organization is missing (404), an organizationId a key or user may not act for is 403;
  // a watermark fileAppId that names no image of the organization is a validation error (400).
  interface Case {
    why: string;
    method: string;
    path: (x: Tenant) => string;
    body?: (x: Tenant) => Record<string, unknown>;
    refusal: number;
    message?: RegExp;
    control: number;
    destructive?: boolean;
    keyControl?: number;
  }
  const render = (extra: (x: Tenant) => Record<string, unknown>) => (x: Tenant) => ({ id: me.jobId, target: 0, ...extra(x) });
  const cases: Case[] = [
    { why: 'render id', method: 'POST', path: () => '/api/render', body: (x) => ({ id: x.jobId, target: 0 }), refusal: 404, control: 201 },
    {
      why: 'render brandPresetId',
      method: 'POST',
      path: () => '/api/render',
      body: render((x) => ({ brandPresetId: x.brandingId })),
      refusal: 404,
      message: /^Brand preset not found for this organization$/,
      control: 201,
    },
    {
      why: 'render options.waterMark.fileAppId',
      method: 'POST',
      path: () => '/api/render',
      body: render((x) => ({ options: { waterMark: { fileAppId: x.imageId } } })),
      refusal: 400,
      message: /fileAppId/,
      control: 201,
    },
    {
      why: 'render organizationId',
      method: 'POST',
      path: () => '/api/render',
      body: render((x) => ({ organizationId: x.orgId })),
      refusal: 403,
      control: 201,
    },
    {
      why: 'job sourceJobId',
      method: 'POST',
      path: () => '/api/jobs',
      body: (x) => ({ functionName: 'VideoShorts', sourceJobId: x.jobId }),
      refusal: 404,
      control: 201,
    },
    {
      why: 'job organizationId',
      method: 'POST',
      path: () => '/api/jobs',
      body: (x) => ({ functionName: 'VideoShorts', fileUrl: 'https://example.com/talk.mp4', organizationId: x.orgId }),
      refusal: 403,
      control: 201,
    },
    {
      why: 'probe organizationId',
      method: 'POST',
      path: () => '/api/probes',
      body: (x) => ({ url: 'https://example.com/v.mp4', organizationId: x.orgId }),
      refusal: 403,
      control: 201,
    },
    {
      why: 'new brand preset options.waterMark.fileAppId',
      method: 'POST',
      path: () => '/api/organizations/brandings',
      body: (x) => ({ name: 'w', options: { waterMark: { fileAppId: x.imageId } } }),
      refusal: 400,
      message: /fileAppId/,
      control: 200,
    },
    {
      why: 'brand preset update options.waterMark.fileAppId',
      method: 'PUT',
      path: () => `/api/organizations/brandings/${me.brandingId}`,
      body: (x) => ({ options: { waterMark: { fileAppId: x.imageId } } }),
      refusal: 400,
      message: /fileAppId/,
      control: 200,
    },
    {
      why: 'brand preset update of another organization',
      method: 'PUT',
      path: (x) => `/api/organizations/brandings/${x.brandingId}`,
      body: () => ({ name: 'taken over', isDefault: true }),
      refusal: 404,
      control: 200,
    },
    {
      why: 'file by id',
      method: 'GET',
      path: (x) => `/api/uploads/files/${x.imageId}`,
      refusal: 404,
      message: /^File not found$/,
      control: 200,
    },
    {
      why: 'social publish fileId',
      method: 'POST',
      path: () => `${SOCIAL}/publish`,
      body: (x) => ({
        postType: 'video',
        caption: 'c',
        platforms: ['linkedin'],
        publishMode: 'draft',
        scheduledAt: new Date(Date.now() + 86_400_000).toISOString(),
        fileId: x.sourceFileId,
      }),
      refusal: 404,
      control: 201,
    },
    {
      why: 'social settings organizationId',
      method: 'PUT',
      path: () => `${SOCIAL}/settings`,
      body: (x) => ({ organizationId: x.orgId, maxPostsPerSlot: 3 }),
      refusal: 403,
      control: 200,
    },
    {
      why: 'social edit postId',
      method: 'POST',
      path: () => `${SOCIAL}/edit`,
      body: (x) => ({ postId: x.postId, caption: 'taken over' }),
      refusal: 404,
      control: 200,
    },
    {
      why: 'social edit jobId',
      method: 'POST',
      path: () => `${SOCIAL}/edit`,
      body: (x) => ({ jobId: x.providerJobId, mode: 'draft' }),
      refusal: 404,
      control: 200,
    },
    // A stale revision: my own job answers 409 (it got as far as the revision check), theirs 404.
    {
      why: 'transcript corrections jobId',
      method: 'PATCH',
      path: (x) => `/api/jobs/${x.jobId}/transcription`,
      body: () => ({ revision: 999, edits: [{ op: 'delete', index: 0 }] }),
      refusal: 404,
      control: 409,
    },
    {
      why: 'transcript corrections organizationId in the query',
      method: 'PATCH',
      path: (x) => `/api/jobs/${me.jobId}/transcription?organizationId=${x.orgId}`,
      body: () => ({ revision: 999, edits: [{ op: 'delete', index: 0 }] }),
      refusal: 403,
      control: 409,
    },
    {
      why: 'short edit jobId',
      method: 'PATCH',
      path: (x) => `/api/jobs/${x.jobId}/shorts/0`,
      body: () => ({ revision: 999, title: 'taken over' }),
      refusal: 404,
      control: 409,
    },
    {
      why: 'short edit organizationId in the query',
      method: 'PATCH',
      path: (x) => `/api/jobs/${me.jobId}/shorts/0?organizationId=${x.orgId}`,
      body: () => ({ revision: 999, title: 'taken over' }),
      refusal: 403,
      control: 409,
    },
    {
      why: 'short framing jobId',
      method: 'PUT',
      path: (x) => `/api/jobs/${x.jobId}/shorts/0/framing`,
      body: () => ({ revision: 999, overrides: [] }),
      refusal: 404,
      control: 409,
    },
    {
      why: 'short framing organizationId in the query',
      method: 'PUT',
      path: (x) => `/api/jobs/${me.jobId}/shorts/0/framing?organizationId=${x.orgId}`,
      body: () => ({ revision: 999, overrides: [] }),
      refusal: 403,
      control: 409,
    },
    {
      why: 'short added to jobId',
      method: 'POST',
      path: (x) => `/api/jobs/${x.jobId}/shorts`,
      body: () => ({ revision: 999, title: 'extra', startTime: 0, endTime: 2 }),
      refusal: 404,
      control: 409,
    },
    { why: 'short removal jobId', method: 'DELETE', path: (x) => `/api/jobs/${x.jobId}/shorts/0?revision=999`, refusal: 404, control: 409 },
    { why: 'tus upload status', method: 'GET', path: (x) => `${TUS}/${x.uploadId}`, refusal: 404, control: 200 },
    { why: 'tus upload chunk', method: 'PATCH', path: (x) => `${TUS}/${x.uploadId}`, refusal: 404, control: 409 },
    {
      why: 'social remove jobId',
      method: 'POST',
      path: () => `${SOCIAL}/remove`,
      body: (x) => ({ jobId: x.providerJobId }),
      refusal: 404,
      control: 200,
      destructive: true,
    },
    {
      why: 'social remove postId',
      method: 'POST',
      path: () => `${SOCIAL}/remove`,
      body: (x) => ({ postId: x.postId }),
      refusal: 404,
      control: 200,
      destructive: true,
    },
    {
      why: 'social disconnect-account accountId',
      method: 'POST',
      path: () => `${SOCIAL}/disconnect-account`,
      body: (x) => ({ accountId: x.accountId }),
      refusal: 404,
      control: 200,
      destructive: true,
    },
    { why: 'tus upload termination', method: 'DELETE', path: (x) => `${TUS}/${x.uploadId}`, refusal: 404, control: 204, destructive: true },
  ];
  // organizationId in the query of every GET and DELETE, from /openapi.json.
  const doc = (await cluster.api('GET', '/openapi.json')).body;
  for (const [p, methods] of Object.entries(doc.paths as Record<string, Record<string, Schema>>)) {
    for (const [method, op] of Object.entries(methods)) {
      if (!(op.parameters ?? []).some((q: Schema) => q.in === 'query' && q.name === 'organizationId') || !op.security) continue;
      const concrete = (x: Tenant) =>
        p
          .replace('{jobId}', me.jobId)
          .replace('{renderId}', me.renderId)
          .replace('{shortId}', '0')
          .replace('{fileId}', me.imageId)
          .replace('{id}', p.startsWith('/api/probes') ? me.probeId : me.brandingId) + `?organizationId=${x.orgId}`;
      if (method === 'delete') continue; // deleting my own objects is shown above for presets and files
      // A PATCH or PUT needs its body: the transcript, short edits and framing have cases above.
      if (method === 'patch' || method === 'put') continue;
      // An API key may not manage API keys, even its own organization's (403 before anything else).
      const keyControl = p.startsWith('/api/organizations/api-keys') ? 403 : undefined;
      cases.push({
        why: `query organizationId of ${method.toUpperCase()} ${p}`,
        method: method.toUpperCase(),
        path: concrete,
        refusal: 403,
        control: 200,
        keyControl,
      });
    }
  }
  cases.push({ why: 'tus creation with organizationId metadata', method: 'POST', path: () => TUS, refusal: 403, control: 201 });

  // A studio session and a bearer token act for the user's organization only: the same cases, with
  // organizationId named as those callers must (query for GET/DELETE, body for POST/PUT).
  type Cred = { name: string; headers: Record<string, string>; orgInBody: boolean };
  const creds: Cred[] = [
    { name: 'session', headers: me.session, orgInBody: true },
    { name: 'bearer token', headers: { authorization: `Bearer ${me.token}` }, orgInBody: true },
    { name: 'API key', headers: { authorization: `Bearer ${me.key}` }, orgInBody: false },
  ];
  const failures: string[] = [];
  let sent = 0;
  // A caption change replaces the post's provider job: my side's id is read fresh each time.
  const providerJob = async (postId: string) =>
    (await cluster.app.db.one<{ j: string }>('SELECT provider_job_id AS j FROM social_posts WHERE id = $1', [postId]))!.j;
  const send = async (cred: Cred, c: Case, x: Tenant, control: boolean) => {
    if (control) x.providerJobId = await providerJob(x.postId);
    let url = c.path(x);
    let body = c.body?.(x);
    const headers: Record<string, string> = { ...cred.headers };
    if (cred.orgInBody && !/organizationId=/.test(url) && !body?.organizationId) {
      if (c.method === 'GET' || c.method === 'DELETE' || url.startsWith(TUS))
        url += `${url.includes('?') ? '&' : '?'}organizationId=${me.orgId}`;
      else body = { ...body, organizationId: me.orgId };
    }
    if (url.startsWith(TUS)) {
      headers['tus-resumable'] = '1.0.0';
      if (c.method === 'POST')
        Object.assign(headers, { 'upload-length': '100', 'upload-metadata': `filename ${b64('x.mp4')},organizationId ${b64(x.orgId)}` });
      if (c.method === 'PATCH') Object.assign(headers, { 'content-type': 'application/offset+octet-stream', 'upload-offset': '5' });
    } else if (body) headers['content-type'] = 'application/json';
    sent++;
    const res = await fetch(cluster.app.httpUrl + url, {
      method: c.method,
      headers,
      body: c.method === 'PATCH' && url.startsWith(TUS) ? 'chunk' : body && JSON.stringify(body),
    });
    const text = await res.text();
    const where = `${cred.name}: ${c.why} (${control ? 'my own' : 'theirs'}) -> ${res.status}`;
    const expected = control ? (cred.name === 'API key' && c.keyControl !== undefined ? c.keyControl : c.control) : c.refusal;
    if (res.status !== expected) failures.push(`${where}, expected ${expected}: ${text.slice(0, 200)}`);
    else if (!control && c.message && !c.message.test(JSON.parse(text).message)) failures.push(`${where}: message ${text.slice(0, 200)}`);
    else if (!control && (typeof JSON.parse(text).error !== 'string' || typeof JSON.parse(text).message !== 'string'))
      failures.push(`${where}: not a JSON error`);
  };
  // Destructive controls (cancel, disconnect, terminate) last, once, with the key.
  for (const cred of creds) {
    for (const c of cases) {
      await send(cred, c, them, false);
      if (!c.destructive) await send(cred, c, me, true);
    }
  }
  for (const c of cases.filter((x) => x.destructive)) await send(creds[2]!, c, me, true);
  t.log(`${sent} requests, ${cases.length} cases for each of ${creds.map((c) => c.name).join(', ')}`);
  t.deepEqual(failures, [], failures.join('\n'));

  t.deepEqual(await snapshot(cluster, them.orgId), before, "the other organization's rows are exactly as they were");
  for (const key of theirObjects) t.truthy(await cluster.app.store.stat(key), key);
});

test('tus uploads, signed /objects/ and the studio files answer garbage, control characters, bad % escapes and case-changed paths with a 4xx, never a 5xx', async (t) => {
  const me = await tenant(cluster);
  const signed = await cluster.app.urls.sign(me.imageKey, 'GET', 600);
  const signedUrl = new URL(signed.url);
  const objectPath = signedUrl.pathname + signedUrl.search;
  const auth = { authorization: `Bearer ${me.key}` };
  const tus = (extra: Record<string, string> = {}) => ({ ...auth, 'tus-resumable': '1.0.0', ...extra });
  const SEGMENTS = [
    '%00',
    '%01%1F%7F',
    '%ZZ',
    '%E0%A4%A',
    '%C0%AF',
    '%ud800',
    '%',
    '%25',
    '%0d%0aSet-Cookie:%20x=1',
    '%F0%9F%92%A5',
    '%E2%80%AE',
    'x'.repeat(3000),
    '..%2F..%2Fetc%2Fpasswd',
    '%2e%2e%2f',
    'a%2Fb',
    'a/b',
    '00000000-0000-0000-0000-000000000000',
    '1%20OR%201=1',
    encodeURIComponent(NASTY[1]!),
  ];
  const probes: Probe[] = [];
  const add = (p: Probe) => probes.push(p);

  // tus: every method on the collection, on an upload, and on garbage ids.
  for (const method of ['OPTIONS', 'HEAD', 'GET', 'POST', 'PATCH', 'DELETE', 'PUT']) {
    for (const seg of ['', '/', `/${me.uploadId}`, ...SEGMENTS.map((s) => `/${s}`)]) {
      add({
        method,
        url: TUS + seg,
        headers: tus({ 'upload-length': '10', 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' }),
        body: 'abc',
        why: `tus ${seg.slice(0, 12)}`,
      });
    }
    for (const wrong of [
      '/API/UPLOADS/TUS',
      '/api/uploads/TUS',
      `/api/Uploads/tus/${me.uploadId}`,
      `/api/uploads/tus/${me.uploadId.toUpperCase()}`,
    ]) {
      add({
        method,
        url: wrong,
        headers: tus({ 'upload-length': '10' }),
        why: 'tus case-changed',
        expectNot2xx: !wrong.startsWith(`${TUS}/`),
      });
    }
  }
  // tus headers: lengths, offsets, versions and metadata that are not what the protocol says.
  for (const length of ['', '-1', '0', '1e309', 'abc', '99999999999999999999', ' 10', '0x10', '1.5', '10, 10']) {
    add({ method: 'POST', url: TUS, headers: tus({ 'upload-length': length }), why: `Upload-Length ${length}` });
  }
  for (const version of ['', '0.2.2', '1.0', 'x'.repeat(2000)])
    add({
      method: 'POST',
      url: TUS,
      headers: { ...auth, 'tus-resumable': version, 'upload-length': '10' },
      why: `Tus-Resumable ${version.slice(0, 8)}`,
    });
  add({ method: 'POST', url: TUS, headers: tus({ 'upload-defer-length': '1' }), why: 'Upload-Defer-Length' });
  const metadata = [
    'organizationId',
    'filename !!!notbase64',
    ',,,, , ,',
    ','.repeat(10_000),
    'a b c d e',
    `purpose ${b64('../../x')}`,
    `purpose ${b64('watermark\u0000')}`,
    `purpose ${b64('image')}`,
    `organizationId ${b64('\u0000')}`,
    `organizationId ${b64("' OR 1=1 --")}`,
    `filetype ${b64('\u0000')}`,
    `title ${b64('Ω'.repeat(5_000))}`,
    // Short enough to pass Node's 16 KB header limit (beyond it Node itself answers 431, before any route).
    ...NASTY.map((n) => n.slice(0, 1500)).map((n) => `filename ${b64(n)},title ${b64(n)},filetype ${b64(n)}`),
  ];
  for (const m of metadata)
    add({
      method: 'POST',
      url: TUS,
      headers: tus({ 'upload-length': '10', 'upload-metadata': m }),
      why: `Upload-Metadata ${m.slice(0, 16)}`,
    });
  for (const offset of ['', '-1', 'abc', '1e309', '99999999999999999999', '5', '0.5']) {
    add({
      method: 'PATCH',
      url: `${TUS}/${me.uploadId}`,
      headers: tus({ 'content-type': 'application/offset+octet-stream', 'upload-offset': offset }),
      body: 'x',
      why: `Upload-Offset ${offset}`,
    });
  }
  for (const type of ['', 'application/json', 'text/plain', 'application/offset+octet-stream; x=\u00e9']) {
    add({
      method: 'PATCH',
      url: `${TUS}/${me.uploadId}`,
      headers: tus({ 'content-type': type, 'upload-offset': '0' }),
      body: 'x',
      why: `PATCH content-type ${type}`,
    });
  }
  add({
    method: 'POST',
    url: `${TUS}?organizationId=${encodeURIComponent('%ZZ')}&organizationId=b`,
    headers: tus({ 'upload-length': '10' }),
    why: 'tus repeated organizationId',
  });
  add({
    method: 'POST',
    url: TUS,
    headers: { 'tus-resumable': '1.0.0', 'upload-length': '10' },
    why: 'tus without credentials',
    expectStatus: 401,
  });
  add({
    method: 'POST',
    url: TUS,
    headers: { ...me.session, 'tus-resumable': '1.0.0', 'upload-length': '10' },
    why: 'tus session without organizationId',
  });
  add({
    method: 'POST',
    url: TUS,
    headers: { cookie: me.session.cookie, 'tus-resumable': '1.0.0', 'upload-length': '10' },
    why: 'tus session without CSRF token',
    expectStatus: 403,
  });

  // Signed objects: garbage keys, escapes, methods, signatures, ranges and case-changed paths.
  for (const method of ['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS']) {
    for (const seg of SEGMENTS) add({ method, url: `/objects/${seg}?exp=1&sig=x`, body: 'x', why: `object ${seg.slice(0, 12)}` });
    add({
      method,
      url: `/objects/${me.imageKey.split('/').map(encodeURIComponent).join('/')}`,
      body: 'x',
      why: 'object without signature',
      expectNot2xx: true,
    });
  }
  for (const wrong of [
    caseChanged(objectPath),
    objectPath.replace('/objects/', '/OBJECTS/'),
    objectPath.replace('/objects/', '/Objects/'),
    objectPath.replace(me.orgId, me.orgId.toUpperCase()),
  ]) {
    add({ method: 'GET', url: wrong, why: 'object case-changed', expectNot2xx: true });
  }
  const [keyPart, query] = objectPath.split('?');
  for (const q of [
    '',
    'exp=1&sig=x',
    'exp=-1&sig=',
    'exp=1e309&sig=a',
    'exp[]=1&sig[]=2',
    `${query}&sig=again`,
    query!.replace(/sig=[^&]+/, 'sig=%00'),
    query!.replace(/exp=\d+/, 'exp=%ZZ'),
  ]) {
    add({ method: 'GET', url: `${keyPart}?${q}`, why: `object query ${q.slice(0, 12)}`, expectNot2xx: q !== query });
  }
  for (const range of [
    'bytes=abc',
    'bytes=-0',
    'bytes=5-1',
    'bytes=0-99999999999999999999',
    'bytes=0-1,2-3',
    'items=0-1',
    'bytes=99999-',
    'bytes=--1',
    NASTY[1]!.replace(/[^\x20-\x7e]/g, ''),
  ]) {
    add({ method: 'GET', url: objectPath, headers: { range }, why: `Range ${range}` });
  }
  add({ method: 'PUT', url: objectPath, body: 'overwrite', why: 'PUT with a GET signature', expectStatus: 403 });
  // Every header, with hostile values, on the routes /openapi.json does not list.
  const headerTargets: Array<{ method: string; url: string; headers: Record<string, string>; body?: string }> = [
    { method: 'POST', url: TUS, headers: tus({ 'upload-length': '10' }) },
    {
      method: 'PATCH',
      url: `${TUS}/${me.uploadId}`,
      headers: tus({ 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' }),
      body: 'x',
    },
    { method: 'HEAD', url: `${TUS}/${me.uploadId}`, headers: tus() },
    { method: 'GET', url: objectPath, headers: {} },
    { method: 'GET', url: '/studio/', headers: {} },
  ];
  for (const target of headerTargets)
    for (const name of HOSTILE_HEADERS)
      for (const value of HEADER_VALUES.slice(0, 5))
        add({
          ...target,
          headers: { ...target.headers, [name]: value },
          why: `${target.method} ${target.url.slice(0, 20)} header ${name}`,
        });
  // The studio's files and the paths around them.
  for (const seg of [...SEGMENTS, 'index.html', 'assets/%2e%2e/%2e%2e/package.json', '..%2F..%2Fpackage.json']) {
    add({ method: 'GET', url: `/studio/${seg}`, why: `studio ${seg.slice(0, 12)}` });
  }
  for (const url of [
    '/STUDIO/',
    '/Studio',
    '/%ZZ',
    '/%00',
    '/healthz/%ZZ',
    '/api/%ZZ',
    '/api/jobs/%E0%A4%A',
    '/docs?x=%ZZ',
    '/openapi.json/%00',
  ]) {
    add({ method: 'GET', url, headers: auth, why: `path ${url}`, expectNot2xx: url !== '/docs?x=%ZZ' });
  }
  t.log(`${probes.length} requests`);
  const { failures, statuses } = await sweep(cluster.app.httpUrl, probes);
  t.log('answers by status', Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])));
  t.deepEqual(failures, [], failures.slice(0, 40).join('\n'));
  // The probes went past the first refusal: uploads were created and objects served.
  t.true((statuses.get(201) ?? 0) > 5, 'some uploads created');
  t.true((statuses.get(200) ?? 0) + (statuses.get(206) ?? 0) > 3, 'the signed object served');
  t.truthy(await cluster.app.store.stat(me.imageKey), 'the object is still there');
  t.is((await fetch(signed.url)).status, 200);
});

test.serial(
  'agent upload URLs: tampered queries, chunked PUTs past the limit, second PUTs to a written object and stale URLs after completion or re-lease answer a 4xx JSON error and store nothing',
  async (t) => {
    const me = await tenant(cluster);
    const agent = await new FakeAgent(cluster.app.grpcAddress, undefined, 'sweep-uploader').register(['render-short']);
    t.teardown(() => agent.close());
    const leaseRender = async () => {
      await cluster.api('POST', '/api/render', { key: me.key, body: { id: me.jobId, target: 0 } });
      // Patient: on a loaded machine a lease may come back empty before the render is queued.
      const until = Date.now() + 60_000;
      while (Date.now() < until) {
        const task = await agent.lease(3000);
        if (task?.type === 'render-short') return task;
      }
      throw new Error('no render leased in 60 s');
    };
    const urlFor = async (task: { task_id: string; lease_token: string }, name: string) =>
      (await agent.client.call('CreateUploadUrl', { task_id: task.task_id, lease_token: task.lease_token, name })) as {
        url: string;
        object_key: string;
      };
    const pathOf = (url: string) => {
      const u = new URL(url);
      return u.pathname + u.search;
    };

    const live = await leaseRender();
    const thumb = await urlFor(live, 'render.jpg');
    const [keyPart, query] = pathOf(thumb.url).split('?');
    const probes: Probe[] = [];
    const add = (p: Probe) => probes.push(p);
    const tampered = [
      query!.replace(/&task=[^&]+/, ''),
      query!.replace(/&lease=[^&]+/, ''),
      query!.replace(/&max=\d+/, ''),
      query!.replace(/max=\d+/, 'max=99999999999999999999'),
      query!.replace(/max=\d+/, 'max=1e309'),
      query!.replace(/max=\d+/, 'max=-1'),
      query!.replace(/lease=[^&]+/, 'lease=%00'),
      query!.replace(/task=[^&]+/, `task=${me.renderId}`),
      `${query}&max=1`,
      query!.replace(/max=(\d+)/, 'max[]=$1'),
      query!.replace(/lease=[^&]+/, `lease=${'x'.repeat(3000)}`),
    ];
    for (const q of tampered)
      add({ method: 'PUT', url: `${keyPart}?${q}`, body: 'forged', why: `upload query ${q.slice(-24)}`, expectNot2xx: true });
    add({
      method: 'PUT',
      url: `${keyPart.replace('render.jpg', 'render.mp4')}?${query}`,
      body: 'x',
      why: 'upload URL moved to another name',
      expectStatus: 403,
    });
    add({ method: 'GET', url: `${keyPart}?${query}`, why: 'an upload signature used to read', expectStatus: 403 });
    const { failures } = await sweep(cluster.app.httpUrl, probes);
    t.deepEqual(failures, [], failures.join('\n'));
    t.is(await cluster.app.store.stat(thumb.object_key), null, 'no tampered upload stored anything');

    // Chunked bodies with no Content-Length, past the thumbnail's 20 MB: cut off, nothing kept.
    for (const chunkSize of [1, 65_536, 1_048_576]) {
      let sent = 0;
      const total = 20_000_000 + chunkSize * 2;
      const body = new ReadableStream<Uint8Array>({
        pull(c) {
          if (sent >= total) return c.close();
          // Tiny chunks only up to the first 64 kB, so the run stays short: the count is what is tested.
          const size = sent < 65_536 ? chunkSize : 1_048_576;
          sent += size;
          c.enqueue(new Uint8Array(size));
        },
      });
      const res = await fetch(thumb.url, { method: 'PUT', body, duplex: 'half' } as RequestInit);
      t.is(res.status, 413, `chunks of ${chunkSize}`);
      t.regex(((await res.json()) as { message: string }).message, /limited to 20000000 bytes/);
    }
    const left: string[] = [];
    for await (const o of cluster.app.store.list(thumb.object_key.slice(0, thumb.object_key.lastIndexOf('/') + 1))) left.push(o.key);
    t.deepEqual(left, [], 'no object or staging part left');

    // The lease ends: released (back to the queue), leased again, then completed.
    const video = await urlFor(live, 'render.mp4');
    await agent.client.call('ReleaseTask', { task_id: live.task_id, lease_token: live.lease_token, reason: 'sweep' });
    const again = await leaseRender().then(async (task) =>
      task.task_id === live.task_id ? task : (await agent.fail(task.task_id, task.lease_token, 'other', false), leaseRender()),
    );
    const stale: Probe[] = [thumb.url, video.url].map((url) => ({
      method: 'PUT',
      url: pathOf(url),
      body: 'stale',
      why: 'URL of a released lease',
      expectStatus: 410,
    }));
    const current = await urlFor(again, 'render.mp4');
    const currentThumb = await urlFor(again, 'render.jpg');
    t.is((await fetch(current.url, { method: 'PUT', body: 'the short' })).status, 201);
    t.is((await fetch(currentThumb.url, { method: 'PUT', body: 'jpeg' })).status, 201);
    // Written once: while the lease lives, a second PUT to a written object is refused too.
    const rewrites: Probe[] = [
      { method: 'PUT', url: pathOf(current.url), body: 'rewritten', why: 'second PUT to a written upload URL', expectStatus: 409 },
      {
        method: 'PUT',
        url: pathOf((await urlFor(again, 'render.mp4')).url),
        body: '',
        why: 'empty PUT through a URL signed again for a written object',
        expectStatus: 409,
      },
    ];
    const rewritten = await sweep(cluster.app.httpUrl, rewrites);
    t.deepEqual(rewritten.failures, [], rewritten.failures.join('\n'));
    await agent.complete(again.task_id, again.lease_token, {
      objectKey: current.object_key,
      sizeBytes: 9,
      contentType: 'video/mp4',
      durationSec: 2,
      thumbnailKey: currentThumb.object_key,
    });
    stale.push({ method: 'PUT', url: pathOf(current.url), body: 'overwrite', why: 'URL of a completed task', expectStatus: 410 });
    stale.push({ method: 'PUT', url: pathOf(currentThumb.url), body: '', why: 'empty PUT to a completed task', expectStatus: 410 });
    const after = await sweep(cluster.app.httpUrl, stale);
    t.deepEqual(after.failures, [], after.failures.join('\n'));
    const chunks: Buffer[] = [];
    for await (const c of (await cluster.app.store.get(current.object_key)).stream) chunks.push(c as Buffer);
    t.is(Buffer.concat(chunks).toString(), 'the short', 'the finished short is unchanged');
  },
);

test('with real limits, hammering a limited route with bad input, other spellings or other credentials ends in 429', async (t) => {
  const me = await tenant(limited);
  // Buckets are per credential: each scenario gets its own key or user, so none drains another's.
  const freshKey = async () => ({ authorization: `Bearer ${(await issueApiKey(limited.app.db, me.orgId, 'sweep')).key}` });
  const freshSession = async () => {
    const user = await createUser(limited.app.db, {
      email: `s${Math.random().toString(36).slice(2)}@sweep.test`,
      organizationId: me.orgId,
      role: 'member',
    });
    const r = await fetch(limited.app.httpUrl + '/api/session', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: await createLoginLink(limited.app.db, user.id) }),
    });
    return {
      user,
      headers: {
        cookie: r.headers
          .getSetCookie()
          .map((s) => s.split(';')[0])
          .join('; '),
        'x-csrf-token': ((await r.json()) as { csrfToken: string }).csrfToken,
      },
    };
  };
  const O = `organizationId=${me.orgId}`;
  const tusHeaders = { 'tus-resumable': '1.0.0' };
  type Req = { method: string; url: string; headers?: Record<string, string>; body?: string };
  const scenarios: Array<{ why: string; creds: () => Promise<Array<Record<string, string>>>; requests: (i: number) => Req }> = [
    {
      why: 'API key, a bad limit',
      creds: async () => [await freshKey()],
      requests: () => ({ method: 'GET', url: '/api/uploads/files?limit=abc' }),
    },
    {
      why: 'API key, a repeated organizationId',
      creds: async () => [await freshKey()],
      requests: () => ({ method: 'GET', url: `/api/uploads/files?${O}&${O}` }),
    },
    {
      why: 'API key, garbage file ids',
      creds: async () => [await freshKey()],
      requests: (i) => ({ method: 'GET', url: `/api/uploads/files/%ZZ${i}` }),
    },
    // Past the limit, the case-changed spelling must not answer either.
    {
      why: 'API key, then case-changed paths',
      creds: async () => [await freshKey()],
      requests: (i) => ({
        method: 'GET',
        url: i > PER_MINUTE + 1 && i % 2 ? '/API/uploads/files' : i > PER_MINUTE + 1 ? '/api/Uploads/files' : '/api/uploads/files',
      }),
    },
    {
      why: 'API key, a new forged X-Forwarded-For each time',
      creds: async () => [await freshKey()],
      requests: (i) => ({
        method: 'GET',
        url: '/api/uploads',
        headers: { 'x-forwarded-for': `203.0.113.${i}`, forwarded: `for=203.0.113.${i}` },
      }),
    },
    {
      why: 'API key, as Bearer and as X-API-Key in turn',
      creds: async () => {
        const k = await freshKey();
        return [k, { 'x-api-key': k.authorization.slice(7) }];
      },
      requests: () => ({ method: 'GET', url: '/api/uploads' }),
    },
    {
      why: 'API key, a social publish with a bad body',
      creds: async () => [await freshKey()],
      requests: () => ({
        method: 'POST',
        url: `${SOCIAL}/publish`,
        headers: { 'content-type': 'application/json' },
        body: '{"postType": 7}',
      }),
    },
    {
      why: 'API key, a social publish that is not JSON',
      creds: async () => [await freshKey()],
      requests: () => ({ method: 'POST', url: `${SOCIAL}/publish`, headers: { 'content-type': 'text/plain' }, body: 'hello' }),
    },
    {
      why: 'API key, tus creation with a bad Upload-Length',
      creds: async () => [await freshKey()],
      requests: () => ({ method: 'POST', url: TUS, headers: { ...tusHeaders, 'upload-length': 'abc' } }),
    },
    {
      why: 'API key, tus creation without Tus-Resumable',
      creds: async () => [await freshKey()],
      requests: () => ({ method: 'POST', url: TUS, headers: { 'upload-length': '10' } }),
    },
    {
      why: 'API key, tus on garbage upload ids',
      creds: async () => [await freshKey()],
      requests: (i) => ({ method: 'HEAD', url: `${TUS}/nope${i}`, headers: tusHeaders }),
    },
    {
      why: 'API key, tus chunk with a bad offset',
      creds: async () => [await freshKey()],
      requests: () => ({
        method: 'PATCH',
        url: `${TUS}/${me.uploadId}`,
        headers: { ...tusHeaders, 'content-type': 'application/offset+octet-stream', 'upload-offset': 'abc' },
        body: 'x',
      }),
    },
    {
      why: 'session, a bad limit',
      creds: async () => [(await freshSession()).headers],
      requests: () => ({ method: 'GET', url: `/api/uploads/files?${O}&limit=abc` }),
    },
    {
      why: 'session, a repeated organizationId',
      creds: async () => [(await freshSession()).headers],
      requests: () => ({ method: 'GET', url: `/api/uploads/files?${O}&${O}` }),
    },
    {
      why: 'session, a repeated type filter',
      creds: async () => [(await freshSession()).headers],
      requests: () => ({ method: 'GET', url: `/api/uploads/files?${O}&type=a&type=b` }),
    },
    {
      why: 'session, tus creation with a bad Upload-Length',
      creds: async () => [(await freshSession()).headers],
      requests: () => ({ method: 'POST', url: `${TUS}?${O}`, headers: { ...tusHeaders, 'upload-length': '-1' } }),
    },
    {
      why: 'session and bearer token of one user in turn',
      creds: async () => {
        const s = await freshSession();
        return [s.headers, { authorization: `Bearer ${await limited.app.signer.issue(s.user.id)}` }];
      },
      requests: () => ({ method: 'GET', url: `/api/uploads?${O}` }),
    },
  ];
  const failures: string[] = [];
  await Promise.all(
    scenarios.map(async (s) => {
      const creds = await s.creds();
      const seen: number[] = [];
      const at: number[] = [];
      const started = Date.now();
      for (let i = 0; i < PER_MINUTE * 2 + 2; i++) {
        const r = s.requests(i);
        const res = await fetch(limited.app.httpUrl + r.url, {
          method: r.method,
          headers: { ...creds[i % creds.length], ...r.headers },
          body: r.body,
        });
        seen.push(res.status);
        at.push(Date.now());
        await res.arrayBuffer();
        if (res.status === 429 && !res.headers.get('retry-after')) failures.push(`${s.why}: a 429 without Retry-After`);
      }
      const first = seen.indexOf(429);
      // A token comes back every 12 s; on a slow machine one more request may get through.
      if (first < 0 || first > PER_MINUTE + 1) failures.push(`${s.why}: no 429 within ${PER_MINUTE + 2} requests: ${seen.join(',')}`);
      else {
        // No more successes than the bucket held plus one for each token that came back (one every
        // 60 / PER_MINUTE s) from before the first request to after the last: a loaded machine can take
        // that long, and a token that came back before the first refusal counts too.
        const refilled = Math.floor((at[at.length - 1]! - started) / (60_000 / PER_MINUTE));
        const successes = seen.filter((x) => x < 300).length;
        if (successes > PER_MINUTE + refilled)
          failures.push(
            `${s.why}: ${successes} successes, ${PER_MINUTE} + ${refilled} tokens came back in ${((at[at.length - 1]! - started) / 1000).toFixed(1)} s: ${seen.join(',')}`,
          );
      }
      if (seen.some((x) => x >= 500)) failures.push(`${s.why}: a 5xx: ${seen.join(',')}`);
    }),
  );
  t.deepEqual(failures, [], failures.join('\n'));
});

// Serial (ava runs it before the others): its password hashes would slow the limit sweep enough for a bucket to refill.
test.serial(
  'forged X-Forwarded-For, X-Real-IP and Forwarded headers of any shape neither get sign-ins past the per-address and per-e-mail limits nor cause a 5xx',
  async (t) => {
    const shapes = (i: number): Record<string, string> =>
      [
        { 'x-forwarded-for': `198.51.100.${i}` },
        { 'x-forwarded-for': `198.51.100.${i}, 203.0.113.${i}`, 'x-real-ip': `192.0.2.${i}` },
        { forwarded: `for=198.51.100.${i};proto=https`, 'x-forwarded-proto': 'https', 'x-forwarded-host': `evil${i}.example` },
        { 'x-forwarded-for': 'unknown' },
        { 'x-forwarded-for': ' , ,, ' },
        { 'x-forwarded-for': `${'9.'.repeat(1500)}${i}` },
        { 'x-forwarded-for': '127.0.0.1' },
        { 'x-forwarded-for': `[::1]:${i}, 1.2.3.4:5678` },
      ][i % 8]!;
    const signIn = async (body: unknown, headers: Record<string, string>) => {
      const res = await fetch(forwarded.app.httpUrl + '/api/session', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, text, retryAfter: res.headers.get('retry-after') };
    };
    const failures: string[] = [];
    const check = (why: string, a: { status: number; text: string; retryAfter: string | null }) => {
      if (a.status >= 500) failures.push(`${why}: ${a.status} ${a.text.slice(0, 120)}`);
      if (a.status === 429 && !a.retryAfter) failures.push(`${why}: a 429 without Retry-After`);
      try {
        const body = JSON.parse(a.text);
        if (typeof body.error !== 'string' || typeof body.message !== 'string') throw new Error('shape');
      } catch {
        if (a.status >= 400) failures.push(`${why}: not a JSON error: ${a.text.slice(0, 120)}`);
      }
    };

    // One e-mail, ten a minute, whatever address the request claims: a burst of fourteen at once
    // (of the ten let through, those beyond the password-hash queue are 503).
    const email = `nobody${Math.random().toString(36).slice(2)}@sweep.test`;
    const perEmail = await Promise.all(
      Array.from({ length: 14 }, async (_, i) => {
        const a = await signIn({ email, password: `guess ${i}` }, shapes(i));
        check(`e-mail sign-in ${i}`, a);
        return a.status;
      }),
    );
    t.true(
      perEmail.every((s) => [401, 429, 503].includes(s)),
      perEmail.join(','),
    );
    t.true(perEmail.filter((s) => s === 429).length >= 4, perEmail.join(','));

    // One address, sixty a minute (the burst above spent a few, since refilled): link tokens cost no
    // hash, so this is quick.
    const started = Date.now();
    const perAddress: number[] = [];
    for (let i = 0; i < 70; i++) {
      const a = await signIn({ token: `not-a-link-${i}` }, shapes(i));
      check(`link sign-in ${i}`, a);
      perAddress.push(a.status);
    }
    const admitted = perAddress.filter((s) => s !== 429).length;
    const refills = Math.ceil((Date.now() - started) / 1000) + 1;
    t.true(admitted <= 60 + refills, `${admitted} of 70 admitted: ${perAddress.join(',')}`);
    t.true(perAddress.includes(429), perAddress.join(','));
    t.deepEqual(failures, [], failures.join('\n'));
  },
);
