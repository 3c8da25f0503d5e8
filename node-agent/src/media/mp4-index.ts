// An MP4's sample index (ISO BMFF `moov`), read for one purpose: which bytes of the file a stretch of
// it needs (./source-stretch.ts), so that a render chunk fetches those rather than the whole source
// (issue 35). Only what that takes is read: each track's handler, clock, edit list and sample table.
// Anything this does not model returns null and the caller fetches the whole file: fragmented files
// (`mvex`, `moof`), compact sample sizes (`stz2`), edit lists of more than one stretch of media.

export interface Mp4Track {
  /** `vide`, `soun`, ... */
  handler: string;
  timescale: number;
  /** Seconds added to (dts + cts) / timescale to give the presentation time: the edit list's shift. */
  shiftSec: number;
  /** Decode times (timescale units), sizes and file offsets of each sample, in decoding order. */
  dts: Float64Array;
  cts: Int32Array | null;
  size: Float64Array;
  offset: Float64Array;
  /** Which samples are sync samples (keyframes); null: every one is. */
  sync: Uint8Array | null;
}

/** Unsupported or malformed: the caller fetches the whole file. */
class Unsupported extends Error {}

interface Box {
  type: string;
  /** Where its body starts and where the box ends, in the buffer. */
  body: number;
  end: number;
}

/** The boxes in buf[start, end). */
export function boxesIn(buf: Buffer, start: number, end: number): Box[] {
  const out: Box[] = [];
  let at = start;
  while (at + 8 <= end) {
    let size = buf.readUInt32BE(at);
    const type = buf.toString('latin1', at + 4, at + 8);
    let header = 8;
    if (size === 1) {
      if (at + 16 > end) throw new Unsupported('truncated box header');
      size = Number(buf.readBigUInt64BE(at + 8));
      header = 16;
    } else if (size === 0) size = end - at;
    if (size < header || at + size > end) throw new Unsupported(`box ${type} runs past its parent`);
    out.push({ type, body: at + header, end: at + size });
    at += size;
  }
  return out;
}

const child = (buf: Buffer, box: Box, type: string): Box | undefined => boxesIn(buf, box.body, box.end).find((b) => b.type === type);
const need = (box: Box | undefined, what: string): Box => {
  if (!box) throw new Unsupported(`no ${what}`);
  return box;
};

/** A full box's entry count and where its entries start (after version, flags and the count). */
const entries = (buf: Buffer, box: Box) => ({ count: buf.readUInt32BE(box.body + 4), at: box.body + 8 });

/** The timescale of an mvhd or mdhd box (after creation and modification times of its version). */
const timescaleOf = (buf: Buffer, box: Box): number => buf.readUInt32BE(box.body + (buf[box.body] === 1 ? 20 : 12));

/**
 * The tracks of a `moov` box (its bytes, header included), or null when the file is one this does not
 * model (see above).
 */
export function parseMoov(moov: Buffer): Mp4Track[] | null {
  try {
    const [root] = boxesIn(moov, 0, moov.length);
    if (root?.type !== 'moov') throw new Unsupported('not a moov box');
    if (child(moov, root, 'mvex')) throw new Unsupported('fragmented');
    const movieTimescale = timescaleOf(moov, need(child(moov, root, 'mvhd'), 'mvhd'));
    return boxesIn(moov, root.body, root.end)
      .filter((b) => b.type === 'trak')
      .map((trak) => parseTrack(moov, trak, movieTimescale));
  } catch (err) {
    if (err instanceof Unsupported || err instanceof RangeError) return null;
    throw err;
  }
}

function parseTrack(buf: Buffer, trak: Box, movieTimescale: number): Mp4Track {
  const mdia = need(child(buf, trak, 'mdia'), 'mdia');
  const timescale = timescaleOf(buf, need(child(buf, mdia, 'mdhd'), 'mdhd'));
  const hdlr = need(child(buf, mdia, 'hdlr'), 'hdlr');
  const handler = buf.toString('latin1', hdlr.body + 8, hdlr.body + 12);
  const stbl = need(child(buf, need(child(buf, mdia, 'minf'), 'minf'), 'stbl'), 'stbl');
  if (!timescale) throw new Unsupported('no timescale');
  const size = sampleSizes(buf, stbl);
  const edts = child(buf, trak, 'edts');
  const elst = edts && child(buf, edts, 'elst');
  return {
    handler,
    timescale,
    shiftSec: elst ? editShift(buf, elst, movieTimescale, timescale) : 0,
    dts: decodeTimes(buf, need(child(buf, stbl, 'stts'), 'stts'), size.length),
    cts: compositionOffsets(buf, child(buf, stbl, 'ctts'), size.length),
    size,
    offset: sampleOffsets(buf, stbl, size),
    sync: syncSamples(buf, child(buf, stbl, 'stss'), size.length),
  };
}

/** The presentation shift of an edit list: empty edits first (a dwell), then one stretch of media at
 *  normal rate. Anything else (several stretches, other rates) is not modelled. */
function editShift(buf: Buffer, elst: Box, movieTimescale: number, timescale: number): number {
  const v1 = buf[elst.body] === 1;
  const { count, at } = entries(buf, elst);
  const width = v1 ? 20 : 12;
  let dwell = 0;
  let mediaTime: number | undefined;
  for (let i = 0; i < count; i++) {
    const e = at + i * width;
    const segment = v1 ? Number(buf.readBigUInt64BE(e)) : buf.readUInt32BE(e);
    const media = v1 ? Number(buf.readBigInt64BE(e + 8)) : buf.readInt32BE(e + 4);
    const rate = buf.readInt16BE(e + (v1 ? 16 : 8));
    if (media === -1 && mediaTime === undefined) dwell += segment / movieTimescale;
    else if (media >= 0 && mediaTime === undefined && rate === 1) mediaTime = media;
    else throw new Unsupported('an edit list of several stretches');
  }
  return dwell - (mediaTime ?? 0) / timescale;
}

/** More samples than a track of a day at 240 fps: a file that claims them is not read here. */
const MAX_SAMPLES = 24 * 3600 * 240;

function sampleSizes(buf: Buffer, stbl: Box): Float64Array {
  const stsz = child(buf, stbl, 'stsz');
  if (!stsz) throw new Unsupported(child(buf, stbl, 'stz2') ? 'compact sample sizes' : 'no stsz');
  const fixed = buf.readUInt32BE(stsz.body + 4);
  const count = buf.readUInt32BE(stsz.body + 8);
  if (count > MAX_SAMPLES || (!fixed && stsz.body + 12 + 4 * count > stsz.end)) throw new Unsupported('a sample count past its table');
  const sizes = new Float64Array(count);
  for (let i = 0; i < count; i++) sizes[i] = fixed || buf.readUInt32BE(stsz.body + 12 + 4 * i);
  return sizes;
}

function decodeTimes(buf: Buffer, stts: Box, count: number): Float64Array {
  const dts = new Float64Array(count);
  const { count: runs, at } = entries(buf, stts);
  let i = 0;
  let t = 0;
  let delta = 0;
  for (let r = 0; r < runs && i < count; r++) {
    const n = buf.readUInt32BE(at + 8 * r);
    delta = buf.readUInt32BE(at + 8 * r + 4);
    for (let k = 0; k < n && i < count; k++, i++, t += delta) dts[i] = t;
  }
  for (; i < count; i++, t += delta) dts[i] = t; // a table short of samples: the last delta on
  return dts;
}

function compositionOffsets(buf: Buffer, ctts: Box | undefined, count: number): Int32Array | null {
  if (!ctts) return null;
  const cts = new Int32Array(count);
  const { count: runs, at } = entries(buf, ctts);
  let i = 0;
  // Read as signed in either version, as ffmpeg does: writers put negative offsets in version 0 too.
  for (let r = 0; r < runs && i < count; r++) {
    const n = buf.readUInt32BE(at + 8 * r);
    const offset = buf.readInt32BE(at + 8 * r + 4);
    for (let k = 0; k < n && i < count; k++, i++) cts[i] = offset;
  }
  return cts;
}

function syncSamples(buf: Buffer, stss: Box | undefined, count: number): Uint8Array | null {
  if (!stss) return null;
  const sync = new Uint8Array(count);
  const { count: n, at } = entries(buf, stss);
  for (let k = 0; k < n; k++) {
    const number = buf.readUInt32BE(at + 4 * k);
    if (number >= 1 && number <= count) sync[number - 1] = 1;
  }
  return sync;
}

/** Each sample's file offset: chunks from stco/co64, samples per chunk from stsc, laid end to end. */
function sampleOffsets(buf: Buffer, stbl: Box, size: Float64Array): Float64Array {
  const stco = child(buf, stbl, 'stco');
  const co64 = child(buf, stbl, 'co64');
  const table = need(stco ?? co64, 'chunk offsets');
  const { count: chunks, at } = entries(buf, table);
  const chunkOffset = (c: number) => (stco ? buf.readUInt32BE(at + 4 * c) : Number(buf.readBigUInt64BE(at + 8 * c)));
  const stsc = entries(buf, need(child(buf, stbl, 'stsc'), 'stsc'));
  const offset = new Float64Array(size.length);
  let sample = 0;
  for (let e = 0; e < stsc.count && sample < size.length; e++) {
    const first = buf.readUInt32BE(stsc.at + 12 * e) - 1;
    const perChunk = buf.readUInt32BE(stsc.at + 12 * e + 4);
    const next = e + 1 < stsc.count ? buf.readUInt32BE(stsc.at + 12 * (e + 1)) - 1 : chunks;
    for (let c = first; c < next && c < chunks && sample < size.length; c++) {
      let pos = chunkOffset(c);
      for (let k = 0; k < perChunk && sample < size.length; k++, sample++) {
        offset[sample] = pos;
        pos += size[sample]!;
      }
    }
  }
  if (sample < size.length) throw new Unsupported('samples without a chunk');
  return offset;
}
