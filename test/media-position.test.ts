import test from 'ava';
import { InvalidInput } from '@shorts/common/invalid-input';
import { appErrorOf } from '../coordinator/src/errors.js';
import { parseLength, resolveLength } from '@shorts/common/render/position';

const px = (value: string, ref = 1000) => resolveLength(parseLength('waterMark.left', value), ref);

test('px and % lengths resolve against the reference size', (t) => {
  t.is(px('20px'), 20);
  t.is(px('12.5px'), 12.5);
  t.is(px('.5px'), 0.5);
  t.is(px('-8px'), -8);
  t.is(px('5%', 720), 36);
  t.is(px('100%', 1080), 1080);
  t.is(px('0'), 0); // CSS allows a unitless zero
  t.is(px('  30PX '), 30);
});

test('calc() adds and subtracts px and % terms, nested groups included', (t) => {
  t.is(px('calc(100% - 20px)', 720), 700);
  t.is(px('calc(50% + 10px - 5%)', 1000), 460);
  t.is(px('calc(-10px + 100%)', 200), 190);
  t.is(px('calc(100% - (20px + 10%))', 1000), 880);
  t.is(px('calc(100% - calc(20px + 10%))', 1000), 880);
  t.is(px('calc(10px+5%)', 100), 15); // CSS wants spaces around + and -; a client forgetting them still works
});

test('the AST says what was written', (t) => {
  t.deepEqual(parseLength('f', '10px'), { type: 'px', value: 10 });
  t.deepEqual(parseLength('f', '10%'), { type: 'percent', value: 10 });
  t.deepEqual(parseLength('f', 'calc(100% - 20px)'), {
    type: 'calc',
    terms: [
      { sign: 1, node: { type: 'percent', value: 100 } },
      { sign: -1, node: { type: 'px', value: 20 } },
    ],
  });
});

const bad = [
  '10',
  '10em',
  '10 px',
  'px',
  '',
  '   ',
  'calc(10px * 2)',
  'calc(10px / 2)',
  'calc(10px + )',
  'calc(10px',
  'calc()',
  'left',
  '10px 20px',
  '1e3px',
  'calc(10px - -5px)',
  'min(10px, 5%)',
  '--5px',
  '10%%',
  'calc(10px) 5px',
];

for (const value of bad) {
  test(`"${value}" is a 400 naming the field`, (t) => {
    const err = t.throws(() => parseLength('waterMark.top', value), { instanceOf: InvalidInput });
    t.is(appErrorOf(err)?.status, 400);
    t.regex(err.message, /^waterMark\.top must be a length/);
  });
}

test('non-strings are a 400 too', (t) => {
  for (const value of [10, null, undefined, {}, ['10px']]) {
    const err = t.throws(() => parseLength('waterMark.width', value), { instanceOf: InvalidInput });
    t.is(appErrorOf(err)?.status, 400);
    t.regex(err.message, /waterMark\.width/);
  }
});
