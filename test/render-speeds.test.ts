import test from 'ava';
import { chunkSpeeds } from '../coordinator/src/renders/render-speeds.js';

// What a split lease asks of the chunks' sizes, from the agents' measured speeds (the query that
// measures them is exercised in lease-locality.test.ts, through a split render of FakeAgents).

const free = (...agents: Array<[string, number]>) => agents.map(([id, slots]) => ({ id, slots }));

test("the first chunk is the splitter's, the others the other free agents' mean", (t) => {
  const measured = new Map([
    ['a', 100],
    ['b', 150],
    ['c', 50],
  ]);
  t.deepEqual(chunkSpeeds('a', free(['a', 1], ['b', 1]), 2, measured), [1, 1.5]);
  t.deepEqual(chunkSpeeds('b', free(['a', 1], ['b', 1]), 2, measured), [1, 0.667]);
  // b and c take chunks 1 and 2 in some order: each is cut for their mean, here a's own.
  t.is(chunkSpeeds('a', free(['a', 1], ['b', 1], ['c', 1]), 3, measured), undefined);
  t.deepEqual(chunkSpeeds('a', free(['a', 1], ['b', 1], ['c', 1]), 3, new Map([...measured, ['c', 30]])), [1, 0.9, 0.9]);
  // The splitter's second slot takes a chunk too.
  t.deepEqual(chunkSpeeds('b', free(['b', 2], ['c', 1]), 3, measured), [1, 0.667, 0.667]);
});

test('an unmeasured agent counts as the median; no measure of the splitter or of the others, or speeds within 10 %, cut evenly', (t) => {
  const measured = new Map([
    ['a', 100],
    ['b', 200],
  ]);
  t.deepEqual(chunkSpeeds('a', free(['a', 1], ['b', 1], ['new', 1]), 3, measured), [1, 2, 2], 'the median of 100 and 200 is read as 200');
  t.is(chunkSpeeds('new', free(['new', 1], ['a', 1]), 2, measured), undefined, 'the splitter unmeasured');
  t.is(chunkSpeeds('a', free(['a', 1], ['new', 1]), 2, measured), undefined, 'no other measured');
  t.is(chunkSpeeds('a', free(['a', 1]), 2, measured), undefined, 'no others');
  t.is(
    chunkSpeeds(
      'a',
      free(['a', 1], ['b', 1]),
      2,
      new Map([
        ['a', 100],
        ['b', 109],
      ]),
    ),
    undefined,
    'within 10 %',
  );
  t.deepEqual(
    chunkSpeeds(
      'a',
      free(['a', 1], ['b', 1]),
      2,
      new Map([
        ['a', 100],
        ['b', 80],
      ]),
    ),
    [1, 0.8],
  );
});
