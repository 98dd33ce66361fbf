import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bypassExternalEffects, isReplay, REPLAY_BYPASS_HEADER, type HeaderValue } from '@babelqueue/core';

// ADR-0027: a delivery is a replay when the header is present and non-empty.
const CASES: [Record<string, HeaderValue | undefined> | undefined, boolean][] = [
  [{ [REPLAY_BYPASS_HEADER]: '1' }, true],
  [{ [REPLAY_BYPASS_HEADER]: 'yes' }, true],
  [{ [REPLAY_BYPASS_HEADER]: 1 }, true],
  [{ [REPLAY_BYPASS_HEADER]: '' }, false],
  [{ [REPLAY_BYPASS_HEADER]: null }, false],
  [{ [REPLAY_BYPASS_HEADER]: undefined }, false],
  [{ 'Bq-Replay-Bypass-Other': '1' }, false],
  [{}, false],
  [undefined, false],
];

test('the header name is bq-replay-bypass', () => {
  assert.equal(REPLAY_BYPASS_HEADER, 'bq-replay-bypass');
});

for (const [headers, replay] of CASES) {
  test(`isReplay(${JSON.stringify(headers)}) is ${replay}; bypassExternalEffects ${replay ? 'skips' : 'runs'} the effect`, () => {
    assert.equal(isReplay(headers), replay);
    let ran = 0;
    const out = bypassExternalEffects(headers, () => {
      ran += 1;
      return 'sent';
    });
    assert.equal(ran, replay ? 0 : 1);
    assert.equal(out, replay ? undefined : 'sent');
  });
}
