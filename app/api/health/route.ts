import { checkHealth } from '@/lib/health';

export const dynamic = 'force-dynamic';

export async function GET(): Promise<Response> {
  const health = await checkHealth();
  if (health.ok) return Response.json({ data: health });
  return Response.json(
    { error: { code: 'SERVICE_UNAVAILABLE', message: `依赖不可用: ${health.down.join(', ')}` }, data: health },
    { status: 503 },
  );
}
