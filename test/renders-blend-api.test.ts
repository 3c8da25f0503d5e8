// Every blend mode at every kind of output size a plan allows, through the API with a real agent:
// logos of awkward sizes (odd both ways at 300px, very wide, portrait, 1x1, a JPEG without alpha, an
// SVG) imported through a brand preset, then rendered. A 431x120 logo at 300px once came out of its
// scale with a 3017:3000 sample aspect ratio that mergeplanes refused: hue, saturation, color and
// luminosity ended RENDERING_ERROR on every attempt. media-blend-sizes.test.ts runs the same matrix
// through the render arguments alone; this one is what a client sees.
import test from 'ava';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { BLEND_MODES, type BlendMode } from '@shorts/common/render/options';
import { placeWatermark, type WatermarkBox, type WatermarkPlacement } from '@shorts/common/render/watermark-geometry';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { FFMPEG, FFPROBE, makeTestVideo, serveFiles, type MediaServer } from './helpers/media.js';

const run = promisify(execFile);

/** The default, pro's largest portrait, landscape and square, business's 4K portrait, the smallest allowed and an odd-shaped small one. */
const SIZES: Array<{ width: number; height: number; plan: 'pro' | 'business' }> = [
  { width: 720, height: 1280, plan: 'pro' },
  { width: 1080, height: 1920, plan: 'pro' },
  { width: 1920, height: 1080, plan: 'pro' },
  { width: 1080, height: 1080, plan: 'pro' },
  { width: 2160, height: 3840, plan: 'business' },
  { width: 64, height: 64, plan: 'pro' },
  { width: 66, height: 130, plan: 'pro' },
];
// Three frames: the first is what is looked at; a 4K frame costs its encoder seconds on a loaded host.
// (Shorter than the half second the thumbnail was once always taken at, which failed such renders.)
const SHORT = { startTime: 0, endTime: 0.12 };
// A flat purple backdrop: every mode changes it visibly with each logo's colours (a grey one is left
// as it was by hue, saturation and exclusion, whatever the logo).
const BACKDROP = '0x5a3ca0';

interface Logo {
  kind: string;
  file: string;
  bytes: () => Promise<Buffer>;
  placement: Required<Pick<WatermarkPlacement, 'left' | 'width'>> & Pick<WatermarkPlacement, 'top' | 'bottom'>;
}

const pink = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 4, background: { r: 220, g: 40, b: 120, alpha: 0.85 } } })
    .png()
    .toBuffer();
const LOGOS: Logo[] = [
  {
    kind: '431x120 PNG with alpha at 300px',
    file: 'odd.png',
    bytes: () => pink(431, 120),
    placement: { left: '3%', top: '4%', width: '300px' },
  },
  { kind: '1200x37 very wide', file: 'wide.png', bytes: () => pink(1200, 37), placement: { left: '5%', bottom: '9%', width: '90%' } },
  {
    kind: '97x333 portrait',
    file: 'portrait.png',
    bytes: () => pink(97, 333),
    placement: { left: 'calc(50% - 20px)', top: '30%', width: '41px' },
  },
  { kind: '1x1', file: 'dot.png', bytes: () => pink(1, 1), placement: { left: '11px', top: '13px', width: '17px' } },
  {
    kind: '433x121 JPEG without alpha',
    file: 'flat.jpg',
    placement: { left: '21%', bottom: '3%', width: '55%' },
    bytes: () =>
      sharp({ create: { width: 433, height: 121, channels: 3, background: { r: 30, g: 200, b: 90 } } })
        .jpeg()
        .toBuffer(),
  },
  {
    kind: 'SVG 301x77',
    file: 'logo.svg',
    placement: { left: '9px', top: '50%', width: '250px' },
    bytes: async () =>
      Buffer.from(
        '<svg xmlns="http://www.w3.org/2000/svg" width="301" height="77" viewBox="0 0 301 77">' +
          '<rect x="3" y="5" width="295" height="67" rx="11" fill="#1e90ff" fill-opacity="0.7"/><circle cx="40" cy="38" r="25" fill="#ffcc00"/></svg>',
      ),
  },
];

/** Every mode at every size; the logo turns with both, so each logo meets every size and several modes. */
const CASES = BLEND_MODES.flatMap((mode, m) => SIZES.map((size, s) => ({ mode, size, logo: LOGOS[(m + s) % LOGOS.length]! })));

interface Tenant {
  key: string;
  jobId: string;
  logos: Map<string, { fileId: string; width: number; height: number }>;
}

let cluster: TestCluster;
let logoServer: MediaServer;
const tenants = new Map<'pro' | 'business', Tenant>();

test.before(async () => {
  // All renders are asked for at once, past the 20 an organization may have queued by default.
  cluster = await startCluster('renders_blend_api', { renderActiveLimit: CASES.length + 1 });
  const source = path.join(cluster.dataDir, 'purple.mp4');
  await makeTestVideo(source, { colour: BACKDROP, width: 640, height: 360, seconds: 1, toneHz: 300 });
  const files: Record<string, string> = {};
  for (const logo of LOGOS) {
    files[logo.file] = path.join(cluster.dataDir, logo.file);
    await writeFile(files[logo.file]!, await logo.bytes());
  }
  logoServer = await serveFiles(files);
  for (const plan of ['pro', 'business'] as const) {
    const { org, key } = await cluster.org({ plan });
    const jobId = await insertCompletedJob(cluster.app, {
      organizationId: org.id,
      sourcePath: source,
      words: [],
      shorts: [SHORT],
      width: 640,
      height: 360,
      durationSec: 1,
    });
    const logos = new Map<string, { fileId: string; width: number; height: number }>();
    for (const logo of LOGOS) {
      // Imported as a client imports a logo: a brand preset naming its URL.
      const preset = await cluster.api('POST', '/api/organizations/brandings', {
        key,
        body: { name: logo.kind, options: { waterMark: { waterMarkUrl: logoServer.url(logo.file), ...logo.placement } } },
      });
      if (preset.status !== 201 && preset.status !== 200)
        throw new Error(`importing ${logo.kind}: ${preset.status} ${JSON.stringify(preset.body)}`);
      const fileId = preset.body.options.waterMark.fileAppId as string;
      // The stored image's own size (an SVG is stored rasterised) places the watermark.
      const row = (await cluster.app.db.one<{ key: string }>('SELECT object_key AS key FROM files WHERE id = $1', [fileId]))!;
      const chunks: Buffer[] = [];
      for await (const c of (await cluster.app.store.get(row.key)).stream) chunks.push(c as Buffer);
      const meta = await sharp(Buffer.concat(chunks)).metadata();
      logos.set(logo.kind, { fileId, width: meta.width!, height: meta.height! });
    }
    tenants.set(plan, { key, jobId, logos });
  }
  // Renders run side by side, as on a farm host.
  await cluster.startAgent({ MAX_CONCURRENT_TASKS: '3' });
});
test.after.always(async () => {
  await logoServer?.close();
  await cluster?.close();
});

async function startRender(
  plan: 'pro' | 'business',
  size: { width: number; height: number },
  waterMark?: Record<string, unknown>,
): Promise<string> {
  const { key, jobId } = tenants.get(plan)!;
  const created = await cluster.api('POST', '/api/render', {
    key,
    body: { id: jobId, target: 0, size: { width: size.width, height: size.height }, options: waterMark ? { waterMark } : {} },
  });
  if (created.status !== 201) throw new Error(`render at ${size.width}x${size.height}: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body.renderId as string;
}

/** The render's outcome as the API answers it once it has settled. */
async function settled(plan: 'pro' | 'business', renderId: string) {
  const { key } = tenants.get(plan)!;
  await waitFor(
    async () => {
      const row = await cluster.app.db.one<{ status: string }>('SELECT status FROM renders WHERE id = $1', [renderId]);
      return row && (row.status === 'done' || row.status === 'error');
    },
    20 * 60_000,
    `render ${renderId}`,
  );
  return (await cluster.api('GET', `/api/render/${renderId}`, { key })).body as {
    type: string;
    url?: string;
    message?: string;
    code?: string;
  };
}

/** The output's size (as ffprobe reads it) and its first frame as RGB. */
async function downloaded(url: string, name: string): Promise<{ width: number; height: number; rgb: Buffer }> {
  const file = path.join(cluster.dataDir, `${name}.mp4`);
  await writeFile(file, Buffer.from(await (await fetch(url)).arrayBuffer()));
  const { stdout } = await run(FFPROBE, [
    '-v',
    'error',
    '-select_streams',
    'v:0',
    '-show_entries',
    'stream=width,height',
    '-of',
    'csv=p=0',
    file,
  ]);
  const [width, height] = stdout.trim().split(',').map(Number) as [number, number];
  const { stdout: rgb } = await run(FFMPEG, ['-v', 'error', '-i', file, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'], {
    encoding: 'buffer',
    maxBuffer: 64 * 1024 * 1024,
  });
  return { width, height, rgb };
}

type Rgb = [number, number, number];

/** Share of pixels in a region whose colour is more than 12 (summed over R, G, B) from the backdrop's. */
function changedShare(frame: Buffer, width: number, height: number, backdrop: Rgb, inside: (x: number, y: number) => boolean): number {
  let changed = 0;
  let total = 0;
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      if (!inside(x, y)) continue;
      const i = (y * width + x) * 3;
      total++;
      if (Math.abs(frame[i]! - backdrop[0]) + Math.abs(frame[i + 1]! - backdrop[1]) + Math.abs(frame[i + 2]! - backdrop[2]) > 12) changed++;
    }
  return total ? changed / total : 0;
}

/** The box within the frame, one pixel in from its edges where it is big enough (edges are soft). */
function core(box: WatermarkBox, width: number, height: number) {
  const inset = (n: number) => (n >= 6 ? 1 : 0);
  const x0 = Math.max(0, box.x + inset(box.w));
  const y0 = Math.max(0, box.y + inset(box.h));
  const x1 = Math.min(width, box.x + box.w - inset(box.w));
  const y1 = Math.min(height, box.y + box.h - inset(box.h));
  return (x: number, y: number) => x >= x0 && x < x1 && y >= y0 && y < y1;
}

test("every blend mode at every output size renders through the API with awkward logos, composited in the logo's box and nowhere else", async (t) => {
  t.timeout(25 * 60_000);
  // Every kind of logo meets every size, each with several modes.
  for (const logo of LOGOS) {
    t.deepEqual(new Set(CASES.filter((c) => c.logo === logo).map((c) => c.size)).size, SIZES.length, logo.kind);
    t.true(new Set(CASES.filter((c) => c.logo === logo).map((c) => c.mode)).size >= 4, logo.kind);
  }

  // All at once: a reference without a watermark, and the matrix.
  const referenceId = await startRender('pro', SIZES[0]!);
  const renders = await Promise.all(
    CASES.map(({ mode, size, logo }) => {
      const stored = tenants.get(size.plan)!.logos.get(logo.kind)!;
      return startRender(size.plan, size, {
        fileAppId: stored.fileId,
        ...logo.placement,
        opacity: '0.8',
        blendMode: mode satisfies BlendMode,
      });
    }),
  );

  // The flat backdrop as the renderer puts it out without a watermark (its colour after the trip
  // through YUV), the same at every size.
  const plain = await settled('pro', referenceId);
  t.is(plain.type, 'done', JSON.stringify(plain));
  const reference = await downloaded(plain.url!, 'reference');
  const backdrop = [0, 1, 2].map((c) => reference.rgb[c]!) as Rgb;
  t.is(
    changedShare(reference.rgb, reference.width, reference.height, backdrop, () => true),
    0,
    'the reference is one flat colour',
  );

  const failures: string[] = [];
  for (const [i, { mode, size, logo }] of CASES.entries()) {
    const what = `${mode} with the ${logo.kind} logo at ${size.width}x${size.height}`;
    const done = await settled(size.plan, renders[i]!);
    if (done.type !== 'done') {
      failures.push(`${what}: ${done.code} ${done.message}`);
      continue;
    }
    const out = await downloaded(done.url!, `render-${i}`);
    if (out.width !== size.width || out.height !== size.height) {
      failures.push(`${what}: the output is ${out.width}x${out.height}`);
      continue;
    }
    const stored = tenants.get(size.plan)!.logos.get(logo.kind)!;
    const box = placeWatermark(logo.placement, size.width, size.height, stored.width, stored.height);
    const inBox = changedShare(out.rgb, size.width, size.height, backdrop, core(box, size.width, size.height));
    // Well away from the box (8 px), the picture is the backdrop.
    const far = (x: number, y: number) => x < box.x - 8 || x >= box.x + box.w + 8 || y < box.y - 8 || y >= box.y + box.h + 8;
    const outside = changedShare(out.rgb, size.width, size.height, backdrop, far);
    if (!(inBox >= 0.5))
      failures.push(
        `${what}: only ${(100 * inBox).toFixed(0)} % of the logo's box (${box.w}x${box.h} at ${box.x},${box.y}) differs from the backdrop`,
      );
    if (outside > 0.01) failures.push(`${what}: ${(100 * outside).toFixed(1)} % of the picture away from the logo changed`);
  }
  t.deepEqual(failures, []);
});
