import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { rasteriseSvg } from '@shorts/common/media/image';
import { sanitiseSvg } from '@shorts/common/media/svg-sanitise';

// Watermark SVGs are parsed as XML with namespaces: an href is an href whatever prefix binds the
// xlink namespace, and nothing that reaches outside the document survives to the rasteriser.
let cluster: TestCluster;
let server: http.Server;
let base: string;
let dir: string;
let redFile: string;
const requests: string[] = [];

const PATH = '/api/organizations/brandings';
// A 400x400 canvas: a blue square in the top-left quarter, and the referenced picture over the
// bottom-right quarter. Drawn, the picture would make that quarter red (not transparent).
const withExternalImage = (
  href: string,
) => `<svg xmlns="http://www.w3.org/2000/svg" xmlns:x="http://www.w3.org/1999/xlink" width="400" height="400">
  <rect width="200" height="200" fill="#0000ff"/>
  <image x:href="${href}" x="200" y="200" width="200" height="200" preserveAspectRatio="none"/>
</svg>`;
// librsvg draws a 20000x20000 pattern tile at full size: ~1.6 GB of pixels for a 2048-pixel logo.
const MEMORY_BOMB = `<svg xmlns="http://www.w3.org/2000/svg" width="2048" height="2048"><defs>
  <pattern id="p" width="20000" height="20000" patternUnits="userSpaceOnUse"><rect width="20000" height="20000" fill="red"/></pattern>
</defs><rect width="2048" height="2048" fill="url(#p)"/></svg>`;

test.before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'svg-sanitise-'));
  const red = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#ff0000' } })
    .png()
    .toBuffer();
  redFile = path.join(dir, 'red.png');
  await writeFile(redFile, red);
  server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/red.png') return res.writeHead(200, { 'content-type': 'image/png' }).end(red);
    if (url.pathname === '/http.svg')
      return res.writeHead(200, { 'content-type': 'image/svg+xml' }).end(withExternalImage(`${base}/red.png`));
    if (url.pathname === '/file.svg')
      return res.writeHead(200, { 'content-type': 'image/svg+xml' }).end(withExternalImage(`file://${redFile}`));
    if (url.pathname === '/bomb.svg') return res.writeHead(200, { 'content-type': 'image/svg+xml' }).end(MEMORY_BOMB);
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  cluster = await startCluster('svg_sanitise');
});
test.after.always(async () => {
  server?.close();
  await cluster?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('every external reference goes, whatever namespace prefix or element carries it; fragments stay', (t) => {
  const dirty = `<?xml version="1.0"?><?xml-stylesheet href="http://evil.example/s.css"?>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:x="http://www.w3.org/1999/xlink" xmlns:h="http://www.w3.org/1999/xhtml" width="20" height="20" onload="steal()">
  <style>@import url(http://evil.example/a.css); rect { fill: url("http://evil.example/p.svg#p"); stroke: u\\72l(file:///etc/passwd) } circle { fill: url(#g) }</style>
  <defs><linearGradient id="g"><stop offset="0" stop-color="red"/></linearGradient>
    <filter id="f"><feImage x:href="http://evil.example/fe.png"/><feImage href="file:///etc/hostname"/></filter></defs>
  <use x:href="http://evil.example/sprite.svg#icon"/><use href="file:///etc/passwd#x"/><use x:href="#g"/>
  <image x:href="file:///etc/passwd" width="5" height="5"/><image href="data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=" width="5" height="5"/>
  <a x:href="javascript:alert(1)"><rect width="5" height="5" style="fill: url('http://evil.example/x') ; opacity: .5" onclick="x()" ONMOUSEOVER="y()"/></a>
  <set attributeName="href" to="http://evil.example/late.png"/><animate attributeName="fill" values="url(http://evil.example/a)"/>
  <script x:href="http://evil.example/s.js"/><foreignObject><h:iframe src="http://evil.example"/></foreignObject><h:img src="http://evil.example/i.png"/>
  <rect width="20" height="20" fill="url(#g)" mask="url(http://evil.example/m.svg#m)" xml:base="http://evil.example/"/>
</svg>`;
  const clean = sanitiseSvg(dirty);
  for (const bad of [
    'evil.example',
    'file:',
    'data:',
    'javascript:',
    '<script',
    'onload',
    'onclick',
    'ONMOUSEOVER',
    'foreignObject',
    'iframe',
    '@import',
    '<set',
    '<animate',
    'xml-stylesheet',
    'xml:base',
    'h:img',
  ]) {
    t.false(clean.includes(bad), `${bad} survived: ${clean}`);
  }
  t.true(clean.includes('x:href="#g"'), 'an in-document reference with a prefix stays');
  t.true(clean.includes('fill="url(#g)"'));
  t.true(clean.includes('fill: url(#g)'));
  t.true(clean.includes('opacity: .5'), 'the rest of a style attribute stays');
});

test('markup that is not an SVG document is refused, not guessed at', async (t) => {
  await t.throwsAsync(rasteriseSvg(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><rect>')), { message: /not well-formed XML/ });
  await t.throwsAsync(rasteriseSvg(Buffer.from('<svg xmlns="http://example.com/not-svg"><rect/></svg>')), { message: /SVG namespace/ });
  // A DOCTYPE's entities are not expanded: the use of one stays literal text.
  const clean = sanitiseSvg(
    '<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg xmlns="http://www.w3.org/2000/svg"><text>&x;</text></svg>',
  );
  t.false(clean.includes('DOCTYPE'));
  t.false(clean.includes('root:'));
});

for (const [name, file] of [
  ['http', 'http.svg'],
  ['file', 'file.svg'],
] as const) {
  test(`a prefixed xlink href to a ${name}: URL is gone from the imported watermark, and nothing fetches it`, async (t) => {
    const { key } = await cluster.org();
    const r = await cluster.api('POST', PATH, {
      key,
      body: { name: `Logo ${name}`, options: { waterMark: { waterMarkUrl: `${base}/${file}` } } },
    });
    t.is(r.status, 200, JSON.stringify(r.body));
    const stored = await cluster.api('GET', `/api/uploads/files/${r.body.options.waterMark.fileAppId}`, { key });
    const png = Buffer.from(await (await fetch(stored.body.url)).arrayBuffer());
    const { data, info } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    const pixel = (x: number, y: number) => Array.from(data.subarray((y * info.width + x) * 4, (y * info.width + x) * 4 + 4));
    t.deepEqual(pixel(Math.floor(info.width / 4), Math.floor(info.height / 4)), [0, 0, 255, 255], 'the document itself is drawn');
    t.is(pixel(Math.floor((info.width * 3) / 4), Math.floor((info.height * 3) / 4))[3], 0, 'the referenced picture is not');
    t.true(requests.includes(`/${file}`));
    t.false(requests.includes('/red.png'), 'the referenced picture was never requested');
  });
}

test('a memory bomb SVG is refused with a 400 and nothing is stored, within the time limit', async (t) => {
  const { org, key } = await cluster.org();
  const started = Date.now();
  const r = await cluster.api('POST', PATH, { key, body: { name: 'Bomb', options: { waterMark: { waterMarkUrl: `${base}/bomb.svg` } } } });
  t.is(r.status, 400, JSON.stringify(r.body));
  t.regex(r.body.message, /Watermark import refused .*SVG image could not be (read|drawn)/);
  t.true(Date.now() - started < cluster.app.config.svgRasterTimeoutMs, 'refused by the memory cap, not the clock');
  const files = await cluster.app.db.one<{ n: number }>(`SELECT count(*)::int AS n FROM files WHERE organization_id = $1`, [org.id]);
  t.is(files!.n, 0);
  const presets = await cluster.app.db.one<{ n: number }>(`SELECT count(*)::int AS n FROM brand_presets WHERE organization_id = $1`, [
    org.id,
  ]);
  t.is(presets!.n, 0);
});

test('the same bomb draws when the cap is lifted, so the refusal above is the cap at work', async (t) => {
  // 4 GB of address space is more than the bomb needs; the default cap (1.5 GB) is less.
  const png = await rasteriseSvg(Buffer.from(MEMORY_BOMB), { maxMemoryBytes: 4 * 1024 ** 3, timeoutMs: 60_000 });
  t.is((await sharp(png).metadata()).width, 2048);
  await t.throwsAsync(rasteriseSvg(Buffer.from(MEMORY_BOMB), { timeoutMs: 60_000 }), { message: /could not be drawn/ });
});
