/**
 * Keep-alive without a timer per request. node:http arms a timeout on the socket after every
 * response (`keepAliveTimeout`) and clears it when the next request arrives: a Timeout, a bound
 * function and an async-hook init per request, about 1 µs of a refused grab's ~20 (docs/hot-server.md#less-of-nodes-machinery-per-request). Instead the server's own timer is switched off and one interval per server looks at its
 * sockets once per `everyMs`: a socket that read nothing, wrote nothing and had no response in
 * progress for `idleMs` is closed; so is one whose answer sits queued, unread by the client, for
 * `idleMs` (nothing else bounds a client that sent its request and then stopped reading). Activity is seen at the first sweep after it, and the close
 * comes at the first sweep past `idleMs` from there, so an idle keep-alive connection lives
 * between `idleMs` and `idleMs + 2 × everyMs`, never less (what a load balancer in front needs:
 * the server must not close before the balancer's own idle timeout). A socket with a request in
 * progress is never idle here: node's own deadlines bound that request (the server's
 * headersTimeout and requestTimeout, lib/hot/server.ts), and the headers deadline also closes a
 * connection that never sends a byte, sooner than this sweep would.
 */
import type http from 'node:http';
import type { Socket } from 'node:net';

interface Watched {
  read: number;
  written: number;
  idleSince: number;
}

export function closeIdleSockets(server: http.Server, idleMs: number, everyMs = 1000): void {
  server.keepAliveTimeout = 0;
  const sockets = new Map<Socket, Watched>();
  server.on('connection', (socket: Socket) => {
    sockets.set(socket, { read: 0, written: 0, idleSince: Date.now() });
    socket.once('close', () => sockets.delete(socket));
  });
  const sweep = () => {
    const t = Date.now();
    for (const [socket, w] of sockets) {
      const read = socket.bytesRead;
      const written = socket.bytesWritten;
      // _httpMessage: the response this socket is serving now (node's own field; if a node version
      // drops it, bytes in and out remain the measure of activity).
      const busy = (socket as Socket & { _httpMessage?: unknown })._httpMessage != null;
      // An answer the client is not taking (bytes queued in node: the kernel's buffer is full) is
      // not a request in progress but a client that stopped reading: it counts as idle, and goes
      // after idleMs without a byte taken. An answer still being computed (a long poll, a stream
      // between events) has nothing queued and is left alone.
      const stalled = busy && socket.writableLength > 0;
      if ((busy && !stalled) || read !== w.read || written !== w.written) {
        w.read = read;
        w.written = written;
        w.idleSince = t;
      } else if (t - w.idleSince >= idleMs) {
        sockets.delete(socket);
        socket.destroy();
      }
    }
  };
  const timer = setInterval(sweep, everyMs);
  timer.unref();
  server.once('close', () => clearInterval(timer));
}
