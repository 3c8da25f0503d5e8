import type { Mp4Track } from './mp4-index.js';

// Which bytes of an MP4 an ffmpeg run over a stretch of it reads (issue 35): a render chunk fetches
// those and leaves the rest of the file a hole (../tasks/source-stretch.ts). ffmpeg reads, from the
// media data, the first samples of each track (opening the file: it decodes a few frames to learn
// the streams' parameters), then, after `-ss`, from the video keyframe at or before the seek point
// to a little past `-to` (the decoder's reordering), and the other streams' samples from that
// keyframe's time on. Unused streams are discarded by the demuxer without being read; their samples
// inside the stretch are fetched all the same, as they lie between the video's.

/** Seconds on ffmpeg's `-ss` clock (from the file's first presentation time). */
export interface StretchSpan {
  from: number;
  to: number;
}

export interface StretchNeed {
  /** The video the task decodes. */
  video: StretchSpan;
  /** The other streams' (the sound's): the video's, or a wider span when the task reads the sound
   *  of more (the chunk that encodes the whole render's sound). */
  other: StretchSpan;
}

/** Margins around a stretch: before the seek point (the keyframe is looked up from there), after
 *  `-to` in seconds and in samples (frames decoded after it for the reordering), and the head of each
 *  track read when the file is opened. Generous: a missing byte reads as zero, a spare one costs
 *  nothing but its transfer. */
const BEFORE_SEC = 1;
const AFTER_SEC = 2;
const AFTER_SAMPLES = 16;
const HEAD_SEC = 2;
const HEAD_SAMPLES = 60;
/** Ranges closer than this are fetched as one; and no more than MAX_RANGES requests are made, the
 *  ranges closest together merged first. ffmpeg interleaves a file's sound with its video frame by
 *  frame: the sound of a stretch beyond the video's lies in thousands of pieces a frame apart, each
 *  worth less than the request that would skip the frame between. */
const MERGE_GAP_BYTES = 64 * 1024;
const MAX_RANGES = 32;

const ptsOf = (t: Mp4Track, i: number) => (t.dts[i]! + (t.cts?.[i] ?? 0)) / t.timescale + t.shiftSec;
const dtsOf = (t: Mp4Track, i: number) => t.dts[i]! / t.timescale + t.shiftSec;
const count = (t: Mp4Track) => t.size.length;

/** The file's first presentation time, where ffmpeg's `-ss` clock starts. */
function containerStart(tracks: Mp4Track[]): number {
  let start = Infinity;
  for (const t of tracks) for (let i = 0; i < Math.min(count(t), 64); i++) start = Math.min(start, ptsOf(t, i));
  return Number.isFinite(start) ? start : 0;
}

/** The last keyframe of `t` presented at or before `time` (the first sample if none is). */
function keyframeBefore(t: Mp4Track, time: number): number {
  let key = 0;
  for (let i = 0; i < count(t); i++) {
    if (dtsOf(t, i) > time + 60) break; // keyframes are far apart at most; presentation follows decoding
    if ((!t.sync || t.sync[i]) && ptsOf(t, i) <= time) key = i;
  }
  return key;
}

/** The samples [first, last] of `t` decoded from `firstIndex` up to `until` (seconds), and some after. */
function through(t: Mp4Track, firstIndex: number, until: number, extra = 0): [number, number] {
  let last = firstIndex - 1;
  while (last + 1 < count(t) && dtsOf(t, last + 1) <= until) last++;
  return [firstIndex, Math.min(count(t) - 1, last + extra)];
}

/** The samples of each track ffmpeg reads for `need`, as index spans [first, last]. */
function sampleSpans(tracks: Mp4Track[], need: StretchNeed): Array<{ track: Mp4Track; spans: Array<[number, number]> }> {
  const start = containerStart(tracks);
  // The video ffmpeg seeks by: the picture track (a cover image's track holds one sample).
  const video = tracks.filter((t) => t.handler === 'vide').sort((a, b) => count(b) - count(a))[0];
  const seek = start + need.video.from - BEFORE_SEC;
  const key = video && count(video) ? keyframeBefore(video, seek) : -1;
  const keyTime = key >= 0 ? Math.min(ptsOf(video!, key), dtsOf(video!, key)) : seek;
  return tracks
    .filter((t) => count(t) > 0)
    .map((t) => {
      const first = dtsOf(t, 0);
      const head = through(t, 0, first + HEAD_SEC);
      const spans: Array<[number, number]> = [[0, Math.max(head[1], Math.min(count(t), HEAD_SAMPLES) - 1)]];
      if (t === video && key >= 0) spans.push(through(t, key, start + need.video.to + AFTER_SEC, AFTER_SAMPLES));
      else {
        const from = Math.min(keyTime, start + need.other.from) - BEFORE_SEC;
        let firstIndex = 0;
        while (firstIndex < count(t) && dtsOf(t, firstIndex) < from) firstIndex++;
        if (firstIndex < count(t)) spans.push(through(t, firstIndex, start + need.other.to + AFTER_SEC, AFTER_SAMPLES));
      }
      return { track: t, spans };
    });
}

/** The byte ranges [start, end) of the file that ffmpeg reads for `need`, sorted and merged. */
export function stretchRanges(tracks: Mp4Track[], need: StretchNeed): Array<[number, number]> {
  const pieces: Array<[number, number]> = [];
  for (const { track, spans } of sampleSpans(tracks, need))
    for (const [first, last] of spans)
      for (let i = first; i <= last; i++) pieces.push([track.offset[i]!, track.offset[i]! + track.size[i]!]);
  pieces.sort((a, b) => a[0] - b[0]);
  const merged = mergeCloser(pieces, MERGE_GAP_BYTES);
  if (merged.length <= MAX_RANGES) return merged;
  // The gap that leaves MAX_RANGES ranges when every gap up to it is bridged.
  const gaps = merged.slice(1).map((r, i) => r[0] - merged[i]![1]);
  const bridged = [...gaps].sort((a, b) => a - b)[gaps.length - MAX_RANGES]!;
  return mergeCloser(merged, bridged);
}

/** Sorted ranges, those at most `gap` apart joined. */
function mergeCloser(ranges: Array<[number, number]>, gap: number): Array<[number, number]> {
  const merged: Array<[number, number]> = [];
  for (const [s, e] of ranges) {
    const last = merged.at(-1);
    if (last && s <= last[1] + gap) last[1] = Math.max(last[1], e);
    else merged.push([s, e]);
  }
  return merged;
}
