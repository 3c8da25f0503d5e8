// Which ffmpeg and ffprobe the agent (and the coordinator, for the files it stores itself) runs,
// and the environment they run in. They decode untrusted media: a current build has years of decoder fixes the 2018 static build of @ffmpeg-installer lacks,
// and a decoder bug exploited must find no cluster token or API key in its environment.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import ffmpegInstaller from '@ffmpeg-installer/ffmpeg';
import ffprobeInstaller from '@ffprobe-installer/ffprobe';

/** The oldest major version taken from the system before the bundled build. */
export const MIN_SYSTEM_FFMPEG_MAJOR = 5;

export interface MediaTools {
  ffmpegPath: string;
  ffprobePath: string;
  /** env: FFMPEG_PATH/FFPROBE_PATH; system: a current ffmpeg on PATH; bundled: the old static build. */
  source: 'env' | 'system' | 'bundled';
  /** ffmpeg's own version line. */
  version: string | null;
}

/** The major version from `<tool> -version`; null for an unnumbered (git snapshot) or failing build. */
export function toolVersion(bin: string): { major: number | null; line: string } | null {
  try {
    const out = execFileSync(bin, ['-version'], { encoding: 'utf8', timeout: 10_000, env: toolEnv(), stdio: ['ignore', 'pipe', 'ignore'] });
    const line = out.split('\n')[0] ?? '';
    const m = /version\s+n?(\d+)\.\d+/.exec(line);
    return { major: m ? Number(m[1]) : null, line };
  } catch {
    return null;
  }
}

function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/**
 * FFMPEG_PATH / FFPROBE_PATH win; else an ffmpeg of version 5 or later on PATH (with the ffprobe
 * beside it); else the bundled static build.
 */
export function chooseMediaTools(env: NodeJS.ProcessEnv = process.env): MediaTools {
  const given = (name: string) => (env[name] ? env[name] : undefined);
  let ffmpegPath = given('FFMPEG_PATH');
  let ffprobePath = given('FFPROBE_PATH');
  let source: MediaTools['source'] = ffmpegPath ? 'env' : 'bundled';
  if (!ffmpegPath) {
    const system = onPath('ffmpeg', env);
    const v = system ? toolVersion(system) : null;
    if (system && v?.major !== null && v && v.major >= MIN_SYSTEM_FFMPEG_MAJOR) {
      ffmpegPath = system;
      source = 'system';
      if (!ffprobePath) {
        const probe = path.join(path.dirname(system), 'ffprobe');
        const pv = existsSync(probe) ? toolVersion(probe) : null;
        if (pv?.major != null && pv.major >= MIN_SYSTEM_FFMPEG_MAJOR) ffprobePath = probe;
      }
    }
  }
  ffmpegPath ??= ffmpegInstaller.path;
  ffprobePath ??= ffprobeInstaller.path;
  return { ffmpegPath, ffprobePath, source, version: toolVersion(ffmpegPath)?.line ?? null };
}

let chosen: MediaTools | undefined;
/** The choice for this process's own environment, made once. */
export const processMediaTools = (): MediaTools => (chosen ??= chooseMediaTools());

/** True for the @ffmpeg-installer build (a 2018 git snapshot), which start-up warns about. */
export const isBundledFfmpeg = (ffmpegPath: string) => path.resolve(ffmpegPath) === path.resolve(ffmpegInstaller.path);
/** True for the @ffprobe-installer build, as old as the bundled ffmpeg. */
export const isBundledFfprobe = (ffprobePath: string) => path.resolve(ffprobePath) === path.resolve(ffprobeInstaller.path);

/**
 * What start-up warns about: an old build that reads untrusted media. A current ffmpeg with no
 * ffprobe beside it (a distribution that packages them apart, FFMPEG_PATH alone) still probes every
 * file with the bundled one, which is as old as the bundled ffmpeg.
 */
export function mediaToolWarnings(
  tools: Pick<MediaTools, 'ffmpegPath' | 'ffprobePath' | 'source'>,
): Array<{ message: string; fields: Record<string, string> }> {
  if (tools.source === 'bundled' && isBundledFfmpeg(tools.ffmpegPath)) {
    return [
      {
        message:
          'decoding untrusted media with the bundled 2018 ffmpeg build: install ffmpeg 5 or later (apt-get install ffmpeg) or set FFMPEG_PATH/FFPROBE_PATH',
        fields: { ffmpeg: tools.ffmpegPath },
      },
    ];
  }
  if (isBundledFfprobe(tools.ffprobePath)) {
    return [
      {
        message: `probing untrusted media with the bundled 2018 ffprobe build: no ffprobe 5 or later next to ${tools.ffmpegPath}; install the one of the same ffmpeg or set FFPROBE_PATH`,
        fields: { ffmpeg: tools.ffmpegPath, ffprobe: tools.ffprobePath },
      },
    ];
  }
  return [];
}

// What a media tool may see of the agent's environment: enough to run (locale, temp, fonts, GPU
// libraries, proxies for yt-dlp), nothing that authenticates (cluster token, API keys, cloud keys).
const PASSED =
  /^(PATH|HOME|GLIBC_TUNABLES|USER|LOGNAME|LANG|LANGUAGE|LC_[A-Z]+|TZ|TMPDIR|TEMP|TMP|FONTCONFIG_[A-Z_]+|LD_LIBRARY_PATH|CUDA_[A-Z_]+|NVIDIA_[A-Z_]+|XDG_[A-Z_]+|SSL_CERT_(FILE|DIR)|(HTTPS?|NO|ALL)_PROXY|(https?|no|all)_proxy)$/;

// glibc hands allocations over 128 KiB to mmap and back to the kernel on free; ffmpeg's filters
// allocate and free whole frames (a 1080x1920 copy in every overlay), so each frame paid for fresh
// pages: about a third of a render's filtering time went to page faults (bench/render.ts, `stime`).
// Kept in the heap instead, the pages are reused. An operator's own GLIBC_TUNABLES wins.
const MEDIA_TOOL_MALLOC = 'glibc.malloc.mmap_threshold=67108864:glibc.malloc.trim_threshold=536870912';

/** The environment every ffmpeg, ffprobe and yt-dlp child gets: an allowlist, not a blocklist. */
export function toolEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && PASSED.test(k)) out[k] = v;
  out.GLIBC_TUNABLES ??= MEDIA_TOOL_MALLOC;
  return out;
}
