// The parts of autocannon (which ships no types) that bench/load.ts uses.
declare module 'autocannon' {
  interface Histogram {
    average: number;
    mean: number;
    p50: number;
    p90: number;
    p97_5: number;
    p99: number;
    max: number;
    min: number;
  }
  interface Result {
    requests: Histogram & { total: number };
    latency: Histogram;
    non2xx: number;
    errors: number;
    timeouts: number;
    '2xx': number;
    duration: number;
  }
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    headers?: Record<string, string>;
    pipelining?: number;
    workers?: number;
    requests?: Array<{ path?: string; method?: string }>;
  }
  function autocannon(opts: Options): Promise<Result>;
  export default autocannon;
}
