import test from 'ava';
import http from 'node:http';
import sharp from 'sharp';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { createUser } from '../coordinator/src/tenancy/tenancy.js';
import { storeFile } from '../coordinator/src/files/store-file.js';

let cluster: TestCluster;
let server: http.Server;
let base: string;
let png: Buffer;

const PATH = '/api/organizations/brandings';

// An image host on 127.0.0.1 (the tests' FETCH_ALLOWLIST), answering whatever each case needs.
function imageHost(): http.RequestListener {
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    switch (url.pathname) {
      case '/logo.txt': // a real PNG behind a misleading name and content type
        res.writeHead(200, { 'content-type': 'text/plain' }).end(png);
        return;
      case '/page.png':
        res.writeHead(200, { 'content-type': 'image/png' }).end('<!DOCTYPE html><html><body>not an image</body></html>');
        return;
      case '/fake.png':
        res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.concat([png.subarray(0, 8), Buffer.alloc(64, 7)]));
        return;
      case '/huge.png':
        res
          .writeHead(200, { 'content-type': 'image/png', 'content-length': 10_000_001 })
          .end(Buffer.concat([png, Buffer.alloc(10_000_001 - png.length)]));
        return;
      case '/huge-chunked.png': {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.write(png);
        const chunk = Buffer.alloc(1_000_000);
        for (let i = 0; i < 10; i++) res.write(chunk);
        res.end(Buffer.alloc(1));
        return;
      }
      case '/script.svg':
        res.writeHead(200, { 'content-type': 'image/svg+xml' }).end(
          `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]>
           <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="40" height="20" onload="alert(1)">
             <script>alert(document.cookie)</script>
             <image xlink:href="http://169.254.169.254/latest/meta-data" width="10" height="10"/>
             <rect width="40" height="20" fill="#00ff00"/>
           </svg>`,
        );
        return;
      case '/missing.png':
        res.writeHead(404).end('no');
        return;
      case '/redirect':
        res.writeHead(302, { location: url.searchParams.get('to')! }).end();
        return;
      default:
        res.writeHead(404).end();
    }
  };
}

test.before(async () => {
  png = await sharp({ create: { width: 32, height: 16, channels: 4, background: '#3366ff' } })
    .png()
    .toBuffer();
  server = http.createServer(imageHost());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  cluster = await startCluster('brandings_api');
});
test.after.always(async () => {
  server?.closeAllConnections();
  server?.close();
  await cluster?.close();
});

const fileCount = async (orgId: string) =>
  (await cluster.app.db.one<{ n: number }>('SELECT count(*)::int AS n FROM files WHERE organization_id = $1', [orgId]))!.n as number;
const usedBytes = async (orgId: string) =>
  Number((await cluster.app.db.one<{ n: number }>('SELECT storage_used_bytes AS n FROM organizations WHERE id = $1', [orgId]))!.n);
const defaults = async (orgId: string) =>
  (await cluster.app.db.query<{ id: string }>('SELECT id FROM brand_presets WHERE organization_id = $1 AND is_default', [orgId])).map(
    (r) => r.id as string,
  );

test('create, list, update and delete a preset', async (t) => {
  const { key } = await cluster.org({ plan: 'free' });
  const created = await cluster.api('POST', PATH, {
    key,
    body: {
      name: 'Launch',
      description: 'For launch week',
      preset: 'viral',
      size: { width: 1080, height: 1080, name: '1:1' },
      options: { maxWordsInPage: 3 },
    },
  });
  t.is(created.status, 200);
  t.like(created.body, {
    name: 'Launch',
    description: 'For launch week',
    preset: 'VIRAL',
    size: { width: 1080, height: 1080, name: '1:1' },
    options: { maxWordsInPage: 3 },
    isActive: true,
    isDefault: false,
  });
  t.truthy(created.body.id);
  t.truthy(Date.parse(created.body.createdAt));
  t.truthy(Date.parse(created.body.updatedAt));

  const list = await cluster.api('GET', PATH, { key });
  t.is(list.status, 200);
  t.deepEqual(list.body, [created.body]);

  const updated = await cluster.api('PUT', `${PATH}/${created.body.id}`, {
    key,
    body: { name: 'Launch v2', isActive: false, description: null },
  });
  t.is(updated.status, 200);
  t.like(updated.body, { name: 'Launch v2', isActive: false, description: null, preset: 'VIRAL', options: { maxWordsInPage: 3 } });
  t.true(Date.parse(updated.body.updatedAt) >= Date.parse(created.body.updatedAt));

  const deleted = await cluster.api('DELETE', `${PATH}/${created.body.id}`, { key });
  t.is(deleted.status, 200);
  t.is(deleted.body.success, true);
  t.is(typeof deleted.body.message, 'string');
  t.deepEqual((await cluster.api('GET', PATH, { key })).body, []);
  const again = await cluster.api('DELETE', `${PATH}/${created.body.id}`, { key });
  t.is(again.status, 404);
  t.is(again.body.message, 'Brand preset not found for this organization');
});

test('validation: name required, built-in preset names only, options checked', async (t) => {
  const { org, key } = await cluster.org();
  const cases: Array<[unknown, RegExp]> = [
    [{}, /name is required/],
    [{ name: '   ' }, /name is required/],
    [{ name: 'x', preset: 'NOPE' }, /preset.*must be one of/],
    [{ name: 'x', size: { width: -1, height: 10 } }, /size/],
    [{ name: 'x', options: { maxWordsInPage: 0 } }, /maxWordsInPage/],
    [{ name: 'x', options: { waterMark: { fileAppId: 'f', blendMode: 'sparkle' } } }, /blendMode/],
    [{ name: 'x', options: { waterMark: { fileAppId: 'f', left: '10 px' } } }, /left/],
    [{ name: 'x', options: { waterMark: { left: '10px' } } }, /waterMarkUrl or a fileAppId/],
    [{ name: 'x', options: { waterMark: { fileAppId: 'not-a-file' } } }, /fileAppId does not name an image/],
  ];
  for (const [body, message] of cases) {
    const r = await cluster.api('POST', PATH, { key, body });
    t.is(r.status, 400, JSON.stringify(body));
    t.regex(r.body.message, message, JSON.stringify(body));
    t.truthy(r.body.error);
  }
  t.deepEqual((await cluster.api('GET', PATH, { key })).body, []);
  t.is(await fileCount(org.id), 0);
});

test('one default: a new default un-defaults the old one; delete of the default leaves none', async (t) => {
  const { org, key } = await cluster.org();
  const a = (await cluster.api('POST', PATH, { key, body: { name: 'A', isDefault: true } })).body;
  t.true(a.isDefault);
  const b = (await cluster.api('POST', PATH, { key, body: { name: 'B', isDefault: true } })).body;
  t.true(b.isDefault);
  t.deepEqual(await defaults(org.id), [b.id]);
  const c = (await cluster.api('POST', PATH, { key, body: { name: 'C' } })).body;
  t.false(c.isDefault);
  const promoted = await cluster.api('PUT', `${PATH}/${a.id}`, { key, body: { isDefault: true } });
  t.true(promoted.body.isDefault);
  t.deepEqual(await defaults(org.id), [a.id]);
  const list = (await cluster.api('GET', PATH, { key })).body as Array<{ id: string; isDefault: boolean }>;
  t.deepEqual(
    list.map((p) => [p.id, p.isDefault]),
    [
      [a.id, true],
      [b.id, false],
      [c.id, false],
    ],
  );
  await cluster.api('PUT', `${PATH}/${a.id}`, { key, body: { isDefault: false } });
  t.deepEqual(await defaults(org.id), []);
  await cluster.api('PUT', `${PATH}/${b.id}`, { key, body: { isDefault: true } });
  await cluster.api('DELETE', `${PATH}/${b.id}`, { key });
  t.deepEqual(await defaults(org.id), []);
  // Another organization's default is its own business.
  const other = await cluster.org();
  await cluster.api('POST', PATH, { key: other.key, body: { name: 'Theirs', isDefault: true } });
  await cluster.api('POST', PATH, { key, body: { name: 'Mine', isDefault: true } });
  t.is((await defaults(org.id)).length, 1);
  t.is((await defaults(other.org.id)).length, 1);
});

test('concurrent creates and updates with isDefault true leave exactly one default and never a 500', async (t) => {
  const { org, key } = await cluster.org();
  const results = await Promise.all(
    Array.from({ length: 12 }, (_, i) => cluster.api('POST', PATH, { key, body: { name: `P${i}`, isDefault: true } })),
  );
  t.deepEqual(
    results.map((r) => r.status),
    Array(12).fill(200),
  );
  t.is((await defaults(org.id)).length, 1);
  const ids = results.map((r) => r.body.id as string);
  const updates = await Promise.all(ids.map((id) => cluster.api('PUT', `${PATH}/${id}`, { key, body: { isDefault: true } })));
  t.deepEqual(
    updates.map((r) => r.status),
    Array(12).fill(200),
  );
  t.is((await defaults(org.id)).length, 1);
  // The database refuses a second default whatever the code does.
  await t.throwsAsync(cluster.app.db.query(`UPDATE brand_presets SET is_default = true WHERE organization_id = $1`, [org.id]), {
    message: /brand_presets_one_default/,
  });
});

test('legacy keys WaterMark, watermarkUrl and styles are stored normalised, on create and update', async (t) => {
  const { org, key } = await cluster.org();
  const logo = await storeFile(cluster.app, { organizationId: org.id, name: 'logo.png', source: png });
  const created = await cluster.api('POST', PATH, {
    key,
    body: {
      name: 'Legacy',
      options: {
        WaterMark: { fileAppId: logo.id, left: '10px', top: 'calc(5% + 4px)', opacity: '0.5', blendMode: 'multiply' },
        styles: [{ property: 'color', value: '#ffcc00' }],
      },
    },
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  t.deepEqual(created.body.options, {
    waterMark: { fileAppId: logo.id, left: '10px', top: 'calc(5% + 4px)', opacity: '0.5', blendMode: 'multiply' },
    style: [{ property: 'color', value: '#ffcc00' }],
  });
  const updated = await cluster.api('PUT', `${PATH}/${created.body.id}`, {
    key,
    body: {
      options: { WaterMark: { watermarkUrl: `${base}/logo.txt`, width: '120px' }, styles: [{ property: 'font-size', value: '70px' }] },
    },
  });
  t.is(updated.status, 200, JSON.stringify(updated.body));
  const o = updated.body.options;
  t.false('WaterMark' in o);
  t.false('styles' in o);
  t.false('watermarkUrl' in o.waterMark);
  t.like(o.waterMark, { waterMarkUrl: `${base}/logo.txt`, width: '120px', blendMode: 'normal' });
  t.truthy(o.waterMark.fileAppId);
  t.deepEqual(o.style, [{ property: 'font-size', value: '70px' }]);
  const stored = await cluster.app.db.one<{ options: Record<string, unknown> }>('SELECT options FROM brand_presets WHERE id = $1', [
    created.body.id,
  ]);
  t.deepEqual(stored!.options, o);
});

test('watermark import: only a URL becomes a stored image file, judged by its bytes and counted in storage', async (t) => {
  const { org, key } = await cluster.org();
  const r = await cluster.api('POST', PATH, {
    key,
    body: { name: 'Logo', options: { waterMark: { waterMarkUrl: `${base}/logo.txt`, left: '20px' } } },
  });
  t.is(r.status, 200, JSON.stringify(r.body));
  const fileAppId = r.body.options.waterMark.fileAppId;
  t.truthy(fileAppId);
  const file = await cluster.api('GET', `/api/uploads/files/${fileAppId}`, { key });
  t.is(file.status, 200);
  t.like(file.body, { type: 'image', size: png.length, tags: ['watermark'], name: 'logo.png' });
  t.deepEqual(Buffer.from(await (await fetch(file.body.url)).arrayBuffer()), png);
  t.is(await usedBytes(org.id), png.length);

  // Saving the same URL again (a client PUTting back what it read, or without the id) imports nothing.
  await cluster.api('PUT', `${PATH}/${r.body.id}`, { key, body: { options: r.body.options } });
  const again = await cluster.api('PUT', `${PATH}/${r.body.id}`, {
    key,
    body: { options: { waterMark: { waterMarkUrl: `${base}/logo.txt` } } },
  });
  t.is(again.body.options.waterMark.fileAppId, fileAppId);
  t.is(await fileCount(org.id), 1);

  // With a resolvable fileAppId the URL is not fetched at all.
  const both = await cluster.api('POST', PATH, {
    key,
    body: { name: 'Both', options: { waterMark: { fileAppId, waterMarkUrl: `${base}/missing.png` } } },
  });
  t.is(both.status, 200);
  t.is(both.body.options.waterMark.fileAppId, fileAppId);
  t.is(await fileCount(org.id), 1);
});

test('watermark import: an SVG is stored rasterised, with no script or external reference left', async (t) => {
  const { key } = await cluster.org();
  const r = await cluster.api('POST', PATH, { key, body: { name: 'Svg', options: { waterMark: { waterMarkUrl: `${base}/script.svg` } } } });
  t.is(r.status, 200, JSON.stringify(r.body));
  const file = await cluster.api('GET', `/api/uploads/files/${r.body.options.waterMark.fileAppId}`, { key });
  t.like(file.body, { type: 'image', name: 'script.png' });
  const bytes = Buffer.from(await (await fetch(file.body.url)).arrayBuffer());
  const meta = await sharp(bytes).metadata();
  t.is(meta.format, 'png');
  t.true(meta.width! > 0);
  t.false(bytes.includes('<script'));
  t.false(bytes.includes('169.254'));
});

test('watermark import refusals: each is a 400 naming its rule, and nothing is stored', async (t) => {
  const { org, key } = await cluster.org();
  const port = new URL(base).port;
  const cases: Array<[string, RegExp]> = [
    ['not a url', /invalid URL/],
    ['ftp://127.0.0.1/logo.png', /invalid URL/],
    [`http://user:pw@127.0.0.1:${port}/logo.txt`, /invalid URL/],
    [`http://localhost:${port}/logo.txt`, /blocked host/],
    ['http://10.0.0.1/logo.png', /blocked host/],
    ['http://192.168.1.10/logo.png', /blocked host/],
    ['http://169.254.169.254/latest/meta-data/', /blocked host/],
    [`http://[::1]:${port}/logo.txt`, /blocked host/],
    ['http://[fe80::1]/logo.png', /blocked host/],
    ['http://[::ffff:10.0.0.1]/logo.png', /blocked host/],
    ['http://167772161/logo.png', /blocked host/], // 10.0.0.1 as one decimal number
    ['http://2852039166/latest/meta-data/', /blocked host/], // 169.254.169.254
    ['http://0x0a000001/logo.png', /blocked host/],
    ['http://100.64.0.1/logo.png', /blocked host/],
    ['http://printer.local/logo.png', /blocked host/],
    ['http://metadata.google.internal/computeMetadata/v1/', /blocked host/],
    [`${base}/redirect?to=${encodeURIComponent('http://10.0.0.1/logo.png')}`, /blocked host/],
    [`${base}/redirect?to=${encodeURIComponent(`http://localhost:${port}/logo.txt`)}`, /blocked host/],
    [`${base}/redirect?to=${encodeURIComponent('http://169.254.169.254/latest/meta-data/')}`, /blocked host/],
    [`${base}/huge.png`, /too large/],
    [`${base}/huge-chunked.png`, /too large/],
    [`${base}/page.png`, /unsupported format/],
    [`${base}/fake.png`, /unsupported format/],
    [`${base}/missing.png`, /HTTP 404/],
  ];
  for (const [url, message] of cases) {
    const r = await cluster.api('POST', PATH, { key, body: { name: 'Refused', options: { waterMark: { waterMarkUrl: url } } } });
    t.is(r.status, 400, url);
    t.regex(r.body.message ?? '', message, url);
    t.is(typeof r.body.error, 'string', url);
  }
  // The same rules on update, through the legacy key.
  const preset = (await cluster.api('POST', PATH, { key, body: { name: 'Kept' } })).body;
  const upd = await cluster.api('PUT', `${PATH}/${preset.id}`, {
    key,
    body: { options: { WaterMark: { watermarkUrl: 'http://10.0.0.1/x.png' } } },
  });
  t.is(upd.status, 400);
  t.regex(upd.body.message, /blocked host/);
  t.deepEqual(
    (await cluster.api('GET', PATH, { key })).body.map((p: { name: string; options: unknown }) => [p.name, p.options]),
    [['Kept', {}]],
  );
  t.is(await fileCount(org.id), 0);
  t.is(await usedBytes(org.id), 0);
});

test('malformed preset ids are 404, NUL in a text field is 400, never a 500', async (t) => {
  const { key } = await cluster.org();
  for (const id of ['nope', '42', '%00', 'a%00b']) {
    for (const [method, body] of [
      ['PUT', { name: 'x' }],
      ['DELETE', undefined],
    ] as const) {
      const r = await cluster.api(method, `${PATH}/${id}`, { key, body });
      t.is(r.status, 404, `${method} ${id}`);
      t.is(r.body.message, 'Brand preset not found for this organization');
    }
  }
  for (const body of [{ name: 'a\u0000b' }, { name: 'ok', description: 'd\u0000' }]) {
    const r = await cluster.api('POST', PATH, { key, body });
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error, 'Bad Request');
  }
  t.deepEqual((await cluster.api('GET', PATH, { key })).body, []);
  // Reading one preset is not part of the contract: a JSON 405, like every other error.
  const one = await cluster.api('GET', `${PATH}/whatever`, { key });
  t.is(one.status, 405);
  t.like(one.body, { error: 'Method Not Allowed' });
});

test('another organization: its presets are 404 and invisible; a key naming another organization is 403', async (t) => {
  const a = await cluster.org();
  const b = await cluster.org();
  const theirs = (await cluster.api('POST', PATH, { key: b.key, body: { name: 'B only', isDefault: true } })).body;
  const theirLogo = await storeFile(cluster.app, { organizationId: b.org.id, name: 'b.png', source: png });

  t.deepEqual((await cluster.api('GET', PATH, { key: a.key })).body, []);
  for (const [method, body] of [
    ['PUT', { name: 'hijack', isDefault: true }],
    ['DELETE', undefined],
  ] as const) {
    const r = await cluster.api(method, `${PATH}/${theirs.id}`, { key: a.key, body });
    t.is(r.status, 404, method);
    t.is(r.body.message, 'Brand preset not found for this organization');
  }
  const usesTheirLogo = await cluster.api('POST', PATH, {
    key: a.key,
    body: { name: 'x', options: { waterMark: { fileAppId: theirLogo.id } } },
  });
  t.is(usesTheirLogo.status, 400);
  const still = (await cluster.api('GET', PATH, { key: b.key })).body;
  t.like(still[0], { id: theirs.id, name: 'B only', isDefault: true });

  const mine = (await cluster.api('POST', PATH, { key: a.key, body: { name: 'A' } })).body;
  const mismatches: Array<[string, string, unknown]> = [
    ['GET', `${PATH}?organizationId=${b.org.id}`, undefined],
    ['POST', PATH, { organizationId: b.org.id, name: 'x' }],
    ['PUT', `${PATH}/${mine.id}`, { organizationId: b.org.id, name: 'x' }],
    ['DELETE', `${PATH}/${mine.id}?organizationId=${b.org.id}`, undefined],
  ];
  for (const [method, url, body] of mismatches) {
    const r = await cluster.api(method, url, { key: a.key, body });
    t.is(r.status, 403, `${method} ${url}`);
    t.regex(r.body.message, /different organization/);
    t.is((await cluster.api(method, url, { body })).status, 401, `${method} ${url} without credentials`);
  }
  const user = await createUser(cluster.app.db, { email: `brand-${Date.now()}@example.com`, organizationId: a.org.id });
  const token = await cluster.app.signer.issue(user.id);
  const bearer = { authorization: `Bearer ${token}` };
  const missing = await cluster.api('GET', PATH, { headers: bearer });
  t.is(missing.status, 400);
  t.regex(missing.body.message, /organizationId is required/);
  const ok = await cluster.api('GET', `${PATH}?organizationId=${a.org.id}`, { headers: bearer });
  t.deepEqual(
    ok.body.map((p: { id: string }) => p.id),
    [mine.id],
  );
  t.is((await cluster.api('GET', `${PATH}?organizationId=${b.org.id}`, { headers: bearer })).status, 403);
  const created = await cluster.api('POST', PATH, { headers: bearer, body: { organizationId: a.org.id, name: 'by user' } });
  t.is(created.status, 200);
});

test('a watermark import that would exceed the storage quota is refused with fullStorage and leaves nothing', async (t) => {
  const { org, key } = await cluster.org({ plan: 'free' });
  await cluster.app.db.query('UPDATE organizations SET storage_used_bytes = $2 WHERE id = $1', [org.id, 100_000_000 - 10]);
  const r = await cluster.api('POST', PATH, { key, body: { name: 'Full', options: { waterMark: { waterMarkUrl: `${base}/logo.txt` } } } });
  t.is(r.status, 403);
  t.is(r.body.error, 'fullStorage');
  t.truthy(r.body.message);
  t.deepEqual((await cluster.api('GET', PATH, { key })).body, []);
  t.is(await fileCount(org.id), 0);
  const left: string[] = [];
  for await (const o of cluster.app.store.list(`orgs/${org.id}/`)) left.push(o.key);
  t.deepEqual(left, []);
});

test('the brand preset and files routes are in the OpenAPI document', async (t) => {
  const doc = (await cluster.api('GET', '/openapi.json')).body;
  t.truthy(doc.paths['/api/organizations/brandings'].get);
  t.truthy(doc.paths['/api/organizations/brandings'].post.requestBody);
  t.truthy(doc.paths['/api/organizations/brandings/{id}'].put);
  t.truthy(doc.paths['/api/organizations/brandings/{id}'].delete);
  t.truthy(doc.paths['/api/uploads'].get);
  const list = doc.paths['/api/uploads/files'].get;
  t.deepEqual(
    list.parameters
      .filter((p: { in: string }) => p.in === 'query')
      .map((p: { name: string }) => p.name)
      .sort(),
    ['limit', 'offset', 'organizationId', 'tags', 'type'],
  );
  t.truthy(doc.paths['/api/uploads/files/{fileId}'].get);
  t.truthy(doc.paths['/api/uploads/files/{fileId}'].delete);
});
