// PCM WAV files: the header read alone, the samples read whole, written, and made mono. ffmpeg and
// sox put LIST chunks before the data, so every reader walks the chunk list.
import { open, readFile, writeFile } from 'node:fs/promises';

export interface WavPcm {
  sampleRate: number;
  channels: number;
  /** Interleaved signed 16-bit samples. */
  samples: Int16Array;
}

/** Reads a PCM s16 WAV, walking the chunk list because ffmpeg and sox put LIST chunks before data. */
export async function readWavPcm(path: string): Promise<WavPcm> {
  return parseWav(await readFile(path), path);
}

export function parseWav(buf: Buffer, label = 'wav'): WavPcm {
  if (buf.length < 12 || buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') {
    throw new Error(`${label}: not a RIFF/WAVE file`);
  }
  let off = 12;
  let fmt: { format: number; channels: number; sampleRate: number; bits: number } | undefined;
  while (off + 8 <= buf.length) {
    const id = buf.toString('ascii', off, off + 4);
    const size = buf.readUInt32LE(off + 4);
    const body = off + 8;
    if (id === 'fmt ') {
      fmt = {
        format: buf.readUInt16LE(body),
        channels: buf.readUInt16LE(body + 2),
        sampleRate: buf.readUInt32LE(body + 4),
        bits: buf.readUInt16LE(body + 14),
      };
      // WAVE_FORMAT_EXTENSIBLE carries the real format in its sub-format GUID.
      if (fmt.format === 0xfffe && size >= 26) fmt.format = buf.readUInt16LE(body + 24);
    } else if (id === 'data') {
      if (!fmt) throw new Error(`${label}: data chunk before fmt chunk`);
      if (fmt.format !== 1 || fmt.bits !== 16)
        throw new Error(`${label}: expected PCM s16, got format ${fmt.format} with ${fmt.bits} bits`);
      // A streamed WAV may carry a placeholder size; trust the file length instead.
      const end = Math.min(buf.length, body + size);
      const bytes = (end - body) & ~1;
      // WAV is little-endian like every host we run on, so the bytes can be used as they are:
      // a view when aligned (an hour of audio is 115 MB; no second copy), else one byte copy.
      const at = buf.byteOffset + body;
      let samples: Int16Array;
      if (at % 2 === 0) samples = new Int16Array(buf.buffer, at, bytes / 2);
      else {
        samples = new Int16Array(bytes / 2);
        Buffer.from(samples.buffer).set(buf.subarray(body, body + bytes));
      }
      return { sampleRate: fmt.sampleRate, channels: fmt.channels, samples };
    }
    off = body + size + (size & 1);
  }
  throw new Error(`${label}: no data chunk`);
}

export function encodeWav(samples: Int16Array, sampleRate: number, channels = 1): Buffer {
  const header = Buffer.alloc(44);
  const dataBytes = samples.length * 2;
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * channels * 2, 28);
  header.writeUInt16LE(channels * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(dataBytes, 40);
  const body = Buffer.from(samples.buffer, samples.byteOffset, dataBytes);
  return Buffer.concat([header, body]);
}

export async function writeWavPcm(path: string, samples: Int16Array, sampleRate: number, channels = 1): Promise<void> {
  await writeFile(path, encodeWav(samples, sampleRate, channels));
}

/** Mono float samples in -1..1, averaging channels. */
export function toMonoFloat32(pcm: WavPcm): Float32Array {
  const n = Math.floor(pcm.samples.length / pcm.channels);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let sum = 0;
    for (let c = 0; c < pcm.channels; c++) sum += pcm.samples[i * pcm.channels + c]!;
    out[i] = sum / pcm.channels / 32768;
  }
  return out;
}

export interface WavInfo {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  durationSec: number;
  /** Where the samples start in the file, and how many bytes of them there are. */
  dataOffset: number;
  dataBytes: number;
}

/** Format and duration of a PCM WAV from its header alone, without reading the samples. */
export async function readWavInfo(path: string): Promise<WavInfo> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const head = Buffer.alloc(Math.min(size, 4096));
    await fh.read(head, 0, head.length, 0);
    if (head.length < 12 || head.toString('ascii', 0, 4) !== 'RIFF' || head.toString('ascii', 8, 12) !== 'WAVE') {
      throw new Error(`${path}: not a RIFF/WAVE file`);
    }
    let off = 12;
    let fmt: (Omit<WavInfo, 'durationSec' | 'dataOffset' | 'dataBytes'> & { byteRate: number }) | undefined;
    while (off + 8 <= head.length) {
      const id = head.toString('ascii', off, off + 4);
      const chunk = head.readUInt32LE(off + 4);
      if (id === 'fmt ') {
        fmt = {
          channels: head.readUInt16LE(off + 10),
          sampleRate: head.readUInt32LE(off + 12),
          byteRate: head.readUInt32LE(off + 16),
          bitsPerSample: head.readUInt16LE(off + 22),
        };
      }
      if (id === 'data') {
        if (!fmt) throw new Error(`${path}: data chunk before fmt chunk`);
        // A streamed WAV may carry a placeholder size; the file length bounds it.
        const bytes = Math.max(0, Math.min(chunk, size - off - 8));
        return {
          sampleRate: fmt.sampleRate,
          channels: fmt.channels,
          bitsPerSample: fmt.bitsPerSample,
          durationSec: fmt.byteRate ? bytes / fmt.byteRate : 0,
          dataOffset: off + 8,
          dataBytes: bytes,
        };
      }
      off += 8 + chunk + (chunk & 1);
    }
    throw new Error(`${path}: no data chunk in the first 4 KiB`);
  } finally {
    await fh.close();
  }
}
