import http from 'node:http';
import client from 'prom-client';
import type { Logger } from '@shorts/common/logger';
import { TASK_TYPES } from '@shorts/common/tasks';
import { RUN_TIME_BUCKETS, onePerScrape, seriesIn } from '@shorts/common/metrics';
import { queryGpus, type GpuSample } from './nvidia-smi.js';

// The agent's own /metrics: what only the render host knows (its GPUs, how fast it encodes and
// transcribes). Farm-wide state (queue, slots, which agent has NVENC) is the coordinator's, so the
// two never export the same series.

const FPS_BUCKETS = [1, 2, 5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 240, 360, 480];
const RTF_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5];

export function createAgentMetrics(opts: { readGpus?: () => Promise<GpuSample[] | undefined> }) {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const series = seriesIn(registers);
  const readGpus = opts.readGpus ?? (() => queryGpus());

  // nvidia-smi runs once per scrape, shared by the GPU gauges.
  const gpus = onePerScrape(readGpus);
  const gpuGauge = (name: string, help: string, pick: (g: GpuSample) => number | undefined) =>
    new client.Gauge({
      name,
      help,
      labelNames: ['gpu', 'model'],
      registers,
      async collect() {
        this.reset();
        for (const g of (await gpus()) ?? []) {
          const v = pick(g);
          if (v !== undefined) this.labels(g.index, g.name).set(v);
        }
      },
    });

  const m = {
    registry,
    tasks: new client.Counter(
      series('shorts_agent_tasks_total', 'Tasks this agent ran, by type and outcome (completed, failed, lease_lost, released)', [
        'type',
        'outcome',
      ]),
    ),
    taskRun: new client.Histogram({
      ...series('shorts_agent_task_run_seconds', 'Time this agent spent on a task, by type', ['type']),
      buckets: RUN_TIME_BUCKETS,
    }),
    renderFrames: new client.Counter(series('shorts_agent_render_frames_total', 'Frames encoded by renders, by encoder', ['encoder'])),
    renderSeconds: new client.Counter(
      series('shorts_agent_render_encode_seconds_total', 'Time spent in the render encode (ffmpeg), by encoder', ['encoder']),
    ),
    renderFps: new client.Histogram({
      ...series('shorts_agent_render_frames_per_second', 'Frames per second of each render encode, by encoder', ['encoder']),
      buckets: FPS_BUCKETS,
    }),
    analysisMediaSeconds: new client.Counter(series('shorts_agent_analysis_media_seconds_total', 'Seconds of video analysed')),
    analysisSeconds: new client.Counter(series('shorts_agent_analysis_processing_seconds_total', 'Time spent analysing them')),
    analysisRtf: new client.Histogram({
      ...series(
        'shorts_agent_analysis_real_time_factor',
        'Processing time over video length of each analysis (below 1 is faster than real time)',
      ),
      buckets: RTF_BUCKETS,
    }),
    gpuUtilization: gpuGauge(
      'shorts_agent_gpu_utilization_ratio',
      'GPU busy fraction over the last sample period (nvidia-smi utilization.gpu)',
      (g) => g.utilization,
    ),
    gpuMemoryUsed: gpuGauge('shorts_agent_gpu_memory_used_bytes', 'GPU memory in use', (g) => g.memoryUsedBytes),
    gpuMemoryTotal: gpuGauge('shorts_agent_gpu_memory_total_bytes', 'GPU memory installed', (g) => g.memoryTotalBytes),
    gpuEncoderSessions: gpuGauge('shorts_agent_gpu_encoder_sessions', 'NVENC sessions open now', (g) => g.encoderSessions),
    gpuEncoderFps: gpuGauge(
      'shorts_agent_gpu_encoder_average_fps',
      'Average frames per second over the open NVENC sessions',
      (g) => g.encoderAverageFps,
    ),

    taskEnded(type: string, outcome: string, seconds: number): void {
      m.tasks.labels(type, outcome).inc();
      if (outcome === 'completed') m.taskRun.labels(type).observe(seconds);
    },
    /** Creates the render series at zero for the host's encoder, so the first render shows in rate(). */
    encoderKnown(encoder: string): void {
      m.renderFrames.labels(encoder).inc(0);
      m.renderSeconds.labels(encoder).inc(0);
    },
    renderEncoded(encoder: string, frames: number, seconds: number): void {
      if (!(frames > 0) || !(seconds > 0)) return;
      m.renderFrames.labels(encoder).inc(frames);
      m.renderSeconds.labels(encoder).inc(seconds);
      m.renderFps.labels(encoder).observe(frames / seconds);
    },
    analysed(mediaSeconds: number, seconds: number): void {
      if (!(mediaSeconds > 0) || !(seconds > 0)) return;
      m.analysisMediaSeconds.inc(mediaSeconds);
      m.analysisSeconds.inc(seconds);
      m.analysisRtf.observe(seconds / mediaSeconds);
    },
  };
  for (const type of TASK_TYPES) for (const outcome of ['completed', 'failed']) m.tasks.labels(type, outcome).inc(0);
  m.analysisMediaSeconds.inc(0);
  m.analysisSeconds.inc(0);
  return m;
}

export type AgentMetrics = ReturnType<typeof createAgentMetrics>;

/** Serves GET /metrics; resolves with the bound port (0 picks a free one). */
export async function serveAgentMetrics(
  metrics: AgentMetrics,
  bind: { host: string; port: number },
  log: Logger,
): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    metrics.registry.metrics().then(
      (body) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(body),
      (err) => {
        log.error('metrics collection failed', { err });
        res.writeHead(500).end();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(bind.port, bind.host, () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  return { port, close: () => new Promise<void>((r) => server.close(() => r())) };
}
