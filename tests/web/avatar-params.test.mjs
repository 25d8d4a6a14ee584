// The avatar page's URL parameters (clients/web/js/avatar-params.mjs): defaults per view,
// and every bad value refused with the parameter's name and what it allows.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { avatarParams, DEFAULT_ROOM, MAX_SIZE, MIN_SIZE } from '../../clients/web/js/avatar-params.mjs';

test('avatar params: the page view by default opens the sample and makes its own avatar', () => {
  const p = avatarParams('');
  assert.deepEqual(p, {
    room: DEFAULT_ROOM, view: 'page', stream: false, width: null, height: null,
    create: true, sample: true, demo: false, ws: null, errors: [],
  });
  assert.equal(avatarParams('?room=').room, '', 'the empty room is a room');
  assert.equal(avatarParams('?sample=0').sample, false);
  assert.equal(avatarParams('?create=0').create, false);
});

test('avatar params: the stream view watches (create=0 unless asked) at the URL\'s size', () => {
  const p = avatarParams('?room=collab_1&view=stream&width=1920&height=1080');
  assert.deepEqual([p.room, p.view, p.stream, p.width, p.height, p.create, p.errors], ['collab_1', 'stream', true, 1920, 1080, false, []]);
  assert.equal(avatarParams('?view=stream&create=1').create, true);
  const q = avatarParams('?view=stream');
  assert.deepEqual([q.width, q.height], [null, null], 'no size: the window\'s');
  assert.deepEqual(avatarParams(`?view=stream&width=${MIN_SIZE}&height=${MAX_SIZE}`).errors, []);
});

test('avatar params: a bad value names the parameter and its range, and keeps the default', () => {
  const cases = [
    ['?room=a/b', 'room', 'room: "a/b" is not 0 to 63 of A-Z a-z 0-9 _ . -'],
    [`?room=${'r'.repeat(64)}`, 'room', 'is not 0 to 63 of'],
    ['?view=obs', 'view', 'view: "obs" is not page or stream'],
    [`?view=stream&width=${MIN_SIZE - 1}`, 'width', `width: "${MIN_SIZE - 1}" is not an integer number of pixels in [${MIN_SIZE}, ${MAX_SIZE}]`],
    [`?view=stream&height=${MAX_SIZE + 1}`, 'height', `[${MIN_SIZE}, ${MAX_SIZE}]`],
    ['?view=stream&width=12.5', 'width', 'is not an integer'],
    ['?view=stream&height=-20', 'height', 'is not an integer'],
    ['?view=stream&width=', 'width', 'is not an integer'],
    ['?width=640', 'width', 'only for view=stream'],
    ['?create=yes', 'create', 'create: "yes" is not 0 or 1'],
    ['?sample=2', 'sample', 'sample: "2" is not 0 or 1'],
    ['?demo=true', 'demo', 'demo: "true" is not 0 or 1'],
  ];
  for (const [search, field, text] of cases) {
    const p = avatarParams(search);
    assert.equal(p.errors.length, 1, `${search}: ${p.errors}`);
    assert.ok(p.errors[0].startsWith(field), `${search}: ${p.errors[0]}`);
    assert.ok(p.errors[0].includes(text), `${search}: ${p.errors[0]}`);
  }
  const bad = avatarParams('?room=a b&view=stream&width=0&create=x');
  assert.deepEqual([bad.room, bad.width, bad.create], [DEFAULT_ROOM, null, false], 'defaults kept');
  assert.equal(bad.errors.length, 3);
});
