import test from 'ava';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { createUser } from '../coordinator/src/tenancy/tenancy.js';
import type { Word } from '@shorts/common/text/transcript';
import { titleFromTranscript } from '@shorts/common/text/title';

// Correcting a completed job's transcript (PATCH /api/jobs/:jobId/transcription): words fixed, joined,
// split and deleted keep their timings as the edit asks, the shorts' text follows, both retrieve forms
// show it, the next render captions it, nothing is charged, and two editors cannot silently overwrite
// each other.

let cluster: TestCluster;
test.before(async () => {
  cluster = await startCluster('jobs_transcript');
});
test.after.always(() => cluster?.close());

// "the quick brown fax jumps over the lazy dog" with a recognition error ("fax"), a word broken in two
// ("to" "day") and one run together ("highfive").
const WORDS: Word[] = [
  { text: 'the', start: 0.5, end: 0.7 },
  { text: 'quick', start: 0.7, end: 1.1 },
  { text: 'brown', start: 1.1, end: 1.5 },
  { text: 'fax', start: 1.5, end: 1.9 },
  { text: 'jumps', start: 2.0, end: 2.4 },
  { text: 'to', start: 2.5, end: 2.7 },
  { text: 'day', start: 2.7, end: 3.0 },
  { text: 'highfive', start: 3.2, end: 4.0 },
  { text: 'um', start: 4.1, end: 4.4 },
  { text: 'dog', start: 4.5, end: 4.9 },
];

async function job(organizationId: string): Promise<string> {
  return insertCompletedJob(cluster.app, {
    organizationId,
    words: WORDS,
    // An AI short over "brown … day" (indices 2-6) and a user-defined one over the last two seconds.
    shorts: [
      { startTime: 1.1, endTime: 3.0, title: 'AI', startId: 2, endId: 6 },
      { startTime: 3.1, endTime: 5, title: 'Mine' },
    ],
  });
}

async function bearerFor(orgId: string) {
  const user = await createUser(cluster.app.db, { email: `words-${orgId}@example.com`, organizationId: orgId });
  return { authorization: `Bearer ${await cluster.app.signer.issue(user.id)}` };
}

test('fix, join, split and delete words: timings kept as asked, shorts and both retrieve forms follow, no charge', async (t) => {
  const { org, key } = await cluster.org();
  const id = await job(org.id);
  const creditsBefore = (
    await cluster.app.db.one<{ n: string }>(`SELECT count(*) AS n FROM credit_ledger WHERE organization_id = $1`, [org.id])
  )?.n;
  const res = await cluster.api('PATCH', `/api/jobs/${id}/transcription`, {
    key,
    body: {
      revision: 0,
      edits: [
        { op: 'replace', index: 3, text: 'fox' },
        { op: 'join', index: 5, count: 2 }, // "to" + "day" → "today"
        { op: 'split', index: 6, texts: ['high', 'five'] }, // after the join, "highfive" is at 6
        { op: 'delete', index: 8 }, // "um"
      ],
    },
  });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.body.revision, 1);
  t.is(res.body.text, 'the quick brown fox jumps today high five dog');
  const byText = Object.fromEntries(res.body.words.map((w: Word) => [w.text, [w.start, w.end]]));
  t.deepEqual(byText.fox, [1.5, 1.9], 'a fixed word keeps its timing');
  t.deepEqual(byText.today, [2.5, 3.0], 'joined: first start to last end');
  t.deepEqual(byText.high, [3.2, 3.6], 'split by length: 4 of 8 letters');
  t.deepEqual(byText.five, [3.6, 4.0]);
  t.false('um' in byText);
  // Every other word untouched.
  for (const w of WORDS.filter((w) => ['the', 'quick', 'brown', 'jumps', 'dog'].includes(w.text)))
    t.deepEqual(byText[w.text], [w.start, w.end]);

  const keyForm = (await cluster.api('GET', `/api/jobs/${id}`, { key })).body;
  t.deepEqual(
    keyForm.data.shorts.map((s: { text: string }) => s.text),
    ['brown fox jumps today', 'high five dog'],
  );
  const bearerForm = (await cluster.api('GET', `/api/jobs/${id}?organizationId=${org.id}`, { headers: await bearerFor(org.id) })).body;
  t.is(bearerForm.data.transcription.text, 'the quick brown fox jumps today high five dog');
  t.is(bearerForm.data.transcription.revision, 1);
  t.deepEqual(
    bearerForm.data.shorts.map((s: { startId: number | null; endId: number | null; text: string }) => [s.startId, s.endId, s.text]),
    [
      [2, 5, 'brown fox jumps today'],
      [null, null, 'high five dog'],
    ],
    "the AI short's indices follow the join",
  );
  t.is(bearerForm.cost, 0.3, "the job's cost is unchanged");
  const creditsAfter = (
    await cluster.app.db.one<{ n: string }>(`SELECT count(*) AS n FROM credit_ledger WHERE organization_id = $1`, [org.id])
  )?.n;
  t.is(creditsAfter, creditsBefore, 'no credit movement');

  // The next render captions the corrected words.
  const render = await cluster.api('POST', '/api/render', { key, body: { id, target: 0 } });
  t.is(render.status, 201, JSON.stringify(render.body));
  const task = await cluster.app.db.one<{ payload: { words: Word[] } }>(
    `SELECT payload FROM tasks WHERE subject_id = $1 AND type = 'render-short'`,
    [render.body.renderId],
  );
  t.deepEqual(
    task!.payload.words.map((w) => w.text),
    ['brown', 'fox', 'jumps', 'today'],
  );
});

test("insert undoes a delete, a join and a split exactly (the studio's undo)", async (t) => {
  const { org, key } = await cluster.org();
  const id = await job(org.id);
  let revision = 0;
  const patch = async (edits: unknown[]) => {
    const res = await cluster.api('PATCH', `/api/jobs/${id}/transcription`, { key, body: { revision, edits } });
    t.is(res.status, 200, JSON.stringify(res.body));
    revision = res.body.revision;
    return res.body.words as Word[];
  };
  await patch([
    { op: 'delete', index: 8 },
    { op: 'join', index: 5, count: 2 },
    { op: 'split', index: 6, texts: ['high', 'five'] },
  ]);
  // The inverses, in reverse order: join the split parts back, un-join, re-insert "um".
  const restored = await patch([
    { op: 'delete', index: 7 },
    { op: 'delete', index: 6 },
    { op: 'insert', index: 6, text: 'highfive', start: 3.2, end: 4.0 },
    { op: 'delete', index: 5 },
    { op: 'insert', index: 5, text: 'to', start: 2.5, end: 2.7 },
    { op: 'insert', index: 6, text: 'day', start: 2.7, end: 3.0 },
    { op: 'insert', index: 8, text: 'um', start: 4.1, end: 4.4 },
  ]);
  t.deepEqual(restored, WORDS);
  const form = (await cluster.api('GET', `/api/jobs/${id}`, { key })).body;
  t.deepEqual(
    form.data.shorts.map((s: { text: string }) => s.text),
    ['brown fax jumps to day', 'highfive um dog'],
  );
  // An insert that overlaps a neighbour is refused.
  const overlap = await cluster.api('PATCH', `/api/jobs/${id}/transcription`, {
    key,
    body: { revision, edits: [{ op: 'insert', index: 1, text: 'x', start: 0.6, end: 0.8 }] },
  });
  t.is(overlap.status, 400);
});

test('a stale revision is refused with 409 and changes nothing; of two edits on one revision, one wins', async (t) => {
  const { org, key } = await cluster.org();
  const id = await job(org.id);
  const edit = (text: string, revision = 0) =>
    cluster.api('PATCH', `/api/jobs/${id}/transcription`, { key, body: { revision, edits: [{ op: 'replace', index: 0, text }] } });
  const [a, b] = await Promise.all([edit('A'), edit('B')]);
  t.deepEqual([a.status, b.status].sort(), [200, 409]);
  const winner = a.status === 200 ? 'A' : 'B';
  const loser = a.status === 409 ? a : b;
  t.regex(JSON.stringify(loser.body), /revision 1/);
  const form = (await cluster.api('GET', `/api/jobs/${id}`, { key })).body;
  t.is(form.data.shorts[0].text, 'brown fax jumps to day');
  const words = (await cluster.app.db.one<{ w: Word[] }>(`SELECT data->'transcription'->'words' AS w FROM jobs WHERE id = $1`, [id]))!.w;
  t.is(words[0]!.text, winner, "the winner's edit, not lost, not doubled");
  // Applying again on the current revision works.
  t.is((await edit('The', 1)).status, 200);
});

test("bad edits are clear 400s and change nothing; another organization's job is 404", async (t) => {
  const { org, key } = await cluster.org();
  const id = await job(org.id);
  const bad = [
    { revision: 0, edits: [] },
    { revision: 0, edits: [{ op: 'replace', index: 99, text: 'x' }] },
    { revision: 0, edits: [{ op: 'replace', index: 0, text: 'two words' }] },
    { revision: 0, edits: [{ op: 'replace', index: 0, text: '   ' }] },
    { revision: 0, edits: [{ op: 'join', index: 9, count: 2 }] },
    { revision: 0, edits: [{ op: 'split', index: 0, texts: ['one'] }] },
    { revision: 0, edits: [{ op: 'rename', index: 0 }] },
    { revision: -1, edits: [{ op: 'delete', index: 0 }] },
    // A valid edit followed by an invalid one: all or nothing.
    {
      revision: 0,
      edits: [
        { op: 'delete', index: 0 },
        { op: 'replace', index: 50, text: 'x' },
      ],
    },
  ];
  for (const body of bad) {
    const res = await cluster.api('PATCH', `/api/jobs/${id}/transcription`, { key, body });
    t.is(res.status, 400, `${JSON.stringify(body)} → ${res.status} ${JSON.stringify(res.body)}`);
    t.is(typeof res.body.message, 'string');
  }
  const form = (await cluster.api('GET', `/api/jobs/${id}`, { key })).body;
  t.is(form.data.shorts[0].text, 'brown fax jumps to day', 'nothing changed');

  const other = await cluster.org();
  t.is(
    (
      await cluster.api('PATCH', `/api/jobs/${id}/transcription`, {
        key: other.key,
        body: { revision: 0, edits: [{ op: 'delete', index: 0 }] },
      })
    ).status,
    404,
  );
  t.is(
    (await cluster.api('PATCH', `/api/jobs/not-an-id/transcription`, { key, body: { revision: 0, edits: [{ op: 'delete', index: 0 }] } }))
      .status,
    404,
  );
  const doc = (await cluster.api('GET', '/openapi.json')).body;
  const op = doc.paths['/api/jobs/{jobId}/transcription'].patch;
  t.truthy(op.requestBody.content['application/json'].schema);
  t.regex(JSON.stringify(op.requestBody.content['application/json'].schema), /"replace".*"join".*"split".*"delete"/s);
});

// "We counted fourty cats in the house." An AI short named from its words, as the picker names it.
const CATS: Word[] = ['We', 'counted', 'fourty', 'cats', 'in', 'the', 'house.', 'Then', 'we', 'left.'].map((text, i) => ({
  text,
  start: 0.5 + i * 0.4,
  end: 0.8 + i * 0.4,
}));

test('a title made from the words is made again when they are corrected; a typed title is kept; the job says which', async (t) => {
  const { org, key } = await cluster.org();
  const id = await insertCompletedJob(cluster.app, {
    organizationId: org.id,
    words: CATS,
    shorts: [
      { startTime: 0.4, endTime: 3.3, title: titleFromTranscript(CATS, 0, 6), startId: 0, endId: 6 },
      { startTime: 0.4, endTime: 4.5, title: titleFromTranscript(CATS, 0, 9), startId: 0, endId: 9 },
    ],
  });
  const headers = await bearerFor(org.id);
  const shorts = async () => (await cluster.api('GET', `/api/jobs/${id}?organizationId=${org.id}`, { headers })).body.data.shorts;
  const before = await shorts();
  t.is(before[0].title, 'We counted fourty cats in the house');
  t.like(before, [{ titleSource: 'transcript' }, { titleSource: 'transcript' }]);
  // The second short's title typed by the user: from now on it is theirs.
  const typed = await cluster.api('PATCH', `/api/jobs/${id}/shorts/1`, { key, body: { revision: 0, title: 'Cats, counted' } });
  t.is(typed.status, 200, JSON.stringify(typed.body));
  t.like(typed.body.short, { title: 'Cats, counted', titleSource: 'user' });

  // Its own title sent back unchanged (the studio's form saving a trim) does not make it the user's.
  const same = await cluster.api('PATCH', `/api/jobs/${id}/shorts/0`, {
    key,
    body: { revision: 1, title: 'We counted fourty cats in the house', startTime: 0.4, endTime: 3.3 },
  });
  t.is(same.status, 200, JSON.stringify(same.body));
  t.is(same.body.short.titleSource, 'transcript');

  const fixed = await cluster.api('PATCH', `/api/jobs/${id}/transcription`, {
    key,
    body: { revision: 0, edits: [{ op: 'replace', index: 2, text: 'forty' }] },
  });
  t.is(fixed.status, 200, JSON.stringify(fixed.body));
  const after = await shorts();
  t.like(after[0], { title: 'We counted forty cats in the house', titleSource: 'transcript', text: 'We counted forty cats in the house.' });
  t.like(after[1], { title: 'Cats, counted', titleSource: 'user' }, 'a typed title is kept');

  // Made from the words again, with the title stored as such: a second correction follows too.
  const again = await cluster.api('PATCH', `/api/jobs/${id}/transcription`, {
    key,
    body: { revision: 1, edits: [{ op: 'replace', index: 3, text: 'dogs' }] },
  });
  t.is(again.status, 200);
  t.is((await shorts())[0].title, 'We counted forty dogs in the house');
  // The API-key form says it too, beside the title it calls `content`.
  t.like((await cluster.api('GET', `/api/jobs/${id}`, { key })).body.data.shorts, [
    { content: 'We counted forty dogs in the house', titleSource: 'transcript' },
    { content: 'Cats, counted', titleSource: 'user' },
  ]);
});

// The recogniser heard "cots" for "cats": the job asked for shorts about cats, so once the word is
// fixed the title moves to the sentence that names them, as the agent's picker would have titled it.
const COTS: Word[] = ['How', 'many', 'rooms', 'does', 'this', 'house', 'have?', 'Our', 'cots', 'sleep', 'in', 'the', 'kitchen.'].map(
  (text, i) => ({ text, start: 0.5 + i * 0.4, end: 0.8 + i * 0.4 }),
);

test("a corrected word re-makes the title by the picker's rule, with the job's topics; a typed title stays", async (t) => {
  const { org, key } = await cluster.org();
  const id = await insertCompletedJob(cluster.app, {
    organizationId: org.id,
    words: COTS,
    options: { topics: ['cats'] },
    shorts: [
      { startTime: 0.4, endTime: 5.5, title: titleFromTranscript(COTS, 0, 12, { topics: ['cats'] }), startId: 0, endId: 12 },
      { startTime: 0.4, endTime: 5.5, title: 'My cats', startId: 0, endId: 12 },
    ],
  });
  const shorts = async () => (await cluster.api('GET', `/api/jobs/${id}`, { key })).body.data.shorts;
  // Before the fix no sentence names cats: the question is the strongest.
  t.like(await shorts(), [
    { content: 'How many rooms does this house have?', titleSource: 'transcript' },
    { content: 'My cats', titleSource: 'user' },
  ]);
  const fixed = await cluster.api('PATCH', `/api/jobs/${id}/transcription`, {
    key,
    body: { revision: 0, edits: [{ op: 'replace', index: 8, text: 'cats' }] },
  });
  t.is(fixed.status, 200, JSON.stringify(fixed.body));
  t.like(await shorts(), [
    { content: 'Our cats sleep in the kitchen', titleSource: 'transcript' },
    { content: 'My cats', titleSource: 'user' },
  ]);
});

test("a trim makes a words' title again with the job's topics, as the picker would", async (t) => {
  const { org, key } = await cluster.org();
  const words = COTS.map((w) => (w.text === 'cots' ? { ...w, text: 'cats' } : w));
  const id = await insertCompletedJob(cluster.app, {
    organizationId: org.id,
    words,
    options: { topics: ['cats'] },
    shorts: [{ startTime: 0.4, endTime: 3.3, title: titleFromTranscript(words, 0, 6, { topics: ['cats'] }), startId: 0, endId: 6 }],
  });
  const shorts = async () => (await cluster.api('GET', `/api/jobs/${id}`, { key })).body.data.shorts;
  t.like(await shorts(), [{ content: 'How many rooms does this house have?', titleSource: 'transcript' }]);
  // Trimmed to take in the next sentence: it names the job's topic, so it is the stronger title.
  const trimmed = await cluster.api('PATCH', `/api/jobs/${id}/shorts/0`, { key, body: { revision: 0, endTime: 5.5 } });
  t.is(trimmed.status, 200, JSON.stringify(trimmed.body));
  t.like(trimmed.body.short, { title: 'Our cats sleep in the kitchen', titleSource: 'transcript' });
  t.like(await shorts(), [{ content: 'Our cats sleep in the kitchen', titleSource: 'transcript' }]);
});

test("a model's title is kept through a correction that leaves its words alone, and made again from the words when one it uses is corrected", async (t) => {
  const { org, key } = await cluster.org();
  const id = await insertCompletedJob(cluster.app, {
    organizationId: org.id,
    words: COTS,
    shorts: [
      { startTime: 0.4, endTime: 5.5, title: 'Where the cots sleep', startId: 0, endId: 12, titleSource: 'model' },
      { startTime: 0.4, endTime: 5.5, title: 'A house tour in one question', startId: 0, endId: 12, titleSource: 'model' },
    ],
  });
  const shorts = async () => (await cluster.api('GET', `/api/jobs/${id}`, { key })).body.data.shorts;
  t.like(await shorts(), [
    { content: 'Where the cots sleep', titleSource: 'model' },
    { content: 'A house tour in one question', titleSource: 'model' },
  ]);
  const fixed = await cluster.api('PATCH', `/api/jobs/${id}/transcription`, {
    key,
    body: { revision: 0, edits: [{ op: 'replace', index: 8, text: 'cats' }] },
  });
  t.is(fixed.status, 200, JSON.stringify(fixed.body));
  t.like(await shorts(), [
    {
      content: titleFromTranscript(
        COTS.map((w) => (w.text === 'cots' ? { ...w, text: 'cats' } : w)),
        0,
        12,
      ),
      titleSource: 'transcript',
    },
    { content: 'A house tour in one question', titleSource: 'model' },
  ]);
});
