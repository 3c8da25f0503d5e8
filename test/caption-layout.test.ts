import test from 'ava';
import { readFileSync } from 'node:fs';
import {
  breakLines,
  captionMarginH,
  fontSizes,
  layoutCaption,
  popScale,
  popSteps,
  POP_STEP_SEC,
  textWidth,
} from '@shorts/common/render/caption-layout';
import { captionFace } from '@shorts/common/render/caption-fonts';
import { captionFontFile, styleFontMetrics } from '@shorts/common/render/caption-font-files';
import { readFontMetrics } from '@shorts/common/render/font-metrics';
import { resolveCaptionStyle } from '@shorts/common/render/presets';
import { buildAssFile } from '../node-agent/src/media/captions.js';

// The shared caption layout (common/src/render/caption-layout.ts) on its own: the numbers it reads
// from a font file, the line breaks, and the ASS script breaking exactly where the layout does.
// Its match with libass's pixels and the studio's canvas is tested in test/studio-caption-layout.test.ts.

test('font metrics come from the file: the em, the cell libass sizes by, advances by character', (t) => {
  const m = readFontMetrics(readFileSync(captionFontFile(captionFace('Montserrat', 900))));
  t.is(m.unitsPerEm, 1000);
  t.true(m.winAscent > 900 && m.winDescent > 200, `win ${m.winAscent}/${m.winDescent}`);
  t.true(m.advance('W'.codePointAt(0)!) > m.advance('i'.codePointAt(0)!), 'W is wider than i');
  t.is(m.advance('É'.codePointAt(0)!) > 0, true, 'accented capitals are mapped');
  const anton = styleFontMetrics(resolveCaptionStyle('BEAST', null));
  t.not(anton.advance('M'.codePointAt(0)!), m.advance('M'.codePointAt(0)!), 'another family, other advances');
});

test('lines: the fewest that fit between the margins with any word popped, the longest of them as short as can be', (t) => {
  const style = resolveCaptionStyle('VIRAL', null);
  const out = { width: 1080, height: 1920 };
  const font = styleFontMetrics(style);
  const words = ['the', 'quickest', 'brownest', 'foxes'];
  const lines = breakLines(words, style, out, font);
  t.deepEqual(lines, [
    [0, 1],
    [2, 3],
  ]);
  const { emPx } = fontSizes(style, out, font);
  const max = out.width - 2 * captionMarginH(out);
  const width = (ids: number[]) =>
    ids.reduce((s, j) => s + textWidth(words[j]!.toUpperCase(), emPx, font, 0), 0) +
    (ids.length - 1) * textWidth(' ', emPx, font, 0) +
    (style.active.scale - 1) * Math.max(...ids.map((j) => textWidth(words[j]!.toUpperCase(), emPx, font, 0)));
  for (const l of lines) t.true(width(l) <= max, `line ${l} fits`);
  t.true(width([0, 1, 2, 3]) > max, 'one line would not');
  // Landscape: the same words fit on one line.
  t.deepEqual(breakLines(words, style, { width: 1920, height: 1080 }, font), [[0, 1, 2, 3]]);
  // A word wider than the frame still gets its own line.
  t.deepEqual(breakLines(['a', 'supercalifragilisticexpialidocious', 'b'], style, out, font).length, 3);
});

test('the layout stacks cells from the anchor and centres each line; the spoken word pops and takes the active colour', (t) => {
  const style = resolveCaptionStyle('VIRAL', null);
  const out = { width: 720, height: 1280 };
  const font = styleFontMetrics(style);
  const l = layoutCaption({ words: ['the', 'quickest', 'brownest', 'foxes'], active: 2, style, output: out, font });
  t.is(l.lines.length, 2);
  t.is(Math.round(l.box.y + l.box.height), out.height - l.marginV, 'the block ends MarginV above the bottom');
  for (const line of l.lines) t.true(Math.abs(line.x + line.width / 2 - out.width / 2) < 0.01, 'centred');
  t.is(l.words[2]!.scale, style.active.scale);
  t.deepEqual(l.words[2]!.color, style.active.color);
  t.is(l.lines[1]!.height, l.fontSizePx * style.active.scale, "the popped word's line is taller");
  const early = layoutCaption({ words: ['the', 'quickest', 'brownest', 'foxes'], active: 2, elapsed: 0, style, output: out, font });
  t.is(early.words[2]!.scale, 1, 'the pop starts from rest');
});

test("the pop moves in steps at most 60 ms apart, the preview's as the script's: VIRAL's 0.12 s pop in two", (t) => {
  const style = resolveCaptionStyle('VIRAL', null);
  t.deepEqual(
    popSteps(style).map((s) => [Number(s.atSec.toFixed(3)), s.scale]),
    [
      [0.03, 1.125],
      [0.09, 1.25],
    ],
  );
  t.deepEqual(
    [0, 0.029, 0.03, 0.089, 0.09, 5].map((e) => popScale(style, e)),
    [1, 1, 1.125, 1.125, 1.25, 1.25],
  );
  // A slow pop keeps its steps short; a word that does not change size has none.
  const slow = resolveCaptionStyle('VIRAL', [{ property: 'transform', value: 'scale(1)', active: { value: 'scale(1.5)', duration: 1 } }]);
  const steps = popSteps(slow);
  t.is(steps.length, 17);
  t.true(steps.every((s, i) => s.atSec - (steps[i - 1]?.atSec ?? 0) <= POP_STEP_SEC + 1e-9));
  t.is(steps.at(-1)!.scale, 1.5);
  t.deepEqual(popSteps(resolveCaptionStyle('VIRAL', [{ property: 'transform', value: 'scale(1)', active: { value: 'scale(1)' } }])), []);
});

test('the ASS script breaks each page exactly where the layout does, and libass is told not to wrap', (t) => {
  const style = resolveCaptionStyle('VIRAL', null);
  const words = ['the', 'quickest', 'brownest', 'foxes'].map((text, i) => ({ text, start: i, end: i + 0.9 }));
  const ass = buildAssFile([{ words, start: 0, end: 4 }], style, { width: 1080, height: 1920 });
  t.regex(ass, /WrapStyle: 2/);
  const events = ass.split('\n').filter((l) => l.startsWith('Dialogue: 1,'));
  t.is(events.length, 4);
  for (const e of events) {
    const text = e
      .split(',')
      .slice(9)
      .join(',')
      .replace(/\{[^}]*\}/g, '');
    t.is(text, 'THE QUICKEST\\NBROWNEST FOXES');
  }
});
