import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { joinWords, type Transcript, type Word } from '@shorts/common/text/transcript';
import {
  ChatHighlightModel,
  createHighlightModel,
  highlightApiFromEnv,
  LocalHighlightModel,
  parseJsonContent,
} from '../node-agent/src/highlights/highlight-model.js';
import { selectShorts } from '../node-agent/src/highlights/selector.js';
import { scoreShort } from '../node-agent/src/highlights/score.js';
import { segmentSentences } from '../node-agent/src/highlights/segments.js';
import { listener } from './helpers/http.js';
import { titleFromTranscript } from '@shorts/common/text/title';

/** 3 words/s, a pause after every 8 words: 240 words over ~85 s, plus filler to 200 s. */
function transcript(): Transcript {
  const words: Word[] = [];
  let t = 0.5;
  for (let i = 0; i < 600; i++) {
    const text = i % 8 === 7 ? `word${i}.` : i === 0 ? 'Why' : `word${i}`;
    words.push({ text, start: Math.round(t * 1000) / 1000, end: Math.round((t + 0.25) * 1000) / 1000 });
    t += i % 8 === 7 ? 0.9 : 0.33;
  }
  return { language: 'en', text: joinWords(words), words, durationSec: Math.ceil(t + 1), backend: 'test' };
}

async function fakeChat(answer: (body: Record<string, unknown>) => { status: number; body: unknown }) {
  const seen: Array<{ url: string; headers: http.IncomingHttpHeaders; body: Record<string, unknown> }> = [];
  const server = http.createServer(
    listener(async (req, res) => {
      let raw = '';
      for await (const c of req) raw += c;
      const body = JSON.parse(raw) as Record<string, unknown>;
      seen.push({ url: req.url!, headers: req.headers, body });
      const a = answer(body);
      res.writeHead(a.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(a.body));
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const chatAnswer = (content: string) => ({
  status: 200,
  body: { id: 'c1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] },
});

test('a valid chat answer becomes shorts in start-time order; the request is an OpenAI chat completion', async (t) => {
  const tr = transcript();
  const proposal = {
    shorts: [
      { title: 'The later one', reason: 'Strong ending', startId: 200, endId: 263 },
      { title: 'The early one', reason: 'Opens with a question', startId: 0, endId: 47 },
    ],
  };
  const srv = await fakeChat(() => chatAnswer('Here you go:\n```json\n' + JSON.stringify(proposal) + '\n```'));
  try {
    const model = new ChatHighlightModel({ url: srv.url, apiKey: 'key-1', model: 'gpt-test' });
    const shorts = await model.pick(tr, { maxShorts: 3 });
    t.is(srv.seen.length, 1);
    const req = srv.seen[0]!;
    t.is(req.url, '/v1/chat/completions');
    t.is(req.headers.authorization, 'Bearer key-1');
    t.is(req.body.model, 'gpt-test');
    const messages = req.body.messages as Array<{ role: string; content: string }>;
    t.deepEqual(
      messages.map((m) => m.role),
      ['system', 'user'],
    );
    t.regex(messages[1]!.content, /\[0-7\] \(0\.5-/);
    t.regex(messages[1]!.content, /up to 3 shorts/);

    t.deepEqual(
      shorts.map((s) => [s.id, s.title, s.startId, s.endId]),
      [
        [0, 'The early one', 0, 47],
        [1, 'The later one', 200, 263],
      ],
    );
    t.is(shorts[0]!.reason, 'Opens with a question');
    t.is(shorts[0]!.startTime, tr.words[0]!.start);
    t.is(shorts[1]!.endTime, tr.words[263]!.end);
    t.is(shorts[1]!.text, joinWords(tr.words.slice(200, 264)));
    t.is(typeof shorts[0]!.score, 'number');
  } finally {
    await srv.close();
  }
});

test('unusable proposals are dropped: over 90 s, overlapping, out of range', async (t) => {
  const tr = transcript();
  const srv = await fakeChat(() =>
    chatAnswer(
      JSON.stringify({
        shorts: [
          { title: 'Too long', reason: 'x', startId: 0, endId: 400 },
          { title: 'Fine', reason: 'x', startId: 8, endId: 55 },
          { title: 'Overlaps fine', reason: 'x', startId: 40, endId: 80 },
          { title: 'Past the end', reason: 'x', startId: 590, endId: 9999 },
          { title: 'Backwards', reason: 'x', startId: 100, endId: 90 },
        ],
      }),
    ),
  );
  try {
    const shorts = await new ChatHighlightModel({ url: srv.url, model: 'm' }).pick(tr);
    t.deepEqual(
      shorts.map((s) => s.title),
      ['Fine'],
    );
    t.is(srv.seen[0]!.headers.authorization, undefined);
  } finally {
    await srv.close();
  }
});

for (const [name, reply] of [
  ['prose instead of JSON', () => chatAnswer('I think the best moment is around minute two.')],
  ['JSON of the wrong shape', () => chatAnswer('{"clips":[{"from":1,"to":2}]}')],
  ['no usable proposal', () => chatAnswer('{"shorts":[{"title":"x","reason":"y","startId":0,"endId":599}]}')],
  ['an HTTP 500', () => ({ status: 500, body: { error: 'down' } })],
] as const) {
  test(`falls back to the local selector on ${name}`, async (t) => {
    const tr = transcript();
    const srv = await fakeChat(reply);
    try {
      const shorts = await new ChatHighlightModel({ url: srv.url, model: 'm' }).pick(tr, { maxShorts: 2 });
      t.deepEqual(shorts, selectShorts(tr, { maxShorts: 2 }));
      t.true(shorts.length > 0);
    } finally {
      await srv.close();
    }
  });
}

test('the factory picks the chat model only when both URL and model are configured', (t) => {
  t.true(createHighlightModel(highlightApiFromEnv({})) instanceof LocalHighlightModel);
  t.true(createHighlightModel(highlightApiFromEnv({ HIGHLIGHT_API_URL: 'http://127.0.0.1:1' })) instanceof LocalHighlightModel);
  t.true(
    createHighlightModel(highlightApiFromEnv({ HIGHLIGHT_API_URL: 'http://127.0.0.1:1', HIGHLIGHT_API_MODEL: 'm' })) instanceof
      ChatHighlightModel,
  );
});

test('JSON is dug out of fenced or chatty answers', (t) => {
  t.deepEqual(parseJsonContent('```json\n{"a":1}\n```'), { a: 1 });
  t.throws(() => parseJsonContent('nothing here'));
});

test("the model's title is used, cut to 60 characters at a word boundary; an empty or overlong one gives way to the words' title", async (t) => {
  const tr = transcript();
  const long = 'Why this one strange habit quietly doubles your savings every single year';
  const srv = await fakeChat(() =>
    chatAnswer(
      JSON.stringify({
        shorts: [
          { title: '  "Why word0 matters"  ', reason: 'x', startId: 0, endId: 47 },
          { title: long, reason: 'x', startId: 48, endId: 95 },
          { title: '', reason: 'x', startId: 96, endId: 143 },
          { title: 'word '.repeat(40), reason: 'x', startId: 144, endId: 191 },
          { reason: 'no title at all', startId: 192, endId: 239 },
        ],
      }),
    ),
  );
  try {
    const shorts = await new ChatHighlightModel({ url: srv.url, model: 'm' }).pick(tr, { maxShorts: 5 });
    t.is(shorts.length, 5, 'a bad title costs the title, not the pick');
    t.is(shorts[0]!.title, 'Why word0 matters');
    t.true(shorts[1]!.title.length <= 60, shorts[1]!.title);
    t.is(shorts[1]!.title, 'Why this one strange habit quietly doubles your savings…');
    t.true(long.startsWith(shorts[1]!.title.replace(/…$/, '') + ' '));
    // Marked as the model's, so the job keeps them through corrections that leave their words alone.
    t.deepEqual(
      shorts.map((s) => s.titledBy),
      ['model', 'model', undefined, undefined, undefined],
    );
    for (const s of shorts.slice(2)) {
      t.is(s.title, titleFromTranscript(tr.words, s.startId!, s.endId!), `short ${s.id}`);
      t.regex(s.title, /^Word\d+/);
    }
    t.is(shorts[4]!.reason, 'no title at all');
  } finally {
    await srv.close();
  }
});

test("the model's scores are the short's parts (energy stays the audio's); unusable ones give way to the local parts", async (t) => {
  const tr = transcript();
  const proposal = {
    shorts: [
      { reason: 'Judged', startId: 0, endId: 47, scores: { hook: 90, completeness: 70.4, standalone: 40, topicMatch: 80 } },
      { reason: 'Bad parts', startId: 100, endId: 147, scores: { hook: 150, completeness: 70, standalone: 40 } },
      { reason: 'No parts', startId: 200, endId: 247 },
    ],
  };
  const srv = await fakeChat(() => chatAnswer(JSON.stringify(proposal)));
  try {
    const model = new ChatHighlightModel({ url: srv.url, model: 'gpt-test' });
    const [judged, bad, none] = await model.pick(tr, { maxShorts: 3, topics: ['word1'] });
    const system = (srv.seen[0]!.body.messages as Array<{ content: string }>)[0]!.content;
    t.regex(system, /"scores":\{"hook":0-100,"completeness":0-100,"standalone":0-100,"topicMatch"/);
    const sentences = segmentSentences(tr.words).filter((x) => x.endId <= 47);
    const local = scoreShort(tr.words, { words: tr.words.slice(0, 48), sentences, topics: ['word1'] });
    t.like(judged!.scores, { hook: 90, completeness: 70, standalone: 40, topicMatch: 80 });
    t.is(judged!.scores!.energy, local.scores.energy, 'energy is heard in the audio, not read by the model');
    // The weighted mean of the parts (hook 0.2, completeness 0.25, standalone 0.35, energy 0.1, topic 0.3).
    const mean = (90 * 0.2 + 70 * 0.25 + 40 * 0.35 + judged!.scores!.energy * 0.1 + 80 * 0.3) / 1.2;
    t.is(judged!.score, Math.round(mean));
    // A part out of 0-100, or none given: the local picker's parts for that short, the pick kept.
    for (const s of [bad!, none!]) {
      t.true(s.scores!.hook !== 150 && s.scores!.topicMatch !== null);
      t.is(typeof s.score, 'number');
    }
    t.is(bad!.reason, 'Bad parts');
  } finally {
    await srv.close();
  }
});

test('without topics asked, a topicMatch the model gives is not kept', async (t) => {
  const tr = transcript();
  const srv = await fakeChat(() =>
    chatAnswer(
      JSON.stringify({
        shorts: [{ reason: 'x', startId: 0, endId: 47, scores: { hook: 60, completeness: 60, standalone: 60, topicMatch: 99 } }],
      }),
    ),
  );
  try {
    const [s] = await new ChatHighlightModel({ url: srv.url, model: 'gpt-test' }).pick(tr, { maxShorts: 1 });
    t.is(s!.scores!.topicMatch, null);
    t.is(s!.scores!.hook, 60);
  } finally {
    await srv.close();
  }
});
