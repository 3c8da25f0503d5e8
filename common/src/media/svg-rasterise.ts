// SVG is a program for a renderer: a few filtered elements can keep librsvg busy for minutes. Here
// it runs in a child process, never on this process's libuv thread pool (which DNS lookups and the
// local object store share with every request), with a wall-clock limit, a capped canvas, and at
// most two at a time. Its address space is capped too (`ulimit -v`), so a document that makes librsvg
// allocate gigabytes (a pattern tile of 20000x20000 pixels) fails inside the child instead of
// taking the host's memory: the V8 heap flag bounds only JavaScript's part.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

export class SvgRasteriseError extends Error {
  constructor(
    message: string,
    readonly reason: 'timeout' | 'invalid',
  ) {
    super(message);
    this.name = 'SvgRasteriseError';
  }
}

export interface RasteriseOptions {
  /** Wall-clock limit; the child is killed past it. */
  timeoutMs?: number;
  /** Longest side of the PNG, in pixels. */
  maxSide?: number;
  /** The child's address-space limit in bytes (Node itself reserves ~0.8 GB of it). */
  maxMemoryBytes?: number;
}

/** Node and sharp start in ~0.8 GB of address space with two malloc arenas; this leaves ~0.7 GB for
 *  drawing, dozens of 2048x2048 surfaces. */
export const DEFAULT_SVG_MEMORY_BYTES = 1536 * 1024 * 1024;

const MAX_RUNNING = 2;
const MAX_PNG_BYTES = 64 * 1024 * 1024;
let running = 0;
const waiting: Array<() => void> = [];

async function slot<T>(fn: () => Promise<T>): Promise<T> {
  if (running >= MAX_RUNNING) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await fn();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

// The child's whole program: plain JavaScript passed with -e, so it starts in a fraction of a second
// (no TypeScript loader) and needs no file of its own next to the compiled output. It reads the SVG
// on stdin and writes the PNG on stdout, with one libvips thread and no cache.
const CHILD_SOURCE = `
const [sharpUrl, maxSideArg] = process.argv.slice(1);
const sharp = (await import(sharpUrl)).default;
sharp.concurrency(1);
sharp.cache(false);
const maxSide = Number(maxSideArg);
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const svg = Buffer.concat(chunks);
try {
  // The intrinsic size (user units at 72 dpi) is read from the markup before anything is drawn; the
  // density then makes librsvg draw at most maxSide pixels a side, so the canvas is never larger.
  const meta = await sharp(svg, { density: 72, limitInputPixels: false }).metadata();
  const side = Math.max(meta.width ?? 0, meta.height ?? 0);
  if (!side) throw new Error('the SVG has no size');
  // Density 1 is sharp's least; an SVG too large even then is refused by limitInputPixels.
  const density = Math.max(1, Math.min(144, (72 * maxSide) / side));
  const png = await sharp(svg, { density, limitInputPixels: Math.ceil(maxSide * maxSide * 1.05) })
    .resize({ width: maxSide, height: maxSide, fit: 'inside', withoutEnlargement: true })
    .png()
    .toBuffer();
  process.stdout.write(png);
} catch (err) {
  process.stderr.write(String(err?.message ?? err).slice(0, 500));
  process.exitCode = 2;
}
`;

let sharpUrl: string | undefined;
const sharpEntry = () => (sharpUrl ??= pathToFileURL(createRequire(import.meta.url).resolve('sharp')).href);

/** A sanitised SVG's bytes as a PNG, drawn in a child process under a time limit. */
export function rasteriseInChild(svg: Buffer, opts: RasteriseOptions = {}): Promise<Buffer> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const maxSide = opts.maxSide ?? 2048;
  const memoryKiB = Math.floor((opts.maxMemoryBytes ?? DEFAULT_SVG_MEMORY_BYTES) / 1024);
  return slot(
    () =>
      new Promise<Buffer>((resolve, reject) => {
        // The shell sets the limit and becomes node (exec), so the limit is the child's own and the
        // timer's SIGKILL reaches node itself.
        const child = spawn(
          '/bin/sh',
          [
            '-c',
            'ulimit -v "$1" && shift && exec "$@"',
            'svg-rasterise',
            String(memoryKiB),
            process.execPath,
            '--max-old-space-size=256',
            '--input-type=module',
            '-e',
            CHILD_SOURCE,
            sharpEntry(),
            String(maxSide),
          ],
          {
            stdio: ['pipe', 'pipe', 'pipe'],
            // Every thread's malloc arena reserves 64 MB of address space; two are plenty for one thread of work.
            env: { PATH: process.env.PATH ?? '', UV_THREADPOOL_SIZE: '1', VIPS_CONCURRENCY: '1', MALLOC_ARENA_MAX: '2' },
          },
        );
        const out: Buffer[] = [];
        let size = 0;
        let stderr = '';
        let timedOut = false;
        const timer = setTimeout(() => {
          timedOut = true;
          child.kill('SIGKILL');
        }, timeoutMs);
        child.stdout.on('data', (b: Buffer) => {
          size += b.length;
          if (size > MAX_PNG_BYTES) child.kill('SIGKILL');
          else out.push(b);
        });
        child.stderr.setEncoding('utf8').on('data', (d: string) => {
          stderr = (stderr + d).slice(-2000);
        });
        child.stdin.on('error', () => undefined); // a child killed early closes its stdin
        child.on('error', (err) => {
          clearTimeout(timer);
          reject(err);
        });
        child.on('close', (code) => {
          clearTimeout(timer);
          if (timedOut) return reject(new SvgRasteriseError(`the SVG image took longer than ${timeoutMs / 1000} s to draw`, 'timeout'));
          if (code !== 0 || size > MAX_PNG_BYTES)
            return reject(new SvgRasteriseError(`the SVG image could not be drawn (${stderr.trim() || `exit ${code}`})`, 'invalid'));
          resolve(Buffer.concat(out));
        });
        child.stdin.end(svg);
      }),
  );
}
