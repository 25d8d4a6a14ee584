// The avatar page's URL parameters (avatar.html?...), checked: a value out of range is an
// error naming the parameter and what it allows, and the page shows it rather than
// guessing. No DOM here, so node's tests import it (tests/web/unit.test.mjs).
//
//   room=NAME      the room (default "avatars"; 0..63 of A-Z a-z 0-9 _ . -)
//   view=page      the full page (default): controls, the sample avatar on open
//   view=stream    an OBS browser source: the room's avatars only, on a transparent
//                  background, no controls; creates no instance unless create=1
//   width=W, height=H   the stream view's size in CSS pixels, each an integer in
//                  [MIN_SIZE, MAX_SIZE] (default: the window's)
//   create=0|1     whether the page makes an avatar of its own (default 1 in the page
//                  view, 0 in the stream view)
//   sample=0|1     whether that avatar starts as the shipped sample (default 1); with
//                  sample=0 the page waits for a .vrm to be opened or dropped
//   demo=1         the own head sweeps by itself (the browser tests use it)
//   ws=URL|PORT    the WebSocket, as on the main page

export const DEFAULT_ROOM = 'avatars';
export const ROOM_RE = /^[A-Za-z0-9_.-]{0,63}$/;
export const MIN_SIZE = 16;
export const MAX_SIZE = 7680;
export const SAMPLE_URL = 'sample/sample.vrm';

function flag(q, name, dflt, errors) {
  const v = q.get(name);
  if (v === null) return dflt;
  if (v === '0' || v === '1') return v === '1';
  errors.push(`${name}: "${v}" is not 0 or 1`);
  return dflt;
}

function size(q, name, errors) {
  const v = q.get(name);
  if (v === null) return null;
  const n = /^\d{1,5}$/.test(v) ? Number(v) : NaN;
  if (!(n >= MIN_SIZE && n <= MAX_SIZE)) {
    errors.push(`${name}: "${v}" is not an integer number of pixels in [${MIN_SIZE}, ${MAX_SIZE}]`);
    return null;
  }
  return n;
}

// search: location.search (or any URLSearchParams input). Returns the settings and
// `errors`, one message per bad parameter (the setting then keeps its default).
export function avatarParams(search) {
  const q = new URLSearchParams(search);
  const errors = [];
  let room = q.get('room') ?? DEFAULT_ROOM;
  if (!ROOM_RE.test(room)) {
    errors.push(`room: "${room}" is not 0 to 63 of A-Z a-z 0-9 _ . -`);
    room = DEFAULT_ROOM;
  }
  let view = q.get('view') ?? 'page';
  if (view !== 'page' && view !== 'stream') {
    errors.push(`view: "${view}" is not page or stream`);
    view = 'page';
  }
  const stream = view === 'stream';
  const width = size(q, 'width', errors);
  const height = size(q, 'height', errors);
  if (!stream && (width !== null || height !== null)) errors.push('width, height: only for view=stream (the page fills the window)');
  return {
    room,
    view,
    stream,
    width: stream ? width : null,
    height: stream ? height : null,
    create: flag(q, 'create', !stream, errors),
    sample: flag(q, 'sample', true, errors),
    demo: flag(q, 'demo', false, errors),
    ws: q.get('ws'),
    errors,
  };
}
