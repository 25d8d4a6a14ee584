// Instant replay: a room's recording (GET /v1/rooms/{room}/recording, or a .ptrec file
// dropped on the page) re-simulated by the daemon (POST /v1/replay: every state hash
// checked) into frames, played, paused and scrubbed here. While a replay is shown the page
// draws the room as the recording had it instead of the live frames.

// The daemon's answer (server/openapi.json, POST /v1/replay) as frames the views draw:
// per frame, the instances as render.mjs takes them ({key, name, shape, pts, headP,
// headQ, def}).
export function framesOf(answer) {
  const defs = answer.instances ?? {};
  return answer.frames.map((f) => ({
    tick: f.tick,
    instances: f.instances.map((i) => {
      const def = defs[String(i.id)] ?? null;
      return {
        key: String(i.id), id: i.id, name: def?.name ?? String(i.id), def,
        shape: i.strands.map((s) => ({ points: s.length / 3 })),
        pts: Float32Array.from(i.strands.flat()), headP: i.head.p, headQ: i.head.q,
        stateHash: i.state_hash, replay: true,
      };
    }),
  }));
}

export class Player {
  constructor(answer) {
    this.room = answer.room;
    this.rate = answer.rate;
    this.frames = framesOf(answer);
    this.index = 0;
    this.playing = false;
    this.acc = 0;
  }
  get length() { return this.frames.length; }
  get frame() { return this.frames[this.index] ?? null; }
  seek(i) { this.index = Math.max(0, Math.min(this.frames.length - 1, Math.round(i))); this.acc = 0; }
  // Advances by dt seconds of play (at the recording's own speed); stops at the end.
  advance(dt) {
    if (!this.playing || !this.frames.length) return;
    this.acc += dt * this.rate;
    const n = Math.floor(this.acc);
    this.acc -= n;
    if (n > 0) this.seek(this.index + n);
    if (this.index === this.frames.length - 1) this.playing = false;
  }
}

// Asks the daemon to replay a recording's bytes; the Player, or an Error naming why not.
export async function replayBytes(bytes, rate = 30) {
  const r = await fetch(`/v1/replay?rate=${rate}`, {
    method: 'POST', headers: { 'Content-Type': 'application/vnd.ponytail.recording' }, body: bytes,
  });
  const body = await r.json().catch(() => null);
  if (!r.ok) throw new Error(body?.error?.message ?? `replay: HTTP ${r.status}`);
  return new Player(body);
}

// The room's recording of the last `seconds`, replayed.
export async function replayRoom(room, seconds, rate = 30) {
  const r = await fetch(`/v1/rooms/${encodeURIComponent(room)}/recording?last=${seconds}`);
  if (!r.ok) {
    const body = await r.json().catch(() => null);
    throw new Error(body?.error?.message ?? `recording: HTTP ${r.status}`);
  }
  return replayBytes(await r.arrayBuffer(), rate);
}

const $ = (id) => document.getElementById(id);

// The page's replay controls (index.html #replay): "Replay 60 s" (the room of roomOf()),
// a .ptrec file dropped anywhere on the page, Play/Pause, the slider, Live. `player` is
// the replay shown, null when live; advance(dt) moves it on and answers the instances to
// draw.
export class ReplayControls {
  constructor(roomOf) {
    this.roomOf = roomOf;
    this.player = null;
  }

  bind() {
    const box = $('replay');
    const show = async (make) => {
      $('replay-tick').textContent = 'replaying…';
      try {
        this.set(await make());
      } catch (e) {
        $('replay-tick').textContent = e.message;
      }
    };
    $('btn-replay').addEventListener('click', () => show(() => replayRoom(this.roomOf(), 60)));
    $('btn-play').addEventListener('click', () => {
      if (!this.player) return;
      if (this.player.index === this.player.length - 1) this.player.seek(0);
      this.player.playing = !this.player.playing;
    });
    $('replay-pos').addEventListener('input', (e) => {
      if (!this.player) return;
      this.player.playing = false;
      this.player.seek(Number(e.target.value));
    });
    $('btn-live').addEventListener('click', () => this.set(null));
    document.addEventListener('dragover', (e) => { e.preventDefault(); box.classList.add('dropping'); });
    document.addEventListener('dragleave', () => box.classList.remove('dropping'));
    document.addEventListener('drop', (e) => {
      e.preventDefault();
      box.classList.remove('dropping');
      const f = e.dataTransfer?.files?.[0];
      if (f) show(async () => replayBytes(await f.arrayBuffer()));
    });
  }

  set(p) {
    this.player = p;
    $('btn-play').disabled = $('replay-pos').disabled = $('btn-live').disabled = !p;
    $('replay-pos').max = p ? String(p.length - 1) : '0';
    if (p) p.playing = true;
    this.show();
  }

  show() {
    const p = this.player;
    $('btn-play').textContent = p?.playing ? 'Pause' : 'Play';
    $('btn-play').setAttribute('aria-pressed', String(!!p?.playing));
    if (!p) {
      $('replay-tick').textContent = 'live';
      return;
    }
    $('replay-pos').value = String(p.index);
    const f = p.frame;
    $('replay-tick').textContent = f ? `replay: tick ${f.tick} (${p.index + 1}/${p.length})` : 'replay: empty';
  }

  advance(dt) {
    this.player.advance(dt);
    this.show();
    return this.player.frame?.instances ?? [];
  }
}
