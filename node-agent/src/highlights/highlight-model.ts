// Who picks the shorts: the local selector, or a chat model behind any OpenAI-compatible
// `/v1/chat/completions` endpoint. The model's answer is checked like user input; anything
// unusable falls back to the local selector so a job never fails for a model's bad day.
import { z } from 'zod';
import type { Logger } from '@shorts/common/logger';
import { joinWords, type Transcript } from '@shorts/common/text/transcript';
import { fitTitle, makeTitle, TITLE_MAX } from '@shorts/common/text/title';
import { scoreShort, totalOfParts } from './score.js';
import type { ShortScores } from '@shorts/common/tasks/analyze-video';
import { segmentSentences, type Sentence } from './segments.js';
import { selectShorts, type SelectorOptions } from './selector.js';
import { MAX_SHORT_SEC, numberShorts, type Short } from './types.js';

export interface PickOptions extends SelectorOptions {
  signal?: AbortSignal;
  /** The client's words on what to pick; only a language model reads them. */
  prompt?: string | null;
}

export interface HighlightModel {
  readonly name: string;
  /** Whether the client's `prompt` is read (a language model), or ignored with a note. */
  readonly readsPrompt: boolean;
  pick(transcript: Transcript, opts?: PickOptions): Promise<Short[]>;
}

export class LocalHighlightModel implements HighlightModel {
  readonly name = 'local';
  readonly readsPrompt = false;
  async pick(transcript: Transcript, opts: SelectorOptions = {}) {
    return selectShorts(transcript, opts);
  }
}

export interface ChatHighlightOptions {
  /** Base URL; `/v1/chat/completions` is appended (a trailing `/v1` is tolerated). */
  url: string;
  apiKey?: string;
  model: string;
  timeoutMs?: number;
  /** Longer transcripts go to the local selector rather than a truncated prompt. */
  maxPromptWords?: number;
  log?: Logger;
  fetchImpl?: typeof fetch;
}

const answerSchema = z.object({
  shorts: z.array(
    z.object({
      // Checked per short (modelTitle): a missing or unusable title costs only the title.
      title: z.string().nullish(),
      reason: z.string().trim().min(1).max(1000),
      startId: z.number().int().nonnegative(),
      endId: z.number().int().nonnegative(),
      // Checked per short (modelScores): unusable parts cost only the model's scoring of that short.
      scores: z.unknown().optional(),
    }),
  ),
});

const part = z.number().finite().min(0).max(100);
/** The parts a model judges from the words; energy is the audio's, which the model does not hear. */
const modelScoresSchema = z.object({ hook: part, completeness: part, standalone: part, topicMatch: part.nullish() });

export function chatCompletionsEndpoint(url: string): string {
  return `${url.replace(/\/+$/, '').replace(/\/v1$/, '')}/v1/chat/completions`;
}

const SYSTEM_PROMPT = [
  'You pick the best moments of a video transcript to publish as vertical short videos.',
  'A good short grabs attention in its first seconds (a question, a bold claim, a number), is understandable on its own,',
  'and ends on a complete thought. Never pick long silences.',
  'Each short must last between the lengths the user gives (use the times shown) and shorts must not overlap.',
  'A short starts at the start of a sentence and ends at the end of one; never start on a sentence that needs an earlier one (he, she, it, they, so, and, but).',
  'Title each short with a hook taken from its strongest line (a question, a bold claim, a number, the topic asked for), not its first words.',
  'The transcript is given as sentences, each prefixed with [firstWordId-lastWordId] and its start-end time in seconds.',
  'Score each short 0-100 on: hook (does its first sentence grab attention), completeness (does it finish its thought, with a payoff or an answer),',
  'standalone (is it understood with no context from outside it, with no logistics or small talk), and, when topics are given, topicMatch (is it about them).',
  'Answer with JSON only: {"shorts":[{"title":"catchy title, at most 60 characters","reason":"why this moment works","startId":<first word id>,"endId":<last word id>,"scores":{"hook":0-100,"completeness":0-100,"standalone":0-100,"topicMatch":0-100 or null}}]}.',
].join(' ');

export class ChatHighlightModel implements HighlightModel {
  readonly name = 'openai-chat';
  readonly readsPrompt = true;
  private readonly local = new LocalHighlightModel();

  constructor(private readonly opts: ChatHighlightOptions) {}

  async pick(transcript: Transcript, opts: PickOptions = {}): Promise<Short[]> {
    const words = transcript.words;
    if (words.length === 0) return [];
    if (words.length > (this.opts.maxPromptWords ?? 15_000)) {
      this.opts.log?.info('transcript too long for the chat model; using the local selector', { words: words.length });
      return this.local.pick(transcript, opts);
    }
    try {
      const shorts = validateAnswer(await this.ask(transcript, opts), transcript, opts);
      if (shorts.length) return shorts;
      this.opts.log?.warn('chat model proposed no usable shorts; using the local selector');
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      this.opts.log?.warn('chat model failed; using the local selector', { err });
    }
    return this.local.pick(transcript, opts);
  }

  private async ask(transcript: Transcript, opts: PickOptions): Promise<unknown> {
    const sentences = segmentSentences(transcript.words, { pauseSec: opts.pauseSec });
    const limit = opts.maxShorts ?? 5;
    const inRange = opts.range
      ? sentences.filter((s) => s.start >= opts.range!.start - 0.05 && s.end <= opts.range!.end + 0.05)
      : sentences;
    const lines = inRange.map((s) => `[${s.startId}-${s.endId}] (${s.start.toFixed(1)}-${s.end.toFixed(1)}) ${s.text}`);
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.opts.apiKey) headers.authorization = `Bearer ${this.opts.apiKey}`;
    const timeout = AbortSignal.timeout(this.opts.timeoutMs ?? 120_000);
    const res = await (this.opts.fetchImpl ?? fetch)(chatCompletionsEndpoint(this.opts.url), {
      method: 'POST',
      headers,
      signal: opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout,
      body: JSON.stringify({
        model: this.opts.model,
        temperature: 0.2,
        response_format: { type: 'json_object' },
        messages: [
          { role: 'system', content: SYSTEM_PROMPT },
          {
            role: 'user',
            content: [
              `Pick up to ${limit} shorts from this ${Math.round(transcript.durationSec)} s video, each ${opts.minSec ?? 15}-${opts.maxSec ?? MAX_SHORT_SEC} seconds long.`,
              ...(opts.topics?.length ? [`They should be about: ${opts.topics.join(', ')}.`] : []),
              ...(opts.prompt ? [`What the user wants: ${opts.prompt}`] : []),
              '',
              lines.join('\n'),
            ].join('\n'),
          },
        ],
      }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`chat endpoint answered HTTP ${res.status}: ${text.slice(0, 300)}`);
    const content = (JSON.parse(text) as { choices?: Array<{ message?: { content?: string } }> }).choices?.[0]?.message?.content;
    if (!content) throw new Error('chat endpoint answered without message content');
    return parseJsonContent(content);
  }
}

/** Models wrap JSON in prose or code fences despite being asked not to; take the outermost object. */
export function parseJsonContent(content: string): unknown {
  const from = content.indexOf('{');
  const to = content.lastIndexOf('}');
  if (from < 0 || to <= from) throw new Error('no JSON object in the chat answer');
  return JSON.parse(content.slice(from, to + 1));
}

/**
 * Keeps the proposals that name real word ranges no longer than 90 s and do not overlap an earlier
 * one; throws when the answer does not have the asked shape at all.
 */
export function validateAnswer(answer: unknown, transcript: Transcript, opts: SelectorOptions = {}): Short[] {
  const parsed = answerSchema.parse(answer);
  const words = transcript.words;
  const sentences = segmentSentences(words, { pauseSec: opts.pauseSec });
  const kept: Array<Omit<Short, 'id'>> = [];
  for (const p of parsed.shorts) {
    if (kept.length >= (opts.maxShorts ?? 5)) break;
    if (p.endId < p.startId || p.endId >= words.length) continue;
    const startTime = words[p.startId]!.start;
    const endTime = words[p.endId]!.end;
    if (endTime - startTime > (opts.maxSec ?? MAX_SHORT_SEC) || endTime <= startTime) continue;
    if (opts.range && (startTime < opts.range.start - 0.05 || endTime > opts.range.end + 0.05)) continue;
    if (kept.some((k) => startTime < k.endTime && k.startTime < endTime)) continue;
    const inside = sentences.filter((s) => s.endId >= p.startId && s.startId <= p.endId);
    // The model's picks get the same score and parts as the local picker's, so both rank alike.
    const scored = scoreShort(words, {
      words: words.slice(p.startId, p.endId + 1),
      sentences: inside.length ? inside : sentences.slice(0, 1),
      topics: opts.topics ?? [],
    });
    const written = modelTitle(p.title);
    const judged = modelScores(p.scores, scored.scores, (opts.topics ?? []).length > 0);
    kept.push({
      title: written ?? makeTitle(words, clip(inside, p.startId, p.endId), { topics: opts.topics }),
      ...(written ? { titledBy: 'model' as const } : {}),
      reason: p.reason,
      startTime,
      endTime,
      startId: p.startId,
      endId: p.endId,
      text: joinWords(words.slice(p.startId, p.endId + 1)),
      ...(judged
        ? { score: totalOfParts(judged, scored.features.scores.silence), scores: judged }
        : { score: scored.score, scores: scored.scores }),
    });
  }
  return numberShorts(kept);
}

/**
 * The model's parts as the short's, with the audio's energy beside them; null (the local parts are
 * used) when the model gave none or any is not a number from 0 to 100. Without topics asked
 * topicMatch is null whatever the model says; with topics, a missing one is the local count's.
 */
export function modelScores(given: unknown, local: ShortScores, topicsAsked: boolean): ShortScores | null {
  const parsed = modelScoresSchema.safeParse(given);
  if (!parsed.success) return null;
  const m = parsed.data;
  const round = Math.round;
  return {
    hook: round(m.hook),
    completeness: round(m.completeness),
    standalone: round(m.standalone),
    energy: local.energy,
    topicMatch: topicsAsked ? round(m.topicMatch ?? local.topicMatch ?? 0) : null,
  };
}

/** A title the model wrote longer than this ignored the limit it was asked for: its own is not used. */
const OVERLONG_TITLE = 2 * TITLE_MAX;

/**
 * The model's title as a short's title: whitespace and wrapping quotes gone, cut at a word boundary
 * to 60 characters; null (the title is made from the words instead) when it is empty or overlong.
 */
export function modelTitle(title: string | null | undefined): string | null {
  const text = (title ?? '')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^["'“”‘’«»]+|["'“”‘’«»]+$/g, '')
    .trim();
  if (!/[\p{L}\p{N}]/u.test(text) || text.length > OVERLONG_TITLE) return null;
  return fitTitle(text);
}

/** Sentences cut to the words `first`..`last`, for a pick that starts or ends inside one. */
const clip = (sentences: readonly Sentence[], first: number, last: number): Sentence[] =>
  sentences.map((s) => ({ ...s, startId: Math.max(s.startId, first), endId: Math.min(s.endId, last) }));

export type HighlightApiConfig = Pick<ChatHighlightOptions, 'url' | 'model' | 'apiKey'>;

/** The chat model's settings when `HIGHLIGHT_API_URL` and a model are set (read with the agent's config). */
export function highlightApiFromEnv(env: NodeJS.ProcessEnv): HighlightApiConfig | null {
  const url = env.HIGHLIGHT_API_URL;
  const model = env.HIGHLIGHT_API_MODEL;
  return url && model ? { url, model, apiKey: env.HIGHLIGHT_API_KEY || undefined } : null;
}

/** The chat model when one is configured, else the local selector. */
export function createHighlightModel(api: HighlightApiConfig | null, log?: Logger): HighlightModel {
  return api ? new ChatHighlightModel({ ...api, log }) : new LocalHighlightModel();
}
