import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { DEFAULT_DIRECTOR } from '@shorts/common/reframe/director';
import type { Box, DetectedShot, Reframe, ShortDetections } from '@shorts/common/reframe/types';
import { cutCropClip } from '../node-agent/src/media/clips.js';
import { extractAudio } from '../node-agent/src/media/audio-extract.js';
import { contains, interpolate, planReframe, slices } from '@shorts/common/reframe/camera';
import { analysisSize, sampleFrames } from '../node-agent/src/reframe/frames.js';
import { ShotTracker, type SceneScore } from '../node-agent/src/reframe/shots.js';
import { composeEditedInterview, composePictureEdits, EDIT_FPS, type EditedVideo } from './helpers/edited.js';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { gridClips } from './helpers/grid.js';
import { detectWholeVideo } from './helpers/reframe.js';
import { FFMPEG, serveFiles } from './helpers/media.js';
import { havePocketsphinx, needing } from './helpers/requirements.js';

// Reframing edited footage: shots found in the source (hard cuts to the frame, dissolves as a span, no
// false cut on a flash, a fade or a moving picture), each shot framed on its own (no track, pan or
// smoothing across a cut, the framing change on the cut's first frame), a slide shown whole, a
// facecam stacked over its screen, black borders left out of the picture.

const run = promisify(execFile);
const FRAME = 1 / EDIT_FPS;
const OUT = { width: 1080, height: 1920 };
const media = gridClips();
const withMedia = needing({ media: Boolean(media) }).serial;
let dir: string;

test.before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'reframe-shots-'));
});
test.after.always(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The shot tracker over a whole file, as detectShorts runs it. */
async function shotsOf(videoPath: string, seconds: number, width = 1280, height = 720): Promise<DetectedShot[]> {
  const scores: SceneScore[] = [];
  const tracker = new ShotTracker();
  const size = analysisSize(width, height);
  for await (const f of sampleFrames(FFMPEG, videoPath, { start: 0, end: seconds }, { fps: 8, size, sceneScores: scores }))
    tracker.add(f.time, f.image);
  return tracker.shots(0, seconds, tracker.boundaries(scores), { x: width / size.width, y: height / size.height });
}

test('hard cuts are found on their exact first frame', async (t) => {
  const video = await composePictureEdits(dir, 'cuts', 12);
  const shots = await shotsOf(video.videoPath, 12);
  t.deepEqual(
    shots.map((s) => s.transition),
    ['start', 'cut', 'cut'],
  );
  shots.slice(1).forEach((shot, i) => {
    const cut = video.cuts[i]!;
    // A hair before the frame's timestamp, never as much as a frame: that frame is the shot's first.
    t.true(shot.start <= cut && shot.start > cut - FRAME / 2, `cut at ${cut}, shot starts ${shot.start}`);
  });
  t.is(shots.at(-1)!.end, 12);
});

test('cuts with a flash frame at the join, into a picture still settling, are found on the flash frame', async (t) => {
  // ffmpeg's scene score rises on three frames in a row at the first cut (the bare set, then a random
  // pattern changing fast as it settles): a cut, not a gradual change. The second has a black frame.
  const video = await composePictureEdits(dir, 'ragged-cuts', 12);
  const shots = await shotsOf(video.videoPath, 12);
  t.deepEqual(
    shots.map((s) => s.transition),
    ['start', 'cut', 'cut'],
    JSON.stringify(shots.map(({ motion: _, ...s }) => s)),
  );
  shots.slice(1).forEach((shot, i) => {
    const flash = video.cuts[i]!;
    t.true(Math.abs(shot.start - flash) < 1 / video.fps, `flash frame at ${flash}, shot starts ${shot.start}`);
  });
});

test('a dissolve is one transition, as a span over the blend', async (t) => {
  const video = await composePictureEdits(dir, 'dissolve', 12);
  const shots = await shotsOf(video.videoPath, 12);
  t.deepEqual(
    shots.map((s) => s.transition),
    ['start', 'dissolve'],
    JSON.stringify(shots.map(({ motion: _, ...s }) => s)),
  );
  const [blend] = video.dissolves;
  t.true(Math.abs(shots[1]!.start - blend!.start) <= 0.25, `dissolve from ${shots[1]!.start}, blend from ${blend!.start}`);
  t.true(Math.abs(shots[1]!.transitionEnd! - blend!.end) <= 0.25, `dissolve to ${shots[1]!.transitionEnd}, blend to ${blend!.end}`);
});

for (const kind of ['still', 'flash', 'fade'] as const) {
  test(`no false cut on a ${kind === 'still' ? 'moving picture with no edit' : kind}`, async (t) => {
    const video = await composePictureEdits(dir, kind, 12);
    const shots = await shotsOf(video.videoPath, 12);
    t.deepEqual(
      shots.map((s) => [s.start, s.end, s.transition]),
      [[0, 12, 'start']],
    );
  });
}

/** A camera panning across a scene three pictures wide, from the first to the last, starting at 3 s. */
async function panVideo(name: string, panSec: number): Promise<string> {
  const file = path.join(dir, `${name}.mp4`);
  const x = `if(lt(t\\,3)\\,0\\,if(lt(t\\,${3 + panSec})\\,(t-3)/${panSec}*1280\\,1280))`;
  await run(FFMPEG, [
    '-y',
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    'smptehdbars=size=640x360:rate=25',
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=640x360:rate=25',
    '-f',
    'lavfi',
    '-i',
    'mandelbrot=size=640x360:rate=25',
    '-filter_complex',
    `[0][1][2]hstack=inputs=3,crop=640:360:x='${x}':y=0,trim=duration=10,setpts=PTS-STARTPTS`,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    file,
  ]);
  return file;
}

test('a whip pan is one cut on its first moving frame; a slow pan is no cut', async (t) => {
  // Two picture widths in 0.3 s and in 1.2 s: every sample changes until the camera lands.
  for (const panSec of [0.3, 1.2]) {
    const shots = await shotsOf(await panVideo(`whip-${panSec}`, panSec), 10, 640, 360);
    t.deepEqual(
      shots.map((s) => s.transition),
      ['start', 'cut'],
      `whip of ${panSec} s: ${JSON.stringify(shots.map((s) => [s.start, s.transition]))}`,
    );
    t.true(Math.abs(shots[1]!.start - (3 + FRAME)) <= FRAME, `the cut on the pan's first moving frame: ${shots[1]!.start}`);
  }
  // The same two widths over 5 s is a camera move to follow, not an edit.
  const slow = await shotsOf(await panVideo('slow-pan', 5), 10, 640, 360);
  t.deepEqual(
    slow.map((s) => s.transition),
    ['start'],
  );
});

test('black borders baked into the picture are the content box, letterbox and pillarbox', async (t) => {
  for (const [pad, content] of [
    ['scale=1280:536,pad=1280:720:0:92', { x: 0, y: 92, width: 1280, height: 536 }],
    ['scale=960:720,pad=1280:720:160:0', { x: 160, y: 0, width: 960, height: 720 }],
  ] as const) {
    const file = path.join(dir, `boxed-${content.x}.mp4`);
    await run(FFMPEG, [
      '-y',
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      `testsrc2=s=1280x720:r=25:d=3`,
      '-vf',
      `${pad}:black`,
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      file,
    ]);
    const [shot] = await shotsOf(file, 3);
    for (const k of ['x', 'y', 'width', 'height'] as const)
      t.true(Math.abs(shot!.content[k] - content[k]) <= 6, `${k}: ${JSON.stringify(shot!.content)} vs ${JSON.stringify(content)}`);
  }
  // A picture dark on one side only is content, not a border.
  const dark = path.join(dir, 'dark-side.mp4');
  await run(FFMPEG, [
    '-y',
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    'testsrc2=s=1280x720:r=25:d=3',
    '-vf',
    'drawbox=x=0:y=0:w=1280:h=150:color=black:t=fill',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    dark,
  ]);
  t.deepEqual((await shotsOf(dark, 3))[0]!.content, { x: 0, y: 0, width: 1280, height: 720 });
});

// ---- edited footage through detection and the camera ---------------------------------------------

const detect = detectWholeVideo;

/** Frame times within [start, end). */
function frames(start: number, end: number): number[] {
  const out: number[] = [];
  for (let t = Math.ceil(start / FRAME - 1e-6) * FRAME; t < end - 1e-9; t += FRAME) out.push(t);
  return out;
}

/** The detected face nearest `time` whose centre lies in `region` (a close-up's box may run off the frame). */
function faceIn(d: ShortDetections, region: Box, time: number): Box | undefined {
  let best: { box: Box; dt: number } | undefined;
  for (const tr of d.tracks) {
    for (const s of tr.samples) {
      const dt = Math.abs(s.time - time);
      const cx = s.box.x + s.box.width / 2;
      const cy = s.box.y + s.box.height / 2;
      const inRegion = cx >= region.x && cx < region.x + region.width && cy >= region.y && cy < region.y + region.height;
      if (dt <= 1 / d.sampleFps && inRegion && (!best || dt < best.dt)) best = { box: s.box, dt };
    }
  }
  return best?.box;
}

/** A face nearly as wide as the largest window (a tight close-up) cannot be held with room to spare:
 *  the detector's wobble alone takes it over the edge. */
const fills = (window: Box, face: Box) => face.width > 0.9 * window.width;

/** The window shows the face: wholly, or, for a face that fills it, centred on the face's middle. */
function onFace(window: Box, face: Box): boolean {
  if (!fills(window, face)) return contains(window, face);
  return Math.abs(window.x + window.width / 2 - (face.x + face.width / 2)) <= 0.15 * face.width;
}

/** The part of a face box inside the frame (a close-up's box runs past the frame's bottom). */
function visible(b: Box, frame: { width: number; height: number }): Box {
  const x = Math.max(0, b.x);
  const y = Math.max(0, b.y);
  return { x, y, width: Math.min(frame.width, b.x + b.width) - x, height: Math.min(frame.height, b.y + b.height) - y };
}

const layoutAt = (r: Reframe, t: number) => r.segments.find((s, i) => t >= s.start && (t < s.end || i === r.segments.length - 1))?.layout;

let interview: EditedVideo;
let interviewDetections: ShortDetections;
let interviewPath: Reframe;

withMedia(
  'an edited interview: each cut changes the framing on its first frame, no pan or track spans a cut, the slide is fitted, the window is on whoever is heard',
  async (t) => {
    interview = await composeEditedInterview(dir, [
      { kind: 'wide', talker: 0 },
      { kind: 'close', person: 1, talking: true },
      { kind: 'slide', voice: 0 },
      { kind: 'wide', talker: 1 },
      { kind: 'close', person: 0, talking: true },
    ]);
    const d = (interviewDetections = await detect(interview));
    const r = (interviewPath = planReframe(d, DEFAULT_DIRECTOR, OUT));
    t.log(
      `shots ${JSON.stringify(d.shots!.map((s) => [s.start, s.transition]))}; segments ${JSON.stringify(r.segments.map((s) => [s.start, s.layout, s.tracks]))}`,
    );

    // The shots, served with the path.
    t.deepEqual(
      r.shots!.map((s) => s.transition),
      ['start', 'cut', 'cut', 'cut', 'cut'],
    );
    for (const [i, cut] of interview.cuts.entries()) {
      const shot = r.shots![i + 1]!;
      t.true(Math.abs(shot.start - cut) < FRAME, `shot ${i + 1} starts ${shot.start}, cut at ${cut}`);
      // A framing change on the cut: two keyframes at one time (a cut in the path) within a frame of it.
      const cutsInPath = r.keyframes.filter((k, j) => j > 0 && r.keyframes[j - 1]!.time === k.time).map((k) => k.time);
      t.true(
        cutsInPath.some((time) => Math.abs(time - cut) < FRAME),
        `a framing cut at ${cut}: ${JSON.stringify(cutsInPath)}`,
      );
      // No pan across it: the keyframes either side of the cut are not interpolated over it.
      const before = r.keyframes.filter((k) => k.time < cut - FRAME).at(-1)!;
      const after = r.keyframes.find((k) => k.time > cut - FRAME)!;
      t.true(after.time <= cut + FRAME, `no pan from ${before.time} to ${after.time} over the cut at ${cut}`);
    }
    // No track spans a cut.
    for (const tr of d.tracks) {
      const first = tr.samples[0]!.time;
      const last = tr.samples.at(-1)!.time;
      t.false(
        interview.cuts.some((cut) => first < cut && last >= cut),
        `track ${tr.id} from ${first} to ${last}`,
      );
    }

    // The slide, a shot with no face: fitted, the whole picture, for at least 95 % of it.
    const slide = interview.shots[2]!;
    const slideFrames = frames(slide.start, slide.end);
    const fitted = slideFrames.filter(
      (time) =>
        layoutAt(r, time) === 'fit' &&
        contains(interpolate(r.keyframes, time), { x: 1, y: 1, width: interview.width - 2, height: interview.height - 2 }),
    );
    t.true(fitted.length >= 0.95 * slideFrames.length, `fit ${fitted.length}/${slideFrames.length} frames of the slide`);

    // Whoever is heard is in the window, in every shot where they are visible.
    let heard = 0;
    let total = 0;
    for (const shot of interview.shots) {
      const region = shot.people[shot.speaker];
      if (!region) continue;
      for (const time of frames(shot.speech.start, shot.speech.end)) {
        const face = faceIn(d, region, time);
        if (!face) continue;
        total++;
        if (onFace(interpolate(r.keyframes, time), visible(face, interview))) heard++;
        else if (process.env.DEBUG_REFRAME)
          t.log(`off at ${time.toFixed(2)}: window ${JSON.stringify(interpolate(r.keyframes, time))} face ${JSON.stringify(face)}`);
      }
    }
    t.log(`window on the heard speaker ${heard}/${total} frames of speech (${((100 * heard) / total).toFixed(1)} %)`);
    t.true(total > 120, `${total} frames of speech with the speaker visible`);
    t.true(heard / total >= 0.9, `${heard}/${total}`);

    // No detected face is sliced by the window's edge.
    const sliced = d.tracks.flatMap((tr) =>
      tr.samples
        .filter((s) => {
          const window = interpolate(r.keyframes, s.time);
          const face = visible(s.box, interview);
          return layoutAt(r, s.time) === 'single' && !fills(window, face) && slices(window, face);
        })
        .map((s) => `${tr.id}@${s.time}`),
    );
    t.deepEqual(sliced, []);
  },
);

withMedia('the rendered crop clip changes its picture on the cut frame, not a frame later', async (t) => {
  t.truthy(interviewPath, 'needs the interview test before it');
  const clipPath = planReframe(interviewDetections, DEFAULT_DIRECTOR, { width: 360, height: 640 });
  const clip = path.join(dir, 'interview-crop.mp4');
  await cutCropClip(FFMPEG, {
    sourcePath: interview.videoPath,
    out: clip,
    start: 0,
    end: interview.durationSec,
    sourceWidth: interview.width,
    sourceHeight: interview.height,
    reframe: clipPath,
    encoder: 'libx264',
    workDir: path.join(dir, 'interview-work'),
  });
  // Around the cut from the first close-up to the slide: the frame before it is the close-up's window,
  // the cut frame is the slide fitted (its cream background at the clip's top and bottom edges).
  const cut = interview.cuts[1]!;
  const before = await grey(clip, cut - FRAME);
  const at = await grey(clip, cut);
  const windowBefore = await grey(interview.videoPath, cut - FRAME, interpolate(clipPath.keyframes, cut - FRAME));
  t.true(
    meanAbsDiff(before, windowBefore) < 14,
    `the frame before the cut is the close-up's window (${meanAbsDiff(before, windowBefore).toFixed(1)})`,
  );
  t.true(meanAbsDiff(at, windowBefore) > 30, `the cut frame is already the new framing (${meanAbsDiff(at, windowBefore).toFixed(1)})`);
  const fittedSlide = await grey(clip, cut + 10 * FRAME);
  t.true(meanAbsDiff(at, fittedSlide) < 8, `the cut frame is the fitted slide (${meanAbsDiff(at, fittedSlide).toFixed(1)})`);
});

/** One frame at `time` (optionally a window of it) as 36x64 grey levels. */
async function grey(file: string, time: number, window?: Box): Promise<Buffer> {
  const crop = window
    ? `crop=${Math.round(window.width)}:${Math.round(window.height)}:${Math.round(window.x)}:${Math.round(window.y)},`
    : '';
  // Seek to half a frame before, then take the first frame: exactly the frame shown at `time`.
  const { stdout } = await run(
    FFMPEG,
    [
      '-v',
      'error',
      '-ss',
      Math.max(0, time - FRAME / 2).toFixed(3),
      '-i',
      file,
      '-frames:v',
      '1',
      '-vf',
      `${crop}scale=36:64,format=gray`,
      '-f',
      'rawvideo',
      '-',
    ],
    { encoding: 'buffer', maxBuffer: 1 << 20 },
  );
  return stdout;
}

const meanAbsDiff = (a: Buffer, b: Buffer) => a.reduce((sum, v, i) => sum + Math.abs(v - b[i]!), 0) / a.length;

/** 3 s of 1280x720 made of the lavfi `picture` (input 0) and a GRID `clip` (input 1) joined by `graph`
 *  into [v], with the clip's sound; the video and its detections. */
async function detectOverClip(
  name: string,
  picture: string,
  clip: string,
  graph: string,
): Promise<{ videoPath: string; detections: Awaited<ReturnType<typeof detect>> }> {
  const videoPath = path.join(dir, `${name}.mp4`);
  await run(FFMPEG, [
    '-y',
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    picture,
    '-i',
    clip,
    '-filter_complex',
    graph,
    '-map',
    '[v]',
    '-map',
    '1:a',
    '-t',
    '3',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    videoPath,
  ]);
  const wavPath = path.join(dir, `${name}.wav`);
  await extractAudio(FFMPEG, videoPath, wavPath);
  return { videoPath, detections: await detect({ videoPath, wavPath, width: 1280, height: 720, durationSec: 3 }) };
}

withMedia('a facecam over a moving screen is stacked: the face on top, the screen below', async (t) => {
  const clips = media!;
  // A moving "game" (test pattern, zooming and panning) with a GRID speaker inset bottom right, 240x192.
  const { videoPath, detections: d } = await detectOverClip(
    'facecam',
    `testsrc2=s=1920x1080:r=${EDIT_FPS}:d=3`,
    clips[0].file,
    `[0:v]zoompan=z='1.1+0.05*sin(on/10)':x='iw/2-iw/zoom/2+60*sin(on/8)':y='ih/2-ih/zoom/2':d=1:s=1280x720:fps=${EDIT_FPS}[game];` +
      `[1:v]trim=duration=3,setpts=PTS-STARTPTS,fps=${EDIT_FPS},scale=240:192,setsar=1[cam];[game][cam]overlay=1010:498:shortest=1[v]`,
  );
  const r = planReframe(d, DEFAULT_DIRECTOR, OUT);
  t.deepEqual(
    r.segments.map((s) => s.layout),
    ['stack'],
    JSON.stringify(r.segments),
  );
  const [camera, screen] = r.keyframes[0]!.panels!;
  const inset = { x: 1010, y: 498, width: 240, height: 192 };
  const face = d.tracks[0]!.samples[0]!.box;
  t.true(contains(camera!, face), `the facecam window ${JSON.stringify(camera)} holds the face ${JSON.stringify(face)}`);
  t.true(camera!.width * camera!.height < 0.2 * 1280 * 720, 'the facecam window is a close-up of the inset');
  t.true(Math.abs(camera!.x + camera!.width / 2 - (inset.x + inset.width / 2)) < inset.width, 'centred on the inset');
  t.true(screen!.width >= 0.9 * 1280, `the screen is shown across its width: ${JSON.stringify(screen)}`);

  // The render: the face panel on top, as tall as the window's shape at the output's width.
  const clip = path.join(dir, 'facecam-crop.mp4');
  const small = planReframe(d, DEFAULT_DIRECTOR, { width: 360, height: 640 });
  await cutCropClip(FFMPEG, {
    sourcePath: videoPath,
    out: clip,
    start: 0,
    end: 3,
    sourceWidth: 1280,
    sourceHeight: 720,
    reframe: small,
    encoder: 'libx264',
    workDir: path.join(dir, 'facecam-work'),
  });
  const [top, bottom] = small.keyframes[0]!.panels!;
  const topHeight = Math.round((360 * top!.height) / top!.width);
  const shown = await grey(clip, 1.5);
  // The clip's upper part matches the facecam window of the source, its lower part the screen.
  const split = Math.round((64 * topHeight) / 640);
  const upper = await grey(videoPath, 1.5, top);
  const lower = await grey(videoPath, 1.5, bottom);
  const rows = (b: Buffer, from: number, to: number) => b.subarray(from * 36, to * 36);
  // The source windows are scaled to the whole 36x64 thumbnail: compare their middle rows with the clip's.
  const upperRows = Buffer.from(
    Array.from({ length: split * 36 }, (_, i) => upper[Math.floor(((Math.floor(i / 36) + 0.5) / split) * 64) * 36 + (i % 36)]!),
  );
  const lowerRows = Buffer.from(
    Array.from(
      { length: (64 - split) * 36 },
      (_, i) => lower[Math.floor(((Math.floor(i / 36) + 0.5) / (64 - split)) * 64) * 36 + (i % 36)]!,
    ),
  );
  t.true(
    meanAbsDiff(rows(shown, 0, split), upperRows) < 20,
    `top is the facecam (${meanAbsDiff(rows(shown, 0, split), upperRows).toFixed(1)})`,
  );
  t.true(
    meanAbsDiff(rows(shown, split, 64), lowerRows) < 20,
    `bottom is the screen (${meanAbsDiff(rows(shown, split, 64), lowerRows).toFixed(1)})`,
  );
});

withMedia('a small face walking across a moving picture is followed, not stacked as a facecam', async (t) => {
  const clips = media!;
  // The same inset over the same moving "game", but it travels right to left, some 600 px in 3 s: a
  // person crossing the picture, whom a fixed facecam window would lose.
  const { detections: d } = await detectOverClip(
    'walking-inset',
    `testsrc2=s=1920x1080:r=${EDIT_FPS}:d=3`,
    clips[0].file,
    `[0:v]zoompan=z='1.1+0.05*sin(on/10)':x='iw/2-iw/zoom/2+60*sin(on/8)':y='ih/2-ih/zoom/2':d=1:s=1280x720:fps=${EDIT_FPS}[game];` +
      `[1:v]trim=duration=3,setpts=PTS-STARTPTS,fps=${EDIT_FPS},scale=240:192,setsar=1[cam];[game][cam]overlay=x='1010-200*t':y=498:shortest=1[v]`,
  );
  const r = planReframe(d, DEFAULT_DIRECTOR, OUT);
  t.false(
    r.segments.some((s) => s.layout === 'stack'),
    JSON.stringify(r.segments),
  );
  // Wherever the face is, the window holds it.
  for (const s of d.tracks[0]!.samples) {
    const shown = interpolate(r.keyframes, s.time);
    t.true(contains(shown, s.box), `at ${s.time} s the window ${JSON.stringify(shown)} holds the face ${JSON.stringify(s.box)}`);
  }
});

withMedia('a talking head in a letterboxed source: the window never shows the black bars', async (t) => {
  const clips = media!;
  // A 2.39:1 picture (two people, one talking) letterboxed into 1280x720.
  const { detections: d } = await detectOverClip(
    'letterboxed',
    `color=c=0x3a4a5a:s=1280x536:r=${EDIT_FPS}:d=3`,
    clips[0].file,
    `[1:v]trim=duration=3,setpts=PTS-STARTPTS,fps=${EDIT_FPS},scale=400:320,setsar=1[p];[0:v][p]overlay=700:108:shortest=1,pad=1280:720:0:92:black[v]`,
  );
  t.true(
    Math.abs(d.shots![0]!.content.y - 92) <= 6 && Math.abs(d.shots![0]!.content.height - 536) <= 12,
    JSON.stringify(d.shots![0]!.content),
  );
  const r = planReframe(d, DEFAULT_DIRECTOR, OUT);
  t.deepEqual(
    r.segments.map((s) => s.layout),
    ['single'],
  );
  for (const k of r.keyframes) {
    t.true(k.y >= 86 && k.y + k.height <= 720 - 86, `window ${JSON.stringify(k)} inside the picture`);
    t.true(contains(k, d.tracks[0]!.samples[0]!.box), 'the face in it');
  }
});

needing({ media: Boolean(media), tools: { pocketsphinx: havePocketsphinx } }).serial(
  'through the API: a job on the edited interview serves the shots and a layout per shot in both retrieve forms',
  async (t) => {
    if (!interview) t.fail('needs the interview test before it');
    let cluster: TestCluster | undefined;
    const server = await serveFiles({ 'interview.mp4': interview.videoPath });
    try {
      cluster = await startCluster('reframe_shots_api');
      await cluster.startAgent();
      const { key, org } = await cluster.org({ plan: 'pro', credits: 10 });
      const created = await cluster.api('POST', '/api/jobs', {
        key,
        body: {
          functionName: 'VideoShorts',
          fileUrl: server.url('interview.mp4'),
          options: { predefinedShorts: [{ title: 'Interview', start: 0, end: interview.durationSec }] },
        },
      });
      t.is(created.status, 201, JSON.stringify(created.body));
      const job = await cluster.settledJob(key, created.body.id, { timeoutMs: 240_000 });
      t.is(job.status, 'COMPLETED', job.message);
      const reframe: Reframe = job.data.shorts[0].reframe;
      t.deepEqual(
        reframe.shots!.map((s) => s.transition),
        ['start', 'cut', 'cut', 'cut', 'cut'],
      );
      interview.cuts.forEach((cut, i) =>
        t.true(Math.abs(reframe.shots![i + 1]!.start - cut) < FRAME, `shot ${i + 1} at ${reframe.shots![i + 1]!.start}, cut at ${cut}`),
      );
      // One layout per shot here: the slide (the third shot) fitted, the others a single window.
      const layouts = interview.shots.map((shot) => layoutAt(reframe, (shot.start + shot.end) / 2));
      t.deepEqual(layouts, ['single', 'single', 'fit', 'single', 'single']);
      const user = await import('../coordinator/src/tenancy/tenancy.js').then((m) =>
        m.createUser(cluster!.app.db, { email: `shots-${org.id}@example.com`, organizationId: org.id }),
      );
      const bearer = await cluster.api('GET', `/api/jobs/${created.body.id}?organizationId=${org.id}`, {
        headers: { authorization: `Bearer ${await cluster.app.signer.issue(user.id)}` },
      });
      t.deepEqual(bearer.body.data.shorts[0].reframe.shots, reframe.shots);
    } finally {
      await server.close();
      await cluster?.close();
    }
  },
);
