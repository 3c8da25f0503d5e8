import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { makeHdrClip, sdrCode } from './helpers/hdr.js';
import { FFMPEG, FFPROBE, serveFiles, type MediaServer } from './helpers/media.js';
import { makeSpeech } from './helpers/speech.js';
import { fliteAvailable } from './transcribe-synth.js';
import type { Parsed } from './helpers/parsed.js';

// Files as phones, cameras, editors, recorders and screen-capture tools make them, each through the
// API (a job with the client's own times, then a render) to a short checked as a viewer would: H.264
// High 4:2:0 tagged BT.709 at the asked size and length, stereo AAC at 48 kHz near -14 LUFS, the
// picture the right way up, its colours kept, and a flash and a click made together arriving together.

const run = promisify(execFile);
let cluster: TestCluster;
let media: MediaServer;
let dir: string;

const SECONDS = 6;
/** A white frame and a click, both at this time of the source. */
const SYNC_AT = 2.5;
const SHORT = { title: 'Matrix', start: 1, end: 5 };
const OUT = { width: 360, height: 640 };
/** The source picture's grey (SDR, 8-bit code) and the bar at its top, which says which way is up. */
const GREY = 0x50;

interface Kind {
  name: string;
  /** What the file is made with, from the picture (input 0: lavfi) and the sound (input 1: WAV). */
  make?: (picture: string, sound: string, out: string) => string[];
  file?: () => Promise<string>;
  ext: string;
  fps: number;
  /** What the short must show: sound (with a click in step), upright picture, grey kept, HDR grey. */
  sound: boolean;
  picture: 'sdr' | 'hdr';
  /** A note the job must carry for the user (which track was heard, why there are no words). */
  note?: RegExp;
}

const x264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'];
const aac = (channels: number) => ['-c:a', 'aac', '-ac', String(channels), '-ar', '48000'];
const landscape = (size = '1280x720', fps = 30) =>
  `color=c=0x${GREY.toString(16).repeat(3)}:s=${size}:r=${fps}:d=${SECONDS},` +
  `drawbox=x=iw*0.42:y=ih*0.04:w=iw*0.16:h=ih*0.1:color=white:t=fill,` +
  `drawbox=x=0:y=0:w=iw:h=ih:color=white:t=fill:enable='between(t,${SYNC_AT},${SYNC_AT + 0.9 / fps})'`;

const KINDS: Kind[] = [
  {
    name: 'H.264/AAC MP4, index at the end',
    ext: 'mp4',
    fps: 30,
    sound: true,
    picture: 'sdr',
    make: (v, a, out) => ['-f', 'lavfi', '-i', v, '-i', a, ...x264, ...aac(2), out],
  },
  ...(
    [
      [90, 'transpose=1'],
      [270, 'transpose=2'],
      [180, 'hflip,vflip'],
    ] as const
  ).map(([degrees, turn]): Kind => ({
    name: `phone clip stored turned, rotation ${degrees}`,
    ext: 'mp4',
    fps: 30,
    sound: true,
    picture: 'sdr',
    // Upright as shot (portrait), stored turned, with the rotation a player undoes (written by a
    // remux: ffmpeg drops a rotation tag given to an encode).
    file: async () => {
      const stored = path.join(dir, `turned-${degrees}.mp4`);
      const upright = degrees === 180 ? landscape() : landscape('720x1280');
      await run(FFMPEG, [
        '-y',
        '-v',
        'error',
        '-f',
        'lavfi',
        '-i',
        upright,
        '-i',
        path.join(dir, 'sound.wav'),
        '-vf',
        turn,
        ...x264,
        ...aac(2),
        stored,
      ]);
      const out = path.join(dir, `rotated-${degrees}.mp4`);
      await run(FFMPEG, ['-y', '-v', 'error', '-i', stored, '-c', 'copy', '-metadata:s:v:0', `rotate=${degrees}`, out]);
      return out;
    },
  })),
  ...(['pq', 'hlg'] as const).map((transfer): Kind => ({
    name: `10-bit HEVC HDR (${transfer === 'pq' ? 'PQ, HDR10' : 'HLG, as an iPhone records'})`,
    ext: 'mp4',
    fps: 24,
    sound: true,
    picture: 'hdr',
    file: async () => {
      const clipDir = path.join(dir, transfer);
      await mkdir(clipDir, { recursive: true });
      const clip = await makeHdrClip(clipDir, transfer, { topNits: 26, bottomNits: 1000, peakNits: 1000, seconds: SECONDS });
      const out = path.join(dir, `${transfer}-with-sound.mp4`);
      await run(
        FFMPEG,
        ['-y', '-v', 'error', '-i', clip.file, '-i', path.join(dir, 'sound.wav'), '-map', '0:v', '-map', '1:a'].concat([
          '-c:v',
          'copy',
          ...aac(2),
          '-shortest',
          out,
        ]),
      );
      return out;
    },
  })),
  {
    name: '5.1 sound',
    ext: 'mp4',
    fps: 30,
    sound: true,
    picture: 'sdr',
    make: (v, a, out) => ['-f', 'lavfi', '-i', v, '-i', a, '-af', 'pan=5.1|FL=c0|FR=c0|FC=c0|LFE=c0|BL=c0|BR=c0', ...x264, ...aac(6), out],
  },
  {
    name: '7.1 sound',
    ext: 'mp4',
    fps: 30,
    sound: true,
    picture: 'sdr',
    make: (v, a, out) => [
      ...['-f', 'lavfi', '-i', v, '-i', a, '-af', 'pan=7.1|FL=c0|FR=c0|FC=c0|LFE=c0|BL=c0|BR=c0|SL=c0|SR=c0'],
      ...[...x264, ...aac(8), out],
    ],
  },
  {
    name: 'upright 1080x1920 phone export',
    ext: 'mp4',
    fps: 30,
    sound: true,
    picture: 'sdr',
    make: (_v, a, out) => ['-f', 'lavfi', '-i', landscape('1080x1920'), '-i', a, ...x264, ...aac(2), out],
  },
  {
    name: '4K at 60 fps',
    ext: 'mp4',
    fps: 60,
    sound: true,
    picture: 'sdr',
    make: (_v, a, out) => ['-f', 'lavfi', '-i', landscape('3840x2160', 60), '-i', a, ...x264, ...aac(2), out],
  },
  {
    name: 'interlaced 1080i (fields, top first)',
    ext: 'mp4',
    fps: 30,
    sound: true,
    picture: 'sdr',
    make: (_v, a, out) => [
      ...['-f', 'lavfi', '-i', landscape('1920x1080', 60), '-i', a, '-vf', 'interlace'],
      ...[...x264, '-flags', '+ildct+ilme', '-x264opts', 'tff=1', ...aac(2), out],
    ],
  },
  {
    name: 'two sound tracks (OBS: desktop sound first, the microphone second)',
    ext: 'mp4',
    fps: 30,
    sound: true,
    picture: 'sdr',
    // The microphone (the second track) is transcribed and rendered, and the job says so.
    note: /track 2 has the most speech and is transcribed and rendered/,
    make: (v, a, out) => [
      ...['-f', 'lavfi', '-i', v, '-i', a, '-f', 'lavfi', '-i', `sine=f=330:d=${SECONDS}:r=48000,volume=0.3`],
      ...['-map', '0:v', '-map', '2:a', '-map', '1:a', ...x264, ...aac(2), out],
    ],
  },
  {
    name: 'no sound track (B-roll, a screen recording without a microphone)',
    ext: 'mp4',
    fps: 30,
    sound: false,
    picture: 'sdr',
    make: (v, _a, out) => ['-f', 'lavfi', '-i', v, ...x264, '-an', out],
  },
  {
    // A track that is there but holds only silence takes another path than no track at all: it is
    // decoded and heard before it is found empty.
    name: 'a sound track of only silence (a screen recorder with its microphone muted)',
    ext: 'mp4',
    fps: 30,
    sound: false,
    picture: 'sdr',
    note: /audio track is silent/,
    make: (v, _a, out) => [
      '-f',
      'lavfi',
      '-i',
      v,
      '-f',
      'lavfi',
      '-i',
      `anullsrc=r=48000:cl=stereo`,
      '-t',
      String(SECONDS),
      ...x264,
      ...aac(2),
      out,
    ],
  },
  {
    name: '320x240 at 15 fps, 22 kHz mono',
    ext: 'mp4',
    fps: 15,
    sound: true,
    picture: 'sdr',
    make: (_v, a, out) => ['-f', 'lavfi', '-i', landscape('320x240', 15), '-i', a, ...x264, '-c:a', 'aac', '-ac', '1', '-ar', '22050', out],
  },
  {
    name: 'variable frame rate (30 fps, then 10)',
    ext: 'mp4',
    fps: 30,
    sound: true,
    picture: 'sdr',
    make: (v, a, out) => [
      '-f',
      'lavfi',
      '-i',
      v,
      '-i',
      a,
      '-vf',
      "select='lt(t,1)+not(mod(n,3))'",
      '-vsync',
      'vfr',
      ...x264,
      ...aac(2),
      out,
    ],
  },
  {
    name: 'VP9/Opus WebM',
    ext: 'webm',
    fps: 30,
    sound: true,
    picture: 'sdr',
    make: (_v, a, out) => [
      ...['-f', 'lavfi', '-i', landscape('854x480'), '-i', a],
      ...['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-b:v', '800k', '-c:a', 'libopus', out],
    ],
  },
  {
    name: 'Matroska from a recorder',
    ext: 'mkv',
    fps: 30,
    sound: true,
    picture: 'sdr',
    make: (v, a, out) => ['-f', 'lavfi', '-i', v, '-i', a, ...x264, ...aac(2), out],
  },
  {
    name: 'fragmented MP4',
    ext: 'mp4',
    fps: 30,
    sound: true,
    picture: 'sdr',
    make: (v, a, out) => ['-f', 'lavfi', '-i', v, '-i', a, ...x264, ...aac(2), '-movflags', '+frag_keyframe+empty_moov', out],
  },
  {
    name: 'sound that starts 2 s after the picture',
    ext: 'mp4',
    fps: 30,
    sound: true,
    picture: 'sdr',
    make: (v, a, out) => [
      ...['-f', 'lavfi', '-i', v, '-itsoffset', '2', '-i', a, '-map', '0:v', '-map', '1:a'],
      ...['-af', 'atrim=start=2,asetpts=PTS-STARTPTS', ...x264, ...aac(2), out],
    ],
  },
  {
    name: 'ProRes with PCM sound (an editor export)',
    ext: 'mov',
    fps: 30,
    sound: true,
    picture: 'sdr',
    make: (_v, a, out) => [
      '-f',
      'lavfi',
      '-i',
      landscape('640x360'),
      '-i',
      a,
      '-c:v',
      'prores_ks',
      '-profile:v',
      '0',
      '-c:a',
      'pcm_s16le',
      out,
    ],
  },
  {
    name: '4:4:4 screen recording at 1366x768',
    ext: 'mp4',
    fps: 30,
    sound: true,
    picture: 'sdr',
    make: (_v, a, out) => [
      '-f',
      'lavfi',
      '-i',
      landscape('1366x768'),
      '-i',
      a,
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv444p',
      ...aac(2),
      out,
    ],
  },
];

const files = new Map<string, string>();

test.before(async () => {
  if (!fliteAvailable()) throw new Error('flite is required (apt-get install flite)');
  cluster = await startCluster('media_matrix');
  dir = path.join(cluster.dataDir, 'matrix');
  await mkdir(dir, { recursive: true });
  // Silence, a click at SYNC_AT, then words: the click is the loudest thing in the sound.
  const speech = await makeSpeech(path.join(dir, 'speech'), ['seven', 'green', 'boats', 'sailed', 'north']);
  const delayMs = Math.round((SYNC_AT + 0.4) * 1000);
  await run(FFMPEG, [
    ...[
      '-y',
      '-v',
      'error',
      '-i',
      speech.wav,
      '-f',
      'lavfi',
      '-i',
      `aevalsrc='0.95*between(t,${SYNC_AT},${SYNC_AT + 0.004})':s=48000:d=${SECONDS}`,
    ],
    ...['-filter_complex', `[0:a]aresample=48000,adelay=${delayMs},apad,volume=0.5[s];[s][1:a]amix=inputs=2:duration=shortest,volume=2[a]`],
    ...['-map', '[a]', '-t', String(SECONDS), '-c:a', 'pcm_s16le', path.join(dir, 'sound.wav')],
  ]);
  const served: Record<string, string> = {};
  for (const [i, kind] of KINDS.entries()) {
    const out = path.join(dir, `kind-${i}.${kind.ext}`);
    if (kind.file) served[`kind-${i}.${kind.ext}`] = await kind.file();
    else {
      await run(FFMPEG, ['-y', '-v', 'error', ...kind.make!(landscape(), path.join(dir, 'sound.wav'), out)]);
      served[`kind-${i}.${kind.ext}`] = out;
    }
    files.set(kind.name, `kind-${i}.${kind.ext}`);
  }
  // An audio-only file, and an index-first MP4 of which only 70 % of the bytes arrive.
  served['voice.m4a'] = path.join(dir, 'voice.m4a');
  await run(FFMPEG, ['-y', '-v', 'error', '-i', path.join(dir, 'sound.wav'), '-c:a', 'aac', served['voice.m4a']]);
  const whole = path.join(dir, 'faststart.mp4');
  await run(FFMPEG, [
    ...['-y', '-v', 'error', '-f', 'lavfi', '-i', landscape(), '-i', path.join(dir, 'sound.wav'), ...x264, ...aac(2)],
    ...['-movflags', '+faststart', whole],
  ]);
  const bytes = await readFile(whole);
  served['cut-short.mp4'] = path.join(dir, 'cut-short.mp4');
  await writeFile(served['cut-short.mp4'], bytes.subarray(0, Math.floor(bytes.length * 0.7)));
  // As most web servers and CDNs do: the agent reads an MP4's index first where it lies at the end.
  media = await serveFiles(served, { ranges: true });
  await cluster.startAgent();
});

test.after.always(async () => {
  await media?.close();
  await cluster?.close();
});

async function renderThrough(kind: Kind): Promise<{ file: string; job: Parsed }> {
  const { key } = await cluster.org({ plan: 'pro', credits: 10 });
  const created = await cluster.api('POST', '/api/jobs', {
    key,
    body: { functionName: 'VideoShorts', fileUrl: media.url(files.get(kind.name)!), options: { predefinedShorts: [SHORT] } },
  });
  if (created.status !== 201) throw new Error(`job refused: ${JSON.stringify(created.body)}`);
  const job = await cluster.settledJob(key, created.body.id, { timeoutMs: 300_000 });
  if (job.status !== 'COMPLETED') throw new Error(`job failed: ${job.message}`);
  return { file: await renderFirstShort(key, created.body.id), job };
}

/** The job's first short rendered at OUT through the API, downloaded. */
async function renderFirstShort(key: string, jobId: string): Promise<string> {
  const render = await cluster.api('POST', '/api/render', { key, body: { id: jobId, target: 0, size: OUT } });
  if (render.status !== 201) throw new Error(`render refused: ${JSON.stringify(render.body)}`);
  const done = await waitFor(
    async () => {
      const r = await cluster.api('GET', `/api/render/${render.body.renderId}`, { key });
      return r.body.type === 'done' || r.body.type === 'error' ? r.body : undefined;
    },
    300_000,
    'render',
  );
  if (done.type !== 'done') throw new Error(`render failed: ${JSON.stringify(done)}`);
  const file = path.join(dir, `${render.body.renderId}.mp4`);
  await writeFile(file, Buffer.from(await (await fetch(done.url)).arrayBuffer()));
  return file;
}

interface Probed {
  streams: Array<Record<string, string | number>>;
  format: { duration: string };
}

/** Luma planes of every frame, and each frame's time. */
async function frames(file: string): Promise<{ planes: Buffer[]; times: number[] }> {
  const { stdout } = await run(FFMPEG, ['-v', 'error', '-i', file, '-f', 'rawvideo', '-pix_fmt', 'gray', 'pipe:1'], {
    encoding: 'buffer',
    maxBuffer: 512 * 1024 * 1024,
  });
  const size = OUT.width * OUT.height;
  const planes = Array.from({ length: stdout.length / size }, (_, i) => stdout.subarray(i * size, (i + 1) * size));
  const { stdout: pts } = await run(FFPROBE, [
    '-v',
    'error',
    '-select_streams',
    'v:0',
    '-show_entries',
    'frame=pts_time',
    '-of',
    'csv=p=0',
    file,
  ]);
  return { planes, times: pts.trim().split('\n').map(Number) };
}

const meanOf = (plane: Buffer, y0: number, y1: number, x0 = 0, x1 = OUT.width) => {
  let sum = 0;
  for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) sum += plane[y * OUT.width + x]!;
  return sum / ((y1 - y0) * (x1 - x0));
};

/** The time of the click: the first sample over half the loudest, in the decoded stereo. */
async function clickAt(file: string): Promise<number> {
  const { stdout } = await run(FFMPEG, ['-v', 'error', '-i', file, '-map', '0:a:0', '-ac', '1', '-f', 's16le', '-ar', '48000', 'pipe:1'], {
    encoding: 'buffer',
    maxBuffer: 64 * 1024 * 1024,
  });
  const samples = new Int16Array(stdout.buffer, stdout.byteOffset, stdout.length / 2);
  // Only before the words start (the click is in silence).
  const until = Math.min(samples.length, Math.round((SYNC_AT + 0.3 - SHORT.start) * 48000));
  let loudest = 0;
  for (let i = 0; i < until; i++) loudest = Math.max(loudest, Math.abs(samples[i]!));
  for (let i = 0; i < until; i++) if (Math.abs(samples[i]!) >= loudest / 2) return i / 48000;
  return NaN;
}

async function loudness(file: string): Promise<{ integrated: number; truePeak: number }> {
  const { stderr } = await run(FFMPEG, [
    '-hide_banner',
    '-nostats',
    '-i',
    file,
    '-map',
    '0:a:0',
    '-af',
    'ebur128=peak=true',
    '-f',
    'null',
    '-',
  ]);
  const summary = stderr.slice(stderr.lastIndexOf('Summary:'));
  return { integrated: Number(/I:\s+(-?[\d.]+) LUFS/.exec(summary)![1]), truePeak: Number(/Peak:\s+(-?[\d.]+) dBFS/.exec(summary)![1]) };
}

for (const kind of KINDS) {
  test.serial(`${kind.name}: through the API to a short a phone and the networks play right`, async (t) => {
    const { file, job } = await renderThrough(kind);
    const { stdout } = await run(FFPROBE, ['-v', 'error', '-show_streams', '-show_format', '-of', 'json', file]);
    const probed = JSON.parse(stdout) as Probed;
    const video = probed.streams.find((s) => s.codec_type === 'video')!;
    t.like(video, { codec_name: 'h264', profile: 'High', pix_fmt: 'yuv420p', width: OUT.width, height: OUT.height });
    t.like(video, { color_space: 'bt709', color_transfer: 'bt709', color_primaries: 'bt709' });
    const length = SHORT.end - SHORT.start;
    t.true(Math.abs(Number(probed.format.duration) - length) <= 1 / kind.fps + 0.03, `${probed.format.duration} s, asked ${length}`);

    const { planes, times } = await frames(file);
    const middle = planes[Math.floor(planes.length / 4)]!;
    if (kind.picture === 'hdr') {
      // The top half of the source is a 26-nit grey, the bottom its 1000-nit peak (media-colour.test.ts).
      const top = meanOf(middle, OUT.height * 0.3, OUT.height * 0.4, OUT.width * 0.4, OUT.width * 0.6);
      const bottom = meanOf(middle, OUT.height * 0.6, OUT.height * 0.7, OUT.width * 0.4, OUT.width * 0.6);
      t.true(Math.abs(top - sdrCode(26 / 203)) <= 4, `HDR grey at ${top.toFixed(1)}`);
      t.true(bottom >= 230, `HDR peak at ${bottom.toFixed(1)}`);
    } else {
      // Upright: the bar is at the top of the picture, wherever the layout puts the picture.
      const upper = meanOf(middle, 0, OUT.height / 2);
      const lower = meanOf(middle, OUT.height / 2, OUT.height);
      t.true(upper > lower + 2, `upper half ${upper.toFixed(1)}, lower ${lower.toFixed(1)}: the bar is not on top`);
      // The grey as the source shows it, away from the bar.
      const grey = meanOf(middle, OUT.height * 0.8, OUT.height * 0.9, OUT.width * 0.3, OUT.width * 0.7);
      t.true(Math.abs(grey - GREY) <= 6, `grey at ${grey.toFixed(1)}, the source's ${GREY}`);
    }

    const audio = probed.streams.filter((s) => s.codec_type === 'audio');
    if (!kind.sound) {
      // A silent stereo track all the same: players and the networks expect one.
      t.is(audio.length, 1);
      t.like(audio[0], { codec_name: 'aac', channels: 2, sample_rate: '48000' });
      t.true(
        (job.data?.notes ?? []).some((n: string) => (kind.note ?? /no (audio|sound) track|no speech/i).test(n)),
        JSON.stringify(job.data?.notes),
      );
      const { stdout: pcm } = await run(FFMPEG, ['-v', 'error', '-i', file, '-map', '0:a:0', '-f', 's16le', 'pipe:1'], {
        encoding: 'buffer',
        maxBuffer: 16 * 1024 * 1024,
      });
      const samples = new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length / 2);
      t.true(samples.length > 0 && samples.every((v) => Math.abs(v) <= 1), 'the short sounds silent');
      return;
    }
    if (kind.note) {
      t.true(
        (job.data?.notes ?? []).some((n: string) => kind.note!.test(n)),
        JSON.stringify(job.data?.notes),
      );
    }
    t.is(audio.length, 1);
    t.like(audio[0], { codec_name: 'aac', channels: 2, sample_rate: '48000' });
    t.true(job.data.shorts[0].text.length > 0, 'the short has words: the speech was heard');
    const level = await loudness(file);
    t.true(Math.abs(level.integrated - -14) <= 1.5, `${level.integrated} LUFS`);
    t.true(level.truePeak <= -0.5, `true peak ${level.truePeak} dBTP`);
    if (kind.picture === 'sdr') {
      // The flash frame and the click, made together, arrive together.
      let flash = 1;
      for (let i = 1; i < planes.length; i++)
        if (meanOf(planes[i]!, 0, OUT.height, 0, OUT.width) > meanOf(planes[flash]!, 0, OUT.height)) flash = i;
      // A stream that starts later than the picture is played from its start time.
      const offset = Number(audio[0]!.start_time ?? 0) - Number(video.start_time ?? 0);
      const click = (await clickAt(file)) + offset;
      t.true(Math.abs(times[flash]! - click) <= 0.04 + 1 / kind.fps / 2, `flash at ${times[flash]} s, click at ${click.toFixed(3)} s`);
    }
  });
}

test.serial('a source without sound and without predefined shorts gets shorts chosen from its picture', async (t) => {
  const { key } = await cluster.org({ plan: 'pro', credits: 10 });
  const silent = files.get(KINDS.find((k) => !k.sound)!.name)!;
  const created = await cluster.api('POST', '/api/jobs', { key, body: { functionName: 'VideoShorts', fileUrl: media.url(silent) } });
  t.is(created.status, 201);
  const job = await cluster.settledJob(key, created.body.id, { timeoutMs: 300_000 });
  t.is(job.status, 'COMPLETED', job.message);
  t.true(job.data.shorts.length >= 1);
  t.true(job.data.shorts.every((s: { endTime: number; startTime: number }) => s.endTime > s.startTime && s.endTime <= SECONDS + 0.1));
  t.true(
    job.data.notes.some((n: string) => /picture/.test(n)),
    JSON.stringify(job.data.notes),
  );
});

test.serial('an audio-only file is refused with a message that says so, and costs nothing', async (t) => {
  const { key } = await cluster.org({ plan: 'pro', credits: 10 });
  const created = await cluster.api('POST', '/api/jobs', { key, body: { functionName: 'VideoShorts', fileUrl: media.url('voice.m4a') } });
  t.is(created.status, 201);
  const job = await cluster.settledJob(key, created.body.id, { timeoutMs: 120_000 });
  t.is(job.status, 'FAILED');
  t.regex(job.message, /no video stream/i);
  t.falsy(job.cost);
});

test.serial('a download cut short is analysed up to what arrived, says so, and its shorts render', async (t) => {
  const { key } = await cluster.org({ plan: 'pro', credits: 10 });
  const short = { title: 'What arrived', start: 1, end: 3 };
  const created = await cluster.api('POST', '/api/jobs', {
    key,
    body: { functionName: 'VideoShorts', fileUrl: media.url('cut-short.mp4'), options: { predefinedShorts: [short] } },
  });
  t.is(created.status, 201);
  const job = await cluster.settledJob(key, created.body.id, { timeoutMs: 180_000 });
  t.is(job.status, 'COMPLETED', job.message);
  t.true(
    (job.data.notes ?? []).some((n: string) => /cut short/.test(n)),
    JSON.stringify(job.data.notes),
  );
  const file = await renderFirstShort(key, created.body.id);
  const { stdout } = await run(FFPROBE, ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file]);
  t.true(Math.abs(Number(stdout) - (short.end - short.start)) <= 0.1, `${stdout.trim()} s`);
});
