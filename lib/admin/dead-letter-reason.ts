/**
 * What a dead letter's technical reason means for the merchant, and what to do about it (pure:
 * the console's client table uses it). The raw reason stays visible for support.
 */
const EXPLANATIONS: [RegExp, string][] = [
  [/^off sale/, '抢购发生在券已下架或活动时间之外（当时缓存尚未同步），该订单不会生效。请点「丢弃」，占用的名额会退回。'],
  [/^stock guard/, '数据库中的库存不足，与实时库存不一致。修正库存后可「重放」，或「丢弃」退回名额。'],
  [/^unparseable/, '这条消息无法识别，不能重放，只能丢弃。'],
];

export function explainDeadLetterReason(reason: string): string {
  for (const [re, text] of EXPLANATIONS) if (re.test(reason)) return text;
  return '订单多次写入失败。排除问题后可「重放」，或「丢弃」退回名额。';
}
