// Caption fonts come from the @expo-google-fonts packages, never from the host: the render passes
// libass a fonts directory holding exactly the faces it needs.
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { CaptionFontFamily } from '@shorts/common/render/presets';
import { captionFace } from '@shorts/common/render/caption-fonts';
import { captionFontFile } from '@shorts/common/render/caption-font-files';

export interface FontFace {
  file: string; // absolute path of the TTF inside node_modules
  /** See CaptionFace.assFontName. */
  assFontName: string;
  bold: boolean;
  italic: boolean;
}

/** The shipped face closest to the requested weight (common/src/render/caption-fonts.ts picks it). */
export function resolveFontFace(family: CaptionFontFamily, weight = 400, italic = false): FontFace {
  const face = captionFace(family, weight, italic);
  return { file: captionFontFile(face), assFontName: face.assFontName, bold: face.bold, italic: face.italic };
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
