import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomBytes } from 'node:crypto';
import { checkKey, type ObjectSource, type ObjectStore, type StoredObjectInfo } from './object-store.js';

/** Objects as files under one root; writes go to a temp name and are renamed into place. */
export class LocalObjectStore implements ObjectStore {
  readonly kind = 'local' as const;
  constructor(readonly root: string) {}

  private file(key: string): string {
    return path.join(this.root, checkKey(key));
  }

  async put(key: string, source: ObjectSource, _opts: { contentType?: string } = {}): Promise<{ size: number }> {
    const target = this.file(key);
    await mkdir(path.dirname(target), { recursive: true });
    const tmp = `${target}.tmp-${randomBytes(6).toString('hex')}`;
    try {
      if (Buffer.isBuffer(source)) await writeFile(tmp, source);
      else
        await pipeline(
          'path' in source && !(source instanceof Readable) ? createReadStream(source.path) : (source as Readable),
          createWriteStream(tmp),
        );
      await rename(tmp, target);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    return { size: (await stat(target)).size };
  }

  async get(key: string, range?: { start: number; end?: number }) {
    const file = this.file(key);
    const { size } = await stat(file);
    const stream = createReadStream(file, range ? { start: range.start, end: range.end } : {});
    return { stream: stream as Readable, size };
  }

  async stat(key: string) {
    try {
      const s = await stat(this.file(key));
      return s.isFile() ? { size: s.size, lastModified: s.mtime } : null;
    } catch {
      return null;
    }
  }

  async move(from: string, to: string): Promise<void> {
    const target = this.file(to);
    await mkdir(path.dirname(target), { recursive: true });
    await rename(this.file(from), target);
  }

  async delete(key: string): Promise<void> {
    await rm(this.file(key), { force: true });
  }

  async *list(prefix: string): AsyncIterable<StoredObjectInfo> {
    const walk = async function* (dir: string, rel: string): AsyncIterable<StoredObjectInfo> {
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        const key = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) yield* walk(path.join(dir, e.name), key);
        else if (e.isFile() && !e.name.includes('.tmp-')) {
          const s = await stat(path.join(dir, e.name));
          yield { key, size: s.size, lastModified: s.mtime };
        }
      }
    };
    // Only the folder the prefix names is walked (the upload sweep lists `uploads/` every few
    // minutes; the whole store can be large).
    const folder = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
    const start = folder ? path.join(this.root, checkKey(folder)) : this.root;
    for await (const obj of walk(start, folder)) if (obj.key.startsWith(prefix)) yield obj;
  }
}
