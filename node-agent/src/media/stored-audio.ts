import { TaskError } from '../tasks/task-context.js';

/**
 * Samples [first, last) of a stored 16-bit mono WAV whose PCM data starts at dataOffset: one bounded
 * HTTP byte range, so the store sends these bytes and no others. `upToEnd`: the audio may end before
 * `last` (a short's end rounded up past the last sample), and fewer samples come back; otherwise a
 * short answer is an error.
 */
export async function readStoredSamples(
  url: string,
  audio: { dataOffset: number; first: number; last: number },
  signal: AbortSignal,
  opts: { upToEnd?: boolean } = {},
): Promise<Int16Array> {
  const from = audio.dataOffset + audio.first * 2;
  const to = audio.dataOffset + audio.last * 2 - 1;
  let res: Response;
  try {
    res = await fetch(url, { headers: { range: `bytes=${from}-${to}` }, signal });
  } catch (err) {
    if (signal.aborted) throw err;
    throw new TaskError(`Could not read the audio from the store: ${(err as Error).message}`, 'SOURCE_READ_FAILED', true);
  }
  // A 4xx is final: the audio is gone (its job was cancelled) or the URL is refused.
  if (res.status !== 206) {
    await res.body?.cancel();
    throw new TaskError(`Could not read the audio from the store (HTTP ${res.status})`, 'SOURCE_READ_FAILED', res.status >= 500);
  }
  const bytes = Buffer.from(await res.arrayBuffer());
  const asked = to - from + 1;
  if (bytes.length % 2 || bytes.length > asked || (bytes.length < asked && !opts.upToEnd)) {
    throw new TaskError(`The store sent ${bytes.length} bytes of the audio, not ${asked}`, 'SOURCE_READ_FAILED', true);
  }
  // Copied into an aligned buffer: WAV is little-endian like every host this runs on.
  const samples = new Int16Array(bytes.length / 2);
  Buffer.from(samples.buffer).set(bytes);
  return samples;
}
