import test from 'ava';
import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { makeTalkVideo } from './helpers/talk-video.js';
import { buildYtDlpArgs } from '../node-agent/src/media/youtube.js';

// YouTube cannot be reached from here: the agent's yt-dlp integration runs against a stand-in
// executable that speaks yt-dlp's command line (output template, size cap, exit codes).

let cluster: TestCluster;

test.before(async () => {
  cluster = await startCluster('jobs_youtube');
  const talk = await makeTalkVideo(cluster.dataDir, {
    phrases: [{ text: 'What is the best way to learn? Practice every single day.', pauseAfter: 1 }],
  });
  const fake = path.join(cluster.dataDir, 'yt-dlp');
  await writeFile(
    fake,
    `#!/bin/sh
# Stand-in for yt-dlp: honours -o and the last argument (the watch URL).
out=""; url=""
while [ $# -gt 0 ]; do
  case "$1" in -o) out="$2"; shift ;; --) ;; *) url="$1" ;; esac
  shift
done
id=\${url##*v=}
case "$id" in
  PrivateVid1) echo "ERROR: [youtube] $id: Private video. Sign in if you've been granted access" >&2; exit 1 ;;
esac
echo "download:progress 50.0%"
file=$(echo "$out" | sed "s/%(id)s/$id/; s/%(ext)s/mp4/")
cp "${talk.videoPath}" "$file"
echo "download:progress 100.0%"
`,
  );
  await chmod(fake, 0o755);
  await cluster.startAgent({ YT_DLP_PATH: fake });
});
test.after.always(() => cluster?.close());

const waitForJob = (key: string, id: string) => cluster.settledJob(key, id, { timeoutMs: 180_000 });

test('yt-dlp arguments: one video, capped size and height, our ffmpeg, no playlist', (t) => {
  const args = buildYtDlpArgs('dQw4w9WgXcQ', '/tmp/x', { ffmpegPath: '/opt/ffmpeg', maxBytes: 1000 });
  t.true(args.includes('--no-playlist'));
  t.deepEqual(args.slice(args.indexOf('--max-filesize'), args.indexOf('--max-filesize') + 2), ['--max-filesize', '1000']);
  t.deepEqual(args.slice(args.indexOf('--ffmpeg-location'), args.indexOf('--ffmpeg-location') + 2), ['--ffmpeg-location', '/opt/ffmpeg']);
  t.is(args.at(-1), 'https://www.youtube.com/watch?v=dQw4w9WgXcQ');
  t.is(args.at(-2), '--', 'the URL can never be read as an option');
  t.regex(args[args.indexOf('-f') + 1]!, /height<=1080/);
});

test('a YouTube URL job completes and pays the YouTube component (0.1 minimum)', async (t) => {
  const { key } = await cluster.org({ plan: 'starter', credits: 3 });
  const created = await cluster.api('POST', '/api/jobs', {
    key,
    body: { functionName: 'VideoShorts', youtubeVideoId: 'https://youtu.be/AbCdEfGhIjK' },
  });
  t.is(created.status, 201);
  const job = await waitForJob(key, created.body.id);
  t.is(job.status, 'COMPLETED', job.message);
  t.is(job.costBreakDown.youtubeProcessing, 0.1);
  t.is(job.cost, Math.max(0.3, Math.round((job.costBreakDown.shortGen + 0.1) * 100) / 100));
});

test('an unavailable YouTube video fails with the reason', async (t) => {
  const { key } = await cluster.org({ plan: 'pro', credits: 3 });
  const created = await cluster.api('POST', '/api/jobs', { key, body: { functionName: 'VideoShorts', youtubeVideoId: 'PrivateVid1' } });
  const job = await waitForJob(key, created.body.id);
  t.is(job.status, 'FAILED');
  t.regex(job.message, /not available.*Private video/);
});
