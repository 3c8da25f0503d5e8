import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { ffprobe, runFfmpeg } from '../node-agent/src/media/ffmpeg.js';
import { prepareRender } from '../node-agent/src/media/render-args.js';
import { cutCropClip, grabThumbnail } from '../node-agent/src/media/clips.js';
import { hdrToSdrFilter, HDR_REFERENCE_WHITE_NITS } from '../node-agent/src/media/colour.js';
import { analysisSize, sampleFrames } from '../node-agent/src/reframe/frames.js';
import { makeHdrClip, sdrCode } from './helpers/hdr.js';
import { FFMPEG, FFPROBE } from './helpers/media.js';

// Phones record HDR by default. Every picture the service makes of such a source (the render, the
// crop clip, the thumbnail, the frames the face detector sees) is BT.709 SDR with the light where an
// SDR display shows it: a mid-grey where it was, the source's peak at SDR white, tagged BT.709.

const run = promisify(execFile);
let dir: string;

// An 18 % grey card under HDR's reference white (BT.2408: 203 nits) is some 26-37 nits; 1000 nits is
// the peak both HDR10's metadata here and HLG's reference display say.
const MID_NITS = 26;
const PEAK_NITS = 1000;
const midGreyCode = sdrCode(MID_NITS / HDR_REFERENCE_WHITE_NITS); // ~109

test.before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'media-colour-'));
});
test.after.always(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Y at (x, y) of the first frame of an 8-bit 4:2:0 file, as decoded. */
async function lumaAt(file: string, points: Array<[number, number]>): Promise<number[]> {
  const info = await ffprobe(file, { ffprobePath: FFPROBE });
  const { stdout } = await run(FFMPEG, ['-v', 'error', '-i', file, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'yuv420p', 'pipe:1'], {
    encoding: 'buffer',
    maxBuffer: 64 * 1024 * 1024,
  });
  return points.map(([x, y]) => stdout[Math.round(y) * info.width + Math.round(x)]!);
}

/** The first half second of `source`, rendered as a short of `size` (no captions, the centred window). */
async function renderHalfSecond(
  source: string,
  info: Awaited<ReturnType<typeof ffprobe>>,
  work: string,
  size: { width: number; height: number },
): Promise<string> {
  const out = path.join(work, 'short.mp4');
  const args = await prepareRender({
    sourcePath: source,
    startTime: 0,
    endTime: 0.5,
    words: [],
    output: { ...size, path: out },
    caption: null,
    encoder: 'libx264',
    workDir: work,
    sourceWidth: info.width,
    sourceHeight: info.height,
    sourceColour: info.colour,
  });
  await runFfmpeg(FFMPEG, args, { durationSec: 0.5 });
  return out;
}

async function outputTags(file: string): Promise<Record<string, unknown>> {
  const { stdout } = await run(FFPROBE, ['-v', 'error', '-select_streams', 'v:0', '-show_streams', '-print_format', 'json', file]);
  return (JSON.parse(stdout) as { streams: Array<Record<string, unknown>> }).streams[0]!;
}

for (const transfer of ['pq', 'hlg'] as const) {
  test(`${transfer}: the source is recognised as HDR with its peak`, async (t) => {
    const clip = await makeHdrClip(dir, transfer, { topNits: MID_NITS, bottomNits: PEAK_NITS, peakNits: PEAK_NITS });
    const info = await ffprobe(clip.file, { ffprobePath: FFPROBE });
    t.is(info.colour.transfer, transfer);
    t.is(info.colour.matrix, 'bt2020');
    t.is(info.colour.peakNits, PEAK_NITS);
  });

  test(`${transfer}: the render is BT.709 SDR with mid-grey and peak white where an SDR display shows them`, async (t) => {
    const work = await mkdtemp(path.join(dir, `${transfer}-render-`));
    const clip = await makeHdrClip(work, transfer, { topNits: MID_NITS, bottomNits: PEAK_NITS, peakNits: PEAK_NITS });
    const info = await ffprobe(clip.file, { ffprobePath: FFPROBE });
    const out = await renderHalfSecond(clip.file, info, work, { width: 360, height: 640 });
    const [mid, peak] = await lumaAt(out, [
      [180, 160],
      [180, 480],
    ]);
    t.true(Math.abs(mid! - midGreyCode) <= 3, `mid-grey at ${mid}, expected ${midGreyCode.toFixed(1)}`);
    t.true(Math.abs(peak! - 235) <= 3, `peak white at ${peak}, expected 235`);
    const tags = await outputTags(out);
    t.like(tags, { pix_fmt: 'yuv420p', color_transfer: 'bt709', color_primaries: 'bt709', color_space: 'bt709', profile: 'High' });
  });

  test(`${transfer}: the crop clip, the thumbnail and the detector's frames are tone-mapped alike`, async (t) => {
    const work = await mkdtemp(path.join(dir, `${transfer}-others-`));
    const clip = await makeHdrClip(work, transfer, { topNits: MID_NITS, bottomNits: PEAK_NITS, peakNits: PEAK_NITS });
    const info = await ffprobe(clip.file, { ffprobePath: FFPROBE });
    const crop = path.join(work, 'crop.mp4');
    await cutCropClip(FFMPEG, {
      sourcePath: clip.file,
      out: crop,
      start: 0,
      end: 0.5,
      sourceWidth: info.width,
      sourceHeight: info.height,
      reframe: null,
      sourceColour: info.colour,
      encoder: 'libx264',
      workDir: work,
    });
    const cropInfo = await ffprobe(crop, { ffprobePath: FFPROBE });
    const [cropMid, cropPeak] = await lumaAt(crop, [
      [cropInfo.width / 2, cropInfo.height / 4],
      [cropInfo.width / 2, (3 * cropInfo.height) / 4],
    ]);
    t.true(Math.abs(cropMid! - midGreyCode) <= 3, `crop clip mid-grey at ${cropMid}`);
    t.true(Math.abs(cropPeak! - 235) <= 3, `crop clip peak at ${cropPeak}`);

    const thumb = path.join(work, 'thumb.jpg');
    await grabThumbnail(FFMPEG, clip.file, thumb, 0.2, undefined, info.colour);
    const decoded = await sharp(thumb).raw().toBuffer({ resolveWithObject: true });
    const red = (x: number, y: number) => decoded.data[(y * decoded.info.width + x) * decoded.info.channels]!;
    const [thumbMid, thumbPeak] = [red(320, 90), red(320, 270)];
    // A JPEG's levels are full range: the same light at code (Y - 16) * 255 / 219.
    const full = (code: number) => ((code - 16) * 255) / 219;
    t.true(Math.abs(thumbMid! - full(midGreyCode)) <= 4, `thumbnail mid-grey at ${thumbMid}, expected ${full(midGreyCode).toFixed(1)}`);
    t.true(thumbPeak! >= 250, `thumbnail peak at ${thumbPeak}`);

    const size = analysisSize(info.width, info.height);
    let frames = 0;
    for await (const { image } of sampleFrames(
      FFMPEG,
      clip.file,
      { start: 0, end: 0.5 },
      { fps: 4, size, toBt709: hdrToSdrFilter(info.colour) },
    )) {
      frames++;
      const at = (x: number, y: number) => image.data[(y * image.width + x) * 3]!;
      t.true(
        Math.abs(at(size.width / 2, size.height / 4) - full(midGreyCode)) <= 4,
        `detector frame mid-grey at ${at(size.width / 2, size.height / 4)}`,
      );
      t.true(at(size.width / 2, (3 * size.height) / 4) >= 250);
    }
    t.true(frames >= 2);
  });
}

test('an SD source coded with BT.601 keeps its colours in the BT.709 render', async (t) => {
  const work = await mkdtemp(path.join(dir, 'sd-'));
  const source = path.join(work, 'sd.mp4');
  // A saturated orange a player shows as (230, 120, 20) from BT.601 Y'CbCr.
  await run(FFMPEG, [
    ...['-y', '-v', 'error', '-f', 'lavfi', '-i', 'color=c=0xE67814:s=320x240:r=15:d=1'],
    ...['-vf', 'scale=out_color_matrix=bt601:out_range=tv,format=yuv420p'],
    ...['-c:v', 'libx264', '-colorspace', 'smpte170m', '-color_primaries', 'smpte170m', '-color_trc', 'smpte170m', source],
  ]);
  const info = await ffprobe(source, { ffprobePath: FFPROBE });
  t.is(info.colour.matrix, 'bt601');
  const out = await renderHalfSecond(source, info, work, { width: 180, height: 320 });
  // Decoded by hand with BT.709's matrix, as a player reads the render's tags.
  const { stdout } = await run(FFMPEG, ['-v', 'error', '-i', out, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'yuv420p', 'pipe:1'], {
    encoding: 'buffer',
  });
  const [w, h] = [180, 320];
  const Y = stdout[(h / 2) * w + w / 2]!;
  const U = stdout[w * h + (h / 4) * (w / 2) + w / 4]!;
  const V = stdout[w * h + (w / 2) * (h / 2) + (h / 4) * (w / 2) + w / 4]!;
  const [y, cb, cr] = [(Y - 16) / 219, (U - 128) / 224, (V - 128) / 224];
  const rgb = [y + 1.5748 * cr, y - 0.1873 * cb - 0.4681 * cr, y + 1.8556 * cb].map((v) => Math.round(255 * v));
  for (const [i, want] of [230, 120, 20].entries()) t.true(Math.abs(rgb[i]! - want) <= 8, `rgb ${rgb.join(',')} vs 230,120,20`);
});
