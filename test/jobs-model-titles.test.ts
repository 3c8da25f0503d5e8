import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { serveFiles, type MediaServer } from './helpers/media.js';
import { makeTalkVideo } from './helpers/talk-video.js';
import { listener } from './helpers/http.js';
import { fliteAvailable, type Synthesised } from './transcribe-synth.js';
import { createUser } from '../coordinator/src/tenancy/tenancy.js';
import { titleFromTranscript } from '@shorts/common/text/title';
import type { Word } from '@shorts/common/text/transcript';
import type { Parsed } from './helpers/parsed.js';

// Issue 40, titles written by a language model, end to end: a real agent (ffmpeg, VAD, the crop
// stage) analyses a flite-spoken talk with an OpenAI-compatible transcriber and chat model
// configured, both served by a fake server this test starts. The model's titles come back marked
// `titleSource: "model"` in both retrieve forms; a correction of a word a title uses makes that title
// again from the corrected words ("transcript"), one that leaves a title's words alone keeps it.

// What the speaker says. The fake transcriber mishears two words, as a recogniser would:
// "reading" as "weeding" and "bed" as "bad".
const PHRASES = [
  { text: 'What is the fastest way to learn a new language?', pauseAfter: 0.8 },
  { text: 'The answer is practice every single day.', pauseAfter: 0.9 },
  { text: 'Ten minutes of speaking beats three hours of reading.', pauseAfter: 1.2 },
  { text: 'Here is a second idea about memory and sleep.', pauseAfter: 0.8 },
  { text: 'Your brain stores new words while you sleep at night.', pauseAfter: 0.9 },
  { text: 'Review them before bed and again after you wake up.', pauseAfter: 1.2 },
];
const MISHEARD: Record<string, string> = { reading: 'weeding', bed: 'bad' };

/** The model's judgement of the first short's parts (energy is the audio's: the model is not asked). */
const MODEL_SCORES = { hook: 93, completeness: 81, standalone: 77, topicMatch: null };

// The model's titles: the first names the misheard "weeding", the second none of the misheard words.
const SPEAKING_TITLE = 'Ten minutes of speaking beats hours of weeding';
const SLEEP_TITLE = 'Your brain learns new words while you sleep';
const PROMPT = 'the practical tips';

let cluster: TestCluster;
let media: MediaServer;
let talk: Synthesised & { videoPath: string };
let fake: Awaited<ReturnType<typeof fakeEndpoints>>;

/** The punctuated words the fake transcriber answers: flite's words and times, two of them misheard. */
function heardWords(): Array<{ word: string; start: number; end: number }> {
  const texts = PHRASES.flatMap((p) => p.text.split(/\s+/));
  if (texts.length !== talk.words.length) throw new Error(`flite gave ${talk.words.length} words for ${texts.length}`);
  return texts.map((text, i) => {
    const bare = text.replace(/[^a-z]/gi, '');
    return { word: text.replace(bare, MISHEARD[bare] ?? bare), start: talk.words[i]!.start, end: talk.words[i]!.end };
  });
}

/**
 * One server for both endpoints. Transcription: the whole talk's words, with times made relative to
 * the chunk the agent sends (a talk this short is one chunk, starting about a second of padding before
 * the first word; a word off by a few hundredths changes nothing here). Chat: two shorts, named by
 * the sentence lines of the prompt, so the word ids are those the agent numbered.
 */
async function fakeEndpoints() {
  const chats: Array<Record<string, unknown>> = [];
  let transcriptions = 0;
  const server = http.createServer(
    listener(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const reply = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.url === '/v1/audio/transcriptions') {
        transcriptions++;
        const words = heardWords();
        const offset = Math.max(0, words[0]!.start - 1);
        const shifted = words.map((w) => ({ ...w, start: +(w.start - offset).toFixed(3), end: +(w.end - offset).toFixed(3) }));
        return reply(200, { task: 'transcribe', language: 'english', text: words.map((w) => w.word).join(' '), words: shifted });
      }
      if (req.url !== '/v1/chat/completions') return reply(404, { error: 'no such endpoint' });
      const body = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>;
      chats.push(body);
      const messages = body.messages as Array<{ role: string; content: string }>;
      const lines = [...messages[1]!.content.matchAll(/^\[(\d+)-(\d+)\] \([\d.]+-[\d.]+\) (.*)$/gm)].map((m) => ({
        startId: Number(m[1]),
        endId: Number(m[2]),
        text: m[3]!,
      }));
      const line = (start: string) => lines.find((l) => l.text.startsWith(start));
      const span = (first: string, last: string) => ({ startId: line(first)?.startId ?? -1, endId: line(last)?.endId ?? -1 });
      const content = JSON.stringify({
        shorts: [
          {
            title: SPEAKING_TITLE,
            reason: 'A question answered with a number',
            ...span('What is the fastest', 'Ten minutes'),
            scores: MODEL_SCORES,
          },
          { title: SLEEP_TITLE, reason: 'A surprising fact with advice', ...span('Here is a second idea', 'Review them') },
        ],
      });
      reply(200, {
        id: 'c1',
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      });
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    chats,
    transcriptions: () => transcriptions,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

test.before(async () => {
  if (!fliteAvailable()) throw new Error('flite is required (apt-get install flite)');
  cluster = await startCluster('jobs_model_titles');
  talk = await makeTalkVideo(cluster.dataDir, { phrases: PHRASES });
  media = await serveFiles({ 'talk.mp4': talk.videoPath });
  fake = await fakeEndpoints();
  await cluster.startAgent({
    TRANSCRIBE_API_URL: fake.url,
    HIGHLIGHT_API_URL: fake.url,
    HIGHLIGHT_API_MODEL: 'gpt-test',
  });
});

test.after.always(async () => {
  await media?.close();
  await fake?.close();
  await cluster?.close();
});

test("the model's titles come back as the model's in both forms; a correction re-makes only a title whose word it changed", async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro', credits: 1000 });
  const created = await cluster.api('POST', '/api/jobs', {
    key,
    body: {
      functionName: 'VideoShorts',
      fileUrl: media.url('talk.mp4'),
      options: { clipLength: { min: 5, max: 30 }, maxShorts: 2, prompt: PROMPT },
    },
  });
  t.is(created.status, 201, JSON.stringify(created.body));
  const job = await cluster.settledJob(key, created.body.id);
  t.is(job.status, 'COMPLETED', job.message);

  // The agent asked the configured model, with the client's prompt, and did not note it as ignored.
  t.true(fake.transcriptions() >= 1);
  t.is(fake.chats.length, 1);
  t.is(fake.chats[0]!.model, 'gpt-test');
  const asked = (fake.chats[0]!.messages as Array<{ content: string }>)[1]!.content;
  t.true(asked.includes(`What the user wants: ${PROMPT}`), asked);
  t.regex(asked, /Ten minutes of speaking beats three hours of weeding\./);
  t.false(JSON.stringify(job.data.notes ?? []).includes('prompt was ignored'));

  const user = await createUser(cluster.app.db, { email: `model-titles-${job.id}@example.com`, organizationId: org.id });
  const headers = { authorization: `Bearer ${await cluster.app.signer.issue(user.id)}` };
  const bearerForm = async () => (await cluster.api('GET', `/api/jobs/${job.id}?organizationId=${org.id}`, { headers })).body;
  const keyShorts = async () => (await cluster.api('GET', `/api/jobs/${job.id}`, { key })).body.data.shorts as Parsed[];
  const byStart = (shorts: Parsed[]) => [...shorts].sort((a, b) => a.startTime - b.startTime);

  // API-key form: the model's title is `content`; bearer form: `title`. Both say who wrote it.
  t.like(byStart(job.data.shorts), [
    { content: SPEAKING_TITLE, titleSource: 'model', reason: 'A question answered with a number' },
    { content: SLEEP_TITLE, titleSource: 'model', reason: 'A surprising fact with advice' },
  ]);
  const detailed = await bearerForm();
  const shorts = byStart(detailed.data.shorts);
  t.like(shorts, [
    { title: SPEAKING_TITLE, titleSource: 'model' },
    { title: SLEEP_TITLE, titleSource: 'model' },
  ]);
  const words = detailed.data.transcription.words as Word[];
  const index = (text: string) => words.findIndex((w) => w.text.replace(/[^a-z]/gi, '') === text);
  t.regex(shorts[0].text, /weeding/);
  t.is(words[shorts[0].startId].text, 'What');
  // The model's parts for the short it scored, in both forms; the other gets the local picker's.
  const keyForm = byStart(job.data.shorts);
  t.like(keyForm[0].scores, MODEL_SCORES);
  t.like(shorts[0].scores, MODEL_SCORES);
  t.is(shorts[0].score, keyForm[0].score);
  t.true(Number.isInteger(keyForm[0].scores.energy) && keyForm[0].scores.energy >= 0);
  const second = keyForm[1].scores;
  t.false(second.hook === 93 && second.completeness === 81 && second.standalone === 77, JSON.stringify(second));
  t.is(words[shorts[1].endId].text, 'up.');

  // "bad" -> "bed" lies in the second short, but its title does not use the word: kept.
  const bed = await cluster.api('PATCH', `/api/jobs/${job.id}/transcription`, {
    key,
    body: { revision: 0, edits: [{ op: 'replace', index: index('bad'), text: 'bed' }] },
  });
  t.is(bed.status, 200, JSON.stringify(bed.body));
  t.like(byStart(await keyShorts()), [
    { content: SPEAKING_TITLE, titleSource: 'model' },
    {
      content: SLEEP_TITLE,
      titleSource: 'model',
      text: 'Here is a second idea about memory and sleep. Your brain stores new words while you sleep at night. Review them before bed and again after you wake up.',
    },
  ]);

  // "weeding" -> "reading": the first title used the misheard word, so it is made again from the
  // corrected words, as the picker would title them; the second is left as the model wrote it.
  const reading = await cluster.api('PATCH', `/api/jobs/${job.id}/transcription`, {
    key,
    body: { revision: 1, edits: [{ op: 'replace', index: index('weeding'), text: 'reading.' }] },
  });
  t.is(reading.status, 200, JSON.stringify(reading.body));
  const corrected = reading.body.words as Word[];
  const remade = titleFromTranscript(corrected, shorts[0].startId, shorts[0].endId);
  t.notRegex(remade, /weeding/);
  t.not(remade, SPEAKING_TITLE);
  t.like(byStart((await bearerForm()).data.shorts), [
    { title: remade, titleSource: 'transcript' },
    { title: SLEEP_TITLE, titleSource: 'model' },
  ]);
  t.like(byStart(await keyShorts()), [
    { content: remade, titleSource: 'transcript' },
    { content: SLEEP_TITLE, titleSource: 'model' },
  ]);
});
