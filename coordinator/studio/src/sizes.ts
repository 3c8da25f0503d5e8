// The render sizes the studio offers: those the organization's plan renders (render-request.ts checks
// them the same way, from PLAN_LIMITS), portrait 1080x1920 first where the plan allows it. The size
// chosen is remembered per brand preset (or caption style) in the browser, and always sent with the
// render: the API's own default, when no size is sent, stays the contract's 720x1280.
import { PLAN_LIMITS, type Plan } from '../../src/tenancy/plans.js';

export interface RenderSize {
  width: number;
  height: number;
  /** What the size control shows, e.g. "Portrait 9:16, 1080x1920". */
  label: string;
  /** The shape's name sent with the request, as the contract's `size.name`. */
  name: string;
}

/** Every plan may render this one (the contract's default format). */
export const BASE_SIZE: RenderSize = { width: 720, height: 1280, label: 'Portrait 9:16, 720x1280', name: '9:16' };

const CANDIDATES: RenderSize[] = [
  { width: 1080, height: 1920, label: 'Portrait 9:16, 1080x1920', name: '9:16' },
  BASE_SIZE,
  { width: 2160, height: 3840, label: 'Portrait 9:16, 2160x3840 (4K)', name: '9:16' },
  { width: 1080, height: 1080, label: 'Square 1:1, 1080x1080', name: '1:1' },
  { width: 1920, height: 1080, label: 'Landscape 16:9, 1920x1080', name: '16:9' },
  { width: 3840, height: 2160, label: 'Landscape 16:9, 3840x2160 (4K)', name: '16:9' },
];

export const sizeKey = (s: { width: number; height: number }) => `${s.width}x${s.height}`;

/** The sizes `plan` renders, the default one first. */
export function planSizes(plan: string): RenderSize[] {
  const max = PLAN_LIMITS[plan as Plan]?.renderSides;
  if (!max) return [BASE_SIZE];
  return CANDIDATES.filter((s) => Math.min(s.width, s.height) <= max.short && Math.max(s.width, s.height) <= max.long);
}

const storageKey = (choice: string) => `shorts-studio.render-size.${choice}`;

/**
 * The size to start with for a brand preset or caption style (`choice`, e.g. "brand:<id>"): the one
 * last chosen with it in this browser, else the preset's own size, else the plan's default; always
 * one of `sizes`.
 */
export function initialSize(sizes: RenderSize[], choice: string, presetSize?: { width: number; height: number } | null): RenderSize {
  const pick = (key: string | null | undefined) => (key ? sizes.find((s) => sizeKey(s) === key) : undefined);
  let remembered: string | null;
  try {
    remembered = localStorage.getItem(storageKey(choice));
  } catch {
    remembered = null; // storage switched off: the default
  }
  return pick(remembered) ?? pick(presetSize ? sizeKey(presetSize) : null) ?? sizes[0] ?? BASE_SIZE;
}

export function rememberSize(choice: string, size: { width: number; height: number }): void {
  try {
    localStorage.setItem(storageKey(choice), sizeKey(size));
  } catch {
    // storage switched off: the choice lasts the page
  }
}

const CHOICE_KEY = 'shorts-studio.render-choice';

/** The brand preset or caption style last chosen in the render panel (it survives a reload). */
export function rememberedChoice(): string | null {
  try {
    return localStorage.getItem(CHOICE_KEY);
  } catch {
    return null;
  }
}
export function rememberChoice(choice: string): void {
  try {
    localStorage.setItem(CHOICE_KEY, choice);
  } catch {
    // as above
  }
}
