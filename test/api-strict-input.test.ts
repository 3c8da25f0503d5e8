// Issue 37 item 4, strict input, through the public HTTP API: a JSON body field the route does not
// know is a 400 naming it (at any depth), a body that is not JSON is a 415, and neither creates
// anything; while every field the contract names for a request (parsed out of the contract's own
// markdown, so a field the contract adds cannot be missed here) is accepted.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { insertFiles } from '../coordinator/src/files/files.js';

const CONTRACT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../shared/spec/video-shorts-api.md');
const SOCIAL = '/api/organizations/social-posts';

let cluster: TestCluster;
let contract: string;
test.before(async () => {
  contract = await readFile(CONTRACT, 'utf8');
  cluster = await startCluster('api_strict_input');
});
test.after.always(() => cluster?.close());

// ---- reading the contract -----------------------------------------------------------------------

/** The text under a heading (up to the next heading of the same or a higher level). */
function section(heading: string): string {
  const lines = contract.split('\n');
  const start = lines.findIndex((l) => /^#+ /.test(l) && l.replace(/^#+ /, '').startsWith(heading));
  if (start < 0) throw new Error(`no section "${heading}" in the contract`);
  const level = lines[start]!.match(/^#+/)![0].length;
  const end = lines.findIndex((l, i) => i > start && /^#+ /.test(l) && l.match(/^#+/)![0].length <= level);
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/** Rows of the first table after `after` (or of the text's first table): arrays of cells. */
function table(text: string, after = ''): string[][] {
  const from = after ? text.indexOf(after) : 0;
  if (from < 0) throw new Error(`no "${after}" in the section`);
  const rows: string[][] = [];
  let inTable = false;
  for (const line of text.slice(from).split('\n')) {
    if (line.startsWith('|')) {
      inTable = true;
      rows.push(
        line
          .slice(1, -1)
          .split('|')
          .map((c) => c.trim()),
      );
    } else if (inTable) break;
  }
  return rows.slice(2); // header and separator
}

/** A table's first column as field names ("left, top, width" is three). */
const tableFields = (rows: string[][]): string[] =>
  rows.flatMap((r) => r[0]!.split(',').map((f) => f.replace(/`/g, '').trim())).filter((f) => /^[\w.[\]]+$/.test(f));

/** The backticked names of a sentence, leaving out what sits in parentheses (values, types). */
function proseFields(text: string): string[] {
  let s = text;
  for (let i = 0; i < 5; i++) s = s.replace(/\([^()]*\)/g, '');
  return [...s.matchAll(/`([A-Za-z][\w.]*)`/g)].map((m) => m[1]!);
}

/** The text after `marker` up to `until` (exclusive). */
function between(text: string, marker: string, until: string): string {
  const at = text.indexOf(marker);
  if (at < 0) throw new Error(`no "${marker}" in the contract`);
  const rest = text.slice(at + marker.length);
  const end = rest.indexOf(until);
  return end < 0 ? rest : rest.slice(0, end);
}

// ---- building bodies from field names --------------------------------------------------------

/** Sets `a.b[].c` (arrays of one item) in `target`. */
function setPath(target: Record<string, unknown>, dotted: string, value: unknown): void {
  const parts = dotted.split('.');
  let at: Record<string, unknown> = target;
  for (const [i, raw] of parts.entries()) {
    const isArray = raw.endsWith('[]');
    const key = raw.replace('[]', '');
    const last = i === parts.length - 1;
    if (isArray) {
      if (last) {
        at[key] = value;
        continue;
      }
      const arr = (Array.isArray(at[key]) ? at[key] : (at[key] = [])) as Array<Record<string, unknown>>;
      if (!arr.length) arr.push({});
      at = arr[0]!;
    } else if (last) {
      // A container named before its members keeps them.
      if (!(key in at) || typeof value !== 'object' || value === null) at[key] = value;
    } else {
      if (typeof at[key] !== 'object' || at[key] === null || Array.isArray(at[key])) at[key] = {};
      at = at[key] as Record<string, unknown>;
    }
  }
}

/** A body holding every field, each with its value from `values` (a missing value fails the test). */
function bodyOf(fields: string[], values: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const f of fields) {
    if (!(f in values)) throw new Error(`The test has no value for the contract field "${f}": add one`);
    setPath(body, f, values[f]);
  }
  return body;
}

const without = (body: Record<string, unknown>, ...keys: string[]) =>
  Object.fromEntries(Object.entries(body).filter(([k]) => !keys.includes(k)));

async function count(table: string, orgId: string): Promise<number> {
  return (await cluster.app.db.one<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE organization_id = $1`, [orgId]))!.n;
}

async function completedJob(orgId: string): Promise<string> {
  return insertCompletedJob(cluster.app, {
    organizationId: orgId,
    words: [
      { text: 'hello', start: 0.5, end: 0.9 },
      { text: 'world', start: 1.0, end: 1.4 },
    ],
    shorts: [{ startTime: 0, endTime: 2 }],
  });
}

/** The answer is no refusal of a field (a 400 naming an unknown one) and no fault. */
function notRefusedForAField(t: { true: (v: boolean, m?: string) => void }, r: { status: number; body: unknown }, what: string) {
  const message = (r.body as { message?: string } | null)?.message ?? '';
  t.true(r.status < 500 && !(r.status === 400 && /Unknown field/.test(message)), `${what}: ${r.status} ${JSON.stringify(r.body)}`);
}

// ---- unknown fields -----------------------------------------------------------------------------

test('a misspelt or unknown field is 400 naming it, at every depth, and creates nothing', async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro' });
  const job = { functionName: 'VideoShorts', fileUrl: 'https://videos.example.com/talk.mp4' };
  const refused = async (url: string, body: unknown, field: string, method = 'POST') => {
    const r = await cluster.api(method, url, { key, body });
    t.is(r.status, 400, `${field}: ${JSON.stringify(r.body)}`);
    t.like(r.body, { error: 'Bad Request', code: 'invalid_input', message: `Unknown field "${field}"` }, field);
  };

  await refused('/api/jobs', { ...job, predefinedshorts: [{ title: 'A', start: 0, end: 10 }] }, 'predefinedshorts');
  await refused('/api/jobs', { ...job, options: { foo: 1 } }, 'options.foo');
  await refused(
    '/api/jobs',
    { ...job, options: { predefinedShorts: [{ title: 'A', start: 0, end: 10, speed: 2 }] } },
    'options.predefinedShorts[0].speed',
  );
  t.is(await count('jobs', org.id), 0, 'no job was created');

  const jobId = await completedJob(org.id);
  await refused('/api/render', { id: jobId, target: 0, brandPreset: 'x' }, 'brandPreset');
  await refused('/api/render', { id: jobId, target: 0, size: { width: 720, height: 1280, depth: 3 } }, 'size.depth');
  await refused('/api/render', { id: jobId, target: 0, options: { maxWordsInPage: 3, colour: 'red' } }, 'options.colour');
  await refused(
    '/api/render',
    { id: jobId, target: 0, options: { waterMark: { left: '10px', rigth: '10px' } } },
    'options.waterMark.rigth',
  );
  t.is(await count('renders', org.id), 0, 'no render was created');

  await refused('/api/organizations/brandings', { name: 'Look', isdefault: true }, 'isdefault');
  await refused(
    '/api/organizations/brandings',
    { name: 'Look', options: { editing: { removeSilences: true, speed: 2 } } },
    'options.editing.speed',
  );
  t.is(await count('brand_presets', org.id), 0, 'no brand preset was created');

  await refused(`${SOCIAL}/publish`, { postType: 'text', caption: 'Hello', publishmode: 'publish_now' }, 'publishmode');
  await refused(`${SOCIAL}/settings`, { isEnabled: true, colour: 'blue' }, 'colour', 'PUT');
  await refused(`${SOCIAL}/settings`, { queueSlots: [{ dayOfWeek: 1, time: '09:00', zone: 'UTC' }] }, 'queueSlots[0].zone', 'PUT');
  t.is(await count('social_posts', org.id), 0, 'no post was created');
});

test('a body that is not JSON is 415 on every JSON route and creates nothing; uploads keep their own types', async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro' });
  const job = JSON.stringify({ functionName: 'VideoShorts', fileUrl: 'https://videos.example.com/talk.mp4' });
  const send = (url: string, type: string | undefined, body: string) =>
    fetch(cluster.app.httpUrl + url, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, ...(type ? { 'content-type': type } : {}) },
      // A Blob of no type sends no Content-Type at all (a string would be sent as text/plain).
      body: type ? body : new Blob([body]),
    });
  const bodies: Array<[string | undefined, string]> = [
    ['text/plain', job],
    ['text/plain;charset=UTF-8', job],
    ['application/xml', '<job><functionName>VideoShorts</functionName></job>'],
    ['text/xml', '<?xml version="1.0"?><job/>'],
    ['application/x-www-form-urlencoded', 'functionName=VideoShorts&fileUrl=https%3A%2F%2Fvideos.example.com%2Ftalk.mp4'],
    ['multipart/form-data; boundary=x', `--x\r\nContent-Disposition: form-data; name="functionName"\r\n\r\nVideoShorts\r\n--x--\r\n`],
    [undefined, 'functionName=VideoShorts'],
  ];
  for (const url of ['/api/jobs', '/api/organizations/brandings', `${SOCIAL}/publish`]) {
    for (const [type, body] of bodies) {
      const r = await send(url, type, body);
      const answer = (await r.json()) as { error: string; message: string; code: string };
      t.is(r.status, 415, `${url} ${type}`);
      t.is(answer.code, 'unsupported_media_type', `${url} ${type}`);
      t.is(answer.error, 'Unsupported Media Type');
      t.regex(answer.message, /Send Content-Type: application\/json with a JSON body/);
    }
  }
  t.is(await count('jobs', org.id), 0);
  t.is(await count('brand_presets', org.id), 0);
  t.is(await count('social_posts', org.id), 0);

  // JSON with a charset, or a +json type, is JSON; so is a body that plainly is JSON sent with no
  // Content-Type at all (curl -d without -H), which no HTML form can send.
  t.is((await send('/api/jobs', undefined, job)).status, 201);

  t.is((await send('/api/jobs', 'application/json; charset=utf-8', job)).status, 201);
  t.is((await send('/api/jobs', 'application/vnd.api+json', job)).status, 201);
  // Credentials still come first: without them any body is 401.
  const anonymous = await fetch(cluster.app.httpUrl + '/api/jobs', {
    method: 'POST',
    headers: { 'content-type': 'text/plain' },
    body: job,
  });
  t.is(anonymous.status, 401);
  // tus keeps its own content types: creation has no body, a PATCH sends application/offset+octet-stream.
  const tus = await fetch(cluster.app.httpUrl + '/api/uploads/tus', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'tus-resumable': '1.0.0',
      'upload-length': '4',
      'upload-metadata': `filename ${Buffer.from('a.mp4').toString('base64')},filetype ${Buffer.from('video/mp4').toString('base64')}`,
    },
  });
  t.is(tus.status, 201, await tus.text());
  const patch = await fetch(new URL(tus.headers.get('location')!, cluster.app.httpUrl), {
    method: 'PATCH',
    headers: {
      authorization: `Bearer ${key}`,
      'tus-resumable': '1.0.0',
      'upload-offset': '0',
      'content-type': 'application/offset+octet-stream',
    },
    body: 'ab',
  });
  t.is(patch.status, 204, await patch.text());
});

// ---- every contract field is accepted -----------------------------------------------------------

test('every field the contract names for a request is accepted (the fields parsed from the contract itself)', async (t) => {
  const { org, key } = await cluster.org({ plan: 'business', credits: 1000 });
  const jobId = await completedJob(org.id);
  // A logo already stored: `fileAppId` is preferred, so `waterMarkUrl` beside it is not fetched.
  const [logoId] = await cluster.app.db.tx((c) =>
    insertFiles(c, [{ organizationId: org.id, name: 'logo.png', type: 'image', sizeBytes: 10, objectKey: `orgs/${org.id}/logo.png` }]),
  );

  // 2.1 Job (create request), plus organizationId (section 4: in the body of POST with other credentials).
  const jobFields = [...tableFields(table(section('2.1 Job (create request)'))), 'organizationId'];
  t.true(
    ['functionName', 'name', 'youtubeVideoId', 'fileUrl', 'options.predefinedShorts[].end', 'webhook'].every((f) => jobFields.includes(f)),
    jobFields.join(),
  );
  const jobBody = bodyOf(jobFields, {
    functionName: 'VideoShorts',
    name: 'Every field',
    youtubeVideoId: 'dQw4w9WgXcQ',
    fileUrl: 'https://videos.example.com/talk.mp4',
    options: {},
    'options.predefinedShorts': [],
    'options.predefinedShorts[].title': 'Opening',
    'options.predefinedShorts[].start': 0,
    'options.predefinedShorts[].end': 30,
    webhook: 'https://hooks.example.com/shorts',
    organizationId: org.id,
  });
  // youtubeVideoId and fileUrl are alternatives: each body holds one of them.
  for (const body of [without(jobBody, 'fileUrl'), without(jobBody, 'youtubeVideoId')]) {
    const r = await cluster.api('POST', '/api/jobs', { key, body });
    t.is(r.status, 201, `POST /api/jobs ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
  }

  // 4.3 Render, its size and options (2.9: options structure, style items, director, waterMark,
  // the older `bottom` and the legacy keys).
  const render = section('4.3 Render');
  const renderRows = table(render);
  const renderFields = [...tableFields(renderRows), 'organizationId'];
  const sizeFields = proseFields(renderRows.find((r) => r[0] === 'size')!.at(-1)!).map((f) => `size.${f}`);
  const preset = section('2.9 Brand preset');
  const optionRows = table(preset, 'Options structure:');
  const optionFields = tableFields(optionRows);
  const styleFields = proseFields(optionRows.find((r) => r[0] === 'style')!.at(-1)!).filter((f) => f !== 'styles');
  const directorFields = proseFields(optionRows.find((r) => r[0] === 'director')!.at(-1)!);
  const waterMarkFields = [
    ...tableFields(table(preset, 'waterMark fields:')),
    ...proseFields(between(preset, 'older description also uses', ' and CSS')),
  ];
  t.deepEqual(sizeFields, ['size.width', 'size.height', 'size.name']);
  t.deepEqual(optionFields, ['maxWordsInPage', 'waterMark', 'style', 'director']);
  t.deepEqual([...new Set(styleFields)], ['property', 'value', 'active', 'past', 'duration']);
  t.deepEqual(directorFields, ['camera.facePaddingFactor', 'intelligence.maxSpeakersToFocus']);
  t.true(
    ['fileAppId', 'waterMarkUrl', 'left', 'top', 'width', 'opacity', 'blendMode', 'bottom'].every((f) => waterMarkFields.includes(f)),
    waterMarkFields.join(),
  );
  const styleState = { value: '#ffcc00', duration: 0.2 };
  const optionValues: Record<string, unknown> = {
    maxWordsInPage: 3,
    waterMark: {},
    style: [
      Object.fromEntries(
        styleFields
          .filter((f) => f !== 'duration')
          .map((f) => [f, ({ property: 'color', value: '#ffffff', active: styleState, past: styleState } as Record<string, unknown>)[f]]),
      ),
    ],
    director: {},
    'camera.facePaddingFactor': 1.5,
    'intelligence.maxSpeakersToFocus': 2,
  };
  const options = bodyOf(
    [...optionFields, ...directorFields.map((f) => `director.${f}`), ...waterMarkFields.map((f) => `waterMark.${f}`)],
    {
      ...optionValues,
      ...Object.fromEntries(directorFields.map((f) => [`director.${f}`, optionValues[f]])),
      'waterMark.fileAppId': logoId,
      'waterMark.waterMarkUrl': 'https://cdn.example.com/logo.png',
      'waterMark.left': '10px',
      'waterMark.top': '20px',
      'waterMark.width': '120px',
      'waterMark.opacity': '0.8',
      'waterMark.blendMode': 'multiply',
      'waterMark.bottom': 'calc(10% + 4px)',
    },
  );
  const brand = await cluster.api('POST', '/api/organizations/brandings', { key, body: { name: 'For renders' } });
  t.is(brand.status, 200);
  const renderBody = bodyOf([...renderFields, ...sizeFields], {
    id: jobId,
    target: 0,
    type: 'shortVideo',
    brandPresetId: brand.body.id,
    preset: 'VIRAL',
    size: {},
    'size.width': 1080,
    'size.height': 1920,
    'size.name': '9:16',
    options,
    organizationId: org.id,
  });
  const rendered = await cluster.api('POST', '/api/render', { key, body: renderBody });
  t.is(rendered.status, 201, `POST /api/render ${JSON.stringify(renderBody)}: ${JSON.stringify(rendered.body)}`);
  // The alias `styles` and the legacy `WaterMark`/`watermarkUrl` (2.9) are accepted too.
  const legacy = proseFields(between(preset, 'Legacy keys', ' are accepted'));
  t.deepEqual(legacy, ['WaterMark', 'watermarkUrl']);
  const legacyBody = {
    id: jobId,
    target: '0',
    options: { styles: options.style, [legacy[0]!]: { fileAppId: logoId, [legacy[1]!]: 'https://cdn.example.com/logo.png', left: '10px' } },
  };
  const legacyRender = await cluster.api('POST', '/api/render', { key, body: legacyBody });
  t.is(legacyRender.status, 201, JSON.stringify(legacyRender.body));

  // 4.4 Brand presets: POST and PUT bodies as the table words them, and PUT with every field of 2.9
  // (a client sending back the preset it read).
  const brandings = section('4.4 Brand presets');
  const postFields = proseFields(between(table(brandings).find((r) => r[0] === 'POST')![2]!, 'Body:', 'Response:'));
  // "Body: all fields optional (`organizationId`, `name`, ...)": here the names are the parenthesis.
  const putFields = [...between(table(brandings).find((r) => r[0] === 'PUT')![2]!, 'Body:', 'Response:').matchAll(/`(\w+)`/g)].map(
    (m) => m[1]!,
  );
  const resourceFields = tableFields(table(preset)).filter((f) => /^[a-z]/i.test(f));
  t.true(['name', 'description', 'preset', 'size', 'options', 'isDefault', 'organizationId'].every((f) => postFields.includes(f)));
  t.true(
    putFields.includes('isActive') && resourceFields.includes('createdAt') && resourceFields.includes('updatedAt'),
    resourceFields.join(),
  );
  const presetValues: Record<string, unknown> = {
    organizationId: org.id,
    id: brand.body.id,
    name: 'Every field',
    description: 'All of them',
    preset: 'VIRAL',
    size: { width: 1080, height: 1920, name: '9:16' },
    options,
    isActive: true,
    isDefault: true,
    createdAt: brand.body.createdAt,
    updatedAt: brand.body.updatedAt,
  };
  // isActive (2.9: "Set false to deactivate") is taken on create too, and honoured.
  const created = await cluster.api('POST', '/api/organizations/brandings', {
    key,
    body: bodyOf([...postFields, 'isActive'], { ...presetValues, isActive: false, isDefault: false }),
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  t.false(created.body.isActive);
  for (const fields of [putFields, resourceFields]) {
    const r = await cluster.api('PUT', `/api/organizations/brandings/${created.body.id}`, { key, body: bodyOf(fields, presetValues) });
    t.is(r.status, 200, `PUT ${fields.join()}: ${JSON.stringify(r.body)}`);
  }

  // 4.5 Social posting: settings (2.10 plus organizationId), connect, disconnect, publish, edit, remove.
  const settingsRows = table(section('2.10 Social settings'));
  const slotFields = proseFields(settingsRows.find((r) => r[0] === 'queueSlots')!.at(-1)!);
  t.deepEqual(slotFields, ['dayOfWeek', 'time']);
  const settingsBody = bodyOf([...tableFields(settingsRows), 'organizationId'], {
    isEnabled: true,
    approveApiPosts: false,
    defaultTimezone: 'Europe/Berlin',
    defaultPlatforms: ['youtube', 'tiktok'],
    queueSlots: [Object.fromEntries(slotFields.map((f) => [f, ({ dayOfWeek: 1, time: '09:00' } as Record<string, unknown>)[f]]))],
    maxPostsPerSlot: 2,
    maxShortsOfSameVideo: 3,
    maxShortsPerWeek: 10,
    minimumVideoDurationSeconds: 20,
    processOnlyPlaylistId: null,
    organizationId: org.id,
  });
  const settings = await cluster.api('PUT', `${SOCIAL}/settings`, { key, body: settingsBody });
  t.is(settings.status, 200, JSON.stringify(settings.body));

  const social = section('4.5 Social posting');
  const socialRows = table(social);
  const rowBody = (suffix: string) => proseFields(between(socialRows.find((r) => r[1] === suffix)![2]!, 'Body:', 'Response:'));
  const socialValues: Record<string, unknown> = {
    organizationId: org.id,
    platform: 'youtube',
    redirectUrl: 'https://studio.example.com/#/social',
    accountId: 'acc_missing',
    postId: '0b5c8e0e-6f0a-4d7e-9a51-2f0d8c3b9e11',
    jobId: 'provider-job-1',
  };
  const connect = await cluster.api('POST', `${SOCIAL}/connect`, { key, body: bodyOf(rowBody('/connect'), socialValues) });
  t.is(connect.status, 200, JSON.stringify(connect.body));
  notRefusedForAField(
    t,
    await cluster.api('POST', `${SOCIAL}/disconnect-account`, { key, body: bodyOf(rowBody('/disconnect-account'), socialValues) }),
    'disconnect',
  );

  const publishFields = tableFields(table(social, 'Publish body:'));
  t.true(
    [
      'postType',
      'caption',
      'platforms',
      'publishMode',
      'scheduledAt',
      'timezone',
      'videoUrl',
      'photoUrls',
      'documentUrl',
      'platformFields',
    ].every((f) => publishFields.includes(f)),
  );
  const publishValues: Record<string, unknown> = {
    organizationId: org.id,
    postType: 'video',
    caption: 'Three tips',
    platforms: ['youtube'],
    publishMode: 'schedule',
    scheduledAt: new Date(Date.now() + 86_400_000).toISOString(),
    timezone: 'UTC',
    videoUrl: 'https://videos.example.com/short.mp4',
    photoUrls: ['https://images.example.com/a.jpg'],
    documentUrl: 'https://docs.example.com/a.pdf',
    platformFields: { youtubeTitle: 'Three tips', youtubeVisibility: 'public' },
  };
  // The media fields go with their post types: each body holds one.
  const media = ['videoUrl', 'photoUrls', 'documentUrl'];
  for (const [postType, field, platforms] of [
    ['video', 'videoUrl', ['youtube']],
    ['photo', 'photoUrls', ['instagram']],
    ['document', 'documentUrl', ['linkedin']],
  ] as const) {
    const fields = publishFields.filter((f) => !media.includes(f) || f === field);
    const values = { ...publishValues, postType, platforms, platformFields: postType === 'video' ? publishValues.platformFields : {} };
    const r = await cluster.api('POST', `${SOCIAL}/publish`, { key, body: bodyOf(fields, values) });
    notRefusedForAField(t, r, `publish ${postType}`);
    if (postType === 'video') t.is(r.status, 201, JSON.stringify(r.body));
  }
  const editFields = proseFields(between(social, 'Edit body:', 'Response:'));
  t.deepEqual(editFields, ['postId', 'jobId', 'mode', 'scheduledAt', 'caption', 'organizationId']);
  notRefusedForAField(
    t,
    await cluster.api('POST', `${SOCIAL}/edit`, {
      key,
      body: bodyOf(editFields, { ...socialValues, mode: 'schedule', scheduledAt: publishValues.scheduledAt, caption: 'New caption' }),
    }),
    'edit',
  );
  notRefusedForAField(t, await cluster.api('POST', `${SOCIAL}/remove`, { key, body: bodyOf(rowBody('/remove'), socialValues) }), 'remove');
});
