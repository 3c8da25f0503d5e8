// What the coordinator's and the agent's Prometheus registries share (coordinator/src/metrics,
// node-agent/src/metrics); each keeps its own series, so the two never export the same one.

/** Time a task runs, from half a second to two hours: renders and analyses take minutes. */
export const RUN_TIME_BUCKETS = [0.5, 1, 2.5, 5, 10, 30, 60, 120, 180, 300, 450, 600, 900, 1200, 1800, 3600, 7200];

/**
 * One read per scrape: the registry calls every collect() at once, and they share the read in
 * flight; the next scrape reads afresh. A failed read gives undefined (after `onError`), so a gauge
 * can leave its series out rather than fail the scrape.
 */
export function onePerScrape<T>(read: () => Promise<T>, onError?: (err: unknown) => void): () => Promise<T | undefined> {
  let inFlight: Promise<T | undefined> | undefined;
  return () => {
    inFlight ??= read()
      .catch((err: unknown) => {
        onError?.(err);
        return undefined;
      })
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  };
}

/**
 * What every counter and histogram of one registry declares alike: its name, help, label names
 * (none unless given) and the registry it lives in. `const series = seriesIn(registers)`, then
 * `new client.Counter(series(name, help, ['type']))` or `new client.Histogram({ ...series(name, help), buckets })`.
 * Typed on the registry so that common/ need not depend on prom-client.
 */
export function seriesIn<R>(registers: R[]) {
  return <L extends string = string>(name: string, help: string, labelNames: L[] = []) => ({ name, help, labelNames, registers });
}
