import test from 'ava';
import { createAgentMetrics } from '../node-agent/src/metrics/agent-metrics.js';
import { NVIDIA_SMI_FIELDS, parseNvidiaSmiCsv } from '../node-agent/src/metrics/nvidia-smi.js';

// Output as nvidia-smi prints it for `--query-gpu=<NVIDIA_SMI_FIELDS> --format=csv[,nounits]`.
const HEADER =
  'index, name, utilization.gpu [%], utilization.memory [%], memory.used [MiB], memory.total [MiB], encoder.stats.sessionCount, encoder.stats.averageFps';

const WITH_UNITS = `${HEADER}
0, Tesla T4, 37 %, 12 %, 2048 MiB, 15360 MiB, 3, 241
1, NVIDIA L4, 0 %, 0 %, 0 MiB, 23034 MiB, 0, 0
`;

const NOUNITS = `${HEADER}\r\n0, NVIDIA GeForce RTX 4090, 81, 40, 10240, 24564, 5, 590\r\n`;

// A MIG-partitioned H100: utilisation is not reported, and the card has no NVENC.
const MIG = `${HEADER}
0, NVIDIA H100 80GB HBM3, [N/A], [N/A], 11 MiB, 81559 MiB, 0, 0
`;

test('the query asks for the fields the parser reads, in the header order nvidia-smi echoes', (t) => {
  t.deepEqual(
    HEADER.split(', ').map((h) => h.replace(/ \[.*\]$/, '')),
    [...NVIDIA_SMI_FIELDS],
  );
});

test('units are stripped and converted to base units (ratios, bytes)', (t) => {
  const gpus = parseNvidiaSmiCsv(WITH_UNITS);
  t.is(gpus.length, 2);
  t.deepEqual(gpus[0], {
    index: '0',
    name: 'Tesla T4',
    utilization: 0.37,
    memoryUtilization: 0.12,
    memoryUsedBytes: 2048 * 1024 * 1024,
    memoryTotalBytes: 15360 * 1024 * 1024,
    encoderSessions: 3,
    encoderAverageFps: 241,
  });
  t.like(gpus[1], { index: '1', name: 'NVIDIA L4', utilization: 0, encoderSessions: 0, memoryTotalBytes: 23034 * 1024 * 1024 });
});

test('nounits output and CRLF line ends parse the same way', (t) => {
  const [gpu] = parseNvidiaSmiCsv(NOUNITS);
  t.like(gpu, { index: '0', name: 'NVIDIA GeForce RTX 4090', utilization: 0.81, encoderSessions: 5, memoryUsedBytes: 10240 * 1024 * 1024 });
});

test('[N/A] values are left out instead of becoming 0 or NaN', (t) => {
  const [gpu] = parseNvidiaSmiCsv(MIG);
  t.is(gpu!.utilization, undefined);
  t.is(gpu!.memoryUtilization, undefined);
  t.is(gpu!.memoryUsedBytes, 11 * 1024 * 1024);
});

test('columns are found by name, whatever their order; junk and empty output give no GPUs', (t) => {
  const reordered = 'memory.total [MiB], index, name, utilization.gpu [%]\n16384 MiB, 2, Tesla V100, 5 %\n';
  t.like(parseNvidiaSmiCsv(reordered)[0], { index: '2', name: 'Tesla V100', utilization: 0.05, memoryTotalBytes: 16384 * 1024 * 1024 });
  t.deepEqual(parseNvidiaSmiCsv(''), []);
  t.deepEqual(parseNvidiaSmiCsv("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."), []);
});

test('the agent exports the parsed GPUs as gauges, and none where nvidia-smi is absent', async (t) => {
  const withGpus = createAgentMetrics({ readGpus: async () => parseNvidiaSmiCsv(WITH_UNITS) });
  const text = await withGpus.registry.metrics();
  t.regex(text, /shorts_agent_gpu_utilization_ratio\{gpu="0",model="Tesla T4"\} 0\.37/);
  t.regex(text, /shorts_agent_gpu_encoder_sessions\{gpu="0",model="Tesla T4"\} 3/);
  t.regex(text, /shorts_agent_gpu_memory_total_bytes\{gpu="1",model="NVIDIA L4"\} 24152899584/);
  const without = createAgentMetrics({ readGpus: async () => undefined });
  t.notRegex(await without.registry.metrics(), /shorts_agent_gpu_utilization_ratio\{/);
});
