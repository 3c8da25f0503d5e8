import test, { type ExecutionContext } from 'ava';
import type { Box, ShortDetections, SpeakerTurn } from '@shorts/common/reframe/types';
import { DEFAULT_DIRECTOR, directorSettings } from '@shorts/common/reframe/director';
import { interpolate, planReframe, slices, contains, MIN_HOLD_SEC, LEAD_IN_MAX_SEC, LOW_CONFIDENCE } from '@shorts/common/reframe/camera';
import { boxesShownAt } from './helpers/reframe.js';

const OUT = { width: 1080, height: 1920 };
const FPS = 10;

/** Detections as the detector would give them: boxes sampled at FPS, with a deterministic jitter. */
function detections(o: {
  width?: number;
  height?: number;
  start?: number;
  end: number;
  faces: Array<{ id: number; at: (t: number) => Box | undefined }>;
  turns?: SpeakerTurn[];
}): ShortDetections {
  const start = o.start ?? 0;
  const times: number[] = [];
  for (let t = start; t < o.end; t += 1 / FPS) times.push(Math.round(t * 1000) / 1000);
  return {
    version: 1,
    sourceWidth: o.width ?? 1280,
    sourceHeight: o.height ?? 720,
    start,
    end: o.end,
    sampleFps: FPS,
    speech: (o.turns ?? []).map((t) => ({ start: t.start, end: t.end })),
    tracks: o.faces.map((f) => ({
      id: f.id,
      samples: times.flatMap((time) => {
        const box = f.at(time);
        return box ? [{ time, box, score: 0.9, mouthActivity: 0 }] : [];
      }),
    })),
    turns: o.turns ?? [],
  };
}

/** A still face with detector noise of up to ±`noise` px on every edge. */
const still =
  (x: number, y: number, w: number, h: number, noise = 3) =>
  (t: number): Box => {
    const n = (k: number) => noise * Math.sin(t * 7.3 + k * 1.7) * Math.cos(t * 3.1 + k);
    return { x: x + n(1), y: y + n(2), width: w + n(3), height: h + n(4) };
  };

const timesOf = (d: ShortDetections) =>
  d.tracks
    .flatMap((t) => t.samples.map((s) => s.time))
    .filter((t, i, a) => a.indexOf(t) === i)
    .sort((a, b) => a - b);

function faceAt(d: ShortDetections, id: number, time: number): Box | undefined {
  return d.tracks.find((t) => t.id === id)?.samples.find((s) => Math.abs(s.time - time) < 1e-6)?.box;
}

function assertSane(t: ExecutionContext, d: ShortDetections, r: ReturnType<typeof planReframe>) {
  for (const k of r.keyframes) {
    t.true(
      Number.isInteger(k.x) && Number.isInteger(k.y) && k.width % 2 === 0 && k.height % 2 === 0,
      `integers, even sizes: ${JSON.stringify(k)}`,
    );
    t.true(
      k.x >= 0 && k.y >= 0 && k.x + k.width <= d.sourceWidth && k.y + k.height <= d.sourceHeight,
      `inside the frame: ${JSON.stringify(k)}`,
    );
    t.true(k.time >= d.start && k.time <= d.end);
  }
  for (let i = 1; i < r.keyframes.length; i++) t.true(r.keyframes[i]!.time >= r.keyframes[i - 1]!.time, 'keyframes in time order');
  t.is(r.segments[0]!.start, d.start);
  t.is(r.segments[r.segments.length - 1]!.end, d.end);
  for (let i = 1; i < r.segments.length; i++) t.is(r.segments[i]!.start, r.segments[i - 1]!.end, 'segments end to end');
}

/** At every sample time: no face is sliced by the window's edge, nor by a split's panel. */
function assertNoFaceCut(t: ExecutionContext, d: ShortDetections, r: ReturnType<typeof planReframe>) {
  for (const time of timesOf(d)) {
    for (const w of boxesShownAt(r, time)) {
      for (const tr of d.tracks) {
        const box = faceAt(d, tr.id, time);
        if (box) t.false(slices(w, box), `face ${tr.id} cut at ${time}: window ${JSON.stringify(w)} face ${JSON.stringify(box)}`);
      }
    }
  }
}

const centreX = (b: Box) => b.x + b.width / 2;

test('defaults: padding 1, one speaker; partial director options keep the rest', (t) => {
  t.deepEqual(directorSettings(undefined), DEFAULT_DIRECTOR);
  t.deepEqual(directorSettings({ camera: { facePaddingFactor: 0.5 } }), { facePaddingFactor: 0.5, maxSpeakersToFocus: 1 });
  t.deepEqual(directorSettings({ intelligence: { maxSpeakersToFocus: 2 }, camera: { facePaddingFactor: 'x' } }), {
    facePaddingFactor: 1,
    maxSpeakersToFocus: 2,
  });
});

test('dead zone: a still face with detector noise gives one keyframe and 0 px of movement', (t) => {
  const d = detections({ end: 12, faces: [{ id: 1, at: still(900, 250, 130, 160) }], turns: [{ start: 0.5, end: 11, trackId: 1 }] });
  const r = planReframe(d, DEFAULT_DIRECTOR, OUT);
  assertSane(t, d, r);
  t.is(r.keyframes.length, 1);
  t.deepEqual(r.segments, [{ start: 0, end: 12, layout: 'single', tracks: [1] }]);
  const w = r.keyframes[0]!;
  t.true(Math.abs(w.width / w.height - 9 / 16) < 0.01, 'the output aspect');
  t.true(Math.abs(centreX(w) - 965) <= 8, `centred on the face: ${centreX(w)}`);
  t.true(contains(w, still(900, 250, 130, 160, 0)(0)));
  assertNoFaceCut(t, d, r);
});

test('a speaker who sways less than the dead zone is wide: the window holds still, centred on the sway', (t) => {
  // Starts at one end of a 56 px sway (0.3 Hz): a window placed on where the face starts would pan
  // each time the face reached the other end.
  const sway = (time: number): Box => ({ ...still(880, 250, 130, 160)(time), x: 880 + 28 * Math.cos(2 * Math.PI * 0.3 * time) });
  const d = detections({ end: 12, faces: [{ id: 1, at: sway }], turns: [{ start: 0, end: 12, trackId: 1 }] });
  const r = planReframe(d, DEFAULT_DIRECTOR, OUT);
  assertSane(t, d, r);
  t.is(r.keyframes.length, 1, `one still window: ${JSON.stringify(r.keyframes.map((k) => [k.time, k.x]))}`);
  t.true(Math.abs(centreX(r.keyframes[0]!) - 945) <= 8, `centred on the middle of the sway: ${centreX(r.keyframes[0]!)}`);
  assertNoFaceCut(t, d, r);
});

test('a face that shifts and rests by turns: the window moves while the face moves, never while it rests', (t) => {
  // 80 px to the right over 2 s, then 1.5 s at rest, again and again: slower than the camera tracks
  // continuously, so each shift is a pan; a pan that ran on into the rest (or started in it) would
  // move the picture around a still person.
  const cycle = 3.5;
  const shiftX = (time: number) => 300 + 80 * (Math.floor(time / cycle) + Math.min(1, (time % cycle) / 2));
  const d = detections({
    end: 14,
    faces: [{ id: 1, at: (time) => ({ ...still(0, 250, 130, 160, 0)(time), x: shiftX(time) }) }],
    turns: [{ start: 0, end: 14, trackId: 1 }],
  });
  const r = planReframe(d, DEFAULT_DIRECTOR, OUT);
  assertSane(t, d, r);
  assertNoFaceCut(t, d, r);
  let atRest = 0;
  let moving = 0;
  for (let time = 0; time + 0.04 < 14; time += 0.04) {
    const step = Math.abs(interpolate(r.keyframes, time + 0.04).x - interpolate(r.keyframes, time).x);
    if (shiftX(time + 0.04) === shiftX(time)) atRest += step;
    else moving += step;
  }
  t.is(atRest, 0, `the window moved ${atRest.toFixed(0)} px while the face rested`);
  t.true(moving > 200, `it followed the face's 320 px: ${moving.toFixed(0)} px`);
});

test('an off-centre face near the frame edge: the window stays in the frame and holds still', (t) => {
  const d = detections({ end: 6, faces: [{ id: 1, at: still(1160, 300, 110, 140) }], turns: [{ start: 0, end: 6, trackId: 1 }] });
  const r = planReframe(d, DEFAULT_DIRECTOR, OUT);
  assertSane(t, d, r);
  t.is(r.keyframes.length, 1);
  const w = r.keyframes[0]!;
  t.is(w.x + w.width, 1280, 'pushed against the right edge, never past it');
  assertNoFaceCut(t, d, r);
});

test('a large drift is an eased pan, sparse keyframes, the face never leaves the window', (t) => {
  // Walks 500 px to the right between 3 s and 5 s.
  const walk = (time: number): Box => ({ x: 200 + 500 * Math.min(1, Math.max(0, (time - 3) / 2)), y: 260, width: 120, height: 150 });
  const d = detections({ end: 9, faces: [{ id: 1, at: walk }], turns: [{ start: 0, end: 9, trackId: 1 }] });
  const r = planReframe(d, DEFAULT_DIRECTOR, OUT);
  assertSane(t, d, r);
  t.true(r.keyframes.length > 2 && r.keyframes.length < 40, `sparse: ${r.keyframes.length}`);
  t.true(Math.abs(centreX(interpolate(r.keyframes, 8.5)) - 760) < 60, 'ends on the face');
  assertNoFaceCut(t, d, r);
  // Eased: no step bigger than a pan at full speed would make between two frames at 25 fps.
  let biggest = 0;
  for (let time = 0.04; time < 9; time += 0.04)
    biggest = Math.max(biggest, Math.abs(interpolate(r.keyframes, time).x - interpolate(r.keyframes, time - 0.04).x));
  t.true(biggest < 40, `largest frame-to-frame move ${biggest}px`);
});

const twoPeople = (turns: SpeakerTurn[], end = 12) =>
  detections({
    end,
    turns,
    faces: [
      { id: 1, at: still(220, 240, 130, 160) },
      { id: 2, at: still(900, 250, 130, 160) },
    ],
  });

test('a turn detection is not sure of shows the whole picture, not a guess; a sure one is framed', (t) => {
  const turns = [
    { start: 0.3, end: 3.8, trackId: 1, confidence: 0.6 },
    { start: 4.4, end: 7.9, trackId: 2, confidence: LOW_CONFIDENCE / 2 },
    { start: 8.2, end: 11.5, trackId: 1, confidence: 0.6 },
  ];
  const d = twoPeople(turns);
  const r = planReframe(d, DEFAULT_DIRECTOR, OUT);
  assertSane(t, d, r);
  assertNoFaceCut(t, d, r);
  t.deepEqual(
    r.segments.map((s) => [s.layout, s.tracks]),
    [
      ['single', [1]],
      ['fit', []],
      ['single', [1]],
    ],
  );
  // The doubtful turn shows the whole 1280x720 picture, from its first sound to the next turn.
  const doubtful = r.segments[1]!;
  t.true(Math.abs(doubtful.start - 4.4) < 0.3, `from ${doubtful.start}`);
  t.deepEqual(boxesShownAt(r, 6), [{ x: 0, y: 0, width: 1280, height: 720 }]);
  // Sure of the same turn (or stored before confidence existed): the speaker is framed.
  for (const confidence of [0.6, undefined]) {
    const sure = planReframe(twoPeople(turns.map((x, i) => (i === 1 ? { ...x, confidence } : x))), DEFAULT_DIRECTOR, OUT);
    t.deepEqual(
      sure.segments.map((s) => s.tracks),
      [[1], [2], [1]],
    );
  }
});

test('a doubtful turn with a likeliest other face shows those two split, each whole in its panel; a third face is left out', (t) => {
  const panel = (turns: SpeakerTurn[]) =>
    detections({
      width: 1920,
      height: 1080,
      end: 12,
      turns,
      faces: [
        { id: 1, at: still(200, 400, 110, 140) },
        { id: 2, at: still(900, 420, 110, 140) },
        { id: 3, at: still(1600, 410, 110, 140) },
      ],
    });
  const turns: SpeakerTurn[] = [
    { start: 0.3, end: 3.8, trackId: 1, confidence: 0.6, runnerUp: 2 },
    { start: 4.4, end: 7.9, trackId: 3, confidence: LOW_CONFIDENCE / 2, runnerUp: 2 },
    { start: 8.2, end: 11.5, trackId: 1, confidence: 0.6, runnerUp: null },
  ];
  const d = panel(turns);
  const r = planReframe(d, DEFAULT_DIRECTOR, OUT);
  assertSane(t, d, r);
  assertNoFaceCut(t, d, r);
  t.deepEqual(
    r.segments.map((s) => [s.layout, s.tracks]),
    [
      ['single', [1]],
      ['split', [3, 2]],
      ['single', [1]],
    ],
  );
  // Over the doubtful turn: two panels, the choice on top, each holding its face whole and no other.
  const shown = boxesShownAt(r, 6);
  t.is(shown.length, 2);
  for (const [panel, id] of [
    [shown[0]!, 3],
    [shown[1]!, 2],
  ] as const) {
    for (const face of [1, 2, 3]) {
      const box = faceAt(d, face, 6)!;
      t.is(contains(panel, box), face === id, `face ${face} in the panel of ${id}`);
    }
  }
  // Where the runner-up is nobody visible, or is not known (stored before it was measured): the whole picture.
  for (const runnerUp of [null, undefined]) {
    const whole = planReframe(panel(turns.map((x, i) => (i === 1 ? { ...x, runnerUp } : x))), DEFAULT_DIRECTOR, OUT);
    t.deepEqual(whole.segments[1]!.tracks, [], `runner-up ${runnerUp}`);
  }
});

test('a turn puts the window on the new speaker within 1 s, cut on the turn, and never cuts a face', (t) => {
  const turns = [
    { start: 0.3, end: 3.8, trackId: 1 },
    { start: 4.4, end: 7.9, trackId: 2 },
    { start: 8.2, end: 11.5, trackId: 1 },
  ];
  const d = twoPeople(turns);
  const r = planReframe(d, DEFAULT_DIRECTOR, OUT);
  assertSane(t, d, r);
  assertNoFaceCut(t, d, r);
  t.deepEqual(
    r.segments.map((s) => [s.start, s.layout, s.tracks]),
    [
      [0, 'single', [1]],
      [4.4, 'single', [2]],
      [8.2, 'single', [1]],
    ],
  );
  for (const turn of turns) {
    const face = faceAt(d, turn.trackId, Math.round((turn.start + 1) * 10) / 10)!;
    t.true(contains(interpolate(r.keyframes, turn.start + 1), face), `on track ${turn.trackId} 1 s into its turn`);
    t.true(contains(interpolate(r.keyframes, turn.start + 0.001), face), 'already there as the turn starts');
  }
  // The change of speaker is a cut (two keyframes at one time), not a pan.
  const cut = r.keyframes.filter((k) => k.time === 4.4);
  t.is(cut.length, 2);
  t.true(centreX(cut[0]!) < 640 && centreX(cut[1]!) > 640);
});

test('a mouth that moves before the first sound: the cut anticipates the turn by at most LEAD_IN_MAX_SEC, never before the previous speech ends', (t) => {
  const d = twoPeople(
    [
      { start: 0.3, end: 3.0, trackId: 1 },
      { start: 4.4, end: 7.9, trackId: 2 },
    ],
    8,
  );
  // Person 2's mouth moves from 4.2 s, a moment before their voice is heard: the cut goes there.
  for (const s of d.tracks[1]!.samples) s.mouthActivity = s.time >= 4.2 && s.time < 7.9 ? 0.12 : 0.005;
  for (const s of d.tracks[0]!.samples) s.mouthActivity = s.time < 3.0 ? 0.1 : 0.005;
  t.deepEqual(
    planReframe(d, DEFAULT_DIRECTOR, OUT).segments.map((s) => s.start),
    [0, 4.2],
  );
  // Moving from 3.9 s, half a second early, the cut still lands no more than LEAD_IN_MAX_SEC early.
  for (const s of d.tracks[1]!.samples) s.mouthActivity = s.time >= 3.9 && s.time < 7.9 ? 0.12 : 0.005;
  const early = planReframe(d, DEFAULT_DIRECTOR, OUT).segments[1]!.start;
  t.true(early >= 4.4 - LEAD_IN_MAX_SEC - 1e-9 && early < 4.4, `cut at ${early}`);
  // Never back into the previous speaker's words: with person 1 talking to 4.2 the cut stays at 4.4
  // minus nothing earlier than 4.2.
  const overlap = twoPeople(
    [
      { start: 0.3, end: 4.2, trackId: 1 },
      { start: 4.4, end: 7.9, trackId: 2 },
    ],
    8,
  );
  for (const s of overlap.tracks[1]!.samples) s.mouthActivity = s.time >= 3.5 ? 0.12 : 0.005;
  t.true(planReframe(overlap, DEFAULT_DIRECTOR, OUT).segments[1]!.start >= 4.2);
});

test('minimum hold: an interjection shorter than the hold does not move the camera', (t) => {
  const turns = [
    { start: 0, end: 4, trackId: 1 },
    { start: 4.1, end: 4.1 + MIN_HOLD_SEC * 0.6, trackId: 2 },
    { start: 5.2, end: 10, trackId: 1 },
  ];
  const d = twoPeople(turns, 10);
  const r = planReframe(d, DEFAULT_DIRECTOR, OUT);
  assertSane(t, d, r);
  t.is(r.segments.length, 1);
  t.is(r.keyframes.length, 1);
  t.true(centreX(r.keyframes[0]!) < 640);
});

test('a window that would slice a neighbour is moved so the neighbour is wholly in or out', (t) => {
  // Two faces close together: a window centred on the speaker would cut the listener's face.
  const d = detections({
    end: 5,
    turns: [{ start: 0, end: 5, trackId: 1 }],
    faces: [
      { id: 1, at: still(500, 250, 120, 150) },
      { id: 2, at: still(700, 260, 120, 150) },
    ],
  });
  const r = planReframe(d, DEFAULT_DIRECTOR, OUT);
  assertSane(t, d, r);
  assertNoFaceCut(t, d, r);
  t.true(contains(r.keyframes[0]!, still(500, 250, 120, 150, 0)(0)), 'the speaker is in');
});

test('no face: the whole frame fitted over a blurred background, one still keyframe', (t) => {
  const d = detections({ end: 8, faces: [], turns: [{ start: 1, end: 7, trackId: null }] });
  const r = planReframe(d, DEFAULT_DIRECTOR, OUT);
  t.deepEqual(r.segments, [{ start: 0, end: 8, layout: 'fit', tracks: [] }]);
  t.deepEqual(r.keyframes, [{ time: 0, x: 0, y: 0, width: 1280, height: 720 }]);
});

test('a face too small to matter is the same as none', (t) => {
  // 14 px of a 720 px frame (1.9 %): under MIN_FACE_HEIGHT_FRACTION (a panel's faces of 3 % are framed).
  const d = detections({ end: 5, faces: [{ id: 1, at: still(600, 300, 12, 14, 1) }], turns: [{ start: 0, end: 5, trackId: 1 }] });
  const r = planReframe(d, DEFAULT_DIRECTOR, OUT);
  t.is(r.segments[0]!.layout, 'fit');
  t.is(r.keyframes.length, 1);
});

test('a panel speaker whose face the detector boxes at 2.4 % of the height is framed on their turns, not a neighbour', (t) => {
  // Three people in one wide 1080p shot, faces of 3 % as composed; the detector's boxes read 26-34 px.
  const people = [
    { id: 0, at: still(1141, 552, 33, 33, 1) },
    { id: 1, at: still(235, 556, 26, 26, 1) },
    { id: 2, at: still(1669, 604, 29, 29, 1) },
  ];
  const turns = [
    { start: 0.9, end: 2.5, trackId: 1, confidence: 0.5 },
    { start: 3.2, end: 4.9, trackId: 0, confidence: 0.5 },
    { start: 6.3, end: 11, trackId: 1, confidence: 0.5 },
  ];
  const d = detections({ width: 1920, height: 1080, end: 12, faces: people, turns });
  const r = planReframe(d, DEFAULT_DIRECTOR, OUT);
  assertSane(t, d, r);
  for (const turn of turns) {
    const time = turn.start + 1;
    t.true(
      contains(interpolate(r.keyframes, time), faceAt(d, turn.trackId, Math.round(time * 10) / 10)!),
      `on track ${turn.trackId} at ${time} s`,
    );
  }
});

test('split screen: with two speakers allowed and two people taking turns, both stacked, the speaker on top', (t) => {
  const turns = [
    { start: 0.3, end: 3.8, trackId: 1 },
    { start: 4.4, end: 7.9, trackId: 2 },
    { start: 8.2, end: 11.5, trackId: 1 },
  ];
  const d = twoPeople(turns);
  const r = planReframe(d, { facePaddingFactor: 1, maxSpeakersToFocus: 2 }, OUT);
  assertSane(t, d, r);
  t.deepEqual(
    r.segments.map((s) => [s.start, s.layout, s.tracks]),
    [
      [0, 'split', [1, 2]],
      [4.4, 'split', [2, 1]],
      [8.2, 'split', [1, 2]],
    ],
  );
  assertNoFaceCut(t, d, r);
  for (const k of r.keyframes) {
    t.is(k.panels?.length, 2);
    for (const p of k.panels!) {
      t.true(Math.abs(p.width / p.height - 1080 / 960) < 0.01, 'the panel aspect');
      t.true(p.x >= 0 && p.y >= 0 && p.x + p.width <= 1280 && p.y + p.height <= 720);
    }
  }
  const at = (time: number) => r.keyframes.filter((k) => k.time <= time).pop()!;
  t.true(contains(at(2).panels![0]!, still(220, 240, 130, 160, 0)(0)) && contains(at(2).panels![1]!, still(900, 250, 130, 160, 0)(0)));
  t.true(contains(at(6).panels![0]!, still(900, 250, 130, 160, 0)(0)), 'the second speaker on top in their turn');
  // With one speaker (the default) the same detections follow one person.
  t.true(planReframe(d, DEFAULT_DIRECTOR, OUT).segments.every((s) => s.layout === 'single'));
});

test('padding: a larger factor gives a wider window around the same face', (t) => {
  const d = detections({ end: 3, faces: [{ id: 1, at: still(600, 300, 60, 75, 0) }], turns: [{ start: 0, end: 3, trackId: 1 }] });
  const tight = planReframe(d, { facePaddingFactor: 0.5, maxSpeakersToFocus: 1 }, OUT).keyframes[0]!;
  const loose = planReframe(d, { facePaddingFactor: 2, maxSpeakersToFocus: 1 }, OUT).keyframes[0]!;
  t.true(tight.width < loose.width, `${tight.width} < ${loose.width}`);
  t.true(contains(tight, still(600, 300, 60, 75, 0)(0)));
});

test('small faces near the speaker (an audience, a poster) neither move nor block the window', (t) => {
  // A speaker's face 200 px tall, centred at x = 640; two faces of 70 px (a third of its height,
  // ~10 % of the frame: big enough to be framed on their own) just inside where a centred window's
  // edges fall. Treated as people to keep wholly in or out, they would push the window off the speaker.
  const speaker = still(540, 200, 200, 200, 2);
  const withAudience = detections({
    end: 4,
    faces: [
      { id: 1, at: speaker },
      { id: 2, at: still(400, 420, 70, 70, 1) },
      { id: 3, at: still(810, 420, 70, 70, 1) },
    ],
    turns: [{ start: 0.2, end: 3.8, trackId: 1 }],
  });
  const alone = detections({ end: 4, faces: [{ id: 1, at: speaker }], turns: [{ start: 0.2, end: 3.8, trackId: 1 }] });
  const r = planReframe(withAudience, DEFAULT_DIRECTOR, OUT);
  const reference = planReframe(alone, DEFAULT_DIRECTOR, OUT);
  t.deepEqual(
    r.segments.map((s) => s.tracks),
    [[1]],
  );
  t.deepEqual(
    r.keyframes.map((k) => [k.x, k.y, k.width, k.height]),
    reference.keyframes.map((k) => [k.x, k.y, k.width, k.height]),
    'the same window as without them',
  );
  const w = r.keyframes[0]!;
  t.true(Math.abs(w.x + w.width / 2 - 640) < 0.05 * w.width, `centred on the speaker: ${JSON.stringify(w)}`);
});

/** An edited two-person conversation: a wide shot to `cut`, then the same two people from another
 *  angle (new positions, new tracks, as the detector ends every track at a cut). Person A is tracks 1
 *  then 3, person B tracks 2 then 4; `changeAt` is when B takes over from A. */
function editedTurn(cut: number, changeAt: number, end = 10): ShortDetections {
  const before = (box: (t: number) => Box) => (t: number) => (t < cut ? box(t) : undefined);
  const after = (box: (t: number) => Box) => (t: number) => (t >= cut ? box(t) : undefined);
  const track = (person: 'A' | 'B', t: number) => (person === 'A' ? (t < cut ? 1 : 3) : t < cut ? 2 : 4);
  // A speaks from 0.3 to the change, B from there to the end; a turn never spans the cut.
  const spoken: Array<[number, number, 'A' | 'B']> = [
    [0.3, changeAt, 'A'],
    [changeAt, end - 0.2, 'B'],
  ];
  const turns: SpeakerTurn[] = spoken.flatMap(([s, e, who]) =>
    (s < cut && e > cut
      ? [
          [s, cut],
          [cut, e],
        ]
      : [[s, e]]
    ).map(([a, b]) => ({ start: a!, end: b!, trackId: track(who, a!) })),
  );
  const d = detections({
    end,
    turns,
    faces: [
      { id: 1, at: before(still(220, 240, 130, 160)) },
      { id: 2, at: before(still(900, 250, 130, 160)) },
      { id: 3, at: after(still(380, 200, 170, 210)) },
      { id: 4, at: after(still(760, 210, 170, 210)) },
    ],
  });
  const whole = { x: 0, y: 0, width: 1280, height: 720 };
  d.shots = [
    { start: 0, end: cut, transition: 'start', content: whole, motion: [] },
    { start: cut, end, transition: 'cut', content: whole, motion: [] },
  ];
  return d;
}

test('a change of speaker within 0.5 s of a source cut snaps onto the cut, before or after it', (t) => {
  for (const changeAt of [4.6, 5.3]) {
    const d = editedTurn(5, changeAt);
    const r = planReframe(d, DEFAULT_DIRECTOR, OUT);
    assertSane(t, d, r);
    assertNoFaceCut(t, d, r);
    t.deepEqual(
      r.segments.map((s) => [s.start, s.tracks]),
      [
        [0, [1]],
        [5, [4]],
      ],
      `B takes over at ${changeAt} s`,
    );
    // One framing change, on the cut's first frame: the window jumps there and nowhere else.
    const changes = r.keyframes
      .filter((k, i) => i > 0 && (k.x !== r.keyframes[i - 1]!.x || k.width !== r.keyframes[i - 1]!.width))
      .map((k) => k.time);
    t.deepEqual(changes, [5], `framing changes at ${JSON.stringify(changes)}`);
    t.true(contains(interpolate(r.keyframes, 4.99), faceAt(d, 1, 4.9)!), 'A framed up to the cut');
    t.true(contains(interpolate(r.keyframes, 5.0), faceAt(d, 4, 5)!), "B framed from the cut's first frame");
  }
});
