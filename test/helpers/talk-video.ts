import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { FFMPEG } from './media.js';
import { synthesiseTalk, type Synthesised } from '../transcribe-synth.js';

const run = promisify(execFile);

export const TALK = [
  { text: 'What is the fastest way to learn a new language?', pauseAfter: 0.8 },
  { text: 'The answer is practice every single day.', pauseAfter: 0.9 },
  { text: 'Ten minutes of speaking beats three hours of reading.', pauseAfter: 1.0 },
  { text: 'Most people quit after two weeks because they never speak.', pauseAfter: 0.9 },
  { text: 'So find a partner and talk for ten minutes each morning.', pauseAfter: 1.2 },
  { text: 'Here is a second idea about memory and sleep.', pauseAfter: 0.8 },
  { text: 'Your brain stores new words while you sleep at night.', pauseAfter: 0.9 },
  { text: 'Review them before bed and again after you wake up.', pauseAfter: 1.0 },
];

/** A real talking video: flite speech with known word times over a moving test picture. */
export async function makeTalkVideo(
  dir: string,
  opts: { width?: number; height?: number; phrases?: typeof TALK } = {},
): Promise<Synthesised & { videoPath: string }> {
  const talk = await synthesiseTalk(dir, opts.phrases ?? TALK);
  const videoPath = path.join(dir, `talk-${Date.now()}.mp4`);
  const { width = 640, height = 360 } = opts;
  await run(FFMPEG, [
    '-y',
    '-hide_banner',
    '-loglevel',
    'error',
    '-f',
    'lavfi',
    '-i',
    `testsrc2=size=${width}x${height}:rate=25:duration=${talk.durationSec.toFixed(3)}`,
    '-i',
    talk.wavPath,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-b:a',
    '96k',
    '-shortest',
    videoPath,
  ]);
  return { ...talk, videoPath };
}
