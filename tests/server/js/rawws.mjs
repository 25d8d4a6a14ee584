// Test helper: a WebSocket client on a raw TCP socket, for what a browser-grade client
// cannot do: stop reading (slow consumer), or ignore pings (idle timeout).
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { decodeMessage, encodeMessage } from '../../../proto/js/ponytail-proto.mjs';

export class RawWs {
  // protocol null: no Sec-WebSocket-Protocol header. Rejects when the server answers
  // anything but 101, or closes before answering.
  static open(port, { protocol = 'ponytail.v1', autoPong = true, path = '/' } = {}) {
    const w = new RawWs();
    w.autoPong = autoPong;
    w.msgs = [];
    w.buf = Buffer.alloc(0);
    w.bytes = 0;
    w.closeCode = null;
    w.pings = 0; /* pings the server sent (answered when autoPong) */
    w.sock = net.connect(port, '127.0.0.1');
    w.closed = new Promise((r) => w.sock.on('close', () => r(w.closeCode)));
    w.sock.on('error', () => {});
    return new Promise((resolve, reject) => {
      let head = '';
      const onData = (chunk) => {
        head += chunk.toString('latin1');
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        if (!/^HTTP\/1\.1 101/.test(head)) return; /* refused: rejected at close, with the body */
        w.sock.off('data', onData);
        w.sock.on('data', (c) => w.onData(c));
        const rest = Buffer.from(head.slice(end + 4), 'latin1');
        if (rest.length) w.onData(rest);
        resolve(w);
      };
      w.sock.on('data', onData);
      /* Closed before the handshake answered: refused (head holds any HTTP answer). */
      w.sock.on('close', () => { const e = new Error(head.split('\r\n')[0] || 'closed'); e.head = head; reject(e); });
      w.sock.on('connect', () => w.sock.write(
        `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n` +
        (protocol === null ? '' : `Sec-WebSocket-Protocol: ${protocol}\r\n`) + '\r\n'));
    });
  }

  frame(opcode, payload) {
    const n = payload.length;
    const head = n < 126 ? Buffer.from([0x80 | opcode, 0x80 | n])
      : n < 65536 ? Buffer.from([0x80 | opcode, 0x80 | 126, n >> 8, n & 255])
        : (() => { const b = Buffer.alloc(10); b[0] = 0x80 | opcode; b[1] = 0x80 | 127; b.writeBigUInt64BE(BigInt(n), 2); return b; })();
    const mask = randomBytes(4);
    const body = Buffer.from(payload);
    for (let i = 0; i < n; i++) body[i] ^= mask[i & 3];
    this.sock.write(Buffer.concat([head, mask, body]));
  }

  send(m) { this.frame(2, encodeMessage(m)); }

  onData(chunk) {
    this.bytes += chunk.length;
    this.buf = Buffer.concat([this.buf, chunk]);
    for (;;) {
      const b = this.buf;
      if (b.length < 2) return;
      let n = b[1] & 127, off = 2;
      if (n === 126) { if (b.length < 4) return; n = b.readUInt16BE(2); off = 4; }
      else if (n === 127) { if (b.length < 10) return; n = Number(b.readBigUInt64BE(2)); off = 10; }
      if (b.length < off + n) return;
      const op = b[0] & 15, payload = b.subarray(off, off + n);
      this.buf = b.subarray(off + n);
      if (op === 2) {
        const m = decodeMessage(new Uint8Array(payload));
        m.at = performance.now();
        this.msgs.push(m);
      } else if (op === 9) {
        this.pings++;
        if (this.autoPong) this.frame(10, payload);
      } else if (op === 8) {
        this.closeCode = n >= 2 ? payload.readUInt16BE(0) : 1005;
      }
    }
  }

  pause() { this.sock.pause(); }
  resume() { this.sock.resume(); }
  destroy() { this.sock.destroy(); }
}
