// The 1080p landscape source the render benches (render.ts, render-jump-cuts.ts, render-api.ts) cut
// their shorts from: a moving test picture and a tone, coded fast so that making it costs the bench
// little; and the logo they burn in.
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import sharp from 'sharp';

const run = promisify(execFile);

/** Writes `seconds` of 1920x1080 at `fps` with a 220 Hz tone to `out` with the given ffmpeg. */
export async function makeSourceVideo(ffmpeg: string, out: string, seconds: number, fps: number): Promise<string> {
  await run(ffmpeg, [
    '-y',
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    `testsrc2=size=1920x1080:rate=${fps}:duration=${seconds}`,
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=220:duration=${seconds}`,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
    out,
  ]);
  return out;
}

/** Writes the benches' logo to `out`: a 400x200 PNG, pink at 90 % opacity (rendered 300 px wide). */
export async function makeLogo(out: string): Promise<string> {
  const png = await sharp({ create: { width: 400, height: 200, channels: 4, background: { r: 240, g: 40, b: 90, alpha: 0.9 } } })
    .png()
    .toBuffer();
  await writeFile(out, png);
  return out;
}
