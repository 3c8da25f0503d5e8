import test, { type ExecutionContext } from 'ava';
import { InvalidInput } from '@shorts/common/invalid-input';
import { appErrorOf } from '../coordinator/src/errors.js';
import { BLEND_MODES, normalizeRenderOptions, watermarkOpacity } from '@shorts/common/render/options';
import { CAPTION_PRESETS, isCaptionPreset, parseColor, resolveCaptionStyle } from '@shorts/common/render/presets';

const rejects = (t: ExecutionContext, raw: unknown, message: RegExp) => {
  const err = t.throws(() => normalizeRenderOptions(raw), { instanceOf: InvalidInput }) as InvalidInput;
  t.is(appErrorOf(err)?.status, 400);
  t.regex(err.message, message);
};

test('a full contract example passes and keeps its values', (t) => {
  const raw = {
    maxWordsInPage: 4,
    waterMark: {
      fileAppId: 'f_1',
      waterMarkUrl: 'https://cdn.example.com/logo.png',
      left: '20px',
      top: 'calc(100% - 120px)',
      width: '25%',
      opacity: '0.6',
      blendMode: 'screen',
    },
    style: [{ property: 'color', value: '#fff', active: { value: '#ff0', duration: 0.2 }, past: { value: 'white', duration: 0.1 } }],
    director: { camera: { facePaddingFactor: 1.4 }, intelligence: { maxSpeakersToFocus: 2 } },
  };
  t.deepEqual(normalizeRenderOptions(raw), raw);
});

test('legacy keys: WaterMark, watermarkUrl and the styles alias are normalised', (t) => {
  const out = normalizeRenderOptions({
    WaterMark: { watermarkUrl: 'https://x.example/a.png', opacity: 0.5 },
    styles: [{ property: 'font-size', value: 60 }],
  });
  t.deepEqual(out, {
    waterMark: { waterMarkUrl: 'https://x.example/a.png', opacity: 0.5, blendMode: 'normal' },
    style: [{ property: 'font-size', value: '60' }],
  });
  t.false('WaterMark' in out);
  t.false('styles' in out);
  // When both spellings come, the canonical one wins.
  const both = normalizeRenderOptions({ style: [{ property: 'color', value: 'red' }], styles: [{ property: 'color', value: 'blue' }] });
  t.is(both.style?.[0]?.value, 'red');
});

test('blendMode defaults to normal, is case/spelling tolerant, and the 16 modes are listed', (t) => {
  t.is(BLEND_MODES.length, 16);
  t.is(normalizeRenderOptions({ waterMark: {} }).waterMark?.blendMode, 'normal');
  t.is(normalizeRenderOptions({ waterMark: { blendMode: 'Color-Dodge' } }).waterMark?.blendMode, 'color-dodge');
  t.is(normalizeRenderOptions({ waterMark: { blendMode: 'softLight' } }).waterMark?.blendMode, 'soft-light');
  t.is(normalizeRenderOptions({ waterMark: { blendMode: 'hard_light' } }).waterMark?.blendMode, 'hard-light');
  for (const m of BLEND_MODES) t.is(normalizeRenderOptions({ waterMark: { blendMode: m } }).waterMark?.blendMode, m);
  rejects(t, { waterMark: { blendMode: 'burn' } }, /^options\.waterMark\.blendMode: must be one of normal, multiply/);
});

test('positions: px, %, calc() accepted; anything else is a 400 naming the field', (t) => {
  t.notThrows(() => normalizeRenderOptions({ waterMark: { left: '5%', bottom: 'calc(10% + 4px)', width: '120px' } }));
  rejects(t, { waterMark: { left: '10' } }, /^options\.waterMark\.left: /);
  rejects(t, { waterMark: { top: '1em' } }, /^options\.waterMark\.top: /);
  rejects(t, { waterMark: { bottom: 'calc(10px * 2)' } }, /^options\.waterMark\.bottom: .*only \+ and -/);
  rejects(t, { waterMark: { width: 100 } }, /^options\.waterMark\.width: /);
});

test('opacity: string or number in 0..1', (t) => {
  t.is(watermarkOpacity(normalizeRenderOptions({ waterMark: { opacity: '0.25' } }).waterMark!), 0.25);
  t.is(watermarkOpacity(normalizeRenderOptions({ waterMark: { opacity: 1 } }).waterMark!), 1);
  t.is(watermarkOpacity(normalizeRenderOptions({ waterMark: {} }).waterMark!), 1);
  for (const opacity of ['1.5', -0.1, 2, 'half', '', '0x1'])
    rejects(t, { waterMark: { opacity } }, /^options\.waterMark\.opacity: must be a number from 0\.0 to 1\.0/);
});

test('maxWordsInPage is an integer 1..20; waterMarkUrl must be http(s)', (t) => {
  t.is(normalizeRenderOptions({ maxWordsInPage: 20 }).maxWordsInPage, 20);
  for (const n of [0, 21, 2.5, '3']) rejects(t, { maxWordsInPage: n }, /^options\.maxWordsInPage: /);
  rejects(t, { waterMark: { waterMarkUrl: 'file:///etc/passwd' } }, /^options\.waterMark\.waterMarkUrl: /);
  rejects(t, { waterMark: { waterMarkUrl: 'not a url' } }, /^options\.waterMark\.waterMarkUrl: /);
});

test('director passes unknown keys through, checks the known ones', (t) => {
  const out = normalizeRenderOptions({ director: { camera: { facePaddingFactor: 1.1, smoothing: 'high' }, mode: 'auto' } });
  t.deepEqual(out.director, { camera: { facePaddingFactor: 1.1, smoothing: 'high' }, mode: 'auto' });
  rejects(t, { director: { camera: { facePaddingFactor: 'big' } } }, /^options\.director\.camera\.facePaddingFactor: /);
  rejects(t, { director: { intelligence: { maxSpeakersToFocus: 0 } } }, /^options\.director\.intelligence\.maxSpeakersToFocus: /);
});

test('style items: shape and values are checked with the path in the message', (t) => {
  rejects(t, { style: [{ property: 'color' }] }, /^options\.style\[0\]\.value: /);
  rejects(t, { style: [{ value: 'red' }] }, /^options\.style\[0\]\.property: /);
  rejects(t, { style: {} }, /^options\.style: /);
  rejects(
    t,
    {
      style: [
        { property: 'color', value: 'red' },
        { property: 'color', value: 'reddish' },
      ],
    },
    /^options\.style\[1\] \(color: "reddish"\) is not a colour/,
  );
  rejects(t, { style: [{ property: 'font-family', value: 'Comic Sans MS' }] }, /available: Montserrat/);
  rejects(
    t,
    { style: [{ property: 'color', value: 'red', active: { value: 'blue', duration: -1 } }] },
    /^options\.style\[0\]\.active\.duration: /,
  );
  // Unknown properties are not errors.
  t.notThrows(() => normalizeRenderOptions({ style: [{ property: 'text-decoration', value: 'wavy' }] }));
});

test('not an object is a 400; missing options are empty', (t) => {
  rejects(t, 'x', /options must be an object/);
  rejects(t, [1], /options must be an object/);
  t.deepEqual(normalizeRenderOptions(undefined), {});
  t.deepEqual(normalizeRenderOptions(null), {});
});

// ---- presets and caption styles ------------------------------------------------------------------

test('built-in presets: DEFAULT, VIRAL, GRAPES and more, case-insensitive', (t) => {
  for (const name of ['DEFAULT', 'VIRAL', 'GRAPES', 'HORMOZI', 'BEAST', 'KARAOKE', 'MINIMAL'])
    t.true((CAPTION_PRESETS as string[]).includes(name), name);
  t.true(isCaptionPreset('viral'));
  t.false(isCaptionPreset('NOPE'));
  t.false(isCaptionPreset(3));
  // Every preset resolves, and they are not all the same look.
  const looks = new Set(CAPTION_PRESETS.map((p) => JSON.stringify(resolveCaptionStyle(p, []))));
  t.is(looks.size, CAPTION_PRESETS.length);
  t.throws(() => resolveCaptionStyle('NOPE', []), { instanceOf: InvalidInput, message: /preset must be one of DEFAULT, VIRAL, GRAPES/ });
});

test('explicit items override preset values property by property', (t) => {
  const viral = resolveCaptionStyle('VIRAL', []);
  t.is(viral.fontWeight, 900);
  t.true(viral.uppercase);
  const s = resolveCaptionStyle('VIRAL', [
    { property: 'color', value: '#123456' },
    { property: 'font-size', value: '40px' },
    { property: 'text-transform', value: 'none' },
  ]);
  t.deepEqual(s.color, { r: 0x12, g: 0x34, b: 0x56, a: 1 });
  t.is(s.fontSizePx, 40);
  t.false(s.uppercase);
  t.is(s.fontWeight, 900); // untouched: still the preset's
  t.deepEqual(s.active.color, viral.active.color);
});

test('CSS-like properties map onto the resolved style', (t) => {
  const s = resolveCaptionStyle(undefined, [
    { property: 'font-family', value: '"Bebas Neue", Arial, sans-serif' },
    { property: 'font-weight', value: 'bold' },
    { property: 'font-style', value: 'italic' },
    { property: '-webkit-text-stroke', value: '3px rgba(255, 0, 0, 0.5)' },
    { property: 'text-shadow', value: '2px 4px 6px #00000080' },
    { property: 'background-color', value: 'rgb(0 0 0 / 50%)' },
    { property: 'padding', value: '20px' },
    { property: 'letter-spacing', value: '2px' },
    { property: 'top', value: '150px' },
    { property: 'color', value: 'white', active: { value: 'lime', duration: 0.3 }, past: { value: 'gray', duration: 0.2 } },
    { property: 'transform', value: 'none', active: { value: 'scale(1.4)' } },
    { property: 'Unknown-Thing', value: '!!' },
  ]);
  t.is(s.fontFamily, 'Bebas Neue');
  t.is(s.fontWeight, 700);
  t.true(s.italic);
  t.is(s.outlineWidthPx, 3);
  t.deepEqual(s.outlineColor, { r: 255, g: 0, b: 0, a: 0.5 });
  t.deepEqual(s.shadow, { color: { r: 0, g: 0, b: 0, a: 0.502 }, offsetXPx: 2, offsetYPx: 4, blurPx: 6 });
  t.deepEqual(s.backgroundColor, { r: 0, g: 0, b: 0, a: 0.5 });
  t.is(s.boxPaddingPx, 20);
  t.is(s.letterSpacingPx, 2);
  t.deepEqual(s.position, { anchor: 'top', marginPx: 150 });
  t.deepEqual(s.active, { color: { r: 0, g: 255, b: 0, a: 1 }, scale: 1.4, duration: 0.3 });
  t.deepEqual(s.past, { color: { r: 128, g: 128, b: 128, a: 1 }, duration: 0.2 });
  t.deepEqual(resolveCaptionStyle(undefined, [{ property: 'outline', value: 'black 4px' }]).outlineWidthPx, 4);
  t.is(resolveCaptionStyle(undefined, [{ property: 'position', value: 'center' }]).position.anchor, 'center');
  t.is(resolveCaptionStyle(undefined, [{ property: 'text-shadow', value: 'none' }]).shadow, null);
});

test('colours: hex forms, rgb()/rgba(), names; bad ones are 400s', (t) => {
  t.deepEqual(parseColor('#f00'), { r: 255, g: 0, b: 0, a: 1 });
  t.deepEqual(parseColor('#00ff0080'), { r: 0, g: 255, b: 0, a: 0.502 });
  t.deepEqual(parseColor('rgba(10, 20, 30, .25)'), { r: 10, g: 20, b: 30, a: 0.25 });
  t.deepEqual(parseColor('rgb(100%, 0%, 50%)'), { r: 255, g: 0, b: 128, a: 1 });
  t.deepEqual(parseColor('Yellow'), { r: 255, g: 255, b: 0, a: 1 });
  t.deepEqual(parseColor('transparent'), { r: 0, g: 0, b: 0, a: 0 });
  for (const bad of ['#12', '#ggg', 'rgb(256,0,0)', 'rgba(0,0,0,2)', 'rgb(1,2)', 'hsl(0,0%,0%)', 'blurple']) {
    t.throws(() => parseColor(bad), { instanceOf: InvalidInput }, bad);
  }
  const err = t.throws(() => resolveCaptionStyle(undefined, [{ property: 'font-size', value: 'huge' }]), { instanceOf: InvalidInput });
  t.regex(err.message, /^style\[0\] \(font-size: "huge"\) must be a pixel length/);
  t.throws(() => resolveCaptionStyle(undefined, [{ property: 'font-weight', value: '450' }]), { instanceOf: InvalidInput });
  t.throws(() => resolveCaptionStyle(undefined, [{ property: 'color', value: 'white', active: { value: 'blurple' } }]), {
    instanceOf: InvalidInput,
    message: /^style\[0\] \(color: "white"\) active\.value "blurple" is not a colour/,
  });
  t.throws(() => resolveCaptionStyle(undefined, [{ property: 'transform', value: 'none', active: { value: 'rotate(3deg)' } }]), {
    instanceOf: InvalidInput,
  });
});
