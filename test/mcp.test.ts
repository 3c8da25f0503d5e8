import test from 'ava';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { repoRoot } from '@shorts/common/paths';
import type { Word } from '@shorts/common/text/transcript';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { FakeAgent } from './helpers/fake-agent.js';
import { createUser } from '../coordinator/src/tenancy/tenancy.js';
import type { Parsed } from './helpers/parsed.js';

// The MCP server (docs/mcp.md) driven by the SDK's own client, over streamable HTTP at /mcp and over
// stdio: tools list, a job created through a tool and seen by the REST API, a bounded wait with
// progress notifications, shorts listed and edited, a render and its caption file links, social
// posting; a wrong key, another organization's job and bad input refused as the REST API refuses them.

let cluster: TestCluster;
/** A browser-based agent's page, allowed by CORS_ORIGINS. */
const AGENT_ORIGIN = 'https://agent.example.com';
const clients: Client[] = [];
test.before(async () => {
  cluster = await startCluster('mcp', { corsOrigins: AGENT_ORIGIN });
});
test.after.always(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await cluster?.close();
});

const WORDS: Word[] = [
  { text: 'the', start: 1.0, end: 1.2 },
  { text: 'quick', start: 1.2, end: 1.6 },
  { text: 'brown', start: 1.6, end: 2.0 },
  { text: 'fox.', start: 2.0, end: 2.5 },
  { text: 'later', start: 12, end: 12.5 },
];

async function overHttp(key: string): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  clients.push(client);
  const transport = new StreamableHTTPClientTransport(new URL(`${cluster.app.httpUrl}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return client;
}

async function overStdio(key: string): Promise<Client> {
  const client = new Client({ name: 'mcp-test-stdio', version: '1.0.0' });
  clients.push(client);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', path.join(repoRoot(), 'coordinator/src/mcp/stdio.ts')],
    env: { PATH: process.env.PATH ?? '', SHORTS_API_URL: cluster.app.httpUrl, SHORTS_API_KEY: key },
    cwd: repoRoot(),
    stderr: 'pipe',
  });
  await client.connect(transport);
  return client;
}

/** A tool's answer: its structured result, and whether it is a tool error. */
async function call(client: Client, name: string, args: Record<string, unknown>, onprogress?: (p: Progress) => void) {
  const res = await client.callTool({ name, arguments: args }, undefined, onprogress ? { onprogress, timeout: 60_000 } : undefined);
  const text = (res.content as Array<{ type: string; text?: string }>)[0]?.text ?? '';
  return { isError: res.isError === true, data: res.structuredContent as Parsed, text };
}

const NEW_JOB = { functionName: 'VideoShorts', fileUrl: 'http://127.0.0.1:9/talk.mp4', name: 'From an agent' };

// Serial, so that its agent leases this test's job and no other.
test.serial(
  'over HTTP: the tools with the routes’ schemas; a job created by a tool is the REST API’s; wait_for_job is bounded, reports progress and ends when the job settles',
  async (t) => {
    const { key } = await cluster.org();
    const client = await overHttp(key);

    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    for (const name of [
      'create_job',
      'get_job',
      'wait_for_job',
      'list_shorts',
      'edit_short',
      'set_framing',
      'render_short',
      'get_render',
      'get_render_exports',
      'get_short_captions',
      'post_to_social',
    ])
      t.true(names.includes(name), name);
    const createSchema = tools.find((tool) => tool.name === 'create_job')!.inputSchema as Parsed;
    // POST /api/jobs's own schema, less organizationId (the key names the organization).
    for (const field of ['functionName', 'youtubeVideoId', 'fileUrl', 'options', 'webhook'])
      t.truthy(createSchema.properties[field], field);
    t.falsy(createSchema.properties.organizationId);
    t.deepEqual(createSchema.required, ['functionName']);

    const created = await call(client, 'create_job', NEW_JOB);
    t.false(created.isError, created.text);
    const id = created.data.id as string;
    t.is(created.data.jobId, id);
    t.is(created.data.links.job, `${cluster.app.httpUrl}/api/jobs/${id}`);
    const rest = await cluster.api('GET', `/api/jobs/${id}`, { key });
    t.is(rest.status, 200);
    t.is(rest.body.title, 'From an agent');
    t.is(rest.body.status, 'PROCESSING');
    t.is(rest.body.source, 'API');
    t.true((await cluster.api('GET', '/api/jobs', { key })).body.data.some((j: Parsed) => j.id === id));

    // No agent runs here: the wait gives up after its bound, having told its progress.
    const seen: Progress[] = [];
    const started = Date.now();
    const waited = await call(client, 'wait_for_job', { jobId: id, timeoutSec: 2 }, (p) => seen.push(p));
    t.false(waited.isError, waited.text);
    t.is(waited.data.settled, false);
    t.is(waited.data.status, 'PROCESSING');
    t.true(Date.now() - started >= 1500 && Date.now() - started < 10_000, `waited ${Date.now() - started} ms`);
    t.true(seen.length >= 1);
    t.like(seen[0], { progress: 5, total: 100, message: 'initiating services' });

    // An agent takes the job: each stage it reports is a notification, and the wait ends when the job does.
    const agent = await new FakeAgent(cluster.app.grpcAddress, undefined, 'mcp').register(['analyze-video']);
    try {
      const task = await agent.lease(5000);
      t.is(task?.type, 'analyze-video');
      t.is(JSON.parse(task!.payload_json).jobId, id);
      const progress: Progress[] = [];
      const until = async (value: number) => {
        while (!progress.some((p) => p.progress === value)) await new Promise((r) => setTimeout(r, 50));
      };
      const settling = call(client, 'wait_for_job', { jobId: id, timeoutSec: 60 }, (p) => progress.push(p));
      await until(5);
      await agent.progress(task!.task_id, task!.lease_token, 0.1, 'downloading');
      await until(15);
      await agent.progress(task!.task_id, task!.lease_token, 0.3, 'transcribing');
      await until(30);
      await agent.fail(task!.task_id, task!.lease_token, 'the source could not be read', false);
      const settled = await settling;
      t.is(settled.data.settled, true);
      t.is(settled.data.status, 'FAILED');
      t.deepEqual(progress.map((p) => [p.progress, p.message]).slice(0, 3), [
        [5, 'initiating services'],
        [15, 'downloading video'],
        [30, 'transcribing'],
      ]);
      t.true(
        progress.every((p, i) => i === 0 || p.progress > progress[i - 1]!.progress),
        'each notification above the last, as MCP wants',
      );
      t.true(Date.now() - started < 30_000);
    } finally {
      agent.close();
    }
  },
);

test('over HTTP: shorts listed and edited, a short rendered, its SRT link served; a social post', async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro' });
  const jobId = await insertCompletedJob(cluster.app, {
    organizationId: org.id,
    words: WORDS,
    durationSec: 30,
    shorts: [{ startTime: 0.5, endTime: 8, title: 'Opening' }],
  });
  const client = await overHttp(key);

  const listed = await call(client, 'list_shorts', { jobId });
  t.false(listed.isError, listed.text);
  t.is(listed.data.status, 'COMPLETED');
  t.is(listed.data.shortsRevision, 0);
  t.is(listed.data.shorts.length, 1);
  t.like(listed.data.shorts[0], { id: '0', content: 'Opening', text: 'the quick brown fox.', startTime: 0.5, endTime: 8 });
  t.is(listed.data.shorts[0].captions.srt, `${cluster.app.httpUrl}/api/jobs/${jobId}/shorts/0/captions.srt`);

  const edited = await call(client, 'edit_short', { jobId, shortId: '0', revision: 0, title: 'The quick fox', endTime: 6 });
  t.false(edited.isError, edited.text);
  t.is(edited.data.revision, 1);
  const job = (await cluster.api('GET', `/api/jobs/${jobId}`, { key })).body;
  t.like(job.data.shorts[0], { content: 'The quick fox', endTime: 6 });
  t.is(job.data.shortsRevision, 1);
  // A stale revision is the route's 409.
  const stale = await call(client, 'edit_short', { jobId, shortId: 0, revision: 0, title: 'Again' });
  t.true(stale.isError);
  t.like(stale.data, { status: 409, code: 'conflict' });
  // Framing by hand: a layout over a span, served in the short's reframe.
  const framed = await call(client, 'set_framing', {
    jobId,
    shortId: '0',
    revision: 1,
    overrides: [{ start: 1, end: 3, kind: 'layout', layout: 'fit' }],
  });
  t.false(framed.isError, framed.text);
  t.is(framed.data.revision, 2);
  const reframed = (await cluster.api('GET', `/api/jobs/${jobId}`, { key })).body;
  t.deepEqual(reframed.data.shorts[0].reframe.overrides, [{ start: 1, end: 3, kind: 'layout', layout: 'fit' }]);

  const brand = await cluster.api('POST', '/api/organizations/brandings', {
    key,
    body: { name: 'Channel look', preset: 'VIRAL', options: { maxWordsInPage: 2 } },
  });
  t.is(brand.status, 200, JSON.stringify(brand.body));
  const presets = await call(client, 'list_brand_presets', {});
  t.deepEqual(
    presets.data.presets.map((p: Parsed) => p.id),
    [brand.body.id],
  );

  const rendered = await call(client, 'render_short', { id: jobId, target: 0, brandPresetId: brand.body.id });
  t.false(rendered.isError, rendered.text);
  const renderId = rendered.data.renderId as string;
  t.is((await cluster.api('GET', `/api/render/${renderId}`, { key })).body.type, 'queued');
  const status = await call(client, 'get_render', { renderId });
  t.like(status.data, { type: 'queued', status: 'QUEUED' });

  const exports = await call(client, 'get_render_exports', { renderId });
  t.false(exports.isError, exports.text);
  t.is(exports.data.video, null, 'no MP4 before the render is done');
  t.is(exports.data.captions.srt, `${cluster.app.httpUrl}/api/render/${renderId}/captions.srt`);
  const srt = await fetch(exports.data.captions.srt, { headers: { authorization: `Bearer ${key}` } });
  t.is(srt.status, 200);
  const text = await srt.text();
  // The brand preset's 2 words a page, the trimmed range: the render's own captions.
  t.regex(text, /^1\n00:00:00,500 --> [\d:,]+\nthe quick\n\n2\n[\d:,]+ --> [\d:,]+\nbrown fox\.\n/);
  t.false(text.includes('later'));

  const shortCaptions = await call(client, 'get_short_captions', { jobId, shortId: 0 });
  t.false(shortCaptions.isError, shortCaptions.text);
  const vtt = await fetch(shortCaptions.data.captions.vtt, { headers: { 'x-api-key': key } });
  t.regex(await vtt.text(), /^WEBVTT\n/);

  const posted = await call(client, 'post_to_social', {
    postType: 'video',
    caption: 'A quick fox',
    platforms: ['youtube'],
    videoUrl: 'https://cdn.example.com/fox.mp4',
  });
  t.false(posted.isError, posted.text);
  const posts = (await cluster.api('GET', '/api/organizations/social-posts/posts', { key })).body.posts;
  t.deepEqual(
    posts.map((p: Parsed) => p.id),
    [posted.data.socialPost.id],
  );
});

test('over stdio: the same tools against a coordinator’s REST API with the key from the environment', async (t) => {
  const { org, key } = await cluster.org();
  const client = await overStdio(key);
  t.true((await client.listTools()).tools.some((tool) => tool.name === 'render_short'));

  const created = await call(client, 'create_job', { ...NEW_JOB, name: 'Over stdio' });
  t.false(created.isError, created.text);
  t.is((await cluster.api('GET', `/api/jobs/${created.data.id}`, { key })).body.title, 'Over stdio');

  const jobId = await insertCompletedJob(cluster.app, {
    organizationId: org.id,
    words: WORDS,
    durationSec: 30,
    shorts: [{ startTime: 0.5, endTime: 8 }],
  });
  // The API-key form carries the shorts' revision, which edit_short names.
  t.is((await call(client, 'list_shorts', { jobId })).data.shortsRevision, 0);
  const rendered = await call(client, 'render_short', { id: jobId, target: '0', preset: 'DEFAULT' });
  t.false(rendered.isError, rendered.text);
  const exports = await call(client, 'get_render_exports', { renderId: rendered.data.renderId });
  const srt = await fetch(exports.data.captions.srt, { headers: { authorization: `Bearer ${key}` } });
  t.is(srt.status, 200);
  t.regex(await srt.text(), /^1\n00:00:00,500 --> .*\nthe quick brown fox\.\n/);

  // A wrong key reaches the API and comes back as its 401.
  const wrong = await overStdio('vsk_wrong');
  const refused = await call(wrong, 'get_job', { jobId });
  t.true(refused.isError);
  t.like(refused.data, { status: 401, error: 'Unauthorized', code: 'unauthorized' });
});

test('a wrong or missing API key is refused at /mcp, as on the REST API', async (t) => {
  const { key } = await cluster.org();
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  };
  const post = (headers: Record<string, string>) =>
    fetch(`${cluster.app.httpUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(initialize),
    });
  const wrong: Array<Record<string, string>> = [{}, { authorization: 'Bearer vsk_not_a_key' }, { 'x-api-key': 'vsk_not_a_key' }];
  for (const headers of wrong) {
    const res = await post(headers);
    t.is(res.status, 401, JSON.stringify(headers));
    t.like(await res.json(), { error: 'Unauthorized', code: 'unauthorized' });
  }
  // The same header as the REST API: X-API-Key works as Authorization does.
  t.is((await post({ 'x-api-key': key })).status, 200);
  await t.throwsAsync(() => overHttp('vsk_not_a_key'));
  // A user's token names no organization for the tools to act for.
  const { org } = await cluster.org();
  const user = await createUser(cluster.app.db, { email: `mcp-${Date.now()}@example.com`, organizationId: org.id, role: 'owner' });
  const asUser = await post({ authorization: `Bearer ${await cluster.app.signer.issue(user.id)}` });
  t.is(asUser.status, 403);
  t.like(await asUser.json(), { code: 'forbidden' });
  // A browser agent on a listed origin may send MCP's own header.
  const preflight = await fetch(`${cluster.app.httpUrl}/mcp`, {
    method: 'OPTIONS',
    headers: {
      origin: AGENT_ORIGIN,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type, mcp-protocol-version',
    },
  });
  t.is(preflight.status, 204);
  t.regex(preflight.headers.get('access-control-allow-headers') ?? '', /Mcp-Protocol-Version/);
  // Stateless: no stream to open.
  const get = await fetch(`${cluster.app.httpUrl}/mcp`, { headers: { authorization: `Bearer ${key}` } });
  t.is(get.status, 405);
  t.is(get.headers.get('allow'), 'POST');
  // Counted under its own route label, not as an unmatched path.
  const metrics = await (await fetch(`${cluster.app.httpUrl}/metrics`)).text();
  t.regex(metrics, /shorts_http_request_duration_seconds_count\{[^}]*route="\/mcp",status="401"\}/);
});

test("another organization's job and render are not found through MCP", async (t) => {
  const a = await cluster.org();
  const b = await cluster.org();
  const jobId = await insertCompletedJob(cluster.app, {
    organizationId: a.org.id,
    words: WORDS,
    durationSec: 30,
    shorts: [{ startTime: 0.5, endTime: 8 }],
  });
  const renderId = (await cluster.api('POST', '/api/render', { key: a.key, body: { id: jobId, target: 0 } })).body.renderId as string;
  t.truthy(renderId);
  const client = await overHttp(b.key);
  const attempts: Array<[string, Record<string, unknown>]> = [
    ['get_job', { jobId }],
    ['wait_for_job', { jobId, timeoutSec: 1 }],
    ['list_shorts', { jobId }],
    ['edit_short', { jobId, shortId: 0, revision: 0, title: 'Mine now' }],
    ['render_short', { id: jobId, target: 0 }],
    ['get_short_captions', { jobId, shortId: 0 }],
    ['get_render', { renderId }],
    ['get_render_exports', { renderId }],
  ];
  for (const [name, args] of attempts) {
    const res = await call(client, name, args);
    t.true(res.isError, name);
    t.like(res.data, { status: 404, code: 'not_found' }, name);
  }
  // Untouched, and still A's.
  const own = await call(await overHttp(a.key), 'list_shorts', { jobId });
  t.like(own.data.shorts[0], { content: 'Short 0' });
});

test('bad input is a tool error naming the field', async (t) => {
  const { key } = await cluster.org();
  const client = await overHttp(key);
  // Refused by the route's schema before any request.
  const typed = await call(client, 'create_job', { functionName: 'VideoShorts', fileUrl: 42 });
  t.true(typed.isError);
  t.regex(typed.text, /fileUrl/);
  const target = await call(client, 'render_short', { id: 'x', target: { short: 0 } });
  t.true(target.isError);
  t.regex(target.text, /target/);
  const wait = await call(client, 'wait_for_job', { jobId: 'x', timeoutSec: 100_000 });
  t.true(wait.isError);
  t.regex(wait.text, /timeoutSec/);
  // Refused by the route itself: its 400, message and code.
  const both = await call(client, 'create_job', { ...NEW_JOB, youtubeVideoId: 'dQw4w9WgXcQ' });
  t.true(both.isError);
  t.like(both.data, { status: 400, code: 'invalid_input' });
  t.regex(both.data.message, /youtubeVideoId/);
  t.regex(both.text, /^400 Bad Request: .*youtubeVideoId.* \(code invalid_input\)$/);
  const jobs = (await cluster.api('GET', '/api/jobs', { key })).body;
  t.is(jobs.total, 0, 'nothing was created');
});

test('hostile requests at /mcp answer a JSON-RPC error, a 4xx or a tool error, never a 5xx', async (t) => {
  const { key } = await cluster.org();
  const send = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${cluster.app.httpUrl}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body,
    });
  // A JSON-RPC error travels in a 200 or 4xx answer as the transport chooses; what matters is no 5xx.
  for (const body of ['{}', '[]', '"x"', 'null', '[1,2,3]', '{"jsonrpc":"2.0","id":1,"method":"tools/call"}']) {
    const res = await send(body);
    t.true(res.status < 500, `${body}: ${res.status}`);
  }
  // Not JSON at all: the REST API's own 400.
  for (const body of ['{"jsonrpc":"2.0"', 'x'.repeat(100)]) {
    const res = await send(body);
    t.is(res.status, 400, body.slice(0, 20));
    t.like(await res.json(), { code: 'invalid_input' });
  }
  t.true((await send('{}', { accept: 'text/html' })).status < 500);
  t.is((await send('x'.repeat(2_000_000))).status, 413);
  // Hostile tool arguments reach the API as any client's would: refused, no 5xx.
  const client = await overHttp(key);
  for (const jobId of ['\u0000', '../../etc/passwd', '%00%ZZ', 'Ω'.repeat(5000), "'; DROP TABLE jobs; --"]) {
    const res = await call(client, 'get_job', { jobId });
    t.true(res.isError);
    t.true(res.data.status >= 400 && res.data.status < 500, `${jobId.slice(0, 20)}: ${res.text}`);
  }
  const nul = await call(client, 'create_job', { functionName: 'VideoShorts', fileUrl: 'http://127.0.0.1:9/a.mp4', name: 'a\u0000b' });
  t.like(nul.data, { status: 400, code: 'invalid_input' });
});

test('idempotencyKey: create_job retried with the same key answers the first job and creates one, as the REST API does', async (t) => {
  const { key } = await cluster.org();
  const client = await overHttp(key);
  const args = { ...NEW_JOB, name: 'Once', idempotencyKey: 'mcp-retry-1' };
  const first = await call(client, 'create_job', args);
  const again = await call(client, 'create_job', args);
  t.false(again.isError, again.text);
  t.is(again.data.id, first.data.id);
  t.is((await cluster.api('GET', '/api/jobs', { key })).body.total, 1);
  const other = await call(client, 'create_job', { ...args, name: 'Another body' });
  t.true(other.isError);
  t.like(other.data, { status: 422, code: 'idempotency_key_reused' });
});
