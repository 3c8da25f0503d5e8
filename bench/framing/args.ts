// The command line both framing benches read (bench/framing.ts, bench/framing-tune.ts).
import os from 'node:os';
import path from 'node:path';
import { FAMILIES, SPLITS, type Family, type Split } from './scenes.js';

/** The value after `--name`, if given. */
export function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** `--split`, `--per-family`, `--from`, `--family` checked, and where scenes are cached. */
export function sceneSelection(): { split: Split; perFamily: number; first: number; families: Family[]; cacheDir: string } {
  const split = (arg('split') ?? 'dev') as Split;
  if (!(split in SPLITS)) throw new Error(`--split must be dev or heldout, not ${split}`);
  const families = (arg('family')?.split(',') ?? [...FAMILIES]) as Family[];
  for (const f of families) if (!FAMILIES.includes(f)) throw new Error(`unknown family ${f} (${FAMILIES.join(', ')})`);
  return {
    split,
    perFamily: Number(arg('per-family') ?? 5),
    first: Number(arg('from') ?? 0),
    families,
    cacheDir: process.env.FRAMING_CACHE ?? path.join(os.tmpdir(), 'shorts-framing'),
  };
}
