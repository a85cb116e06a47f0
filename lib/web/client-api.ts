/**
 * Browser-side JSON calls to our own API. Unwraps `{ data }`, turns `{ error }` into ApiError,
 * and sends the user to /login when the session is gone.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fields?: Record<string, string>,
  ) {
    super(message);
  }
}

export async function api<T>(path: string, init: { method?: string; body?: unknown; redirectOn401?: boolean; headers?: Record<string, string> } = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers: init.body === undefined ? init.headers : { 'content-type': 'application/json', ...init.headers },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      credentials: 'same-origin',
    });
  } catch {
    throw new ApiError(0, 'NETWORK', '网络异常，请检查网络后重试');
  }
  const body = (await res.json().catch(() => null)) as { data?: T; error?: { code: string; message: string; fields?: Record<string, string> } } | null;
  if (res.ok) return body?.data as T;
  if (res.status === 401 && init.redirectOn401 !== false && typeof window !== 'undefined') {
    window.location.assign(`/login?next=${encodeURIComponent(window.location.pathname + window.location.search)}`);
  }
  throw new ApiError(res.status, body?.error?.code ?? 'HTTP_' + res.status, body?.error?.message ?? `请求失败 (${res.status})`, body?.error?.fields);
}
