import test, { type ExecutionContext, type ImplementationFn, type SerialFn, type TestFn } from 'ava';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '@shorts/common/paths';

// What a test needs from the host, decided when its file loads so that ava counts a test that cannot
// run as skipped, never as passed:
// - a system tool (`tools`) is installed by CI (.ci/run) and the shared media folder (`media`) lies
//   beside every CI checkout: there their absence fails the test, saying what is missing; elsewhere
//   the test is skipped, its title saying why;
// - anything else a host may lack on purpose (`optional`: model files CI cannot download, a data
//   package): skipped everywhere.

export const MEDIA = path.resolve(repoRoot(), '../shared/media');

export const haveMedia = existsSync(MEDIA);

export const havePocketsphinx = existsSync('/usr/bin/pocketsphinx_continuous');

/** The major version of /usr/bin/ffmpeg, 0 when there is none. */
export const systemFfmpegMajor = (() => {
  try {
    const version = execFileSync('/usr/bin/ffmpeg', ['-version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return Number(/version n?(\d+)\./.exec(version)?.[1] ?? 0);
  } catch {
    return 0;
  }
})();

const inCi = () => process.env.CI === 'true' || process.env.CI === '1';

export interface Needs {
  /** System tools CI installs, by the name a person would install: CI fails without one, elsewhere it is a skip. */
  tools?: Record<string, boolean>;
  /** Whether the shared media (../shared/media) the test reads is there: CI fails without it, elsewhere it is a skip. */
  media?: boolean;
  /** What a host may lack on purpose (model files, a data package), by what it is: a skip everywhere. */
  optional?: Record<string, boolean>;
}

type Declare<Context> = (title: string, implementation: ImplementationFn<[], Context>) => void;

function missing(record: Record<string, boolean> | undefined): string[] {
  return Object.entries(record ?? {})
    .filter(([, ok]) => !ok)
    .map(([name]) => name);
}

/** Why a test with these needs does not run here (skip), or fails here (CI without a tool or the media), or nothing. */
function verdict(needs: Needs): { skip: string } | { fail: string } | undefined {
  const optional = missing(needs.optional).map((n) => `${n} absent`);
  if (optional.length) return { skip: optional.join('; ') };
  const tools = missing(needs.tools);
  const mediaAbsent = needs.media === false;
  if (!tools.length && !mediaAbsent) return undefined;
  const why = [...(mediaAbsent ? [`${MEDIA} absent`] : []), ...(tools.length ? [`${tools.join(' and ')} not installed`] : [])];
  if (!inCi()) return { skip: why.join('; ') };
  const provided = [
    ...(mediaAbsent ? [`CI runs beside the shared media (${MEDIA})`] : []),
    ...(tools.length ? [`CI installs ${tools.length > 1 ? 'them' : 'it'} (.ci/run)`] : []),
  ];
  return { fail: `${why.join('; ')}: ${provided.join(' and ')}, so this is a broken CI machine, not a skip` };
}

/**
 * ava's `test` (and `.serial`) for tests that need these: `needing({ tools: { flite: haveFlite } })('title', impl)`.
 * A test that cannot run here is declared with `test.skip`, its title ending `[skipped: why]`; one
 * whose tool or media CI should have provided is declared as a test that fails saying so.
 */
export function needing<Context = unknown>(
  needs: Needs,
  base: TestFn<Context> = test as TestFn<Context>,
): Declare<Context> & { serial: Declare<Context> } {
  const outcome = verdict(needs);
  const declareWith =
    (declare: TestFn<Context> | SerialFn<Context>): Declare<Context> =>
    (title, implementation) => {
      if (!outcome) declare(title, implementation);
      else if ('skip' in outcome) declare.skip(`${title} [skipped: ${outcome.skip}]`, implementation);
      else declare(title, (t: ExecutionContext<Context>) => t.fail(outcome.fail));
    };
  return Object.assign(declareWith(base), { serial: declareWith(base.serial) });
}
