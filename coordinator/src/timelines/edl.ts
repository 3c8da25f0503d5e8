// A timeline (timeline.ts) as a CMX3600 EDL, which every editor imports (Premiere Pro, Avid, DaVinci
// Resolve, Final Cut through converters, OTIO's cmx_3600 adapter). It carries the cuts only: one event a
// kept range (the clips timeline.ts splits at crop changes are joined back where the source runs on),
// picture and sound, source and record timecodes, non-drop frame at the nominal rate. Comments say
// what it cannot carry: the crop transforms, the caption titles, the watermark.
import { fpsOf, type Timeline } from './timeline.js';

/** The reel every event names: EDLs allow 8 characters; the file is named in FROM CLIP NAME. */
export const EDL_REEL = 'AX';

export function toEdl(tl: Timeline): string {
  const nominal = Math.round(fpsOf(tl.rate));
  const tc = (frames: number) => timecode(frames, nominal);
  const events: Array<{ sourceIn: number; sourceOut: number; recordIn: number; recordOut: number }> = [];
  for (const c of tl.clips) {
    const last = events[events.length - 1];
    if (last && last.sourceOut === c.sourceIn && last.recordOut === c.recordIn) {
      last.sourceOut = c.sourceOut;
      last.recordOut = c.recordOut;
    } else events.push({ sourceIn: c.sourceIn, sourceOut: c.sourceOut, recordIn: c.recordIn, recordOut: c.recordOut });
  }
  const lines = [`TITLE: ${tl.name.replace(/[\r\n]+/g, ' ').slice(0, 70)}`, 'FCM: NON-DROP FRAME', ''];
  lines.push(`* SEQUENCE: ${tl.width}X${tl.height} AT ${num(fpsOf(tl.rate))} FPS (TIMECODE COUNTED AT ${nominal})`);
  lines.push('* NOT CARRIED: THE CROP (KEYFRAMED SCALE AND POSITION; USE THE FCPXML OR OTIO FILE)');
  lines.push(`* NOT CARRIED: ${tl.titles.length} CAPTION TITLES (USE THE CAPTION FILES: SRT, VTT)`);
  if (tl.watermark) lines.push(`* NOT CARRIED: THE WATERMARK STILL ${sanitise(tl.watermark.name)}`);
  lines.push('');
  events.forEach((e, i) => {
    lines.push(
      `${String(i + 1).padStart(3, '0')}  ${EDL_REEL.padEnd(8)} AA/V  C        ${tc(e.sourceIn)} ${tc(e.sourceOut)} ${tc(e.recordIn)} ${tc(e.recordOut)}`,
    );
    lines.push(`* FROM CLIP NAME: ${sanitise(tl.source.name)}`);
    lines.push(`* SOURCE FILE: ${sanitise(tl.source.url)}`);
    lines.push('');
  });
  return lines.join('\n');
}

/** HH:MM:SS:FF, non-drop frame, counted at `nominal` frames a second. */
export function timecode(frames: number, nominal: number): string {
  const ff = frames % nominal;
  const total = Math.floor(frames / nominal);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(Math.floor(total / 3600))}:${pad(Math.floor(total / 60) % 60)}:${pad(total % 60)}:${pad(ff)}`;
}

const sanitise = (s: string) => s.replace(/[\r\n]+/g, ' ');
const num = (v: number) => String(Math.round(v * 1000) / 1000);
