// Contract 2.9 / 8: a watermark given only by URL is fetched once, under the SSRF guard, checked by
// its bytes, and kept as an image file of the organization (counted in its storage).
import type { Coordinator } from '../context.js';
import { badRequest, type AppError } from '../errors.js';
import { FetchRefusedError, safeFetch } from '@shorts/common/net/safe-fetch';
import { parseAllowlist } from '@shorts/common/net/address-policy';
import { storeFile } from '../files/store-file.js';
import { CONTENT_TYPES, decodes, rasteriseSvg, sniffImage } from '@shorts/common/media/image';
import { SvgRasteriseError } from '@shorts/common/media/svg-rasterise';

/** 10 MB of 1,000,000 bytes, the unit DECISIONS.md fixes for sizes. */
export const WATERMARK_MAX_BYTES = 10_000_000;

type Deps = Pick<Coordinator, 'db' | 'store' | 'log' | 'config'>;

// Each refusal names its rule in words a client can act on (contract section 7).
const refused = (rule: string, detail: string): AppError => badRequest(`Watermark import refused (${rule}): ${detail}`);
const UNSUPPORTED = 'the file is not a PNG, JPEG, WebP, SVG or GIF image';

function fetchRefusal(err: FetchRefusedError): AppError {
  switch (err.code) {
    case 'invalid_url':
      return refused('invalid URL', err.message);
    case 'blocked_host':
      return refused('blocked host', `${err.message}; localhost, private, link-local and .local addresses are not allowed`);
    case 'too_large':
      return refused('too large', 'the image is larger than 10 MB');
    default:
      return badRequest(`Watermark import failed: the image could not be downloaded (${err.message})`);
  }
}

/** Fetches, checks and stores the image; returns the new file's id (the preset's `fileAppId`). */
export async function importWatermark(app: Deps, organizationId: string, url: string): Promise<string> {
  const res = await fetchWatermark(app, url);
  const file = await storeWatermarkImage(
    app,
    organizationId,
    res.body,
    baseName(res.finalUrl),
    `Watermark imported from ${withoutQuery(url)}`,
  );
  app.log.info('watermark imported', { organizationId, fileId: file.id, bytes: file.sizeBytes });
  return file.id;
}

/**
 * A render given a watermark by URL is checked by the same rules before it is accepted (10 MB, an
 * image by its bytes), so a URL that points at a video is a 400 naming the watermark, not a render
 * that fails later. Nothing is stored: the render's agent fetches the URL itself, and names the
 * watermark if that fails.
 */
export async function checkWatermarkUrl(app: Pick<Deps, 'config'>, url: string): Promise<void> {
  const res = await fetchWatermark(app, url);
  await checkedImage(app, res.body);
}

async function fetchWatermark(app: Pick<Deps, 'config'>, url: string) {
  let res;
  try {
    res = await safeFetch(url, {
      maxBytes: WATERMARK_MAX_BYTES,
      timeoutMs: 20_000,
      maxRedirects: 5,
      allowlist: parseAllowlist(app.config.fetchAllowlist),
      headers: { accept: 'image/*', 'user-agent': 'shorts-watermark-import/1' },
    });
  } catch (err) {
    if (err instanceof FetchRefusedError) throw fetchRefusal(err);
    throw err;
  }
  if (res.status < 200 || res.status >= 300) throw badRequest(`Watermark import failed: the image server answered HTTP ${res.status}`);
  return res;
}

/** Checks an image by its bytes (SVG becomes PNG) and keeps it as a watermark file: URL imports and studio uploads. */
export async function storeWatermarkImage(app: Deps, organizationId: string, bytes: Buffer, name: string, description: string) {
  const { format, body, contentType } = await checkedImage(app, bytes);
  return storeFile(app, {
    organizationId,
    name: `${name.replace(/\.[^.]*$/, '') || 'watermark'}.${format === 'svg' ? 'png' : format}`,
    type: 'image',
    contentType,
    source: body,
    tags: ['watermark'],
    description,
  });
}

/** The image judged by its bytes: its format, and what is kept of it (an SVG becomes a PNG). */
async function checkedImage(app: Pick<Deps, 'config'>, bytes: Buffer) {
  const format = sniffImage(bytes);
  if (!format) throw refused('unsupported format', UNSUPPORTED);
  let body = bytes;
  let contentType = CONTENT_TYPES[format];
  if (format === 'svg') {
    body = await rasteriseSvg(bytes, { timeoutMs: app.config.svgRasterTimeoutMs }).catch((err) => {
      if (err instanceof SvgRasteriseError && err.reason === 'timeout') throw refused('too complex', err.message);
      // Malformed markup, or a drawing that needs more memory than the rasteriser may take.
      throw refused(
        'unsupported format',
        `the SVG image could not be read or drawn (${err instanceof SvgRasteriseError ? err.message : 'unknown error'})`.slice(0, 400),
      );
    });
    contentType = CONTENT_TYPES.png;
  } else if (!(await decodes(body))) {
    throw refused('unsupported format', `${UNSUPPORTED} that can be decoded`);
  }
  return { format, body, contentType };
}

/** The URL's last path segment; the extension will be that of what the bytes turn out to be. */
function baseName(url: string): string {
  const last = new URL(url).pathname.split('/').pop() ?? '';
  let base: string;
  try {
    base = decodeURIComponent(last);
  } catch {
    base = last;
  }
  return base;
}

// A signed source URL's query is a credential of someone else's; it is not kept.
const withoutQuery = (url: string) => {
  const u = new URL(url);
  return u.origin + u.pathname;
};
