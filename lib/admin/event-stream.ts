/**
 * A server-sent events stream that calls `tick` every interval and sends its result as one
 * `event: <name>` message. It stops on client abort (the request's signal) and after `maxMs`,
 * after which the browser's EventSource reconnects on its own — so a long-open page re-checks
 * the session regularly instead of streaming forever on one authorization; `stillAllowed` re-checks
 * on every tick, so a logout ends the stream within a second.
 */
export interface EventStreamOptions {
  event: string;
  intervalMs?: number;
  maxMs?: number;
  /**
   * Checked before every tick (e.g. the session still exists): true goes on; false, or the reason
   * as a string, ends the stream with `event: end` (reason `session-ended` for false).
   */
  stillAllowed?: () => Promise<boolean | string>;
  /** Runs once when the stream ends, however it ends. */
  onClose?: () => void;
}

export function eventStream(tick: () => Promise<unknown>, signal: AbortSignal, opts: EventStreamOptions): ReadableStream<Uint8Array> {
  const { event, intervalMs = 1000, maxMs = 5 * 60_000 } = opts;
  const enc = new TextEncoder();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const stop = () => {
    if (!closed) opts.onClose?.();
    closed = true;
    clearTimeout(timer);
  };

  return new ReadableStream<Uint8Array>({
    start(controller) {
      const close = () => {
        if (closed) return;
        stop();
        try {
          controller.close();
        } catch {
          /* already closed by the consumer */
        }
      };
      if (signal.aborted) return close();
      signal.addEventListener('abort', close, { once: true });
      const started = Date.now();
      controller.enqueue(enc.encode('retry: 2000\n\n'));
      const loop = async () => {
        const allowed = opts.stillAllowed ? await opts.stillAllowed().catch(() => true) : true;
        if (allowed !== true) {
          const reason = allowed === false ? 'session-ended' : allowed;
          if (!closed) controller.enqueue(enc.encode(`event: end\ndata: ${JSON.stringify({ reason })}\n\n`));
          return close();
        }
        let message: string;
        try {
          message = `event: ${event}\ndata: ${JSON.stringify(await tick())}\n\n`;
        } catch {
          message = `event: tick-error\ndata: ${JSON.stringify({ message: '读取失败，正在重试' })}\n\n`;
        }
        if (closed) return;
        controller.enqueue(enc.encode(message));
        if (Date.now() - started >= maxMs) return close();
        timer = setTimeout(() => void loop(), intervalMs);
      };
      void loop();
    },
    cancel() {
      stop();
    },
  });
}

export const eventStreamHeaders = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  // Proxies such as nginx would otherwise buffer the stream and deliver it in lumps.
  'x-accel-buffering': 'no',
} as const;
