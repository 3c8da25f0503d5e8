import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Fields every driver since R450 answers; an unknown field would fail the whole query. */
export const NVIDIA_SMI_FIELDS = [
  'index',
  'name',
  'utilization.gpu',
  'utilization.memory',
  'memory.used',
  'memory.total',
  'encoder.stats.sessionCount',
  'encoder.stats.averageFps',
] as const;

export interface GpuSample {
  index: string;
  name: string;
  /** 0..1 */
  utilization?: number;
  memoryUtilization?: number;
  memoryUsedBytes?: number;
  memoryTotalBytes?: number;
  encoderSessions?: number;
  encoderAverageFps?: number;
}

const MIB = 1024 * 1024;

/** "55 %", "1024 MiB", "[N/A]", "[Not Supported]" → a number in the unit given, or undefined. */
function numberOf(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const m = raw.trim().match(/^(-?\d+(?:\.\d+)?)/);
  return m ? Number(m[1]) : undefined;
}

/** Splits one CSV line; nvidia-smi quotes nothing but GPU names may hold commas only in theory. */
function cells(line: string): string[] {
  return line.split(',').map((c) => c.trim());
}

/**
 * Parses `nvidia-smi --query-gpu=<NVIDIA_SMI_FIELDS> --format=csv` (with or without `nounits`):
 * the header names the columns ("memory.used [MiB]"), so the order of fields does not matter.
 */
export function parseNvidiaSmiCsv(text: string): GpuSample[] {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  if (lines.length < 2) return [];
  const header = cells(lines[0]!).map((h) => h.replace(/\s*\[.*\]$/, '').trim());
  const col = (row: string[], name: string) => {
    const i = header.indexOf(name);
    return i < 0 ? undefined : row[i];
  };
  const samples: GpuSample[] = [];
  for (const line of lines.slice(1)) {
    const row = cells(line);
    const index = col(row, 'index');
    if (index === undefined || !/^\d+$/.test(index)) continue;
    const pct = (name: string) => {
      const v = numberOf(col(row, name));
      return v === undefined ? undefined : v / 100;
    };
    const mib = (name: string) => {
      const v = numberOf(col(row, name));
      return v === undefined ? undefined : v * MIB;
    };
    samples.push({
      index,
      name: col(row, 'name') ?? 'gpu',
      utilization: pct('utilization.gpu'),
      memoryUtilization: pct('utilization.memory'),
      memoryUsedBytes: mib('memory.used'),
      memoryTotalBytes: mib('memory.total'),
      encoderSessions: numberOf(col(row, 'encoder.stats.sessionCount')),
      encoderAverageFps: numberOf(col(row, 'encoder.stats.averageFps')),
    });
  }
  return samples;
}

/** The host's GPUs now; undefined where there is no nvidia-smi (or no NVIDIA driver). */
export async function queryGpus(nvidiaSmi = 'nvidia-smi'): Promise<GpuSample[] | undefined> {
  try {
    const { stdout } = await run(nvidiaSmi, [`--query-gpu=${NVIDIA_SMI_FIELDS.join(',')}`, '--format=csv,nounits'], { timeout: 5_000 });
    return parseNvidiaSmiCsv(stdout);
  } catch {
    return undefined;
  }
}
