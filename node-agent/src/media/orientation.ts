// The way a player shows the stored frames: a video stream's display matrix (ffprobe's side data
// `Display Matrix`) turns them and may also mirror them (a front camera's selfie exported mirrored,
// an editor's flip). ffmpeg turns the frames itself when it decodes them (autorotate), but the
// bundled 2018 ffmpeg reads only the rotation from the matrix: a mirrored file comes out turned
// half a turn instead of flipped. For a matrix that mirrors, the agent decodes with `-noautorotate`
// and puts the flips and turns in the graph itself, as ffmpeg 5+'s autorotate does, so every ffmpeg
// shows the picture as a player does. A matrix that only turns is left to ffmpeg, as before.
import { open } from 'node:fs/promises';
import type { FfprobeStream } from '@shorts/common/media/ffprobe';

/** The display matrix's 3x3 entries (row by row, as ffprobe prints them), or null when there is none. */
export function displayMatrixOf(stream: Pick<FfprobeStream, 'side_data_list'> | undefined): number[] | null {
  const side = stream?.side_data_list?.find((d) => d.side_data_type === 'Display Matrix' || d.side_data_type === 'DisplayMatrix');
  const text = side?.displaymatrix;
  if (typeof text !== 'string') return null;
  // "\n00000000:       -65536           0           0\n00000001: ..." : three rows after their offsets.
  const values = text
    .split('\n')
    .map((line) => line.split(':')[1])
    .filter((row): row is string => row !== undefined)
    .flatMap((row) => row.trim().split(/\s+/).map(Number));
  return values.length === 9 && values.every(Number.isFinite) ? values : null;
}

/**
 * The filter chain that shows the stored frames as a player does, when the display matrix mirrors
 * them (a negative determinant); null when it does not (ffmpeg's autorotate turns them) or when the
 * mirror is not along the frame's axes (left to ffmpeg). A point (x, y) of the stored frame is shown
 * at (a x + c y, b x + d y), with the matrix [a b u; c d v; tx ty w].
 */
export function mirrorFilterOf(stream: Pick<FfprobeStream, 'side_data_list'> | undefined): string | null {
  const m = displayMatrixOf(stream);
  if (!m) return null;
  const [a, b, , c, d] = m as [number, number, number, number, number];
  if (a * d - b * c >= 0) return null;
  if (b === 0 && c === 0) return a < 0 ? 'hflip' : 'vflip';
  // (x, y) shown at (y, x): the transpose; at (-y, -x): the transpose about the other diagonal.
  if (a === 0 && d === 0) return b > 0 ? 'transpose=cclock_flip' : 'transpose=clock_flip';
  return null;
}

/** The input options for a source whose frames the graph orients itself (`orient` set). */
export const orientInputArgs = (orient: string | null | undefined): string[] => (orient ? ['-noautorotate'] : []);

/** The identity display matrix: 16.16 fixed point, the last column 2.30. */
const IDENTITY = [0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000];

/**
 * Sets every track header's (tkhd) display matrix of an MP4 to the identity. ffmpeg copies the
 * source's matrix to its output when it decodes with `-noautorotate`, and neither the bundled build
 * nor ffmpeg 5 lets an option override it (`-display_rotation` is ffmpeg 6's): a short whose frames
 * the graph has already oriented would be flipped again by every player. The moov box alone is read
 * and written back, at its place and size.
 */
export async function clearDisplayMatrix(file: string): Promise<void> {
  const fh = await open(file, 'r+');
  try {
    const { size: fileSize } = await fh.stat();
    const head = Buffer.alloc(16);
    for (let at = 0; at + 8 <= fileSize;) {
      await fh.read(head, 0, 16, at);
      let size = head.readUInt32BE(0);
      let headerSize = 8;
      if (size === 1) {
        size = Number(head.readBigUInt64BE(8));
        headerSize = 16;
      } else if (size === 0) size = fileSize - at;
      if (size < headerSize) throw new Error(`${file}: a box of ${size} bytes at ${at}`);
      if (head.toString('latin1', 4, 8) === 'moov') {
        const moov = Buffer.alloc(size - headerSize);
        await fh.read(moov, 0, moov.length, at + headerSize);
        for (const trak of childBoxes(moov, 0, moov.length, 'trak'))
          for (const tkhd of childBoxes(moov, trak.start, trak.end, 'tkhd')) {
            const matrix = tkhd.start + 4 + (moov[tkhd.start] === 1 ? 48 : 36);
            IDENTITY.forEach((v, i) => moov.writeInt32BE(v, matrix + i * 4));
          }
        await fh.write(moov, 0, moov.length, at + headerSize);
        return;
      }
      at += size;
    }
  } finally {
    await fh.close();
  }
}

/** The contents (after their 8-byte headers) of the boxes of `type` in buf[start, end). */
function childBoxes(buf: Buffer, start: number, end: number, type: string): Array<{ start: number; end: number }> {
  const found: Array<{ start: number; end: number }> = [];
  for (let at = start; at + 8 <= end;) {
    const size = buf.readUInt32BE(at);
    if (size < 8 || at + size > end) break;
    if (buf.toString('latin1', at + 4, at + 8) === type) found.push({ start: at + 8, end: at + size });
    at += size;
  }
  return found;
}
