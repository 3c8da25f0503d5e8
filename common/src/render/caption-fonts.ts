// Which font file draws a caption style: the renderer (node-agent/src/media/fonts.ts) hands this
// file to libass, and the studio's preview loads the same file (served under /studio/fonts/), so
// both lay out and draw captions with one face.
import type { CaptionFontFamily } from './presets.js';

const PACKAGES: Record<CaptionFontFamily, { pkg: string; prefix: string; weights: number[]; italics: boolean }> = {
  Montserrat: {
    pkg: '@expo-google-fonts/montserrat',
    prefix: 'Montserrat',
    weights: [100, 200, 300, 400, 500, 600, 700, 800, 900],
    italics: true,
  },
  Poppins: { pkg: '@expo-google-fonts/poppins', prefix: 'Poppins', weights: [100, 200, 300, 400, 500, 600, 700, 800, 900], italics: true },
  Inter: { pkg: '@expo-google-fonts/inter', prefix: 'Inter', weights: [100, 200, 300, 400, 500, 600, 700, 800, 900], italics: true },
  Anton: { pkg: '@expo-google-fonts/anton', prefix: 'Anton', weights: [400], italics: false },
  'Bebas Neue': { pkg: '@expo-google-fonts/bebas-neue', prefix: 'BebasNeue', weights: [400], italics: false },
};

const WEIGHT_NAMES: Record<number, string> = {
  100: 'Thin',
  200: 'ExtraLight',
  300: 'Light',
  400: 'Regular',
  500: 'Medium',
  600: 'SemiBold',
  700: 'Bold',
  800: 'ExtraBold',
  900: 'Black',
};

export interface CaptionFace {
  family: CaptionFontFamily;
  /** The npm package holding the file, and the file's path inside it. */
  pkg: string;
  pathInPackage: string;
  /** The file's own name, unique over all faces (`Montserrat_900Black.ttf`). */
  fileName: string;
  /**
   * The name an ASS style must use. libass matches the name table's family (ID 1), and these static
   * fonts only put Regular/Bold/Italic under the plain family: 800 is "Montserrat ExtraBold".
   */
  assFontName: string;
  bold: boolean; // ASS Bold flag: set only where the face really is the family's Bold
  italic: boolean;
}

/** The shipped face closest to the requested weight (no synthetic bolding, in libass or the browser). */
export function captionFace(family: CaptionFontFamily, weight = 400, italic = false): CaptionFace {
  const spec = PACKAGES[family];
  if (!spec) throw new Error(`no font files for family ${family}`);
  const w = spec.weights.reduce((best, cand) => (Math.abs(cand - weight) < Math.abs(best - weight) ? cand : best));
  const it = italic && spec.italics;
  const dirName = `${w}${WEIGHT_NAMES[w]}${it ? '_Italic' : ''}`;
  const fileName = `${spec.prefix}_${dirName}.ttf`;
  const ribbi = w === 400 || w === 700; // Regular, Italic, Bold, Bold Italic share the plain family
  return {
    family,
    pkg: spec.pkg,
    pathInPackage: `${dirName}/${fileName}`,
    fileName,
    assFontName: ribbi ? family : `${family} ${WEIGHT_NAMES[w]}`,
    bold: w === 700,
    italic: it,
  };
}

/** The face a file name names, or undefined (the studio's font route serves only these). */
export function captionFaceByFileName(fileName: string): CaptionFace | undefined {
  for (const family of Object.keys(PACKAGES) as CaptionFontFamily[]) {
    const spec = PACKAGES[family];
    for (const w of spec.weights) {
      for (const italic of spec.italics ? [false, true] : [false]) {
        const face = captionFace(family, w, italic);
        if (face.fileName === fileName) return face;
      }
    }
  }
  return undefined;
}

/** Where the studio fetches a face from. */
export const CAPTION_FONT_ROUTE = '/studio/fonts';
export const captionFontUrl = (face: CaptionFace) => `${CAPTION_FONT_ROUTE}/${face.fileName}`;
