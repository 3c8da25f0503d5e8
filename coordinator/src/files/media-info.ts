// What the coordinator learns about a media file it stores itself (operator adds, watermark
// imports): the agents report these for what they produce, so only local files come through here.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { inputGuard } from '@shorts/common/media/input-guard';
import { probeFile } from '@shorts/common/media/ffprobe';
import { processMediaTools, toolEnv } from '@shorts/common/media/tools';

const run = promisify(execFile);
const THUMB_WIDTH = 320;

/** Duration in seconds from the container, 0 when ffprobe cannot tell (a still image, say). */
export async function probeLength(path: string): Promise<number> {
  try {
    // A user's upload: a current ffprobe when the host has one, and none of the coordinator's secrets in its environment.
    const info = await probeFile(path, { inputs: 'media-or-image', timeoutMs: 30_000 });
    const sec = Number(info.format?.duration);
    return Number.isFinite(sec) && sec > 0 ? Math.round(sec * 1000) / 1000 : 0;
  } catch {
    return 0;
  }
}

/** A JPEG of one frame, a second in (or the middle of a shorter video); undefined when none can
 *  be decoded, since a missing thumbnail must not stop a file from being stored. */
export async function grabFrame(path: string, lengthSec: number, out: string): Promise<string | undefined> {
  const at = lengthSec > 0 ? Math.min(1, lengthSec / 2) : 0;
  try {
    await run(
      processMediaTools().ffmpegPath,
      [
        '-y',
        '-hide_banner',
        '-loglevel',
        'error',
        ...inputGuard('media-or-image'),
        '-ss',
        at.toFixed(3),
        '-i',
        path,
        '-frames:v',
        '1',
        '-vf',
        `scale=${THUMB_WIDTH}:-2`,
        '-q:v',
        '4',
        out,
      ],
      { timeout: 60_000, env: toolEnv() },
    );
    return out;
  } catch {
    return undefined;
  }
}
