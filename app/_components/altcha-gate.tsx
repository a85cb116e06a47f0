'use client';

/**
 * The bot gate's widget (docs/fair-sale.md#the-bot-gate): altcha's <altcha-widget>, bundled with
 * the page (self-hosted, no outside service), solving the challenge by itself as soon as it loads.
 * Hands the solution (base64 payload) up once verified. Used by the waiting room and by a room
 * sale's waitlist card (both spend the solution on the same gate).
 */
import { createElement, useEffect, useRef, useState } from 'react';

const STRINGS = JSON.stringify({
  label: '我不是机器人',
  verifying: '正在验证…',
  verified: '验证通过',
  error: '验证失败，请重试',
  expired: '验证已过期，请重试',
  waitAlert: '正在验证，请稍候…',
  footer: '',
  ariaLinkLabel: 'ALTCHA',
});

export function AltchaGate({
  challengeUrl,
  onSolved,
  onFailed,
  testId = 'room-gate',
}: {
  challengeUrl: string;
  onSolved: (payload: string) => void;
  /** The widget could not solve (its challenge request failed, e.g. the sale no longer has a gate). */
  onFailed?: () => void;
  testId?: string;
}) {
  const ref = useRef<HTMLElement | null>(null);
  const [ready, setReady] = useState(false);
  const solved = useRef(onSolved);
  const failed = useRef(onFailed);
  useEffect(() => {
    solved.current = onSolved;
    failed.current = onFailed;
  });
  useEffect(() => {
    let cancelled = false;
    void import('altcha').then(() => !cancelled && setReady(true));
    return () => {
      cancelled = true;
    };
  }, []);
  useEffect(() => {
    const el = ref.current;
    if (!ready || !el) return;
    const onState = (ev: Event) => {
      const d = (ev as CustomEvent<{ state: string; payload?: string }>).detail;
      if (d?.state === 'verified' && d.payload) solved.current(d.payload);
      else if (d?.state === 'error') failed.current?.();
    };
    el.addEventListener('statechange', onState);
    return () => el.removeEventListener('statechange', onState);
  }, [ready]);
  if (!ready) return <p className="text-sm text-gray-500" data-testid={`${testId}-loading`}>正在加载人机验证…</p>;
  return (
    <div className="flex justify-center" data-testid={testId}>
      {createElement('altcha-widget', { ref, challengeurl: challengeUrl, auto: 'onload', hidelogo: '', hidefooter: '', strings: STRINGS })}
    </div>
  );
}
