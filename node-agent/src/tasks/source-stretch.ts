import { createWriteStream } from 'node:fs';
import { open, rm, stat, type FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { parseMoov } from '../media/mp4-index.js';
import { stretchRanges, type StretchNeed } from '../media/mp4-stretch.js';
import { brokenConnection, downloadObject, storeTransfer } from './download.js';
import { TaskError } from './task-context.js';

// A stretch of a stored MP4, fetched by byte ranges (issue 35): a render chunk needs the source from
// the keyframe before its first frame to a little past its last (../media/mp4-stretch.ts), not the
// whole file. The file is laid out at `dest` at its full size, its index and those ranges in place
// and the rest a hole (zeros, taking no disk), so ffmpeg reads it as the whole file with `-ss`.
// A source this cannot lay out so (not ISO BMFF, fragmented, an index it does not model, a store
// that takes no ranges) is fetched whole. The URL is a signed one of the coordinator's own store:
// trusted as downloadObject trusts it, with no address policy.

/** The first bytes asked for: the top-level boxes (ftyp, moov when it comes first) are in them. */
const HEAD_BYTES = 256 * 1024;
/** A top-level box other than the media data larger than this is not an index: fetch it whole. */
const MAX_INDEX_BYTES = 256 * 1024 * 1024;
const MAX_TOP_LEVEL_BOXES = 1000;
/** Ranges in flight at once. */
const PARALLEL = 4;
/** Times one range that broke off is resumed. */
const RESUMES = 3;
/** What an ISO BMFF file starts with (a QuickTime movie may have no `ftyp`); any other start is
 *  another container. */
const FIRST_BOXES = new Set(['ftyp', 'moov', 'mdat', 'wide', 'free', 'skip']);
/** Top-level boxes whose bodies ffmpeg skips: it reads only their headers. */
const SKIPPED = new Set(['mdat', 'free', 'skip', 'wide']);

export interface StretchFetched {
  /** Bytes that crossed the network. */
  bytes: number;
  /** The stored file's size. */
  total: number;
  /** Fetched whole (the layout could not be read, or the store sent all of it). */
  whole: boolean;
  /** Byte ranges fetched besides the index. */
  ranges: number;
}

/** The stretch `need` of the stored MP4 at `url`, at `dest` (see above). */
export async function fetchSourceStretch(url: string, dest: string, need: StretchNeed, signal: AbortSignal): Promise<StretchFetched> {
  return storeTransfer("the source's stretch", signal, async () => {
    const head = await fetch(url, { headers: { range: `bytes=0-${HEAD_BYTES - 1}` }, signal });
    if (head.status === 200 && head.body) {
      // A store that takes no ranges answers with the whole file: kept as it comes.
      await pipeline(Readable.fromWeb(head.body as NodeReadableStream<Uint8Array>), createWriteStream(dest), { signal });
      const bytes = (await stat(dest)).size;
      return { bytes, total: bytes, whole: true, ranges: 0 };
    }
    const range = /^bytes 0-\d+\/(\d+)$/.exec(head.headers.get('content-range') ?? '');
    const total = Number(range?.[1]);
    if (head.status !== 206 || !range || !Number.isFinite(total))
      throw new TaskError(`Could not read a stored file (HTTP ${head.status})`, 'SOURCE_MISSING', head.status >= 500);
    const first = Buffer.from(await head.arrayBuffer());
    const file = await open(dest, 'w');
    const reader = new RangeReader(url, file, total, first.subarray(0, Math.min(first.length, HEAD_BYTES, total)), signal);
    let laidOut: StretchFetched | undefined;
    try {
      // Full size, all of it a hole but what is written below.
      await file.truncate(total);
      await file.write(reader.head, 0, reader.head.length, 0);
      laidOut = await layOut(reader, need);
    } finally {
      await file.close();
    }
    if (laidOut) return laidOut;
    await rm(dest, { force: true });
    const whole = await downloadObject(url, dest, signal);
    return { bytes: reader.bytes + whole.bytes, total, whole: true, ranges: 0 };
  });
}

/** The index and the stretch's ranges written in place; undefined when the file cannot be laid out. */
async function layOut(reader: RangeReader, need: StretchNeed): Promise<StretchFetched | undefined> {
  const moov = await findIndex(reader);
  const tracks = moov && parseMoov(moov);
  if (!tracks) return undefined;
  const ranges = stretchRanges(tracks, need)
    .map(([s, e]): [number, number] => [Math.max(s, reader.head.length), Math.min(e, reader.total)])
    .filter(([s, e]) => e > s);
  let next = 0;
  const worker = async () => {
    while (next < ranges.length) {
      const [s, e] = ranges[next++]!;
      await reader.fetchInto(s, e);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  return { bytes: reader.bytes, total: reader.total, whole: false, ranges: ranges.length };
}

/** Walks the file's top-level boxes, fetching each header (ffmpeg reads them all) and every box but
 *  the media data whole; answers the `moov` box, or undefined for a file this cannot lay out. */
async function findIndex(reader: RangeReader): Promise<Buffer | undefined> {
  let moov: Buffer | undefined;
  let at = 0;
  for (let boxes = 0; at + 8 <= reader.total; boxes++) {
    if (boxes >= MAX_TOP_LEVEL_BOXES) return undefined;
    const header = await reader.bytesAt(at, Math.min(16, reader.total - at));
    let size = header.readUInt32BE(0);
    const type = header.toString('latin1', 4, 8);
    if (size === 1) size = header.length >= 16 ? Number(header.readBigUInt64BE(8)) : 0;
    else if (size === 0) size = reader.total - at;
    if (size < 8 || at + size > reader.total || (at === 0 && !FIRST_BOXES.has(type)) || type === 'moof') return undefined;
    if (!SKIPPED.has(type)) {
      if (size > MAX_INDEX_BYTES) return undefined;
      const box =
        size <= header.length
          ? header.subarray(0, size)
          : Buffer.concat([header, await reader.bytesAt(at + header.length, size - header.length)]);
      if (type === 'moov') moov = box;
    }
    at += size;
  }
  return moov;
}

/** Byte ranges of the stored file, each written at its place in `file` as it arrives. */
class RangeReader {
  bytes: number;
  constructor(
    private readonly url: string,
    private readonly file: FileHandle,
    readonly total: number,
    readonly head: Buffer,
    private readonly signal: AbortSignal,
  ) {
    this.bytes = head.length;
  }

  /** Bytes [at, at + length): from the head, else fetched (and written in place). */
  async bytesAt(at: number, length: number): Promise<Buffer> {
    if (at + length <= this.head.length) return this.head.subarray(at, at + length);
    if (at < this.head.length) return Buffer.concat([this.head.subarray(at), await this.fetchInto(this.head.length, at + length, true)]);
    return await this.fetchInto(at, at + length, true);
  }

  /** Fetches [start, end) into the file, resuming where a broken transfer stopped; with `keep`, the
   *  bytes are answered too. */
  async fetchInto(start: number, end: number, keep?: true): Promise<Buffer>;
  async fetchInto(start: number, end: number, keep = false): Promise<Buffer | undefined> {
    const kept: Buffer[] = [];
    let at = start;
    for (let resumes = RESUMES; at < end;) {
      const res = await fetch(this.url, { headers: { range: `bytes=${at}-${end - 1}` }, signal: this.signal });
      const part = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(res.headers.get('content-range') ?? '');
      if (res.status !== 206 || !res.body || Number(part?.[1]) !== at || Number(part?.[3]) !== this.total)
        throw new TaskError(`Could not read bytes ${at}-${end - 1} of a stored file (HTTP ${res.status})`, 'TRANSFER_FAILED', true);
      try {
        // fetch's body is the web ReadableStream, async-iterable in Node.
        for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
          const buf = Buffer.from(chunk.buffer, chunk.byteOffset, Math.min(chunk.byteLength, end - at));
          await this.file.write(buf, 0, buf.length, at);
          if (keep) kept.push(Buffer.from(buf));
          at += buf.length;
          this.bytes += buf.length;
          if (at >= end) break;
        }
      } catch (err) {
        if (this.signal.aborted || !brokenConnection(err) || resumes-- <= 0) throw err;
        continue;
      }
      if (at < end && resumes-- <= 0) throw new TaskError(`A stored file's bytes ended at ${at}, short of ${end}`, 'TRANSFER_FAILED', true);
    }
    return keep ? Buffer.concat(kept) : undefined;
  }
}
