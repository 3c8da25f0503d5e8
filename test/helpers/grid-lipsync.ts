// Test videos for lip-audio synchrony, composed from the GRID clips (see grid.ts): each panel shows a
// person either talking (their own clip, possibly shifted in time, heard or not) or listening, and the
// sound is one chosen clip's audio, so a face's lips can move while someone else's voice is heard.
import path from 'node:path';
import type { Box } from '@shorts/common/reframe/types';
import { extractAudio } from '../../node-agent/src/media/audio-extract.js';
import { FPS, encodeSegment, gridClips, joinSegments, segmentAudio, type ComposedVideo, type GridClip } from './grid.js';
import { FFMPEG } from './media.js';

const SEGMENT_SEC = 3;

/** A panel's person talks (their clip, `talkShiftSec` later than the sound's clock; lips move whether
 *  or not their voice is the one heard), mouths words without pause (their clip's words over and over,
 *  from `mouthFromSec` into them: chewing, mouthing along, talking with no sound), holds a still frame,
 *  plays their silent lead-in back and forth (breath, blinks), or is not on screen. */
export type PanelShow = { talkShiftSec: number } | { mouthFromSec: number } | 'still' | 'idle' | 'absent';

export interface LipsyncSegment {
  /** What GRID person 0 and person 1 show in their panels. */
  show: [PanelShow, PanelShow];
  /** Whose clip's sound plays, from its start (null: silence). */
  voice: 0 | 1 | null;
}

/** A composed video like the turn-taking ones (grid.ts), its segments saying who is heard. */
export interface LipsyncVideo extends Omit<ComposedVideo, 'turns'> {
  segments: Array<
    LipsyncSegment & { start: number; end: number; /** The heard words, composed clock. */ words?: { start: number; end: number } }
  >;
}

function panelFilter(input: string, clip: GridClip, show: Exclude<PanelShow, 'absent'>, w: number, h: number, out: string): string {
  const fit = `fps=${FPS},scale=${w}:${h},setsar=1`;
  if (typeof show === 'object' && 'mouthFromSec' in show) {
    const words = `trim=start=${clip.speech.start}:end=${clip.speech.end},setpts=PTS-STARTPTS`;
    const frames = Math.round((clip.speech.end - clip.speech.start) * FPS);
    return `${input}fps=${FPS},${words},loop=loop=-1:size=${frames},setpts=N/${FPS}/TB,trim=start=${show.mouthFromSec}:duration=${SEGMENT_SEC},setpts=PTS-STARTPTS,${fit}${out}`;
  }
  if (typeof show === 'object') {
    const shift = show.talkShiftSec;
    // Later: hold the first frame (mouth closed) for the shift. Earlier: start into the clip and hold
    // its last frame. Either way the lips move `shift` seconds off the sound's clock.
    const moved =
      shift >= 0
        ? `tpad=start_duration=${shift.toFixed(3)}:start_mode=clone`
        : `trim=start=${(-shift).toFixed(3)},setpts=PTS-STARTPTS,tpad=stop_duration=${SEGMENT_SEC}:stop_mode=clone`;
    return `${input}fps=${FPS},${moved},trim=duration=${SEGMENT_SEC},setpts=PTS-STARTPTS,${fit}${out}`;
  }
  if (show === 'still') {
    return `${input}trim=start=${clip.stillAt}:duration=0.04,setpts=PTS-STARTPTS,loop=loop=-1:size=1,trim=duration=${SEGMENT_SEC},setpts=N/${FPS}/TB,${fit}${out}`;
  }
  // The lead-in before the first word, forwards then backwards, over and over: a person not speaking.
  const end = (clip.speech.start - 0.1).toFixed(2);
  const name = out.slice(1, -1);
  return (
    `${input}trim=start=0.04:end=${end},setpts=PTS-STARTPTS,${fit},split[${name}f][${name}r];[${name}r]reverse[${name}b];` +
    `[${name}f][${name}b]concat=n=2:v=1:a=0,loop=loop=-1:size=${Math.round((Number(end) - 0.04) * FPS * 2)},trim=duration=${SEGMENT_SEC},setpts=N/${FPS}/TB${out}`
  );
}

/** Composes 3 s segments side by side on a 1280x720 canvas (panels 1.5x the 360x288 clips). */
export async function composeLipsync(dir: string, segments: LipsyncSegment[]): Promise<LipsyncVideo> {
  const clips = gridClips();
  if (!clips) throw new Error('GRID clips not found (../shared/media)');
  const width = 1280;
  const height = 720;
  const pw = 540;
  const ph = 432;
  const panels = [0.25, 0.75].map((c) => ({
    x: Math.round(c * width - pw / 2),
    y: Math.round((height - ph) / 2),
    width: pw,
    height: ph,
  })) as [Box, Box];
  const files: string[] = [];
  const out: LipsyncVideo['segments'] = [];
  for (const [i, segment] of segments.entries()) {
    const file = path.join(dir, `lipsync-seg-${i}.mp4`);
    const filters = [`color=c=0x2a2a2a:s=${width}x${height}:r=${FPS}:d=${SEGMENT_SEC}[bg0]`];
    let last = 'bg0';
    for (const person of [0, 1] as const) {
      const show = segment.show[person];
      if (show === 'absent') continue;
      filters.push(panelFilter(`[${person}:v]`, clips[person], show, pw, ph, `[p${person}]`));
      filters.push(`[${last}][p${person}]overlay=${panels[person].x}:${panels[person].y}:shortest=1[bg${person + 1}]`);
      last = `bg${person + 1}`;
    }
    filters.push(segmentAudio(segment.voice, SEGMENT_SEC));
    await encodeSegment(clips, filters, `[${last}]`, SEGMENT_SEC, file);
    files.push(file);
    const start = i * SEGMENT_SEC;
    const voice = segment.voice === null ? undefined : clips[segment.voice];
    out.push({
      ...segment,
      start,
      end: start + SEGMENT_SEC,
      ...(voice ? { words: { start: start + voice.speech.start, end: start + voice.speech.end } } : {}),
    });
  }
  const videoPath = path.join(dir, 'lipsync.mp4');
  await joinSegments(files, videoPath);
  const wavPath = path.join(dir, 'lipsync.wav');
  await extractAudio(FFMPEG, videoPath, wavPath);
  return { videoPath, wavPath, width, height, durationSec: segments.length * SEGMENT_SEC, panels, segments: out };
}
