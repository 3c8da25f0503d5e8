// A timeline (timeline.ts) as FCPXML 1.10, which Final Cut Pro (10.6 and later) imports, and DaVinci
// Resolve reads. One project in a custom 1080x1920 format (unnamed: no standard format is vertical):
// the source's clips on the spine, each with its crop as a keyframed adjust-transform, the caption
// cues as Basic Title clips on lane 1 and the watermark as a still on lane 2.
//
// Units. Times are rational seconds ("N/Ds") on whole frames of the sequence. A clip's keyframe times are
// on the clip's own (source) clock, as FCPXML has them. The source is placed unconformed
// (adjust-conform none: 1 source pixel = 1 sequence pixel before the transform); `scale` is "sx sy";
// `position` is the move of the clip's centre in Final Cut's units: hundredths of the frame height,
// y up. So position = (dx, -dy) * 100 / H for timeline.ts's (dx, dy) in output pixels, y down.
import type { FrameRate, Timeline, Transform } from './timeline.js';

const BASIC_TITLE = '.../Titles.localized/Bumper:Opener.localized/Basic Title.localized/Basic Title.moti';

export function toFcpxml(tl: Timeline): string {
  const t = (frames: number) => rational(frames, tl.rate);
  const lines: string[] = [];
  const out = (depth: number, line: string) => lines.push(`${'  '.repeat(depth)}${line}`);
  out(0, '<?xml version="1.0" encoding="UTF-8"?>');
  out(0, '<!DOCTYPE fcpxml>');
  out(0, '<fcpxml version="1.10">');
  out(1, '<resources>');
  out(2, `<format id="r1" frameDuration="${t(1)}" width="${tl.width}" height="${tl.height}" colorSpace="1-1-1 (Rec. 709)"/>`);
  out(2, `<format id="r2" frameDuration="${t(1)}" width="${tl.source.width}" height="${tl.source.height}" colorSpace="1-1-1 (Rec. 709)"/>`);
  out(
    2,
    `<asset id="r3" name="${attr(tl.source.name)}" start="0s" duration="${t(tl.source.durationFrames)}" hasVideo="1" format="r2" videoSources="1" hasAudio="1" audioSources="1" audioChannels="2">`,
  );
  out(3, `<media-rep kind="original-media" src="${attr(tl.source.url)}"/>`);
  out(2, '</asset>');
  if (tl.titles.length) out(2, `<effect id="r4" name="Basic Title" uid="${BASIC_TITLE}"/>`);
  if (tl.watermark) {
    out(2, '<format id="r5" name="FFVideoFormatRateUndefined"/>');
    out(2, `<asset id="r6" name="${attr(tl.watermark.name)}" start="0s" duration="0s" hasVideo="1" format="r5" videoSources="1">`);
    out(3, `<media-rep kind="original-media" src="${attr(tl.watermark.url)}"/>`);
    out(2, '</asset>');
  }
  out(1, '</resources>');
  out(1, '<library>');
  out(2, `<event name="${attr(tl.name)}">`);
  out(3, `<project name="${attr(tl.name)}">`);
  out(4, `<sequence format="r1" duration="${t(tl.durationFrames)}" tcStart="0s" tcFormat="NDF" audioLayout="stereo" audioRate="48k">`);
  if (tl.notes.length) out(5, `<note>${text(tl.notes.join(' '))}</note>`);
  out(5, '<spine>');
  let titleIndex = 0;
  tl.clips.forEach((clip, i) => {
    const local = (recordFrame: number) => t(clip.sourceIn + recordFrame - clip.recordIn);
    out(
      6,
      `<asset-clip ref="r3" name="${attr(tl.source.name)}" offset="${t(clip.recordIn)}" start="${t(clip.sourceIn)}" duration="${t(clip.recordOut - clip.recordIn)}" format="r2" tcFormat="NDF">`,
    );
    out(7, '<adjust-conform type="none"/>');
    writeTransform(
      clip.transforms,
      (frame) => t(clip.sourceIn + frame),
      tl.height,
      (l) => out(7, l),
    );
    // Connected clips hang off the clip their start falls in; their offsets are on its clock.
    const titles = tl.titles.filter((c) => c.recordIn >= clip.recordIn && (c.recordIn < clip.recordOut || i === tl.clips.length - 1));
    for (const title of titles) {
      const id = `ts${++titleIndex}`;
      out(
        7,
        `<title ref="r4" lane="1" name="${attr(firstLine(title.text))}" offset="${local(title.recordIn)}" duration="${t(title.recordOut - title.recordIn)}">`,
      );
      out(8, `<text><text-style ref="${id}">${text(title.text)}</text-style></text>`);
      out(
        8,
        `<text-style-def id="${id}"><text-style font="Helvetica" fontSize="72" fontFace="Bold" fontColor="1 1 1 1" strokeColor="0 0 0 1" strokeWidth="3" alignment="center"/></text-style-def>`,
      );
      out(7, '</title>');
    }
    if (i === 0 && tl.watermark) {
      out(
        7,
        `<video ref="r6" lane="2" name="${attr(tl.watermark.name)}" offset="${local(clip.recordIn)}" duration="${t(tl.durationFrames)}"/>`,
      );
    }
    out(6, '</asset-clip>');
  });
  out(5, '</spine>');
  out(4, '</sequence>');
  out(3, '</project>');
  out(2, '</event>');
  out(1, '</library>');
  out(0, '</fcpxml>');
  return `${lines.join('\n')}\n`;
}

function writeTransform(keys: Transform[], time: (frame: number) => string, H: number, out: (line: string) => void) {
  const position = (k: Transform) => `${num((k.dx * 100) / H)} ${num((-k.dy * 100) / H)}`;
  const scale = (k: Transform) => `${num(k.scaleX)} ${num(k.scaleY)}`;
  const first = keys[0]!;
  if (keys.length === 1) {
    out(`<adjust-transform position="${position(first)}" scale="${scale(first)}"/>`);
    return;
  }
  out(`<adjust-transform position="${position(first)}" scale="${scale(first)}">`);
  for (const [name, value] of [
    ['position', position],
    ['scale', scale],
  ] as const) {
    out(`  <param name="${name}">`);
    out('    <keyframeAnimation>');
    for (const k of keys) out(`      <keyframe time="${time(k.frame)}" value="${value(k)}" interp="linear" curve="linear"/>`);
    out('    </keyframeAnimation>');
    out('  </param>');
  }
  out('</adjust-transform>');
}

/** `frames` of `rate` as FCPXML's rational seconds, reduced ("0s", "10s", "1001/30000s"). */
export function rational(frames: number, rate: FrameRate): string {
  if (frames === 0) return '0s';
  let n = frames * rate.den;
  let d = rate.num;
  const g = gcd(Math.abs(n), d);
  n /= g;
  d /= g;
  return d === 1 ? `${n}s` : `${n}/${d}s`;
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
const num = (v: number) => String(Math.round(v * 1e6) / 1e6);
const firstLine = (s: string) => s.split('\n')[0]!;
const text = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const attr = (s: string) => text(s).replace(/"/g, '&quot;').replace(/\n/g, '&#10;');
