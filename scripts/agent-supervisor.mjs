// Keeps `npm start`'s render agent running, the way a service manager would (scripts/start.mjs):
//
//   const agent = superviseAgent({ args, cwd, env, log, onGiveUp });
//   agent.pid; await agent.stop(); agent.killNow();
//
// An agent that dies (OOM killer, a crash in a native decoder) is started again: 1 s after the
// first exit, doubling up to 30 s while it keeps dying, back to 1 s once one has run for a minute.
// One that never gets as far as "ready" five times in a row cannot start on this host (no ffmpeg,
// bad configuration): restarting it forever would only hide that, so `onGiveUp` is called instead.
import { spawn } from 'node:child_process';

export const RESTART_FIRST_DELAY_MS = 1_000;
export const RESTART_MAX_DELAY_MS = 30_000;
export const RESTART_STABLE_AFTER_MS = 60_000;
export const START_FAILURES_BEFORE_GIVING_UP = 5;

// A stopping process hands its work back within its own limit (STOP_DEADLINE_MS in
// common/src/shutdown.ts), which it reports with "ready"; it exits by itself when that runs out. So
// SIGKILL comes only a little after that limit, for a process whose event loop is stuck. One that
// never said ready holds no work yet (an agent leases only after it), so it gets the short wait.
const STOP_GRACE_MS = 5_000;
const UNREADY_STOP_MS = 10_000;

/** How long to wait for a process told to stop (SIGTERM) before SIGKILL, given the limit its "ready" reported. */
export const stopLimitMs = (reportedDeadlineMs) =>
  reportedDeadlineMs === undefined ? UNREADY_STOP_MS : reportedDeadlineMs + STOP_GRACE_MS;

/** The delay before the `crashesInARow`-th restart in a row. */
export const restartDelayMs = (crashesInARow) => Math.min(RESTART_FIRST_DELAY_MS * 2 ** (crashesInARow - 1), RESTART_MAX_DELAY_MS);

/** Ends a process group (what a dead or stopped agent started: ffmpeg, pocketsphinx), if any is left. */
function killGroup(pid) {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    /* none left */
  }
}

/**
 * Runs the agent (`node <args>`, in its own process group, with an IPC channel) and keeps it running.
 * @param {object} options
 * @param {string[]} options.args node's arguments: the agent's entry point and its flags
 * @param {string} options.cwd
 * @param {NodeJS.ProcessEnv} options.env
 * @param {(line: string) => void} options.log progress lines (starts, exits, restarts, stops)
 * @param {(why: string) => void} options.onGiveUp called once, when the agent failed at start-up too often in a row
 * @returns {{ readonly pid: number | undefined, stop(): Promise<void>, killNow(): void }}
 *   `stop()` ends it (SIGTERM, then SIGKILL past the agent's own stop limit) and restarts no more;
 *   `killNow()` sends SIGTERM at once, for a `process.on('exit')` handler.
 */
export function superviseAgent({ args, cwd, env, log, onGiveUp }) {
  let child;
  let stopping = false;
  let restartTimer;
  let crashesInARow = 0;
  let startFailuresInARow = 0;
  let lastError;
  let stopDeadlineMs;

  const start = () => {
    restartTimer = undefined;
    const startedAt = Date.now();
    let readyAt;
    lastError = undefined;
    stopDeadlineMs = undefined;
    // The IPC channel carries "ready" or why start-up failed, and closes when this process dies
    // however it dies, which the agent takes as its cue to stop (common/src/shutdown.ts). Its log
    // goes straight to our stdout/stderr, so it still has somewhere to go after that.
    const proc = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], detached: true });
    child = proc;
    log(`starting the agent (pid ${proc.pid})`);
    proc.on('message', (m) => {
      if (m?.type === 'ready') {
        readyAt = Date.now();
        if (Number.isFinite(m.stopDeadlineMs)) stopDeadlineMs = m.stopDeadlineMs;
      }
      if (m?.type === 'start-failed') lastError = m.message;
    });
    // 'exit' can come before the last message is read; the channel closes after it.
    const channelClosed = new Promise((r) => proc.once('disconnect', r));
    const onExit = async (code, signal) => {
      if (stopping) return;
      await Promise.race([channelClosed, new Promise((r) => setTimeout(r, 1000))]);
      if (stopping) return;
      // What a dead agent started (ffmpeg, pocketsphinx) shares its process group: end it too, or
      // it keeps burning the cores its replacement needs.
      killGroup(proc.pid);
      const how = signal ? `killed by ${signal}` : `exit code ${code}`;
      if (readyAt === undefined) {
        startFailuresInARow += 1;
        if (startFailuresInARow >= START_FAILURES_BEFORE_GIVING_UP) {
          onGiveUp(
            `the agent failed at start-up ${startFailuresInARow} times in a row (${how}); its last error: ${lastError ?? 'none reported (see its log above)'}`,
          );
          return;
        }
      } else {
        startFailuresInARow = 0;
        if (Date.now() - readyAt >= RESTART_STABLE_AFTER_MS) crashesInARow = 0;
      }
      crashesInARow += 1;
      const delay = restartDelayMs(crashesInARow);
      const phase = readyAt === undefined ? `during start-up after ${((Date.now() - startedAt) / 1000).toFixed(1)} s` : 'while running';
      log(`agent exited ${phase} (${how}${lastError ? `; last error: ${lastError}` : ''}); restarting it in ${delay / 1000} s`);
      restartTimer = setTimeout(start, delay);
    };
    proc.on('exit', (code, signal) => void onExit(code, signal));
  };
  start();

  return {
    get pid() {
      return child?.pid;
    },
    async stop() {
      stopping = true;
      clearTimeout(restartTimer);
      const proc = child;
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
      const limitMs = stopLimitMs(stopDeadlineMs);
      log(`stopping the agent (pid ${proc.pid}); it has up to ${limitMs / 1000} s to hand its work back`);
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      const timer = setTimeout(() => {
        log(`the agent did not stop within ${limitMs / 1000} s; killing it`);
        proc.kill('SIGKILL');
      }, limitMs);
      await exited;
      clearTimeout(timer);
      // Whatever it started and left behind (an ffmpeg mid-encode) goes with it.
      killGroup(proc.pid);
    },
    killNow() {
      if (child && child.exitCode === null) child.kill('SIGTERM');
    },
  };
}
