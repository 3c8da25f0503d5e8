import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { storeFile } from '../coordinator/src/files/store-file.js';
import { rasteriseSvg } from '@shorts/common/media/image';

// A crafted SVG (a few elements under a blur and a dilation, at full canvas) keeps librsvg busy for
// minutes. Drawn in-process it held libuv's thread pool, which the local object store and DNS share
// with every request; now it is drawn in a child process that is killed at the time limit.
let cluster: TestCluster;
let server: http.Server;
let base: string;

const rects = Array.from(
  { length: 4 },
  (_, i) => `<rect x="${i}" y="${i}" width="2000" height="2000" fill="#a0${i}0f0" filter="url(#f)"/>`,
).join('');
const HEAVY_SVG =
  `<svg xmlns="http://www.w3.org/2000/svg" width="1024" height="1024"><defs><filter id="f">` +
  `<feGaussianBlur stdDeviation="60"/><feMorphology operator="dilate" radius="20"/></filter></defs>${rects}</svg>`;

test.before(async () => {
  cluster = await startCluster('svg_stall', { svgRasterTimeoutMs: 1500 });
  server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/svg+xml' }).end(HEAVY_SVG));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
test.after.always(async () => {
  server?.close();
  await cluster?.close();
});

test('heavy SVG watermarks are refused at the time limit while health checks and object reads answer first', async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro' });
  const stored = await storeFile(cluster.app, { organizationId: org.id, name: 'a.bin', source: Buffer.alloc(200_000, 5), type: 'video' });
  const objectUrl = (await cluster.app.urls.sign(stored.objectKey, 'GET')).url;

  const order: string[] = [];
  const imports = Array.from({ length: 4 }, (_, i) =>
    cluster
      .api('POST', '/api/organizations/brandings', {
        key,
        body: { name: `heavy-${i}`, options: { waterMark: { waterMarkUrl: `${base}/heavy-${i}.svg` } } },
      })
      .then((r) => {
        order.push('import');
        return r;
      }),
  );
  // Give the imports time to reach the rasteriser.
  await new Promise((r) => setTimeout(r, 300));
  const health = fetch(`${cluster.app.httpUrl}/healthz`).then((r) => {
    order.push('healthz');
    return r.status;
  });
  const object = fetch(objectUrl).then(async (r) => {
    const b = Buffer.from(await r.arrayBuffer());
    order.push('object');
    return [r.status, b.length];
  });
  const list = cluster.api('GET', '/api/uploads/files', { key }).then((r) => {
    order.push('files');
    return r.status;
  });

  t.is(await health, 200);
  t.deepEqual(await object, [200, 200_000]);
  t.is(await list, 200);
  const answers = await Promise.all(imports);
  t.deepEqual(order.slice(0, 3).sort(), ['files', 'healthz', 'object'], `order: ${order.join(', ')}`);
  for (const r of answers) {
    t.is(r.status, 400);
    t.regex(r.body.message, /Watermark import refused \(too complex\): the SVG image took longer than 1.5 s to draw/);
  }
  const files = await cluster.app.db.one<{ n: number }>(
    `SELECT count(*)::int AS n FROM files WHERE organization_id = $1 AND type = 'image'`,
    [org.id],
  );
  t.is(files!.n, 0, 'nothing was stored');
});

test('an SVG with a huge canvas is drawn at most 2048 pixels a side', async (t) => {
  const png = await rasteriseSvg(
    Buffer.from(
      '<svg xmlns="http://www.w3.org/2000/svg" width="200000" height="100000"><rect width="200000" height="100000" fill="#f00"/></svg>',
    ),
  );
  const sharp = (await import('sharp')).default;
  const meta = await sharp(png).metadata();
  t.is(meta.width, 2048);
  t.is(meta.height, 1024);
  const absurd = Buffer.from(
    '<svg xmlns="http://www.w3.org/2000/svg" width="100000000" height="100000000"><rect width="10" height="10"/></svg>',
  );
  await t.throwsAsync(rasteriseSvg(absurd), { message: /could not be drawn/ });
});
