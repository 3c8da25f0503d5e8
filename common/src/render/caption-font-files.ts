// Node only: where a caption face's file lies (in node_modules), for the agent's libass fonts
// directory and the coordinator's /studio/fonts/ route.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { captionFace, type CaptionFace } from './caption-fonts.js';
import { readFontMetrics, type FontMetrics } from './font-metrics.js';
import type { ResolvedCaptionStyle } from './presets.js';

const require = createRequire(import.meta.url);

export function captionFontFile(face: CaptionFace): string {
  return path.join(path.dirname(require.resolve(`${face.pkg}/package.json`)), face.pathInPackage);
}

const metrics = new Map<string, FontMetrics>();

/** The face's metrics, read once per process from its file. */
export function captionFontMetrics(face: CaptionFace): FontMetrics {
  let m = metrics.get(face.fileName);
  if (!m) {
    m = readFontMetrics(readFileSync(captionFontFile(face)));
    metrics.set(face.fileName, m);
  }
  return m;
}

/** The metrics of the face a caption style draws with. */
export const styleFontMetrics = (style: Pick<ResolvedCaptionStyle, 'fontFamily' | 'fontWeight' | 'italic'>) =>
  captionFontMetrics(captionFace(style.fontFamily, style.fontWeight, style.italic));
