/** Publish on a confirm channel and wait for this one message's ack (not the whole channel's). */
import type { ConfirmChannel, Options } from 'amqplib';

export function publishConfirmed(
  ch: ConfirmChannel,
  exchange: string,
  routingKey: string,
  body: Buffer,
  options: Options.Publish,
  timeoutMs: number,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no publisher confirm within ${timeoutMs} ms`)), timeoutMs);
    try {
      // A false return only means the socket buffer is full; the confirm callback still fires.
      ch.publish(exchange, routingKey, body, options, (err) => {
        clearTimeout(timer);
        if (err) reject(err instanceof Error ? err : new Error('message nacked by the broker'));
        else resolve();
      });
    } catch (err) {
      clearTimeout(timer);
      reject(err instanceof Error ? err : new Error(String(err)));
    }
  });
}
