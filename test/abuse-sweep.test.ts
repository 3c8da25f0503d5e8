import test from 'ava';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { storeFile } from '../coordinator/src/files/store-file.js';

// Generated from /openapi.json: every route and method, fed wrong types, missing and extra fields,
// huge and deeply nested bodies, unicode and control characters in every string and query value,
// other organizations' ids, and case-changed paths. Every answer must be a success or a 4xx JSON
// error ({error, message}), never a 5xx; a limited route never answers without its rate-limit
// headers, and a case-changed path never reaches a route. The request count is bounded (about a
// thousand, eight at a time).
let cluster: TestCluster;

type Schema = Record<string, any>;
interface Op { method: string; path: string; body?: Schema; query: Array<{ name: string }>; public: boolean }
interface Probe { method: string; url: string; body?: string; key?: string; why: string; expectNot2xx?: boolean }

const NASTY = ['\u0000', 'a\u0007b\u001b[31m\u202eevil', '💥🧨'.repeat(500), '\ud800 lone surrogate', '../../../etc/passwd', ' ', 'Ω'.repeat(20_000), '%00%ZZ%', '<script>alert(1)</script>', "'; DROP TABLE jobs; --"];
const QUERY_VALUES = ['\u0000', '-1', '1e309', 'x'.repeat(5000), '%E0%A4%A', '💥', '[]', 'true'];

function resolveRef(root: Schema, s: Schema | undefined): Schema {
  if (s && typeof s.$ref === 'string' && s.$ref.startsWith('#/')) {
    return s.$ref.slice(2).split('/').reduce((o: any, k: string) => o?.[k], root) ?? {};
  }
  return s ?? {};
}

/** The least value a schema accepts, so a mutation of one field gets past the others. */
function minimal(s: Schema, depth = 0): unknown {
  if (depth > 6) return null;
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  const options = s.anyOf ?? s.oneOf;
  if (Array.isArray(options)) return minimal(options.find((o: Schema) => o.type !== 'null') ?? options[0], depth + 1);
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type;
  switch (type) {
    case 'string': return 'x'.repeat(Math.max(1, s.minLength ?? 1));
    case 'number': case 'integer': return s.minimum ?? 1;
    case 'boolean': return true;
    case 'array': return [];
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const name of s.required ?? []) out[name] = minimal(s.properties?.[name] ?? {}, depth + 1);
      return out;
    }
    default: return 'x';
  }
}

function wrongValues(s: Schema): unknown[] {
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'string': return [123, { a: 1 }, ['x'], false];
    case 'number': case 'integer': return ['12', [], true, -1e308, 0.5];
    case 'boolean': return ['true', 1, null];
    case 'array': return ['a', { 0: 'a' }, [null, { deep: [1] }]];
    case 'object': return ['a', [], 1, null];
    default: return [123, 'x', null, [], {}];
  }
}

const nest = (depth: number) => {
  let v: unknown = 'bottom';
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
};

test.before(async () => {
  cluster = await startCluster('abuse_sweep', { rateLimitFilesPerMinute: '100000,100000,100000,100000', rateLimitSocialPerMinute: 100000, renderActiveLimit: 1000 });
});
test.after.always(() => cluster?.close());

test('every route and method answers hostile input with a success or a 4xx JSON error, never a 5xx', async (t) => {
  const mine = await cluster.org({ plan: 'business', credits: 50 });
  const theirs = await cluster.org({ plan: 'business', credits: 50 });
  const WORDS = [{ text: 'hello', start: 0.5, end: 0.9 }];
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
  const ops: Op[] = [];
  for (const [p, methods] of Object.entries(doc.paths as Record<string, Record<string, Schema>>)) {
    for (const [method, op] of Object.entries(methods)) {
      const body = op.requestBody?.content?.['application/json']?.schema;
      ops.push({ method: method.toUpperCase(), path: p, body: body ? resolveRef(doc, body) : undefined, query: (op.parameters ?? []).filter((x: Schema) => x.in === 'query'), public: !op.security });
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
  const fill = (p: string, set: typeof my | string) => p.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(typeof set === 'string' ? set : idFor(p, name, set)));

  const probes: Probe[] = [];
  for (const op of ops) {
    const url = fill(op.path, my);
    const base = op.body ? (minimal(op.body) as Record<string, unknown>) : undefined;
    const send = (why: string, body: unknown, extra: Partial<Probe> = {}) =>
      probes.push({ method: op.method, url, body: body === undefined ? undefined : typeof body === 'string' && extra.why === 'raw' ? body : JSON.stringify(body), key: mine.key, why, ...extra });

    send('as documented', base);
    send('no credentials', base, { key: undefined });
    if (op.body) {
      const props = (op.body.properties ?? {}) as Record<string, Schema>;
      for (const whole of [{}, null, [], 'text', 42, true]) send(`body ${JSON.stringify(whole)}`, whole);
      send('extra and prototype keys', undefined, { body: JSON.stringify(base).replace(/^\{/, '{"__proto__":{"isAdmin":true},"constructor":{"prototype":{"x":1}},"extra":1,') });
      send('not JSON', undefined, { body: '{"unterminated": ' });
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
        // Strings one level down too (options, size, waterMark, …).
        const child = minimal(s);
        if (child && typeof child === 'object' && !Array.isArray(child)) {
          for (const inner of Object.keys(resolveRef(doc, s).properties ?? {})) {
            for (const nasty of NASTY.slice(0, 4)) send(`${name}.${inner} nasty`, { ...base, [name]: { ...(child as object), [inner]: nasty } });
          }
        }
      }
    }
    for (const q of op.query) {
      for (const v of QUERY_VALUES) probes.push({ method: op.method, url: `${url}?${q.name}=${encodeURIComponent(v)}`, key: mine.key, why: `query ${q.name}` });
      probes.push({ method: op.method, url: `${url}?${q.name}=a&${q.name}=b`, key: mine.key, why: `query ${q.name} repeated` });
    }
    if (/\{\w+\}/.test(op.path)) {
      probes.push({ method: op.method, url: fill(op.path, their), key: mine.key, why: 'another organization\'s id', body: base && JSON.stringify(base), expectNot2xx: true });
      for (const garbage of ['%00', '..', 'x'.repeat(3000), 'ΩΩ', '1 OR 1=1', '00000000-0000-0000-0000-000000000000']) {
        probes.push({ method: op.method, url: fill(op.path, garbage), key: mine.key, why: `id ${garbage.slice(0, 10)}`, body: base && JSON.stringify(base) });
      }
    }
    // Case-changed: never a route, so never a success (and never a way around a rate limit).
    probes.push({ method: op.method, url: url.replace(/[a-z]/g, (c, i: number) => (i % 2 ? c.toUpperCase() : c)), key: mine.key, why: 'case-changed path', body: base && JSON.stringify(base), expectNot2xx: true });
    probes.push({ method: 'PATCH', url, key: mine.key, why: 'undocumented method', expectNot2xx: true });
  }
  t.log(`${probes.length} requests over ${ops.length} operations`);
  t.true(probes.length < 3000, 'bounded');

  const failures: string[] = [];
  const limited = (url: string) => /^\/api\/(uploads|organizations\/social-posts)(\/|\?|$)/.test(url);
  const statuses = new Map<number, number>();
  let next = 0;
  const worker = async () => {
    while (next < probes.length) {
      const p = probes[next++]!;
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (p.key) headers.authorization = `Bearer ${p.key}`;
      let res: Response;
      try {
        res = await fetch(cluster.app.httpUrl + p.url, { method: p.method, headers, body: p.body });
      } catch (err) {
        failures.push(`${p.method} ${p.url.slice(0, 80)} (${p.why}): no answer (${(err as Error).message})`);
        continue;
      }
      const text = await res.text();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const where = `${p.method} ${p.url.slice(0, 80)} (${p.why}) -> ${res.status}`;
      if (res.status >= 500) { failures.push(`${where}: ${text.slice(0, 200)}`); continue; }
      if (p.expectNot2xx && res.status < 300) failures.push(`${where}: expected a refusal`);
      if (res.status >= 400) {
        let body: any;
        try { body = JSON.parse(text); } catch { /* checked below */ }
        if (typeof body?.error !== 'string' || typeof body?.message !== 'string') failures.push(`${where}: not a JSON error: ${text.slice(0, 120)}`);
      } else if (res.status < 300 && p.key === mine.key && limited(p.url) && !res.headers.get('ratelimit-limit')) {
        failures.push(`${where}: a limited route answered without its rate limit`);
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  t.log('answers by status', Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])));
  // The sweep reached past authentication and validation, not only to the first refusal.
  t.true((statuses.get(200) ?? 0) + (statuses.get(201) ?? 0) > 50, 'many successes');
  t.true((statuses.get(400) ?? 0) > 300, 'many validation refusals');
  t.deepEqual(failures, [], failures.slice(0, 40).join('\n'));

  // Nothing of the other organization was touched.
  t.truthy(await cluster.app.store.stat(their.fileKey));
  for (const [p, id] of [['/api/jobs', their.jobId], ['/api/render', their.renderId], ['/api/uploads/files', their.fileId], ['/api/probes', their.probeId]] as const) {
    t.is((await cluster.api('GET', `${p}/${id}`, { key: theirs.key })).status, 200, `${p} of the other organization still there`);
  }
  t.is((await cluster.api('GET', '/api/organizations/brandings', { key: theirs.key })).body.length ?? (await cluster.api('GET', '/api/organizations/brandings', { key: theirs.key })).body.brandings?.length, 1);
});
