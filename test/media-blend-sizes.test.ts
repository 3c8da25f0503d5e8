// Every blend mode with logos of awkward sizes at the output sizes a render may ask for, rendered for
// real: the render-args builder's arguments run through the agent's ffmpeg, as render-short does.
// A 431x120 logo at 300px is scaled by a ratio that is not exact in both directions, which once
// gave the watermark a non-square sample aspect ratio that mergeplanes refused (hue, saturation,
// color and luminosity failed every attempt).
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { BLEND_MODES, type BlendMode } from '@shorts/common/render/options';
import { rasteriseSvg, stillPng } from '@shorts/common/media/image';
import { chooseMediaTools } from '@shorts/common/media/tools';
import { prepareRender } from '../node-agent/src/media/render-args.js';
import { FFMPEG } from './helpers/media.js';

const run = promisify(execFile);
const AGENT_FFMPEG = chooseMediaTools({ PATH: process.env.PATH }).ffmpegPath;
const SOURCE = { width: 640, height: 360, seconds: 0.2 };

/** The default, the largest pro sizes each way and square, a business 4K portrait, the smallest allowed. */
const OUTPUT_SIZES: Array<[number, number]> = [
  [720, 1280],
  [1080, 1920],
  [1920, 1080],
  [1080, 1080],
  [2160, 3840],
  [64, 64],
  [66, 130],
];

interface Logo {
  name: string;
  /** The bytes the agent downloads; made into the PNG it renders with as render-short does. */
  bytes: () => Promise<Buffer>;
  width: string; // waterMark.width
}

const rgba = (width: number, height: number, alpha = 0.85) =>
  sharp({ create: { width, height, channels: 4, background: { r: 220, g: 40, b: 120, alpha } } })
    .png()
    .toBuffer();
const LOGOS: Logo[] = [
  { name: '431x120 PNG with alpha at 300px (the reported logo)', bytes: () => rgba(431, 120), width: '300px' },
  { name: '431x120 PNG at its own width', bytes: () => rgba(431, 120), width: '431px' },
  { name: '1200x37 very wide, odd height, at 33%', bytes: () => rgba(1200, 37), width: '33%' },
  { name: '97x333 portrait, odd both ways, at 41px', bytes: () => rgba(97, 333), width: '41px' },
  { name: '1x1 at 17px', bytes: () => rgba(1, 1), width: '17px' },
  {
    name: '433x121 JPEG without alpha at 55%',
    bytes: () =>
      sharp({ create: { width: 433, height: 121, channels: 3, background: { r: 30, g: 200, b: 90 } } })
        .jpeg()
        .toBuffer(),
    width: '55%',
  },
  {
    name: 'SVG 301x77 at 250px',
    bytes: async () =>
      Buffer.from(
        '<svg xmlns="http://www.w3.org/2000/svg" width="301" height="77" viewBox="0 0 301 77">' +
          '<rect x="3" y="5" width="295" height="67" rx="11" fill="#1e90ff" fill-opacity="0.7"/><circle cx="40" cy="38" r="25" fill="#ffcc00"/></svg>',
      ),
    width: '250px',
  },
];

let dir: string;
let source: string;
const logoFiles = new Map<string, string>();

test.before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'media-blend-sizes-'));
  source = path.join(dir, 'source.mp4');
  await run(FFMPEG, [
    '-y',
    '-hide_banner',
    '-loglevel',
    'error',
    '-f',
    'lavfi',
    '-i',
    `testsrc2=size=${SOURCE.width}x${SOURCE.height}:rate=25:duration=${SOURCE.seconds}`,
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=300:duration=${SOURCE.seconds}`,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
    source,
  ]);
  for (const [i, logo] of LOGOS.entries()) {
    const bytes = await logo.bytes();
    const file = path.join(dir, `logo-${i}.png`);
    await writeFile(file, logo.name.startsWith('SVG') ? await rasteriseSvg(bytes) : await stillPng(bytes));
    logoFiles.set(logo.name, file);
  }
});

test.after.always(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Renders one short as render-short would (no captions, to keep the matrix fast); the error text if ffmpeg fails. */
async function render(mode: BlendMode, logo: Logo, [width, height]: [number, number], name: string): Promise<string | null> {
  const workDir = path.join(dir, name);
  const out = path.join(workDir, 'out.mp4');
  const args = await prepareRender({
    sourcePath: source,
    startTime: 0,
    endTime: SOURCE.seconds,
    words: [],
    caption: null,
    output: { width, height, path: out },
    encoder: 'libx264',
    workDir,
    sourceWidth: SOURCE.width,
    sourceHeight: SOURCE.height,
    watermark: { imagePath: logoFiles.get(logo.name)!, left: '7px', bottom: '9%', width: logo.width, opacity: 0.8, blendMode: mode },
  });
  try {
    await run(AGENT_FFMPEG, [...args.filter((a) => a !== '-progress' && a !== 'pipe:1'), '-preset', 'ultrafast'], { maxBuffer: 1 << 22 });
  } catch (err) {
    return String((err as { stderr?: string }).stderr || (err as Error).message)
      .trim()
      .split('\n')
      .slice(-2)
      .join(' ');
  }
  const { stdout } = await run(AGENT_FFMPEG.replace(/ffmpeg$/, 'ffprobe'), [
    '-v',
    'error',
    '-select_streams',
    'v:0',
    '-show_entries',
    'stream=width,height,nb_frames',
    '-of',
    'csv=p=0',
    out,
  ]).catch(() => ({ stdout: '' }));
  await rm(workDir, { recursive: true, force: true });
  const [w, h, frames] = stdout.trim().split(',').map(Number);
  if (w !== width || h !== height || !(frames! >= 1)) return `output ${stdout.trim()} (want ${width}x${height} and frames)`;
  return null;
}

const NON_SEPARABLE: readonly BlendMode[] = ['hue', 'saturation', 'color', 'luminosity'];

/**
 * The four non-separable modes take apart and join planes (mergeplanes, which refuses inputs of
 * different sample aspect ratios): every logo at every size. The other twelve composite with
 * overlay and lut2: every logo and every size, each meeting the other in some mode, so every
 * (mode, logo), (mode, size) and (logo, size) pair is rendered (size index = logo + mode, mod 7).
 */
function cases(mode: BlendMode): Array<[Logo, [number, number]]> {
  if (NON_SEPARABLE.includes(mode)) return LOGOS.flatMap((logo) => OUTPUT_SIZES.map((size) => [logo, size] as [Logo, [number, number]]));
  const m = BLEND_MODES.indexOf(mode);
  return LOGOS.map((logo, l) => [logo, OUTPUT_SIZES[(l + m) % OUTPUT_SIZES.length]!]);
}

for (const mode of BLEND_MODES) {
  test(`blend mode ${mode} renders awkward logos (odd, wide, portrait, 1x1, no alpha, SVG) at the output sizes`, async (t) => {
    const failures: string[] = [];
    for (const [logo, size] of cases(mode)) {
      const error = await render(mode, logo, size, `${mode}-${LOGOS.indexOf(logo)}-${size.join('x')}`);
      if (error) failures.push(`${logo.name} at ${size.join('x')}: ${error}`);
    }
    t.deepEqual(failures, []);
  });
}

test('the matrix covers every logo at every size and every mode at every size', (t) => {
  const pairs = new Set(
    BLEND_MODES.flatMap((mode) =>
      cases(mode).flatMap(([logo, size]) => [`${logo.name}@${size}`, `${mode}@${size}`, `${mode}/${logo.name}`]),
    ),
  );
  t.is(pairs.size, LOGOS.length * OUTPUT_SIZES.length + BLEND_MODES.length * OUTPUT_SIZES.length + BLEND_MODES.length * LOGOS.length);
});
