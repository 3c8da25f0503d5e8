// The system tools the product and its tests take from the OS, in one list: `npm start` makes sure
// of its subset (scripts/start.mjs), `npm test` of the tests' set (scripts/test.mjs). On
// Debian/Ubuntu (apt-get, as root or with sudo) the missing ones are installed; elsewhere the
// caller is told which are missing and how to get them.
//
// `node scripts/system-tools.mjs [start|test]` checks (and installs) one set by itself.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** @typedef {'start' | 'test'} Purpose */

/**
 * @typedef {object} SystemTool
 * @property {string} name what a person would call it
 * @property {string} why what the product or the tests do with it
 * @property {Purpose[]} neededBy
 * @property {() => boolean} present
 * @property {string[]} apt Debian/Ubuntu packages that provide it
 * @property {string} elsewhere how to get it on another system (Homebrew names)
 */

/** An executable file named `cmd` in one of PATH's folders (or `cmd` itself when it is a path). */
export function onPath(cmd, env = process.env) {
  const executable = (file) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (cmd.includes('/')) return executable(cmd);
  return (env.PATH ?? '').split(path.delimiter).some((dir) => dir && executable(path.join(dir, cmd)));
}

/** The major version `<cmd> -version` reports (ffmpeg's way), 0 when it does not run. */
function ffmpegMajor(cmd) {
  const out = spawnSync(cmd, ['-version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return out.status === 0 ? Number(/version n?(\d+)\./.exec(out.stdout)?.[1] ?? 0) : 0;
}

/** The agent's settings (node-agent/src/transcribe/transcriber.ts) and Debian's paths. */
const pocketsphinxBin = () => process.env.POCKETSPHINX_BIN || 'pocketsphinx_continuous';
const pocketsphinxModel = () => path.join(process.env.POCKETSPHINX_MODEL_DIR || '/usr/share/pocketsphinx/model/en-us', 'en-us');
/** test/helpers/browser.ts's browser. */
const chromiumPath = () => process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** @type {SystemTool[]} */
export const SYSTEM_TOOLS = [
  {
    name: 'pocketsphinx',
    why: "speech recognition, the agent's transcriber that needs no model download",
    neededBy: ['start', 'test'],
    present: () => onPath(pocketsphinxBin()),
    apt: ['pocketsphinx'],
    elsewhere: 'brew install cmu-pocketsphinx (or set POCKETSPHINX_BIN)',
  },
  {
    name: 'pocketsphinx-en-us',
    why: "pocketsphinx's US English model",
    neededBy: ['start', 'test'],
    present: () => existsSync(pocketsphinxModel()),
    apt: ['pocketsphinx-en-us'],
    elsewhere: 'comes with cmu-pocketsphinx; set POCKETSPHINX_MODEL_DIR to the folder holding en-us/',
  },
  {
    name: 'yt-dlp',
    why: 'downloads YouTube videos',
    neededBy: ['start', 'test'],
    present: () => onPath(process.env.YT_DLP_PATH || 'yt-dlp'),
    apt: ['yt-dlp'],
    elsewhere: 'brew install yt-dlp',
  },
  {
    name: 'flite',
    why: 'speech synthesis for the test videos',
    neededBy: ['test'],
    present: () => onPath('flite'),
    apt: ['flite'],
    elsewhere: 'brew install flite',
  },
  {
    name: 'xmllint',
    why: 'checks that the FCPXML editor timelines are well-formed XML',
    neededBy: ['test'],
    present: () => onPath('xmllint'),
    apt: ['libxml2-utils'],
    elsewhere: 'brew install libxml2',
  },
  {
    // The agent prefers a system ffmpeg 5+ to the bundled 2018 build for untrusted media
    // (common/src/media/tools.ts); the tests craft files with filters only a current one has.
    name: 'ffmpeg 5+',
    why: 'a current ffmpeg and ffprobe, which the agent takes over its bundled 2018 build',
    neededBy: ['test'],
    present: () => onPath('ffmpeg') && ffmpegMajor('ffmpeg') >= 5,
    apt: ['ffmpeg'],
    elsewhere: 'brew install ffmpeg',
  },
  {
    name: 'chromium',
    why: "the web studio's browser tests, driven by playwright-core",
    neededBy: ['test'],
    present: () => existsSync(chromiumPath()),
    apt: ['chromium'],
    elsewhere: 'install Chromium and set CHROMIUM_PATH to its executable (brew install --cask chromium)',
  },
  {
    name: 'prometheus',
    why: "prometheus and promtool check deploy/'s scrape config, alert rules and dashboard",
    neededBy: ['test'],
    present: () => onPath('prometheus') && onPath('promtool'),
    apt: ['prometheus'],
    elsewhere: 'brew install prometheus',
  },
  {
    name: 'docker compose',
    why: "checks deploy/compose.yaml's interpolation; `config` needs no Docker engine",
    neededBy: ['test'],
    present: () =>
      onPath('docker-compose') || (onPath('docker') && spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status === 0),
    apt: ['docker-compose'],
    elsewhere: 'brew install docker-compose',
  },
  {
    name: 'script',
    why: "util-linux's script(1) gives the admin CLI's password prompt a terminal in a test",
    neededBy: ['test'],
    present: () => existsSync('/usr/bin/script'),
    apt: ['bsdutils'],
    elsewhere: 'util-linux (Linux only)',
  },
];

/**
 * The tools `purpose` needs that this host lacks.
 * @param {Purpose} purpose
 */
export function missingTools(purpose) {
  return SYSTEM_TOOLS.filter((t) => t.neededBy.includes(purpose) && !t.present());
}

/** Which tools are missing, what each is for and how to get it, one per line, then the apt-get line for all. */
export function explainMissing(tools) {
  const apt = [...new Set(tools.flatMap((t) => t.apt))];
  return [
    ...tools.map((t) => `  ${t.name}: ${t.why}\n      Debian/Ubuntu: apt-get install ${t.apt.join(' ')}; elsewhere: ${t.elsewhere}`),
    `  Debian/Ubuntu, all at once: sudo apt-get install ${apt.join(' ')}`,
  ].join('\n');
}

/** apt-get as root or through sudo, or undefined when this host has neither. */
function aptRunner() {
  if (!onPath('apt-get')) return undefined;
  const isRoot = process.getuid?.() === 0;
  if (!isRoot && !onPath('sudo')) return undefined;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  return (args) => spawnSync(isRoot ? 'apt-get' : 'sudo', isRoot ? args : ['apt-get', ...args], { stdio: 'inherit', env }).status === 0;
}

/**
 * Installs what `purpose` needs and this host lacks, where apt-get can; returns what is still
 * missing afterwards (empty when all is there), with what they are for and how to get them.
 * @param {Purpose} purpose
 * @param {{ log?: (line: string) => void }} [options]
 * @returns {{ missing: SystemTool[], advice: string }}
 */
export function ensureSystemTools(purpose, { log = (line) => process.stdout.write(`${line}\n`) } = {}) {
  let missing = missingTools(purpose);
  const apt = missing.length ? aptRunner() : undefined;
  if (apt) {
    const packages = [...new Set(missing.flatMap((t) => t.apt))];
    log(`installing ${packages.join(' ')} with apt-get (${missing.map((t) => t.name).join(', ')} missing)`);
    apt(['update', '-qq']);
    // One package this release lacks fails the whole command: then each on its own, so the rest still come.
    if (!apt(['install', '-y', '-qq', ...packages])) for (const p of packages) apt(['install', '-y', '-qq', p]);
    missing = missing.filter((t) => !t.present());
  }
  return { missing, advice: missing.length ? explainMissing(missing) : '' };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const purpose = process.argv[2] ?? 'test';
  if (purpose !== 'start' && purpose !== 'test') {
    process.stderr.write('usage: node scripts/system-tools.mjs [start|test]\n');
    process.exit(2);
  }
  const { missing, advice } = ensureSystemTools(purpose);
  if (missing.length) {
    process.stderr.write(`missing system tools:\n${advice}\n`);
    process.exit(1);
  }
  process.stdout.write(`every system tool \`npm ${purpose}\` needs is installed\n`);
}
