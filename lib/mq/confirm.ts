/**
 * Publish on a confirm channel and wait for this one message's ack (not the whole channel's).
 * A nack retires the channel: on a cluster, a channel that was open across a queue leader's
 * election keeps nacking long after a new leader is up, while a fresh one is accepted
 * (docs/rabbitmq.md#a-cluster). Closing it makes its owner open a new one for the retry; the
 * publishes still waiting on it are rejected, never taken as confirmed.
 */
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
        if (err) {
          reject(err instanceof Error ? err : new Error('message nacked by the broker'));
          try {
            ch.close().catch(() => {});
          } catch {
            /* already closing */
          }
        } else resolve();
      });
    } catch (err) {
      clearTimeout(timer);
      reject(err instanceof Error ? err : new Error(String(err)));
    }
  });
}
