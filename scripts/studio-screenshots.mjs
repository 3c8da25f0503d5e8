// `npm run docs:screenshots`: the pictures in docs/studio.md made again from the studio's browser
// tests, so they show the studio as it is. Each picture is a screenshot one test takes while it runs
// (test/.out/<run>/<name>.png, see test/helpers/browser.ts), scaled to at most 960 px wide and kept
// as JPEG under docs/images/. Needs what those tests need: Postgres, chromium, ffmpeg, and the
// studio built (this script builds it first).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Each picture of docs/studio.md: the test that takes it and the screenshot's name there. */
const PICTURES = [
  { image: 'studio-job-preview.jpg', test: 'test/studio-preview.test.ts', shot: 'studio-preview/watermark-moved.png' },
  { image: 'studio-edit-shorts.jpg', test: 'test/studio-shorts-edit.test.ts', shot: 'studio-shorts-edit/short-added.png' },
  { image: 'studio-framing.jpg', test: 'test/studio-framing.test.ts', shot: 'studio-framing/desktop-window-dragged.png' },
  { image: 'studio-phone-job.jpg', test: 'test/studio-job-edits.test.ts', shot: 'studio-job-edits/phone-job-page.png' },
];

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`docs:screenshots: ${command} ${args.join(' ')} failed (${result.status ?? result.signal})`);
    process.exit(1);
  }
}

run('npm', ['run', '-s', 'build:studio']);
run('npx', ['ava', '-c', '1', ...new Set(PICTURES.map((p) => p.test))]);
for (const { image, shot } of PICTURES) {
  const from = path.join(root, 'test', '.out', shot);
  if (!existsSync(from)) {
    console.error(`docs:screenshots: ${shot} was not taken (did its test change its screenshot's name?)`);
    process.exit(1);
  }
  const to = path.join(root, 'docs', 'images', image);
  run('ffmpeg', ['-v', 'error', '-y', '-i', from, '-vf', "scale='min(960,iw)':-2", '-q:v', '4', to]);
  console.log(`docs/images/${image} <- test/.out/${shot}`);
}
