import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { resolveCaptionStyle, type StyleItem } from '@shorts/common/render/presets';
import { buildAssFile, buildCaptionPages, escapeAssText, type CaptionWord } from '../node-agent/src/media/captions.js';
import { readFontNames, resolveFontFace } from '../node-agent/src/media/fonts.js';
import { runFfmpeg } from '../node-agent/src/media/ffmpeg.js';
import { prepareRender } from '../node-agent/src/media/render-args.js';
import { FFMPEG, makeTestVideo } from './helpers/media.js';

const run = promisify(execFile);
const w = (text: string, start: number, end: number): CaptionWord => ({ text, start, end });
const texts = (pages: { words: CaptionWord[] }[]) => pages.map((p) => p.words.map((x) => x.text).join(' '));

// ---- pages ------------------------------------------------------------------------------------------

test('pages hold at most maxWordsInPage words', (t) => {
  const words = 'a b c d e f g'.split(' ').map((x, i) => w(x, i * 0.3, i * 0.3 + 0.25));
  t.deepEqual(texts(buildCaptionPages(words, 3)), ['a b c', 'd e f', 'g']);
  t.deepEqual(texts(buildCaptionPages(words, 1)), ['a', 'b', 'c', 'd', 'e', 'f', 'g']);
  t.deepEqual(texts(buildCaptionPages(words, 20)), ['a b c d e f g']);
});

test('a pause of 0.6 s or more starts a new page; a shorter one does not', (t) => {
  const pages = buildCaptionPages(
    [w('one', 0, 0.4), w('two', 0.5, 0.9), w('three', 1.5, 1.9), w('four', 2.0, 2.3), w('five', 2.89, 3.2)],
    10,
  );
  t.deepEqual(texts(pages), ['one two', 'three four five']);
});

test('sentence punctuation ends a page, closing quotes included', (t) => {
  const words = [
    w('Hi.', 0, 0.2),
    w('I', 0.25, 0.3),
    w('said', 0.35, 0.5),
    w('"stop!"', 0.55, 0.8),
    w('Why?', 0.85, 1),
    w('ok…', 1.05, 1.2),
    w('then,', 1.25, 1.4),
    w('go', 1.45, 1.6),
  ];
  t.deepEqual(texts(buildCaptionPages(words, 10)), ['Hi.', 'I said "stop!"', 'Why?', 'ok…', 'then, go']);
});

test('page timing: from its first word to its last, held over short gaps only', (t) => {
  const pages = buildCaptionPages([w('a', 1, 1.2), w('b', 1.3, 1.5), w('c', 1.7, 1.9), w('d', 3, 3.4)], 2);
  t.deepEqual(
    pages.map((p) => [p.start, p.end]),
    [
      [1, 1.7],
      [1.7, 1.9],
      [3, 3.4],
    ],
  );
});

test('blank words are dropped, input order does not matter', (t) => {
  const pages = buildCaptionPages([w('second', 0.5, 0.8), w('  ', 0.3, 0.4), w('first', 0, 0.3)], 5);
  t.deepEqual(texts(pages), ['first second']);
});

// ---- ASS --------------------------------------------------------------------------------------------

test('ASS: header, one event per page x active word, colours, pop, past words', (t) => {
  const style = resolveCaptionStyle('DEFAULT', [
    { property: 'color', value: '#FFFFFF', active: { value: '#00FF00', duration: 0.2 }, past: { value: '#808080', duration: 0.1 } },
    { property: 'transform', value: 'none', active: { value: 'scale(1.2)' } },
    { property: 'text-transform', value: 'uppercase' },
  ]);
  const pages = buildCaptionPages([w('one', 0.5, 0.9), w('two', 1.0, 1.4), w('three', 1.5, 2.0), w('four', 2.1, 2.5)], 3);
  const ass = buildAssFile(pages, style, { width: 720, height: 1280 });
  t.regex(ass, /^\[Script Info\]\nScriptType: v4\.00\+\nPlayResX: 720\nPlayResY: 1280\n/);
  t.regex(ass, /\nStyle: Caption,Montserrat,/);
  const events = ass.split('\n').filter((l) => l.startsWith('Dialogue:'));
  t.is(events.length, 4);
  t.true(events[0]!.startsWith('Dialogue: 1,0:00:00.50,0:00:01.00,Caption,'));
  t.true(events[2]!.startsWith('Dialogue: 1,0:00:01.50,0:00:02.10,Caption,')); // held until FOUR's page
  // Second event: ONE has just become past (fades from active to past), TWO active with a pop, THREE upcoming.
  t.true(events[1]!.includes('{\\1c&H00FF00&\\1a&H00&\\t(0,100,\\1c&H808080&\\1a&H00&)}ONE'));
  // The pop over 0.2 s in four steps (popSteps: at most 60 ms apart), each at once, half-way through its stretch.
  const pop =
    '\\fscx100\\fscy100\\t(25,25,\\fscx105\\fscy105)\\t(75,75,\\fscx110\\fscy110)\\t(125,125,\\fscx115\\fscy115)\\t(175,175,\\fscx120\\fscy120)';
  t.true(events[1]!.includes(`{\\1c&H00FF00&\\1a&H00&${pop}}TWO{\\fscx100\\fscy100}`));
  t.true(events[1]!.includes('{\\1c&HFFFFFF&\\1a&H00&}THREE'));
  t.false(events[1]!.includes('FOUR'));
  t.true(events[3]!.endsWith(`${pop}}FOUR{\\fscx100\\fscy100}`));
});

test('ASS: sizes scale with the output, fonts use their internal family name, box and shadow map', (t) => {
  const style = resolveCaptionStyle('VIRAL', [
    { property: 'background-color', value: 'rgba(0,0,0,0.5)' },
    { property: 'padding', value: '18px' },
  ]);
  const ass1080 = buildAssFile([], style, { width: 1080, height: 1920 });
  const ass720 = buildAssFile([], style, { width: 720, height: 1280 });
  t.regex(ass1080, /Style: Caption,Montserrat Black,80,&H00FFFFFF,&H00FFFFFF,&H00000000,&H66000000,0,0,0,0,100,100,0,0,1,8,6,2,/);
  t.regex(ass720, /Style: Caption,Montserrat Black,53\.33,.*,1,5\.33,4,2,/);
  // Box: BorderStyle 3 where OutlineColour is the box colour, on its own style and layer.
  t.regex(ass1080, /Style: Box,Montserrat Black,80,&HFF000000,&HFF000000,&H7F000000,&HFF000000,0,0,0,0,100,100,0,0,3,18,0,2,/);
  const boxed = buildAssFile(buildCaptionPages([w('hi', 0, 0.5), w('there', 0.5, 1)], 3), style, { width: 1080, height: 1920 });
  t.true(boxed.includes('Dialogue: 0,0:00:00.00,0:00:01.00,Box,,0,0,0,,HI THERE'));
  t.regex(boxed, /Dialogue: 1,0:00:00\.00,0:00:00\.50,Caption,,0,0,0,,\{\\xshad0\\yshad6\}/);
  t.regex(buildAssFile([], resolveCaptionStyle('HORMOZI', []), { width: 1080, height: 1920 }), /,5,65,65,0,1\n/); // centred: \an5, no MarginV
});

test('ASS text escaping: braces and backslashes cannot inject tags', (t) => {
  t.is(escapeAssText('{\\b1}x'), '\\{\\\u2060b1\\}x');
  t.is(escapeAssText('a\\Nb'), 'a\\\u2060Nb');
  t.is(escapeAssText('line\nbreak'), 'line break');
  const ass = buildAssFile(buildCaptionPages([w('{\\fs200}big', 0, 1)], 3), resolveCaptionStyle(undefined, []), {
    width: 720,
    height: 1280,
  });
  t.false(ass.includes('{\\fs200}'));
});

test("the ASS font names are the fonts' own family names (what libass matches)", async (t) => {
  for (const [family, weight, italic] of [
    ['Montserrat', 700, false],
    ['Montserrat', 900, false],
    ['Poppins', 800, true],
    ['Inter', 600, false],
    ['Anton', 700, false],
    ['Bebas Neue', 400, false],
  ] as const) {
    const face = resolveFontFace(family, weight, italic);
    const names = await readFontNames(face.file);
    t.is(names[1], face.assFontName, `${family} ${weight}`);
  }
  t.is(resolveFontFace('Anton', 900).bold, false); // no synthetic bold: Anton only has 400
  t.true(resolveFontFace('Montserrat', 700).bold);
});

// ---- real renders -------------------------------------------------------------------------------

const BG = [0x20, 0x30, 0x40];
let dir: string;
let source: string;

test.before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'media-captions-'));
  source = await makeTestVideo(path.join(dir, 'solid.mp4'), {
    colour: '0x203040',
    width: 360,
    height: 640,
    fps: 25,
    seconds: 2.6,
    toneHz: 300,
  });
});

test.after.always(async () => {
  await rm(dir, { recursive: true, force: true });
});

const WORDS = [w('one', 0.6, 1.0), w('two', 1.1, 1.5), w('three', 1.6, 2.2)]; // source times; the clip starts at 0.1

async function renderCaptions(name: string, items: StyleItem[], preset = 'DEFAULT'): Promise<string> {
  const out = path.join(dir, `${name}.mp4`);
  const args = await prepareRender({
    sourcePath: source,
    startTime: 0.1,
    endTime: 2.5,
    words: WORDS,
    output: { width: 360, height: 640, path: out },
    caption: { style: resolveCaptionStyle(preset, items), maxWordsInPage: 3 },
    encoder: 'libx264',
    workDir: path.join(dir, name),
    sourceWidth: 360,
    sourceHeight: 640,
  });
  await runFfmpeg(FFMPEG, args, { durationSec: 2.4 });
  return out;
}

async function frameAt(file: string, t: number): Promise<Buffer> {
  const { stdout } = await run(
    FFMPEG,
    ['-v', 'error', '-ss', String(t), '-i', file, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
    { encoding: 'buffer', maxBuffer: 1 << 22 },
  );
  return stdout;
}

interface Ink {
  count: number;
  green: number;
  white: number;
  greenX: number;
  minX: number;
  maxX: number;
  minY: number;
  maxY: number;
}

/** Pixels that are clearly not the background, and where the green ones sit. */
function ink(frame: Buffer): Ink {
  const r: Ink = { count: 0, green: 0, white: 0, greenX: 0, minX: 1e9, maxX: -1, minY: 1e9, maxY: -1 };
  for (let i = 0; i < 360 * 640; i++) {
    const [R, G, B] = [frame[i * 3]!, frame[i * 3 + 1]!, frame[i * 3 + 2]!];
    if (Math.abs(R - BG[0]!) + Math.abs(G - BG[1]!) + Math.abs(B - BG[2]!) < 40) continue;
    const x = i % 360;
    const y = Math.floor(i / 360);
    r.count++;
    Object.assign(r, { minX: Math.min(r.minX, x), maxX: Math.max(r.maxX, x), minY: Math.min(r.minY, y), maxY: Math.max(r.maxY, y) });
    if (G > 180 && R < 100 && B < 100) {
      r.green++;
      r.greenX += x;
    }
    if (R > 220 && G > 220 && B > 220) r.white++;
  }
  if (r.green) r.greenX /= r.green;
  return r;
}

const GREEN_ACTIVE: StyleItem[] = [
  { property: 'color', value: '#FFFFFF', active: { value: '#00FF00', duration: 0 } },
  { property: 'transform', value: 'none', active: { value: 'scale(1)' } },
  { property: 'text-shadow', value: 'none' },
];

test('burned-in captions: nothing before the first word, the active word in its own colour, moving along', async (t) => {
  const file = await renderCaptions('active', GREEN_ACTIVE);
  const before = ink(await frameAt(file, 0.2)); // clip time; "one" starts at 0.5
  t.is(before.count, 0);

  const first = ink(await frameAt(file, 0.7)); // ONE active
  const second = ink(await frameAt(file, 1.2)); // TWO active
  for (const f of [first, second]) {
    t.true(f.count > 500, `caption ink ${f.count}`);
    t.true(f.green > 50, `active-colour pixels ${f.green}`);
    t.true(f.white > 100, `other words stay white: ${f.white}`);
    // DEFAULT sits at the bottom: 360 design px above the edge, scaled to this frame.
    t.true(f.minY > 400 && f.maxY < 640, `caption rows ${f.minY}..${f.maxY}`);
  }
  t.true(second.greenX > first.greenX + 20, `active word moves right: ${first.greenX} -> ${second.greenX}`);

  const after = ink(await frameAt(file, 2.35)); // past the last word
  t.is(after.count, 0);
});

test('caption position and font come from the style (fonts load from the shipped files)', async (t) => {
  const top = ink(await frameAt(await renderCaptions('top', [...GREEN_ACTIVE, { property: 'top', value: '100px' }]), 1.2));
  t.true(top.count > 500);
  t.true(top.maxY < 200, `top caption rows ${top.minY}..${top.maxY}`);

  // Same words, two families: Anton is condensed, Montserrat Black is wide. If libass fell back to
  // some host font for either, the two would come out the same width.
  const anton = ink(
    await frameAt(
      await renderCaptions('anton', [
        ...GREEN_ACTIVE,
        { property: 'font-family', value: 'Anton' },
        { property: 'font-size', value: '90px' },
      ]),
      1.2,
    ),
  );
  const mont = ink(
    await frameAt(
      await renderCaptions('mont', [
        ...GREEN_ACTIVE,
        { property: 'font-family', value: 'Montserrat' },
        { property: 'font-weight', value: '900' },
        { property: 'font-size', value: '90px' },
      ]),
      1.2,
    ),
  );
  const widthA = anton.maxX - anton.minX;
  const widthM = mont.maxX - mont.minX;
  t.true(widthA > 50 && widthM > 50);
  t.true(widthM > widthA * 1.25, `Montserrat ${widthM}px vs Anton ${widthA}px`);
});
