// Caption fonts come from the @expo-google-fonts packages, never from the host: the render passes
// libass a fonts directory holding exactly the faces it needs.
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { CaptionFontFamily } from '@shorts/common/render/presets';

const require = createRequire(import.meta.url);

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

export interface FontFace {
  file: string; // absolute path of the TTF inside node_modules
  /**
   * The name an ASS style must use. libass matches the name table's family (ID 1), and these static
   * fonts only put Regular/Bold/Italic under the plain family: 800 is "Montserrat ExtraBold".
   */
  assFontName: string;
  bold: boolean; // ASS Bold flag: set only where the face really is the family's Bold
  italic: boolean;
}

/** The shipped face closest to the requested weight (no synthetic bolding by libass). */
export function resolveFontFace(family: CaptionFontFamily, weight = 400, italic = false): FontFace {
  const spec = PACKAGES[family];
  if (!spec) throw new Error(`no font files for family ${family}`);
  const w = spec.weights.reduce((best, cand) => (Math.abs(cand - weight) < Math.abs(best - weight) ? cand : best));
  const it = italic && spec.italics;
  const dirName = `${w}${WEIGHT_NAMES[w]}${it ? '_Italic' : ''}`;
  const file = path.join(packageDir(spec.pkg), dirName, `${spec.prefix}_${dirName}.ttf`);
  const ribbi = w === 400 || w === 700; // Regular, Italic, Bold, Bold Italic share the plain family
  return { file, assFontName: ribbi ? family : `${family} ${WEIGHT_NAMES[w]}`, bold: w === 700, italic: it };
}

function packageDir(pkg: string): string {
  return path.dirname(require.resolve(`${pkg}/package.json`));
}

/**
 * Copies the faces into `<workDir>/fonts` (copies, not links, so a sandboxed ffmpeg that only sees
 * the work dir still finds them) and returns that directory for `subtitles=...:fontsdir=`.
 */
export async function prepareFontsDir(workDir: string, faces: FontFace[]): Promise<string> {
  const dir = path.join(workDir, 'fonts');
  await mkdir(dir, { recursive: true });
  for (const face of faces) await copyFile(face.file, path.join(dir, path.basename(face.file)));
  return dir;
}

/** Name-table strings of a TrueType/OpenType file by name ID (1 family, 2 subfamily, 4 full name). */
export async function readFontNames(file: string): Promise<Record<number, string>> {
  const buf = await readFile(file);
  const numTables = buf.readUInt16BE(4);
  let nameOffset = -1;
  for (let i = 0; i < numTables; i++) {
    const rec = 12 + i * 16;
    if (buf.toString('latin1', rec, rec + 4) === 'name') nameOffset = buf.readUInt32BE(rec + 8);
  }
  if (nameOffset < 0) throw new Error(`${file} has no name table`);
  const count = buf.readUInt16BE(nameOffset + 2);
  const strings = nameOffset + buf.readUInt16BE(nameOffset + 4);
  const out: Record<number, string> = {};
  for (let i = 0; i < count; i++) {
    const r = nameOffset + 6 + i * 12;
    const [platform, , language, nameId, length, offset] = [0, 2, 4, 6, 8, 10].map((o) => buf.readUInt16BE(r + o)) as [
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    // Windows/US-English records are what libass (through FreeType) reads; they are UTF-16BE.
    if (platform !== 3 || language !== 0x409) continue;
    const raw = buf.subarray(strings + offset, strings + offset + length);
    out[nameId] = Buffer.from(raw).swap16().toString('utf16le');
  }
  return out;
}
