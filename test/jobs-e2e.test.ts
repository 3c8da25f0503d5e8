import test from 'ava';
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { FFMPEG, serveFiles, type MediaServer } from './helpers/media.js';
import { makeTalkVideo } from './helpers/talk-video.js';
import { startWebhookReceiver } from './helpers/webhook-receiver.js';
import { matchWords, fliteAvailable, type Synthesised } from './transcribe-synth.js';
import { createUser } from '../coordinator/src/tenancy/tenancy.js';
import type { Parsed } from './helpers/parsed.js';

// Real Postgres, a real agent process, real ffmpeg and pocketsphinx on a flite-spoken video.

let cluster: TestCluster;
let media: MediaServer;
let talk: Synthesised & { videoPath: string };

test.before(async () => {
  if (!fliteAvailable()) throw new Error('flite is required (apt-get install flite)');
  cluster = await startCluster('jobs_e2e', { webhookRetryDelaySec: 1 });
  talk = await makeTalkVideo(cluster.dataDir);
  const html = path.join(cluster.dataDir, 'page.html');
  await writeFile(html, '<!doctype html><html><body>not a video</body></html>');
  media = await serveFiles(
    { 'talk.mp4': talk.videoPath, 'page.html': html },
    { redirects: { 'to-metadata': 'http://169.254.169.254/latest/meta-data', 'to-private-hook': 'http://10.0.0.7/hook' } },
  );
  await cluster.startAgent();
});

test.after.always(async () => {
  await media?.close();
  await cluster?.close();
});

const waitForJob = (key: string, id: string, seen?: number[]) => cluster.settledJob(key, id, { seen });

const orgRow = (id: string) =>
  cluster.app.db.one<{ credits: number; reserved: number; used: number }>(
    'SELECT credits, reserved_credits AS reserved, storage_used_bytes AS used FROM organizations WHERE id = $1',
    [id],
  );

test.serial('an automatic job: transcript with timings, shorts, cost, credits, files, signed webhook', async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro', credits: 10 });
  const hooks = await startWebhookReceiver(2);
  const created = await cluster.api('POST', '/api/jobs', {
    key,
    body: { functionName: 'VideoShorts', name: 'Language talk', fileUrl: media.url('talk.mp4'), webhook: hooks.url() },
  });
  t.is(created.status, 201);
  const seen: number[] = [];
  const job = await waitForJob(key, created.body.id, seen);
  t.is(job.status, 'COMPLETED', job.message);

  // Progress only moves forward through the contract's stage values.
  t.deepEqual(
    seen,
    [...seen].sort((a, b) => a - b),
  );
  t.true(
    seen.every((p) => [0, 5, 15, 30, 60, 80, 100].includes(p)),
    seen.join(','),
  );
  t.is(job.progress, 100);

  // API-key form.
  t.true(job.data.shorts.length >= 1);
  for (const s of job.data.shorts) {
    t.is(typeof s.id, 'string');
    t.true(s.endTime - s.startTime <= 90 && s.endTime > s.startTime);
    t.true(s.text.length > 0);
    t.truthy(s.content);
  }

  // Bearer form: transcription words within 0.3 s of the synthesised times.
  const user = await createUser(cluster.app.db, { email: `e2e-${org.id}@example.com`, organizationId: org.id });
  const token = await cluster.app.signer.issue(user.id);
  const detailed = await cluster.api('GET', `/api/jobs/${job.id}?organizationId=${org.id}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  t.is(detailed.status, 200);
  // The analysed source as the studio's player and jump-cut preview read it: size and frame rate.
  t.like(detailed.body.data.source, { width: 640, height: 360, fps: 25 });
  const words = detailed.body.data.transcription.words;
  const match = matchWords(talk.words, words);
  t.log(`recognised ${match.matched}/${talk.words.length} words, max start error ${match.maxError.toFixed(3)} s`);
  t.true(match.recall >= 0.7, `recall ${match.recall}`);
  t.true(match.within / match.matched >= 0.95, `within 0.3 s: ${match.within}/${match.matched}`);
  const shorts = detailed.body.data.shorts;
  shorts.forEach((s: Parsed, i: number) => {
    t.is(s.id, i);
    t.truthy(s.reason);
    t.true(Number.isInteger(s.startId) && Number.isInteger(s.endId) && s.endId >= s.startId);
    t.is(s.startTime <= words[s.startId].start + 0.5, true);
  });
  for (let i = 1; i < shorts.length; i++) t.true(shorts[i].startTime >= shorts[i - 1].endTime, 'shorts do not overlap');
  // Each short's crop path, the same in both forms, covering the short on the source's clock.
  shorts.forEach((s: Parsed, i: number) => {
    t.like(s.reframe, { sourceWidth: 640, sourceHeight: 360 }); // makeTalkVideo's default size
    t.true(s.reframe.keyframes.length >= 1);
    t.is(s.reframe.segments[0].start, s.startTime);
    t.is(s.reframe.segments.at(-1).end, s.endTime);
    t.deepEqual(job.data.shorts[i].reframe, s.reframe);
  });
  const crop = await fetch(shorts[0].cropFileUrl);
  t.is(crop.status, 200);
  const bytes = Buffer.from(await crop.arrayBuffer());
  t.is(bytes.subarray(4, 8).toString('ascii'), 'ftyp');

  // Cost: pro plan, 0.026 per minute, 0.30 minimum; charged once, reservation released.
  t.is(job.cost, 0.3);
  t.deepEqual(job.costBreakDown, { shortGen: Math.round((talk.durationSec / 60) * 0.026 * 100) / 100, youtubeProcessing: 0 });
  const after = await orgRow(org.id);
  t.is(after!.credits, 9.7);
  t.is(after!.reserved, 0);
  const ledger = await cluster.app.db.query<{ kind: string; amount: number }>(
    'SELECT kind, amount FROM credit_ledger WHERE job_id = $1 ORDER BY id',
    [job.id],
  );
  t.deepEqual(ledger, [
    { kind: 'reserve', amount: 0.3 },
    { kind: 'charge', amount: -0.3 },
  ]);

  // Files: the source and one crop per short, counted exactly in the quota.
  const files = await cluster.app.db.query<{ size: number; tags: string[] }>(
    'SELECT size_bytes AS size, tags FROM files WHERE job_id = $1',
    [job.id],
  );
  t.is(files.length, 1 + shorts.length);
  t.is(
    after!.used,
    files.reduce((n, f) => n + f.size, 0),
  );

  const list = await cluster.api('GET', '/api/jobs', { key });
  t.like(list.body.data[0], { id: job.id, status: 'COMPLETED', shortsCount: shorts.length, cost: 0.3, creditUsageStatus: 'ACTIVE' });

  // Webhook: failed twice, retried with backoff, delivered once accepted, every attempt recorded.
  // The receiver answers 200 before the coordinator records attempt 3: wait for the record.
  const attempts = await waitFor(
    async () => {
      const rows = await cluster.app.db.query<{ attempt: number; code: number | null; delivered: boolean }>(
        'SELECT attempt, status_code AS code, delivered FROM webhook_deliveries WHERE job_id = $1 ORDER BY id',
        [job.id],
      );
      return rows.some((r) => r.delivered) ? rows : undefined;
    },
    60_000,
    'webhook delivery recorded',
  );
  const ok = hooks.received.find((h) => h.status === 200)!;
  const sig = String(ok.headers['x-signature']);
  const [, ts, v1] = sig.match(/^t=(\d+),v1=([0-9a-f]{64})$/)!;
  const secret = (await cluster.app.db.one<{ s: string }>('SELECT webhook_secret AS s FROM organizations WHERE id = $1', [org.id]))!.s;
  t.is(createHmac('sha256', secret).update(`${ts}.${ok.body}`).digest('hex'), v1);
  const payload = JSON.parse(ok.body);
  t.like(payload, { event: 'job.completed', jobId: job.id, status: 'COMPLETED' });
  t.is(payload.data.data.shorts.length, shorts.length);
  t.deepEqual(
    hooks.received.map((h) => h.status),
    [500, 500, 200],
  );
  t.deepEqual(attempts, [
    { attempt: 1, code: 500, delivered: false },
    { attempt: 2, code: 500, delivered: false },
    { attempt: 3, code: 200, delivered: true },
  ]);
  await hooks.close();
});

test.serial('predefined shorts: exactly those, ids in start order, text from the transcript', async (t) => {
  const { key } = await cluster.org({ plan: 'free', credits: 1 });
  const predefinedShorts = [
    { title: 'Memory', start: talk.words[40]!.start - 0.2, end: talk.durationSec - 0.5 },
    { title: 'Practice', start: 0, end: 8 },
  ];
  const created = await cluster.api('POST', '/api/jobs', {
    key,
    body: { functionName: 'VideoShorts', fileUrl: media.url('talk.mp4'), options: { predefinedShorts } },
  });
  const job = await waitForJob(key, created.body.id);
  t.is(job.status, 'COMPLETED', job.message);
  t.deepEqual(
    job.data.shorts.map((s: { id: string; content: string }) => [s.id, s.content]),
    [
      ['0', 'Practice'],
      ['1', 'Memory'],
    ],
  );
  t.is(job.data.shorts[0].startTime, 0);
  t.is(job.data.shorts[0].endTime, 8);
  t.regex(job.data.shorts[0].text.toLowerCase(), /fastest way/);
  t.notRegex(job.data.shorts[0].text.toLowerCase(), /sleep/);
});

test.serial('failures end FAILED with an actionable message, release credits and keep no files', async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro', credits: 2 });
  const hooks = await startWebhookReceiver();
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ fileUrl: media.url('page.html'), webhook: hooks.url() }, /not a video|no video stream/i],
    [{ fileUrl: media.url('missing.mp4') }, /HTTP 404/],
    // Passes the edge (an allowlisted host) but redirects to the cloud metadata address.
    [{ fileUrl: media.url('to-metadata') }, /private|loopback|reserved/],
    [
      { fileUrl: media.url('talk.mp4'), options: { predefinedShorts: [{ title: 'Too late', start: 10, end: 80 }] } },
      /past the end of the video/,
    ],
  ];
  for (const [input, message] of cases) {
    const created = await cluster.api('POST', '/api/jobs', { key, body: { functionName: 'VideoShorts', ...input } });
    t.is(created.status, 201, JSON.stringify(created.body));
    const job = await waitForJob(key, created.body.id);
    t.is(job.status, 'FAILED');
    t.regex(job.message, message);
    t.is(job.cost, null);
  }
  const o = await orgRow(org.id);
  t.deepEqual(o, { credits: 2, reserved: 0, used: 0 });
  const list = await cluster.api('GET', '/api/jobs?status=FAILED', { key });
  t.is(list.body.total, 4);
  t.true(list.body.data.every((j: { creditUsageStatus: string }) => j.creditUsageStatus === 'RELEASED'));
  const leftovers: string[] = [];
  for await (const obj of cluster.app.store.list(`orgs/${org.id}/`)) leftovers.push(obj.key);
  t.deepEqual(leftovers, []);
  await waitFor(async () => hooks.received.length > 0, 30_000, 'failure webhook');
  t.like(JSON.parse(hooks.received[0]!.body), { event: 'job.failed', status: 'FAILED' });
  await hooks.close();
});

test.serial('a video the credits cannot pay for fails once its length is known, before transcription', async (t) => {
  // 20 minutes cost 0.60 on the free plan; the organization has 0.40 (enough for the 0.30 minimum).
  const long = path.join(cluster.dataDir, 'long-silent.mp4');
  await promisify(execFile)(FFMPEG, [
    '-y',
    '-hide_banner',
    '-loglevel',
    'error',
    '-f',
    'lavfi',
    '-i',
    'color=c=gray:s=64x64:r=1:d=1200',
    '-f',
    'lavfi',
    '-i',
    'anullsrc=r=8000:cl=mono',
    '-t',
    '1200',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-c:a',
    'aac',
    '-b:a',
    '8k',
    '-shortest',
    long,
  ]);
  const server = await serveFiles({ 'long.mp4': long });
  try {
    const { org, key } = await cluster.org({ plan: 'free', credits: 0.4 });
    const created = await cluster.api('POST', '/api/jobs', { key, body: { functionName: 'VideoShorts', fileUrl: server.url('long.mp4') } });
    t.is(created.status, 201, JSON.stringify(created.body));
    const job = await waitForJob(key, created.body.id);
    t.is(job.status, 'FAILED');
    t.regex(job.message, /Not enough credits for this video: 20\.0 minutes cost 0\.60 credits, 0\.40 available/);
    t.true(job.progress < 30, `failed before transcription (progress ${job.progress})`);
    t.deepEqual(await orgRow(org.id), { credits: 0.4, reserved: 0, used: 0 });
    const ledger = await cluster.app.db.query<{ kind: string; amount: number }>(
      'SELECT kind, amount FROM credit_ledger WHERE job_id = $1 ORDER BY id',
      [created.body.id],
    );
    t.deepEqual(
      ledger.map((r) => [r.kind, Number(r.amount)]),
      [
        ['reserve', 0.3],
        ['release', 0.3],
      ],
    );
    t.false(cluster.agents.some((a) => a.logs.some((l) => l.includes(created.body.id) && l.includes('"transcribed"'))));
  } finally {
    await server.close();
  }
});

test.serial('an agent killed mid-job: the job is re-leased and completes once', async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro', credits: 5 });
  await cluster.killAgents();
  const doomed = await cluster.startAgent();
  const created = await cluster.api('POST', '/api/jobs', { key, body: { functionName: 'VideoShorts', fileUrl: media.url('talk.mp4') } });
  await doomed.waitForLog(/"stage":"transcribing"/, 60_000);
  await doomed.kill('SIGKILL');
  await cluster.startAgent();
  await waitFor(async () => (await cluster.app.queue.tick()) > 0, 30_000, 'lease expiry');
  const job = await waitForJob(key, created.body.id);
  t.is(job.status, 'COMPLETED', job.message);
  const ledger = await cluster.app.db.query<{ kind: string }>(`SELECT kind FROM credit_ledger WHERE job_id = $1 ORDER BY id`, [job.id]);
  t.deepEqual(
    ledger.map((l) => l.kind),
    ['reserve', 'charge'],
  );
  const files = await cluster.app.db.query<{ id: string }>('SELECT id FROM files WHERE job_id = $1', [job.id]);
  t.is(files.length, 1 + job.data.shorts.length);
  t.is((await orgRow(org.id))!.credits, 4.7);
});

test.serial('private URLs are refused at the edge, and at delivery time when they only get there by redirect', async (t) => {
  const { key } = await cluster.org({ plan: 'pro', credits: 2 });
  for (const [field, url] of [
    ['fileUrl', 'http://169.254.169.254/x'],
    ['fileUrl', 'http://[::1]/a.mp4'],
    ['fileUrl', 'http://0xa9fea9fe/a.mp4'],
    ['webhook', 'http://10.0.0.7/hook'],
    ['webhook', 'http://printer.local/'],
  ]) {
    const body: Record<string, string> = { functionName: 'VideoShorts', fileUrl: media.url('talk.mp4'), [field!]: url! };
    const r = await cluster.api('POST', '/api/jobs', { key, body });
    t.is(r.status, 400, url);
    t.regex(r.body.message, new RegExp(`${field} must be a public URL`));
  }
  const created = await cluster.api('POST', '/api/jobs', {
    key,
    body: { functionName: 'VideoShorts', fileUrl: media.url('missing.mp4'), webhook: media.url('to-private-hook') },
  });
  const job = await waitForJob(key, created.body.id);
  t.is(job.status, 'FAILED');
  const attempts = await waitFor(
    async () => {
      const rows = await cluster.app.db.query<{ attempt: number; delivered: boolean; error: string }>(
        'SELECT attempt, delivered, error FROM webhook_deliveries WHERE job_id = $1',
        [job.id],
      );
      return rows.length ? rows : undefined;
    },
    30_000,
    'webhook attempt',
  );
  t.is(attempts.length, 1);
  t.false(attempts[0].delivered);
  // A webhook never follows a redirect, so the private address behind it is never even asked.
  t.regex(attempts[0].error, /redirecting to http:\/\/10\.0\.0\.7\/hook; webhooks do not follow redirects/);
  // A refusal is final: no retries pile up.
  await new Promise((r) => setTimeout(r, 3000));
  t.is((await cluster.app.db.query('SELECT 1 FROM webhook_deliveries WHERE job_id = $1', [job.id])).length, 1);
});
