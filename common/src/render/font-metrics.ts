// The few numbers of a TrueType file that caption layout needs: advance widths by character, the
// em, and the ascent/descent libass sizes a font by. Read from the font file's bytes, so the agent
// (from node_modules) and the studio (the same file, fetched) measure a caption the same way.
// Kerning is not read: static Google Fonts keep it in GPOS, and leaving it out on both sides keeps
// the two layouts identical (libass kerns when it draws: a line comes out ~1 % narrower than laid out).

export interface FontMetrics {
  unitsPerEm: number;
  /** OS/2 usWinAscent / usWinDescent: libass sets a font's size as their sum (GDI's cell height). */
  winAscent: number;
  winDescent: number;
  /** OS/2 sCapHeight (0 when the table has none). */
  capHeight: number;
  /** Advance of a character in font units (the .notdef advance when the font lacks it). */
  advance(codePoint: number): number;
}

export function readFontMetrics(bytes: ArrayBuffer | Uint8Array): FontMetrics {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const view = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  const tables = new Map<string, number>();
  const numTables = view.getUint16(4);
  for (let i = 0; i < numTables; i++) {
    const rec = 12 + i * 16;
    const tag = String.fromCharCode(u8[rec]!, u8[rec + 1]!, u8[rec + 2]!, u8[rec + 3]!);
    tables.set(tag, view.getUint32(rec + 8));
  }
  const at = (tag: string) => {
    const off = tables.get(tag);
    if (off === undefined) throw new Error(`the font has no ${tag} table`);
    return off;
  };
  const unitsPerEm = view.getUint16(at('head') + 18);
  const numberOfHMetrics = view.getUint16(at('hhea') + 34);
  const hmtx = at('hmtx');
  const advanceOfGlyph = (glyph: number) => view.getUint16(hmtx + 4 * Math.min(glyph, numberOfHMetrics - 1));
  const os2 = at('OS/2');
  const os2Version = view.getUint16(os2);
  const winAscent = view.getUint16(os2 + 74);
  const winDescent = view.getUint16(os2 + 76);
  const capHeight = os2Version >= 2 ? view.getInt16(os2 + 88) : 0;
  const glyphOf = readCmap(view, at('cmap'));
  const cache = new Map<number, number>();
  return {
    unitsPerEm,
    winAscent,
    winDescent,
    capHeight,
    advance(codePoint) {
      let a = cache.get(codePoint);
      if (a === undefined) {
        a = advanceOfGlyph(glyphOf(codePoint));
        cache.set(codePoint, a);
      }
      return a;
    },
  };
}

/** Character to glyph, from the Unicode subtable (format 12 preferred, else format 4). */
function readCmap(view: DataView, cmap: number): (codePoint: number) => number {
  const n = view.getUint16(cmap + 2);
  let best: { format: number; offset: number } | null = null;
  for (let i = 0; i < n; i++) {
    const platform = view.getUint16(cmap + 4 + i * 8);
    const encoding = view.getUint16(cmap + 6 + i * 8);
    const offset = cmap + view.getUint32(cmap + 8 + i * 8);
    const unicode = platform === 0 || (platform === 3 && (encoding === 1 || encoding === 10));
    if (!unicode) continue;
    const format = view.getUint16(offset);
    if (format === 12 || (format === 4 && best?.format !== 12)) best = { format, offset };
  }
  if (!best) throw new Error('the font has no Unicode cmap');
  const { format, offset } = best;
  if (format === 12) {
    const groups = view.getUint32(offset + 12);
    return (c) => {
      for (let g = 0; g < groups; g++) {
        const p = offset + 16 + g * 12;
        const startChar = view.getUint32(p);
        const endChar = view.getUint32(p + 4);
        if (c >= startChar && c <= endChar) return view.getUint32(p + 8) + (c - startChar);
      }
      return 0;
    };
  }
  const segX2 = view.getUint16(offset + 6);
  const ends = offset + 14;
  const starts = ends + segX2 + 2;
  const deltas = starts + segX2;
  const rangeOffsets = deltas + segX2;
  return (c) => {
    if (c > 0xffff) return 0;
    for (let s = 0; s < segX2; s += 2) {
      if (c > view.getUint16(ends + s)) continue;
      const start = view.getUint16(starts + s);
      if (c < start) return 0;
      const delta = view.getInt16(deltas + s);
      const ro = view.getUint16(rangeOffsets + s);
      if (ro === 0) return (c + delta) & 0xffff;
      const glyph = view.getUint16(rangeOffsets + s + ro + 2 * (c - start));
      return glyph === 0 ? 0 : (glyph + delta) & 0xffff;
    }
    return 0;
  };
}
