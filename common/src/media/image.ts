// Watermark images are judged by their bytes: a server's content type or a URL's extension says
// nothing about what a decoder will be handed.
import sharp from 'sharp';
import { rasteriseInChild, SvgRasteriseError, type RasteriseOptions } from './svg-rasterise.js';
import { sanitiseSvg, SvgSanitiseError } from './svg-sanitise.js';

export type ImageFormat = 'png' | 'jpeg' | 'webp' | 'gif' | 'svg';

export const CONTENT_TYPES: Record<ImageFormat, string> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  svg: 'image/svg+xml',
};

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
// An XML prolog, comments and a doctype may come before the root; the root must be <svg>.
const SVG_ROOT = /^\uFEFF?\s*(<\?xml[^>]*\?>\s*)?(<!--[\s\S]*?-->\s*|<!DOCTYPE\s+svg[^[>]*(\[[\s\S]*?\])?\s*>\s*)*<svg[\s>]/i;

export function sniffImage(buf: Buffer): ImageFormat | undefined {
  if (buf.subarray(0, 8).equals(PNG)) return 'png';
  if (buf[0] === 0xff && buf[1] === 0xd8 && buf[2] === 0xff) return 'jpeg';
  if (buf.toString('ascii', 0, 4) === 'RIFF' && buf.toString('ascii', 8, 12) === 'WEBP') return 'webp';
  if (/^GIF8[79]a/.test(buf.toString('ascii', 0, 6))) return 'gif';
  if (SVG_ROOT.test(buf.toString('utf8', 0, 4096))) return 'svg';
  return undefined;
}

const MAX_SIDE = 2048;

/** An SVG, sanitised (svg-sanitise.ts), as a PNG, so nothing downstream (the renderer included) parses SVG at all. Drawn
 *  in a child process with a time limit (svg-rasterise.ts): a crafted SVG cannot stall the caller. */
export async function rasteriseSvg(svg: Buffer, opts: RasteriseOptions = {}): Promise<Buffer> {
  let clean: string;
  try {
    clean = sanitiseSvg(svg.toString('utf8'));
  } catch (err) {
    if (err instanceof SvgSanitiseError) throw new SvgRasteriseError(err.message, 'invalid');
    throw err;
  }
  return rasteriseInChild(Buffer.from(clean), { maxSide: MAX_SIDE, ...opts });
}

/** The first frame of a PNG, JPEG, WebP or GIF as a PNG, alpha kept: the renderer reads one kind
 *  of still image only (an animated GIF or WebP would otherwise bring ffmpeg a demuxer of its own). */
export async function stillPng(buf: Buffer): Promise<Buffer> {
  return sharp(buf, { limitInputPixels: 100_000_000 }).png().toBuffer();
}

/** True when a decoder reads the image's header and dimensions: magic bytes on garbage are refused. */
export async function decodes(buf: Buffer): Promise<boolean> {
  try {
    const m = await sharp(buf, { limitInputPixels: 100_000_000, animated: true }).metadata();
    return !!(m.width && m.height);
  } catch {
    return false;
  }
}
