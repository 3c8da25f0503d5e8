// The 1080p landscape source the render benches (render.ts, render-jump-cuts.ts) cut their shorts
// from: a moving test picture and a tone, coded fast so that making it costs the bench little.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

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
