// Where an ISO BMFF file (MP4, MOV, M4A) keeps its index, read from its first bytes only: a file
// written without `+faststart` (most cameras' and ffmpeg's default) puts `moov` after the media data,
// and nothing can be read from the file until it is there.

export type Mp4Layout =
  /** Not ISO BMFF, or its first bytes do not say: the file is fetched in order. */
  | { kind: 'unknown' }
  /** `moov` lies in the first bytes, ending at `end`. */
  | { kind: 'index-first'; end: number }
  /** A box that starts in the first bytes runs to `tailStart`, and the index lies after it. */
  | { kind: 'index-last'; tailStart: number };

/**
 * Walks the top-level boxes of `head` (the file's first bytes; the file is `total` bytes long). A box
 * that runs past the head (the media data) ends where the tail that holds `moov` begins.
 */
export function mp4Layout(head: Buffer, total: number): Mp4Layout {
  let at = 0;
  let first = true;
  while (at + 8 <= head.length) {
    let size = head.readUInt32BE(at);
    const type = head.toString('latin1', at + 4, at + 8);
    if (first && type !== 'ftyp') return { kind: 'unknown' };
    first = false;
    if (size === 1) {
      if (at + 16 > head.length) return { kind: 'unknown' };
      size = Number(head.readBigUInt64BE(at + 8));
    } else if (size === 0) size = total - at; // runs to the end of the file
    if (size < 8 || at + size > total) return { kind: 'unknown' };
    if (type === 'moov') return { kind: 'index-first', end: at + size };
    if (at + size > head.length) {
      // Media data (or anything) running past the head: the index, if any, follows it.
      return at + size < total ? { kind: 'index-last', tailStart: at + size } : { kind: 'unknown' };
    }
    at += size;
  }
  return { kind: 'unknown' };
}
