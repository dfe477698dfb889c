import assert from 'node:assert/strict';
import { test } from 'node:test';
import { closestName, didYouMean, editDistance, quotedList } from './suggest.ts';

test('a swap of two neighbouring letters is one edit, so "wbe" is close to "web"', () => {
  assert.equal(editDistance('wbe', 'web'), 1);
  assert.equal(editDistance('kitten', 'sitting'), 3);
  assert.equal(closestName('wbe', ['worker', 'web', 'db']), 'web');
  assert.equal(closestName('stroe', ['store', 'shop']), 'store');
  assert.equal(closestName('xyz', ['web', 'db']), undefined);
});

test('did you mean, and names listed in words', () => {
  assert.equal(didYouMean('Web', ['web', 'db']), ' Did you mean "web"?');
  assert.equal(didYouMean('web', ['web']), '');
  assert.equal(didYouMean('queue', ['web', 'db']), '');
  assert.equal(quotedList(['web']), '"web"');
  assert.equal(quotedList(['web', 'db', 'cache']), '"web", "db" and "cache"');
  assert.equal(quotedList(['a', 'b', 'c'], 2), '"a", "b" and 1 more');
});
