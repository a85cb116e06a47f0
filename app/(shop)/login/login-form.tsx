'use client';

import { useEffect, useState } from 'react';
import { signIn } from 'next-auth/react';
import { api, ApiError } from '@/lib/web/client-api';
import { sameOriginPath } from '@/lib/http/safe-redirect';
import { PASSWORD_REQUIRED_MESSAGE } from '@/lib/auth/messages';

const PHONE_RE = /^1[3-9]\d{9}$/;

export function LoginForm({ next }: { next: string }) {
  const [mode, setMode] = useState<'code' | 'password'>('code');
  const [phone, setPhone] = useState('');
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  const [countdown, setCountdown] = useState(0);
  const [sending, setSending] = useState(false);
  const [submitting, setSubmitting] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  useEffect(() => {
    if (countdown <= 0) return;
    const t = setTimeout(() => setCountdown((c) => c - 1), 1000);
    return () => clearTimeout(t);
  }, [countdown]);

  const phoneOk = PHONE_RE.test(phone);

  async function sendCode() {
    setError(null);
    if (!phoneOk) return setError('请输入正确的手机号');
    setSending(true);
    try {
      await api('/api/user/code', { body: { phone } });
      setNotice('验证码已发送，5 分钟内有效');
      setCountdown(60);
    } catch (e) {
      const err = e as ApiError;
      setError(err.message);
      if (err.status === 429) setCountdown(60);
    } finally {
      setSending(false);
    }
  }

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    setError(null);
    if (!phoneOk) return setError('请输入正确的手机号');
    if (mode === 'code' && !/^\d{6}$/.test(code)) return setError('验证码为 6 位数字');
    if (mode === 'password' && password.length < 6) return setError('密码至少 6 位');
    setSubmitting(true);
    const res = await signIn('credentials', { redirect: false, phone, ...(mode === 'code' ? { code } : { password }) });
    if (res?.ok && !res.error) {
      window.location.assign(sameOriginPath(next));
      return;
    }
    setSubmitting(false);
    // A merchant's or the admin's phone: the code did not log in; their password does.
    if (res?.error === PASSWORD_REQUIRED_MESSAGE) setMode('password');
    setError(res?.error && res.error !== 'CredentialsSignin' ? res.error : '登录失败，请重试');
  }

  const input = 'w-full rounded-lg border border-gray-300 px-3 py-2.5 text-base outline-none focus:border-brand';
  return (
    <div className="px-6 py-8">
      <h1 className="mb-6 text-2xl font-semibold">{mode === 'code' ? '手机号登录' : '商家 / 管理员登录'}</h1>
      <form onSubmit={submit} className="space-y-4" noValidate>
        <input
          className={input}
          data-testid="login-phone"
          inputMode="numeric"
          autoComplete="tel"
          maxLength={11}
          placeholder="请输入手机号"
          value={phone}
          onChange={(e) => setPhone(e.target.value.replace(/\D/g, ''))}
        />
        {mode === 'code' ? (
          <div className="flex gap-2">
            <input
              className={input}
              data-testid="login-code"
              inputMode="numeric"
              autoComplete="one-time-code"
              maxLength={6}
              placeholder="6 位验证码"
              value={code}
              onChange={(e) => setCode(e.target.value.replace(/\D/g, ''))}
            />
            <button
              type="button"
              data-testid="send-code"
              onClick={sendCode}
              disabled={sending || countdown > 0}
              className="w-32 shrink-0 rounded-lg border border-brand text-sm text-brand disabled:border-gray-300 disabled:text-gray-600"
            >
              {sending ? '发送中…' : countdown > 0 ? `${countdown} 秒后重发` : '获取验证码'}
            </button>
          </div>
        ) : (
          <input
            className={input}
            data-testid="login-password"
            type="password"
            autoComplete="current-password"
            placeholder="密码"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        )}
        {error && (
          <p role="alert" data-testid="login-error" className="text-sm text-red-600">
            {error}
          </p>
        )}
        {!error && notice && <p className="text-sm text-green-700" data-testid="login-notice">{notice}</p>}
        <button
          type="submit"
          data-testid="login-submit"
          disabled={submitting}
          className="w-full rounded-lg bg-brand py-3 text-base font-medium text-white disabled:opacity-60"
        >
          {submitting ? '登录中…' : '登录'}
        </button>
      </form>
      <button
        type="button"
        data-testid="login-mode"
        className="mt-6 text-sm text-gray-600 underline"
        onClick={() => {
          setMode(mode === 'code' ? 'password' : 'code');
          setError(null);
        }}
      >
        {mode === 'code' ? '商家 / 管理员用密码登录' : '用手机验证码登录'}
      </button>
      <p className="mt-4 text-xs text-gray-600">未注册的手机号验证后将自动创建账号</p>
    </div>
  );
}
