// The source's picture as every output shows it: BT.709 SDR. Phones record HDR by default (HLG on
// an iPhone, PQ/HDR10 elsewhere); an 8-bit H.264 short still tagged with those transfers is shown
// by players as HDR, too bright or too dark, so HDR is tone-mapped here, and an SD source's BT.601
// matrix converted, before anything is drawn on the frames or handed to the face detector.
import type { FfprobeStream } from '@shorts/common/media/ffprobe';

export type SourceTransfer = 'sdr' | 'pq' | 'hlg';

export interface SourceColour {
  transfer: SourceTransfer;
  /** The Y'CbCr matrix the pixels were coded with: as tagged, else what players assume for the size. */
  matrix: 'bt709' | 'bt601' | 'bt2020';
  primaries: 'bt709' | 'bt601' | 'bt2020';
  /** HDR only: the brightest the picture gets, in nits (MaxCLL, else the mastering display's peak,
   *  else the transfer's usual 1000). */
  peakNits: number | null;
  /** The flips and turns that show the stored frames as a player does, when the display matrix
   *  mirrors them (orientation.ts): the source is then decoded with `-noautorotate` and this filter
   *  heads every graph that reads it. Absent: ffmpeg's autorotate turns the frames. */
  orient?: string;
}

export const SDR_BT709: SourceColour = { transfer: 'sdr', matrix: 'bt709', primaries: 'bt709', peakNits: null };

/** BT.2408's HDR reference white: diffuse white of an HDR picture, shown as SDR's 100 %. */
export const HDR_REFERENCE_WHITE_NITS = 203;
/** What a PQ or HLG source without light-level metadata is taken to peak at (BT.2100's HLG display). */
const DEFAULT_HDR_PEAK_NITS = 1000;

/**
 * The source's colour as ffprobe tags it. `frameSideData` is the first frame's side data (HDR10's
 * mastering display and content light level travel in the stream's SEI, not in its header).
 */
export function sourceColourOf(
  stream: Pick<FfprobeStream, 'height'> & { color_transfer?: unknown; color_space?: unknown; color_primaries?: unknown },
  frameSideData: Array<Record<string, unknown>> = [],
): SourceColour {
  const transfer: SourceTransfer = stream.color_transfer === 'smpte2084' ? 'pq' : stream.color_transfer === 'arib-std-b67' ? 'hlg' : 'sdr';
  const tagged = (v: unknown) => (typeof v === 'string' && v !== 'unknown' && v !== 'reserved' ? v : null);
  const space = tagged(stream.color_space);
  const prim = tagged(stream.color_primaries);
  // Untagged: players take SD as BT.601 and HD as BT.709; HDR is BT.2020 by definition.
  const guess = transfer !== 'sdr' ? 'bt2020' : (stream.height ?? 0) < 720 ? 'bt601' : 'bt709';
  const family = (v: string | null): SourceColour['matrix'] =>
    v === null ? guess : v.startsWith('bt2020') ? 'bt2020' : /^(smpte170m|bt470bg|bt601|smpte240m|fcc)/.test(v) ? 'bt601' : 'bt709';
  return {
    transfer,
    matrix: family(space),
    primaries: family(prim),
    peakNits: transfer === 'sdr' ? null : hdrPeakNits(frameSideData),
  };
}

function hdrPeakNits(sideData: Array<Record<string, unknown>>): number {
  const ratio = (v: unknown) => {
    if (typeof v === 'number') return v;
    if (typeof v !== 'string') return NaN;
    const [n, d] = v.split('/').map(Number);
    return d ? n! / d : Number(n);
  };
  const cll = sideData.find((d) => d.side_data_type === 'Content light level metadata');
  const maxCll = ratio(cll?.max_content);
  if (maxCll > 0) return maxCll;
  const mastering = sideData.find((d) => d.side_data_type === 'Mastering display metadata');
  const maxLum = ratio(mastering?.max_luminance);
  return maxLum > 0 ? maxLum : DEFAULT_HDR_PEAK_NITS;
}

/** Whether the picture needs the filter below at all. */
export const needsConversion = (c: SourceColour): boolean => c.transfer !== 'sdr' || c.matrix !== 'bt709';

/**
 * The filter chain that turns the source's pixels (any bit depth) into BT.709 SDR Y'CbCr 4:2:0, or
 * null when they already are. Run it on frames already scaled to where they go: tone-mapping costs
 * some 70 ms a megapixel on one core.
 *
 * HDR: to linear light with reference white at 1.0, BT.2020 primaries to BT.709, the Möbius curve
 * (exact below 0.3 of reference white, the source's peak rolled off to SDR's white), then the
 * inverse of BT.1886 (what an SDR display does with the code values, so it shows the HDR's
 * relative light). A grey of 26 nits comes out at code 109 whatever the peak; the peak at 235.
 */
export function toBt709Filter(c: SourceColour): string | null {
  if (c.transfer !== 'sdr') {
    const tin = c.transfer === 'pq' ? 'smpte2084' : 'arib-std-b67';
    const min = c.matrix === 'bt2020' ? 'bt2020nc' : c.matrix === 'bt601' ? 'smpte170m' : 'bt709';
    const pin = c.primaries === 'bt2020' ? 'bt2020' : c.primaries === 'bt601' ? 'smpte170m' : 'bt709';
    const peak = Math.max(1, (c.peakNits ?? DEFAULT_HDR_PEAK_NITS) / HDR_REFERENCE_WHITE_NITS);
    // Möbius needs headroom over white to roll off into; a source that never passes it is clipped.
    const curve = peak > 1.05 ? `tonemap=tonemap=mobius:peak=${peak.toFixed(4)}` : 'tonemap=tonemap=clip';
    return (
      `zscale=tin=${tin}:min=${min}:pin=${pin}:rin=tv:t=linear:npl=${HDR_REFERENCE_WHITE_NITS}:p=bt709,format=gbrpf32le,` +
      `${curve},zscale=t=bt709:m=bt709:r=tv,format=yuv420p`
    );
  }
  if (c.matrix === 'bt709') return null;
  // SD's matrix to HD's; primaries and transfer left as players leave them (they show SD as it is).
  return 'colorspace=ispace=bt470bg:space=bt709:iprimaries=bt709:primaries=bt709:itrc=bt709:trc=bt709:irange=tv:range=tv,format=yuv420p';
}

/**
 * The tone-mapping alone, for pictures decoded to RGB (the detector's frames, JPEG thumbnails):
 * ffmpeg's YUV to RGB reads an SD source with BT.601 as it was made, so only HDR needs converting.
 */
export const hdrToSdrFilter = (c: SourceColour): string | null => (c.transfer === 'sdr' ? null : toBt709Filter(c));

/** `-color_*` output flags: what every picture the service writes says it is. */
export const BT709_OUTPUT_TAGS = ['-color_primaries', 'bt709', '-color_trc', 'bt709', '-colorspace', 'bt709', '-color_range', 'tv'];
