// Issue 37 item 7: the OpenAPI document cannot drift from what is served. /openapi.json is the
// document `npm run openapi` builds offline (what the lint checks and the client types come from),
// and every operation it lists is called through the client generated from it (openapi-typescript
// types + openapi-fetch), each answering with a status the document lists for that operation.
import test from 'ava';
import { Ajv2020 } from 'ajv/dist/2020.js';
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from '../common/src/openapi/generated.js';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { insertFiles } from '../coordinator/src/files/files.js';
import { createUser } from '../coordinator/src/tenancy/tenancy.js';
import { setPassword } from '../coordinator/src/tenancy/sessions.js';
import { buildOpenApiDocument, generateTypes } from '../scripts/openapi.js';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

type MediaTypes = Record<string, { schema?: Record<string, unknown> }>;
type Doc = {
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, { content?: MediaTypes; $ref?: string }> }>>;
  servers: unknown[];
  components: { schemas: Record<string, unknown> };
};

let cluster: TestCluster;
test.before(async () => {
  cluster = await startCluster('openapi_client');
});
test.after.always(() => cluster?.close());

const withoutServers = ({ servers: _, ...rest }: Record<string, unknown>) => rest;

test('the served /openapi.json is the document the lint checks, and the committed client types are generated from it', async (t) => {
  const served = (await cluster.api('GET', '/openapi.json')).body as Record<string, unknown>;
  const built = buildOpenApiDocument();
  t.deepEqual(withoutServers(served), withoutServers(built));
  t.is((served as Doc).servers.length, 1);
  const typesPath = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../common/src/openapi/generated.ts');
  t.is(await readFile(typesPath, 'utf8'), await generateTypes(built), 'run npm run openapi');
});

test('every operation, called through the generated typed client, answers with a status its document lists, a success with a body that fits its schema', async (t) => {
  const doc = (await cluster.api('GET', '/openapi.json')).body as Doc;
  const { org, key } = await cluster.org({ plan: 'business', credits: 1000 });
  const orgId = org.id;
  const answered = new Map<string, number>();
  const bodies: Array<{ op: string; status: number; body: Promise<unknown> }> = [];
  const record: Middleware = {
    onResponse({ request, response, schemaPath }) {
      const op = `${request.method.toLowerCase()} ${schemaPath}`;
      answered.set(op, response.status);
      if (response.status < 300 && response.headers.get('content-type')?.startsWith('application/json'))
        bodies.push({ op, status: response.status, body: response.clone().json() });
      return undefined;
    },
  };
  const baseUrl = cluster.app.httpUrl;
  const api = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${key}` } });
  api.use(record);

  // Fixtures: a completed job, a stored image, a user with a password (sessions, API keys).
  const jobId = await insertCompletedJob(cluster.app, {
    organizationId: orgId,
    words: [
      { text: 'hello', start: 0.5, end: 0.9 },
      { text: 'world', start: 1.0, end: 1.4 },
    ],
    shorts: [
      { startTime: 0, endTime: 2 },
      { startTime: 2, endTime: 4 },
    ],
    durationSec: 10,
  });
  const [fileId] = await cluster.app.db.tx((c) =>
    insertFiles(c, [{ organizationId: orgId, name: 'logo.png', type: 'image', sizeBytes: 10, objectKey: `orgs/${orgId}/logo.png` }]),
  );
  const email = `u${Math.random().toString(36).slice(2)}@client.test`;
  const user = await createUser(cluster.app.db, { email, organizationId: orgId, role: 'owner' });
  await setPassword(cluster.app.db, user.id, 'correct horse battery staple');
  const asUser = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${await cluster.app.signer.issue(user.id)}` } });
  asUser.use(record);
  const jobPath = { path: { jobId } };

  // Probes
  const probe = await api.POST('/api/probes', { body: { url: 'https://videos.example.com/talk.mp4' } });
  await api.GET('/api/probes/{id}', { params: { path: { id: probe.data?.id ?? 'missing' } } });

  // Jobs
  const created = await api.POST('/api/jobs', { body: { functionName: 'VideoShorts', fileUrl: 'https://videos.example.com/talk.mp4' } });
  t.is(created.response.status, 201, JSON.stringify(created.error));
  const newJob = created.data!.id;
  await api.GET('/api/jobs', { params: { query: { limit: '5', status: 'all' } } });
  await api.GET('/api/jobs/{jobId}', { params: jobPath });
  const job = await asUser.GET('/api/jobs/{jobId}', { params: { ...jobPath, query: { organizationId: orgId } } });
  const revision = job.data && 'jobId' in job.data ? (job.data.data?.transcription?.revision ?? 0) : 0;
  await api.PATCH('/api/jobs/{jobId}/transcription', {
    params: jobPath,
    body: { revision, edits: [{ op: 'replace', index: 1, text: 'there' }] },
  });
  const added = await api.POST('/api/jobs/{jobId}/shorts', {
    params: jobPath,
    body: { revision: 0, title: 'Added', startTime: 4, endTime: 6 },
  });
  await api.PATCH('/api/jobs/{jobId}/shorts/{shortId}', {
    params: { path: { jobId, shortId: '0' } },
    body: { revision: added.data?.revision ?? 1, title: 'Renamed' },
  });
  await api.PUT('/api/jobs/{jobId}/shorts/{shortId}/framing', {
    params: { path: { jobId, shortId: '0' } },
    body: { revision: (added.data?.revision ?? 1) + 1, overrides: [{ start: 1, end: 2, kind: 'layout', layout: 'fit' }] },
  });
  await api.DELETE('/api/jobs/{jobId}/shorts/{shortId}', {
    params: { path: { jobId, shortId: '2' }, query: { revision: (added.data?.revision ?? 1) + 2 } },
  });
  await api.POST('/api/jobs/{jobId}/retry', { params: jobPath, body: {} });
  await api.POST('/api/jobs/{jobId}/cancel', { params: { path: { jobId: newJob } }, body: {} });

  // Render and captions
  await api.POST('/api/render/caption-position', { body: { id: jobId, target: 0 } });
  const render = await api.POST('/api/render', { body: { id: jobId, target: 0 } });
  t.is(render.response.status, 201, JSON.stringify(render.error));
  const renderId = render.data!.renderId;
  await api.GET('/api/render/{renderId}', { params: { path: { renderId } } });
  await api.GET('/api/jobs/{jobId}/renders', { params: jobPath });
  const shortPath = { path: { jobId, shortId: '0' } };
  await api.GET('/api/jobs/{jobId}/shorts/{shortId}/captions.srt', { params: shortPath, parseAs: 'text' });
  await api.GET('/api/jobs/{jobId}/shorts/{shortId}/captions.vtt', { params: shortPath, parseAs: 'text' });
  await api.GET('/api/jobs/{jobId}/shorts/{shortId}/captions.json', { params: shortPath });
  await api.GET('/api/render/{renderId}/captions.srt', { params: { path: { renderId } }, parseAs: 'text' });
  await api.GET('/api/render/{renderId}/captions.vtt', { params: { path: { renderId } }, parseAs: 'text' });
  await api.GET('/api/render/{renderId}/captions.json', { params: { path: { renderId } } });
  for (const format of ['fcpxml', 'otio', 'edl'] as const) {
    await api.GET(`/api/jobs/{jobId}/shorts/{shortId}/timeline.${format}`, { params: shortPath, parseAs: 'text' });
    await api.GET(`/api/render/{renderId}/timeline.${format}`, { params: { path: { renderId } }, parseAs: 'text' });
  }
  await api.POST('/api/render/{renderId}/cancel', { params: { path: { renderId } }, body: {} });

  // Brand presets
  const preset = await api.POST('/api/organizations/brandings', {
    body: { name: 'Look', preset: 'VIRAL', options: { maxWordsInPage: 3 } },
  });
  t.is(preset.response.status, 200, JSON.stringify(preset.error));
  await api.GET('/api/organizations/brandings');
  await api.PUT('/api/organizations/brandings/{id}', { params: { path: { id: preset.data!.id } }, body: { isDefault: true } });
  await api.DELETE('/api/organizations/brandings/{id}', { params: { path: { id: preset.data!.id } } });

  // Files
  await api.GET('/api/uploads');
  await api.GET('/api/uploads/files', { params: { query: { type: 'image', limit: '10' } } });
  await api.GET('/api/uploads/files/{fileId}', { params: { path: { fileId: fileId! } } });
  await api.DELETE('/api/uploads/files/{fileId}', { params: { path: { fileId: fileId! } } });

  // Social posting
  const social = '/api/organizations/social-posts';
  await api.GET(`${social}/settings`);
  await api.PUT(`${social}/settings`, { body: { defaultTimezone: 'UTC' } });
  await api.GET(`${social}/profile`);
  const connect = await api.POST(`${social}/connect`, { body: { platform: 'youtube' } });
  const token = connect.data ? new URL(connect.data.access_url).searchParams.get('token') : null;
  await api.GET(`${social}/local/authorize`, { params: { query: { token: token ?? 'none' } }, parseAs: 'text' });
  await api.POST(`${social}/disconnect-account`, { body: { accountId: 'acc_missing' } });
  await api.GET(`${social}/next-slot`, { params: { query: { timezone: 'UTC' } } });
  const published = await api.POST(`${social}/publish`, {
    body: {
      postType: 'text',
      caption: 'Hello',
      platforms: ['linkedin'],
      publishMode: 'schedule',
      scheduledAt: new Date(Date.now() + 86_400_000).toISOString(),
    },
  });
  const postId = published.data?.socialPost.id ?? 'missing';
  await api.GET(`${social}/posts`);
  await api.POST(`${social}/edit`, { body: { postId, caption: 'Edited' } });
  await api.POST(`${social}/remove`, { body: { postId } });

  // Webhooks
  await api.GET('/api/webhooks/secret');
  await api.POST('/api/webhooks/secret/rotate', { body: {} });
  await api.GET('/api/jobs/{jobId}/webhook-deliveries', { params: jobPath });
  await api.POST('/api/jobs/{jobId}/webhook-deliveries/{deliveryId}/redeliver', {
    params: { path: { jobId, deliveryId: '0b5c8e0e-6f0a-4d7e-9a51-2f0d8c3b9e11' } },
    body: {},
  });

  // API keys and organization settings (a signed-in owner), sessions (the cookie)
  const issued = await asUser.POST('/api/organizations/api-keys', { body: { organizationId: orgId, name: 'client test' } });
  await asUser.GET('/api/organizations/api-keys', { params: { query: { organizationId: orgId } } });
  await asUser.DELETE('/api/organizations/api-keys/{keyId}', {
    params: { path: { keyId: issued.data?.id ?? 'missing' }, query: { organizationId: orgId } },
  });
  await asUser.GET('/api/organizations/settings', { params: { query: { organizationId: orgId } } });
  const anonymous = createClient<paths>({ baseUrl });
  anonymous.use(record);
  const signedIn = await anonymous.POST('/api/session', { body: { email, password: 'correct horse battery staple' } });
  t.is(signedIn.response.status, 200, JSON.stringify(signedIn.error));
  const cookie = signedIn.response.headers.getSetCookie()[0]!.split(';')[0]!;
  const withCookie = createClient<paths>({ baseUrl, headers: { cookie, 'x-csrf-token': signedIn.data!.csrfToken } });
  withCookie.use(record);
  await withCookie.GET('/api/session');
  // Auto-archive days are the web application's: only a studio session changes them.
  await withCookie.PUT('/api/organizations/settings', { body: { organizationId: orgId, retentionDays: 30 } });
  await withCookie.DELETE('/api/session');
  await asUser.DELETE('/api/sessions');

  // Last: the job goes with its files.
  await api.DELETE('/api/jobs/{jobId}', { params: { path: { jobId: newJob } } });

  const problems: string[] = [];
  let successes = 0;
  for (const [p, operations] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(operations)) {
      const status = answered.get(`${method} ${p}`);
      if (status === undefined) {
        problems.push(`${method} ${p} (${op.operationId}) was not called through the client: add it to this test`);
        continue;
      }
      const listed = Object.keys(op.responses);
      if (!listed.includes(String(status)) && !listed.includes(`${String(status)[0]}XX`))
        problems.push(`${method} ${p} answered ${status}, which its document does not list (${listed.join(', ')})`);
      if (status < 300) successes++;
    }
  }
  // Each JSON success body fits the schema its document gives it (named schemas resolved in place).
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  let checked = 0;
  for (const { op, status, body } of bodies) {
    const [method, p] = op.split(' ') as [string, string];
    const schema = doc.paths[p]?.[method]?.responses[String(status)]?.content?.['application/json']?.schema;
    if (!schema) continue;
    checked++;
    const validate = ajv.compile({ ...schema, components: doc.components });
    if (!validate(await body)) problems.push(`${op} ${status}: its body does not fit its schema: ${ajv.errorsText(validate.errors)}`);
  }
  t.true(checked >= 30, `${checked} success bodies checked against their schemas`);
  t.log(
    'not 2xx:',
    [...answered].filter(([, s]) => s >= 300).map(([op, s]) => `${op} ${s}`),
  );
  t.deepEqual(problems, []);
  t.true(successes >= answered.size * 0.8, `${successes} of ${answered.size} operations succeeded`);
});
