/**
 * Hands a published note to the fan-out: one persistent message, confirmed by the broker. The
 * author's request waits for this one confirm only, never for the followers.
 */
import type { ConfirmChannel } from 'amqplib';
import { getPublishChannel } from '@/lib/mq/connection';
import { publishConfirmed } from '@/lib/mq/confirm';
import { assertFeedTopology, FEED_ROUTING_KEY, feedNames } from '@/lib/mq/topology';
import { encodeFeedMessage, type FeedMessage } from '@/lib/blog/feed-message';

const PUBLISH_TIMEOUT_MS = 3000;
/** The shared publisher channel declares the order topology; ours is declared once per channel. */
const declared = new WeakSet<ConfirmChannel>();

export async function publishFeed(msg: FeedMessage): Promise<void> {
  const ch = await getPublishChannel();
  if (!declared.has(ch)) {
    await assertFeedTopology(ch);
    declared.add(ch);
  }
  await publishFeedOn(ch, msg);
}

/** On a given confirm channel (the worker's sweeper republishes on its own connection). */
export function publishFeedOn(ch: ConfirmChannel, msg: FeedMessage): Promise<void> {
  return publishConfirmed(ch, feedNames.exchange, FEED_ROUTING_KEY, encodeFeedMessage(msg), {
    persistent: true,
    messageId: `blog-${msg.blogId}`,
    contentType: 'application/json',
  }, PUBLISH_TIMEOUT_MS);
}
