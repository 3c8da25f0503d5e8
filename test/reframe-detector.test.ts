import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createLogger, type Logger } from '@shorts/common/logger';
import type { FaceDetection } from '@shorts/common/reframe/types';
import { BlazeFaceDetector, blazeFaceAnchors, squareTiles } from '../node-agent/src/reframe/blazeface.js';
import { createFaceDetector, FaceDetectorConfigError, sharedFaceDetector } from '../node-agent/src/reframe/detector-factory.js';
import { decodeScrfd, decodeYunet } from '../node-agent/src/reframe/anchor-free.js';
import { weightedNms } from '../node-agent/src/reframe/face-detector.js';
import { interpolateFaces } from '../node-agent/src/reframe/strided-detection.js';
import { analysisSize, frameSamplerArgs, sampleFrames, type SampledFrame } from '../node-agent/src/reframe/frames.js';
import type { SceneScore } from '../node-agent/src/reframe/shots.js';
import type { RgbImage } from '../node-agent/src/reframe/image.js';
import { detectShorts } from '../node-agent/src/reframe/detect-shorts.js';
import { composeConversation, sharedMediaDir } from './helpers/grid.js';
import { FFMPEG, makeTestVideo } from './helpers/media.js';
import { expectedOnnxProvider } from './helpers/onnx-provider.js';
import { needing } from './helpers/requirements.js';

const run = promisify(execFile);
const log = createLogger({}, 'silent');
const media = sharedMediaDir();
const withMedia = needing({ media: Boolean(media) });

async function decodeImage(file: string): Promise<RgbImage> {
  const { stdout } = await run(FFMPEG, ['-v', 'error', '-i', file, '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'], {
    encoding: 'buffer',
    maxBuffer: 64 << 20,
  });
  const { stderr } = await run(FFMPEG, ['-hide_banner', '-i', file], { encoding: 'utf8' }).catch((e: { stderr: string }) => ({
    stderr: e.stderr,
  }));
  const [, w, h] = /, (\d+)x(\d+)/.exec(stderr)!;
  return { width: Number(w), height: Number(h), data: new Uint8Array(stdout) };
}

test('anchors follow MediaPipe BlazeFace: 16x16 cells with 2 anchors, then 8x8 with 6', (t) => {
  const anchors = blazeFaceAnchors();
  t.is(anchors.length, 896);
  t.deepEqual(anchors[0], [1 / 32, 1 / 32]);
  t.deepEqual(anchors[1], [1 / 32, 1 / 32]);
  t.deepEqual(anchors[2], [3 / 32, 1 / 32]);
  t.deepEqual(anchors[511], [31 / 32, 31 / 32]);
  t.deepEqual(anchors[512], [1 / 16, 1 / 16]);
  t.deepEqual(anchors[517], [1 / 16, 1 / 16]);
  t.deepEqual(anchors[518], [3 / 16, 1 / 16]);
  t.deepEqual(anchors[895], [15 / 16, 15 / 16]);
});

test('weighted suppression blends overlapping faces by score and keeps separate ones', (t) => {
  const face = (x: number, score: number): FaceDetection => ({ x, y: 0, width: 10, height: 10, score, keypoints: [[x + 5, 5]] });
  const out = weightedNms([face(0, 0.9), face(2, 0.6), face(50, 0.7)]);
  t.is(out.length, 2);
  t.is(out[0]!.score, 0.9);
  t.is(out[0]!.x, (0 * 0.9 + 2 * 0.6) / 1.5);
  t.is(out[0]!.keypoints[0]![0], (5 * 0.9 + 7 * 0.6) / 1.5);
  t.is(out[1]!.x, 50);
});

test('square tiles cover a 16:9 frame with overlap, a square frame with one tile, a portrait frame top to bottom', (t) => {
  const wide = squareTiles(640, 360, 0.2);
  t.deepEqual(wide, [
    { x: 0, y: 0, width: 360, height: 360 },
    { x: 280, y: 0, width: 360, height: 360 },
  ]);
  t.deepEqual(squareTiles(360, 360, 0.2), [{ x: 0, y: 0, width: 360, height: 360 }]);
  const tall = squareTiles(360, 640, 0.5);
  t.is(tall.length, 3);
  t.is(tall.at(-1)!.y + tall.at(-1)!.height, 640);
  for (const [a, b] of tall.slice(1).map((tile, i) => [tall[i]!, tile] as const)) t.true(a.y + a.height - b.y >= 180);
});

test('analysis size brings the short side down to 360, keeps the aspect and never upscales', (t) => {
  t.deepEqual(analysisSize(1280, 720), { width: 640, height: 360 });
  t.deepEqual(analysisSize(1080, 1920), { width: 360, height: 640 });
  t.deepEqual(analysisSize(360, 288), { width: 360, height: 288 });
});

test('with a detail size the sampler delivers each frame twice, in step: the analysis frame as without it, and a larger one', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'reframe-detail-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const video = await makeTestVideo(path.join(dir, 'v.mp4'), { seconds: 2, width: 320, height: 180 });
  const size = { width: 160, height: 90 };
  const detail = { width: 320, height: 180 };
  const plain: SampledFrame[] = [];
  for await (const f of sampleFrames(FFMPEG, video, { start: 0.5, end: 1.5 }, { fps: 4, size })) plain.push(f);
  const scores: SceneScore[] = [];
  const both: SampledFrame[] = [];
  for await (const f of sampleFrames(FFMPEG, video, { start: 0.5, end: 1.5 }, { fps: 4, size, detail, sceneScores: scores })) both.push(f);
  t.is(both.length, plain.length);
  t.true(scores.length > 0, 'scene scores still come with it');
  both.forEach((f, i) => {
    t.is(f.time, plain[i]!.time);
    t.deepEqual([f.image.width, f.image.height, f.image.data.length], [160, 90, 160 * 90 * 3]);
    t.deepEqual([f.detail!.width, f.detail!.height, f.detail!.data.length], [320, 180, 320 * 180 * 3]);
    // The analysis frame is the same picture; the detail frame, averaged 2x2, is that picture too.
    let same = 0;
    let fromDetail = 0;
    for (let y = 0; y < 90; y++) {
      for (let x = 0; x < 160; x++) {
        for (let c = 0; c < 3; c++) {
          const v = f.image.data[(y * 160 + x) * 3 + c]!;
          same += Math.abs(v - plain[i]!.image.data[(y * 160 + x) * 3 + c]!);
          const at = (yy: number, xx: number) => f.detail!.data[(yy * 320 + xx) * 3 + c]!;
          fromDetail += Math.abs(v - (at(2 * y, 2 * x) + at(2 * y, 2 * x + 1) + at(2 * y + 1, 2 * x) + at(2 * y + 1, 2 * x + 1)) / 4);
        }
      }
    }
    t.true(same / (160 * 90 * 3) < 0.5, `analysis frame ${i} differs by ${same / (160 * 90 * 3)}`);
    t.true(fromDetail / (160 * 90 * 3) < 4, `detail frame ${i} differs by ${fromDetail / (160 * 90 * 3)}`);
  });
  // Consecutive frames differ (testsrc moves): the two stay in step, not one frame repeated.
  t.notDeepEqual(both[0]!.detail!.data, both[1]!.detail!.data);
});

test('the frame sampler decodes a range at the asked rate through a pipe, with the input guard', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'reframe-frames-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const video = await makeTestVideo(path.join(dir, 'v.mp4'), { seconds: 3, width: 320, height: 180 });
  const args = frameSamplerArgs(video, { start: 1, end: 2 }, 5, { width: 160, height: 90 });
  t.true(args.includes('-protocol_whitelist'));
  t.true(args.indexOf('-ss') < args.indexOf('-i'));
  const frames = [];
  for await (const f of sampleFrames(FFMPEG, video, { start: 1, end: 2.5 }, { fps: 4, size: { width: 160, height: 90 } })) frames.push(f);
  t.is(frames.length, 6);
  t.deepEqual(
    frames.map((f) => f.time),
    [1, 1.25, 1.5, 1.75, 2, 2.25],
  );
  t.is(frames[0]!.image.data.length, 160 * 90 * 3);
  // testsrc moves: consecutive frames differ.
  t.notDeepEqual(frames[0]!.image.data, frames[1]!.image.data);

  const abort = new AbortController();
  const seen: number[] = [];
  await t.throwsAsync(async () => {
    for await (const f of sampleFrames(
      FFMPEG,
      video,
      { start: 0, end: 3 },
      { fps: 10, size: { width: 160, height: 90 }, signal: abort.signal },
    )) {
      seen.push(f.time);
      if (seen.length === 2) abort.abort(new Error('stop'));
    }
  });
  t.is(seen.length, 2);

  await t.throwsAsync(
    async () => {
      for await (const _ of sampleFrames(
        FFMPEG,
        path.join(dir, 'missing.mp4'),
        { start: 0, end: 1 },
        { fps: 5, size: { width: 160, height: 90 } },
      ))
        t.fail();
    },
    { message: /ffmpeg exited/ },
  );
});

for (const variant of ['back', 'front'] as const) {
  withMedia(`BlazeFace (${variant}) finds the one face of the astronaut photo, with keypoints where the face has them`, async (t) => {
    if (!media) throw new Error('unreachable: declared only when the media is there');
    const img = await decodeImage(path.join(media, 'astronaut_face.png'));
    t.is(img.width, 512);
    const detector = await BlazeFaceDetector.create({ variant, log });
    t.teardown(() => detector.release());
    t.is(detector.provider, await expectedOnnxProvider());
    const [faces] = await detector.detect([img]);
    t.is(faces!.length, 1);
    const f = faces![0]!;
    t.log(
      variant,
      JSON.stringify({
        x: Math.round(f.x),
        y: Math.round(f.y),
        w: Math.round(f.width),
        h: Math.round(f.height),
        score: f.score.toFixed(3),
        kps: f.keypoints.map((k) => k.map(Math.round)),
      }),
    );
    t.true(f.score > 0.8);
    // The photo's face spans about x 175-275 and y 65-185 (hairline to chin); its centre is near (225, 125).
    t.true(Math.abs(f.x + f.width / 2 - 225) < 15 && Math.abs(f.y + f.height / 2 - 128) < 20, 'box centred on the face');
    t.true(f.width > 70 && f.width < 140 && Math.abs(f.height / f.width - 1) < 0.2, 'box about the face size');
    const [re, le, nose, mouth, rEar, lEar] = f.keypoints as Array<[number, number]>;
    // Eyes above the nose above the mouth; the subject's right eye is on the image's left.
    t.true(re![1] < nose![1] && le![1] < nose![1] && nose![1] < mouth![1]);
    t.true(re![0] < nose![0] && nose![0] < le![0]);
    const eyeDistance = le![0] - re![0];
    t.true(eyeDistance > 0.3 * f.width && eyeDistance < 0.6 * f.width);
    // Symmetric: the nose and mouth lie between the eyes, near their midpoint (the head is tilted a
    // little in the photo); the eyes about level.
    const mid = (re![0] + le![0]) / 2;
    t.true(Math.abs(nose![0] - mid) < 0.12 * eyeDistance && Math.abs(mouth![0] - mid) < 0.2 * eyeDistance);
    t.true(Math.abs(re![1] - le![1]) < 0.25 * eyeDistance);
    // Ears outside the eyes, at about eye height; the eyes at y ~105, the mouth at ~148 in the photo.
    t.true(rEar![0] < re![0] && lEar![0] > le![0]);
    t.true(Math.abs(re![1] - 105) < 12 && Math.abs(mouth![1] - 148) < 12);
    for (const k of f.keypoints) t.true(k[0] > f.x - 0.1 * f.width && k[0] < f.x + 1.1 * f.width, 'keypoints on the face');
  });
}

withMedia('a close-up face in the middle of a 16:9 frame, where the tiles meet, is found whole in every frame', async (t) => {
  if (!media) throw new Error('unreachable: declared only when the media is there');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'reframe-closeup-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  // One person filling the frame's height (900x720 panel): the face is about 300 px wide.
  const video = await composeConversation(dir, { turns: [0], people: [0], centres: [0.5, 0.75], panelScale: 2.5 });
  const detector = await sharedFaceDetector({ faceDetector: 'blazeface', faceDetectorModel: undefined }, log);
  const [d] = await detectShorts(
    {
      sourceFile: video.videoPath,
      sourceWidth: 1280,
      sourceHeight: 720,
      shorts: [{ start: 0, end: 3 }],
      wavPath: video.wavPath,
      signal: new AbortController().signal,
    },
    { ffmpegPath: FFMPEG, detector, log },
  );
  t.is(d!.tracks.length, 1);
  const samples = d!.tracks[0]!.samples;
  t.is(samples.length, 24);
  for (const s of samples) {
    t.true(s.box.width > 260 && s.box.width < 380, `width ${s.box.width}`);
    t.true(Math.abs(s.box.x + s.box.width / 2 - 640) < 60, `centre ${s.box.x + s.box.width / 2}`);
  }
});

withMedia('one detector shared by concurrent analyses gives each the faces of its own frame', async (t) => {
  if (!media) throw new Error('unreachable: declared only when the media is there');
  const photo = await decodeImage(path.join(media, 'astronaut_face.png'));
  const blank = { width: 512, height: 512, data: new Uint8Array(512 * 512 * 3).fill(90) };
  const detector = await BlazeFaceDetector.create({ variant: 'back', log });
  t.teardown(() => detector.release());
  const [alone] = await detector.detect([photo]);
  const together = await Promise.all([photo, blank, photo, blank, photo].map((img) => detector.detect([img]).then(([faces]) => faces!)));
  t.deepEqual(together, [alone, [], alone, [], alone]);
});

test('a blank frame has no faces', async (t) => {
  const detector = await BlazeFaceDetector.create({ variant: 'back', log });
  t.teardown(() => detector.release());
  const img = { width: 640, height: 360, data: new Uint8Array(640 * 360 * 3).fill(128) };
  const [faces] = await detector.detect([img]);
  t.deepEqual(faces, []);
});

test('the configured detector: BlazeFace by default, one shared session, a clear error for an absent model', async (t) => {
  const detector = await sharedFaceDetector({ faceDetector: 'blazeface', faceDetectorModel: undefined }, log);
  t.is(detector.name, 'blazeface-back-256');
  t.is(await sharedFaceDetector({ faceDetector: 'blazeface', faceDetectorModel: undefined }, log), detector);
  const front = await createFaceDetector({ faceDetector: 'blazeface-front', faceDetectorModel: undefined }, log);
  t.is(front.name, 'blazeface-front-128');
  await front.release();

  const missing = path.join(os.tmpdir(), `no-such-model-${process.pid}.onnx`);
  const err = await t.throwsAsync(createFaceDetector({ faceDetector: 'scrfd', faceDetectorModel: missing }, log), {
    instanceOf: FaceDetectorConfigError,
  });
  t.regex(err!.message, /FACE_DETECTOR=scrfd needs the model file .*no-such-model.* which does not exist/);
  const byDefault = await t.throwsAsync(createFaceDetector({ faceDetector: 'yunet', faceDetectorModel: undefined }, log), {
    instanceOf: FaceDetectorConfigError,
  });
  t.regex(byDefault!.message, /models\/face_detection_yunet_2023mar\.onnx/);
});

test('faces between two detected frames are interpolated; a face seen on one side only stays for the nearer half', (t) => {
  const f = (x: number, w = 100): FaceDetection => ({
    x,
    y: 50,
    width: w,
    height: w,
    score: 0.9,
    keypoints: [
      [x + 30, 80],
      [x + 70, 80],
    ],
  });
  const before = { time: 1, faces: [f(100), f(600)] };
  const after = { time: 1.25, faces: [f(620), f(110, 110)] };
  const mid = interpolateFaces(before, after, 1.125);
  t.is(mid.length, 2);
  const left = mid.find((m) => m.x < 300)!;
  t.is(left.x, 105);
  t.is(left.width, 105);
  t.deepEqual(left.keypoints[0], [(130 + 140) / 2, 80]);
  t.is(mid.find((m) => m.x > 300)!.x, 610);
  // The right face leaves: it is kept in the first half of the gap, gone in the second.
  const leaving = { time: 1.25, faces: [f(110)] };
  t.is(interpolateFaces(before, leaving, 1.0625).length, 2);
  t.is(interpolateFaces(before, leaving, 1.1875).length, 1);
});

test('SCRFD and YuNet outputs decode to boxes and BlazeFace-ordered keypoints in input pixels', (t) => {
  // SCRFD, stride 8 on a 64 px input: 8x8 points, 2 anchors each; anchor 2 * (3 * 8 + 5) + 1 sits at (40, 24).
  const n = 8 * 8 * 2;
  const scores = new Float32Array(n);
  const boxes = new Float32Array(n * 4);
  const kps = new Float32Array(n * 10);
  const i = 2 * (3 * 8 + 5) + 1;
  scores[i] = 0.9;
  boxes.set([2, 1, 3, 4], i * 4); // distances to left, top, right, bottom in strides
  kps.set([-1, 0, 1, 0, 0, 1, -1, 2, 1, 2], i * 10); // eyes, nose, mouth corners
  const [s] = decodeScrfd([{ stride: 8, scores, boxes, keypoints: kps }], 64, 0.5);
  t.like(s, { x: 24, y: 16, width: 40, height: 40, score: Math.fround(0.9) });
  t.deepEqual(s!.keypoints.slice(0, 4), [
    [32, 24],
    [48, 24],
    [40, 32],
    [40, 40],
  ]);
  t.deepEqual(s!.keypoints.slice(4), [
    [24, 24],
    [64, 24],
  ]);
  t.deepEqual(decodeScrfd([{ stride: 8, scores, boxes, keypoints: kps }], 64, 0.95), []);

  // YuNet, stride 8: cell (row 3, col 5); centre offset and log size in strides; score sqrt(cls * obj).
  const cells = 8 * 8;
  const cls = new Float32Array(cells);
  const obj = new Float32Array(cells);
  const yb = new Float32Array(cells * 4);
  const yk = new Float32Array(cells * 10);
  const c = 3 * 8 + 5;
  cls[c] = 0.81;
  obj[c] = 1;
  yb.set([0.5, 0.5, Math.log(4), Math.log(4)], c * 4);
  yk.set([0, 0, 1, 0, 0.5, 0.5, 0, 1, 1, 1], c * 10);
  const [y] = decodeYunet([{ stride: 8, scores: cls, objectness: obj, boxes: yb, keypoints: yk }], 64, 0.5);
  t.true(Math.abs(y!.score - 0.9) < 1e-6);
  t.deepEqual(
    [y!.x, y!.y, y!.width, y!.height].map((v) => Number(v.toFixed(4))),
    [28, 12, 32, 32],
  );
  t.deepEqual(y!.keypoints.slice(0, 4), [
    [40, 24],
    [48, 24],
    [44, 28],
    [44, 32],
  ]);
});

test('a session asked to try CUDA runs on it where the provider loads, else on CPU and says so', async (t) => {
  const warnings: Array<{ msg: string; fields?: Record<string, unknown> }> = [];
  const capture: Logger = {
    debug() {},
    info() {},
    error() {},
    warn: (msg, fields) => {
      warnings.push({ msg, fields });
    },
    child: () => capture,
  };
  const detector = await BlazeFaceDetector.create({ variant: 'front', log: capture, tryCuda: true });
  t.teardown(() => detector.release());
  const expected = await expectedOnnxProvider();
  t.is(detector.provider, expected);
  if (expected === 'CUDA') {
    t.deepEqual(warnings, []);
  } else {
    // onnxruntime-node installs its CUDA provider only on request, and needs a GPU to load it.
    t.is(warnings.length, 1);
    t.regex(warnings[0]!.msg, /CUDA execution provider did not load; running on CPU/);
    t.regex(String(warnings[0]!.fields?.model), /face_detection_front_128x128_barracuda\.onnx$/);
  }
  const [faces] = await detector.detect([{ width: 128, height: 128, data: new Uint8Array(128 * 128 * 3) }]);
  t.deepEqual(faces, []);
});
