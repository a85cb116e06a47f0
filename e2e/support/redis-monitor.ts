/**
 * Redis MONITOR on a raw socket of its own, for tests that check what Redis ran and in what order.
 * Not ioredis' monitor mode: it switches its state in a promise continuation after MONITOR's +OK,
 * so a monitored line that arrives in the same read is taken for a command reply and the
 * connection fails ("Command queue state error"; seen on a busy CI Redis).
 */
import net from 'node:net';

export interface MonitoredCommand {
  /** The database the command ran in. */
  db: number;
  /** "lua" for a command a script ran, else the client's address. */
  source: string;
  /** The command and its arguments, unquoted (bytes read as UTF-8). */
  args: string[];
}

/**
 * One MONITOR line (`+<time> [<db> <source>] "<arg>" "<arg>" …`) read into its parts; null for
 * anything else. Arguments are unquoted as Redis quotes them (sdscatrepr: \" \\ \n \r \t \a \b
 * and \xHH).
 */
export function parseMonitorLine(line: string): MonitoredCommand | null {
  // The source is "lua", an address (IPv6 ones in brackets: [::1]:6379) or a socket path.
  const head = /^\+\d+(?:\.\d+)? \[(\d+) (.+?)\] (?=")/.exec(line);
  if (!head) return null;
  const args: string[] = [];
  const escapes: Record<string, string> = { n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b', '"': '"', '\\': '\\' };
  let i = head[0].length;
  while (i < line.length) {
    if (line[i] !== '"') return null;
    let arg = '';
    for (i++; i < line.length && line[i] !== '"'; i++) {
      if (line[i] !== '\\') {
        arg += line[i];
        continue;
      }
      const c = line[++i]!;
      if (c === 'x') {
        arg += String.fromCharCode(parseInt(line.slice(i + 1, i + 3), 16));
        i += 2;
      } else arg += escapes[c] ?? c;
    }
    if (line[i] !== '"') return null;
    args.push(Buffer.from(arg, 'latin1').toString('utf8'));
    i++;
    if (line[i] === ' ') i++;
  }
  return { db: Number(head[1]), source: head[2]!, args };
}

/**
 * Starts MONITOR on the Redis of `url` (REDIS_URL by default) and calls `seen` for every command
 * run in that URL's database, in the order Redis ran them. Resolves once MONITOR is on; `stop()`
 * closes the socket.
 */
export async function monitorRedis(seen: (c: MonitoredCommand) => void, url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0'): Promise<{ stop: () => void }> {
  const u = new URL(url);
  const dbIndex = Number(u.pathname.slice(1) || 0);
  const socket = net.connect(Number(u.port || 6379), u.hostname);
  socket.setEncoding('latin1');
  // AUTH (when the URL has a password) and MONITOR each answer +OK; monitored lines follow.
  const commands = [...(u.password ? [`AUTH ${decodeURIComponent(u.password)}`] : []), 'MONITOR'];
  let oks = 0;
  let buffer = '';
  await new Promise<void>((resolve, reject) => {
    const fail = (err: Error) => {
      socket.destroy();
      reject(err);
    };
    socket.once('error', fail);
    // Closed before MONITOR said +OK (a resolved promise ignores this).
    socket.once('close', () => fail(new Error('MONITOR: the connection closed before MONITOR was on')));
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      for (let nl = buffer.indexOf('\r\n'); nl >= 0; nl = buffer.indexOf('\r\n')) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 2);
        if (line === '+OK' && oks < commands.length) {
          if (++oks === commands.length) resolve();
          continue;
        }
        if (line.startsWith('-')) fail(new Error(`MONITOR: ${line}`));
        const c = parseMonitorLine(line);
        if (c && c.db === dbIndex) seen(c);
      }
    });
    socket.write(commands.map((c) => `${c}\r\n`).join(''));
  });
  return { stop: () => socket.destroy() };
}
