// Caption styling: built-in presets and the CSS-like style items of render options (contract 2.9).
// A preset is itself a list of style items, so presets and user items go through one parser and
// user items override preset values property by property.
//
// Lengths in caption styles are design pixels of a frame whose short side is 1080 px; the renderer
// scales them to the real output so a preset looks the same at 720x1280 and 1080x1920.
import { invalidInput } from '../invalid-input.js';

export interface StyleItem {
  property: string;
  value: string;
  active?: { value: string; duration?: number };
  past?: { value: string; duration?: number };
}

export interface Rgba {
  r: number; // 0..255
  g: number;
  b: number;
  a: number; // 0..1
}

export type CaptionAnchor = 'top' | 'center' | 'bottom';

export interface ResolvedCaptionStyle {
  fontFamily: CaptionFontFamily;
  fontSizePx: number;
  fontWeight: number; // 100..900
  italic: boolean;
  color: Rgba; // words not spoken yet
  outlineColor: Rgba;
  outlineWidthPx: number; // 0 = no outline
  shadow: { color: Rgba; offsetXPx: number; offsetYPx: number; blurPx: number } | null;
  backgroundColor: Rgba | null; // box behind each line
  boxPaddingPx: number;
  uppercase: boolean;
  letterSpacingPx: number;
  position: { anchor: CaptionAnchor; marginPx: number };
  active: { color: Rgba; scale: number; duration: number }; // the word being spoken
  past: { color: Rgba; duration: number }; // words already spoken
}

/** Families whose font files ship with the agent (see node-agent/src/media/fonts.ts). */
export const CAPTION_FONT_FAMILIES = ['Montserrat', 'Poppins', 'Inter', 'Anton', 'Bebas Neue'] as const;
export type CaptionFontFamily = (typeof CAPTION_FONT_FAMILIES)[number];

const WHITE: Rgba = { r: 255, g: 255, b: 255, a: 1 };
const BLACK: Rgba = { r: 0, g: 0, b: 0, a: 1 };

/** The base every preset starts from, so a preset only lists what makes it different. */
const BASE: ResolvedCaptionStyle = {
  fontFamily: 'Montserrat',
  fontSizePx: 64,
  fontWeight: 700,
  italic: false,
  color: WHITE,
  outlineColor: BLACK,
  outlineWidthPx: 5,
  shadow: null,
  backgroundColor: null,
  boxPaddingPx: 12,
  uppercase: false,
  letterSpacingPx: 0,
  position: { anchor: 'bottom', marginPx: 360 },
  active: { color: { r: 255, g: 230, b: 0, a: 1 }, scale: 1.1, duration: 0.1 },
  past: { color: WHITE, duration: 0 },
};

const item = (property: string, value: string, active?: string, activeDuration = 0.1): StyleItem =>
  active === undefined ? { property, value } : { property, value, active: { value: active, duration: activeDuration } };

// Look-alikes of the styles popular clip tools ship; names are what clients send as `preset`.
const PRESETS = {
  DEFAULT: [] as StyleItem[],
  VIRAL: [
    item('font-family', 'Montserrat'),
    item('font-weight', '900'),
    item('font-size', '80px'),
    item('text-transform', 'uppercase'),
    item('-webkit-text-stroke', '8px #000000'),
    item('text-shadow', '0 6px 0 rgba(0,0,0,0.6)'),
    item('color', '#FFFFFF', '#39FF14'),
    item('transform', 'scale(1)', 'scale(1.25)', 0.12),
    item('bottom', '560px'),
  ],
  GRAPES: [
    item('font-family', 'Poppins'),
    item('font-weight', '800'),
    item('font-size', '72px'),
    item('-webkit-text-stroke', '6px #2B0A3D'),
    item('color', '#FFFFFF', '#C77DFF'),
    item('transform', 'scale(1)', 'scale(1.15)'),
    item('text-shadow', '0 4px 8px rgba(43,10,61,0.8)'),
    item('bottom', '420px'),
  ],
  HORMOZI: [
    item('font-family', 'Montserrat'),
    item('font-weight', '900'),
    item('font-size', '76px'),
    item('text-transform', 'uppercase'),
    item('-webkit-text-stroke', '10px black'),
    item('color', 'white', '#FFD400'),
    item('transform', 'scale(1)', 'scale(1.15)', 0.08),
    item('position', 'center'),
  ],
  BEAST: [
    item('font-family', 'Anton'),
    item('font-weight', '400'),
    item('font-size', '96px'),
    item('text-transform', 'uppercase'),
    item('-webkit-text-stroke', '9px #000'),
    item('text-shadow', '4px 6px 0 #000'),
    item('color', '#FFFFFF', '#FF2D2D'),
    item('transform', 'scale(1)', 'scale(1.3)', 0.1),
    item('bottom', '480px'),
  ],
  KARAOKE: [
    item('font-family', 'Poppins'),
    item('font-weight', '700'),
    item('font-size', '66px'),
    {
      property: 'color',
      value: 'rgba(255,255,255,0.55)',
      active: { value: '#00E5FF', duration: 0.05 },
      past: { value: '#FFFFFF', duration: 0.15 },
    },
    item('-webkit-text-stroke', '4px rgba(0,0,0,0.85)'),
    item('transform', 'scale(1)', 'scale(1.05)'),
  ],
  MINIMAL: [
    item('font-family', 'Inter'),
    item('font-weight', '600'),
    item('font-size', '52px'),
    item('-webkit-text-stroke', '0'),
    item('background-color', 'rgba(0,0,0,0.6)'),
    item('padding', '14px'),
    item('color', '#FFFFFF', '#FFFFFF'),
    item('transform', 'scale(1)', 'scale(1)'),
    item('bottom', '300px'),
  ],
} satisfies Record<string, StyleItem[]>;

export type CaptionPresetName = keyof typeof PRESETS;
export const CAPTION_PRESETS = Object.keys(PRESETS) as CaptionPresetName[];

/** Preset names compare case-insensitively: clients send `viral` as often as `VIRAL`. */
export function isCaptionPreset(name: unknown): boolean {
  return typeof name === 'string' && (CAPTION_PRESETS as string[]).includes(name.toUpperCase());
}

export function captionPresetItems(name: string): StyleItem[] {
  if (!isCaptionPreset(name)) throw invalidInput(`preset must be one of ${CAPTION_PRESETS.join(', ')}`);
  return PRESETS[name.toUpperCase() as CaptionPresetName];
}

/** Preset (or DEFAULT) first, then the explicit items in order: the last word on a property wins. */
export function resolveCaptionStyle(presetName: string | undefined | null, items: StyleItem[] | undefined | null): ResolvedCaptionStyle {
  const style = structuredClone(BASE);
  for (const it of captionPresetItems(presetName ?? 'DEFAULT')) applyItem(style, it, 'preset');
  (items ?? []).forEach((it, i) => applyItem(style, it, `style[${i}]`));
  return style;
}

// ---- property handlers -------------------------------------------------------------------------

type Handler = (s: ResolvedCaptionStyle, value: string, fail: (why: string) => never, it: StyleItem) => void;

const HANDLERS: Record<string, Handler> = {
  'font-family': (s, v, fail) => {
    s.fontFamily = parseFontFamily(v, fail);
  },
  'font-size': (s, v, fail) => {
    s.fontSizePx = parsePx(v, fail, { min: 8, max: 400 });
  },
  'font-weight': (s, v, fail) => {
    s.fontWeight = parseWeight(v, fail);
  },
  'font-style': (s, v, fail) => {
    const k = v.trim().toLowerCase();
    if (k !== 'italic' && k !== 'normal' && k !== 'oblique') fail('must be normal or italic');
    s.italic = k !== 'normal';
  },
  color: (s, v, fail, it) => {
    s.color = parseColor(v, fail);
    if (it.active)
      s.active = {
        ...s.active,
        color: parseColor(it.active.value, state('active', it.active, fail)),
        duration: duration(it.active, s.active.duration, fail),
      };
    if (it.past)
      s.past = { color: parseColor(it.past.value, state('past', it.past, fail)), duration: duration(it.past, s.past.duration, fail) };
    else s.past = { ...s.past, color: s.color };
  },
  '-webkit-text-stroke': (s, v, fail) => parseStroke(s, v, fail),
  'text-stroke': (s, v, fail) => parseStroke(s, v, fail),
  outline: (s, v, fail) => parseStroke(s, v, fail),
  '-webkit-text-stroke-width': (s, v, fail) => {
    s.outlineWidthPx = parsePx(v, fail, { min: 0, max: 60 });
  },
  '-webkit-text-stroke-color': (s, v, fail) => {
    s.outlineColor = parseColor(v, fail);
  },
  'outline-width': (s, v, fail) => {
    s.outlineWidthPx = parsePx(v, fail, { min: 0, max: 60 });
  },
  'outline-color': (s, v, fail) => {
    s.outlineColor = parseColor(v, fail);
  },
  'text-shadow': (s, v, fail) => {
    s.shadow = parseShadow(v, fail);
  },
  'background-color': (s, v, fail) => parseBackground(s, v, fail),
  background: (s, v, fail) => parseBackground(s, v, fail),
  padding: (s, v, fail) => {
    s.boxPaddingPx = parsePx(v, fail, { min: 0, max: 200 });
  },
  'text-transform': (s, v, fail) => {
    const k = v.trim().toLowerCase();
    if (k !== 'uppercase' && k !== 'none') fail('must be uppercase or none');
    s.uppercase = k === 'uppercase';
  },
  'letter-spacing': (s, v, fail) => {
    s.letterSpacingPx = v.trim().toLowerCase() === 'normal' ? 0 : parsePx(v, fail, { min: -50, max: 100 });
  },
  position: (s, v, fail) => {
    const k = v.trim().toLowerCase();
    const anchor = (k === 'middle' ? 'center' : k) as CaptionAnchor;
    if (!['top', 'center', 'bottom'].includes(anchor)) fail('must be top, center or bottom');
    s.position = {
      anchor,
      marginPx: anchor === 'center' ? 0 : s.position.anchor === anchor ? s.position.marginPx : BASE.position.marginPx,
    };
  },
  bottom: (s, v, fail) => {
    s.position = { anchor: 'bottom', marginPx: parsePx(v, fail, { min: 0, max: 1900 }) };
  },
  top: (s, v, fail) => {
    s.position = { anchor: 'top', marginPx: parsePx(v, fail, { min: 0, max: 1900 }) };
  },
  transform: (s, v, fail, it) => {
    parseScale(v, fail); // the resting value only has to be valid: words at rest are never scaled
    if (it.active)
      s.active = {
        ...s.active,
        scale: parseScale(it.active.value, state('active', it.active, fail)),
        duration: duration(it.active, s.active.duration, fail),
      };
  },
  scale: (s, v, fail, it) => HANDLERS.transform!(s, v, fail, it),
};

function applyItem(s: ResolvedCaptionStyle, it: StyleItem, where: string): void {
  if (!it || typeof it.property !== 'string') throw invalidInput(`${where}.property must be a string`);
  const property = it.property.trim().toLowerCase();
  const handler = HANDLERS[property];
  if (!handler) return; // unknown properties are ignored so newer clients do not break older agents
  const value = typeof it.value === 'number' ? String(it.value) : it.value;
  const fail = (why: string): never => {
    throw invalidInput(`${where} (${property}: ${JSON.stringify(it.value)}) ${why}`);
  };
  if (typeof value !== 'string') fail('value must be a string');
  handler(s, value, fail, it);
}

/** Errors in an `active`/`past` value name that value, not the item's resting one. */
function state(name: string, st: { value: string }, fail: (why: string) => never): (why: string) => never {
  return (why) => fail(`${name}.value ${JSON.stringify(st.value)} ${why}`);
}

function duration(state: { duration?: number }, fallback: number, fail: (why: string) => never): number {
  if (state.duration === undefined) return fallback;
  if (typeof state.duration !== 'number' || !Number.isFinite(state.duration) || state.duration < 0 || state.duration > 10) {
    fail('duration must be a number of seconds between 0 and 10');
  }
  return state.duration;
}

function parsePx(v: string, fail: (why: string) => never, o: { min: number; max: number }): number {
  const m = /^\s*(-?(?:\d+(?:\.\d*)?|\.\d+))(px)?\s*$/i.exec(v);
  if (!m) return fail('must be a pixel length like "48px"');
  const n = Number(m[1]);
  if (n < o.min || n > o.max) fail(`must be between ${o.min}px and ${o.max}px`);
  return n;
}

function parseWeight(v: string, fail: (why: string) => never): number {
  const k = v.trim().toLowerCase();
  if (k === 'normal') return 400;
  if (k === 'bold') return 700;
  const n = Number(k);
  if (!Number.isInteger(n) || n < 100 || n > 900 || n % 100 !== 0) fail('must be normal, bold or 100..900 in steps of 100');
  return n;
}

function parseFontFamily(v: string, fail: (why: string) => never): CaptionFontFamily {
  // CSS font lists: the first family we ship wins; generic fallbacks (sans-serif) are skipped.
  for (const raw of v.split(',')) {
    const name = raw
      .trim()
      .replace(/^["']|["']$/g, '')
      .trim()
      .toLowerCase();
    const hit = CAPTION_FONT_FAMILIES.find((f) => f.toLowerCase() === name || f.toLowerCase().replace(' ', '') === name);
    if (hit) return hit;
  }
  return fail(`names no available font; available: ${CAPTION_FONT_FAMILIES.join(', ')}`);
}

function parseScale(v: string, fail: (why: string) => never): number {
  const k = v.trim().toLowerCase();
  if (k === 'none') return 1;
  // `transform: scale(1.2)` or the bare number of a `scale` property
  const m = /^(?:scale\(\s*((?:\d+(?:\.\d*)?|\.\d+))\s*(%?)\s*\)|((?:\d+(?:\.\d*)?|\.\d+))(%?))$/.exec(k);
  if (!m) return fail('must be scale(N)');
  if (m[3] !== undefined) return checkScale(Number(m[3]) / (m[4] ? 100 : 1), fail);
  return checkScale(Number(m[1]) / (m[2] ? 100 : 1), fail);
}

function checkScale(n: number, fail: (why: string) => never): number {
  if (n < 0.5 || n > 3) fail('scale must be between 0.5 and 3');
  return n;
}

function parseStroke(s: ResolvedCaptionStyle, v: string, fail: (why: string) => never): void {
  const k = v.trim();
  if (k.toLowerCase() === 'none' || k === '0') {
    s.outlineWidthPx = 0;
    return;
  }
  // `<width> <color>` in either order; the colour may contain spaces inside rgb(...).
  const m = /^(-?[\d.]+(?:px)?)\s+(.+)$/i.exec(k) ?? /^(.+?)\s+(-?[\d.]+(?:px)?)$/i.exec(k);
  if (!m) {
    s.outlineWidthPx = parsePx(k, fail, { min: 0, max: 60 });
    return;
  }
  const widthFirst = /^-?[\d.]+(?:px)?$/i.test(m[1]!);
  s.outlineWidthPx = parsePx(widthFirst ? m[1]! : m[2]!, fail, { min: 0, max: 60 });
  s.outlineColor = parseColor(widthFirst ? m[2]! : m[1]!, fail);
}

function parseShadow(v: string, fail: (why: string) => never): ResolvedCaptionStyle['shadow'] {
  const k = v.trim();
  if (k.toLowerCase() === 'none') return null;
  const first = splitTopLevel(k, ',')[0]!; // only the first of several shadows is rendered
  const parts = splitTopLevel(first.trim(), ' ').filter(Boolean);
  const lengths: number[] = [];
  let color: Rgba = { r: 0, g: 0, b: 0, a: 0.8 };
  for (const p of parts) {
    if (/^-?[\d.]+(px)?$/i.test(p)) lengths.push(parsePx(p, fail, { min: -100, max: 100 }));
    else color = parseColor(p, fail);
  }
  if (lengths.length < 2 || lengths.length > 3) fail('must be "<x> <y> [blur] [color]"');
  if ((lengths[2] ?? 0) < 0) fail('blur must not be negative');
  return { color, offsetXPx: lengths[0]!, offsetYPx: lengths[1]!, blurPx: lengths[2] ?? 0 };
}

function parseBackground(s: ResolvedCaptionStyle, v: string, fail: (why: string) => never): void {
  const k = v.trim().toLowerCase();
  const color = k === 'none' ? null : parseColor(v, fail);
  s.backgroundColor = color && color.a > 0 ? color : null;
}

function splitTopLevel(v: string, sep: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const c of v) {
    if (c === '(') depth++;
    if (c === ')') depth--;
    if (depth === 0 && (sep === ' ' ? /\s/.test(c) : c === sep)) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

// ---- colours -----------------------------------------------------------------------------------

const NAMED: Record<string, string> = {
  black: '#000000',
  silver: '#c0c0c0',
  gray: '#808080',
  grey: '#808080',
  white: '#ffffff',
  maroon: '#800000',
  red: '#ff0000',
  purple: '#800080',
  fuchsia: '#ff00ff',
  magenta: '#ff00ff',
  green: '#008000',
  lime: '#00ff00',
  olive: '#808000',
  yellow: '#ffff00',
  navy: '#000080',
  blue: '#0000ff',
  teal: '#008080',
  aqua: '#00ffff',
  cyan: '#00ffff',
  orange: '#ffa500',
  gold: '#ffd700',
  pink: '#ffc0cb',
  transparent: '#00000000',
};

/** `#rgb`, `#rgba`, `#rrggbb`, `#rrggbbaa`, `rgb()`/`rgba()` (commas or spaces, `/ alpha`), basic named colours. */
export function parseColor(
  value: string,
  fail: (why: string) => never = (why) => {
    throw invalidInput(`colour ${JSON.stringify(value)} ${why}`);
  },
): Rgba {
  const v = value.trim().toLowerCase();
  const hex = NAMED[v] ?? v;
  let m = /^#([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/.exec(hex);
  if (m) {
    let h = m[1]!;
    if (h.length <= 4) h = [...h].map((c) => c + c).join('');
    const n = (i: number) => parseInt(h.slice(i, i + 2), 16);
    return { r: n(0), g: n(2), b: n(4), a: h.length === 8 ? Math.round((n(6) / 255) * 1000) / 1000 : 1 };
  }
  m = /^rgba?\((.*)\)$/.exec(v);
  if (m) {
    const parts = m[1]!.includes(',')
      ? m[1]!.split(',')
      : m[1]!
          .replace('/', ' / ')
          .split(/\s+/)
          .filter((p) => p && p !== '/');
    if (parts.length !== 3 && parts.length !== 4) fail('must have 3 or 4 components');
    const channel = (p: string) => {
      const t = p.trim();
      const n = t.endsWith('%') ? (Number(t.slice(0, -1)) / 100) * 255 : Number(t);
      if (t === '' || !Number.isFinite(n) || n < 0 || n > 255) fail('has a channel outside 0..255');
      return Math.round(n);
    };
    const alpha = (p: string | undefined) => {
      if (p === undefined) return 1;
      const t = p.trim();
      const n = t.endsWith('%') ? Number(t.slice(0, -1)) / 100 : Number(t);
      if (t === '' || !Number.isFinite(n) || n < 0 || n > 1) fail('has an alpha outside 0..1');
      return n;
    };
    return { r: channel(parts[0]!), g: channel(parts[1]!), b: channel(parts[2]!), a: alpha(parts[3]) };
  }
  return fail('is not a colour (#rgb, #rrggbb, #rrggbbaa, rgb(), rgba() or a basic colour name)');
}
