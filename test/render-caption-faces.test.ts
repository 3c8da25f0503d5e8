import test from 'ava';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { createLogger } from '@shorts/common/logger';
import { planReframe } from '@shorts/common/reframe/camera';
import { DEFAULT_DIRECTOR } from '@shorts/common/reframe/director';
import type { Box, ShortDetections } from '@shorts/common/reframe/types';
import { sharedFaceDetector } from '../node-agent/src/reframe/detector-factory.js';
import { extractAudio } from '../node-agent/src/media/audio-extract.js';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { GRID_ENCODE, gridClips } from './helpers/grid.js';
import { FFMPEG } from './helpers/media.js';
import { detectWholeVideo } from './helpers/reframe.js';
import { needing } from './helpers/requirements.js';
import type { RenderCaptionPosition } from '../coordinator/src/renders/caption-placement.js';

// Captions never cover a face: a real person (a GRID clip) sits low in a 16:9 picture, where the
// DEFAULT style's lower-third captions would go in the 9:16 short. Detection runs on it for real and
// is stored with the short, as analysis stores it; a render asked through the API with no caption
// position puts its captions elsewhere, says where and why in its status, and in the rendered
// frames the caption's pixels stay off the face that the same detector finds in those frames. A
// render that asks for the lower third gets it, across the face: the check can fail.

const run = promisify(execFile);
const clips = gridClips();
const OUT = { width: 720, height: 1280 };
const MOMENTS = [0.4, 1.1, 1.8, 2.5];
const WORDS = ['place', 'blue', 'at', 'four', 'now', 'please', 'again', 'soon'].map((text, i) => ({
  text,
  start: 0.1 + i * 0.35,
  end: 0.1 + i * 0.35 + 0.3,
}));
// Magenta letters: no pixel of the face or the backdrop is that colour.
const MAGENTA = [{ property: 'color', value: '#FF00FF', active: { value: '#FF00FF' } }];

let cluster: TestCluster;
let key: string;
let jobId: string;

test.before(async () => {
  if (!clips) return;
  cluster = await startCluster('render_caption_faces');
  // The clip's face (about 122 px high at 360x288) made 170 px high, its centre at 78 % of the height.
  const ph = 2 * Math.round((170 * 288) / 122 / 2);
  const pw = 2 * Math.round((ph * 360) / 288 / 2);
  const x = Math.round(640 - (179 / 360) * pw);
  const y = Math.round(0.78 * 720 - (186 / 288) * ph);
  const videoPath = path.join(cluster.dataDir, 'low-face.mp4');
  await run(FFMPEG, [
    ...['-y', '-v', 'error', '-i', clips[0].file, '-filter_complex'],
    `color=c=0x3a3a3a:s=1280x720:r=25:d=3[bg];[0:v]scale=${pw}:${ph},setsar=1[p];[bg][p]overlay=${x}:${y}:shortest=1[v]`,
    ...['-map', '[v]', '-map', '0:a', '-t', '3', ...GRID_ENCODE, videoPath],
  ]);
  const wavPath = path.join(cluster.dataDir, 'low-face.wav');
  await extractAudio(FFMPEG, videoPath, wavPath);
  const detections: ShortDetections = await detectWholeVideo({ videoPath, wavPath, width: 1280, height: 720, durationSec: 3 });
  const made = await cluster.org({ plan: 'pro', credits: 10 });
  key = made.key;
  jobId = await insertCompletedJob(cluster.app, {
    organizationId: made.org.id,
    sourcePath: videoPath,
    words: WORDS,
    width: 1280,
    height: 720,
    shorts: [{ startTime: 0, endTime: 3, reframe: planReframe(detections, DEFAULT_DIRECTOR, OUT), detections }],
    reframePlan: { director: { ...DEFAULT_DIRECTOR }, output: OUT },
  });
  await cluster.startAgent();
});
test.after.always(() => cluster?.close());

async function render(
  style: Array<Record<string, unknown>>,
): Promise<{ status: { url: string; captionPosition: RenderCaptionPosition }; file: string }> {
  const created = await cluster.api('POST', '/api/render', {
    key,
    body: { id: jobId, target: 0, preset: 'DEFAULT', size: OUT, options: { style } },
  });
  if (created.status !== 201) throw new Error(JSON.stringify(created.body));
  const status = await waitFor(
    async () => {
      const r = await cluster.api('GET', `/api/render/${created.body.renderId}`, { key });
      return r.body.type === 'done' || r.body.type === 'error' ? r.body : undefined;
    },
    240_000,
    'render',
  );
  if (status.type !== 'done') throw new Error(JSON.stringify(status));
  const file = path.join(cluster.dataDir, `${created.body.renderId}.mp4`);
  await writeFile(file, Buffer.from(await (await fetch(status.url)).arrayBuffer()));
  return { status, file };
}

async function frameAt(file: string, t: number): Promise<Uint8Array> {
  const { stdout } = await run(
    FFMPEG,
    ['-v', 'error', '-ss', String(t), '-i', file, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'],
    {
      encoding: 'buffer',
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  if (stdout.length !== OUT.width * OUT.height * 3) throw new Error(`frame of ${stdout.length} bytes`);
  return new Uint8Array(stdout);
}

/** The rows the caption's magenta letters take, or null when none show. */
function captionRows(rgb: Uint8Array): [number, number] | null {
  let top = -1;
  let bottom = -1;
  for (let y = 0; y < OUT.height; y++) {
    for (let x = 0; x < OUT.width; x++) {
      const p = (y * OUT.width + x) * 3;
      if (rgb[p]! > 170 && rgb[p + 2]! > 170 && rgb[p + 1]! < 90) {
        if (top < 0) top = y;
        bottom = y;
        break;
      }
    }
  }
  return top < 0 ? null : [top, bottom];
}

/** What the caption and the face (found by the reframing's own detector in the rendered frame) take, per moment. */
async function measure(file: string): Promise<Array<{ t: number; caption: [number, number] | null; faces: Box[] }>> {
  const detector = await sharedFaceDetector({ faceDetector: 'blazeface' }, createLogger({}, 'silent'));
  const out = [];
  for (const t of MOMENTS) {
    const data = await frameAt(file, t);
    const [faces] = await detector.detect([{ width: OUT.width, height: OUT.height, data }]);
    out.push({ t, caption: captionRows(data), faces: faces!.filter((f) => f.score > 0.6) });
  }
  return out;
}

const crosses = (rows: [number, number], face: Box) => Math.min(rows[1], face.y + face.height) > Math.max(rows[0], face.y);

needing({ media: Boolean(clips) }).serial(
  'with no position asked, the captions go where the framed face is not, for the whole short, and the render says where',
  async (t) => {
    const { status, file } = await render(MAGENTA);
    t.like(status.captionPosition, { chosenBy: 'automatic', movedFromFace: true, faceOverlap: 0 }, JSON.stringify(status.captionPosition));
    t.not(status.captionPosition.position, 'bottom');
    for (const m of await measure(file)) {
      t.truthy(m.caption, `a caption at ${m.t} s`);
      t.true(m.faces.length > 0, `the face found in the rendered frame at ${m.t} s`);
      // The face sits in the lower part of the short, as composed.
      for (const face of m.faces) t.true(face.y + face.height / 2 > OUT.height * 0.6, `face at ${JSON.stringify(face)}`);
      for (const face of m.faces) {
        t.false(
          m.caption ? crosses(m.caption, face) : false,
          `at ${m.t} s the caption rows ${m.caption} cross the face ${JSON.stringify(face)}`,
        );
      }
    }
  },
);

needing({ media: Boolean(clips) }).serial(
  'a position asked for is kept, even across the face, and the render says the style chose it',
  async (t) => {
    const { status, file } = await render([...MAGENTA, { property: 'position', value: 'bottom' }]);
    t.deepEqual(status.captionPosition, { position: 'bottom', chosenBy: 'style' });
    const measured = await measure(file);
    t.true(
      measured.some((m) => m.caption && m.faces.some((f) => crosses(m.caption!, f))),
      `the lower third crosses the face: ${JSON.stringify(measured)}`,
    );
  },
);
